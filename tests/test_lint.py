"""Lint: ``ruff check`` on the package, tests, scripts and notebooks (configured in pyproject.toml)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TARGETS = ["utils", "classroom", "tests", "scripts", "chapters"]


def _ruff() -> str:
    beside_python = Path(sys.executable).parent / "ruff"  # the venv's ruff, the version CI pins
    if beside_python.exists():
        return str(beside_python)
    found = shutil.which("ruff")
    if found is None:
        pytest.skip("ruff is not installed (it is in requirements.txt)")
    return found


def test_ruff_is_clean():
    targets = [t for t in TARGETS if (REPO / t).exists()]
    result = subprocess.run([_ruff(), "check", "--no-cache", *targets], cwd=REPO,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, (
        f"`ruff check {' '.join(targets)}` found problems (fix them, or run `ruff check --fix`):\n"
        f"{result.stdout[-6000:]}{result.stderr[-2000:]}")
