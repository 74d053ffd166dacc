"""Training and decoding a translator of real sentences (Tatoeba English -> Chinese, ``utils.tatoeba``).

Real sentences differ in length far more than the synthetic ones, so batches are built by length
(``token_batches``): shuffled chunks of the training pairs are sorted by length and cut into batches
of at most ``max_tokens`` padded positions, so that little of each batch is padding. Decoding for BLEU
(``decode_texts``) also sorts by length and returns text: Chinese characters joined without spaces,
``<unk>`` written as one "□". ``train_with_curve`` trains with ``utils.train.fit`` and records, after
every epoch, the training seconds so far and the BLEU of greedy decoding on part of the validation
split: the learning curve.

Shape legend: B batch, S source tokens, T target tokens.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import torch
from torch import nn

from utils import checkpoints
from utils.bleu import corpus_bleu
from utils.cached_decoding import beam_search_cached, greedy_decode_cached
from utils.data import Batch, Pair, Vocab, make_batch
from utils.subwords import UNK
from utils.tatoeba import TatoebaData, detokenize_zh, english_words, normalize_en
from utils.train import History, fit, warmup_schedule
from utils.translation import teacher_forcing_loss


def token_batches(pairs: Sequence[Pair], src_vocab: Vocab, tgt_vocab: Vocab, max_tokens: int = 2_000,
                  seed: int = 0, chunk: int = 4_096) -> list[Batch]:
    """Batches of ``pairs`` grouped by length: each of at most ``max_tokens`` padded positions
    (batch size times its longest sentence, <bos> and <eos> counted); the same ``seed``, the same
    batches in the same order."""
    if max_tokens < 1 or chunk < 1:
        raise ValueError(f"max_tokens and chunk must be at least 1, got {max_tokens} and {chunk}")
    rng = random.Random(seed)
    order = list(range(len(pairs)))
    rng.shuffle(order)
    groups: list[list[int]] = []
    for start in range(0, len(order), chunk):  # sort within chunks: batches differ from epoch to epoch
        part = sorted(order[start:start + chunk], key=lambda j: (len(pairs[j].src), len(pairs[j].tgt)))
        group: list[int] = []
        longest = 0
        for j in part:
            size = max(len(pairs[j].src), len(pairs[j].tgt)) + 2
            if size > max_tokens:
                raise ValueError(f"pair {j} needs {size} positions, more than max_tokens={max_tokens}")
            if group and max(longest, size) * (len(group) + 1) > max_tokens:
                groups.append(group)
                group, longest = [], 0
            group.append(j)
            longest = max(longest, size)
        if group:
            groups.append(group)
    rng.shuffle(groups)
    return [make_batch([pairs[j] for j in group], src_vocab, tgt_vocab) for group in groups]


def _text(ids: Sequence[int], vocab: Vocab) -> str:
    """Chinese text of a decoded id sequence: up to <eos>, padding and <bos> dropped."""
    chars = []
    for i in ids:
        if i == vocab.eos_id:
            break
        if i not in (vocab.pad_id, vocab.bos_id):
            chars.append(vocab.itos[i])
    return detokenize_zh(chars)


def _decode(model: nn.Module, batch: Batch, beam_size: int, length_penalty: float,
            max_new_tokens: int | None = None) -> torch.Tensor:
    """(B, T_out) ids of the model's output for ``batch``'s sources."""
    if hasattr(model, "config"):  # the Transformer: utils.translation's decoders with a key-value cache
        if beam_size == 1:
            return greedy_decode_cached(model, batch.src, max_new_tokens)
        return beam_search_cached(model, batch.src, beam_size, max_new_tokens, length_penalty)
    if beam_size != 1:
        raise ValueError(f"beam search is written for the Transformer; got beam_size={beam_size} for "
                         f"{type(model).__name__}")
    model.eval()
    return model.translate(batch, max_new_tokens)  # the GRU of chapter 1 (utils.rnn): greedy


@torch.no_grad()
def decode_texts(model: nn.Module, pairs: Sequence[Pair], data: TatoebaData, *, beam_size: int = 1,
                 length_penalty: float = 0.6, batch_size: int = 100, max_new_tokens: int | None = None,
                 device: torch.device | str = "cpu") -> list[str]:
    """The model's Chinese for every pair's source, in the order of ``pairs`` (decoded in batches of
    similar length; greedy for ``beam_size`` 1, else beam search with Wu et al.'s length penalty; at
    most ``max_new_tokens`` characters, by default twice the batch's longest source plus 10).
    Kept under grading like every evaluation (``utils.checkpoints``)."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    kept = _kept_texts(model, pairs, data, f"beam {beam_size}, alpha {length_penalty}, at most "
                       f"{max_new_tokens}, batches of {batch_size}", device)
    if isinstance(kept, list):
        return kept
    texts: list[str] = [""] * len(pairs)
    order = sorted(range(len(pairs)), key=lambda j: len(pairs[j].src))
    for start in range(0, len(order), batch_size):
        group = order[start:start + batch_size]
        batch = make_batch([pairs[j] for j in group], data.src_vocab, data.tgt_vocab).to(device)
        out = _decode(model, batch, beam_size, length_penalty, max_new_tokens)  # (B, T_out)
        for j, row in zip(group, out.tolist(), strict=True):
            texts[j] = _text(row, data.tgt_vocab)
    if kept is not None:
        checkpoints.write_evaluation(kept, texts)
    return texts


def _kept_texts(model: nn.Module, pairs: Sequence[Pair], data: TatoebaData, settings: str,
                device: torch.device | str) -> list[str] | object | None:
    """Under grading with kept runs: the texts the reference run decoded, or where to keep them."""
    if checkpoints.folder() is None or not pairs:
        return None
    first = make_batch(list(pairs[:4]), data.src_vocab, data.tgt_vocab).to(device)
    was_training = model.training
    model.eval()
    try:
        if hasattr(model, "config"):
            probe = lambda: model(first.src, first.tgt_in)  # noqa: E731
        else:
            probe = lambda: model(first)  # noqa: E731
        path = checkpoints.evaluation_path(model, f"texts, {settings}", list(pairs), probe)
    finally:
        model.train(was_training)
    if path is None or checkpoints.writing():
        return path
    if not path.is_file():
        return None
    model.eval()
    return checkpoints.load_evaluation(path)


def bleu_of(model: nn.Module, data: TatoebaData, split: str = "test", n: int | None = None,
            **decoding: Any) -> float:
    """Corpus BLEU (sacrebleu, ``zh`` tokenizer, every reference) of the model on the first ``n``
    sentences of ``split`` (all by default)."""
    pairs = {"valid": data.valid, "test": data.test}[split][:n]
    references = data.references(split)[:n]  # type: ignore[arg-type]
    return corpus_bleu(decode_texts(model, pairs, data, **decoding), references).score


def train_with_curve(model: nn.Module, data: TatoebaData, *, epochs: int, max_tokens: int = 2_000,
                     lr: float = 3e-3, warmup_steps: int = 100, label_smoothing: float = 0.1,
                     n_curve: int = 400, parts_per_epoch: int = 1, seed: int = 0,
                     device: torch.device | str = "cpu",
                     loss: Callable[[nn.Module, Batch], torch.Tensor] | None = None,
                     desc: str = "Transformer", progress: bool = True) -> History:
    """Adam (betas 0.9, 0.98) with warm-up and cosine decay on length-grouped batches. Each epoch is
    cut into ``parts_per_epoch`` parts (one tick of the progress bar each); after every part
    ``history.epoch_metrics`` records the epochs done, the training seconds so far (evaluation
    excluded) and, with ``n_curve`` > 0, the greedy BLEU on the first ``n_curve`` validation sentences.
    ``loss`` defaults to the Transformer's teacher-forced cross-entropy with ``label_smoothing``."""
    if epochs < 1 or lr <= 0 or n_curve < 0 or parts_per_epoch < 1:
        raise ValueError(f"need epochs >= 1, lr > 0, n_curve >= 0 and parts_per_epoch >= 1; got "
                         f"{epochs}, {lr}, {n_curve}, {parts_per_epoch}")
    step = loss or partial(teacher_forcing_loss, label_smoothing=label_smoothing)
    per_epoch = len(token_batches(data.train, data.src_vocab, data.tgt_vocab, max_tokens, seed))
    if per_epoch < parts_per_epoch:
        raise ValueError(f"an epoch has {per_epoch} batches, fewer than parts_per_epoch={parts_per_epoch}")
    total = epochs * per_epoch
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-9)
    clock = _Clock()

    def part_batches(part: int) -> Iterator[Batch]:
        epoch, k = divmod(part, parts_per_epoch)
        batches = token_batches(data.train, data.src_vocab, data.tgt_vocab, max_tokens, seed + epoch)
        bounds = [round(i * len(batches) / parts_per_epoch) for i in range(parts_per_epoch + 1)]
        return (b.to(device) for b in batches[bounds[k]:bounds[k + 1]])

    def on_part_end(part: int) -> dict[str, float]:
        metrics = {"epochs": (part + 1) / parts_per_epoch, "seconds": clock.training_seconds()}
        if n_curve:
            metrics["valid_bleu"] = bleu_of(model, data, "valid", n_curve, device=device)
        clock.evaluated()
        return metrics

    return fit(model, part_batches, step, optimizer, epochs=epochs * parts_per_epoch,
               scheduler=warmup_schedule(optimizer, min(warmup_steps, total - 1), total),
               on_epoch_end=on_part_end, desc=desc, progress=progress)


class _Clock:
    """Training seconds, the time spent evaluating left out."""

    def __init__(self) -> None:
        import time

        self._now = time.perf_counter
        self.start = self._now()
        self.spent_evaluating = 0.0
        self._paused_at: float | None = None

    def training_seconds(self) -> float:
        self._paused_at = self._now()
        return self._paused_at - self.start - self.spent_evaluating

    def evaluated(self) -> None:
        if self._paused_at is not None:
            self.spent_evaluating += self._now() - self._paused_at
            self._paused_at = None


@dataclass(frozen=True)
class Translation:
    """One sentence translated: the English as the model read it, its Chinese, and what it could not
    read (words with a character no training sentence had, shown as <unk>)."""

    english: str
    chinese: str
    unknown: tuple[str, ...]


@torch.no_grad()
def translate_sentence(model: nn.Module, data: TatoebaData, english: str, *, beam_size: int = 4,
                       length_penalty: float = 0.6, device: torch.device | str = "cpu") -> Translation:
    """Translate one English sentence of your own; unknown characters are reported, not hidden."""
    if not isinstance(english, str) or not english.strip():
        raise ValueError(f"give an English sentence as a non-empty string, got {english!r}")
    symbols = data.english.tokenize(english)
    if len(symbols) + 2 > getattr(getattr(model, "config", None), "max_len", math.inf):
        raise ValueError(f"the sentence has {len(symbols)} symbols after tokenisation, more than the "
                         f"model's max_len allows")
    unknown = tuple(w for w in english_words(normalize_en(english))
                    if any(s == UNK or s not in data.src_vocab.stoi for s in data.english.encode_word(w)))
    batch = make_batch([Pair(symbols, ("。",), ())], data.src_vocab, data.tgt_vocab).to(device)
    out = _decode(model, batch, beam_size, length_penalty)
    return Translation(normalize_en(english), _text(out[0].tolist(), data.tgt_vocab), unknown)

