"""Chapter 4's exercises (self-attention): their checks, references and named mistakes."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

import utils.attention
from utils import checks
from utils.checks import MISTAKES, verify_function
from utils.exercises import Question, exercise


def _scores(x, w_q, w_k, scale=None):
    """(B, T, T) self-attention scores q_i . k_j / scale (sqrt(d_k) unless given)."""
    q, k = x @ w_q, x @ w_k                                          # (B, T, d_k) each
    return q @ k.transpose(-2, -1) / (math.sqrt(q.shape[-1]) if scale is None else scale)


def _entropy_reference(x, w_q, w_k):
    """(B, T) entropies of the rows of softmax(Q K^T / sqrt(d_k)), with 0 log 0 = 0."""
    return torch.special.entr(torch.softmax(_scores(x, w_q, w_k), dim=-1)).sum(dim=-1)


def _row_entropies(x, w_q, w_k, scale=None, dim=-1, base=math.e, sign=-1.0):
    """The check's models: row entropies of the softmax over ``dim``, computed stably."""
    log_weights = torch.log_softmax(_scores(x, w_q, w_k, scale), dim=dim)
    return sign * (log_weights.exp() * log_weights).sum(dim=-1) / math.log(base)


def _entropy_log_after_softmax(x, w_q, w_k):
    """The check's model of the logarithm taken after the softmax: 0 * log 0 = NaN."""
    weights = torch.softmax(_scores(x, w_q, w_k), dim=-1)
    return -(weights * weights.log()).sum(dim=-1)


def _entropy_inputs(hidden: bool) -> list[tuple[torch.Tensor, ...]]:
    gen = torch.Generator().manual_seed(101 if hidden else 1)

    def randn(*shape):
        return torch.randn(*shape, generator=gen)

    if hidden:
        cases = [(randn(3, 4, 6), randn(6, 3), randn(6, 3)),
                 (randn(2, 1, 3), randn(3, 2), randn(3, 2))]              # one token: entropy 0
        # two tokens 40 times longer than the rest, with W_Q = W_K: each looks at itself alone
        x = 0.5 * randn(2, 5, 3)
        x[0, 1], x[1, 3] = 40 * x[0, 1] / x[0, 1].norm(), 40 * x[1, 3] / x[1, 3].norm()
        w = randn(3, 3)
        return [*cases, (x, w, w.clone())]
    cases = [(randn(2, 5, 3), randn(3, 2), randn(3, 2)),
             (randn(1, 7, 8), randn(8, 4), randn(8, 4)),
             (randn(1, 6, 4), torch.zeros(4, 2), randn(4, 2))]             # q = 0: uniform rows
    # saturated rows: weights of exactly 0 beside 1/2 or 1, and one uniform row (x = 0)
    x = torch.tensor([[[10.0, 0.0], [0.0, 10.0], [0.0, 0.0], [10.0, 0.0]]])    # (1, 4, 2)
    return [*cases, (x, 2 * torch.eye(2), 2 * torch.eye(2))]


@exercise("4.1", "How spread out is each row?", "Medium", 15,
          hint="first get each query's weights over the keys as in the chapter; the entropy of one row "
               "sums -weight * log(weight) over its keys. Weights that underflow to 0 make log(weight) "
               "infinite, so take the logarithm of the softmax in one stable step rather than after it",
          questions=[Question(
              "Apply it to the pronoun example: which rows are the most spread out, and why?",
              ("six rows reach the largest possible value, log 9: both 'the', 'ignored', 'because', "
               "'was' and 'tired'", "their queries are zero (the hand-set W_Q reads only the pronoun "
               "and noun features), so every score of their row is 0 and the weights are uniform",
               "'cat' and 'ball' put most weight on the two verbs; the row of 'it' is the most "
               "concentrated, mostly on 'cat'"), 2)])
def _attention_entropy(answer, hidden=False):
    verify_function(
        answer, reference=_entropy_reference, inputs=_entropy_inputs(hidden), name="Exercise 4.1",
        hint=_attention_entropy.exercise.hint,
        mistakes={
            MISTAKES["unscaled"]: (
                lambda x, w_q, w_k: _row_entropies(x, w_q, w_k, scale=1.0),
                "divide the scores by sqrt(d_k), with d_k = w_q.shape[1], as the chapter's attention "
                "does"),
            MISTAKES["softmax_axis"]: (
                lambda x, w_q, w_k: _row_entropies(x, w_q, w_k, dim=-2),
                "each query's weights are a softmax over the keys, dim=-1; the entropy then sums over "
                "that same axis"),
            "the entropy in bits (log base 2), not in nats (the natural logarithm)": (
                lambda x, w_q, w_k: _row_entropies(x, w_q, w_k, base=2),
                "use the natural logarithm (torch.log, torch.log_softmax): an entropy in nats"),
            "the minus sign left out (an entropy is never negative)": (
                lambda x, w_q, w_k: _row_entropies(x, w_q, w_k, sign=1.0),
                "log(weight) <= 0 for a weight <= 1, so -sum(weight * log(weight)) >= 0: keep the minus"),
            "the logarithm taken after the softmax, weights * log(weights) (a weight that underflows "
            "to exactly 0 gives 0 * log 0 = 0 * (-inf) = NaN)": (
                _entropy_log_after_softmax,
                "take torch.log_softmax of the scores, which stays finite where a weight is 0, and "
                "exponentiate it for the weights"),
        })


def _causal_reference(x, w_q, w_k, w_v):
    """PyTorch's causal self-attention: (B, T, d_v)."""
    return F.scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v, is_causal=True)


def _self_attend(x, w_q, w_k, w_v, hidden_of, scale=None, dim=-1):
    """The check's models: self-attention with -inf at the (T, T) entries ``hidden_of(T)``."""
    scores = _scores(x, w_q, w_k, scale).masked_fill(hidden_of(x.shape[1]), float("-inf"))
    return torch.softmax(scores, dim=dim) @ (x @ w_v)


def _causal_after_softmax(x, w_q, w_k, w_v, renormalise=False):
    """The check's models of a causal mask applied to the weights, after the softmax."""
    weights = torch.softmax(_scores(x, w_q, w_k), dim=-1).tril()
    if renormalise:
        weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights @ (x @ w_v)


def _triangle(t, diagonal, upper):
    """(T, T) bool, True on and above (``upper``) or below the given diagonal."""
    ones = torch.ones(t, t, dtype=torch.bool)
    return ones.triu(diagonal=diagonal) if upper else ones.tril(diagonal=diagonal)


def _above(diagonal):
    """The hidden entries on and above a diagonal (1: the strict future), for ``_self_attend``."""
    return lambda t: _triangle(t, diagonal, upper=True)


def _below(diagonal):
    """The hidden entries on and below a diagonal, for ``_self_attend``."""
    return lambda t: _triangle(t, diagonal, upper=False)


def _causal_inputs(hidden: bool) -> list[tuple[torch.Tensor, ...]]:
    gen = torch.Generator().manual_seed(102 if hidden else 2)

    def randn(*shape):
        return torch.randn(*shape, generator=gen)

    # (B, T, d_model, d_k, d_v)
    shapes = [(2, 6, 4, 3, 5), (3, 2, 3, 3, 1)] if hidden else [(2, 5, 3, 2, 4), (3, 1, 6, 6, 6)]
    cases = [(randn(b, t, d), randn(d, d_k), randn(d, d_k), randn(d, d_v)) for b, t, d, d_k, d_v in shapes]
    # saturated: later tokens are longer and W_Q = W_K, so every query scores the future far above
    # the past; unmasked, the past's weights underflow to exactly 0
    t, scale = (6, 5.0) if hidden else (4, 6.0)
    x = scale * torch.arange(1.0, t + 1)[None, :, None] * torch.ones(2 if hidden else 1, t, 2)
    return [*cases, (x, torch.eye(2), torch.eye(2), randn(2, 3))]


@exercise("4.2", "Causal self-attention", "Medium", 15,
          hint="query i may read keys 0..i only: the (query, key) pairs with the key later than the "
               "query form the part of the score matrix above its diagonal. Give those scores a value "
               "that the softmax turns into a weight of exactly zero, before normalising")
def _causal_self_attention(answer, hidden=False):
    verify_function(
        answer, reference=_causal_reference, inputs=_causal_inputs(hidden), name="Exercise 4.2",
        hint=_causal_self_attention.exercise.hint,
        # "build and apply the mask yourself": no mask builder, no attention function or layer
        forbidden=[(utils.attention, "causal_mask"), (F, "scaled_dot_product_attention"),
                   (F, "multi_head_attention_forward"), (utils.attention, "scaled_dot_product_attention"),
                   (utils.attention.SingleHeadAttention, "forward"),
                   (utils.attention.SelfAttention, "forward"),
                   (utils.attention.MultiHeadAttention, "forward")],
        mistakes={
            MISTAKES["causal_off_by_one"]: (
                lambda x, w_q, w_k, w_v: _self_attend(x, w_q, w_k, w_v, _above(2)),
                "the future of query i begins at key i + 1: hide every entry strictly above the "
                "diagonal, triu(diagonal=1); with diagonal=2, token i still sees token i + 1"),
            "a causal mask that hides each token from itself too (token i may see itself: the first "
            "row then has nothing left to attend to)": (
                lambda x, w_q, w_k, w_v: _self_attend(x, w_q, w_k, w_v, _above(0)),
                "keep the diagonal visible: query i may read its own key, so hide only the keys j > i, "
                "triu(diagonal=1)"),
            MISTAKES["mask_transposed"]: (
                lambda x, w_q, w_k, w_v: _self_attend(x, w_q, w_k, w_v, _below(-1)),
                "rows are queries, columns keys: the keys later than query i lie to the right of the "
                "diagonal, in the upper triangle, not below it"),
            MISTAKES["mask_inverted"]: (
                lambda x, w_q, w_k, w_v: _self_attend(x, w_q, w_k, w_v, _below(0)),
                "your mask hides the past and keeps the future: masked_fill puts -inf where its mask is "
                "True, so give it the future (True above the diagonal), not a may-attend mask"),
            MISTAKES["mask_after_softmax"]: (
                _causal_after_softmax,
                "hide the future before the softmax: set those scores to minus infinity, so that the "
                "weights each query keeps sum to 1"),
            "a causal mask applied after the softmax and the weights renormalised (when the future "
            "takes nearly all the weight, the past's weights underflow to 0 and 0 / 0 is NaN)": (
                lambda x, w_q, w_k, w_v: _causal_after_softmax(x, w_q, w_k, w_v, renormalise=True),
                "mask the scores, not the weights: minus infinity before the softmax never divides by "
                "zero, however large the future's scores are"),
            MISTAKES["unscaled"]: (
                lambda x, w_q, w_k, w_v: _self_attend(x, w_q, w_k, w_v, _above(1), scale=1.0),
                "your mask is right; divide the scores by sqrt(d_k), with d_k = w_q.shape[1], before "
                "the softmax"),
            MISTAKES["softmax_axis"]: (
                lambda x, w_q, w_k, w_v: _self_attend(x, w_q, w_k, w_v, _above(1), dim=-2),
                "your mask is right; the softmax runs over the keys (dim=-1), so that each query's "
                "weights sum to 1 over the keys it may see"),
        })


def _matrix_bytes(batch_size, num_heads, n, dtype):
    """The bytes of a (B, H, n, n) matrix, sized as a meta tensor (nothing allocated)."""
    return torch.empty((batch_size, num_heads, n, n), dtype=dtype, device="meta").nbytes


def _longest_by_search(memory_bytes, batch_size, num_heads, dtype):
    """Double n, then bisect, on the sizes of the (B, H, n, n) matrices."""
    def size(n):
        return _matrix_bytes(batch_size, num_heads, n, dtype)

    low, high = 0, 1                 # size(low) fits (or low == 0), size(high) does not
    while size(high) <= memory_bytes:
        low, high = high, 2 * high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if size(middle) <= memory_bytes else (low, middle)
    return low


def _longest_float_root(memory_bytes, batch_size, num_heads, dtype):
    """The check's model of a floating-point square root, rounded down."""
    entry = torch.empty((), dtype=dtype, device="meta").element_size()
    return int(math.sqrt(memory_bytes // (batch_size * num_heads * entry)))


def _fits_inputs(hidden: bool) -> list[tuple]:
    # just below a perfect square of a large side, where a float square root rounds up
    side = 10**8 + 7 if hidden else 10**8 + 1
    if hidden:
        return [(2**50, 1, 1, torch.float32),            # a petabyte: no machine can allocate it
                (10**9, 4, 16, torch.float64), (7, 1, 2, torch.float32),
                (36 * 48, 3, 4, torch.float32), (36 * 48 - 1, 3, 4, torch.float32),   # 6 and 5
                (10**5, 3, 2, torch.int8),
                ((side**2 - 1) * 2 * 2 * 8, 2, 2, torch.complex64)]
    return [(80 * 2**30, 8, 12, torch.float32), (2**30, 1, 1, torch.float16),
            (100, 1, 1, torch.float32), (99, 1, 1, torch.float32),
            (3, 1, 1, torch.float32), (10**6, 2, 4, torch.bfloat16),
            ((side**2 - 1) * 2, 1, 1, torch.float16)]


@exercise("4.3", "How long a sequence fits?", "Easy", 10,
          hint="the matrix holds one entry per (example, head, query, key); first work out how many "
               "entries one (example, head) may use, then the largest whole n whose square stays within "
               "that. Floating-point square roots of large numbers can be off by one: stay with integers",
          questions=[Question(
              "How much longer may the sequence get when you double the memory?",
              ("only about sqrt(2), 1.41 times longer, not twice", "the matrix grows with T^2: twice the "
               "bytes hold a square of side sqrt(2) T (rounded down)", "doubling the length takes four "
               "times the memory"), 1)])
def _longest_sequence(answer, hidden=False):
    verify_function(
        answer, reference=_longest_by_search, inputs=_fits_inputs(hidden), name="Exercise 4.3",
        hint=_longest_sequence.exercise.hint,
        mistakes={
            "the heads left out (every head has its own n x n matrix)": (
                lambda m, b, h, dtype: _longest_by_search(m, b, 1, dtype),
                "every head has its own T x T matrix: one matrix may use memory_bytes // (batch_size * "
                "num_heads * bytes per entry) entries"),
            "one byte per entry (an entry takes the dtype's element size)": (
                lambda m, b, h, dtype: _longest_by_search(m, b, h, torch.uint8),
                "an entry takes element_size() bytes of its dtype: 4 for float32, 2 for float16"),
            "a floating-point square root, int(math.sqrt(...)), which rounds up just below the square "
            "of a large number": (
                _longest_float_root,
                "math.isqrt(n) is the exact integer square root; a float carries only 53 bits, so "
                "math.sqrt of 10^16 + 2 * 10^8 gives 10^8 + 1 exactly"),
        })


# ---------------------------------------------------------------------------------------------------
# 4.4 Luong's general score, factored
# ---------------------------------------------------------------------------------------------------
def _factors_made_like(singular="split", swap=False):
    """The reference (singular values split between the factors) or a model answer with one
    mistake: (w_q, w_k), each (d_model, d_k), from the SVD of w_a."""
    def factor(w_a, d_k):
        u, s, vh = torch.linalg.svd(w_a)                    # w_a = u diag(s) vh
        u, s, v = u[:, :d_k], s[:d_k], vh[:d_k].T           # the d_k largest directions
        if singular == "split":
            left, right = u * s.sqrt(), v * s.sqrt()
        elif singular == "none":
            left, right = u, v
        else:                                               # both sides get the whole of s
            left, right = u * s, v * s
        return (right, left) if swap else (left, right)
    return factor


def _general_inputs(hidden: bool) -> list[tuple[torch.Tensor, int]]:
    g = torch.Generator().manual_seed(104 if hidden else 4)
    shapes = [(6, 6), (8, 1), (5, 3), (9, 9)] if hidden else [(6, 2), (8, 4), (4, 1), (5, 5)]
    cases = []
    for d_model, rank in shapes:
        a = torch.randn(d_model, rank, generator=g, dtype=torch.float64)
        b = torch.randn(d_model, rank, generator=g, dtype=torch.float64)
        cases.append((a @ b.T, rank))                       # (d_model, d_model) of rank `rank`
    return cases


def _as_scores(factor, hint=None):
    """What a factorisation is judged by: its product w_q @ w_k.T, after its shapes are checked."""
    def product(w_a, d_k):
        w_q, w_k = factor(w_a, d_k)
        want = (w_a.shape[0], d_k)
        for label, w in (("w_q", w_q), ("w_k", w_k)):
            if not isinstance(w, torch.Tensor) or tuple(w.shape) != want:
                checks._fail("Exercise 4.4", f"{label} must have shape {want}, (d_model, d_k); got "
                             f"a {checks._describe(w)}", hint)
        return w_q @ w_k.T                                  # (d_model, d_model)
    return product


@exercise("4.4", "Luong's general score, factored", "Hard", 20,
          hint="write w_a with its singular value decomposition, u diag(s) vh, and keep the d_k "
               "largest singular values: w_a is u[:, :d_k] diag(s[:d_k]) vh[:d_k]. Split diag(s) "
               "between the two factors, and remember that w_k enters the score transposed",
          questions=[Question(
              "A head has d_k < d_model. Which general scores can it not represent, and what does a "
              "larger d_k buy?",
              ("the score matrix of a head, W_Q W_K^T, has rank at most d_k",
               "so a head cannot represent a general score whose W_a has a higher rank, for instance "
               "a full-rank W_a of Luong's model",
               "a larger d_k allows more independent directions of comparison between queries and "
               "keys, at the cost of more parameters and computation per head"), 2)])
def _general_factored(answer, hidden=False):
    hint = _general_factored.exercise.hint
    verify_function(
        _as_scores(answer, hint), reference=lambda w_a, d_k: w_a, inputs=_general_inputs(hidden),
        name="Exercise 4.4", hint=hint, atol=1e-6, rtol=1e-6,
        mistakes={
            "the singular values left out (w_q @ w_k.T is u vh, the directions without their sizes)":
                (_as_scores(_factors_made_like(singular="none")),
                 "w_a = u diag(s) vh: the singular values must end up in the product, split between "
                 "the two factors, for instance sqrt(s) on each"),
            "the singular values given to both factors (the product has s squared)":
                (_as_scores(_factors_made_like(singular="both")),
                 "each singular value may enter the product once: give it to one factor, or its "
                 "square root to each"),
            "the queries' and the keys' factors swapped (the product is w_a transposed)":
                (_as_scores(_factors_made_like(swap=True)),
                 "the query side is on the left of the score, x_i w_a x_j^T: w_q comes from u, the "
                 "left singular vectors, and w_k from the rows of vh"),
        })
