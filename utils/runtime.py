"""Where code runs and how it is made repeatable: device, CPU threads, seeding, an environment report.

Environment variables (each notebook's set-up cell reads them through the helpers below):

- ``COURSE_THREADS``  the number of CPU threads torch may use (``choose_threads``); unset: picked from
                      the CPUs this process may use and how busy they are right now.
- ``COURSE_SEED``     added to every seed given to ``seed_everything`` (default 0), so that the
                      robustness benchmark (``scripts/robustness.py``) can rerun a chapter with other
                      random initialisations without editing it.
"""

from __future__ import annotations

import math
import os
import platform
import random
import time
from pathlib import Path

import numpy as np
import torch

from utils.language import show


def get_device(prefer: str | None = None, verbose: bool = True) -> torch.device:
    """Pick the best available device (CUDA, then Apple MPS, then CPU) and say which.

    ``prefer`` forces one of ``"cuda"``, ``"mps"`` or ``"cpu"``; asking for one that is not present
    raises an error naming what is available. Without ``prefer``, the environment variable
    ``COURSE_DEVICE`` does the same for every notebook (``COURSE_DEVICE=cpu`` on a GPU machine).
    """
    if prefer is None:
        prefer = os.environ.get("COURSE_DEVICE") or None
    available = ["cpu"]
    if torch.backends.mps.is_available():
        available.insert(0, "mps")
    if torch.cuda.is_available():
        available.insert(0, "cuda")
    if prefer is not None:
        if prefer not in ("cuda", "mps", "cpu"):
            raise ValueError(f"prefer must be 'cuda', 'mps', 'cpu' or None, got {prefer!r}")
        if prefer not in available:
            raise RuntimeError(
                f"device {prefer!r} was requested but is not available here; available: {available}"
            )
        name = prefer
    else:
        name = available[0]
    device = torch.device(name)
    if verbose:
        detail = torch.cuda.get_device_name(0) if name == "cuda" else platform.processor() or "CPU"
        show(f"Using device: {name} ({detail})")
    return device


def seed_everything(seed: int = 0) -> torch.Generator:
    """Seed Python's ``random``, NumPy and torch (CPU and CUDA) in one call; return a torch Generator.

    The seed used is ``seed`` plus ``$COURSE_SEED`` (0 when unset; when it is set, the first call says
    so in one printed line). The returned generator, seeded the same way, is handy for data shuffling
    that must not depend on how many random numbers a model's initialisation consumed.
    """
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    offset = seed_offset()
    if offset and not _SEED_OFFSET_SHOWN:
        _show_seed_offset(offset)
    seed += offset
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    return torch.Generator().manual_seed(seed)


_SEED_OFFSET_SHOWN = False


def _show_seed_offset(offset: int) -> None:
    """Say once per process that the seeds are shifted: a run's outputs then show it (the book's
    execution cache tells such a run from a default one by this line, scripts/book_cache.py)."""
    global _SEED_OFFSET_SHOWN
    _SEED_OFFSET_SHOWN = True
    show(f"Seeds shifted by COURSE_SEED={offset}: seed_everything(s) seeds s + {offset}")


def seed_offset() -> int:
    """The non-negative integer in ``$COURSE_SEED`` (0 when unset), added to every seed."""
    return _env_int("COURSE_SEED", minimum=0) or 0


def _env_int(name: str, minimum: int) -> int | None:
    """The integer in environment variable ``name``, None when unset; a clear error when malformed."""
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < minimum:
        raise ValueError(f"environment variable {name} must be an integer >= {minimum}, got {text!r}")
    return value


# ---------------------------------------------------------------------------------------------------
# CPU threads
# ---------------------------------------------------------------------------------------------------
# The course's models are small (d_model 32-64, batches of 64): past a few threads, splitting each
# matrix product costs more in synchronisation than it saves, so the automatic choice stops here.
MAX_THREADS = 4


def usable_cpus() -> float:
    """CPUs this process may run on: its affinity mask, capped by a container's CPU quota (cgroups)."""
    cpus = float(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    quota = _cgroup_quota()
    return min(cpus, quota) if quota is not None else cpus


def _cgroup_quota() -> float | None:
    """The CPU quota of this container in CPUs (cgroup v2 ``cpu.max`` or v1 ``cfs_quota_us``), or None."""
    v2 = Path("/sys/fs/cgroup/cpu.max")
    try:
        if v2.is_file():
            quota, period = v2.read_text().split()[:2]
            return None if quota == "max" else max(int(quota) / int(period), 0.01)
        v1 = Path("/sys/fs/cgroup/cpu")
        if (v1 / "cpu.cfs_quota_us").is_file():
            quota = int((v1 / "cpu.cfs_quota_us").read_text())
            period = int((v1 / "cpu.cfs_period_us").read_text())
            return None if quota <= 0 else max(quota / period, 0.01)
    except (OSError, ValueError):
        return None
    return None


def idle_cpus(window: float = 0.2) -> float | None:
    """How many of this process's CPUs sat idle over the next ``window`` seconds (Linux /proc/stat).

    Our own process is idle while it measures, so this counts the capacity other work leaves free.
    None where /proc/stat cannot be read (macOS, Windows).
    """
    def sample() -> dict[str, tuple[int, int]]:
        out = {}
        for line in Path("/proc/stat").read_text().splitlines():
            name, *fields = line.split()
            if name.startswith("cpu") and name != "cpu":
                ticks = [int(f) for f in fields]
                out[name] = (ticks[3] + (ticks[4] if len(ticks) > 4 else 0), sum(ticks[:8]))
        return out

    try:
        mine = {f"cpu{i}" for i in os.sched_getaffinity(0)}
        before = sample()
        time.sleep(window)
        after = sample()
    except (OSError, AttributeError, ValueError, IndexError):
        return None
    idle = 0.0
    for name in mine & before.keys() & after.keys():
        total = after[name][1] - before[name][1]
        if total > 0:
            idle += (after[name][0] - before[name][0]) / total
    return idle


def automatic_threads(usable: float | None = None, idle: float | None = None) -> int:
    """The thread count ``choose_threads`` picks for ``usable`` CPUs of which ``idle`` are free.

    ``usable`` defaults to ``usable_cpus()``; ``idle`` None means a quiet machine (all usable CPUs free).
    """
    usable = usable_cpus() if usable is None else usable
    room = usable if idle is None else min(usable, idle)
    # A CPU counts only when at least 3/4 of it is free: a thread that has to wait for a core another
    # process holds stalls its partners at every step, and on two cores that made a chapter run many
    # times slower than one thread alone (README, "Threads").
    return max(1, min(MAX_THREADS, math.floor(room + 0.25)))


def choose_threads(verbose: bool = True) -> int:
    """Set how many CPU threads torch uses for this course's small models, and return the number.

    In order: ``$COURSE_THREADS`` when set; else ``$OMP_NUM_THREADS`` when set (what a JupyterHub or a
    test runner usually sets); else the CPUs this process may use (affinity and container quota), less
    those that other work keeps busy right now, at least 1 and at most ``MAX_THREADS``.
    Each notebook's set-up cell calls it once.
    """
    chosen = _env_int("COURSE_THREADS", minimum=1)
    if chosen is not None:
        reason = "from COURSE_THREADS"
    elif (omp := _env_int("OMP_NUM_THREADS", minimum=1)) is not None:
        chosen, reason = omp, "from OMP_NUM_THREADS"
    else:
        usable, free = usable_cpus(), idle_cpus()
        chosen = automatic_threads(usable, free)
        reason = (f"{usable:g} usable CPUs" + ("" if free is None else f", {free:.1f} idle now")
                  + "; set COURSE_THREADS to choose")
    torch.set_num_threads(chosen)
    if verbose:
        show(f"CPU threads: {chosen} ({reason})")
    return chosen


def environment_report() -> dict[str, str]:
    """Versions of Python, torch, NumPy and matplotlib, plus the device, as a dict of strings."""
    import matplotlib

    cuda = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "not available"
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "numpy": np.__version__,
        "matplotlib": matplotlib.__version__,
        "cuda": cuda,
        "mps": "available" if torch.backends.mps.is_available() else "not available",
        "cpu threads": str(torch.get_num_threads()),
    }


def in_colab() -> bool:
    """True when running inside Google Colab."""
    import sys

    return "google.colab" in sys.modules


def show_source(obj: object) -> object:
    """Display the source code of a ``utils`` function or class, highlighted, in a notebook.

    Chapters use it to show the package's version of what they have just built step by step.
    Returns an IPython ``Code`` object (rendered by Jupyter), or the plain source text outside IPython.
    """
    import inspect

    try:
        source = inspect.getsource(obj)  # type: ignore[arg-type]
    except (TypeError, OSError) as err:
        raise TypeError(f"show_source needs a function, class or module, got {obj!r:.80}") from err
    try:
        from IPython.display import Code
    except ImportError:
        return source
    return Code(source, language="python")
