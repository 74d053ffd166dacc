"""Trained models kept for grading: ``fit`` loads a run's result instead of training it again.

Grading a chapter used to train its models again for every submission (a minute or two per chapter-8
submission on two cores). The teacher's reference run now writes each training run's result into a
folder (``python -m classroom nbgrader checkpoints <assignment>``), and grading loads it:

- ``COURSE_CHECKPOINTS=<folder>``: where the results live; when only this is set, ``fit`` loads a run
  found there and trains the ones it does not find.
- ``COURSE_CHECKPOINTS_WRITE=1`` as well: train as usual and write every run there (the reference run).

A run is found by a key that says what it would compute: the training's description and length, the
optimiser's settings, the model's initial weights, and the loss of the first batch, rounded. A
learner's model whose code differs from the reference (a lab's repaired component, a new rung) gives
another first loss, so it is trained, never graded on the reference's weights. Loading restores the
model's weights, the optimiser's and scheduler's states, the history, and the random generators as the
reference run left them, so every later cell computes what it computed there.

Evaluations are kept the same way: ``utils.train.evaluate_translation`` with a package translator
(``utils.translation.translator``) loads the scores the reference run measured, keyed by the model's
weights, the decoding settings, the sentences, and the model's teacher-forced logits on the first
sentences (so a model whose code behaves differently is evaluated again). And in a grading run
``utils.efficient.time_call`` times each call once, without a warm-up: nothing graded is a time.

Nothing changes for a learner: without ``COURSE_CHECKPOINTS`` Run All trains as always.
"""

from __future__ import annotations

import hashlib
import os
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

FOLDER_ENV, WRITE_ENV = "COURSE_CHECKPOINTS", "COURSE_CHECKPOINTS_WRITE"


def folder() -> Path | None:
    """The checkpoint folder named by ``$COURSE_CHECKPOINTS``, or None."""
    text = os.environ.get(FOLDER_ENV, "").strip()
    return Path(text) if text else None


def writing() -> bool:
    """True in the reference run (``$COURSE_CHECKPOINTS_WRITE``): train, then keep each run."""
    return os.environ.get(WRITE_ENV, "").strip() not in ("", "0")


def grading() -> bool:
    """True in a grading run: kept runs are loaded (``$COURSE_CHECKPOINTS`` set, not writing)."""
    return folder() is not None and not writing()


def _rng_state() -> dict[str, Any]:
    state = {"python": random.getstate(), "numpy": np.random.get_state(),
             "torch": torch.random.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.random.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _digest_weights(digest: Any, model: nn.Module) -> None:
    """Feed every named weight of ``model`` into ``digest`` (what a kept run or evaluation is of)."""
    for name, tensor in model.state_dict().items():
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())


def run_key(model: nn.Module, batches: Any, step: Callable[[nn.Module, Any], torch.Tensor],
            optimizer: torch.optim.Optimizer, desc: str, epochs: int) -> str | None:
    """The key of a training run (see the module's docstring), or None when the batches cannot be
    read twice (a one-shot iterator). Leaves every random generator and the model as it found them."""
    if isinstance(batches, Iterator):
        return None
    digest = hashlib.sha256(f"{desc}|{epochs}|{type(model).__name__}|{type(optimizer).__name__}".encode())
    for group in optimizer.param_groups:
        digest.update(repr(sorted((k, v) for k, v in group.items() if k != "params"
                                  and isinstance(v, (int, float, str, bool, tuple)))).encode())
    _digest_weights(digest, model)
    saved, mode = _rng_state(), model.training
    try:
        first = next(iter(batches(0) if callable(batches) else batches))
        model.eval()
        with torch.no_grad():
            loss = float(step(model, first))
    except StopIteration:
        loss = float("nan")
    finally:
        model.train(mode)
        _set_rng_state(saved)
    digest.update(f"{loss:.5g}".encode())
    return digest.hexdigest()[:20]


def path_for(key: str, desc: str) -> Path | None:
    """The file of the run ``key`` (named after the training's description), or None without a folder."""
    place = folder()
    if place is None:
        return None
    name = "".join(c if c.isalnum() else "-" for c in desc)[:40]
    return place / f"{name}-{key}.pt"


def load(path: Path, model: nn.Module, optimizer: torch.optim.Optimizer, scheduler: Any) -> Any:
    """Restore a written run into ``model``, ``optimizer`` and ``scheduler``; return its history."""
    saved = torch.load(path, map_location="cpu", weights_only=False)
    device = next(model.parameters()).device if any(True for _ in model.parameters()) else "cpu"
    model.load_state_dict({k: v.to(device) for k, v in saved["model"].items()})
    optimizer.load_state_dict(saved["optimizer"])
    if scheduler is not None and saved.get("scheduler") is not None:
        scheduler.load_state_dict(saved["scheduler"])
    _set_rng_state(saved["rng"])
    return saved["history"]


def write(path: Path, model: nn.Module, optimizer: torch.optim.Optimizer, scheduler: Any,
          history: Any) -> None:
    """Keep a finished run: the model's weights, the optimiser's and scheduler's states, the history
    and the random generators' states."""
    _save_whole({"model": {k: v.detach().cpu() for k, v in model.state_dict().items()},
                 "optimizer": optimizer.state_dict(),
                 "scheduler": scheduler.state_dict() if scheduler is not None else None,
                 "history": history, "rng": _rng_state()}, path)


def _save_whole(content: dict, path: Path) -> None:
    """Save to a temporary name, then rename: a notebook running beside this one (the book executes
    two at a time) reads the whole file or none of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    torch.save(content, partial)
    os.replace(partial, path)


def evaluation_path(model: nn.Module, settings: str, pairs: list[Any],
                    probe: Callable[[], torch.Tensor]) -> Path | None:
    """Where the scores of evaluating ``model`` with ``settings`` on ``pairs`` are kept, or None
    without a folder. ``probe()`` gives the model's output on a few inputs (its behaviour, not just
    its weights, goes into the key)."""
    if folder() is None:
        return None
    digest = hashlib.sha256(f"{type(model).__name__}|{settings}|{len(pairs)}".encode())
    _digest_weights(digest, model)
    for pair in pairs:
        digest.update(repr(pair).encode())
    with torch.no_grad():
        digest.update(repr([round(v, 3) for v in probe().double().sum(-1).flatten().tolist()]).encode())
    return path_for(digest.hexdigest()[:20], f"evaluation {settings}")


def load_evaluation(path: Path) -> Any:
    """The scores kept at ``path``."""
    return torch.load(path, map_location="cpu", weights_only=False)["scores"]


def write_evaluation(path: Path, scores: Any) -> None:
    """Keep the scores of an evaluation (the reference run)."""
    _save_whole({"scores": scores}, path)
