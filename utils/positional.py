"""Positional encodings: sinusoidal, learned, and a look at rotary encodings (chapter 6).

Shape legend: B batch, T tokens, C = d_model features, D head size; ``max_len`` positions in a table.
Row vectors throughout: a sequence is (B, T, C) and position ``pos`` has the encoding row PE[pos].

Stable API (used by ``utils.transformer``):

- ``sinusoidal_encoding(max_len, d_model, base=10000.0) -> (max_len, d_model)``
  PE[pos, 2i] = sin(pos / base^(2i / d_model)), PE[pos, 2i+1] = cos(pos / base^(2i / d_model)),
  Vaswani et al. (2017) section 3.5. ``d_model`` must be even.
- ``SinusoidalPositionalEncoding(d_model, max_len=5000, dropout=0.0)``: ``forward(x, offset=0)``
  maps (B, T, C) embeddings to ``dropout(x + PE[offset : offset + T])``. Positions past ``max_len``
  are computed from the formula on the fly (the formula has no last position).
- ``LearnedPositionalEncoding(d_model, max_len, dropout=0.0)``: the same contract with a trained
  (max_len, C) table (``nn.Embedding``); a sequence reaching past ``max_len`` raises ``ValueError``,
  since the table has no row for a position it never had.
- ``relative_shift_matrix(k, d_model) -> (d_model, d_model)``: the block-diagonal rotation M_k with
  PE[pos + k] = PE[pos] @ M_k for every pos (relative offsets are a fixed linear map).
- ``apply_rotary(x, offset=0, base=10000.0)``: rotary position embedding (RoPE, Su et al. 2021) of
  queries or keys (..., T, D), D even: the feature pair (2i, 2i+1) of position pos is rotated by the
  angle pos * base^(-2i / D), so a rotated query-key dot product depends on positions only through
  their difference.

Neither module scales the embeddings by sqrt(d_model); a model that wants that scales before adding.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from utils.attention import check_sequence


def _check_size(d_model: int, max_len: int | None = None, *, even: bool = True) -> None:
    if not isinstance(d_model, int) or d_model < 1:
        raise ValueError(f"d_model must be a positive int, got {d_model!r}")
    if even and d_model % 2 != 0:
        raise ValueError(
            f"d_model must be even: sin and cos fill the feature pairs (2i, 2i+1); got d_model={d_model}"
        )
    if max_len is not None and (not isinstance(max_len, int) or max_len < 1):
        raise ValueError(f"max_len must be a positive int, got {max_len!r}")


def _check_offset(offset: int) -> None:
    if not isinstance(offset, int) or offset < 0:
        raise ValueError(f"offset (the position of the first token) must be a non-negative int, "
                         f"got {offset!r}")


def frequencies(d_model: int, base: float = 10000.0) -> torch.Tensor:
    """(d_model / 2,) angular frequencies w_i = 1 / base^(2i / d_model), i = 0 .. d_model/2 - 1."""
    _check_size(d_model)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # 0, 2, 4, ..., d_model - 2
    return torch.exp(-math.log(base) * two_i / d_model)


def sinusoidal_encoding(max_len: int, d_model: int, base: float = 10000.0) -> torch.Tensor:
    """(max_len, d_model) table PE[pos, 2i] = sin(pos w_i), PE[pos, 2i+1] = cos(pos w_i), section 3.5."""
    _check_size(d_model, max_len)
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]  # (max_len, 1)
    angles = pos * frequencies(d_model, base)[None, :]  # (max_len, 1) * (1, C/2) -> (max_len, C/2)
    pe = torch.empty(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angles)  # even features
    pe[:, 1::2] = torch.cos(angles)  # odd features
    return pe.float()  # computed in float64 so that large positions stay accurate


def relative_shift_matrix(k: int, d_model: int, base: float = 10000.0) -> torch.Tensor:
    """(d_model, d_model) block-diagonal rotation M_k with PE[pos + k] = PE[pos] @ M_k for every pos."""
    _check_size(d_model)
    if not isinstance(k, int):
        raise ValueError(f"the offset k must be an int, got {k!r}")
    angle = k * frequencies(d_model, base)  # (C/2,)
    cos, sin = torch.cos(angle), torch.sin(angle)
    m = torch.zeros(d_model, d_model, dtype=torch.float64)
    # row-vector form of the angle-sum formulas: [sin a, cos a] @ [[cos b, -sin b], [sin b, cos b]]
    #                                           = [sin(a + b), cos(a + b)]
    m[0::2, 0::2] = torch.diag(cos)
    m[0::2, 1::2] = torch.diag(-sin)
    m[1::2, 0::2] = torch.diag(sin)
    m[1::2, 1::2] = torch.diag(cos)
    return m.float()


class SinusoidalPositionalEncoding(nn.Module):
    """Add the fixed sinusoidal encoding to (B, T, C) embeddings, then dropout (section 3.5)."""

    def __init__(self, d_model: int, max_len: int = 5000, dropout: float = 0.0):
        super().__init__()
        _check_size(d_model, max_len)
        self.d_model, self.max_len = d_model, max_len
        self.dropout = nn.Dropout(dropout)
        # a buffer: moves with .to(device), is not trained, and is not saved in the state dict
        self.register_buffer("pe", sinusoidal_encoding(max_len, d_model), persistent=False)

    def encoding(self, t: int, offset: int = 0) -> torch.Tensor:
        """(T, C) rows PE[offset .. offset + T - 1]; rows past max_len come from the formula."""
        _check_offset(offset)
        if offset + t <= self.max_len:
            return self.pe[offset:offset + t]
        return sinusoidal_encoding(offset + t, self.d_model)[offset:].to(self.pe.device)

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        """(B, T, C) -> (B, T, C): x + PE[offset : offset + T] (broadcast over the batch), dropout."""
        check_sequence(x, self.d_model, "embeddings")
        pe = self.encoding(x.shape[1], offset).to(x.dtype)  # (T, C)
        return self.dropout(x + pe)  # (B, T, C) + (T, C) -> (B, T, C)


class LearnedPositionalEncoding(nn.Module):
    """Add a trained (max_len, C) position table to (B, T, C) embeddings, then dropout (BERT, GPT)."""

    def __init__(self, d_model: int, max_len: int, dropout: float = 0.0):
        super().__init__()
        _check_size(d_model, max_len, even=False)
        self.d_model, self.max_len = d_model, max_len
        self.table = nn.Embedding(max_len, d_model)
        nn.init.normal_(self.table.weight, std=0.02)  # small, as in GPT-2, so words dominate at first
        self.dropout = nn.Dropout(dropout)

    def encoding(self, t: int, offset: int = 0) -> torch.Tensor:
        """(T, C) rows of the table for positions offset .. offset + T - 1."""
        _check_offset(offset)
        if offset + t > self.max_len:
            raise ValueError(
                f"a learned position table has rows for positions 0..{self.max_len - 1} only "
                f"(max_len={self.max_len}); positions {offset}..{offset + t - 1} were asked for. "
                "Train with a larger max_len, cut the sequence, or use a sinusoidal encoding"
            )
        positions = torch.arange(offset, offset + t, device=self.table.weight.device)  # (T,)
        return self.table(positions)  # (T, C)

    def forward(self, x: torch.Tensor, offset: int = 0) -> torch.Tensor:
        """(B, T, C) -> (B, T, C): x + P[offset : offset + T] (broadcast over the batch), dropout."""
        check_sequence(x, self.d_model, "embeddings")
        return self.dropout(x + self.encoding(x.shape[1], offset))  # (B, T, C) + (T, C)


def apply_rotary(x: torch.Tensor, offset: int = 0, base: float = 10000.0) -> torch.Tensor:
    """Rotary position embedding (RoPE, Su et al. 2021): rotate feature pairs of (..., T, D) by pos * w_i."""
    if not isinstance(x, torch.Tensor) or x.dim() < 2:
        shape = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
        raise ValueError(f"apply_rotary needs queries or keys of shape (..., seq_len, head_dim), got {shape}")
    if x.shape[-1] % 2 != 0:
        raise ValueError(f"apply_rotary rotates feature pairs, so head_dim must be even; got {x.shape[-1]}")
    _check_offset(offset)
    t, d = x.shape[-2], x.shape[-1]
    pos = torch.arange(offset, offset + t, dtype=torch.float64, device=x.device)[:, None]  # (T, 1)
    angle = pos * frequencies(d, base).to(x.device)[None, :]  # (T, D/2)
    cos, sin = torch.cos(angle).to(x.dtype), torch.sin(angle).to(x.dtype)
    x_even, x_odd = x[..., 0::2], x[..., 1::2]  # (..., T, D/2) each
    # rotate each pair (x_even, x_odd) by its angle: the 2-D rotation, applied to row vectors
    out_even = x_even * cos - x_odd * sin
    out_odd = x_even * sin + x_odd * cos
    return torch.stack((out_even, out_odd), dim=-1).flatten(-2)  # (..., T, D/2, 2) -> (..., T, D)
