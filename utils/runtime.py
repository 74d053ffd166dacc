"""Where code runs and how it is made repeatable: device choice, seeding, an environment report."""

from __future__ import annotations

import os
import platform
import random

import numpy as np
import torch


def get_device(prefer: str | None = None, verbose: bool = True) -> torch.device:
    """Pick the best available device (CUDA, then Apple MPS, then CPU) and say which.

    ``prefer`` forces one of ``"cuda"``, ``"mps"`` or ``"cpu"``; asking for one that is not present
    raises an error naming what is available.
    """
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
        print(f"Using device: {name} ({detail})")
    return device


def seed_everything(seed: int = 0) -> torch.Generator:
    """Seed Python's ``random``, NumPy and torch (CPU and CUDA) in one call; return a torch Generator.

    The returned generator, seeded the same way, is handy for data shuffling that must not depend on
    how many random numbers a model's initialisation consumed.
    """
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    return torch.Generator().manual_seed(seed)


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
