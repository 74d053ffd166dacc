"""Chapter 6's exercises (positional encoding): their checks, references and named mistakes.

Shapes: T positions, C = d_model features, D head size, H heads, K offsets.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch

import utils.positional
from utils.attention import causal_mask
from utils.checks import MISTAKES, verify_function, verify_prediction
from utils.exercises import Question, exercise
from utils.exercises.common import refuse_non_int, refuse_python_loops
from utils.positional import apply_rotary, frequencies, sinusoidal_encoding


def _randn(seed: int) -> Callable[..., torch.Tensor]:
    """torch.randn drawing from its own generator (the learner's random state stays untouched)."""
    generator = torch.Generator().manual_seed(seed)
    return lambda *shape, **options: torch.randn(*shape, generator=generator, **options)


# ---------------------------------------------------------------------------------------------------
# 6.1 Read the offset back
# ---------------------------------------------------------------------------------------------------
def _encoding_at(pos: int, d_model: int, base: float = 10000.0) -> torch.Tensor:
    """(C,) float32: PE(pos), the row of the package's table."""
    return sinusoidal_encoding(pos + 1, d_model, base)[pos]


def _offset_made_like(pair: int = -1, swapped: bool = False, wrapped: bool = True,
                      rounded: bool = True) -> Callable:
    """A model answer: the turn of one pair (the slowest, -1) from a to b, divided by its frequency."""
    def offset(a: torch.Tensor, b: torch.Tensor, base: float = 10000.0) -> int | float:
        def angle(e: torch.Tensor) -> torch.Tensor:                    # (C/2,) angle of each pair
            sin, cos = e[0::2].double(), e[1::2].double()
            return torch.atan2(cos, sin) if swapped else torch.atan2(sin, cos)
        turn = angle(b)[pair] - angle(a)[pair]
        if wrapped:                                                    # into (-pi, pi]
            turn = turn - 2 * math.pi * torch.round(turn / (2 * math.pi))
        k = float(turn / frequencies(a.shape[-1], base)[pair])
        return round(k) if rounded else k
    return offset


def _offset_inputs(hidden: bool) -> list[tuple]:
    # the slowest pair of C = 64 sits at the angle pi near position 23 559: a pair of positions around it
    # tells a wrapped difference from a plain one
    cases = ([(0, 9, 16, 10000.0), (40_000, 40_003, 64, 10000.0), (250, 10, 4, 10000.0),
              (7, 7, 32, 10000.0), (31, 90, 8, 100.0)] if hidden else
             [(3, 10, 64, 10000.0), (100, 40, 64, 10000.0), (1234, 5678, 64, 10000.0),
              (23_555, 23_565, 64, 10000.0), (5, 5, 16, 10000.0)])
    return [(_encoding_at(p, d, base), _encoding_at(q, d, base), base) for p, q, d, base in cases]


# no route to the sines, so no encoding vectors (the package's table is built with torch.sin)
_SINES = [(torch, "sin"), (torch.Tensor, "sin"), (torch.Tensor, "sin_"), (math, "sin"), (np, "sin"),
          (utils.positional, "sinusoidal_encoding")]


@exercise("6.1", "Read the offset back", "Medium", 15,
          hint="each pair (sin, cos) is a point on a circle at the angle pos * w_i; the angle of "
               "a pair is atan2(sin, cos), with the sine first. From a to b every pair turns by "
               "k * w_i: use the slowest pair, which turns by less than half a circle for any "
               "offset here, bring the turn into (-pi, pi] and divide by its frequency",
          questions=[Question(
              "Why does the slowest pair give the offset where the fastest cannot, and could the "
              "dot product PE(a) . PE(b) of the chapter tell you the offset instead?",
              ("the fastest pair (w_0 = 1) turns by k radians and comes back to the same point every "
               "2 pi, about 6.3 positions: it knows k only up to a multiple of 2 pi",
               "the slowest pair turns so slowly that its turn stays below half a circle for offsets "
               "up to pi / w_last (about 23 600 positions for d_model = 64)",
               "the dot product depends on cos(k w_i) only, the same for k and -k: it cannot tell "
               "which position comes first, while the angles can"), 2)])
def _read_offset(answer, hidden=False):
    inputs = _offset_inputs(hidden)
    verify_function(
        answer, reference=_offset_made_like(), inputs=inputs, name="Exercise 6.1",
        hint=_read_offset.exercise.hint, forbidden=_SINES + [(utils.positional,
                                                               "relative_shift_matrix")],
        mistakes={
            "sine and cosine swapped in atan2 (the angle is atan2(sin, cos)), which turns every "
            "offset around": (_offset_made_like(swapped=True),
                              "the even features hold the sines: atan2(e[0::2], e[1::2])"),
            "the fastest pair used (w_0 = 1): it comes back to the same point every 2 pi "
            "positions": (_offset_made_like(pair=0),
                          "use the slowest pair, the last one: its turn never wraps here"),
            "the turn not brought into (-pi, pi] (an angle just past pi reads as one near -pi)":
                (_offset_made_like(wrapped=False),
                 "subtract the nearest multiple of 2 pi from the difference of the angles"),
        })
    refuse_non_int(answer, inputs[0], "Exercise 6.1")


# ---------------------------------------------------------------------------------------------------
# 6.2 Positions in a packed batch
# ---------------------------------------------------------------------------------------------------
def _packed_made_like(first: int = 0, restart: bool = True, count_documents: bool = False) -> Callable:
    """A model answer: each token's position inside its own document (or a slip of it)."""
    def positions(doc_ids: torch.Tensor) -> torch.Tensor:
        step = torch.arange(doc_ids.shape[-1]).expand_as(doc_ids)            # (B, T)
        starts = torch.ones_like(doc_ids, dtype=torch.bool)
        starts[:, 1:] = doc_ids[:, 1:] != doc_ids[:, :-1]                    # a new document
        if count_documents:
            return starts.long().cumsum(dim=1) - 1
        if not restart:
            return step + first
        begun = torch.where(starts, step, torch.zeros_like(step)).cummax(dim=1).values
        return step - begun + first                                          # (B, T)
    return positions


def _packed_inputs(hidden: bool) -> list[tuple[torch.Tensor]]:
    def rows(*lengths_per_row: list[int], first_id: int = 0) -> torch.Tensor:
        return torch.tensor([[first_id + d for d, n in enumerate(lengths) for _ in range(n)]
                             for lengths in lengths_per_row])
    if hidden:  # one document per row; every token its own document; ids far from 0; one token
        return [(rows([6], [6]),), (rows([1, 1, 1, 1]),), (rows([2, 5, 1], [3, 3, 2], first_id=40),),
                (rows([1]),)]
    return [(rows([3, 4, 2], [5, 4]),), (rows([2, 2, 2, 2, 1], [9]),),
            (rows([4, 1, 3], [1, 7], first_id=7),)]


@exercise("6.2", "Positions in a packed batch", "Medium", 15,
          hint="a document starts where its id differs from the id just before it; keep, for every "
               "token, the index of the latest start so far (torch.cummax along the row), and "
               "subtract it from the token's own index",
          questions=[Question(
              "What goes wrong if a packed row is given the plain positions 0 to T - 1, and what "
              "else must packing change besides the positions?",
              ("every document but the first starts at a position other than 0, so the same "
               "sentence gets other encodings depending on where it was packed, and the model "
               "meets starting positions it never sees with single sentences",
               "attention must not cross from one document into another either: the attention "
               "mask of a packed row is block-diagonal (block-causal in a decoder), one block per "
               "document"), 2)])
def _packed_positions(answer, hidden=False):
    verify_function(
        answer, reference=_packed_made_like(), inputs=_packed_inputs(hidden), name="Exercise 6.2",
        hint=_packed_positions.exercise.hint,
        mistakes={
            "the plain positions 0 to T - 1 of the row, not restarted at each document": (
                _packed_made_like(restart=False),
                "a document's first token has position 0, wherever it sits in the row"),
            "positions counted from 1 (a document's first token has position 0)": (
                _packed_made_like(first=1), "subtract the index of the document's first token "
                                            "itself: its own position is 0"),
            "the document's number within the row, not the token's position within its document": (
                _packed_made_like(count_documents=True),
                "count tokens since the document began, not documents since the row began"),
        })
    refuse_python_loops(  # every size a loop could run over grows
        answer, (torch.tensor([[0, 0, 1], [0, 1, 1]]),),
        (torch.arange(12).repeat_interleave(2)[None].expand(12, 24).contiguous(),),
        name="Exercise 6.2", sizes=("doc_ids of shape (2, 3)", "(12, 24)"), threshold=4,
        hint="compare each id with its left neighbour in one operation, then let torch.cummax "
             "carry the latest start along the row")


# ---------------------------------------------------------------------------------------------------
# 6.3 Rotary embedding with split halves
# ---------------------------------------------------------------------------------------------------
def _rope_by_interleaving(x: torch.Tensor) -> torch.Tensor:
    """Put each pair (i, i + D/2) side by side, rotate with the package's apply_rotary, reorder back."""
    d = x.shape[-1]
    order = torch.arange(d).view(2, d // 2).T.flatten()  # 0, D/2, 1, D/2 + 1, ...
    out = torch.empty_like(x)
    out[..., order] = apply_rotary(x[..., order])
    return out


def _rope_halves_made_like(sign: float = 1.0, exponent: float = 2.0, first: int = 0) -> Callable:
    """A model answer: pair (i, i + D/2) at position pos turned by sign * (pos + first) * w_i, with
    w_i = 10000^(-exponent * i / D)."""
    def rotate(x: torch.Tensor) -> torch.Tensor:
        t, d = x.shape[-2], x.shape[-1]
        rates = 10000.0 ** (-exponent * torch.arange(d // 2, dtype=torch.float64) / d)  # (D/2,)
        theta = sign * torch.arange(first, first + t, dtype=torch.float64)[:, None] * rates
        cos, sin = torch.cos(theta).to(x.dtype), torch.sin(theta).to(x.dtype)  # (T, D/2)
        one, two = x[..., : d // 2], x[..., d // 2:]
        return torch.cat([one * cos - two * sin, one * sin + two * cos], dim=-1)
    return rotate


def _rope_inputs(hidden: bool) -> list[tuple[torch.Tensor]]:
    randn = _randn(106 if hidden else 6)
    if hidden:  # one position, one pair, a long sequence, and double precision
        return [(randn(1, 2),), (randn(2, 2, 9, 2),), (randn(3, 60, 32),),
                (randn(4, 6, dtype=torch.float64),)]
    return [(randn(5, 4),), (randn(2, 3, 7, 8),), (randn(1, 12, 16),)]


@exercise("6.3", "Rotary embedding with split halves", "Medium", 20,
          hint="it is the same rotation as in the chapter, only the partners differ: the "
               "first half of the features holds the first member of every pair and the "
               "second half the other, and pair i turns at the frequency of pair i in the "
               "interleaved layout")
def _rope_rotate_halves(answer, hidden=False):
    verify_function(
        answer, reference=_rope_by_interleaving, inputs=_rope_inputs(hidden), name="Exercise 6.3",
        hint=_rope_rotate_halves.exercise.hint,
        mistakes={
            "neighbouring features paired (2i with 2i + 1) as in the chapter, not i with i + D/2":
                (apply_rotary, "here feature i's partner is feature i + D/2: take the first and "
                 "the second half of the features, not the even and the odd ones"),
            "the pairs turned the wrong way (by -theta: the sign of sin flipped)":
                (_rope_halves_made_like(sign=-1.0), "the first member becomes x_i cos - x_(i+D/2) "
                 "sin, the second x_i sin + x_(i+D/2) cos"),
            "a frequency with i in the exponent where the formula has 2i (10000^(-i / D))":
                (_rope_halves_made_like(exponent=1.0), "theta = pos / 10000^(2i/D)"),
            "positions counted from 1 (the first position must stay as it is)":
                (_rope_halves_made_like(first=1), "count the positions from 0: torch.arange(T)"),
        })


# ---------------------------------------------------------------------------------------------------
# 6.4 ALiBi: positions as a penalty on the scores
# ---------------------------------------------------------------------------------------------------
def _alibi_model(t: int, num_heads: int, sign: float = -1.0, first_head: int = 1,
                 hide: Callable[[int], torch.Tensor] | None = None,
                 reverse: bool = False) -> torch.Tensor:
    """(H, T, T) bias sign * m_h * (i - j), m_h = 2^(-8 (h + first_head) / H), and -inf where
    ``hide(T)`` is True (by default at the keys after the query)."""
    slopes = torch.tensor([2.0 ** (-8.0 * (h + first_head) / num_heads) for h in range(num_heads)])
    slopes = slopes.flip(0) if reverse else slopes
    distance = torch.tensor([[float(i - j) for j in range(t)] for i in range(t)])  # (T, T)
    hidden = hide(t) if hide is not None else ~causal_mask(t)
    return (sign * slopes[:, None, None] * distance).masked_fill(hidden, float("-inf"))


def _alibi_hiding(hide: Callable[[int], torch.Tensor]) -> Callable:
    return lambda t, num_heads: _alibi_model(t, num_heads, hide=hide)


@exercise("6.4", "ALiBi: positions as a penalty on the scores", "Medium", 15,
          hint="the bias of a (query, key) pair depends only on how far back the key lies: "
               "zero on the diagonal, more negative the further back, with a different "
               "steepness per head, the steepest head first; the keys after the query must "
               "get a score the softmax turns into a weight of exactly zero")
def _alibi_bias(answer, hidden=False):
    inputs = [(1, 1), (7, 16), (3, 4), (10, 5)] if hidden else [(4, 2), (6, 8), (1, 3), (5, 1)]
    verify_function(
        answer, reference=_alibi_model, inputs=inputs, name="Exercise 6.4",
        hint=_alibi_bias.exercise.hint,
        mistakes={
            MISTAKES["causal_off_by_one"]: (_alibi_hiding(
                lambda s: torch.ones(s, s, dtype=torch.bool).triu(diagonal=2)),
                "-inf at every key j > i, the key just after the query included"),
            MISTAKES["mask_transposed"]: (_alibi_hiding(
                lambda s: torch.ones(s, s, dtype=torch.bool).tril(diagonal=-1)),
                "row i is the query, column j the key: -inf above the diagonal, where j > i"),
            MISTAKES["mask_inverted"]: (_alibi_hiding(causal_mask),
                                        "causal_mask(T) is True where the query may attend: fill "
                                        "-inf where it is False"),
            "no -inf at the keys after the query (the causal mask left out)": (
                _alibi_hiding(lambda s: torch.zeros(s, s, dtype=torch.bool)),
                "the same addition must also apply the causal mask: -inf where j > i"),
            "a bonus for distance (+m (i - j)) where ALiBi subtracts a penalty":
                (lambda t, n: _alibi_model(t, n, sign=1.0), "the farther back the key, the lower "
                 "its score: -m_h (i - j)"),
            "slopes counted from h = 0 (the first head's slope is 2^(-8 / H), not 1)":
                (lambda t, n: _alibi_model(t, n, first_head=0), "m_h = 2^(-8 (h + 1) / H): for "
                 "8 heads 1/2, 1/4, ..., 1/256"),
            "the slopes in reverse order (head 0 must be the steepest)":
                (lambda t, n: _alibi_model(t, n, reverse=True), "m_0 = 2^(-8 / H) is the largest "
                 "slope; each next head's is smaller"),
        })


# ---------------------------------------------------------------------------------------------------
# 6.5 Predict: how many pairs turn fully?
# ---------------------------------------------------------------------------------------------------
def _pairs_turning(limit: float) -> int:
    """The pairs of the chapter's table (d_model 64) whose angle at position 99 reaches ``limit``."""
    return int((99 * frequencies(64) >= limit).sum())


@exercise("6.5", "Predict: how many pairs turn fully?", "Easy", 10, kind="prediction",
          hint="a pair completes a turn once position times its frequency reaches 2 pi; the "
               "frequencies fall by the same factor from each pair to the next, so find the "
               "last pair whose wavelength, 2 pi over its frequency, is still at most 99 "
               "positions",
          questions=[Question(
              "Explain your prediction (written before the check ran): which pairs complete a "
              "full turn by position 99, and why?",
              ("pair m turns fully when 99 w_m >= 2 pi, that is when 10000^(2m/64) <= 99 / 2 pi, "
               "about 15.8",
               "taking log10: m/8 <= 1.2, so m <= 9.6: pairs 0 to 9, ten pairs (dimensions 0 to 19)",
               "in the heatmap, the fast stripes on the left; the slower pairs cover less than "
               "one period"), 2)])
def _predict_turns(answer, hidden=False):
    verify_prediction(
        answer, name="Exercise 6.5", form=int, measure=lambda: _pairs_turning(2 * math.pi),
        labels=("pairs of 32 that complete a full turn by position 99",),
        misconceptions={0: _turns_belief})


def _turns_belief(said: int) -> str:
    """What a wrong count reveals (called once the prediction is recorded and the count measured)."""
    if said == 2 * _pairs_turning(2 * math.pi):
        return ("the belief that every dimension is a pair of its own (dimensions counted, not "
                "pairs: each pair is two dimensions)")
    if said == _pairs_turning(1.0):
        return ("the belief that a pair's wavelength is 1 / w_i positions (a full turn is an angle "
                "of 2 pi, so the wavelength is 2 pi / w_i)")
    return ("the belief that the frequencies fall in equal steps (they fall by the same factor, "
            "10000^(2/64), from each pair to the next: count on a logarithmic scale)")
