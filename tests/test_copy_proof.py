"""No exercise passes by copying: every submission in ``tests/copy_attempts/chNN.py`` is refused.

Each is run through the exercise's real check cell, in the fresh namespace the exercise tests use, with
checks strict (as under grading). A static test keeps the checks out of sight: a chapter's check cells
are short calls of ``utils.exercises.check`` and define no function (no reference, no wrong answer).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import nbformat
import pytest

import classroom

REPO_ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO_ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
MAX_CHECK_LINES = 6


def _copies(path: Path) -> list:
    try:
        module = importlib.import_module(f"tests.copy_attempts.ch{path.name[:2]}")
    except ModuleNotFoundError:
        return []
    return list(module.COPIES)


def _registered(path: Path) -> list:
    nb = nbformat.read(path, as_version=4)
    return [ex for ex in classroom.find_exercises(nb, path) if ex.registered is not None]


@pytest.mark.parametrize("path, copy", [
    pytest.param(path, copy, id=f"{path.stem[:2]}-{copy.exercise}-{copy.how}")
    for path in NOTEBOOKS for copy in _copies(path)])
def test_a_copying_submission_is_refused(path, copy):
    nb = nbformat.read(path, as_version=4)
    ex = next(e for e in classroom.find_exercises(nb, path) if e.name == copy.exercise)
    run = classroom.run_with_answer(nb, ex, copy.code)
    if run.error == "NameError":  # the exercise reads the notebook's earlier state
        run = classroom.run_with_answer(nb, ex, copy.code, classroom.slice_cells(nb, ex))
    assert run.check_failed, f"{copy.exercise} ({copy.how}): the copy passed ({run.error}: {run.output})"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_code_exercise_has_copies_that_are_refused(path):
    """Each registered exercise that asks for code has at least one copying submission, and one that
    calls its reference from the installed package."""
    copies = _copies(path)
    for ex in _registered(path):
        if ex.registered.kind == "prediction":
            continue
        hows = {c.how for c in copies if c.exercise == ex.name}
        assert hows, f"{path.name}: no copying submission for {ex.name} in tests/copy_attempts"
        assert "package" in hows, f"{path.name}: {ex.name} has no copy that calls the package's reference"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_registered_check_cells_are_short_and_define_nothing(path):
    nb = nbformat.read(path, as_version=4)
    for ex in _registered(path):
        source = nb.cells[ex.check_cell].source
        lines = [line for line in source.splitlines() if line.strip()]
        assert len(lines) <= MAX_CHECK_LINES, (
            f"{path.name}: {ex.name}'s check cell has {len(lines)} lines; it should be a short call of "
            "utils.exercises.check, with the reference in the package")
        defined = [node for node in ast.walk(ast.parse(source))
                   if isinstance(node, (ast.FunctionDef, ast.Lambda, ast.ClassDef, ast.Assign))]
        assert not defined, f"{path.name}: {ex.name}'s check cell defines or computes something"
