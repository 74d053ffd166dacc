"""Decoding the encoder-decoder Transformer with a key-value cache (chapter 13; chapter 9 caches a GPT).

``utils.translation.greedy_decode`` and ``beam_search`` run the whole prefix through every decoder layer
at each step: simple to read, and the cost of step t grows with t. Here each decoder layer keeps the
keys and values of the tokens it has already read, and the cross-attention's keys and values of the
encoder output, computed once; a step then computes the newest token only, and only its logits. The
result is what recomputation gives (tested to float rounding), several times faster on real sentences.

- ``greedy_decode_cached(model, src)`` and ``beam_search_cached(model, src, beam_size)``: the same
  loops as ``utils.translation``'s, with a ``Cached`` stepper.

Shape legend: N rows decoded (B, or B * K in beam search), S source tokens, t tokens read so far,
C = d_model, H heads, D = C / H, V target vocabulary.
"""

from __future__ import annotations

import torch

from utils.attention import MultiHeadAttention, scaled_dot_product_attention
from utils.transformer import DecoderLayer, Transformer
from utils.translation import beam_search, greedy_decode


def _attend_newest(attn: MultiHeadAttention, q_in: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
            mask: torch.Tensor | None) -> torch.Tensor:
    """One query per row: q_in (N, 1, C), cached k and v (N, H, T_k, D) -> (N, 1, C)."""
    q = attn._split(attn.w_q(q_in))  # (N, 1, C) -> (N, H, 1, D)
    out, _ = scaled_dot_product_attention(q, k, v, mask)  # (N, H, 1, D)
    return attn.w_o(out.transpose(1, 2).reshape(q_in.shape))  # (N, 1, C)


class Cached:
    """The next token's logits from the newest token alone, with every layer's keys and values kept."""

    def __init__(self, model: Transformer, memory: torch.Tensor, src_mask: torch.Tensor):
        if model.training:
            raise RuntimeError("cached decoding is for inference: call model.eval() first (no dropout)")
        self.model = model
        self.layers: list[DecoderLayer] = list(model.decoder.layers)
        self.memory_mask = src_mask[:, None, None, :]  # (N, S) -> (N, 1, 1, S)
        self.cross = [(layer.cross_attn._split(layer.cross_attn.w_k(memory)),  # (N, H, S, D) each
                       layer.cross_attn._split(layer.cross_attn.w_v(memory))) for layer in self.layers]
        self.keys: list[torch.Tensor] = []  # per layer (N, H, t, D): the tokens read so far
        self.values: list[torch.Tensor] = []

    def _layer(self, i: int, y: torch.Tensor) -> torch.Tensor:
        """Decoder layer i for the newest token y (N, 1, C), pre- or post-norm as the layer is."""
        layer = self.layers[i]
        attn = layer.self_attn
        h = layer.norm_1(y) if layer.norm_first else y
        k, v = attn._split(attn.w_k(h)), attn._split(attn.w_v(h))  # (N, H, 1, D)
        if i < len(self.keys):  # (N, H, t - 1, D) -> (N, H, t, D)
            self.keys[i] = torch.cat([self.keys[i], k], dim=2)
            self.values[i] = torch.cat([self.values[i], v], dim=2)
        else:
            self.keys.append(k)
            self.values.append(v)
        a = _attend_newest(attn, h, self.keys[i], self.values[i], None)  # it sees every earlier token
        cross_k, cross_v = self.cross[i]
        if layer.norm_first:
            y = y + a
            y = y + _attend_newest(layer.cross_attn, layer.norm_2(y), cross_k, cross_v, self.memory_mask)
            return y + layer.feed_forward(layer.norm_3(y))
        y = layer.norm_1(y + a)
        y = layer.norm_2(y + _attend_newest(layer.cross_attn, y, cross_k, cross_v, self.memory_mask))
        return layer.norm_3(y + layer.feed_forward(y))

    def next_logits(self, ys: torch.Tensor) -> torch.Tensor:
        """ys (N, t) ids read so far, of which only the last is new -> (N, V) logits for the next."""
        read = self.keys[0].shape[2] if self.keys else 0
        if ys.shape[1] != read + 1:
            raise ValueError(f"the cache holds {read} tokens, so ys must hold {read + 1} (one new), "
                             f"got {ys.shape[1]}: call next_logits once per step, in order")
        model, t = self.model, ys.shape[1]
        y = model.positional(model.tgt_embed(ys[:, -1:]) * model.config.d_model ** 0.5, offset=t - 1)
        for i in range(len(self.layers)):
            y = self._layer(i, y)  # (N, 1, C)
        if model.decoder.norm is not None:
            y = model.decoder.norm(y)
        return model.output(y[:, 0])  # (N, C) -> (N, V)

    def keep(self, rows: torch.Tensor) -> None:
        """Beam search kept prefixes ``rows`` (N,) of the previous step: reorder the cached keys."""
        self.keys = [k[rows] for k in self.keys]
        self.values = [v[rows] for v in self.values]


def greedy_decode_cached(model: Transformer, src: torch.Tensor,
                         max_new_tokens: int | None = None) -> torch.Tensor:
    """``greedy_decode`` with a key-value cache: src (B, S) -> (B, T_out) ids after <bos>, padded."""
    return greedy_decode(model, src, max_new_tokens, stepper=Cached)


def beam_search_cached(model: Transformer, src: torch.Tensor, beam_size: int = 4,
                       max_new_tokens: int | None = None, length_penalty: float = 0.6) -> torch.Tensor:
    """``beam_search`` with a key-value cache (Wu et al.'s length penalty ``length_penalty``): (B, T_out)."""
    return beam_search(model, src, beam_size, max_new_tokens, length_penalty, stepper=Cached)
