"""A small training loop with progress bars, reused by every chapter that trains a model.

The loop knows nothing about the model: the caller passes ``step``, a function that takes the model
and one batch and returns the loss (a scalar tensor). That keeps one loop for the RNN of chapter 1,
the attention layers of chapters 3-5 and the Transformer of chapters 7-9.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn
from tqdm import tqdm

from utils import checkpoints
from utils.language import show


@dataclass
class History:
    """What a training run recorded: the loss of every step, the mean loss of every epoch, seconds."""

    step_losses: list[float] = field(default_factory=list)
    epoch_losses: list[float] = field(default_factory=list)
    epoch_metrics: list[dict[str, float]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def final_loss(self) -> float:
        """Mean loss of the last epoch."""
        if not self.epoch_losses:
            raise ValueError("no epoch has finished yet")
        return self.epoch_losses[-1]


def fit(
    model: nn.Module,
    batches: Callable[[int], Iterable[Any]] | Iterable[Any],
    step: Callable[[nn.Module, Any], torch.Tensor],
    optimizer: torch.optim.Optimizer,
    *,
    epochs: int = 1,
    grad_clip: float | None = 1.0,
    scheduler: Any | None = None,
    on_epoch_end: Callable[[int], dict[str, float] | None] | None = None,
    desc: str = "training",
    progress: bool = True,
) -> History:
    """Train ``model`` for ``epochs`` passes and return its ``History``.

    ``batches`` is either an iterable re-read every epoch or a function ``epoch -> iterable`` (handy
    to reshuffle with a per-epoch seed). ``step(model, batch)`` returns the loss to minimise.
    ``on_epoch_end(epoch)`` may return metrics (e.g. validation accuracy) shown on the bar.
    """
    if epochs < 1:
        raise ValueError(f"epochs must be at least 1, got {epochs}")
    if grad_clip is not None and grad_clip <= 0:
        raise ValueError(f"grad_clip must be positive or None, got {grad_clip}")
    kept = _kept_run(model, batches, step, optimizer, scheduler, desc, epochs)
    if isinstance(kept, History):
        return kept
    history = History()
    start = time.perf_counter()
    plain = plain_progress()
    bar = ProgressBar(epochs, desc, enabled=progress and not plain)
    try:
        for epoch in range(epochs):
            model.train()
            epoch_batches = batches(epoch) if callable(batches) else batches
            total, count = 0.0, 0
            for batch in epoch_batches:
                loss = step(model, batch)
                if not isinstance(loss, torch.Tensor) or loss.dim() != 0:
                    raise TypeError(f"step must return a scalar loss tensor, got {loss!r:.80}")
                if not torch.isfinite(loss):
                    raise FloatingPointError(
                        f"the loss became {loss.item()} at epoch {epoch}; try a smaller learning rate"
                    )
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                if grad_clip is not None:
                    nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
                optimizer.step()
                if scheduler is not None:
                    scheduler.step()
                history.step_losses.append(loss.item())
                total += loss.item()
                count += 1
            if count == 0:
                raise ValueError(f"epoch {epoch} had no batches: is the data empty?")
            history.epoch_losses.append(total / count)
            metrics = {"loss": total / count}
            if on_epoch_end is not None:
                model.eval()
                extra = on_epoch_end(epoch) or {}
                metrics.update(extra)
                history.epoch_metrics.append(dict(extra))
            bar.update({k: f"{v:.4g}" for k, v in metrics.items()})
    finally:
        bar.close()  # also after an error: the saved output shows where it stopped
    history.seconds = time.perf_counter() - start
    if progress and plain:
        shown = ", ".join(f"{k} {v:.4g}" for k, v in metrics.items())
        show(f"{desc}: {epochs} epochs in {history.seconds:.1f} s ({shown})")
    if kept is not None:  # the teacher's reference run: keep the result for grading
        checkpoints.write(kept, model, optimizer, scheduler, history)
    return history


def _kept_run(model: nn.Module, batches: Any, step: Callable, optimizer: torch.optim.Optimizer,
              scheduler: Any, desc: str, epochs: int) -> History | Path | None:
    """Under grading with kept runs (utils.checkpoints): the loaded History of this run when it was
    kept, the Path to write it to in the reference run, else None (train as usual)."""
    if checkpoints.folder() is None:
        return None
    key = checkpoints.run_key(model, batches, step, optimizer, desc, epochs)
    path = checkpoints.path_for(key, desc) if key else None
    if path is None:
        return None
    if checkpoints.writing():
        return path
    if not path.is_file():
        return None
    history = checkpoints.load(path, model, optimizer, scheduler)
    show(f"{desc}: the reference run's {len(history.epoch_losses)} epochs loaded from "
          f"{path.name} (trained in {history.seconds:.1f} s there; COURSE_CHECKPOINTS)")
    return history


def plain_progress() -> bool:
    """True when progress should be one printed line instead of a live bar (env COURSE_PLAIN_PROGRESS=1).

    The book build sets it: a static page cannot animate a bar, and a widget would need JavaScript
    from the internet, so the book shows the finished run's summary line instead.
    """
    return os.environ.get("COURSE_PLAIN_PROGRESS", "") not in ("", "0")


class ProgressBar:
    """The bar ``fit`` shows: a live widget in Jupyter that is saved in its final state, else tqdm text.

    A Jupyter widget is stored in the notebook file together with a plain-text copy for viewers that
    cannot run widgets (GitHub, nbviewer, a notebook reopened without its widget state). That copy
    is taken when the widget is first displayed, so it would read "0%" forever. This bar displays
    its widget under a display id and, when closed, displays it again under the same id: the
    saved copy is then the finished bar ("100%|...| 8/8", or how far it got before an error),
    while JupyterLab and Colab keep showing the live widget.
    """

    def __init__(self, total: int, desc: str, enabled: bool = True) -> None:
        self._handle = None
        if enabled and _jupyter_widgets():
            from IPython.display import display
            from tqdm.notebook import tqdm as notebook_tqdm

            self._bar = notebook_tqdm(total=total, desc=desc, unit="epoch", display=False)
            self._handle = display(self._bar.container, display_id=True)
        else:
            self._bar = tqdm(total=total, desc=desc, unit="epoch", disable=not enabled)

    def update(self, postfix: dict[str, str]) -> None:
        """One more epoch done, with the metrics to show next to the bar."""
        self._bar.set_postfix(postfix, refresh=False)
        self._bar.update(1)

    def close(self) -> None:
        """Finish the bar; in Jupyter, replace its saved text by the final state."""
        self._bar.close()
        if self._handle is not None:
            self._handle.update(self._bar.container)


def _jupyter_widgets() -> bool:
    """True inside a Jupyter kernel (JupyterLab, Colab, nbclient) that can show ipywidgets."""
    try:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is None or "IPKernelApp" not in shell.config:
            return False
        import ipywidgets  # noqa: F401
    except Exception:  # IPython or ipywidgets missing, or an unusual shell
        return False
    return True


def count_parameters(model: nn.Module) -> int:
    """Number of trainable parameters of ``model``."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def warmup_schedule(optimizer: torch.optim.Optimizer, warmup_steps: int,
                    total_steps: int) -> torch.optim.lr_scheduler.LambdaLR:
    """Linear warm-up for ``warmup_steps`` then cosine decay to 10% by ``total_steps``."""
    if not 0 <= warmup_steps < total_steps:
        raise ValueError(
            f"need 0 <= warmup_steps < total_steps, got warmup_steps={warmup_steps}, "
            f"total_steps={total_steps}"
        )

    def factor(step: int) -> float:
        if step < warmup_steps:
            return (step + 1) / warmup_steps
        progress = min(1.0, (step - warmup_steps) / max(1, total_steps - warmup_steps))
        return 0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * progress))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


# ---------------------------------------------------------------------------------------------------
# Evaluating a translation model (chapters 1, 3, 8)
# ---------------------------------------------------------------------------------------------------
@dataclass
class TranslationScores:
    """Exact-match and token accuracy of a model's translations, overall and per source length."""

    exact_match: float
    token_accuracy: float
    by_length: dict[int, float]  # source length -> exact-match rate
    counts: dict[int, int]  # source length -> number of sentences
    predictions: list[list[str]]

    def binned(self, edges: list[int]) -> tuple[list[str], list[float]]:
        """Exact match over length bins [edges[i], edges[i+1]): labels and rates (for a plot)."""
        labels, rates = [], []
        for lo, hi in zip(edges[:-1], edges[1:], strict=True):
            n = sum(c for length, c in self.counts.items() if lo <= length < hi)
            if n == 0:
                continue
            hits = sum(self.by_length[length] * c for length, c in self.counts.items()
                       if lo <= length < hi)
            labels.append(f"{lo}-{hi - 1}")
            rates.append(hits / n)
        return labels, rates


@torch.no_grad()
def evaluate_translation(
    translate: Callable[[Any], torch.Tensor],
    pairs: list[Any],
    src_vocab: Any,
    tgt_vocab: Any,
    *,
    batch_size: int = 250,
    device: torch.device | str = "cpu",
) -> TranslationScores:
    """Translate ``pairs`` with ``translate(batch) -> (B, T_out) ids`` and score the results.

    Exact match counts a sentence as right only if every word and the length are right; token accuracy
    compares position by position up to the reference length.
    """
    from utils.data import make_batch  # local import keeps train.py free of data-format assumptions

    if not pairs:
        raise ValueError("evaluate_translation got no pairs")
    kept = _kept_evaluation(translate, pairs, src_vocab, tgt_vocab, batch_size, device)
    if isinstance(kept, TranslationScores):
        return kept
    hits: dict[int, int] = {}
    counts: dict[int, int] = {}
    tokens_right = tokens_total = 0
    predictions: list[list[str]] = []
    for i in range(0, len(pairs), batch_size):
        chunk = pairs[i:i + batch_size]
        ids = translate(make_batch(chunk, src_vocab, tgt_vocab).to(device)).cpu()
        if ids.dim() != 2 or ids.shape[0] != len(chunk):
            raise ValueError(f"translate must return (batch, out_len) ids for {len(chunk)} "
                             f"sentences, got shape {tuple(ids.shape)}")
        for pair, row in zip(chunk, ids, strict=True):
            words = tgt_vocab.decode(row)
            predictions.append(words)
            ref = list(pair.tgt)
            length = len(pair.src)
            counts[length] = counts.get(length, 0) + 1
            hits[length] = hits.get(length, 0) + int(words == ref)
            tokens_right += sum(int(a == b) for a, b in zip(words, ref, strict=False))
            tokens_total += len(ref)
    by_length = {n: hits[n] / counts[n] for n in sorted(counts)}
    scores = TranslationScores(
        exact_match=sum(hits.values()) / len(pairs),
        token_accuracy=tokens_right / tokens_total,
        by_length=by_length,
        counts=dict(sorted(counts.items())),
        predictions=predictions,
    )
    if kept is not None:  # the teacher's reference run: keep the scores for grading
        checkpoints.write_evaluation(kept, scores)
    return scores


def _kept_evaluation(translate: Callable, pairs: list[Any], src_vocab: Any, tgt_vocab: Any,
                     batch_size: int, device: torch.device | str) -> TranslationScores | Path | None:
    """Under grading with kept runs (utils.checkpoints), for a package translator: the scores the
    reference run measured, or in the reference run the Path to keep them at; else None."""
    from utils.data import make_batch

    if checkpoints.folder() is None or not hasattr(translate, "kept_as"):
        return None
    model, settings = translate.kept_as
    first = make_batch(pairs[:8], src_vocab, tgt_vocab).to(device)
    was_training = model.training
    model.eval()
    try:
        path = checkpoints.evaluation_path(model, f"{settings}, batches of {batch_size}", pairs,
                                           lambda: model(first.src, first.tgt_in))
    finally:
        model.train(was_training)
    if path is None or checkpoints.writing():
        return path  # None: nothing kept; a Path: the reference run keeps the scores there
    if not path.is_file():
        return None  # not kept (another model or other settings): evaluate as usual
    model.eval()  # as decoding would have left it (utils.translation decodes in evaluation mode)
    return checkpoints.load_evaluation(path)
