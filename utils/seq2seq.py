"""A translator made of one attention layer and no recurrence, the model of chapter 3.

Shape legend: B batch, S source tokens, T target tokens, C = d_model, V target vocabulary size.
Masks are bool, True = real token / may attend.

The recurrent states of chapter 1 are gone: keys and values are computed from the source *embeddings*
a_j and queries from the embeddings u_i of the decoder's input words (``<bos>`` y_1 .. y_n):

    c_i = sum_j alpha_ij (a_j W_V),   alpha_i = softmax_j((u_i W_Q) . (a_j W_K) / sqrt(d_k)),
    P(y_i | y_{i-1}, x) = softmax([u_i; c_i] W_out).

The layer is ``utils.attention.SingleHeadAttention``. The model sees the source as a *set* of words (no
positions) and the target only through the previous word, which is exactly what chapter 3 shows to
be too little; chapters 4-6 add self-attention and positions.

    model = AttentionOnlyTranslator(len(src_vocab), len(tgt_vocab), d_model=64)
    logits = model(batch)                        # teacher forcing: (B, T, V)
    ids, weights = model.translate(batch, return_weights=True)   # greedy: (B, T_out), (B, T_out, S)
"""

from __future__ import annotations

import torch
from torch import nn

from utils.attention import SingleHeadAttention
from utils.data import Batch, check_token_ids


def _check_batch(batch: Batch) -> None:
    for name in ("src", "tgt_in"):
        check_token_ids(getattr(batch, name), f"batch.{name}")
    if batch.src_mask.dtype != torch.bool or batch.src_mask.shape != batch.src.shape:
        raise ValueError(f"batch.src_mask must be a bool mask shaped like batch.src "
                         f"{tuple(batch.src.shape)}, True at real tokens; got {batch.src_mask.dtype} "
                         f"{tuple(batch.src_mask.shape)}")


class AttentionOnlyTranslator(nn.Module):
    """Target-input embeddings attend to source embeddings through one ``SingleHeadAttention`` (chapter 3)."""

    def __init__(self, src_vocab_size: int, tgt_vocab_size: int, d_model: int = 64,
                 pad_id: int = 0, bos_id: int = 1, eos_id: int = 2):
        super().__init__()
        self.pad_id, self.bos_id, self.eos_id = pad_id, bos_id, eos_id
        self.src_embed = nn.Embedding(src_vocab_size, d_model, padding_idx=pad_id)  # a_j
        self.tgt_embed = nn.Embedding(tgt_vocab_size, d_model, padding_idx=pad_id)  # u_i
        self.attention = SingleHeadAttention(d_model)  # W_Q, W_K, W_V: (C, C) each
        self.out = nn.Linear(2 * d_model, tgt_vocab_size)  # logits from [u_i; c_i]

    def step(self, y_prev: torch.Tensor, src: torch.Tensor,
             src_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Previous words y_prev (B, T), source ids src (B, S) -> logits (B, T, V), weights (B, T, S)."""
        u = self.tgt_embed(y_prev)  # queries come from the decoder's input words: (B, T, C)
        a = self.src_embed(src)  # keys and values from the source words: (B, S, C)
        o, weights = self.attention(u, a, mask=src_mask[:, None, :])  # key mask (B, 1, S): (B, T, C)
        return self.out(torch.cat([u, o], dim=-1)), weights  # (B, T, 2C) -> (B, T, V)

    def forward(self, batch: Batch) -> torch.Tensor:
        """Teacher forcing: logits (B, T, V) for ``batch.tgt_in``, all positions at once."""
        _check_batch(batch)
        logits, _ = self.step(batch.tgt_in, batch.src, batch.src_mask)
        return logits

    @torch.no_grad()
    def translate(self, batch: Batch, max_len: int | None = None,
                  return_weights: bool = False) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Greedy decoding from <bos>, each output fed back as the next query: (B, T_out) ids.

        Stops when every sentence has produced <eos> or after ``max_len`` steps (default S + 5); after
        <eos> a sentence gets <pad>. With ``return_weights`` also returns the weights (B, T_out, S).
        """
        _check_batch(batch)
        b = batch.src.shape[0]
        max_len = max_len if max_len is not None else batch.src.shape[1] + 5
        y = torch.full((b, 1), self.bos_id, dtype=torch.long, device=batch.src.device)
        done = torch.zeros(b, dtype=torch.bool, device=batch.src.device)
        outputs, weights = [], []
        for _ in range(max_len):
            logits, w = self.step(y, batch.src, batch.src_mask)  # (B, 1, V), (B, 1, S)
            y = logits.argmax(dim=-1).masked_fill(done[:, None], self.pad_id)  # (B, 1), the next query
            outputs.append(y)
            weights.append(w)
            done |= y[:, 0] == self.eos_id
            if done.all():
                break
        ids = torch.cat(outputs, dim=1)  # (B, T_out)
        return (ids, torch.cat(weights, dim=1)) if return_weights else ids


def shuffle_source(batch: Batch, seed: int = 0) -> Batch:
    """The same batch with the real words of every source sentence in a random order (padding stays)."""
    generator = torch.Generator().manual_seed(seed)
    src = batch.src.clone()
    for row, n in enumerate(batch.src_lengths.tolist()):
        perm = torch.randperm(n, generator=generator).to(src.device)
        src[row, :n] = batch.src[row, :n][perm]
    return Batch(src, batch.tgt_in, batch.tgt_out, batch.src_mask, batch.tgt_mask, batch.src_lengths)
