"""What a failed check raises, and whether it raises or prints (``utils.checks`` re-exports these).

A check that fails raises ``CheckFailed`` (``NotDoneYet`` for a stub still in place) with a message that
says what was expected, what was given, and a hint. While a learner works, ``report`` prints it and the
notebook goes on; with ``$COURSE_CHECKS=strict`` or inside ``strict_checks()`` it raises. That choice is
feedback only: grades come from ``classroom.autograder``, outside the learner's kernel.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

from utils.language import HINT, say


class CheckFailed(AssertionError):
    """Raised by a check when an exercise answer is wrong or missing; the message holds the hint.

    In Jupyter (and so in nbgrader's feedback) it shows as its message alone, the diagnosis first:
    IPython renders an exception with ``_render_traceback_`` by those lines instead of a traceback
    through the course's package.
    """

    def _render_traceback_(self) -> list[str]:
        lines = str(self).splitlines() or [type(self).__name__]
        return [f"{type(self).__name__}: {lines[0]}", *lines[1:]]


class NotDoneYet(CheckFailed):
    """A ``CheckFailed`` for an exercise whose function is still the stub that raises."""


_STRICT_DEPTH = 0


def strict() -> bool:
    """True when a failed check must raise: ``$COURSE_CHECKS=strict``, ``strict_checks()``, or inside
    nbgrader's run of a notebook (whose own verdicts nbgrader no longer scores: the course's grader
    does, outside the kernel; the variable only decides how the feedback looks)."""
    return (_STRICT_DEPTH > 0 or bool(os.environ.get("NBGRADER_EXECUTION"))
            or os.environ.get("COURSE_CHECKS", "").strip().lower() == "strict")


@contextmanager
def strict_checks() -> Iterator[None]:
    """Within this block every failed check raises ``CheckFailed`` (tests and graders use it)."""
    global _STRICT_DEPTH
    _STRICT_DEPTH += 1
    try:
        yield
    finally:
        _STRICT_DEPTH -= 1


def report(err: CheckFailed) -> bool:
    """Raise ``err`` in strict mode; otherwise print it for the student and return False."""
    if strict():
        raise err.with_traceback(None)
    if isinstance(err, NotDoneYet):
        print(str(err).splitlines()[0])
    else:
        print(say("NOT YET  {err}", err=err))
    return False


def _fail(name: str, problem: str, hint: str | None, kind: type[CheckFailed] = CheckFailed) -> None:
    message = say("{name}: {problem}", name=name, problem=problem)
    if hint:
        message += say(HINT, hint=hint)
    raise kind(message)


def _describe(x: Any) -> str:
    if isinstance(x, torch.Tensor):
        return say("tensor of shape {shape} and dtype {dtype}", shape=tuple(x.shape), dtype=x.dtype)
    return f"{type(x).__name__} {x!r}"[:200]
