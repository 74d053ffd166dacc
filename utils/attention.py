"""Attention, from a single scaled dot product to multi-head attention (chapters 2-5).

Shape legend: B batch, T_q queries, T_k keys (= values), H heads, D head size, C = H * D = d_model.
Row vectors throughout: a sequence is (B, T, C) and ``x @ W`` projects it; softmax runs over keys.

Mask contract (the whole course): masks are ``torch.bool``; **True means "may attend"**, False means
"masked out" (the convention of ``torch.nn.functional.scaled_dot_product_attention``). An attention mask
broadcasts to the scores, (B, H, T_q, T_k) or (B, T_q, T_k); a 2-D (T_q, T_k) mask applies to every
example and head. A key mask (B, T_k) marks real keys (True) against padding (False).
``nn.MultiheadAttention`` uses the opposite convention (True = masked): pass it ``~mask``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


# ---------------------------------------------------------------------------------------------------
# Masks
# ---------------------------------------------------------------------------------------------------
def causal_mask(t: int, device: torch.device | str | None = None) -> torch.Tensor:
    """(T, T) bool mask, True on and below the diagonal: position i may attend to positions j <= i."""
    if t < 1:
        raise ValueError(f"sequence length must be at least 1, got {t}")
    return torch.ones(t, t, dtype=torch.bool, device=device).tril()


def _check_mask(mask: torch.Tensor, scores_shape: torch.Size, name: str = "mask") -> None:
    if not isinstance(mask, torch.Tensor):
        raise TypeError(f"{name} must be a torch.bool tensor, got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        raise TypeError(
            f"{name} must have dtype torch.bool (True = may attend), got {mask.dtype}; "
            "build it with a comparison such as `ids != pad_id`"
        )
    try:
        torch.broadcast_shapes(mask.shape, scores_shape)
    except RuntimeError:
        raise ValueError(
            f"{name} of shape {tuple(mask.shape)} does not broadcast to the attention scores "
            f"{tuple(scores_shape)} (..., T_q, T_k); a key mask (B, T_k) needs reshaping to "
            "(B, 1, T_k) or (B, 1, 1, T_k) first"
        ) from None


def check_mask_rows(mask: torch.Tensor, name: str = "mask") -> None:
    """Raise a clear ValueError if a row of the bool ``mask`` (..., T_k) is all False (softmax 0/0)."""
    empty = ~mask.any(dim=-1)  # (...,): True where a query may attend to no key
    if empty.any():
        first = ", ".join(str(i) for i in empty.nonzero()[0].tolist())  # index of the first empty row
        where = f"{name}[{first}]" if empty.dim() > 0 else name
        raise ValueError(
            f"some query may attend to no key at all (a mask row is all False), first at {where}: its "
            "softmax would be 0/0; check that padding is marked False only on the key side and that "
            "every sequence has at least one real token"
        )


# ---------------------------------------------------------------------------------------------------
# Score functions (chapter 2)
# ---------------------------------------------------------------------------------------------------
def dot_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """Dot-product scores q . k for every query-key pair: (..., T_q, d) x (..., T_k, d) -> (..., T_q, T_k)."""
    return q @ k.transpose(-2, -1)


def scaled_dot_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """Scaled dot-product scores q . k / sqrt(d_k), Vaswani et al. (2017) eq. 1: (..., T_q, T_k)."""
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])


def cosine_scores(q: torch.Tensor, k: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """Cosine similarity q . k / (|q| |k|), the cosine of the angle (not the angle): (..., T_q, T_k)."""
    q_unit = q / q.norm(dim=-1, keepdim=True).clamp_min(eps)
    k_unit = k / k.norm(dim=-1, keepdim=True).clamp_min(eps)
    return q_unit @ k_unit.transpose(-2, -1)


class AdditiveScore(nn.Module):
    """Additive (MLP) score tanh(q W_q + k W_k) w (row vectors), Bahdanau et al. (2015): (..., T_q, T_k)."""

    def __init__(self, d_q: int, d_k: int, d_hidden: int):
        super().__init__()
        self.w_q = nn.Linear(d_q, d_hidden, bias=False)
        self.w_k = nn.Linear(d_k, d_hidden, bias=False)
        self.w = nn.Linear(d_hidden, 1, bias=False)

    def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        # (..., T_q, 1, h) + (..., 1, T_k, h) -> (..., T_q, T_k, h) -> (..., T_q, T_k)
        hidden = torch.tanh(self.w_q(q).unsqueeze(-2) + self.w_k(k).unsqueeze(-3))
        return self.w(hidden).squeeze(-1)


# ---------------------------------------------------------------------------------------------------
# Scaled dot-product attention (chapters 3-4)
# ---------------------------------------------------------------------------------------------------
def scaled_dot_product_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    dropout_p: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(Q K^T / sqrt(d_k)) V, Vaswani et al. (2017) eq. 1; returns (outputs, weights).

    q: (..., T_q, d_k), k: (..., T_k, d_k), v: (..., T_k, d_v); mask: bool, True = may attend,
    broadcastable to (..., T_q, T_k). Outputs (..., T_q, d_v), weights (..., T_q, T_k).
    """
    if q.dim() < 2 or k.dim() < 2 or v.dim() < 2:
        raise ValueError(
            f"q, k, v need at least 2 dims (..., T, d); got {tuple(q.shape)}, {tuple(k.shape)}, "
            f"{tuple(v.shape)}"
        )
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"queries and keys must have the same size d_k to be compared: q has {q.shape[-1]}, "
            f"k has {k.shape[-1]}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"every key needs a value: k has T_k={k.shape[-2]} rows, v has {v.shape[-2]}"
        )
    scores = scaled_dot_scores(q, k)  # (..., T_q, T_k)
    if mask is not None:
        _check_mask(mask, scores.shape)
        if torch.broadcast_shapes(mask.shape, scores.shape) != scores.shape:
            raise ValueError(
                f"mask of shape {tuple(mask.shape)} would enlarge the scores {tuple(scores.shape)} "
                "(it has more or longer leading dims); give it at most the scores' dims, e.g. "
                "(B, 1, T_q, T_k) for (B, H, T_q, T_k) scores"
            )
        check_mask_rows(mask)
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)  # each row sums to 1 over the keys
    if dropout_p > 0.0:
        weights = F.dropout(weights, p=dropout_p)
    return weights @ v, weights  # (..., T_q, T_k) @ (..., T_k, d_v) -> (..., T_q, d_v)


class SingleHeadAttention(nn.Module):
    """One attention layer: queries from one sequence, keys and values from another (chapter 3).

    Learned projections W_Q (d_model x d_k), W_K (d_kv x d_k), W_V (d_kv x d_v); forward takes
    query (B, T_q, d_model) and memory (B, T_k, d_kv) and returns (B, T_q, d_v) and weights
    (B, T_q, T_k).
    """

    def __init__(self, d_model: int, d_k: int | None = None, d_v: int | None = None,
                 d_kv: int | None = None, bias: bool = False):
        super().__init__()
        d_k, d_v, d_kv = d_k or d_model, d_v or d_model, d_kv or d_model
        self.d_model, self.d_k, self.d_v = d_model, d_k, d_v
        self.w_q = nn.Linear(d_model, d_k, bias=bias)
        self.w_k = nn.Linear(d_kv, d_k, bias=bias)
        self.w_v = nn.Linear(d_kv, d_v, bias=bias)

    def forward(self, query: torch.Tensor, memory: torch.Tensor,
                mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        check_sequence(query, self.w_q.in_features, "query")
        check_sequence(memory, self.w_k.in_features, "memory")
        q, k, v = self.w_q(query), self.w_k(memory), self.w_v(memory)  # (B, T, d_k|d_v)
        return scaled_dot_product_attention(q, k, v, mask)


class SelfAttention(SingleHeadAttention):
    """Single-head self-attention: Q, K and V all come from the same sequence x (chapter 4)."""

    def __init__(self, d_model: int, d_k: int | None = None, d_v: int | None = None,
                 bias: bool = False):
        super().__init__(d_model, d_k=d_k, d_v=d_v, d_kv=d_model, bias=bias)

    def forward(self, x: torch.Tensor,  # type: ignore[override]
                mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        return super().forward(x, x, mask)


def check_sequence(x: torch.Tensor, d: int, name: str) -> None:
    """Raise a clear ValueError unless ``x`` is a (batch, seq_len, d) tensor; ``name`` names it."""
    if not isinstance(x, torch.Tensor) or x.dim() != 3:
        shape = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
        raise ValueError(f"{name} must be (batch, seq_len, {d}), got {shape}")
    if x.shape[-1] != d:
        raise ValueError(f"{name} must have {d} features in its last dim, got {x.shape[-1]} "
                         f"(shape {tuple(x.shape)})")


# ---------------------------------------------------------------------------------------------------
# Multi-head attention (chapter 5)
# ---------------------------------------------------------------------------------------------------
class MultiHeadAttention(nn.Module):
    """Multi-head attention, Vaswani et al. (2017) section 3.2.2, batch first.

    concat(head_1..head_H) W_O with head_h = softmax(Q W_Q^h (K W_K^h)^T / sqrt(D)) V W_V^h, computed
    with one (C x C) projection per role and a reshape into H heads of size D = C / H.
    """

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True):
        super().__init__()
        if num_heads < 1 or d_model % num_heads != 0:
            raise ValueError(
                f"d_model must be divisible by num_heads so each head gets d_model / num_heads "
                f"features; got d_model={d_model}, num_heads={num_heads}"
            )
        self.d_model, self.num_heads, self.d_head = d_model, num_heads, d_model // num_heads
        self.dropout = dropout
        self.w_q = nn.Linear(d_model, d_model, bias=bias)
        self.w_k = nn.Linear(d_model, d_model, bias=bias)
        self.w_v = nn.Linear(d_model, d_model, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        return x.view(b, t, self.num_heads, self.d_head).transpose(1, 2)  # (B, T, C) -> (B, H, T, D)

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        key_mask: torch.Tensor | None = None,
        attn_mask: torch.Tensor | None = None,
        need_weights: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """query (B, T_q, C), key and value (B, T_k, C) -> outputs (B, T_q, C), weights (B, H, T_q, T_k).

        key_mask: (B, T_k) bool, True at real keys. attn_mask: (T_q, T_k) or (B, T_q, T_k) bool,
        True = may attend. Weights are returned per head when ``need_weights`` is True, else None.
        """
        for name, x in (("query", query), ("key", key), ("value", value)):
            check_sequence(x, self.d_model, name)
        b, t_q, t_k = query.shape[0], query.shape[1], key.shape[1]
        if key.shape[:2] != value.shape[:2] or key.shape[0] != b:
            raise ValueError(f"query, key and value must share the batch size and key and value the "
                             f"length; got {tuple(query.shape)}, {tuple(key.shape)}, "
                             f"{tuple(value.shape)}")
        mask = None
        if key_mask is not None:
            _check_mask(key_mask, torch.Size([b, t_k]), "key_mask")
            if key_mask.shape != (b, t_k):
                raise ValueError(f"key_mask must be (B, T_k) = {(b, t_k)}, got {tuple(key_mask.shape)}")
            mask = key_mask[:, None, None, :]  # (B, T_k) -> (B, 1, 1, T_k)
        if attn_mask is not None:
            if not isinstance(attn_mask, torch.Tensor):  # a list or array: say what is expected
                _check_mask(attn_mask, torch.Size([b, t_q, t_k]), "attn_mask")
            if attn_mask.dim() not in (2, 3) or attn_mask.shape[-2:] != (t_q, t_k):
                raise ValueError(f"attn_mask must be (T_q, T_k) = {(t_q, t_k)} or (B, T_q, T_k), got "
                                 f"{tuple(attn_mask.shape)}")
            if attn_mask.dim() == 3 and attn_mask.shape[0] not in (1, b):
                raise ValueError(f"a 3-D attn_mask must be (B, T_q, T_k) with B={b}, got "
                                 f"{tuple(attn_mask.shape)}; the (B * H, T_q, T_k) layout of "
                                 "nn.MultiheadAttention is not used here")
            _check_mask(attn_mask, torch.Size([b, t_q, t_k]), "attn_mask")
            extra = attn_mask if attn_mask.dim() == 2 else attn_mask[:, None]  # (B, 1, T_q, T_k)
            mask = extra if mask is None else mask & extra
        q = self._split(self.w_q(query))  # (B, H, T_q, D)
        k = self._split(self.w_k(key))  # (B, H, T_k, D)
        v = self._split(self.w_v(value))  # (B, H, T_k, D)
        p = self.dropout if self.training else 0.0
        out, weights = scaled_dot_product_attention(q, k, v, mask, dropout_p=p)  # (B, H, T_q, D)
        out = out.transpose(1, 2).reshape(b, t_q, self.d_model)  # (B, H, T_q, D) -> (B, T_q, C)
        return self.w_o(out), (weights if need_weights else None)


@torch.no_grad()
def copy_from_torch_mha(ours: MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    """Copy the weights of a PyTorch ``nn.MultiheadAttention`` (same size) into ours, in place.

    PyTorch stores W_Q, W_K, W_V stacked in ``in_proj_weight`` (3C, C) as column-convention matrices
    (y = x W^T), exactly the layout of ``nn.Linear.weight``.
    """
    if theirs.embed_dim != ours.d_model or theirs.num_heads != ours.num_heads:
        raise ValueError(
            f"sizes differ: ours d_model={ours.d_model}, num_heads={ours.num_heads}; "
            f"theirs embed_dim={theirs.embed_dim}, num_heads={theirs.num_heads}"
        )
    if theirs.in_proj_weight is None:
        raise ValueError("nn.MultiheadAttention with separate kdim/vdim is not supported")
    w_q, w_k, w_v = theirs.in_proj_weight.chunk(3)
    for linear, w in ((ours.w_q, w_q), (ours.w_k, w_k), (ours.w_v, w_v)):
        linear.weight.copy_(w)
    ours.w_o.weight.copy_(theirs.out_proj.weight)
    has_bias = theirs.in_proj_bias is not None
    if has_bias != (ours.w_q.bias is not None):
        raise ValueError("one module has biases and the other has not; build both with the same bias")
    if has_bias:
        b_q, b_k, b_v = theirs.in_proj_bias.chunk(3)
        for linear, b in ((ours.w_q, b_q), (ours.w_k, b_k), (ours.w_v, b_v)):
            linear.bias.copy_(b)
        ours.w_o.bias.copy_(theirs.out_proj.bias)
