"""Do the chapters' promised results hold on any seed and thread count? (``make robustness``; not a test.)

Every chapter checks its trained results with ``utils.checks.check_result`` (an accuracy at least this,
a gap at least that). Those results move with the random initialisation, with the number of CPU
threads (floating-point sums are split differently) and with the processor. This script executes
every chapter notebook once per seed and thread count, with

    COURSE_SEED=<seed>        added to every seed the notebook sets (utils.runtime.seed_everything)
    COURSE_THREADS=<threads>  the CPU threads torch uses (utils.runtime.choose_threads)
    COURSE_RESULTS=<file>     where check_result writes each result (and reports a miss, not raises)

and prints, for every checked result, its minimum, median and maximum over the runs and its smallest
margin to the promised bound. A run whose notebook raised, and every missed bound, is listed as a
failure; the exit status is 1 when there is any.

    python scripts/robustness.py                                  # 5 seeds x threads 1, 2, 4
    python scripts/robustness.py --seeds 0 1 --threads 2 --notebooks "08_*"
    python scripts/robustness.py --out scripts/robustness.md      # also write the Markdown report

On a GPU machine the notebooks run their models on CUDA (they pick the device themselves); the
report's header names the device.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass
class Run:
    """One execution of one notebook: what it was given, what it recorded, how it ended."""

    notebook: str
    seed: int
    threads: int
    seconds: float = 0.0
    error: str = ""  # empty when the notebook ran to the end
    results: list[dict] = field(default_factory=list)


def execute(path: Path) -> None:
    """Execute one notebook in a fresh kernel that inherits this process's environment."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=1800, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()


def run_one(notebook: Path, seed: int, threads: int, scratch: Path) -> Run:
    """Execute ``notebook`` in a child process with the seed and thread count set; collect its results."""
    results = scratch / f"{notebook.stem}-seed{seed}-threads{threads}.jsonl"
    results.unlink(missing_ok=True)
    env = dict(os.environ, COURSE_SEED=str(seed), COURSE_THREADS=str(threads),
               COURSE_RESULTS=str(results), COURSE_PLAIN_PROGRESS="1", PYTHONHASHSEED="0")
    env.pop("OMP_NUM_THREADS", None)
    env.pop("MPLBACKEND", None)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, __file__, "--execute", str(notebook)], env=env, cwd=REPO,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    run = Run(notebook.stem, seed, threads, seconds=time.perf_counter() - start)
    if done.returncode != 0:
        lines = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in done.stdout.splitlines() if line.strip()]
        run.error = next((line for line in reversed(lines) if "Error" in line or "error" in line),
                         lines[-1] if lines else f"exit code {done.returncode}")[:300]
    if results.exists():
        run.results = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    return run


@dataclass
class Summary:
    """One checked result over all runs of its notebook."""

    notebook: str
    name: str
    bounds: str
    values: list[float]
    margins: list[float]
    misses: int

    @property
    def worst_margin(self) -> float:
        return min(self.margins)


def summarise(runs: Iterable[Run]) -> list[Summary]:
    """Group the recorded results by notebook and name, in the order they were first seen."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for run in runs:
        for record in run.results:
            groups.setdefault((run.notebook, record["name"]), []).append(record)
    summaries = []
    for (notebook, name), records in groups.items():
        first = records[0]
        bounds = " and ".join(f"{word} {first[key]:g}" for word, key in
                              ((">=", "at_least"), ("<=", "at_most")) if first[key] is not None)
        summaries.append(Summary(notebook, name, bounds, [r["value"] for r in records],
                                 [r["margin"] for r in records],
                                 sum(not r["passed"] for r in records)))
    return summaries


def machine() -> str:
    """CPU model, cores, torch version and GPU, one line."""
    import torch

    cpu = platform.processor() or "unknown CPU"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        cpu = next((line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
                    if line.startswith("model name")), cpu)
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    return (f"{cpu}, {os.cpu_count()} cores, {gpu}, torch {torch.__version__}, "
            f"Python {platform.python_version()}")


def report(runs: list[Run], seeds: list[int], threads: list[int], command: str) -> str:
    """The Markdown report: header, one table row per checked result, the failures."""
    summaries = summarise(runs)
    failures = [r for r in runs if r.error] + [r for r in runs for x in r.results if not x["passed"]]
    lines = [
        "# Robustness of the chapters' checked results",
        "",
        f"Measured {dt.date.today().isoformat()} on {machine()}, with `{command}`: every chapter notebook "
        f"executed for seeds {', '.join(map(str, seeds))} (`COURSE_SEED`) and CPU thread counts "
        f"{', '.join(map(str, threads))} (`COURSE_THREADS`), {len(runs)} runs in all, "
        f"{sum(r.seconds for r in runs) / 60:.0f} minutes of notebook time.",
        "",
        "**" + ("Every promised bound held in every run." if not failures
                else f"{len(failures)} failures (below).") + "**",
        "",
        "| Chapter | Result | Promised | Runs | Min | Median | Max | Smallest margin |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s in summaries:
        lines.append(f"| {s.notebook[:2]} | {s.name} | {s.bounds} | {len(s.values)} | {min(s.values):.4g} | "
                     f"{statistics.median(s.values):.4g} | {max(s.values):.4g} | {s.worst_margin:.3g}"
                     + (f" ({s.misses} missed)" if s.misses else "") + " |")
    lines += ["", "Seconds per notebook run (median over its runs):", "",
              "| Notebook | Threads | Median s |", "|---|---|---|"]
    by_key: dict[tuple[str, int], list[float]] = {}
    for r in runs:
        by_key.setdefault((r.notebook, r.threads), []).append(r.seconds)
    for (notebook, t), secs in sorted(by_key.items()):
        lines.append(f"| {notebook} | {t} | {statistics.median(secs):.1f} |")
    if failures:
        lines += ["", "## Failures", ""]
        for r in runs:
            if r.error:
                lines.append(f"- {r.notebook}, seed {r.seed}, {r.threads} threads: raised `{r.error}`")
            for x in r.results:
                if not x["passed"]:
                    lines.append(f"- {r.notebook}, seed {r.seed}, {r.threads} threads: {x['name']} = "
                                 f"{x['value']:.4g}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--notebooks", default="*", help="glob pattern inside chapters/ (default: all)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="notebook runs at a time (default 1; more only if jobs x threads <= cores: "
                             "threads waiting for a busy core slow a run down many times over)")
    parser.add_argument("--out", type=Path, help="also write the Markdown report to this file")
    parser.add_argument("--json", type=Path, help="also write every run's raw results to this file")
    parser.add_argument("--report-from", type=Path, nargs="+", metavar="JSON",
                        help="write the report from the --json files of earlier runs instead of running "
                             "(a later file's run of the same notebook, seed and threads wins)")
    parser.add_argument("--execute", type=Path, help=argparse.SUPPRESS)  # the child process's job
    args = parser.parse_args(argv)
    if args.execute:
        execute(args.execute)
        return 0
    if args.report_from:
        merged: dict[tuple[str, int, int], Run] = {}
        for path in args.report_from:
            for raw in json.loads(path.read_text(encoding="utf-8")):
                run = Run(**raw)
                merged[(run.notebook, run.seed, run.threads)] = run
        runs = sorted(merged.values(), key=lambda r: (r.notebook, r.threads, r.seed))
        seeds = sorted({r.seed for r in runs})
        threads = sorted({r.threads for r in runs})
        command = "python scripts/robustness.py --json ..., in parts merged by --report-from"
        text = report(runs, seeds, threads, command)
        print(text)
        if args.out:
            args.out.write_text(text, encoding="utf-8")
        return 1 if any(r.error or not all(x["passed"] for x in r.results) for r in runs) else 0
    notebooks = sorted((REPO / "chapters").glob(f"{args.notebooks}.ipynb"))
    if not notebooks:
        parser.error(f"no notebook in chapters/ matches {args.notebooks!r}")
    plan = list(itertools.product(notebooks, args.seeds, args.threads))
    print(f"{len(plan)} notebook runs, {args.jobs} at a time", flush=True)
    with tempfile.TemporaryDirectory() as scratch, ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(run_one, nb, seed, t, Path(scratch)) for nb, seed, t in plan]
        runs = []
        for future in futures:
            run = future.result()
            runs.append(run)
            status = f"FAILED: {run.error}" if run.error else "ok"
            missed = sum(not x["passed"] for x in run.results)
            print(f"{run.notebook} seed {run.seed} threads {run.threads}: {run.seconds:.0f} s, "
                  f"{len(run.results)} results, {missed} missed, {status}", flush=True)
    given = sys.argv[1:] if argv is None else argv
    command = " ".join(["python scripts/robustness.py", *given])
    text = report(runs, args.seeds, args.threads, command)
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    if args.json:
        args.json.write_text(json.dumps([run.__dict__ for run in runs], indent=1), encoding="utf-8")
    return 1 if any(r.error or not all(x["passed"] for x in r.results) for r in runs) else 0


if __name__ == "__main__":
    raise SystemExit(main())
