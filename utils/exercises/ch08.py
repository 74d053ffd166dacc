"""Chapter 8's exercises (the Transformer decoder): their checks, references and named mistakes.

Shape legend: B batch, T target positions, V vocabulary; 8.1's logits are (N, V), one row per target
position (in 8.5, as in the chapter, N is the number of decoder blocks).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

import utils.data
from utils.checks import verify_function, verify_prediction
from utils.exercises import Question, exercise
from utils.transformer import Transformer, TransformerConfig


def _generator(seed: int) -> torch.Generator:
    """The check's own random numbers, so that checking leaves the notebook's seed alone."""
    return torch.Generator().manual_seed(seed)


# ---------------------------------------------------------------------------------------------------
# 8.1 Label smoothing by hand
# ---------------------------------------------------------------------------------------------------
def _smoothed_reference(logits, targets, epsilon, pad_id):
    return F.cross_entropy(logits, targets, ignore_index=pad_id, label_smoothing=epsilon)


def _smoothing_made_like(log_probs_of=lambda lg: lg.log_softmax(dim=-1), uniform_share=None,
                         count_padding=False):
    """A model answer: the smoothed cross-entropy with one mistake.

    ``uniform_share(log_probs, right)`` gives the (N,) cross-entropy against the part that is spread.
    """
    def loss(logits, targets, epsilon, pad_id):
        log_probs = log_probs_of(logits)                               # (N, V)
        right = log_probs.gather(-1, targets[:, None])[:, 0]           # (N,): log p(right word)
        spread = (log_probs.mean(dim=-1) if uniform_share is None
                  else uniform_share(log_probs, right))                # (N,)
        per_position = -((1 - epsilon) * right + epsilon * spread)     # (N,)
        return per_position.mean() if count_padding else per_position[targets != pad_id].mean()
    return loss


def _smoothing_inputs(hidden: bool) -> list[tuple]:
    g = _generator(108 if hidden else 8)
    if hidden:
        return [(60 * torch.randn(7, 10, generator=g), torch.tensor([3, 0, 9, 1, 0, 4, 7]), 0.1, 0),
                (torch.randn(6, 5, generator=g), torch.tensor([4, 4, 2, 4, 4, 4]), 0.2, 4),
                (torch.randn(4, 2, generator=g), torch.tensor([1, 0, 1, 1]), 1.0, 0),
                (torch.randn(9, 13, generator=g), torch.randint(1, 13, (9,), generator=g), 0.05, 0)]
    return [(torch.randn(6, 10, generator=g), torch.tensor([1, 2, 3, 0, 4, 0]), 0.1, 0),
            (3 * torch.randn(8, 7, generator=g), torch.randint(1, 7, (8,), generator=g), 0.0, 0),
            (torch.randn(5, 12, generator=g), torch.tensor([11, 3, 5, 11, 0]), 0.3, 11)]


@exercise("8.1", "Label smoothing by hand", "Medium", 15,
          hint="work with log-probabilities; the smoothed target mixes two distributions, a one-hot "
               "on the right word and a uniform one, so the loss is the same mixture of two "
               "cross-entropies; padding positions take no part in the mean")
def _smoothed_cross_entropy(answer, hidden=False):
    verify_function(
        answer, reference=_smoothed_reference, inputs=_smoothing_inputs(hidden), name="Exercise 8.1",
        hint=_smoothed_cross_entropy.exercise.hint,
        # the text forbids the library's losses; the last three are what they call underneath
        forbidden=[(F, "cross_entropy"), (F, "nll_loss"), (nn, "CrossEntropyLoss"), (nn, "NLLLoss"),
                   (torch._C._nn, "cross_entropy_loss"), (torch._C._nn, "nll_loss"),
                   (torch._C._nn, "nll_loss_nd")],
        mistakes={
            "epsilon spread over the |V| - 1 wrong words only (PyTorch's label smoothing, like the "
            "chapter's, spreads it over all |V| words, the right one included)":
                (_smoothing_made_like(uniform_share=lambda lp, right: (lp.sum(dim=-1) - right)
                                      / (lp.shape[-1] - 1)),
                 "the uniform part of the target gives epsilon / |V| to every one of the |V| words, the "
                 "right word included, which then gets 1 - epsilon + epsilon / |V| in all"),
            "padding positions counted in the mean (average over the real targets only)":
                (_smoothing_made_like(count_padding=True),
                 "leave out the positions whose target is pad_id before you average"),
            "epsilon put on every word instead of epsilon / |V| (the uniform part of the target must "
            "sum to epsilon)":
                (_smoothing_made_like(uniform_share=lambda lp, right: lp.sum(dim=-1)),
                 "the cross-entropy against the uniform distribution is the mean of -log p over "
                 "the |V| words, not their sum"),
            "the log of the softmax taken in two steps (a probability that underflows to 0 gives "
            "log 0 = -inf)":
                (_smoothing_made_like(log_probs_of=lambda lg: lg.softmax(dim=-1).log()),
                 "with large logits the softmax rounds small probabilities to 0; log_softmax "
                 "(x minus its logsumexp) stays finite"),
        })


# ---------------------------------------------------------------------------------------------------
# 8.2 Inputs and labels from a padded batch
# ---------------------------------------------------------------------------------------------------
def _pair_by_lists(ids, bos_id, eos_id, pad_id, eos_at=0):
    """One list per sentence, then pad. ``eos_at=-1`` puts <eos> over the last word and
    ``eos_at=None`` after the padding: two wrong-answer models."""
    n, rows_in, rows_out = ids.shape[1], [], []
    for row in ids.tolist():
        words = [w for w in row if w != pad_id]
        padding = [pad_id] * (n - len(words))
        rows_in.append([bos_id, *words, *padding])
        if eos_at is None:
            rows_out.append([*words, *padding, eos_id])
        else:
            labels = [*words, pad_id, *padding]
            labels[len(words) + eos_at] = eos_id
            rows_out.append(labels)
    return torch.tensor(rows_in, dtype=ids.dtype), torch.tensor(rows_out, dtype=ids.dtype)


def _right_padded(lengths: list[int], n: int, pad_id: int, g: torch.Generator,
                  dtype: torch.dtype = torch.long) -> torch.Tensor:
    """(B, n) random word ids (none equal to pad_id), sentence b right-padded after lengths[b]."""
    ids = torch.randint(pad_id + 1, pad_id + 40, (len(lengths), n), generator=g, dtype=dtype)
    real = torch.arange(n)[None, :] < torch.tensor(lengths)[:, None]           # (B, n)
    return ids.masked_fill(~real, pad_id)


def _shift_inputs(hidden: bool) -> list[tuple]:
    g = _generator(108 if hidden else 8)
    if hidden:
        return [(torch.tensor([[9]]), 1, 2, 0),
                (_right_padded([7, 2, 5, 1, 7], 7, 6, g, torch.int32), 3, 4, 6),
                (_right_padded([3, 3], 3, 0, g), 1, 2, 0),
                (_right_padded([1, 4, 2], 4, 50, g), 1, 2, 50)]
    return [(torch.tensor([[5, 6, 7]]), 1, 2, 0),
            (torch.tensor([[5, 6, 7, 8], [9, 4, 0, 0], [6, 0, 0, 0]]), 1, 2, 0),
            (torch.tensor([[7, 8, 3], [9, 3, 3]]), 0, 1, 3),
            (torch.randint(4, 30, (3, 6), generator=g), 1, 2, 0)]


@exercise("8.2", "Inputs and labels from a padded batch", "Easy", 10,
          hint="both tensors are the words with one extra column. For the input the start token goes "
               "in front. For the labels the end token goes after each sentence's own last word, "
               "which in a short sentence is the first padding position, not the end of the row")
def _teacher_forcing_pair(answer, hidden=False):
    verify_function(
        answer, reference=_pair_by_lists, inputs=_shift_inputs(hidden), name="Exercise 8.2",
        hint=_teacher_forcing_pair.exercise.hint,
        # "Build them from a tensor instead" of the chapter's make_batch
        forbidden=[(utils.data, "make_batch")],
        mistakes={
            "tgt_in and tgt_out swapped (the input starts with <bos>, the labels end with <eos>)":
                (lambda *args: _pair_by_lists(*args)[::-1],
                 "return (tgt_in, tgt_out) in this order: first what the decoder reads, then what "
                 "it must predict"),
            "<eos> put after the padding (it belongs right after the sentence's last word)":
                (lambda *args: _pair_by_lists(*args, eos_at=None),
                 "count each sentence's real words (the entries that are not pad_id): <eos> goes "
                 "at that position of tgt_out, the first padding position of a short sentence"),
            "<eos> written over the last word (it comes after it)":
                (lambda *args: _pair_by_lists(*args, eos_at=-1),
                 "a sentence of n words has its n words in tgt_out followed by <eos> at index n, "
                 "not n - 1"),
        })


# ---------------------------------------------------------------------------------------------------
# 8.3 Search error or model error?
# ---------------------------------------------------------------------------------------------------
def _kinds_made_like(search_if=lambda out, ref: ref > out, use_correct=True, swapped=False):
    """The reference (the defaults) or a model answer with one mistake: 0 correct, 1 search error
    (the model prefers the reference to the wrong output), 2 model error (it prefers the output)."""
    def kinds(lp_output, lp_reference, correct):
        search, model = (2, 1) if swapped else (1, 2)
        wrong_kind = torch.where(search_if(lp_output, lp_reference), search, model)   # (B,)
        return torch.where(correct, 0, wrong_kind) if use_correct else wrong_kind
    return kinds


def _kinds_inputs(hidden: bool) -> list[tuple]:
    g = _generator(103 if hidden else 3)
    cases = []
    for b in ([9, 1, 30] if hidden else [8, 5, 20]):
        lp_out = -10 * torch.rand(b, generator=g)                  # (B,) log-probabilities
        lp_ref = -10 * torch.rand(b, generator=g)
        correct = torch.rand(b, generator=g) < 0.3
        lp_ref = torch.where(correct, lp_out, lp_ref)                # a correct output is the reference
        cases.append((lp_out, lp_ref, correct))
    # ties: wrong outputs the model scores exactly as high as the reference (model errors)
    cases.append((torch.tensor([-3.0, -2.0, -5.0, -6.0]), torch.tensor([-3.0, -2.0, -5.0, -1.0]),
                  torch.tensor([False, True, False, False])))
    return cases


@exercise("8.3", "Search error or model error?", "Medium", 15,
          hint="first the correct outputs (0); for a wrong one, ask which of the two sentences the "
               "model itself scores higher: the reference above the output means the search missed "
               "what the model prefers (1), anything else means the model prefers a wrong sentence (2)",
          questions=[Question(
              "On the chapter's three-clause sentences, which kind of error would you expect to "
              "dominate for greedy decoding, and what does beam search change?",
              ("model errors: the sentences have a clause more than any training pair, so the model "
               "itself prefers wrong translations; the exact match stays low with either decoder",
               "beam search turns some search errors into outputs the model scores higher, but an "
               "output of higher probability is still wrong when the model is: it removes search "
               "errors only, so exact match hardly moves"), 2)])
def _error_kinds(answer, hidden=False):
    verify_function(
        answer, reference=_kinds_made_like(), inputs=_kinds_inputs(hidden), name="Exercise 8.3",
        hint=_error_kinds.exercise.hint, atol=0.0, rtol=0.0,
        mistakes={
            "the two kinds of error swapped (a search error is where the model scores the reference "
            "higher than the output)":
                (_kinds_made_like(swapped=True),
                 "if the model gives the reference the higher log-probability, a better search could "
                 "have found it: that is a search error, 1"),
            "correct outputs labelled as errors (the comparison made for every sentence)":
                (_kinds_made_like(use_correct=False),
                 "a correct output is no error at all: give it 0 before comparing anything"),
            "a tie counted as a search error (the model scores the wrong output as high as the "
            "reference, so the search did find a sentence the model likes as much)":
                (_kinds_made_like(search_if=lambda out, ref: ref >= out),
                 "a search error needs the reference strictly above the output: with equal scores "
                 "the model is as happy with the wrong sentence, a model error"),
        })


# ---------------------------------------------------------------------------------------------------
# 8.4 Picking the best finished beam
# ---------------------------------------------------------------------------------------------------
def _best_by(score):
    """A model answer: the index of the hypothesis of best ``score(log_probs, n, alpha)``."""
    def best(log_probs, lengths, alpha):
        return max(range(len(lengths)), key=lambda r: score(log_probs[r], int(lengths[r]), alpha))
    return best


def _normalised(lp, n, alpha):
    return sum(lp[:n].tolist()) / math.pow((5 + n) / 6, alpha)


def _best_penalised_by_width(log_probs, lengths, alpha):
    """The mistake of one penalty for all: ((5 + width) / 6) ** alpha, the padded width."""
    width = log_probs.shape[1]
    return _best_by(lambda lp, n, a: sum(lp[:n].tolist()) / math.pow((5 + width) / 6, a))(
        log_probs, lengths, alpha)


def _best_zeroing_by_product(log_probs, lengths, alpha):
    """The mistake of multiplying by a 0/1 mask: -inf (or NaN) times 0 is NaN, and argmax picks it."""
    real = torch.arange(log_probs.shape[1])[None, :] < lengths[:, None]      # (n_hyp, T)
    total = (log_probs * real).sum(dim=-1)                                   # (n_hyp,)
    return int((total / ((5 + lengths.float()) / 6) ** alpha).argmax())


def _beam_inputs(hidden: bool) -> list[tuple]:
    g = _generator(108 if hidden else 8)
    if hidden:
        ended = -torch.rand(4, 7, generator=g)
        ended[[0, 2, 3], 3:] = -math.inf        # a beam may store -inf after a hypothesis has ended
        # the best hypothesis by length-normalised score, by total and by total times the penalty
        # are three different ones
        three_ways = torch.zeros(3, 10)
        three_ways[0, :2], three_ways[1, :5], three_ways[2] = -0.25, -0.09, -0.06
        return [(ended, torch.tensor([3, 7, 2, 3]), 0.6),
                (three_ways, torch.tensor([2, 5, 10]), 1.0),
                (-torch.rand(1, 5, generator=g), torch.tensor([4]), 0.6),
                (-torch.rand(6, 10, generator=g), torch.tensor([10, 1, 4, 9, 6, 2]), 2.0),
                (-3 * torch.rand(5, 9, generator=g), torch.tensor([9, 8, 3, 5, 1]), 0.0),
                (-torch.rand(3, 4, generator=g), torch.tensor([4, 4, 4]), 1.0)]   # equal lengths
    padding_helps = torch.tensor([[-0.5, -0.5, -0.5, 1.0, 1.0, 1.0],    # 3 tokens, padding
                                  [-0.2, -0.2, -0.2, -0.2, -0.2, -0.2]])  # 6 tokens
    short_or_long = torch.tensor([[-0.5, -0.5, -0.5, 0.0, 0.0, 0.0],
                                  [-0.3, -0.3, -0.3, -0.3, -0.3, -0.3]])
    three_ways = torch.zeros(3, 9)  # the best by normalised score, by total, by total * penalty
    three_ways[0, :1], three_ways[1, :4], three_ways[2] = -0.45, -0.1, -0.06
    return [(padding_helps, torch.tensor([3, 6]), 0.0),
            (short_or_long, torch.tensor([3, 6]), 0.0),
            (three_ways, torch.tensor([1, 4, 9]), 1.0),
            (short_or_long, torch.tensor([3, 6]), 1.0),
            (-2 * torch.rand(5, 8, generator=g), torch.tensor([3, 8, 5, 6, 2]), 0.6),
            (-torch.rand(4, 7, generator=g), torch.tensor([7, 1, 4, 2]), 0.6)]


@exercise("8.4", "Picking the best finished beam", "Medium", 15,
          hint="a hypothesis' log-probability is the sum over its own tokens only; every extra word "
               "lowers that sum, and the penalty, which grows with length, is what lets longer "
               "hypotheses compete",
          questions=[Question(
              "With alpha = 0 which hypotheses win, and why?",
              ("with alpha = 0 the penalty is 1: hypotheses are compared by their total "
               "log-probability",
               "every token adds a log-probability below zero, so the total falls as a hypothesis "
               "grows: short hypotheses win, usually the shortest",
               "a penalty that grows with the length (alpha > 0) divides longer hypotheses' totals "
               "by more and corrects that bias"), 2)])
def _best_hypothesis(answer, hidden=False):
    verify_function(
        answer, reference=_best_by(_normalised), inputs=_beam_inputs(hidden), name="Exercise 8.4",
        hint=_best_hypothesis.exercise.hint,
        mistakes={
            "padding entries counted in the sum (a hypothesis' log-probability sums its own tokens "
            "only)":
                (_best_by(lambda lp, n, a: sum(lp.tolist()) / math.pow((5 + n) / 6, a)),
                 "entries at positions >= lengths[r] are not tokens of hypothesis r: zero them "
                 "(masked_fill) before summing"),
            "the length penalty multiplied instead of divided (dividing a negative total by a "
            "penalty above 1 is what lets longer hypotheses compete)":
                (_best_by(lambda lp, n, a: sum(lp[:n].tolist()) * math.pow((5 + n) / 6, a)),
                 "the score is the total log-probability divided by ((5 + T) / 6) ** alpha"),
            "the length penalty computed from the padded width (every hypothesis then gets the "
            "same penalty)":
                (_best_penalised_by_width,
                 "T in the penalty is each hypothesis' own length, lengths[r], <eos> included"),
            "padding zeroed by multiplying with a 0/1 mask (a padding entry of -inf or NaN times 0 "
            "is NaN, not 0)":
                (_best_zeroing_by_product,
                 "the padding must be ignored whatever it holds: replace it with masked_fill or "
                 "torch.where instead of multiplying it by 0"),
        })


# ---------------------------------------------------------------------------------------------------
# 8.5 How much work does the decoding loop do? (a prediction)
# ---------------------------------------------------------------------------------------------------
_STEPS = 11  # 10 words, then <eos>


def _decoder_rows(seed: int) -> int:
    """Position vectors through the decoder blocks of a tiny untrained model (N = 2) decoding
    ``_STEPS`` cache-free greedy steps, counted with forward hooks."""
    with torch.random.fork_rng(devices=[]):   # leave the notebook's random state alone
        torch.manual_seed(seed)
        config = TransformerConfig(12, 12, d_model=16, num_heads=2, num_encoder_layers=1,
                                   num_decoder_layers=2, d_ff=32, dropout=0.0)
        model = Transformer(config).eval()
        src = torch.randint(3, 12, (1, 5))
    rows: list[int] = []

    def count_rows(_module, args, _output):      # args[0]: the block's input, (B, t, C)
        rows.append(args[0].shape[1])

    hooks = [layer.register_forward_hook(count_rows) for layer in model.decoder.layers]
    try:
        with torch.no_grad():
            memory = model.encode(src)                                   # (1, S, C), once
            prefix = torch.full((1, 1), model.config.bos_id)             # (1, 1): <bos>
            for _ in range(_STEPS):                                      # <eos> or not
                next_id = model.decode(prefix, memory)[:, -1].argmax(-1, keepdim=True)  # (1, 1)
                prefix = torch.cat([prefix, next_id], dim=1)
    finally:
        for hook in hooks:
            hook.remove()
    return sum(rows)


_ROW_BELIEFS = {
    2 * _STEPS: "the belief that each step feeds only the newest token (one row per step and block: "
                "a key-value cache would allow that; this loop has none)",
    sum(range(1, _STEPS + 1)): "the belief that the prefix passes through one block only (every "
                               "step runs it through all N blocks)",
    2 * _STEPS * _STEPS: "the belief that every step is as long as the final prefix (the prefix "
                         "grows by one token per step)",
}


@exercise("8.5", "How much work does the decoding loop do?", "Easy", 10, kind="prediction",
          hint="write down the length of the decoder's input at step 1, 2, ..., 11: it starts with "
               "<bos> alone and grows by one token per step, and each block processes all of it",
          questions=[Question(
              "How does the count grow with the length of the output, and what would a cache of the "
              "keys and values of earlier positions change?",
              ("T steps cost N (1 + 2 + ... + T) = N T (T + 1) / 2 rows: quadratic in the output "
               "length, though each step uses only the top block's last row",
               "a key-value cache lets each step feed only the newest token: N T rows, linear",
               "attention still reads all earlier keys, so a step's cost still grows with its "
               "position, but nothing is recomputed"), 2)])
def _predict_decoder_rows(answer, hidden=False):
    verify_prediction(
        answer, name="Exercise 8.5", form=int, measure=lambda: _decoder_rows(108 if hidden else 8),
        labels=(f"position vectors through the decoder blocks in {_STEPS} cache-free greedy steps, "
                "N = 2",),
        misconceptions={0: _ROW_BELIEFS.get},  # the belief behind a wrong count, by its value
        atol=0, hint=_predict_decoder_rows.exercise.hint)
