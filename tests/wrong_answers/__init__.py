"""Plausible wrong answers to the chapters' exercises, one module per notebook (``ch04.py`` for
``chapters/04_*.ipynb``), each with a list ``WRONG`` of ``Wrong(exercise, mistake, code)``.

``code`` is the whole solution cell as a student might write it; ``mistake`` is the description the
exercise's check must name ("this looks like <mistake>"), usually a value of ``utils.checks.MISTAKES``.
``tests/test_exercise_mistakes.py`` runs each one through the real check cell.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Wrong:
    """One wrong answer: the exercise it answers ("Exercise 4.2"), the mistake it makes, its code."""

    exercise: str
    mistake: str
    code: str
