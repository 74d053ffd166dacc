"""Chapter 7's exercises (the Transformer encoder): their checks, references and named mistakes.

Shapes: B batch, S positions, C = d_model features, F = d_ff hidden units of the feed-forward network.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from utils.attention import causal_mask
from utils.checks import MISTAKES, verify_function, verify_prediction
from utils.exercises import Question, exercise
from utils.train import count_parameters
from utils.transformer import Encoder, EncoderLayer, FeedForward


def _randn(seed: int) -> Callable[..., torch.Tensor]:
    """torch.randn drawing from its own generator (the learner's random state stays untouched)."""
    generator = torch.Generator().manual_seed(seed)
    return lambda *shape: torch.randn(*shape, generator=generator)


def _built(seed: int, build: Callable[[], Any]) -> Any:
    """``build()`` with the random state seeded, then restored (the learner's stream goes on as it was)."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return build()


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
        layer = _built(108, lambda: _parallel_layer(16, 2, 48, norm_first=True))
        lengths = torch.tensor([5, 1, 3])
        mask = torch.arange(5)[None, :] < lengths[:, None]  # (B, S): True at real tokens
        return [(randn(3, 5, 16), mask, layer), (randn(1, 1, 16), torch.ones(1, 1).bool(), layer)]
    layer = _built(7, lambda: _parallel_layer(32, 4, 64, norm_first=False))  # post-norm
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
    return _built(7, measure)


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
# 7.5 How far does one change travel?
# ---------------------------------------------------------------------------------------------------
def _changed_reference(block: Callable, x: torch.Tensor, t: int) -> torch.Tensor:
    """(S,) bool: the outputs that move by more than 1e-6 when 1.0 is added to input position t."""
    changed = x.clone()
    changed[:, t] += 1.0
    with torch.no_grad():
        return (block(changed) - block(x)).abs().amax(dim=-1)[0] > 1e-6


def _changed_feature(block: Callable, x: torch.Tensor, t: int) -> torch.Tensor:
    """The mistake: feature t of every position changed, not position t."""
    changed = x.clone()
    changed[:, :, t] += 1.0
    with torch.no_grad():
        return (block(changed) - block(x)).abs().amax(dim=-1)[0] > 1e-6


def _torch_encoder_layer(d_model: int, num_heads: int, d_ff: int) -> nn.TransformerEncoderLayer:
    """PyTorch's encoder block (as in the chapter's comparison): (1, S, C) -> (1, S, C) directly."""
    return nn.TransformerEncoderLayer(d_model, num_heads, d_ff, dropout=0.0, batch_first=True).eval()


def _reach_inputs(hidden: bool) -> list[tuple[Any, ...]]:
    """(block, x, t) cases. The blocks are modules of the package and of PyTorch: the learner's
    function runs them while every function of this file is refused."""
    randn = _randn(109 if hidden else 9)
    if hidden:  # keys 4, 5 hidden from every query (a hidden key reaches only its own output), a
        # causal mask (a change reaches the later positions only), one position, a silent block
        layer = _built(109, lambda: _torch_encoder_layer(16, 2, 32))
        hide = torch.zeros(6, 6, dtype=torch.bool)
        hide[:, 4:] = True  # (S, S), PyTorch's convention: True = may not attend
        causal = ~causal_mask(5)
        silent = _built(110, lambda: FeedForward(16, 32, dropout=0.0))
        nn.init.zeros_(silent.w_2.weight)
        return [(partial(layer, src_mask=hide), randn(1, 6, 16), 5),
                (partial(layer, src_mask=hide), randn(1, 6, 16), 1),
                (partial(layer, src_mask=causal, is_causal=True), randn(1, 5, 16), 2),
                (nn.Identity(), randn(1, 1, 8), 0), (silent, randn(1, 4, 16), 3)]
    ffn = _built(9, lambda: FeedForward(32, 64, dropout=0.0))  # acts on each position alone
    layer = _built(10, lambda: _torch_encoder_layer(32, 4, 64))  # unmasked
    x = randn(1, 6, 32)
    return [(ffn, x, 2), (ffn, x, 0), (layer, x, 3)]


@exercise("7.5", "How far does one change travel?", "Easy", 10,
          hint="compare the block's output on the original input with its output on a "
               "changed copy (never change the caller's tensor in place); a position counts "
               "as changed when any of its features moved by more than the tolerance",
          questions=[Question(
              "Try it on a FeedForward and on an unmasked EncoderLayer: what do you see?",
              ("the feed-forward network changes position t only: it works on each position alone",
               "the encoder block changes every position: through attention every query reads "
               "the changed key and value",
               "unless a mask hides that key, as in the last exercise"), 1)])
def _changed_positions(answer, hidden=False):
    verify_function(
        answer, reference=_changed_reference, inputs=_reach_inputs(hidden), name="Exercise 7.5",
        hint=_changed_positions.exercise.hint,
        mistakes={
            "the input changed in place, so both runs saw the changed input": (
                lambda block, x, t: torch.zeros(x.shape[1], dtype=torch.bool),
                "x_changed = x names the same tensor: change a copy, x.clone()"),
            "feature t of every position changed (x[:, :, t]), not position t (x[:, t])": (
                _changed_feature, "x is (1, S, C): position t is x[:, t], all its features"),
        })
