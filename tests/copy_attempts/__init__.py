"""Submissions that copy instead of solving, one module per notebook (``ch04.py`` for
``chapters/04_*.ipynb``), each with a list ``COPIES`` of ``Copy(exercise, how, code)``.

``code`` is the whole solution cell as a copying student would write it from what the released notebook
shows: the chapter's visible code pasted, a value the notebook computes returned, a route the exercise
forbids in words, or the exercise's own reference called from the installed package
(``utils.exercises.chNN``). ``how`` says which. ``tests/test_copy_proof.py`` runs each through the
exercise's real check cell, checks strict: every one must be refused. ``tests/test_nbgrader.py`` grades a
round of them through ``nbgrader autograde`` too: in ``make test`` one copy per exercise, the one marked
``featured`` (the routes that scored before issue 38) or else the first.
"""

from __future__ import annotations

from dataclasses import dataclass

HOWS = ("pasted", "returned", "forbidden", "package")


@dataclass(frozen=True)
class Copy:
    """One copying submission: the exercise ("Exercise 4.2"), how it copies (one of HOWS), its code;
    ``featured``: the copy that make test's nbgrader round takes for the exercise."""

    exercise: str
    how: str
    code: str
    featured: bool = False

    def __post_init__(self) -> None:
        if self.how not in HOWS:
            raise ValueError(f"{self.exercise}: how must be one of {HOWS}, got {self.how!r}")
