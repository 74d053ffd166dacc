"""Chapter 2's exercises (attention as a soft lookup): their checks, references and named mistakes."""

from __future__ import annotations

import math

import torch

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
        forbidden=[(torch.autograd.functional, "jacobian"), (torch.autograd, "grad"),
                   (torch.Tensor, "backward"), (torch.func, "jacrev"), (torch.func, "jacfwd")],
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
        # the chapter's row-convention function, transposed back, is not working in columns
        forbidden=[(torch.nn.functional, "scaled_dot_product_attention")],
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


def _concatenated_scores(Q, K, W, w, swap_halves, squash, w_first):
    first, second = (K, Q) if swap_halves else (Q, K)
    pairs = torch.cat([first[:, None, :].expand(-1, second.shape[0], -1),
                       second[None, :, :].expand(first.shape[0], -1, -1)], dim=-1)
    if swap_halves:
        pairs = pairs.transpose(0, 1)                 # back to (T_q, T_k, ...)
    if w_first:
        return squash(pairs @ W @ w)
    return squash(pairs @ W) @ w                      # (T_q, T_k, h) @ (h,)


def _concat_made_like(swap_halves=False, squash=torch.tanh, w_first=False):
    """A model answer: the concatenated pairs built literally (what the exercise forbids)."""
    return lambda Q, K, W, w: _concatenated_scores(Q, K, W, w, swap_halves, squash, w_first)


def _concat_inputs(hidden: bool) -> list[tuple[torch.Tensor, ...]]:
    seed_everything(107 if hidden else 7)
    shapes = [(2, 5, 3, 4), (6, 2, 5, 9)] if hidden else [(3, 5, 4, 4), (3, 5, 4, 6)]
    out = []
    for t_q, t_k, d_q, d_k in shapes:
        d_att = d_q + 2
        out.append((torch.randn(t_q, d_q), torch.randn(t_k, d_k), torch.randn(d_q + d_k, d_att),
                    torch.randn(d_att)))
    return out


_CONCATENATIONS = [(torch, "cat"), (torch, "concat"), (torch, "concatenate"), (torch, "hstack"),
                   (torch, "dstack"), (torch, "column_stack"), (torch, "stack")]


@exercise("2.4", "Additive scores from one concatenated matrix", "Medium", 15,
          hint="write the product of a concatenated row vector with W as a sum of two products, one "
               "for each block of rows of W; then build every (query, key) pair of sums by "
               "broadcasting, with the queries and the keys given a new axis of size 1 in different "
               "places",
          questions=[Question(
              "Why does this score need the tanh? What would the weights be without it?",
              ("without the tanh the score splits into a query part plus a key part, a_i + b_j",
               "the softmax ignores a_i, shared by a whole row", "so every query would get the "
               "same weights, softmax_j(b_j): attention would not depend on the query"), 2)])
def _concat_additive(answer, hidden=False):
    verify_function(
        answer, reference=_concat_made_like(), inputs=_concat_inputs(hidden), name="Exercise 2.4",
        hint=_concat_additive.exercise.hint, forbidden=_CONCATENATIONS,
        mistakes={
            "the halves of W swapped (its first d_q rows multiply the query)":
                (_concat_made_like(swap_halves=True),
                 "in [q; k] W the query's entries come first, so they meet the first d_q rows"),
            "the tanh left out (the score becomes a query part plus a key part)":
                (_concat_made_like(squash=lambda h: h), "apply the tanh to the hidden units, "
                 "before the product with w"),
            "w applied before the tanh, tanh([q; k] W w)":
                (_concat_made_like(w_first=True), "the tanh acts on each of the d_att hidden "
                 "units; only then does w sum them"),
        })
