"""The course's exercises, each defined once: what it asks, its points, and its check, out of sight.

A notebook's check cell is one short call naming the exercise and passing the learner's answer::

    from utils.exercises import check
    check("2.2", lookup_jacobian)

Everything the check needs (the reference, the test inputs, the plausible wrong answers it names, the
routes the exercise forbids) lives here, in one module per chapter (``utils.exercises.ch02``), so a
learner reading the notebook (in JupyterLab, Colab or nbgrader's release) sees no answer, and Colab gets
the checks with ``utils``. Each module registers its exercises with ``@exercise(...)``: the number,
title, difficulty, minutes, points, hint, kind and open questions (with their rubrics) that the student
edition, nbgrader's source notebooks and the instructor guide read (``classroom``).

While the learner's code runs, every function of the chapter's exercise module is refused (a learner
cannot pass by calling the reference from the installed package), and so is every route the exercise
forbids in words. Under nbgrader the autograder cell also runs ``check("2.2", lookup_jacobian,
hidden=True)`` between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``: other inputs, which the
released notebook never runs.

Kinds of exercise:

- ``code``: a function (or value) checked against the reference; wrong answers that equal a known
  mistake are named.
- ``prediction``: the learner writes predictions before running anything. They earn the points for
  being written in the right form, never for being right: the check records them, then runs the
  experiment and shows what it measured next to them, naming the misconception a wrong one reveals.
- ``fix``: a lab's repair of a buggy component, checked against the reference component.

``check`` prints one verdict line and returns None, so a cell shows nothing else (nbgrader reads a
cell's value as its score).
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from utils import checks
from utils.language import HINT, HINT_MARKS, say

POINTS = {"Easy": 1, "Medium": 2, "Hard": 3}
KINDS = ("code", "prediction", "fix")


@dataclass(frozen=True)
class Question:
    """An open question inside an exercise, graded by hand: its points and the rubric a grader uses."""

    prompt: str
    rubric: tuple[str, ...]  # what a full answer contains, one point of the rubric per item
    points: int = 1


@dataclass(frozen=True)
class Exercise:
    """One exercise of the course, as the registry knows it."""

    number: str  # "2.2": chapter 2, second exercise
    title: str
    difficulty: str  # Easy, Medium or Hard
    minutes: int
    hint: str
    run: Callable[..., None] = field(repr=False)  # run(answer, hidden=False, **context)
    kind: str = "code"
    questions: tuple[Question, ...] = ()
    module: str = ""

    @property
    def name(self) -> str:
        return f"Exercise {self.number}"

    @property
    def chapter(self) -> int:
        return int(self.number.split(".")[0])

    @property
    def points(self) -> int:
        """The auto-graded points (1, 2 or 3 by difficulty); open questions add their own."""
        return POINTS[self.difficulty]

    @property
    def grade_id(self) -> str:
        """nbgrader's id of its autograder cell: "ex-2-2"."""
        return "ex-" + self.number.replace(".", "-")


REGISTRY: dict[str, Exercise] = {}


def exercise(number: str, title: str, difficulty: str, minutes: int, *, hint: str, kind: str = "code",
             questions: tuple[Question, ...] | list[Question] = ()) -> Callable:
    """Register the decorated function as the check of exercise ``number`` (used by the chapter modules).

    The function is called as ``run(answer, hidden=False, **context)`` and raises ``CheckFailed`` (through
    ``utils.checks``' helpers) when the answer is wrong; ``hidden=True`` asks for other inputs.
    """
    if difficulty not in POINTS:
        raise ValueError(f"Exercise {number}: difficulty must be one of {sorted(POINTS)}, got {difficulty!r}")
    if kind not in KINDS:
        raise ValueError(f"Exercise {number}: kind must be one of {KINDS}, got {kind!r}")

    def register(run: Callable[..., None]) -> Callable[..., None]:
        if number in REGISTRY and REGISTRY[number].module != run.__module__:
            raise ValueError(f"Exercise {number} is registered twice ({REGISTRY[number].module})")
        REGISTRY[number] = Exercise(number, title, difficulty, minutes, hint, run, kind, tuple(questions),
                                    run.__module__)
        run.exercise = REGISTRY[number]  # so the check can say its own hint: run.exercise.hint
        return run

    return register


def load_all() -> dict[str, Exercise]:
    """Import every chapter module (``ch00`` ... ``ch11``) and return the registry."""
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("ch"):
            importlib.import_module(f"{__name__}.{info.name}")
    return REGISTRY


def get(number: str) -> Exercise:
    """The registered exercise ``number`` ("4.2"), importing its chapter's module."""
    if not isinstance(number, str) or number.count(".") != 1:
        raise ValueError(f"an exercise number looks like '4.2' (chapter, then exercise); got {number!r}")
    if number not in REGISTRY:
        chapter = number.split(".")[0]
        try:
            importlib.import_module(f"{__name__}.ch{int(chapter):02d}")
        except (ModuleNotFoundError, ValueError):
            pass
    if number not in REGISTRY:
        known = ", ".join(sorted(load_all(), key=_order)) or "none"
        raise KeyError(f"no exercise {number!r} in the course; the exercises are: {known}")
    return REGISTRY[number]


def _order(number: str) -> tuple[int, int]:
    chapter, index = number.split(".")
    return int(chapter), int(index)


def exercises_of(chapter: int) -> list[Exercise]:
    """The registered exercises of one chapter, in order."""
    load_all()
    return sorted((e for e in REGISTRY.values() if e.chapter == chapter), key=lambda e: _order(e.number))


@contextmanager
def _module_refused(ex: Exercise):
    """While the learner's code runs, every function and class of the exercise's module is refused."""
    module = sys.modules[ex.module]
    own = [(module, name) for name, value in vars(module).items()
           if callable(value) and getattr(value, "__module__", None) == ex.module]
    with checks.also_forbidden(own, reason="it is the check's own reference code",
                               files=[module.__file__]):
        yield


def verdict(number: str, answer: Any = None, /, *, hidden: bool = False, **context: Any) -> None:
    """Run exercise ``number``'s check on ``answer``: returns when it passes, raises ``CheckFailed`` (or
    ``NotDoneYet``) with the message when it does not, in any mode. The graders call this in their own
    process (``classroom.isolated``), with the student's answer living in a sandbox."""
    ex = get(number)
    if getattr(answer, "__module__", None) == ex.module:
        raise checks.CheckFailed(say("{name}: your answer is the check's own reference code from "
                                     "{module}; write your own", name=ex.name, module=ex.module))
    try:
        with _module_refused(ex):
            ex.run(answer, hidden=hidden, **context)
    except checks.NotDoneYet as err:
        if any(mark in str(err) for mark in HINT_MARKS):
            raise
        raise checks.NotDoneYet(f"{err}{say(HINT, hint=ex.hint)}") from None


def check(number: str, answer: Any = None, /, *, hidden: bool = False, **context: Any) -> None:
    """Check the learner's ``answer`` to exercise ``number``; print the verdict, return None.

    ``context`` passes what the check needs from the notebook (a trained model, the chapter's data).
    While the learner is working (the default) a wrong answer prints what is wrong and a hint; in strict
    mode (``$COURSE_CHECKS=strict``) it raises ``CheckFailed`` with that message. This is feedback:
    a grade never comes from it (``classroom.isolated`` grades outside the learner's kernel).
    """
    ex = get(number)
    try:
        verdict(number, answer, hidden=hidden, **context)
    except checks.CheckFailed as err:
        checks.report(err)
        return None
    if ex.kind != "prediction":  # a prediction check prints its own comparison
        print(say("{name}: correct on the hidden tests too." if hidden else "{name}: correct.",
                  name=ex.name))
    return None
