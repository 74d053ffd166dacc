"""Chapter 2's exercises (attention as a soft lookup): their checks, references and named mistakes."""

from __future__ import annotations

import math

import torch

import utils.attention
from utils.attention import scaled_dot_product_attention
from utils.checks import MISTAKES, verify_function, verify_prediction
from utils.exercises import Question, exercise
from utils.runtime import seed_everything

# The memory at the start of the chapter: four keys and the query (0.9, 0.5)
_KEYS = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.7, 0.7]])
_QUERY, _SHIFT = torch.tensor([0.9, 0.5]), torch.tensor([5.0, -3.0])


def _shift_experiments() -> tuple[bool, bool, float]:
    before = torch.softmax(_KEYS @ _QUERY, dim=0)
    return (torch.allclose(torch.softmax((_KEYS + _SHIFT) @ _QUERY, dim=0), before, atol=1e-5),
            torch.allclose(torch.softmax(_KEYS @ (_QUERY + _SHIFT), dim=0), before, atol=1e-5),
            torch.softmax(_KEYS @ (0 * _QUERY), dim=0)[0].item())


@exercise("2.1", "What moves the weights?", "Easy", 10, kind="prediction",
          questions=[Question(
              "Explain each of your three predictions in a sentence (written before the check runs).",
              ("a shift of every key adds the same q . u to every score, which the softmax ignores",
               "a shift of the query adds u . k_j, a different amount for each key",
               "a zero query gives four equal scores, so equal weights of 1/4"), 2)],
          hint="write each new score as the old score plus a change, and ask whether that change is "
               "the same for all four entries: the softmax ignores a number added to every score alike")
def _predict_shift(answer, hidden=False):
    verify_prediction(
        answer, name="Exercise 2.1", form=(bool, bool, float), measure=_shift_experiments,
        labels=("the same u added to every key: weights unchanged?",
                "u added to the query: weights unchanged?",
                "the query times 0: the weight of entry 0"),
        misconceptions={
            0: "the belief that shifting every key changes the weights (it adds the same q . u to "
               "every score, and the softmax ignores a shift shared by all scores)",
            1: "the belief that shifting the query leaves the weights alone (it adds u . k_j, a "
               "different amount for each key)",
            2: "the belief that a zero query gives no weight at all (four equal scores share the "
               "weight equally)",
        })


def _jacobian_through(softmax_part, query, keys, values):
    p = torch.softmax(keys @ query, dim=0)
    return values.T @ softmax_part(p) @ keys


def _jacobian_made_like(softmax_part):
    """A model answer V^T M K, with M in place of d alpha / d scores. Each model answer calls a
    function of this module by name, so a copy of it captured before the check runs is refused too."""
    return lambda query, keys, values: _jacobian_through(softmax_part, query, keys, values)


def _lookup(k, v, x):
    return torch.softmax(k @ x, dim=0) @ v


def _autograd_jacobian(q, k, v):
    return torch.autograd.functional.jacobian(lambda x: _lookup(k, v, x), q)


def _jacobian_inputs(hidden: bool) -> list[tuple[torch.Tensor, ...]]:
    seed_everything(105 if hidden else 5)
    if hidden:
        return [(torch.randn(3), torch.randn(7, 3), torch.randn(7, 4)),
                (torch.tensor([0.0, 25.0, 0.0]), torch.eye(3), torch.randn(3, 2))]
    return [(torch.randn(2), torch.randn(4, 2), torch.randn(4, 3)),
            (torch.randn(5), torch.randn(6, 5), torch.randn(6, 2)),
            (torch.tensor([30.0, 0.0]), torch.eye(2), torch.randn(2, 3))]


@exercise("2.2", "The gradient of a soft lookup, by hand", "Hard", 20,
          hint="the answer depends on the query through three steps: the scores (linear in q), the "
               "weights (the softmax, whose Jacobian the chapter gives) and the weighted sum (linear "
               "in the weights); multiply their three Jacobians in the order of the chain rule, so "
               "that the shapes lead from d_v to d_k",
          questions=[Question(
              "What does it return when one key's score is far above all the others?",
              ("nearly the zero matrix", "because the softmax is nearly one-hot, so "
               "diag(p) - p p^T is nearly zero", "links it to the hard lookup's missing gradient or "
               "to saturated softmaxes stopping the learning of W_Q and W_K"), 2)])
def _lookup_jacobian(answer, hidden=False):
    verify_function(
        answer, reference=_autograd_jacobian, inputs=_jacobian_inputs(hidden), name="Exercise 2.2",
        # autograd in every mode is refused by what runs (utils.routes), not only by these names;
        # a numerical derivative by the numbers it exponentiates: the formula needs one softmax of the
        # T_k scores, a difference quotient one more per direction of the query it shifts (d_k of them)
        forbidden=[(torch.autograd.functional, "jacobian"), (torch.autograd, "grad"),
                   (torch.Tensor, "backward"), (torch.func, "jacrev"), (torch.func, "jacfwd")],
        exponentials=lambda query, keys, values: 2 * keys.shape[0],
        hint=_lookup_jacobian.exercise.hint,
        mistakes={
            "the softmax left out of the chain rule (values.T @ keys)":
                (_jacobian_made_like(lambda p: torch.eye(len(p))),
                 "the weights are not the scores: between them stands the softmax, whose Jacobian "
                 "diag(p) - p p^T belongs in the middle of the product"),
            "only the diagonal of the softmax's Jacobian, diag(p), without - p p^T":
                (_jacobian_made_like(torch.diag),
                 "each weight depends on every score, not only on its own: d p_i / d e_j is "
                 "p_i (1[i = j] - p_j)"),
        })


def _attend_columns(xc, mc, wq, wk, wv, softmax_dim, scaled, transposed):
    if transposed:
        wq, wk, wv = wq.T, wk.T, wv.T
    qc, kc, vc = wq @ xc, wk @ mc, wv @ mc
    scores = kc.T @ qc / (math.sqrt(qc.shape[0]) if scaled else 1.0)
    return vc @ torch.softmax(scores, dim=softmax_dim)


def _columns_made_like(softmax_dim=0, scaled=True, transposed=True):
    """A model answer: column-convention attention, with one mistake."""
    return lambda *args: _attend_columns(*args, softmax_dim, scaled, transposed)


def _rows_reference(xc, mc, wq, wk, wv):
    return scaled_dot_product_attention(xc.T @ wq, mc.T @ wk, mc.T @ wv)[0].T


def _column_inputs(hidden: bool) -> list[tuple[torch.Tensor, ...]]:
    seed_everything(106 if hidden else 6)
    shapes = ([(7, 4, 3, 6, 6, 2), (4, 1, 6, 3, 3, 5)] if hidden else
              [(5, 3, 4, 5, 5, 5), (6, 3, 5, 16, 16, 4), (8, 2, 7, 4, 4, 3)])
    return [(torch.randn(d, t_q), torch.randn(d, t_k), torch.randn(d, dq), torch.randn(d, dk),
             torch.randn(d, dv)) for d, t_q, t_k, dq, dk, dv in shapes]


@exercise("2.3", "Projections in the column convention", "Hard", 20,
          hint="transpose a row-convention product x W and look at what now multiplies the column x, "
               "and from which side; after the projections, ask which axis of the score matrix runs "
               "over the keys")
def _column_attention(answer, hidden=False):
    verify_function(
        answer, reference=_rows_reference, inputs=_column_inputs(hidden), name="Exercise 2.3",
        hint=_column_attention.exercise.hint,
        # the chapter's row-convention function, transposed back, is not working in columns: the
        # course's attention is refused however it is reached, PyTorch's by its operators
        forbidden=[(torch.nn.functional, "scaled_dot_product_attention"),
                   (utils.attention, "scaled_dot_product_attention"),
                   (utils.attention.SingleHeadAttention, "forward"),
                   (utils.attention.MultiHeadAttention, "forward")],
        mistakes={
            MISTAKES["softmax_axis"]: (_columns_made_like(softmax_dim=1),
                                       "in the column convention the score matrix is (T_k, T_q): "
                                       "the keys run down its columns"),
            MISTAKES["unscaled"]: (_columns_made_like(scaled=False),
                                   "divide the scores by sqrt(d_k), as in the row convention"),
            "the row-convention matrices used as they are, W_Q @ Xc (in columns the projection is "
            "W_Q^T x)": (_columns_made_like(transposed=False),
                         "transpose x W: (x W)^T = W^T x^T, so a column is projected by W^T"),
        })


def _weight_of_best(top: float, rest: float, T_k: int) -> float:
    """The softmax weight of one key scored ``top`` among ``T_k - 1`` others scored ``rest``,
    exp(top) / (exp(top) + (T_k - 1) exp(rest)), as a sigmoid in float64 (no overflow)."""
    if T_k == 1:
        return 1.0
    return torch.sigmoid(torch.tensor(top - rest - math.log(T_k - 1), dtype=torch.float64)).item()


def _l1(w: torch.Tensor) -> float:
    return w.detach().double().abs().sum().item()


def _additive_ceiling(w: torch.Tensor, T_k: int) -> float:
    """Every hidden unit is in (-1, 1), so |e_ij| < a = ||w||_1: the best key at a, the others at -a."""
    return _weight_of_best(_l1(w), -_l1(w), T_k)


def _ceiling_made_like(norm=_l1, rest=lambda a: -a, rivals=lambda T_k: T_k):
    """A model answer with one mistake: another size of w, other scores for the rivals, or another
    number of keys."""
    return lambda w, T_k: _weight_of_best(norm(w), rest(norm(w)), rivals(T_k))


def _ceiling_inputs(hidden: bool) -> list[tuple[torch.Tensor, int]]:
    seed_everything(108 if hidden else 8)
    if hidden:
        return [(0.3 * torch.randn(16), 10_000),                    # a long sentence
                (torch.zeros(5), 7),                                # w = 0: uniform, 1/7
                (torch.tensor([-0.7]), 1),                          # one key takes it all
                (5.0 * torch.randn(8).sign(), 50),                  # a = 40: within 1e-33 of 1
                (torch.tensor([3.0, -2.5, 4.0, -1.5]), 10_000),     # a = 11, close to 1
                (0.1 * torch.randn(32, dtype=torch.float64), 3)]
    return [(torch.tensor([0.5, -0.3, 0.2, -0.1]), 6),
            (0.3 * torch.randn(8), 1000),
            (torch.tensor([1.5, -2.0, 0.5]), 2)]


@exercise("2.4", "How sharp can additive attention be?", "Medium", 20,
          hint="each hidden unit tanh(...) lies between -1 and 1: how large can the score "
               "tanh(...) w be, and how small, whatever the queries, keys and W's? Give the best key "
               "the largest score and every other key the smallest, then write the best key's "
               "softmax weight",
          questions=[Question(
              "The chapter's additive scorer has d_att = 8 hidden units and a w of small entries at "
              "initialisation. What does the ceiling say about a long sentence (T_k = 1000 keys), and "
              "what must training do to w to let one key take, say, 0.9 of the weight? Why does the "
              "scaled dot product not face this limit?",
              ("a key's weight is below 1/(1 + (T_k - 1) exp(-2a)) with a = ||w||_1; with the small "
               "initial w (|w_k| < 1/sqrt(8), so a < sqrt(8)) one key of 1000 gets at most "
               "1/(1 + 999 exp(-2 sqrt(8))) = 0.22, whatever the queries and keys: rows stay near "
               "uniform",
               "0.9 at T_k = 1000 needs a >= ln(9 * 999)/2 = ln(8991)/2 = 4.55: training must grow "
               "||w||_1 (and saturate the units of the chosen key); the a needed grows like "
               "(1/2) ln T_k as sentences get longer",
               "dot-product scores q_i . k_j grow with ||q_i|| ||k_j|| without a bound, so larger "
               "queries or keys (W_Q, W_K) make the softmax as sharp as needed; the 1/sqrt(d_k) only "
               "sets the scale at initialisation"), 2)])
def _ceiling(answer, hidden=False):
    verify_function(
        answer, reference=_additive_ceiling, inputs=_ceiling_inputs(hidden), name="Exercise 2.4",
        hint=_ceiling.exercise.hint, atol=1e-8, rtol=1e-5,   # a formula in float32 is that close
        # a gradient search (Adam saturates tanh to exactly +-1 in float32) would find the number
        # without the derivation the exercise asks for
        forbidden=[(torch.Tensor, "backward"), (torch.autograd, "backward"),
                   (torch.autograd, "grad")],
        mistakes={
            "the Euclidean norm ||w||_2 in place of ||w||_1 (the sum of the |w_k|)":
                (_ceiling_made_like(norm=lambda w: w.detach().double().norm().item()),
                 "each hidden unit can reach +1 or -1 on its own, whatever the others do, so the "
                 "score can reach |w_1| + |w_2| + ...; the Euclidean norm bounds it only for a "
                 "hidden vector of length 1"),
            "the other keys at score 0 in place of -a, exp(a) / (exp(a) + T_k - 1)":
                (_ceiling_made_like(rest=lambda a: 0.0),
                 "the other keys' hidden units can saturate with the opposite signs, which gives "
                 "them the smallest score, -a, and leaves more weight to the best key"),
            "the sum of the w_k in place of the sum of their sizes |w_k|":
                (_ceiling_made_like(norm=lambda w: w.detach().double().sum().item()),
                 "a negative w_k times a hidden unit near -1 adds |w_k| to the score: each unit "
                 "takes the sign of its own w_k"),
            "T_k ignored: the ceiling for two keys, 1 / (1 + exp(-2a))":
                (_ceiling_made_like(rivals=lambda T_k: 2),
                 "the best key shares the softmax with all T_k - 1 other keys: each adds "
                 "exp(-a) to the denominator"),
            "all T_k scores equal, 1 / T_k":
                (_ceiling_made_like(rest=lambda a: a),
                 "equal scores give the smallest largest weight, not the largest: the best key can "
                 "score up to a while the others score down to -a"),
            "T_k rivals beside the best key, 1 / (1 + T_k exp(-2a)) (there are T_k - 1)":
                (_ceiling_made_like(rivals=lambda T_k: T_k + 1),
                 "the best key is not its own rival: beside its exp(a) stand T_k - 1 terms "
                 "exp(-a)"),
        })
