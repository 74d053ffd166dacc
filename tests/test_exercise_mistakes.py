"""Every chapter's checks name the typical mistakes: plausible wrong answers get "this looks like ...".

The wrong answers live in ``tests/wrong_answers/chNN.py``; each is run through the exercise's real check
cell, in the fresh namespace the exercise tests use, with checks strict (as under grading).
"""

from __future__ import annotations

import importlib
from pathlib import Path

import nbformat
import pytest

import classroom

REPO_ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO_ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
MIN_WRONG_PER_CHAPTER = 2


def _wrong_answers(path: Path) -> list:
    try:
        module = importlib.import_module(f"tests.wrong_answers.ch{path.name[:2]}")
    except ModuleNotFoundError:
        return []
    return list(module.WRONG)


def _cases() -> list:
    return [pytest.param(path, wrong, id=f"{path.stem[:2]}-{wrong.exercise}-{wrong.mistake[:30]}")
            for path in NOTEBOOKS for wrong in _wrong_answers(path)]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_chapter_has_wrong_answers_that_its_checks_name(path):
    wrong = _wrong_answers(path)
    assert len(wrong) >= MIN_WRONG_PER_CHAPTER, (
        f"{path.name}: tests/wrong_answers/ch{path.name[:2]}.py holds {len(wrong)} wrong answers; "
        f"each chapter needs at least {MIN_WRONG_PER_CHAPTER}")
    names = {ex.name for ex in classroom.find_exercises(nbformat.read(path, as_version=4), path)}
    unknown = {w.exercise for w in wrong} - names
    assert not unknown, f"{path.name}: wrong answers for exercises it does not have: {sorted(unknown)}"


@pytest.mark.parametrize("path, wrong", _cases())
def test_a_wrong_answer_fails_and_its_mistake_is_named(path, wrong):
    nb = nbformat.read(path, as_version=4)
    ex = next(e for e in classroom.find_exercises(nb, path) if e.name == wrong.exercise)
    run = classroom.run_with_answer(nb, ex, wrong.code)
    if run.error == "NameError":  # the exercise reads the notebook's earlier state
        run = classroom.run_with_answer(nb, ex, wrong.code, classroom.slice_cells(nb, ex))
    if ex.registered is not None and ex.registered.kind == "prediction":
        # a prediction earns its points for being written; a wrong one is answered with its misconception
        assert run.error is None, f"{wrong.exercise}: a written prediction was refused: {run.message}"
        assert f"this is {wrong.mistake}" in run.output, (
            f"{wrong.exercise}: expected the comparison to name {wrong.mistake!r}; it said: {run.output}")
        return
    assert run.check_failed, (
        f"{wrong.exercise}: the wrong answer was not rejected ({run.error}: {run.message})")
    from utils.exercises.ch10 import PLANTED

    if PLANTED.get(wrong.exercise.split()[-1]) == wrong.mistake:
        # a lab's planted bug, as handed out: the check says which test fails, never the bug or its fix
        first = run.message.splitlines()[0]
        assert "this looks like" not in run.message and "(input " in first, (
            f"{wrong.exercise}: the planted bug should fail a test without being named: {run.message}")
        return
    assert f"this looks like {wrong.mistake}" in run.message, (
        f"{wrong.exercise}: expected the check to name {wrong.mistake!r}; it said: {run.message}")
