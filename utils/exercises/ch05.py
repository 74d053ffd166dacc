"""Chapter 5's exercises (multi-head attention): their checks, references and named mistakes.

Shapes as in ``utils.attention``: B batch, H query heads, G key and value heads, T_q queries, T_k keys,
D head size, C = H * D = d_model.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from utils.attention import MultiHeadAttention, copy_from_torch_mha
from utils.checks import MISTAKES, verify_function
from utils.exercises import Question, exercise
from utils.exercises.common import refuse_as_is


def _randn(seed: int) -> Callable[..., torch.Tensor]:
    """torch.randn drawing from its own generator (the learner's random state stays untouched)."""
    generator = torch.Generator().manual_seed(seed)
    return lambda *shape: torch.randn(*shape, generator=generator)


# ---------------------------------------------------------------------------------------------------
# 5.1 What each head adds to the output
# ---------------------------------------------------------------------------------------------------
def _contributions_by_loop(heads: torch.Tensor, w_o: torch.Tensor) -> torch.Tensor:
    """Head h times its D consecutive rows of W_O, in a loop: (B, H, T, D), (H * D, C) -> (B, H, T, C)."""
    rows = w_o.split(heads.shape[-1])  # H blocks of (D, C)
    return torch.stack([head @ block for head, block in zip(heads.unbind(dim=1), rows, strict=True)],
                       dim=1)


def _contributions_interleaved(heads: torch.Tensor, w_o: torch.Tensor) -> torch.Tensor:
    """The mistake: W_O's rows dealt out to the heads in turn (h, h + H, ...)."""
    num_heads, d = heads.shape[1], heads.shape[-1]
    return heads @ w_o.view(d, num_heads, w_o.shape[-1]).transpose(0, 1)  # (H, D, C)


def _contributions_first_block(heads: torch.Tensor, w_o: torch.Tensor) -> torch.Tensor:
    """The mistake: every head multiplied by the first block of D rows."""
    return heads @ w_o[: heads.shape[-1]]


def _contribution_inputs(hidden: bool) -> list[tuple[torch.Tensor, torch.Tensor]]:
    randn = _randn(104 if hidden else 4)
    shapes = ([(2, 8, 3, 1, 5), (1, 3, 1, 5, 7), (2, 6, 4, 2, 12)] if hidden else
              [(2, 2, 5, 4, 8), (1, 4, 3, 3, 6), (3, 1, 4, 6, 5)])  # (B, H, T, D, C)
    return [(randn(b, h, t, d), randn(h * d, c)) for b, h, t, d, c in shapes]


@exercise("5.1", "What each head adds to the output", "Medium", 15,
          hint="the features of head h occupy D consecutive places of the concatenation, so "
               "only D consecutive rows of W_O ever multiply them. Regroup the rows of W_O "
               "by head; one batched product then gives every head's contribution at once")
def _head_contributions(answer, hidden=False):
    verify_function(
        answer, reference=_contributions_by_loop, inputs=_contribution_inputs(hidden),
        name="Exercise 5.1", hint=_head_contributions.exercise.hint,
        mistakes={
            "W_O's rows dealt out to the heads in turn (row h, h + H, ...), not in blocks of D "
            "consecutive rows": (_contributions_interleaved,
                                 "head h's features sit at places hD to (h+1)D - 1 of the "
                                 "concatenation: view W_O as (H, D, C), heads first"),
            "every head multiplied by the first block of W_O (rows 0 to D - 1)":
                (_contributions_first_block, "each head has its own block of D rows: "
                 "W_O^(h) is rows hD to (h+1)D - 1"),
        })


# ---------------------------------------------------------------------------------------------------
# 5.2 How much do two heads agree?
# ---------------------------------------------------------------------------------------------------
def _overlap_by_distance(weights: torch.Tensor) -> torch.Tensor:
    """sum_j min(a_j, b_j) = 1 - |a - b|_1 / 2 for two rows that sum to 1: (B, H, T_q, T_k) -> (H, H)."""
    distance = (weights[:, :, None] - weights[:, None]).abs().sum(dim=-1)  # (B, H, H, T_q)
    return 1 - distance.mean(dim=(0, 3)) / 2


def _overlap_made_like(combine: Callable, over_keys: str = "sum") -> Callable:
    """A model answer: ``combine`` of every pair of heads' weights, then summed or averaged."""
    def overlap(weights: torch.Tensor) -> torch.Tensor:
        shared = combine(weights[:, :, None], weights[:, None])  # (B, H, H, T_q, T_k)
        if over_keys == "mean":
            return shared.mean(dim=(0, 3, 4))
        if over_keys == "queries":  # summed over the queries, averaged over the keys
            return shared.sum(dim=-2).mean(dim=(0, 3))
        return shared.sum(dim=-1).mean(dim=(0, 3))
    return overlap


def _overlap_inputs(hidden: bool) -> list[tuple[torch.Tensor]]:
    randn = _randn(105 if hidden else 5)
    if hidden:  # causal maps (exact zeros), one head, and saturated (nearly one-hot) softmaxes
        future = torch.ones(6, 6, dtype=torch.bool).triu(diagonal=1)
        causal = torch.softmax(randn(2, 3, 6, 6).masked_fill(future, float("-inf")), dim=-1)
        return [(causal,), (torch.softmax(randn(3, 1, 4, 5), dim=-1),),
                (torch.softmax(40 * randn(2, 4, 3, 3), dim=-1),)]
    one_hot_heads = torch.stack([torch.eye(4), torch.eye(4).roll(1, dims=-1), torch.eye(4)])
    return [(torch.softmax(randn(2, 3, 5, 5), dim=-1),), (one_hot_heads[None],),
            (torch.softmax(3 * randn(1, 4, 2, 7), dim=-1),)]


@exercise("5.2", "How much do two heads agree?", "Medium", 15,
          hint="at a single key two heads share the smaller of their two weights; add that "
               "over the keys of a query and average over the rest. Inserting a new axis in "
               "two different places lets broadcasting pair every head with every other "
               "head in one step")
def _head_overlap(answer, hidden=False):
    verify_function(
        answer, reference=_overlap_by_distance, inputs=_overlap_inputs(hidden), name="Exercise 5.2",
        hint=_head_overlap.exercise.hint,
        mistakes={
            "the product of the two weights, not the smaller of them":
                (_overlap_made_like(torch.mul), "the weight two heads share at a key is "
                 "min(alpha_g, alpha_h): torch.minimum, not a product"),
            "the shared weight averaged over the keys, not summed":
                (_overlap_made_like(torch.minimum, "mean"), "sum over the keys j, then average "
                 "over the examples and the queries only"),
            "the shared weight summed over the queries and averaged over the keys (the last two "
            "axes swapped)": (_overlap_made_like(torch.minimum, "queries"),
                              "the weights are (B, H, T_q, T_k): the keys are the last axis"),
        })


# ---------------------------------------------------------------------------------------------------
# 5.3 Fewer key and value heads
# ---------------------------------------------------------------------------------------------------
def _gqa_reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)


def _gqa_made_like(tiled: bool = False, scaled: bool = True, softmax_dim: int = -1) -> Callable:
    """A model answer: grouped-query attention with one mistake."""
    def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        group = q.shape[1] // k.shape[1]
        if tiled:  # query head h uses head h mod G
            k, v = k.repeat(1, group, 1, 1), v.repeat(1, group, 1, 1)
        else:
            k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        scores = q @ k.transpose(-2, -1) / (math.sqrt(q.shape[-1]) if scaled else 1.0)
        return torch.softmax(scores, dim=softmax_dim) @ v  # (B, H, T_q, D)
    return attend


def _gqa_inputs(hidden: bool) -> list[tuple[torch.Tensor, ...]]:
    randn = _randn(106 if hidden else 6)
    shapes = ([(1, 8, 2, 5, 1, 4), (3, 4, 1, 3, 4, 2), (2, 6, 5, 5, 2, 8)] if hidden else
              [(2, 4, 5, 6, 2, 8), (1, 6, 3, 7, 1, 4), (1, 6, 3, 3, 3, 4), (2, 3, 4, 4, 3, 4)])
    return [(randn(b, h, t_q, d), randn(b, g, t_k, d), randn(b, g, t_k, d))
            for b, h, t_q, t_k, g, d in shapes]  # (B, H, T_q, D), (B, G, T_k, D) twice


_FUSED_ATTENTION = [(F, "scaled_dot_product_attention")]


@exercise("5.3", "Fewer key and value heads", "Medium", 20,
          hint="give every query head its own copy of the key and value head of its group, "
               "so that both sides have H heads again; the groups are consecutive, so each "
               "shared head is copied H / G times in a row. After that it is ordinary "
               "multi-head attention, one softmax per head")
def _grouped_query_attention(answer, hidden=False):
    refuse_as_is(answer, _FUSED_ATTENTION, "Exercise 5.3")
    verify_function(
        answer, reference=_gqa_reference, inputs=_gqa_inputs(hidden), name="Exercise 5.3",
        hint=_grouped_query_attention.exercise.hint, forbidden=_FUSED_ATTENTION,
        mistakes={
            "the key and value heads tiled (query head h used head h mod G), not repeated for a "
            "group of consecutive query heads":
                (_gqa_made_like(tiled=True), "query head h belongs to group h // (H / G): "
                 "repeat each shared head H / G times in a row (repeat_interleave), do not tile"),
            MISTAKES["unscaled"]: (_gqa_made_like(scaled=False),
                                   "divide the scores by sqrt(D), the width of one head"),
            MISTAKES["softmax_axis"]: (_gqa_made_like(softmax_dim=-2),
                                       "the scores are (B, H, T_q, T_k): the keys are the last axis"),
        })


# ---------------------------------------------------------------------------------------------------
# 5.4 Reading PyTorch's weights
# ---------------------------------------------------------------------------------------------------
def _matrices_via_copy(layer: nn.MultiheadAttention, transpose: bool = True,
                       transpose_output: bool = True) -> tuple[torch.Tensor, ...]:
    """Copy the layer into the course's module and read its four (C, C) matrices."""
    ours = MultiHeadAttention(layer.embed_dim, layer.num_heads, bias=layer.in_proj_bias is not None)
    copy_from_torch_mha(ours, layer)
    weights = [linear.weight.detach() for linear in (ours.w_q, ours.w_k, ours.w_v, ours.w_o)]
    return (*(w.T if transpose else w for w in weights[:3]),
            weights[3].T if transpose and transpose_output else weights[3])


def _torch_layers(hidden: bool) -> list[tuple[nn.MultiheadAttention]]:
    sizes = ([(4, 1, True, False), (16, 8, False, True), (10, 5, True, True)] if hidden else
             [(8, 2, True, True), (6, 3, False, False), (12, 4, True, False)])
    with torch.random.fork_rng():
        torch.manual_seed(107 if hidden else 7)
        return [(nn.MultiheadAttention(c, h, bias=bias, batch_first=first),)
                for c, h, bias, first in sizes]


@exercise("5.4", "Reading PyTorch's weights", "Easy", 10,
          hint="PyTorch keeps the query, key and value matrices stacked in one parameter, "
               "in that order. Like nn.Linear it stores each as (out_features, in_features) "
               "and computes x times its transpose; this course multiplies a row vector by "
               "the matrix itself")
def _torch_mha_matrices(answer, hidden=False):
    verify_function(
        answer, reference=_matrices_via_copy, inputs=_torch_layers(hidden), name="Exercise 5.4",
        hint=_torch_mha_matrices.exercise.hint,
        mistakes={
            "PyTorch's (out_features, in_features) matrices returned as stored, not transposed":
                (lambda layer: _matrices_via_copy(layer, transpose=False),
                 "nn.Linear computes x W^T; the course computes x W, so return the transposes"),
            "W_O returned as stored (out_proj.weight is (out_features, in_features) too)":
                (lambda layer: _matrices_via_copy(layer, transpose_output=False),
                 "out_proj is an nn.Linear as well: transpose its weight like the other three"),
        })


# ---------------------------------------------------------------------------------------------------
# 5.5 Find the bugs: multi-head cross-attention
# ---------------------------------------------------------------------------------------------------
def _cross_attention_made_like(*, split_right: bool = True, merge_right: bool = True,
                               scale: str = "head", softmax_dim: int = -1) -> Callable:
    """A model answer: multi-head cross-attention, maybe with one step wrong."""
    def attend(query, memory, w_q, w_k, w_v, w_o, num_heads):
        b, t_q, c = query.shape
        d = c // num_heads

        def split(t: torch.Tensor) -> torch.Tensor:  # (B, T, C) -> (B, H, T, D)
            if split_right:
                return t.view(b, t.shape[1], num_heads, d).transpose(1, 2)
            return t.view(b, num_heads, t.shape[1], d)

        q, k, v = split(query @ w_q), split(memory @ w_k), split(memory @ w_v)
        divide = {"head": math.sqrt(d), "model": math.sqrt(c), "none": 1.0}[scale]
        out = torch.softmax(q @ k.transpose(-2, -1) / divide, dim=softmax_dim) @ v  # (B, H, T_q, D)
        if merge_right:
            out = out.transpose(1, 2)  # (B, T_q, H, D)
        return out.reshape(b, t_q, c) @ w_o
    return attend


def _mha_reference(query, memory, w_q, w_k, w_v, w_o, num_heads):
    """The course's MultiHeadAttention with the four matrices loaded."""
    layer = MultiHeadAttention(query.shape[-1], num_heads, bias=False)
    with torch.no_grad():
        for linear, w in ((layer.w_q, w_q), (layer.w_k, w_k), (layer.w_v, w_v), (layer.w_o, w_o)):
            linear.weight.copy_(w.T)
        return layer(query, memory, memory)[0]


def _cross_inputs(hidden: bool) -> list[tuple[Any, ...]]:
    randn = _randn(108 if hidden else 8)
    # (B, T_q, T_k, C, H, scale of the matrices): hidden adds one query, heads of width 1 and
    # sharper softmaxes
    shapes = ([(2, 1, 6, 8, 8, 1.0), (1, 5, 5, 12, 6, 1.0), (3, 4, 2, 16, 2, 3.0)] if hidden else
              [(2, 3, 5, 8, 2, 1.0), (1, 4, 2, 12, 3, 1.0), (2, 2, 3, 6, 1, 1.0)])
    return [(randn(b, t_q, c), randn(b, t_k, c),
             *(scale * randn(c, c) / math.sqrt(c) for _ in range(4)), h)
            for b, t_q, t_k, c, h, scale in shapes]


@exercise("5.5", "Find the bugs: multi-head cross-attention", "Medium", 15,
          hint="the projection's last axis holds the heads side by side, one block of D "
               "features after the other, for each token; split that axis, then move the "
               "head axis in front of the token axis. The merge must undo both steps in "
               "reverse order",
          questions=[Question(
              "Which mistakes did you find in the colleague's code, and why is each one wrong?",
              ("the split viewed the projection as (B, H, T, D) directly; it must be viewed as "
               "(B, T, H, D), the heads side by side in the last axis, then transposed",
               "the merge must move the heads back after the tokens, (B, H, T_q, D) -> "
               "(B, T_q, H, D), before the reshape to (B, T_q, C); fixing the split alone is "
               "still wrong",
               "the scaling by sqrt(D), the width of one head, was right"), 2)])
def _cross_attention(answer, hidden=False):
    verify_function(
        answer, reference=_mha_reference, inputs=_cross_inputs(hidden), name="Exercise 5.5",
        hint=_cross_attention.exercise.hint,
        mistakes={
            MISTAKES["heads_order"]: (
                _cross_attention_made_like(split_right=False, merge_right=False),
                "the colleague's code as it was: a view as (B, H, T, D) cuts each token's vector "
                "across several heads; view (B, T, H, D), transpose, and undo both in the merge"),
            "heads split in the right order but merged in the wrong one (move H back after T "
            "before the reshape)": (_cross_attention_made_like(merge_right=False),
                                    "the merge must undo the split: transpose (B, H, T_q, D) to "
                                    "(B, T_q, H, D) before the reshape"),
            "heads merged in the right order but split in the wrong one (view as (B, T, H, D), "
            "then move H before T)": (_cross_attention_made_like(split_right=False),
                                      "fix the split as well: view (B, T, H, D), then "
                                      "transpose(1, 2)"),
            "scores scaled by sqrt(d_model), not by sqrt(D), the width of one head":
                (_cross_attention_made_like(scale="model"), "each head compares vectors of D "
                 "features: divide by sqrt(D), as the colleague did"),
            MISTAKES["unscaled"]: (_cross_attention_made_like(scale="none"),
                                   "keep the division by sqrt(D): it was right"),
            MISTAKES["softmax_axis"]: (_cross_attention_made_like(softmax_dim=-2),
                                       "the scores are (B, H, T_q, T_k): the keys are the last axis"),
        })
