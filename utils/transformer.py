"""The Transformer of Vaswani et al. (2017): encoder, decoder and the full model (chapters 7-8).

Shape legend: B batch, S source tokens, T target tokens, H heads, D head size, C = H * D = d_model,
F = d_ff, V vocabulary size, K beam size. Row vectors throughout; masks are bool, True = may attend /
real token (``nn.Transformer`` uses the opposite, pass it ``~mask``).

Stable API (chapter 9 builds a decoder-only model on these layers):

- ``TransformerConfig``: one frozen dataclass with the paper's defaults (d_model=512, num_heads=8,
  6 + 6 layers, d_ff=2048, dropout=0.1) for ``Transformer(config)``.
- ``FeedForward(d_model, d_ff, dropout)``: max(0, x W_1 + b_1) W_2 + b_2 at every position.
- ``EncoderLayer(d_model, num_heads, d_ff, dropout=0.1, norm_first=False)``:
  ``forward(x, key_mask=None, attn_mask=None, need_weights=False) -> (x, weights | None)``.
  With a causal ``attn_mask`` it is a decoder-only (GPT) block.
- ``DecoderLayer(...)``: ``forward(y, memory, tgt_key_mask=None, memory_key_mask=None,
  need_weights=False) -> (y, self_weights | None, cross_weights | None)``; always causal.
- ``Encoder(num_layers, d_model, ...)``, ``Decoder(num_layers, d_model, ...)``: stacks of identical
  layers; a final LayerNorm only when ``norm_first`` (pre-norm needs one, post-norm ends normalised).
- ``Transformer(config)``: ``encode``, ``decode``, ``forward(src, tgt_in, src_mask, tgt_mask) -> logits``,
  ``attention_weights(...)`` for the figures.
- ``copy_from_torch_transformer``: weights of ``nn.Transformer`` copied across, for the checks.

Decoding (greedy, beam search) and training on a translation task live in ``utils.translation``.

Post-norm is the paper's block, LayerNorm(x + Sublayer(x)), and the default here; ``norm_first=True``
gives pre-norm, x + Sublayer(LayerNorm(x)), which trains more easily in deep stacks. ``nn.Transformer``
adds a final LayerNorm to each stack in both modes; see ``copy_from_torch_transformer`` for comparing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from utils.attention import MultiHeadAttention, copy_from_torch_mha
from utils.data import check_token_ids
from utils.positional import SinusoidalPositionalEncoding


def check_sizes(config: object, names: tuple[str, ...]) -> None:
    """The checks every model configuration shares: the named sizes are positive ints, d_model splits
    into num_heads heads, and 0 <= dropout < 1 (TransformerConfig, GPTConfig, BERTConfig, ViTConfig)."""
    for name in names:
        value = getattr(config, name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if config.d_model % config.num_heads != 0:
        raise ValueError(f"d_model must be divisible by num_heads so each head gets d_model / "
                         f"num_heads features; got d_model={config.d_model}, "
                         f"num_heads={config.num_heads}")
    if not 0.0 <= config.dropout < 1.0:
        raise ValueError(f"dropout must be in [0, 1), got {config.dropout}")


def check_sequence_ids(ids: torch.Tensor, vocab_size: int, max_len: int) -> None:
    """Token ids (B, T) of a model with a position table: 1..max_len tokens, each in 0..vocab_size - 1."""
    check_token_ids(ids, "ids")
    if not 1 <= ids.shape[1] <= max_len:
        raise ValueError(f"a sequence needs 1..max_len={max_len} tokens, got {ids.shape[1]}")
    if ids.min() < 0 or ids.max() >= vocab_size:
        raise ValueError(f"token ids must lie in 0..{vocab_size - 1}, got "
                         f"{ids.min().item()}..{ids.max().item()}")


@dataclass(frozen=True)
class TransformerConfig:
    """Sizes of the encoder-decoder Transformer; defaults are the base model of Vaswani et al. (2017)."""

    src_vocab_size: int
    tgt_vocab_size: int
    d_model: int = 512
    num_heads: int = 8
    num_encoder_layers: int = 6
    num_decoder_layers: int = 6
    d_ff: int = 2048
    dropout: float = 0.1
    max_len: int = 512
    norm_first: bool = False  # False: post-norm as in the paper; True: pre-norm
    pad_id: int = 0
    bos_id: int = 1
    eos_id: int = 2

    def __post_init__(self) -> None:
        check_sizes(self, ("src_vocab_size", "tgt_vocab_size", "d_model", "num_heads",
                           "num_encoder_layers", "num_decoder_layers", "d_ff", "max_len"))
        if self.d_model % 2 != 0:
            raise ValueError(f"d_model must be even for the sinusoidal encoding, got {self.d_model}")
        for name in ("pad_id", "bos_id", "eos_id"):
            value = getattr(self, name)
            if not 0 <= value < min(self.src_vocab_size, self.tgt_vocab_size):
                raise ValueError(f"{name}={value} is outside the vocabularies (sizes {self.src_vocab_size}, "
                                 f"{self.tgt_vocab_size})")


# ---------------------------------------------------------------------------------------------------
# The blocks (chapter 7: encoder; chapter 8: decoder)
# ---------------------------------------------------------------------------------------------------
class FeedForward(nn.Module):
    """Position-wise feed-forward network FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, section 3.3."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.1):
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)  # W_1: (C, F)
        self.w_2 = nn.Linear(d_ff, d_model)  # W_2: (F, C)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, C) -> (B, T, F) -> (B, T, C); every position on its own, the same weights for all."""
        return self.w_2(self.dropout(torch.relu(self.w_1(x))))


class EncoderLayer(nn.Module):
    """Self-attention then feed-forward, each wrapped in a residual connection and LayerNorm, section 3.1.

    Post-norm (paper): x = LayerNorm(x + Sublayer(x)). Pre-norm (``norm_first``): x = x + Sublayer(LN(x)).
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.1,
                 norm_first: bool = False):
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
        self.norm_1, self.norm_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)  # on each sub-layer's output, before the residual sum

    def forward(self, x: torch.Tensor, key_mask: torch.Tensor | None = None,
                attn_mask: torch.Tensor | None = None,
                need_weights: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
        """x (B, T, C), key_mask (B, T), attn_mask (T, T) -> (B, T, C) and weights (B, H, T, T) or None."""
        if self.norm_first:
            h = self.norm_1(x)
            a, weights = self.self_attn(h, h, h, key_mask, attn_mask, need_weights)
            x = x + self.dropout(a)
            return x + self.dropout(self.feed_forward(self.norm_2(x))), weights
        a, weights = self.self_attn(x, x, x, key_mask, attn_mask, need_weights)
        x = self.norm_1(x + self.dropout(a))  # Add & Norm
        return self.norm_2(x + self.dropout(self.feed_forward(x))), weights  # Add & Norm


class DecoderLayer(nn.Module):
    """Causal self-attention, cross-attention to the encoder output, feed-forward; each Add & Norm."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.1,
                 norm_first: bool = False):
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
        self.norm_1, self.norm_2, self.norm_3 = (nn.LayerNorm(d_model) for _ in range(3))
        self.dropout = nn.Dropout(dropout)

    def forward(self, y: torch.Tensor, memory: torch.Tensor, tgt_key_mask: torch.Tensor | None = None,
                memory_key_mask: torch.Tensor | None = None, need_weights: bool = False
                ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        """y (B, T, C), memory (B, S, C) -> (B, T, C), self weights (B, H, T, T), cross (B, H, T, S)."""
        causal = torch.ones(y.shape[1], y.shape[1], dtype=torch.bool, device=y.device).tril()  # (T, T)
        if self.norm_first:
            h = self.norm_1(y)
            a, self_w = self.self_attn(h, h, h, tgt_key_mask, causal, need_weights)
            y = y + self.dropout(a)
            a, cross_w = self.cross_attn(self.norm_2(y), memory, memory, memory_key_mask, None, need_weights)
            y = y + self.dropout(a)
            return y + self.dropout(self.feed_forward(self.norm_3(y))), self_w, cross_w
        a, self_w = self.self_attn(y, y, y, tgt_key_mask, causal, need_weights)
        y = self.norm_1(y + self.dropout(a))
        # queries from the decoder, keys and values from the top encoder output
        a, cross_w = self.cross_attn(y, memory, memory, memory_key_mask, None, need_weights)
        y = self.norm_2(y + self.dropout(a))
        return self.norm_3(y + self.dropout(self.feed_forward(y))), self_w, cross_w


class Encoder(nn.Module):
    """N identical encoder layers (N = 6 in the paper); a final LayerNorm only in pre-norm mode."""

    def __init__(self, num_layers: int, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.1,
                 norm_first: bool = False):
        super().__init__()
        self.layers = nn.ModuleList(EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first)
                                    for _ in range(num_layers))
        self.norm = nn.LayerNorm(d_model) if norm_first else None

    def forward(self, x: torch.Tensor, key_mask: torch.Tensor | None = None, need_weights: bool = False
                ) -> tuple[torch.Tensor, list[torch.Tensor] | None]:
        """x (B, S, C), key_mask (B, S) -> (B, S, C) and one (B, H, S, S) weight tensor per layer."""
        weights = []
        for layer in self.layers:
            x, w = layer(x, key_mask, need_weights=need_weights)
            weights.append(w)
        x = self.norm(x) if self.norm is not None else x
        return x, (weights if need_weights else None)


class Decoder(nn.Module):
    """N identical decoder layers, every one attending to the same top encoder output ``memory``."""

    def __init__(self, num_layers: int, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.1,
                 norm_first: bool = False):
        super().__init__()
        self.layers = nn.ModuleList(DecoderLayer(d_model, num_heads, d_ff, dropout, norm_first)
                                    for _ in range(num_layers))
        self.norm = nn.LayerNorm(d_model) if norm_first else None

    def forward(self, y: torch.Tensor, memory: torch.Tensor, tgt_key_mask: torch.Tensor | None = None,
                memory_key_mask: torch.Tensor | None = None, need_weights: bool = False
                ) -> tuple[torch.Tensor, list[torch.Tensor] | None, list[torch.Tensor] | None]:
        """y (B, T, C), memory (B, S, C) -> (B, T, C), per-layer self (B, H, T, T) and cross (B, H, T, S)."""
        self_ws, cross_ws = [], []
        for layer in self.layers:
            y, self_w, cross_w = layer(y, memory, tgt_key_mask, memory_key_mask, need_weights)
            self_ws.append(self_w)
            cross_ws.append(cross_w)
        y = self.norm(y) if self.norm is not None else y
        return y, (self_ws if need_weights else None), (cross_ws if need_weights else None)


# ---------------------------------------------------------------------------------------------------
# The full model (chapter 8)
# ---------------------------------------------------------------------------------------------------
class Transformer(nn.Module):
    """Embeddings * sqrt(d_model) + positions, encoder, decoder, linear layer to target logits, sec. 3."""

    def __init__(self, config: TransformerConfig):
        super().__init__()
        if not isinstance(config, TransformerConfig):
            raise TypeError(f"Transformer takes a TransformerConfig, got {type(config).__name__}")
        c = self.config = config
        self.src_embed = nn.Embedding(c.src_vocab_size, c.d_model, padding_idx=c.pad_id)
        self.tgt_embed = nn.Embedding(c.tgt_vocab_size, c.d_model, padding_idx=c.pad_id)
        self.positional = SinusoidalPositionalEncoding(c.d_model, c.max_len, c.dropout)
        layer_args = (c.d_model, c.num_heads, c.d_ff, c.dropout, c.norm_first)
        self.encoder = Encoder(c.num_encoder_layers, *layer_args)
        self.decoder = Decoder(c.num_decoder_layers, *layer_args)
        self.output = nn.Linear(c.d_model, c.tgt_vocab_size)  # the pre-softmax linear layer
        for p in self.parameters():  # Glorot initialisation of every matrix, as nn.Transformer does
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        for embed in (self.src_embed, self.tgt_embed):  # unit-scale entries after * sqrt(d_model)
            nn.init.normal_(embed.weight, std=c.d_model ** -0.5)
            embed.weight.data[c.pad_id] = 0.0

    def _embed(self, ids: torch.Tensor, embed: nn.Embedding, name: str) -> torch.Tensor:
        check_token_ids(ids, name)
        if ids.shape[1] > self.config.max_len:
            raise ValueError(f"{name} has {ids.shape[1]} tokens, more than max_len={self.config.max_len}")
        return self.positional(embed(ids) * math.sqrt(self.config.d_model))  # (B, T) -> (B, T, C)

    def encode(self, src: torch.Tensor, src_mask: torch.Tensor | None = None) -> torch.Tensor:
        """src (B, S) ids -> memory (B, S, C), the top encoder output; src_mask defaults to src != pad."""
        src_mask = src != self.config.pad_id if src_mask is None else src_mask
        return self.encoder(self._embed(src, self.src_embed, "src"), src_mask)[0]

    def decode(self, tgt_in: torch.Tensor, memory: torch.Tensor, src_mask: torch.Tensor | None = None,
               tgt_mask: torch.Tensor | None = None) -> torch.Tensor:
        """tgt_in (B, T) ids (<bos> y_1 ..), memory (B, S, C) -> logits (B, T, V) for the next tokens."""
        y = self._embed(tgt_in, self.tgt_embed, "tgt_in")  # (B, T, C)
        if memory.shape[0] != y.shape[0]:
            raise ValueError(f"src and tgt must have the same batch size, got {memory.shape[0]} and "
                             f"{y.shape[0]}")
        y = self.decoder(y, memory, tgt_mask, src_mask)[0]
        return self.output(y)  # (B, T, C) -> (B, T, V); the softmax lives in the loss or the decoder

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor, src_mask: torch.Tensor | None = None,
                tgt_mask: torch.Tensor | None = None) -> torch.Tensor:
        """Teacher forcing: src (B, S), tgt_in (B, T) -> logits (B, T, V); masks True at real tokens."""
        src_mask = src != self.config.pad_id if src_mask is None else src_mask
        return self.decode(tgt_in, self.encode(src, src_mask), src_mask, tgt_mask)

    @torch.no_grad()
    def attention_weights(self, src: torch.Tensor, tgt_in: torch.Tensor) -> dict[str, torch.Tensor]:
        """Weights of every layer, stacked: encoder (L, B, H, S, S), decoder self (L, B, H, T, T), cross
        (L, B, H, T, S)."""
        src_mask, tgt_mask = src != self.config.pad_id, tgt_in != self.config.pad_id
        memory, enc_w = self.encoder(self._embed(src, self.src_embed, "src"), src_mask, need_weights=True)
        _, self_w, cross_w = self.decoder(self._embed(tgt_in, self.tgt_embed, "tgt_in"), memory, tgt_mask,
                                          src_mask, need_weights=True)
        return {"encoder": torch.stack(enc_w), "decoder_self": torch.stack(self_w),
                "cross": torch.stack(cross_w)}


# ---------------------------------------------------------------------------------------------------
# Checking against PyTorch (chapters 7-8, tests)
# ---------------------------------------------------------------------------------------------------
@torch.no_grad()
def copy_from_torch_transformer(ours: Transformer | Encoder | Decoder, theirs: nn.Module) -> None:
    """Copy the layer weights of ``nn.Transformer`` (or its ``.encoder`` / ``.decoder``) into ours.

    ``nn.Transformer`` has no embeddings, positions or output layer: only the stacks are copied.
    It always ends each stack with a LayerNorm, also in post-norm mode where the paper has none: set
    ``theirs.encoder.norm = None`` and ``theirs.decoder.norm = None`` before comparing post-norm stacks.
    """
    if isinstance(ours, Transformer):
        if not isinstance(theirs, nn.Transformer):
            raise TypeError(f"a Transformer copies from nn.Transformer, got {type(theirs).__name__}")
        copy_from_torch_transformer(ours.encoder, theirs.encoder)
        copy_from_torch_transformer(ours.decoder, theirs.decoder)
        return
    pairs = ((Encoder, nn.TransformerEncoder), (Decoder, nn.TransformerDecoder))
    if not any(isinstance(ours, a) and isinstance(theirs, b) for a, b in pairs):
        raise TypeError(f"copy an Encoder from nn.TransformerEncoder and a Decoder from "
                        f"nn.TransformerDecoder; got {type(ours).__name__} and {type(theirs).__name__}")
    if len(ours.layers) != len(theirs.layers):
        raise ValueError(f"ours has {len(ours.layers)} layers, theirs {len(theirs.layers)}")
    if (ours.norm is None) != (theirs.norm is None):
        raise ValueError("final LayerNorm differs: ours has one only with norm_first=True; nn.Transformer "
                         "always has one, so set theirs.encoder.norm = theirs.decoder.norm = None to compare "
                         "post-norm stacks")
    if ours.norm is not None:
        ours.norm.load_state_dict(theirs.norm.state_dict())
    for mine, other in zip(ours.layers, theirs.layers, strict=True):
        if mine.norm_first != other.norm_first:
            raise ValueError(f"norm_first differs: ours {mine.norm_first}, theirs {other.norm_first}")
        copy_from_torch_mha(mine.self_attn, other.self_attn)
        if isinstance(mine, DecoderLayer):
            copy_from_torch_mha(mine.cross_attn, other.multihead_attn)
            mine.norm_3.load_state_dict(other.norm3.state_dict())
        mine.feed_forward.w_1.load_state_dict(other.linear1.state_dict())
        mine.feed_forward.w_2.load_state_dict(other.linear2.state_dict())
        mine.norm_1.load_state_dict(other.norm1.state_dict())
        mine.norm_2.load_state_dict(other.norm2.state_dict())
