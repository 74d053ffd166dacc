"""What each notebook needs from a student's server, and how long grading one submission takes.

    python scripts/chapter_resources.py [--out book/_data/resources.json] [--threads 1] [NOTEBOOK ...]

For every chapter notebook (the reference, solutions included), in a fresh kernel with the given CPU
threads: one Run All as a student's (training included; its training runs kept in a temporary folder,
as ``python -m classroom nbgrader checkpoints`` keeps them), the kernel's peak memory (its largest
resident set), then one run as grading runs it (checks strict, the kept runs loaded instead of
training). ``python -m classroom.guide`` writes the table of the instructor guide from the JSON file.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "book" / "_data" / "resources.json"

_RUN = """
import nbformat, resource, sys, time
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
start = time.perf_counter()
NotebookClient(nb, timeout=1800, kernel_name="python3",
               resources={"metadata": {"path": sys.argv[2]}}).execute()
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux: the kernel's
print(f"RESULT {seconds:.2f} {peak}")
"""


def run(path: Path, env: dict[str, str]) -> tuple[float, float]:
    """(seconds, peak MiB of the kernel) of one execution of ``path`` in a fresh process."""
    with tempfile.TemporaryDirectory() as work:
        done = subprocess.run([sys.executable, "-c", _RUN, str(path), work], env=env, capture_output=True,
                              text=True, timeout=3600)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{path.name} failed:\n{done.stderr[-3000:]}")
    seconds, peak = lines[-1].split()[1:]
    return float(seconds), int(peak) / 1024


def measure(paths: list[Path], threads: int) -> dict:
    rows = {}
    for path in paths:
        with tempfile.TemporaryDirectory() as kept:
            base = {**os.environ, "OMP_NUM_THREADS": str(threads), "COURSE_THREADS": str(threads),
                    "COURSE_PLAIN_PROGRESS": "1"}
            for name in ("COURSE_CHECKPOINTS", "COURSE_CHECKPOINTS_WRITE", "COURSE_CHECKS", "COURSE_SEED"):
                base.pop(name, None)
            student, peak = run(path, {**base, "COURSE_CHECKPOINTS": kept,
                                       "COURSE_CHECKPOINTS_WRITE": "1"})
            graded, graded_peak = run(path, {**base, "COURSE_CHECKPOINTS": kept,
                                             "COURSE_CHECKS": "strict"})
        rows[path.stem] = {"run_all_s": round(student, 1), "grading_s": round(graded, 1),
                           "peak_mib": round(max(peak, graded_peak))}
        print(f"{path.stem}: Run All {student:.0f} s, grading {graded:.0f} s, "
              f"peak {max(peak, graded_peak):.0f} MiB", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
    started = time.perf_counter()
    rows = measure(paths, args.threads)
    record = json.loads(args.out.read_text()) if args.out.is_file() else {}
    record.setdefault("notebooks", {}).update(rows)
    record["measured"] = (f"{dt.date.today():%Y-%m-%d}, {platform.processor() or platform.machine()}, "
                          f"{os.cpu_count()} CPUs, {args.threads} thread(s) per notebook, "
                          f"Python {platform.python_version()}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {args.out} in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
