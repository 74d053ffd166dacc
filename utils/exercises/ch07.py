"""Chapter 7's exercises (the Transformer encoder): their checks, references and named mistakes.

Shapes: B batch, S positions, C = d_model features, F = d_ff hidden units of the feed-forward network.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from utils.attention import MultiHeadAttention
from utils.checks import MISTAKES, verify_function, verify_prediction
from utils.exercises import Question, exercise
from utils.exercises.common import built_with_seed
from utils.train import count_parameters
from utils.transformer import Encoder, EncoderLayer


def _randn(seed: int) -> Callable[..., torch.Tensor]:
    """torch.randn drawing from its own generator (the learner's random state stays untouched)."""
    generator = torch.Generator().manual_seed(seed)
    return lambda *shape: torch.randn(*shape, generator=generator)


# ---------------------------------------------------------------------------------------------------
# 7.1 Layer normalisation, channels first
# ---------------------------------------------------------------------------------------------------
def _layer_norm_reference(x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor,
                          eps: float) -> torch.Tensor:
    """PyTorch's layer norm on the tokens (B, S, C), transposed back to (B, C, S)."""
    return F.layer_norm(x.transpose(1, 2), (x.shape[1],), gamma, beta, eps).transpose(1, 2)


def _norm_made_like(dims: tuple[int, ...] = (1,), unbiased: bool = False,
                    eps_outside: bool = False) -> Callable:
    """A model answer: statistics over ``dims``, maybe unbiased, maybe eps after the square root."""
    def norm(x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor, eps: float) -> torch.Tensor:
        centred = x - x.mean(dim=dims, keepdim=True)
        var = x.var(dim=dims, keepdim=True, unbiased=unbiased)
        spread = var.sqrt() + eps if eps_outside else (var + eps).sqrt()
        return gamma[:, None] * centred / spread + beta[:, None]  # (C, 1) broadcasts over S
    return norm


def _channels_first_inputs(hidden: bool) -> list[tuple[Any, ...]]:
    randn = _randn(107 if hidden else 7)
    if hidden:  # one token of two features, a constant token (variance 0), a large eps
        constant = randn(2, 32, 3)
        constant[:, :, 0] = 5.0
        return [(randn(1, 2, 1), randn(2).abs() + 0.5, randn(2), 1e-5),
                (constant, randn(32).abs() + 0.5, randn(32), 1e-5),
                (0.3 * randn(3, 5, 8), randn(5), randn(5), 1.0)]
    return [(randn(2, 8, 5), randn(8).abs() + 0.5, randn(8), 1e-5),
            (randn(3, 16, 4) * 10 + 4, torch.ones(16), torch.zeros(16), 1e-5),
            (randn(4, 6, 7), randn(6).abs(), randn(6), 0.1)]


_LIBRARY_NORMS = [(F, "layer_norm"), (torch, "layer_norm"), (torch, "native_layer_norm"),
                  (nn, "LayerNorm")]


@exercise("7.1", "Layer normalisation, channels first", "Easy", 10,
          hint="a token is now a column x[b, :, s], so its mean and spread run along the "
               "feature axis, not the last one; the spread is the plain (biased) average of "
               "squared deviations, eps goes under the square root, and gamma and beta must "
               "line up with the feature axis")
def _layer_norm_channels_first(answer, hidden=False):
    verify_function(
        answer, reference=_layer_norm_reference, inputs=_channels_first_inputs(hidden),
        name="Exercise 7.1", hint=_layer_norm_channels_first.exercise.hint, forbidden=_LIBRARY_NORMS,
        mistakes={
            MISTAKES["unbiased_variance"]: (_norm_made_like(unbiased=True),
                                            "torch's var divides by C - 1 unless told "
                                            "unbiased=False (or correction=0)"),
            "statistics over the positions (the last axis), where each token needs its own over "
            "the features (axis 1)": (_norm_made_like(dims=(-1,)),
                                      "in (B, C, S) the features are axis 1: mean(dim=1)"),
            "statistics over the whole sentence (features and positions together), where each "
            "token needs its own": (_norm_made_like(dims=(1, 2)),
                                    "one mean and one variance per token x[b, :, s]: reduce over "
                                    "axis 1 only"),
            "eps added after the square root (sigma + eps, not sqrt(sigma^2 + eps))":
                (_norm_made_like(eps_outside=True), "eps goes under the square root: "
                 "sqrt(var + eps)"),
        })


# ---------------------------------------------------------------------------------------------------
# 7.2 A parallel encoder block
# ---------------------------------------------------------------------------------------------------
def _parallel_parts(x: torch.Tensor, key_mask: torch.Tensor,
                    layer: EncoderLayer) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The normalised input h = LN_1(x) (B, S, C) and the two sub-layers' outputs on it."""
    n = layer.norm_1
    h = F.layer_norm(x, (x.shape[-1],), n.weight, n.bias, n.eps)
    return h, layer.self_attn(h, h, h, key_mask=key_mask)[0], layer.feed_forward(h)


def _parallel_reference(x: torch.Tensor, key_mask: torch.Tensor, layer: EncoderLayer) -> torch.Tensor:
    _, attended, fed = _parallel_parts(x, key_mask, layer)
    return x + attended + fed


def _one_after_the_other(x: torch.Tensor, key_mask: torch.Tensor, layer: EncoderLayer) -> torch.Tensor:
    """The mistake: the pre-norm block, the feed-forward network reading the attention's result."""
    h = layer.norm_1(x)
    x = x + layer.self_attn(h, h, h, key_mask=key_mask)[0]
    return x + layer.feed_forward(layer.norm_2(x))


def _two_norms(x: torch.Tensor, key_mask: torch.Tensor, layer: EncoderLayer) -> torch.Tensor:
    """The mistake: side by side, but the feed-forward network reads its own norm_2(x)."""
    h = layer.norm_1(x)
    return x + layer.self_attn(h, h, h, key_mask=key_mask)[0] + layer.feed_forward(layer.norm_2(x))


def _parallel_layer(d_model: int, num_heads: int, d_ff: int, norm_first: bool) -> EncoderLayer:
    """An EncoderLayer in evaluation mode whose layer norms have gains and biases that are not 1, 0."""
    layer = EncoderLayer(d_model, num_heads, d_ff, norm_first=norm_first).eval()
    for norm in (layer.norm_1, layer.norm_2):
        nn.init.normal_(norm.weight, 1.0, 0.3)
        nn.init.normal_(norm.bias, 0.0, 0.3)
    return layer


def _parallel_inputs(hidden: bool) -> list[tuple[Any, ...]]:
    randn = _randn(108 if hidden else 8)
    if hidden:  # a pre-norm layer (the answer must ignore norm_first), ragged lengths, one token
        layer = built_with_seed(108, lambda: _parallel_layer(16, 2, 48, norm_first=True))
        lengths = torch.tensor([5, 1, 3])
        mask = torch.arange(5)[None, :] < lengths[:, None]  # (B, S): True at real tokens
        return [(randn(3, 5, 16), mask, layer), (randn(1, 1, 16), torch.ones(1, 1).bool(), layer)]
    layer = built_with_seed(7, lambda: _parallel_layer(32, 4, 64, norm_first=False))  # post-norm
    mask = torch.tensor([[True] * 6, [True] * 4 + [False] * 2])
    return [(randn(2, 6, 32), mask, layer), (randn(1, 3, 32), torch.ones(1, 3).bool(), layer)]


@exercise("7.2", "A parallel encoder block", "Medium", 15,
          hint="normalise once and give the same normalised tensor to both sub-layers; "
               "the residual path carries the un-normalised input past both, so the "
               "output is the input plus two changes. The attention module returns more "
               "than its output")
def _parallel_block(answer, hidden=False):
    with torch.no_grad():
        verify_function(
            answer, reference=_parallel_reference, inputs=_parallel_inputs(hidden),
            name="Exercise 7.2", hint=_parallel_block.exercise.hint,
            mistakes={
                MISTAKES["missing_residual"]: (
                    lambda x, m, layer: sum(_parallel_parts(x, m, layer)[1:]),
                    "add the input x itself: x + MHA(LN(x)) + FFN(LN(x))"),
                "the normalised input added back where the residual carries the raw input x": (
                    lambda x, m, layer: sum(_parallel_parts(x, m, layer)),
                    "the residual path skips the layer norm: add x, not LN(x)"),
                "the sub-layers one after the other (the pre-norm block), not side by side": (
                    _one_after_the_other, "both sub-layers read the same LN(x); the feed-forward "
                    "network does not see the attention's output"),
                "the layer's own block (its forward, with its own norm_first), not the parallel "
                "one": (lambda x, m, layer: layer(x, key_mask=m)[0],
                        "build the block from layer.norm_1, layer.self_attn and "
                        "layer.feed_forward; do not call the layer itself"),
                "two layer norms (norm_2 before the feed-forward network), where the parallel "
                "block has one": (_two_norms, "one layer norm, layer.norm_1, feeds both "
                                  "sub-layers; layer.norm_2 stays unused"),
            })


# ---------------------------------------------------------------------------------------------------
# 7.3 Counting a gated encoder's parameters
# ---------------------------------------------------------------------------------------------------
class _GatedFeedForward(nn.Module):
    """The gated network (SiLU(x W_G) * x W_1) W_2, without biases: (B, S, C) -> (B, S, C)."""

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.w_g = nn.Linear(d_model, d_ff, bias=False)
        self.w_1 = nn.Linear(d_model, d_ff, bias=False)
        self.w_2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w_2(F.silu(self.w_g(x)) * self.w_1(x))


def _gated_encoder(d_model: int, d_ff: int, num_layers: int, final_norm: bool = True) -> Encoder:
    """A pre-norm Encoder whose blocks carry gated feed-forward networks."""
    encoder = Encoder(num_layers, d_model, 4, d_ff, norm_first=True)
    for block in encoder.layers:
        block.feed_forward = _GatedFeedForward(d_model, d_ff)
    if not final_norm:
        encoder.norm = None
    return encoder


def _gated_count(d_model: int, d_ff: int, num_layers: int) -> int:
    return count_parameters(_gated_encoder(d_model, d_ff, num_layers))


@exercise("7.3", "Counting a gated encoder's parameters", "Medium", 15,
          hint="count one block and multiply by the number of blocks, then add what sits on "
               "top of a pre-norm stack: attention has four square maps with biases, the "
               "gated network three rectangular maps without, and every layer norm a gain "
               "and a bias per feature",
          questions=[Question(
              "What d_ff gives a gated block the parameter count of the chapter's block with "
              "d_ff = 4 d_model?",
              ("the chapter's network holds 2 d_model d_ff + d_ff + d_model parameters, the gated "
               "one 3 d_model d_ff",
               "leaving out the biases: 3 d_model d_ff_gated = 2 d_model * 4 d_model",
               "so d_ff_gated = 8/3 d_model, about 2.67 d_model; the rest of the block is the "
               "same"), 1)])
def _gated_encoder_parameters(answer, hidden=False):
    inputs = [(8, 24, 2), (48, 128, 12), (20, 53, 1)] if hidden else [(32, 128, 6), (16, 64, 1),
                                                                     (64, 170, 3)]
    verify_function(
        answer, reference=_gated_count, inputs=inputs, name="Exercise 7.3",
        hint=_gated_encoder_parameters.exercise.hint,
        mistakes={
            "the final layer norm of the pre-norm stack left out": (
                lambda c, f, n: count_parameters(_gated_encoder(c, f, n, final_norm=False)),
                "a pre-norm stack ends with one more layer norm: 2 d_model parameters"),
            "biases counted in the gated network (it has none)": (
                lambda c, f, n: _gated_count(c, f, n) + n * (2 * f + c),
                "the gated network's three matrices have no biases"),
            "the gate's matrix W_G left out (a gated network has three matrices)": (
                lambda c, f, n: _gated_count(c, f, n) - n * c * f,
                "W_G, W_1 and W_2: three matrices of d_model * d_ff entries"),
            "the chapter's feed-forward network counted, not the gated one": (
                lambda c, f, n: count_parameters(Encoder(n, c, 4, f, norm_first=True)),
                "replace the chapter's two matrices and their biases by the gated network's "
                "three matrices"),
            "one layer norm per block, where each block has two": (
                lambda c, f, n: _gated_count(c, f, n) - n * 2 * c,
                "a pre-norm block normalises before each of its two sub-layers"),
            "the attention's biases left out (its four maps have biases)": (
                lambda c, f, n: _gated_count(c, f, n) - n * 4 * c,
                "W_Q, W_K, W_V and W_O each come with a bias of d_model entries"),
        })


# ---------------------------------------------------------------------------------------------------
# 7.4 Predict: how far does a padding position reach?
# ---------------------------------------------------------------------------------------------------
def _padding_reach() -> tuple[int, int]:
    """How many outputs of a post-norm EncoderLayer move with input 1 (real) and input 5 (padding)."""
    def measure() -> tuple[int, int]:
        layer = EncoderLayer(32, 4, 64).eval()
        key_mask = torch.tensor([[True] * 4 + [False] * 2])  # (1, S)
        jacobian = torch.autograd.functional.jacobian(  # (S, C, S, C)
            lambda x: layer(x[None], key_mask)[0][0], torch.randn(6, 32))
        reaches = jacobian.abs().sum(dim=(1, 3)) > 1e-6  # (S, S): output t moves with input u
        return int(reaches[:, 1].sum()), int(reaches[:, 5].sum())
    return built_with_seed(7, measure)


def _belief_from_real(said: int) -> str:
    """What a wrong first count reveals (called once the predictions are recorded)."""
    if said == 4:
        return ("the belief that the padding queries are hidden too (the key mask hides keys, not "
                "queries: the padding queries read the real key 1 as well)")
    return ("the belief that a real token reaches only some outputs (through attention every query "
            "reads every real key)")


def _belief_from_padding(said: int) -> str:
    """What a wrong second count reveals (called once the predictions are recorded)."""
    if said == 6:
        return ("the belief that the key mask lets queries read the padding key (no query may "
                "read key 5)")
    if said == 0:
        return ("the belief that a masked position reaches no output at all (its own output still "
                "moves, through the residual path and the feed-forward network)")
    return ("the belief that a masked key reaches some other outputs (no query may read key 5: "
            "only its own output moves, through the residual path)")


@exercise("7.4", "Predict: how far does a padding position reach?", "Easy", 10, kind="prediction",
          hint="ask which outputs read each input: a position always reaches its own output "
               "through the residual path, and reaches other outputs only through attention, "
               "where the key mask decides which keys the queries may read. Does the mask "
               "hide queries too?",
          questions=[Question(
              "Explain your two predictions (written before the check ran): which outputs move, "
              "and through which paths?",
              ("(6, 1)",
               "the key mask hides keys, not queries: all six queries, the padding ones included, "
               "read the real token 1, so all six outputs move",
               "position 5 is hidden as a key, so no query reads it; its change reaches only its "
               "own output, through the residual connection and the feed-forward network"), 2)])
def _predict_padding(answer, hidden=False):
    verify_prediction(
        answer, name="Exercise 7.4", form=(int, int), measure=_padding_reach,
        labels=("outputs that move when input 1 (a real token) changes",
                "outputs that move when input 5 (padding) changes"),
        misconceptions={0: _belief_from_real, 1: _belief_from_padding})


# ---------------------------------------------------------------------------------------------------
# 7.5 Rank collapse without residual connections
# ---------------------------------------------------------------------------------------------------
def _row_spread(h: torch.Tensor) -> torch.Tensor:
    """(B, S, C) -> (B,): ||X - 1 mean(X)||_F / ||X||_F, the distance of each sequence from the nearest
    matrix whose rows are all equal (its mean row repeated), relative to its own size."""
    rest = h - h.mean(dim=1, keepdim=True)
    return rest.flatten(1).norm(dim=1) / h.flatten(1).norm(dim=1)


def _collapse_made_like(spread: Callable[[torch.Tensor], torch.Tensor] = _row_spread,
                        with_input: bool = True) -> Callable:
    """A model answer: the stack run with or without x + ..., each depth measured by ``spread``."""
    def curve(x: torch.Tensor, layers: list[nn.Module], residual: bool) -> torch.Tensor:
        h, out = x, [spread(x).mean()] if with_input else []
        with torch.no_grad():
            for layer in layers:
                a = layer(h, h, h)[0]                      # self-attention, (B, S, C)
                h = h + a if residual else a
                out.append(spread(h).mean())
        return torch.stack(out)                            # (L + 1,)
    return curve


def _collapse_layers(seed: int, n: int, d_model: int, num_heads: int) -> list[MultiHeadAttention]:
    return built_with_seed(seed, lambda: [MultiHeadAttention(d_model, num_heads).eval() for _ in range(n)])


def _collapse_inputs(hidden: bool) -> list[tuple[Any, ...]]:
    randn = _randn(111 if hidden else 11)
    if hidden:  # one layer, one sequence, a shifted input (its mean row is far from zero), 2 heads
        deep = _collapse_layers(112, 5, 16, 2)
        return [(randn(1, 7, 16), deep, False), (randn(3, 4, 16) + 3.0, deep, True),
                (randn(2, 5, 8), _collapse_layers(113, 1, 8, 1), False)]
    layers = _collapse_layers(11, 4, 32, 4)
    x = randn(2, 6, 32)
    return [(x, layers, False), (x, layers, True), (randn(1, 9, 32), layers[:2], False)]


@exercise("7.5", "Rank collapse without residual connections", "Medium", 15,
          hint="the nearest matrix whose rows are all equal repeats the mean row (the mean over the "
               "positions, axis 1, not over the features); measure the input first, then after "
               "each layer, so a stack of L layers gives L + 1 numbers; with residual connections a "
               "layer computes h + attention(h), without them attention(h) alone",
          questions=[Question(
              "What does the check's curve show with and without residual connections, and why?",
              ("without residual connections the distance falls to nearly zero within two or three "
               "layers, faster and faster: the outputs of all positions become the same vector",
               "each attention output is a weighted average of the value vectors, with positive "
               "weights that add up to one, so every layer pulls the rows towards each other (Dong "
               "et al., 2021, show that the distance shrinks doubly exponentially with depth)",
               "with residual connections each layer adds its average to its input, which keeps "
               "the differences between positions, and the distance stays near its starting value; "
               "a feed-forward network or a layer norm cannot undo the collapse, as they treat "
               "equal rows alike"), 2)])
def _rank_collapse(answer, hidden=False):
    verify_function(
        answer, reference=_collapse_made_like(), inputs=_collapse_inputs(hidden),
        name="Exercise 7.5", hint=_rank_collapse.exercise.hint,
        mistakes={
            "the mean taken over the features (axis -1), not over the positions": (
                _collapse_made_like(lambda h: (h - h.mean(dim=-1, keepdim=True)).flatten(1)
                                    .norm(dim=1) / h.flatten(1).norm(dim=1)),
                "all rows equal means every position holds the same vector: subtract the mean "
                "over the positions, h.mean(dim=1, keepdim=True)"),
            "the distance not divided by the size of the sequence (||X||_F)": (
                _collapse_made_like(lambda h: (h - h.mean(dim=1, keepdim=True)).flatten(1)
                                    .norm(dim=1)),
                "a relative distance compares depths fairly: divide by the norm of h itself"),
            "the input left out (the curve starts after the first layer)": (
                _collapse_made_like(with_input=False),
                "depth 0 is the input itself: L layers give L + 1 numbers"),
        })
    layers, x = _collapse_layers(7, 12, 32, 4), _randn(70)(4, 10, 32)
    plain, kept = answer(x, layers, False), answer(x, layers, True)
    print("Twelve self-attention layers with random weights; distance from equal rows "
          "at depths 0, 1, 2, 3, 6, 12:")
    for label, curve in (("without residual connections", plain), ("with residual connections", kept)):
        print(f"  {label + ':':31s}" + "  ".join(f"{float(curve[d]):.2g}" for d in (0, 1, 2, 3, 6, 12)))
