"""Time the book on this machine and print one table (``make bench``; not a test).

Three parts, each of which can be skipped:

1. notebooks: execute every ``chapters/*.ipynb`` with nbclient (as the book build does) and time each;
   the target is the whole book in under 6 minutes on a 2-core CPU.
2. accuracy: train chapter 8's Transformer with chapter 8's settings and report the training seconds
   until greedy decoding reaches 98% exact match on held-out sentences.
3. steps: the training-step time (forward, backward, Adam) of the from-scratch ``utils.transformer``
   model against a model of the same size built on ``torch.nn.Transformer``, on the same batch; the
   ratio is the median over many interleaved steps (target: at most 1.2).
4. threads (only with ``--threads``): chapters 5 and 8 executed with 1 thread, 2 threads and the
   count ``utils.runtime.choose_threads`` picks, interleaved, ``--repeats`` times each; ``--busy N``
   keeps N other processes spinning meanwhile, as on a machine busy with other work. Target: the
   helper's choice within 1.2x of the fastest setting, on a quiet and on a busy machine.

    python scripts/benchmark.py                        # everything
    python scripts/benchmark.py --skip-notebooks       # parts 2 and 3 only (about a minute)
    python scripts/benchmark.py --notebooks "08_*"     # only the notebooks matching a pattern
    python scripts/benchmark.py --threads --repeats 3 [--busy 2]   # part 4 alone
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from utils import seed_everything
from utils.data import Batch, batches, load_synthetic, make_batch
from utils.train import evaluate_translation, fit, warmup_schedule
from utils.transformer import Transformer, TransformerConfig
from utils.translation import teacher_forcing_loss, translator

REPO = Path(__file__).resolve().parents[1]

# Chapter 8's settings (chapters/08_transformer_decoder.ipynb, "Knobs" and "Training"); keep in step.
CHAPTER_8 = {"n_train": 24_000, "epochs": 3, "d_model": 64, "num_heads": 4, "num_layers": 2, "d_ff": 128,
             "batch_size": 64, "lr": 5e-3, "warmup_steps": 50, "label_smoothing": 0.1}
TARGET_EXACT_MATCH = 0.98


def machine() -> list[tuple[str, str]]:
    """CPU model, cores, torch version and threads of this machine."""
    cpu = platform.processor() or "unknown CPU"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    return [("CPU", cpu), ("cores", str(os.cpu_count())), ("GPU", gpu),
            ("torch", f"{torch.__version__} ({torch.get_num_threads()} threads)"),
            ("load average at start", load)]


# ---------------------------------------------------------------------------------------------------
# 1. Notebooks
# ---------------------------------------------------------------------------------------------------
def time_notebooks(pattern: str) -> list[tuple[str, str]]:
    """Execute each matching chapter notebook in a fresh kernel; rows of (name, seconds)."""
    import nbformat
    from nbclient import NotebookClient

    rows, total = [], 0.0
    paths = sorted((REPO / "chapters").glob(pattern))
    if not paths:
        raise SystemExit(f"no notebook in chapters/ matches {pattern!r}")
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        client = NotebookClient(nb, timeout=900, kernel_name="python3",
                                resources={"metadata": {"path": str(path.parent)}})
        start = time.perf_counter()
        try:
            client.execute()
            status = ""
        except Exception as err:  # noqa: BLE001 - report the failure in the table and go on
            status = f" FAILED: {type(err).__name__}"
        seconds = time.perf_counter() - start
        total += seconds
        rows.append((f"notebook {path.stem}", f"{seconds:7.1f} s{status}"))
        rows.extend(training_budgets(path.stem, nb))
    rows.append((f"notebooks, total ({len(paths)})", f"{total:7.1f} s = {total / 60:.1f} min "
                 f"(target < 6 min on 2 cores)"))
    return rows


# The training time a chapter promises (its glued seconds, as the book shows them), against its budget
TRAINING_BUDGETS = {"13_english_to_chinese": [("ch13_tf_seconds", "Transformer", 180.0),
                                              ("ch13_gru_seconds", "GRU with attention", 300.0)]}


def training_budgets(stem: str, executed) -> list[tuple[str, str]]:
    """Rows for a chapter's budgeted training runs: the seconds its run glued, and the budget."""
    from utils.glue import glued_values

    glued = glued_values(executed)
    rows = []
    for key, what, budget in TRAINING_BUDGETS.get(stem, []):
        seconds = float(glued[key]) if key in glued else float("nan")
        verdict = "within" if seconds <= budget else "OVER"
        rows.append((f"  {stem}: {what} training", f"{seconds:7.1f} s ({verdict} its budget of "
                     f"{budget:.0f} s)"))
    return rows


# ---------------------------------------------------------------------------------------------------
# 2. Chapter 8: training seconds until 98% exact match
# ---------------------------------------------------------------------------------------------------
def chapter_8_config(data) -> TransformerConfig:
    c = CHAPTER_8
    return TransformerConfig(len(data.src_vocab), len(data.tgt_vocab), d_model=c["d_model"],
                             num_heads=c["num_heads"], num_encoder_layers=c["num_layers"],
                             num_decoder_layers=c["num_layers"], d_ff=c["d_ff"], dropout=0.0, max_len=64)


def time_to_accuracy(checks_per_epoch: int = 4) -> list[tuple[str, str]]:
    """Chapter 8's training run, as ``train_translation`` does it (same optimiser, schedule, batch order),
    cut into ``checks_per_epoch`` pieces per epoch so that accuracy is checked more often than per epoch."""
    c = CHAPTER_8
    data = load_synthetic(n_train=c["n_train"], n_valid=500, n_test=1_000)
    seed_everything(0)
    model = Transformer(chapter_8_config(data))
    optimizer = torch.optim.Adam(model.parameters(), lr=c["lr"], betas=(0.9, 0.98), eps=1e-9)
    per_epoch = math.ceil(len(data.train) / c["batch_size"])
    scheduler = warmup_schedule(optimizer, c["warmup_steps"], c["epochs"] * per_epoch)

    def piece(i: int):
        epoch, part = divmod(i, checks_per_epoch)
        whole = batches(data.train, data.src_vocab, data.tgt_vocab, c["batch_size"], seed=epoch)
        lo, hi = part * per_epoch // checks_per_epoch, (part + 1) * per_epoch // checks_per_epoch
        return itertools.islice(whole, lo, hi)

    start, eval_seconds, curve = time.perf_counter(), 0.0, []

    def check(_: int) -> dict[str, float]:
        nonlocal eval_seconds
        seconds = time.perf_counter() - start - eval_seconds
        exact = evaluate_translation(translator(model), data.valid, data.src_vocab,
                                     data.tgt_vocab).exact_match
        eval_seconds = time.perf_counter() - start - seconds
        curve.append((seconds, exact))
        return {"valid_exact": exact}

    fit(model, piece, partial(teacher_forcing_loss, label_smoothing=c["label_smoothing"]), optimizer,
        epochs=c["epochs"] * checks_per_epoch, scheduler=scheduler, on_epoch_end=check, progress=False)
    reached = [sec for sec, exact in curve if exact >= TARGET_EXACT_MATCH]
    test = evaluate_translation(translator(model), data.test, data.src_vocab, data.tgt_vocab).exact_match
    trace = " ".join(f"{exact:.2f}" for _, exact in curve)
    return [(f"chapter 8: training s to {TARGET_EXACT_MATCH:.0%} exact match (validation)",
             (f"{reached[0]:.1f} s" if reached else "not reached") + f"; checks: {trace}"),
            (f"chapter 8: full run ({c['epochs']} epochs), test exact match",
             f"{curve[-1][0]:.1f} s, {test:.3f}")]


# ---------------------------------------------------------------------------------------------------
# 3. Step time: from scratch vs nn.Transformer
# ---------------------------------------------------------------------------------------------------
class TorchTransformerModel(nn.Module):
    """The same model as ``utils.transformer.Transformer`` with ``nn.Transformer`` as its two stacks."""

    def __init__(self, config: TransformerConfig):
        super().__init__()
        ours = Transformer(config)  # borrow the embeddings, positions and output layer
        self.src_embed, self.tgt_embed, self.positional, self.output = (
            ours.src_embed, ours.tgt_embed, ours.positional, ours.output)
        self.scale = math.sqrt(config.d_model)
        self.body = nn.Transformer(config.d_model, config.num_heads, config.num_encoder_layers,
                                   config.num_decoder_layers, config.d_ff, config.dropout, batch_first=True)
        self.body.encoder.norm = self.body.decoder.norm = None  # post-norm stacks, as ours
        self.pad_id = config.pad_id

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor, src_mask: torch.Tensor,
                tgt_mask: torch.Tensor) -> torch.Tensor:
        t = tgt_in.shape[1]
        future = torch.ones(t, t, dtype=torch.bool, device=tgt_in.device).triu(1)  # True = masked
        y = self.body(self.positional(self.src_embed(src) * self.scale),
                      self.positional(self.tgt_embed(tgt_in) * self.scale), tgt_mask=future,
                      src_key_padding_mask=~src_mask, tgt_key_padding_mask=~tgt_mask,
                      memory_key_padding_mask=~src_mask)
        return self.output(y)


def _step_fn(model: nn.Module, batch: Batch, pad_id: int):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)

    def step() -> None:
        logits = model(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)
        loss = F.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten(), ignore_index=pad_id)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    return step


def step_ratio(steps: int, batch_size: int) -> list[tuple[str, str]]:
    """Median seconds per training step of both models on one batch, interleaved to share the load."""
    data = load_synthetic(n_train=batch_size, n_valid=10, n_test=10)
    batch = make_batch(data.train, data.src_vocab, data.tgt_vocab)
    config = chapter_8_config(data)
    config = TransformerConfig(**{**config.__dict__, "dropout": 0.1})  # training as usual, with dropout
    seed_everything(0)
    ours, theirs = Transformer(config), TorchTransformerModel(config)
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in theirs.parameters())
    step_ours = _step_fn(ours, batch, config.pad_id)
    step_theirs = _step_fn(theirs, batch, config.pad_id)
    times: dict[str, list[float]] = {"ours": [], "theirs": []}
    for i in range(steps + 5):
        for name, step in (("ours", step_ours), ("theirs", step_theirs)):
            start = time.perf_counter()
            step()
            if i >= 5:  # the first steps warm up allocators and caches
                times[name].append(time.perf_counter() - start)
    ours_ms, theirs_ms = (1e3 * statistics.median(times[k]) for k in ("ours", "theirs"))
    size = f"d_model={config.d_model}, {config.num_encoder_layers}+{config.num_decoder_layers} layers"
    return [(f"train step, from scratch ({size}, B={batch_size})", f"{ours_ms:.1f} ms (median of {steps})"),
            ("train step, nn.Transformer (same size, same batch)", f"{theirs_ms:.1f} ms"),
            ("step-time ratio, from scratch / nn.Transformer", f"{ours_ms / theirs_ms:.2f} (target <= 1.2)")]


# ---------------------------------------------------------------------------------------------------
# 4. Threads: the helper's choice against 1 and 2 threads
# ---------------------------------------------------------------------------------------------------
def _execute_with(path: Path, env: dict[str, str | None], cap: float = 1800) -> tuple[float, str]:
    """Execute one notebook with these environment variables (None: unset); (seconds, threads line).

    A cell that runs past ``cap`` seconds stops the run; the seconds are then reported as ``inf``.
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    saved = {k: os.environ.get(k) for k in env}
    for key, value in env.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    try:
        nb = nbformat.read(path, as_version=4)
        start = time.perf_counter()
        try:
            NotebookClient(nb, timeout=cap, kernel_name="python3",
                           resources={"metadata": {"path": str(path.parent)}}).execute()
            seconds = time.perf_counter() - start
        except (CellTimeoutError, DeadKernelError):
            seconds = math.inf
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    text = "".join(out.get("text", "") for cell in nb.cells for out in cell.get("outputs", []))
    match = re.search(r"CPU threads: (\d+)", text)
    return seconds, match.group(1) if match else "?"


def compare_threads(repeats: int, busy: int, cap: float = 1800,
                    patterns: tuple[str, ...] = ("05_*", "08_*")) -> list[tuple[str, str]]:
    """Seconds per notebook with 1 thread, 2 threads and the helper's choice, interleaved; a run with
    a cell longer than ``cap`` seconds counts as infinitely slow (shown as "> cap")."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
    rows = [("machine load during part 4", f"{busy} other busy processes")]
    try:
        time.sleep(2 if busy else 0)
        for pattern in patterns:
            path = next((REPO / "chapters").glob(f"{pattern}.ipynb"))
            settings = {"1 thread": {"COURSE_THREADS": "1", "OMP_NUM_THREADS": None},
                        "2 threads": {"COURSE_THREADS": "2", "OMP_NUM_THREADS": None},
                        "choose_threads()": {"COURSE_THREADS": None, "OMP_NUM_THREADS": None}}
            times: dict[str, list[float]] = {k: [] for k in settings}
            picked: list[str] = []
            for _ in range(repeats):
                for name, env in settings.items():
                    seconds, threads = _execute_with(path, env, cap)
                    print(f"{path.stem}, {name}: {seconds:.1f} s ({threads} threads)", flush=True)
                    times[name].append(seconds)
                    if name == "choose_threads()":
                        picked.append(threads)
            medians = {k: statistics.median(v) for k, v in times.items()}
            best = min(medians["1 thread"], medians["2 threads"])
            def shown(x: float) -> str:
                return f"{x:.1f}" if math.isfinite(x) else f"> {cap:.0f}"

            rows += [(f"{path.stem}, {k}", f"{shown(v)} s (median of {repeats}: "
                      + ", ".join(shown(x) for x in times[k]) + ")") for k, v in medians.items()]
            rows.append((f"{path.stem}, choose_threads() / fastest",
                         f"{medians['choose_threads()'] / best:.2f} (picked {', '.join(picked)} threads; "
                         "target <= 1.2)"))
    finally:
        for spinner in spinners:
            spinner.kill()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-notebooks", action="store_true", help="do not execute the notebooks")
    parser.add_argument("--skip-accuracy", action="store_true", help="do not train chapter 8's model")
    parser.add_argument("--skip-steps", action="store_true", help="do not time training steps")
    parser.add_argument("--notebooks", default="*.ipynb", help="glob of chapters/ notebooks to run")
    parser.add_argument("--steps", type=int, default=50, help="training steps timed per model")
    parser.add_argument("--batch-size", type=int, default=64, help="batch size of the timed steps")
    parser.add_argument("--threads", action="store_true",
                        help="only part 4: chapters 5 and 8 with 1, 2 and choose_threads()'s threads")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each setting in part 4")
    parser.add_argument("--busy", type=int, default=0, help="other busy processes during part 4")
    parser.add_argument("--cap", type=float, default=1800,
                        help="part 4: stop a run whose cell takes longer than this (seconds)")
    args = parser.parse_args()

    rows = machine()
    if args.threads:
        args.skip_notebooks = args.skip_accuracy = args.skip_steps = True
        rows += compare_threads(args.repeats, args.busy, args.cap)
    if not args.skip_notebooks:
        rows += time_notebooks(args.notebooks)
    if not args.skip_accuracy:
        rows += time_to_accuracy()
    if not args.skip_steps:
        rows += step_ratio(args.steps, args.batch_size)
    width = max(len(k) for k, _ in rows)
    print(f"{'measure':<{width}} | value")
    print(f"{'-' * width}-+-{'-' * 40}")
    for key, value in rows:
        print(f"{key:<{width}} | {value}")


if __name__ == "__main__":
    main()
