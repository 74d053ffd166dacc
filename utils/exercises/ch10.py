"""Chapter 10's exercises (lab: find the bug): the references of the five repaired components, the
inputs they are checked on, and the planted bugs and other slips the checks name.

Each exercise is a ``fix``: the learner repairs a buggy function of the lab in place, and the check
compares the repaired function with a reference on its own. The course package holds correct versions
of some of these components (``utils.attention.causal_mask``, its ``scaled_dot_product_attention``,
``MultiHeadAttention._split``), and PyTorch holds the references the lab's text compares with
(``F.scaled_dot_product_attention``, ``F.layer_norm``): a lab asks for the given code repaired, so
while the learner's function runs each of those is refused, and so is an answer that *is* one of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

import utils.attention
import utils.efficient
from utils.checks import MISTAKES, CheckFailed, verify_function
from utils.exercises import Question, exercise
from utils.exercises.common import refuse_as_is

# The slip planted in each component of the lab. A check never names it: run on the lab as handed out,
# a check says which test fails and how (the input, what differs), not which bug it is or how to fix it;
# finding that is the lab. A different wrong repair is still named.
# So no check's mistakes hold these (tests/test_exercise_mistakes.py runs each planted bug).
PLANTED = {"10.1": MISTAKES["causal_off_by_one"], "10.2": MISTAKES["mask_after_softmax"],
           "10.3": MISTAKES["heads_order"], "10.4": MISTAKES["unbiased_variance"],
           "10.5": MISTAKES["missing_residual"]}


def _randn(generator: torch.Generator) -> Callable[..., torch.Tensor]:
    """torch.randn drawing from ``generator`` (the learner's global random state stays untouched)."""
    return lambda *shape: torch.randn(*shape, generator=generator)


def _lab_part(answer: Any, name: str, exercise: str) -> Any:
    """The lab's function ``name`` as the learner's notebook defines it now.

    Three of the lab's checks are given the model class, ``LabTransformer``, so that the check cell does
    not name the suspect; the function is read from the namespace the class's code runs in (the
    notebook's), where the learner's repair replaced it. Given a function, the check takes it as it is.
    """
    sibling = getattr(type(answer), "course_remote_sibling", None)
    if sibling is not None:  # the notebook runs in a grader's sandbox (classroom.isolated)
        part = sibling(answer, name, exercise)
        if getattr(part, "__module__", None) == __name__:
            raise CheckFailed(f"{exercise}: your {name} is the check's own reference code from "
                              f"{__name__}; repair the lab's function instead")
        return part
    if not isinstance(answer, type):
        return answer
    namespace = getattr(answer.__init__, "__globals__", {})
    if not callable(namespace.get(name)):
        raise CheckFailed(f"{exercise}: expected the lab's model class, LabTransformer, from the "
                          f"notebook that defines the model's parts; got {answer.__name__}")
    part = namespace[name]
    if getattr(part, "__module__", None) == __name__:  # what check() refuses in a function it is given
        raise CheckFailed(f"{exercise}: your {name} is the check's own reference code from {__name__}; "
                          "repair the lab's function instead")
    return part


# ---------------------------------------------------------------------------------------------------
# 10.1 The causal mask
# ---------------------------------------------------------------------------------------------------
def _causal_mask(t: int, device: torch.device | str | None = None) -> torch.Tensor:
    position = torch.arange(t, device=device)
    return position[:, None] >= position[None, :]  # (T, T): query i sees key j when j <= i


def _mask_made_like(diagonal: int = 0, transposed: bool = False, inverted: bool = False) -> Callable:
    """A causal mask with one slip: ``tril(diagonal)``, then transposed and/or inverted."""
    def mask(t: int, device: torch.device | str | None = None) -> torch.Tensor:
        kept = torch.ones(t, t, dtype=torch.bool, device=device).tril(diagonal)  # (T, T)
        kept = kept.T if transposed else kept
        return ~kept if inverted else kept
    return mask


def _mask_inputs(hidden: bool) -> list[tuple[Any, ...]]:
    if hidden:  # longer masks, and the device argument that the decoder passes
        return [(3, "cpu"), (8, torch.device("cpu")), (16,)]
    return [(5,), (2,), (1,)]  # length 1 last: there several slips give the same mask


_MASK_ROUTES = [(utils.attention, "causal_mask")]


@exercise("10.1", "A decoder that peeks", "Medium", 15, kind="fix",
          hint="print the mask for a length of 4 and read row i: query i may see itself "
               "and every earlier key, and nothing after it; True means 'may attend'",
          questions=[Question(
              "How can such a leak make a model look better under teacher forcing than it is, and why "
              "did it not do so in the lab's short run?",
              ("tril(diagonal=1) keeps one diagonal too many: query i may see key i + 1",
               "in the decoder, input i + 1 is the label of position i: a model that learns to read "
               "it scores well under teacher forcing and fails when it decodes, where the last "
               "position has no i + 1",
               "using a path takes training: after one short epoch with four other bugs the model had "
               "not learned to (random later inputs hardly changed its accuracy); the leak test shows "
               "that a model can peek, the random-input test that it does"), 2)])
def _check_subsequent_mask(answer, hidden=False):
    answer = _lab_part(answer, "subsequent_mask", "Exercise 10.1")
    refuse_as_is(answer, _MASK_ROUTES, "Exercise 10.1",
                 why="not the lab's code repaired; fix the slip in the lab's own function, in place")
    verify_function(
        answer, reference=_causal_mask, inputs=_mask_inputs(hidden), name="Exercise 10.1",
        hint=_check_subsequent_mask.exercise.hint, forbidden=_MASK_ROUTES,
        mistakes={
            "a causal mask that also hides the diagonal (token i may see itself: j <= i, not j < i)": (
                _mask_made_like(diagonal=-1),
                "keep the main diagonal: a query may attend to its own position"),
            MISTAKES["mask_transposed"]: (
                _mask_made_like(transposed=True),
                "row i belongs to query i; its True entries must be the keys j <= i, at the left"),
            MISTAKES["mask_inverted"]: (
                _mask_made_like(inverted=True),
                "True marks the keys a query may see, False the ones it may not"),
        })


# ---------------------------------------------------------------------------------------------------
# 10.2 The attention function
# ---------------------------------------------------------------------------------------------------
def _attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
               mask: torch.Tensor | None = None) -> torch.Tensor:
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # (..., T_q, d_v)


def _attention_made_like(scaled: bool = True, axis: int = -1, mask_first: bool = True,
                         fill: float = float("-inf"), inverted: bool = False) -> Callable:
    """Attention with one slip (all defaults: the correct one)."""
    def attend(q, k, v, mask=None):
        scores = q @ k.transpose(-2, -1) / (math.sqrt(q.shape[-1]) if scaled else 1.0)  # (..., T_q, T_k)
        hide = None if mask is None else (mask if inverted else ~mask)
        if hide is not None and mask_first:
            scores = scores.masked_fill(hide, fill)
        weights = torch.softmax(scores, dim=axis)  # (..., T_q, T_k)
        if hide is not None and not mask_first:
            weights = weights.masked_fill(hide, 0.0)
        return weights @ v  # (..., T_q, T_k) @ (..., T_k, d_v) -> (..., T_q, d_v)
    return attend


def _attention_inputs(hidden: bool) -> list[tuple[torch.Tensor | None, ...]]:
    randn = _randn(torch.Generator().manual_seed(110 if hidden else 10))
    if hidden:  # no head axis; keys the mask hides scoring highest; a saturated softmax; one key
        q, k, v = randn(3, 4, 6), randn(3, 7, 6), randn(3, 7, 5)  # (B, T_q, D), (B, T_k, D)
        k[:, -2:] = 3 * q.mean(dim=1, keepdim=True)  # the two hidden keys score high
        padding = torch.arange(7) < torch.tensor([[5], [5], [7]])  # (B, T_k): 5, 5, 7 real keys
        causal = torch.ones(4, 4, dtype=torch.bool).tril()  # (T_q, T_q)
        return [(q, k, v, padding[:, None, :]), (10 * q, 10 * q, q, causal),
                (q, k[:, :1], v[:, :1], None)]
    q, k, v = randn(2, 3, 5, 8), randn(2, 3, 6, 8), randn(2, 3, 6, 4)  # (B, H, T, D)
    padding = torch.tensor([[True] * 6, [True] * 4 + [False] * 2])  # (B, T_k)
    causal = torch.ones(5, 5, dtype=torch.bool).tril()  # (T_q, T_q)
    return [(q, k, v, padding[:, None, None, :]), (q, q, q, causal), (2 * q, k, v, None)]


_ATTENTION_ROUTES = [(F, "scaled_dot_product_attention"),
                     (utils.attention, "scaled_dot_product_attention"),
                     (utils.efficient, "fused_attention")]


@exercise("10.2", "Weights that do not add up", "Medium", 15, kind="fix",
          hint="the test hides some keys (padding, a causal mask) and compares your outputs with "
               "PyTorch's attention: a hidden key must get weight exactly zero, and the weights of "
               "the keys a query may see must sum to one; print one query's weights for a small "
               "masked input and check both")
def _check_attend(answer, hidden=False):
    answer = _lab_part(answer, "attend", "Exercise 10.2")
    refuse_as_is(answer, _ATTENTION_ROUTES, "Exercise 10.2",
                 why="not the lab's code repaired; fix the slip in the lab's own function, in place")
    verify_function(
        answer, reference=_attention, inputs=_attention_inputs(hidden), name="Exercise 10.2",
        hint=_check_attend.exercise.hint, forbidden=_ATTENTION_ROUTES,
        mistakes={
            "hidden keys given the score 0 rather than -inf (exp(0) = 1: they still get weight)": (
                _attention_made_like(fill=0.0),
                "a hidden key must end with weight exactly zero, and only exp(-inf) is zero"),
            MISTAKES["mask_inverted"]: (
                _attention_made_like(inverted=True),
                "the mask is True where a query may attend: hide the keys where it is False, ~mask"),
            MISTAKES["unscaled"]: (
                _attention_made_like(scaled=False),
                "divide the scores by sqrt(d_k), the size of the last axis of q"),
            MISTAKES["softmax_axis"]: (
                _attention_made_like(axis=-2),
                "the scores are (..., T_q, T_k): the keys run along the last axis"),
        })


# ---------------------------------------------------------------------------------------------------
# 10.3 The split into heads
# ---------------------------------------------------------------------------------------------------
def _split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    return torch.stack(x.chunk(num_heads, dim=-1), dim=1)  # H feature groups of (B, T, D) -> (B, H, T, D)


def _heads_not_moved(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    b, t, c = x.shape
    return x.reshape(b, t, num_heads, c // num_heads)  # (B, T, H, D), the head axis still third


def _heads_dealt_in_turn(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    b, t, c = x.shape
    return x.reshape(b, t, c // num_heads, num_heads).permute(0, 3, 1, 2)  # head h: h, h + H, ...


def _split_inputs(hidden: bool) -> list[tuple[torch.Tensor, int]]:
    randn = _randn(torch.Generator().manual_seed(111 if hidden else 11))
    if hidden:  # other sizes, one token, one head, heads of one feature
        return [(randn(2, 7, 6), 3), (randn(1, 1, 8), 2), (randn(4, 3, 16), 8), (randn(2, 6, 5), 1),
                (randn(3, 5, 4), 4)]
    return [(torch.arange(12.0).view(1, 3, 4), 2), (randn(2, 5, 12), 3), (randn(3, 4, 8), 4)]


_SPLIT_ROUTES = [(utils.attention.MultiHeadAttention, "_split")]


@exercise("10.3", "Heads that read the wrong numbers", "Medium", 15, kind="fix",
          hint="the test splits torch.arange(12.0).view(1, 3, 4) into two heads, and random "
               "inputs into more: head h of token t must receive that token's features h*D to "
               "(h+1)*D - 1; print the split of the arange input and read which numbers each head "
               "received",
          questions=[Question(
              "Split torch.arange(12.0).view(1, 3, 4) into two heads with the buggy split_heads: is "
              "what each head receives what the docstring promises?",
              ("no: x.view(b, num_heads, t, d) has the right shape but cuts the sequence, not each "
               "token's features, into H pieces",
               "a head receives whole tokens folded into rows of D numbers, some from later "
               "positions: positions mix, one more leak from the future",
               "the features of each token must first be cut into heads, (B, T, H, D), and only then "
               "may the head axis move in front of the tokens"), 2)])
def _check_split_heads(answer, hidden=False):
    refuse_as_is(answer, _SPLIT_ROUTES, "Exercise 10.3",
                 why="not the lab's code repaired; fix the slip in the lab's own function, in place")
    verify_function(
        answer, reference=_split_heads, inputs=_split_inputs(hidden), name="Exercise 10.3",
        hint=_check_split_heads.exercise.hint, forbidden=_SPLIT_ROUTES,
        mistakes={
            "the head axis left after the token axis, (B, T, H, D)": (
                _heads_not_moved,
                "the cut is right; now move the head axis in front of the tokens, transpose(1, 2)"),
            "features dealt out to the heads in turn (head h gets features h, h + H, ...; it must "
            "get the block h*D to (h+1)*D - 1)": (
                _heads_dealt_in_turn,
                "in (B, T, H, D) the head axis comes before the feature axis D, so that each head "
                "gets D neighbouring features"),
        })


# ---------------------------------------------------------------------------------------------------
# 10.4 Layer norm
# ---------------------------------------------------------------------------------------------------
def _layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                eps: float = 1e-5) -> torch.Tensor:
    return F.layer_norm(x, x.shape[-1:], weight, bias, eps)  # (..., C)


def _norm_made_like(unbiased: bool = False, eps_inside: bool = True, per_token: bool = True) -> Callable:
    """Layer norm with one slip (all defaults: the correct one)."""
    def layer_norm(x, weight, bias, eps=1e-5):
        dims = -1 if per_token else tuple(range(x.dim()))
        mean = x.mean(dim=dims, keepdim=True)  # (..., 1)
        var = x.var(dim=dims, keepdim=True, unbiased=unbiased)  # (..., 1)
        spread = torch.sqrt(var + eps) if eps_inside else torch.sqrt(var) + eps
        return weight * (x - mean) / spread + bias  # (..., C)
    return layer_norm


def _norm_inputs(hidden: bool) -> list[tuple[Any, ...]]:
    generator = torch.Generator().manual_seed(112 if hidden else 12)
    randn = _randn(generator)
    if hidden:  # two features; another eps; tokens nearly constant, with a gain and a shift
        return [(randn(4, 6, 2), randn(2), randn(2)),
                (randn(3, 16) + 10, randn(16), randn(16), 1e-2),
                (3e-3 * randn(2, 3, 6), randn(6), randn(6))]
    # the last: tokens whose features are nearly equal (a variance below eps), where eps matters
    return [(randn(2, 3, 4), torch.ones(4), torch.zeros(4)),
            (3 * randn(5, 8) + 1, torch.rand(8, generator=generator), randn(8)),
            (1e-3 * randn(4, 8), torch.ones(8), torch.zeros(8))]


_NORM_ROUTES = [(F, "layer_norm"), (torch, "layer_norm"), (torch, "native_layer_norm")]


@exercise("10.4", "A normalisation slightly off", "Easy", 10, kind="fix",
          hint="the test compares your function with F.layer_norm on random tokens, some of "
               "them with nearly equal features; print both for one token of four features and "
               "see whether they differ by the same factor everywhere",
          questions=[Question(
              "Why does this bug hurt the model much less than the others?",
              ("Tensor.var divides by d_model - 1 by default (the unbiased estimate); layer norm "
               "divides by d_model",
               "so every output is scaled by the same factor sqrt((d_model - 1) / d_model), about "
               "0.992 for d_model = 64",
               "the learned gain gamma absorbs a constant factor, so the model trains almost as well; "
               "only its outputs differ from other implementations"), 2)])
def _check_layer_norm(answer, hidden=False):
    refuse_as_is(answer, _NORM_ROUTES, "Exercise 10.4",
                 why="not the lab's code repaired; fix the slip in the lab's own function, in place")
    verify_function(
        answer, reference=_layer_norm, inputs=_norm_inputs(hidden), name="Exercise 10.4",
        hint=_check_layer_norm.exercise.hint, forbidden=_NORM_ROUTES,
        mistakes={
            "eps added outside the square root, sqrt(var) + eps": (
                _norm_made_like(eps_inside=False),
                "eps belongs under the root, sqrt(var + eps); it matters for a token whose "
                "features are nearly equal"),
            "the mean and variance taken over the whole tensor (each token has its own, over its "
            "C features)": (
                _norm_made_like(per_token=False),
                "reduce over the last axis only, dim=-1, with keepdim=True"),
        })


# ---------------------------------------------------------------------------------------------------
# 10.5 The residual connection
# ---------------------------------------------------------------------------------------------------
def _add_and_norm(x: torch.Tensor, sublayer_output: torch.Tensor, norm: nn.Module) -> torch.Tensor:
    return norm(x + sublayer_output)  # LayerNorm(x + Sublayer(x)), (B, T, C)


def _norm_of_output_only(x, sublayer_output, norm):
    return x + norm(sublayer_output)


def _no_norm(x, sublayer_output, norm):
    return x + sublayer_output


def _affine_layer_norm(d_model: int, randn: Callable[..., torch.Tensor]) -> nn.LayerNorm:
    """A LayerNorm whose gain and shift are not 1 and 0."""
    norm = nn.LayerNorm(d_model)
    with torch.no_grad():
        norm.weight.copy_(randn(d_model))
        norm.bias.copy_(randn(d_model))
    return norm


def _residual_inputs(hidden: bool) -> list[tuple[Any, ...]]:
    randn = _randn(torch.Generator().manual_seed(113 if hidden else 10))
    if hidden:  # other sizes, a norm with its own gain and shift, a sublayer output that is not zero
        x = randn(3, 4, 16)  # (B, T, C)
        return [(x, randn(3, 4, 16), _affine_layer_norm(16, randn)), (x, randn(3, 4, 16), nn.Identity()),
                (randn(1, 1, 4), randn(1, 1, 4), nn.LayerNorm(4, elementwise_affine=False))]
    x = randn(2, 5, 8)  # (B, T, C)
    return [(x, randn(2, 5, 8), nn.LayerNorm(8)), (x, torch.zeros_like(x), nn.Identity())]


@exercise("10.5", "A block that forgets its input", "Medium", 15, kind="fix",
          hint="the test gives the wrapper a sublayer output of zeros and a norm that does "
               "nothing (nn.Identity), where it must give back its input x, then a real "
               "LayerNorm; print what yours returns in that first case")
def _check_sublayer_connection(answer, hidden=False):
    answer = _lab_part(answer, "sublayer_connection", "Exercise 10.5")
    verify_function(
        answer, reference=_add_and_norm, inputs=_residual_inputs(hidden), name="Exercise 10.5",
        hint=_check_sublayer_connection.exercise.hint,
        mistakes={
            "the norm applied to the sublayer's output only, x + LayerNorm(Sublayer(x)) (post-norm "
            "normalises the sum)": (
                _norm_of_output_only,
                "in the paper's post-norm order the sum is normalised: Add first, then Norm"),
            "the norm left out, x + Sublayer(x)": (
                _no_norm, "after the Add comes the Norm: pass the sum through norm"),
        })
