"""Chapter 0's exercises (getting started): their checks, references and named mistakes.

Two exercises ask for code without a Python loop: ``utils.exercises.common.refuse_python_loops``
refuses one by what it does, however it is spelled.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from utils.checks import MISTAKES, verify_function, verify_prediction
from utils.exercises import Question, exercise
from utils.exercises.common import refuse_non_int, refuse_python_loops


# ---------------------------------------------------------------------------------------------------
# 0.1 Softmax over the last axis
# ---------------------------------------------------------------------------------------------------
def _softmax_last(scores):
    return torch.softmax(scores, dim=-1)


def _softmax_shifted_by(shift: Callable[[torch.Tensor], torch.Tensor], dim: int = -1):
    """A model answer: exponentials of ``scores - shift(scores)``, normalised over the axis ``dim``."""
    def softmax(scores):
        exps = (scores - shift(scores)).exp()
        return exps / exps.sum(dim=dim, keepdim=True)
    return softmax


def _softmax_of_everything(scores):
    """A model answer: one normalisation for the whole tensor."""
    exps = (scores - scores.max()).exp()
    return exps / exps.sum()


def _softmax_inputs(hidden: bool) -> list[tuple[torch.Tensor]]:
    g = torch.Generator().manual_seed(100 if hidden else 0)
    if hidden:
        return [(torch.tensor([[-1000.0, -1002.0, -1004.0]]),),             # exp(-1000) is 0
                (torch.tensor([[80.0, 79.0], [-30.0, -31.0]]),),            # rows far apart
                (torch.randn(4, 1, generator=g),),                          # one score per row
                (10 * torch.randn(2, 2, 3, 5, generator=g, dtype=torch.float64),)]
    return [(torch.randn(5, generator=g),), (torch.randn(2, 3, 4, generator=g),),
            (torch.tensor([[1000.0, 999.0, 0.0], [0.0, 1.0, 2.0]]),)]   # rows far apart


_SOFTMAXES = [(torch, "softmax"), (torch.Tensor, "softmax"), (torch.nn.functional, "softmax"),
              (torch.special, "softmax"), (torch, "_softmax"),
              # exp(log_softmax) is the same function, one step away
              (torch, "log_softmax"), (torch.Tensor, "log_softmax"),
              (torch.nn.functional, "log_softmax"), (torch.special, "log_softmax"),
              (torch, "_log_softmax")]


@exercise("0.1", "Softmax over the last axis", "Easy", 10,
          hint="each weight is the exponential of its score divided by the sum of the exponentials "
               "of its row; subtracting the same number from every score of a row leaves the "
               "weights unchanged, and subtracting the row's largest score keeps every exponential "
               "at most 1")
def _row_softmax(answer, hidden=False):
    verify_function(
        answer, reference=_softmax_last, inputs=_softmax_inputs(hidden), name="Exercise 0.1",
        hint=_row_softmax.exercise.hint, forbidden=_SOFTMAXES,
        mistakes={
            MISTAKES["softmax_axis"]:
                (_softmax_shifted_by(lambda s: s.max(dim=0, keepdim=True).values, dim=0),
                 "the last axis is dim=-1: take the maximum and the sum over it, with "
                 "keepdim=True so that they line up with every score of their row"),
            "one normalisation for the whole tensor (each row must sum to 1 on its own)":
                (_softmax_of_everything,
                 "sum over the last axis only (dim=-1, keepdim=True): every row gets its own sum"),
            "exponentials of the raw scores: exp(1000) overflows to inf, and inf / inf is NaN":
                (_softmax_shifted_by(lambda s: torch.zeros_like(s)),
                 "subtract each row's largest score before exp: the weights stay the same, and "
                 "every exponential is then at most 1 and the largest exactly 1"),
            "the largest score of the whole tensor subtracted, not each row's (a row far below it "
            "underflows to 0 / 0)":
                (_softmax_shifted_by(lambda s: s.max()),
                 "take the maximum of each row (dim=-1, keepdim=True): a row whose scores lie far "
                 "below another row's maximum would give exponentials that are all 0"),
        })


# ---------------------------------------------------------------------------------------------------
# 0.2 Is every token its own best match?
# ---------------------------------------------------------------------------------------------------
def _best_match_made_like(dim: int = -1, majority: bool = False) -> Callable:
    """A model answer: the chapter's weights, then where each row (``dim`` -1) has its largest entry."""
    def best_is_self(x: torch.Tensor) -> torch.Tensor:
        scores = x @ x.transpose(-2, -1) / x.shape[-1] ** 0.5         # (B, T, T)
        weights = torch.softmax(scores, dim=-1)
        if majority:
            return torch.diagonal(weights, dim1=-2, dim2=-1) > 0.5      # (B, T)
        return weights.argmax(dim=dim) == torch.arange(x.shape[1])     # (B, T)
    return best_is_self


def _best_match_inputs(hidden: bool) -> list[tuple[torch.Tensor]]:
    g = torch.Generator().manual_seed(102 if hidden else 2)
    lengths = torch.tensor([0.3, 1.0, 3.0])                            # short, middling, long tokens
    if hidden:  # one token (always its own best match); tokens of very different lengths
        return [(torch.randn(1, 1, 4, generator=g),),
                (torch.randn(3, 6, 2, generator=g) * lengths.repeat(2)[:, None],),
                (torch.randn(2, 9, 16, generator=g),)]
    return [(torch.randn(2, 6, 3, generator=g) * lengths.repeat(2)[:, None],),
            (torch.randn(1, 4, 8, generator=g),),
            (0.5 * torch.randn(1, 8, 8, generator=g),)]   # small scores: nearly even weights


_NO_LOOP_HINT = ("let one matrix product compare every token with every token: the batch axis "
                 "comes along by itself, as in the chapter's x @ x.transpose(-2, -1)")


@exercise("0.2", "Is every token its own best match?", "Easy", 10,
          hint="compute the chapter's weights, find in each row the column of the largest weight "
               "(argmax over the last axis, the keys), and compare it with the row's own index, "
               "torch.arange(T)",
          questions=[Question(
              "Which words of the chapter's heatmap are not their own best match, and why do dot "
              "products allow it?",
              ("dog, green and likes give their largest weight to cat, red and sees",
               "dog's vector points almost the way cat's does and is a little shorter: dog . cat = "
               "8.1 beats dog . dog = 7.38; a dot product grows with the lengths of both vectors as "
               "well as with how well they point the same way",
               "with cosine similarity every token would be its own best match; attention's "
               "queries and keys are different projections, so no token is bound to attend to "
               "itself most"), 2)])
def _best_match(answer, hidden=False):
    verify_function(
        answer, reference=_best_match_made_like(), inputs=_best_match_inputs(hidden),
        name="Exercise 0.2", hint=_best_match.exercise.hint,
        mistakes={
            "the largest weight of each column (dim=-2), not of each row": (
                _best_match_made_like(dim=-2),
                "row i holds token i's weights: take the argmax over the last axis"),
            "True where the weight on itself is above 1/2 (the largest weight need not be a "
            "majority)": (
                _best_match_made_like(majority=True),
                "a token can weight itself most with, say, 0.4 of its weight: compare with the "
                "other weights of its row, not with 1/2"),
        })
    g = torch.Generator().manual_seed(7)
    refuse_python_loops(  # every size a loop could run over grows by 8
        answer, (torch.randn(2, 2, 2, generator=g),), (torch.randn(10, 10, 10, generator=g),),
        name="Exercise 0.2", sizes=("x of shape (2, 2, 2)", "(10, 10, 10)"),
        threshold=4, hint=_NO_LOOP_HINT)


# ---------------------------------------------------------------------------------------------------
# 0.3 Predict, then run
# ---------------------------------------------------------------------------------------------------
def _rounded(t: torch.Tensor) -> list:
    """A measured tensor as (nested) Python lists of numbers rounded to two decimals."""
    if t.dim() > 1:
        return [_rounded(row) for row in t]
    return [round(x, 2) for x in t.tolist()]


def _three_softmaxes() -> tuple[list, list, list]:
    return (_rounded(torch.softmax(torch.full((4,), 7.0), dim=-1)),
            _rounded(torch.softmax(torch.tensor([[0.0, 50.0, 0.0]]), dim=0)),
            _rounded(torch.softmax(torch.tensor([[2.0, 2.0], [0.0, 100.0]]), dim=-1).sum(dim=0)))


@exercise("0.3", "Predict, then run", "Easy", 10, kind="prediction",
          hint="the softmax normalises the scores along the axis named by dim, one group at a "
               "time: ask how many scores each group holds, and remember that only those groups "
               "are made to sum to 1",
          questions=[Question(
              "Explain each of your three predictions, and any the measurement contradicted.",
              ("1: four equal scores give four equal weights, 0.25 each; only differences between "
               "scores matter, not the value 7",
               "2: dim=0 normalises each column, and each column of a one-row matrix holds one "
               "score, so every weight is 1 (a softmax over the wrong axis still gives numbers "
               "between 0 and 1)",
               "3: the rows become [0.5, 0.5] and about [0, 1]; each row sums to 1, the columns "
               "(the weight each key receives) need not: [0.5, 1.5]"), 2)])
def _predict_softmaxes(answer, hidden=False):
    verify_prediction(
        answer, name="Exercise 0.3", form=(list, list, list), measure=_three_softmaxes,
        hint=_predict_softmaxes.exercise.hint,
        labels=("torch.softmax(torch.full((4,), 7.0), dim=-1)",
                "torch.softmax(torch.tensor([[0.0, 50.0, 0.0]]), dim=0)",
                "the softmax of [[2, 2], [0, 100]] over dim=-1, summed over dim=0"),
        misconceptions={
            0: "the belief that the value of equal scores matters (only the differences between "
               "scores do: four equal scores share the weight equally, 0.25 each)",
            1: "the belief that dim=0 normalises along the row in expression 2 (dim=0 runs down "
               "the columns, and each column of a one-row matrix holds a single score)",
            2: "the belief that the columns sum to 1 in expression 3 (dim=-1 makes every row sum "
               "to 1, the columns need not)",
        })


# ---------------------------------------------------------------------------------------------------
# 0.4 Count the crossings of an alignment
# ---------------------------------------------------------------------------------------------------
def _crossings_made_like(pairs="i < i'"):
    """A model answer: the pairs of target positions counted one by one (the check's reference)."""
    def count(alignment):
        T = len(alignment)
        if pairs == "neighbours":
            return sum(alignment[i] > alignment[i + 1] for i in range(T - 1))
        if pairs == "kept order":
            return sum(alignment[i] < alignment[k] for i in range(T) for k in range(i + 1, T))
        return sum(alignment[i] > alignment[k] for i in range(T) for k in range(T)
                   if i < k or pairs == "both orders")
    return count


def _words_moved(alignment):
    return sum(j != i for i, j in enumerate(alignment))


def _alignment_inputs(hidden: bool) -> list[tuple[tuple[int, ...]]]:
    if not hidden:
        return [((1, 2, 0, 4, 3),), ((0, 2, 1),), ((3, 2, 1, 0),), ((0, 1, 2, 3),),
                ((0, 2, 1, 4, 3, 5),)]
    g = torch.Generator().manual_seed(104)
    shuffled = tuple(torch.randperm(15, generator=g).tolist())
    return [((0,),),                       # one word: nothing to cross
            (tuple(range(9, -1, -1)),),    # ten words reversed: 10 * 9 / 2
            (shuffled,),
            ((1, 1, 0),)]                  # two words from one source word: equal is no crossing


@exercise("0.4", "Count the crossings of an alignment", "Medium", 15,
          hint="build the (T, T) table that says, for every pair of target positions, whether the "
               "first one's source word comes after the second one's; each crossing is one pair, "
               "so count only the part of the table where the first position comes first")
def _count_crossings(answer, hidden=False):
    verify_function(
        answer, reference=_crossings_made_like(), inputs=_alignment_inputs(hidden),
        name="Exercise 0.4", hint=_count_crossings.exercise.hint,
        mistakes={
            "every pair of target positions compared in both orders (count only i < i')":
                (_crossings_made_like("both orders"),
                 "a pair (i, i') and the same pair (i', i) are one pair: keep the part of the "
                 "(T, T) table above its diagonal, triu(diagonal=1)"),
            "the words that left their position counted (alignment[i] != i), not the pairs that "
            "swapped":
                (_words_moved, "a crossing is a pair of target words, i < i', whose source words "
                               "come in the opposite order: compare the alignment with itself"),
            "only neighbouring target words (i, i + 1) compared":
                (_crossings_made_like("neighbours"),
                 "words far apart cross too: compare every position with every position, with "
                 "a[:, None] and a[None, :]"),
            "the pairs that keep their order counted (alignment[i] < alignment[i'])":
                (_crossings_made_like("kept order"),
                 "a crossing is a pair whose earlier target word translates the later source "
                 "word: alignment[i] > alignment[i']"),
        })
    refuse_python_loops(answer, ((1, 0),), (tuple(range(16, -1, -1)),), name="Exercise 0.4",
                         sizes=("an alignment of 2 words", "one of 17"), threshold=8,
                         hint="compare the alignment with itself by broadcasting, a[:, None] > "
                              "a[None, :], as the scores compare all tokens with all tokens")
    refuse_non_int(answer, ((0, 2, 1),), "Exercise 0.4")
