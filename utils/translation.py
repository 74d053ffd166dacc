"""Decoding and training of the encoder-decoder Transformer on a translation task (chapter 8).

Shape legend: B batch, S source tokens, T target tokens, C = d_model, V vocabulary size, K beam size.

- ``greedy_decode(model, src)`` and ``beam_search(model, src, beam_size)``: one token at a time from
  ``<bos>``, each output fed back in, until ``<eos>``; (B, S) ids -> (B, T_out) ids.
- ``teacher_forcing_loss(model, batch)``: the training loss, all target positions in parallel.
- ``translator(model, beam_size)``: a ``translate(batch)`` function for ``utils.train.evaluate_translation``.
- ``train_translation(model, data, epochs=...)``: Adam with warm-up and progress bars (``utils.train.fit``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from functools import partial

import torch
import torch.nn.functional as F

from utils.data import Batch, TranslationData, batches
from utils.train import History, evaluate_translation, fit, warmup_schedule
from utils.transformer import Transformer


# ---------------------------------------------------------------------------------------------------
# Decoding: one token at a time from <bos>, each output fed back in (chapter 8)
# ---------------------------------------------------------------------------------------------------
def _start(model: Transformer, src: torch.Tensor, max_new_tokens: int | None) -> tuple[torch.Tensor, int]:
    if max_new_tokens is not None and max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
    model.eval()  # decoding is inference: no dropout (the model stays in evaluation mode afterwards)
    limit = model.config.max_len - 1
    return src != model.config.pad_id, min(limit, max_new_tokens or 2 * src.shape[1] + 10)


class Recomputed:
    """How the teaching decoders get the next token's logits: the whole prefix through every decoder
    layer again at each step (``utils.cached_decoding`` keeps the keys and values instead)."""

    def __init__(self, model: Transformer, memory: torch.Tensor, src_mask: torch.Tensor):
        self.model, self.memory, self.src_mask = model, memory, src_mask

    def next_logits(self, ys: torch.Tensor) -> torch.Tensor:
        """ys (N, t) ids read so far -> (N, V) logits for the next token."""
        return self.model.decode(ys, self.memory, self.src_mask)[:, -1]  # last position only

    def keep(self, rows: torch.Tensor) -> None:
        """Beam search kept prefixes ``rows`` (N,) of the previous step: nothing is stored per prefix."""


Stepper = Callable[[Transformer, torch.Tensor, torch.Tensor], Recomputed]


@torch.no_grad()
def greedy_decode(model: Transformer, src: torch.Tensor, max_new_tokens: int | None = None,
                  stepper: Stepper = Recomputed) -> torch.Tensor:
    """Pick the most probable next token at each step: src (B, S) -> (B, T_out) ids after <bos>, padded."""
    src_mask, steps = _start(model, src, max_new_tokens)
    c = model.config
    step = stepper(model, model.encode(src, src_mask), src_mask)  # memory (B, S, C), computed once
    ys = torch.full((src.shape[0], 1), c.bos_id, dtype=torch.long, device=src.device)  # (B, 1)
    done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    for _ in range(steps):
        logits = step.next_logits(ys)  # (B, V)
        next_id = logits.argmax(-1).masked_fill(done, c.pad_id)  # (B,)
        ys = torch.cat([ys, next_id[:, None]], dim=1)  # feed the output back: (B, t) -> (B, t + 1)
        done |= next_id == c.eos_id
        if done.all():
            break
    return ys[:, 1:]


@torch.no_grad()
def beam_search(model: Transformer, src: torch.Tensor, beam_size: int = 4, max_new_tokens: int | None = None,
                length_penalty: float = 0.6, stepper: Stepper = Recomputed) -> torch.Tensor:
    """Keep the ``beam_size`` best prefixes per sentence (section 6.1: 4 beams, alpha 0.6): (B, T_out)."""
    if beam_size < 1:
        raise ValueError(f"beam_size must be at least 1, got {beam_size}")
    src_mask, steps = _start(model, src, max_new_tokens)
    c, b, k = model.config, src.shape[0], beam_size
    memory = model.encode(src, src_mask).repeat_interleave(k, dim=0)  # (B, S, C) -> (B*K, S, C)
    step = stepper(model, memory, src_mask.repeat_interleave(k, dim=0))  # mask (B*K, S)
    ys = torch.full((b * k, 1), c.bos_id, dtype=torch.long, device=src.device)  # (B*K, 1)
    scores = torch.full((b, k), float("-inf"), device=src.device)
    scores[:, 0] = 0.0  # one live beam at the start, so the K beams do not all repeat it
    done = torch.zeros(b * k, dtype=torch.bool, device=src.device)
    for _ in range(steps):
        logp = step.next_logits(ys).log_softmax(-1)  # (B*K, V)
        logp[done] = float("-inf")
        logp[done, c.pad_id] = 0.0  # a finished beam keeps its score and only grows padding
        cand = (scores.view(b * k, 1) + logp).view(b, -1)  # (B, K * V)
        scores, index = cand.topk(k, dim=-1)  # (B, K)
        beam = index // logp.shape[-1] + torch.arange(b, device=src.device)[:, None] * k  # (B, K)
        token = (index % logp.shape[-1]).view(-1)  # (B*K,)
        ys = torch.cat([ys[beam.view(-1)], token[:, None]], dim=1)  # (B*K, t + 1)
        step.keep(beam.view(-1))
        done = done[beam.view(-1)] | (token == c.eos_id)
        if done.all():
            break
    lengths = (ys[:, 1:] != c.pad_id).sum(-1).view(b, k).float()  # tokens up to and including <eos>
    best = (scores / ((5 + lengths) / 6) ** length_penalty).argmax(-1)  # Wu et al. (2016) penalty
    return ys.view(b, k, -1)[torch.arange(b), best, 1:]


# ---------------------------------------------------------------------------------------------------
# Training on a translation task (chapter 8)
# ---------------------------------------------------------------------------------------------------
def teacher_forcing_loss(model: Transformer, batch: Batch, label_smoothing: float = 0.0) -> torch.Tensor:
    """Cross-entropy of the logits for ``batch.tgt_in`` against ``batch.tgt_out``, padding ignored."""
    logits = model(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)  # (B, T, V)
    return F.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten(),
                           ignore_index=model.config.pad_id, label_smoothing=label_smoothing)


def translator(model: Transformer, beam_size: int = 1,
               max_new_tokens: int | None = None) -> Callable[[Batch], torch.Tensor]:
    """A ``translate(batch) -> (B, T_out) ids`` function for ``utils.train.evaluate_translation``.

    Its ``kept_as`` attribute, the model and the decoding settings, lets a grading run load the
    scores the reference run measured (``utils.checkpoints``)."""
    if beam_size == 1:
        def translate(batch: Batch) -> torch.Tensor:
            return greedy_decode(model, batch.src, max_new_tokens)
    else:
        def translate(batch: Batch) -> torch.Tensor:
            return beam_search(model, batch.src, beam_size, max_new_tokens)
    translate.kept_as = (model, f"beam {beam_size}, at most {max_new_tokens} tokens")
    return translate


def train_translation(model: Transformer, data: TranslationData, *, epochs: int, batch_size: int = 64,
                      lr: float = 1e-3, warmup_steps: int = 100, label_smoothing: float = 0.0,
                      n_eval: int = 0, seed: int = 0, device: torch.device | str = "cpu",
                      progress: bool = True) -> History:
    """Adam (betas 0.9, 0.98, section 5.3) with warm-up, teacher forcing; ``n_eval`` > 0 records the
    exact match of greedy decoding on that many validation sentences after each epoch, and every epoch
    records the training seconds so far (evaluation excluded)."""
    if epochs < 1 or batch_size < 1 or lr <= 0 or n_eval < 0:
        raise ValueError(f"need epochs >= 1, batch_size >= 1, lr > 0 and n_eval >= 0; got epochs={epochs}, "
                         f"batch_size={batch_size}, lr={lr}, n_eval={n_eval}")
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-9)
    steps = epochs * math.ceil(len(data.train) / batch_size)
    start, eval_seconds = time.perf_counter(), 0.0

    def evaluate(epoch: int) -> dict[str, float]:
        nonlocal eval_seconds
        seconds = time.perf_counter() - start - eval_seconds  # training time so far, evaluation excluded
        if n_eval == 0:
            return {"seconds": seconds}
        scores = evaluate_translation(translator(model), data.valid[:n_eval], data.src_vocab,
                                      data.tgt_vocab, device=device)
        eval_seconds = time.perf_counter() - start - seconds
        return {"valid_exact": scores.exact_match, "seconds": seconds}

    return fit(model, lambda epoch: (b.to(device) for b in batches(
                   data.train, data.src_vocab, data.tgt_vocab, batch_size, seed=seed + epoch)),
               partial(teacher_forcing_loss, label_smoothing=label_smoothing), optimizer, epochs=epochs,
               scheduler=warmup_schedule(optimizer, min(warmup_steps, steps - 1), steps),
               on_epoch_end=evaluate, desc="Transformer", progress=progress)
