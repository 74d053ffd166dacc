"""The chapters' own results (trained accuracies, gaps between models), checked against the promise
each chapter makes: ``check_result("test exact match", 0.995, at_least=0.98)`` prints the value with its
margin and fails with a message that says what the chapter promised and what may have moved it. With
``$COURSE_RESULTS`` set to a file, every result is also appended there as one JSON line and a miss is
reported instead of raised: that is how ``scripts/robustness.py`` collects every chapter's results over
many seeds and thread counts. (``utils.checks`` re-exports these names.)
"""

from __future__ import annotations

import json
import math
import os

from utils.language import show


class Measured(float):
    """The value ``check_result`` returns: a plain ``float`` that a cell ending with ``check_result(...)``
    does not echo under its verdict line (no stray ``0.7818181818181819``)."""

    def _ipython_display_(self) -> None:
        pass


class ResultOutOfRange(AssertionError):
    """Raised when a chapter's measured result misses the range the chapter promises."""


def check_result(name: str, value: float, *, at_least: float | None = None,
                 at_most: float | None = None) -> float:
    """Check a measured result against the chapter's promise; print it with its margin and return it.

    ``at_least`` and/or ``at_most`` bound ``value``; the margin is its distance to the nearer bound.
    """
    if at_least is None and at_most is None:
        raise ValueError(f"check_result({name!r}) needs at_least, at_most or both")
    value = float(value)
    margins = []
    if at_least is not None:
        margins.append(value - at_least)
    if at_most is not None:
        margins.append(at_most - value)
    margin = min(margins) if not math.isnan(value) else float("nan")
    passed = margin >= 0  # False for NaN
    bounds = " and ".join(f"{word} {bound:g}" for word, bound in
                          (("at least", at_least), ("at most", at_most)) if bound is not None)
    record_to = os.environ.get("COURSE_RESULTS", "").strip()
    if record_to:
        with open(record_to, "a", encoding="utf-8") as out:
            out.write(json.dumps({"name": name, "value": value, "at_least": at_least, "at_most": at_most,
                                  "margin": margin, "passed": passed}) + "\n")
    if passed:
        show(f"OK   {name}: {value:.4g} (promised {bounds}; margin {margin:.3g})")
    elif record_to:
        show(f"MISS {name}: {value:.4g} (promised {bounds}); recorded in {record_to}")
    else:
        raise ResultOutOfRange(
            f"{name} is {value:.4g}, but this chapter promises {bounds}. If you changed a knob or the "
            "code above, that is the likely cause; otherwise please report it with the output of "
            "utils.runtime.environment_report() (results move slightly with the processor and the "
            "number of CPU threads, and the chapter is meant to hold on any of them)."
        )
    return Measured(value)
