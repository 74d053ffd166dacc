"""Submissions that try to earn points without solving anything, for the graders to score 0.

Each is a notebook made from the release as handed out (nothing solved), with cells a student could add.
``tests/test_isolated_grading.py`` grades them with ``classroom.autograder`` in-process;
``tests/test_nbgrader.py`` through ``nbgrader autograde`` for real. Every one must score 0 on every
auto-graded exercise, whatever it does to its kernel or to the sandbox.
"""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat

# A cell added at the top of the release: each tampers with what a grade used to come from.
TAMPERING = {
    # the line that gave full marks on every assignment: checks print instead of raising
    "environment": '''
import os
os.environ.pop("NBGRADER_EXECUTION", None)
os.environ["COURSE_CHECKS"] = "lenient"
''',
    # the checks themselves patched in the kernel
    "patched-checks": '''
import utils.checks
import utils.exercises
utils.checks.report = lambda err: False
utils.checks._compare = lambda *args, **kwargs: None
utils.checks.verify_function = lambda *args, **kwargs: 3
utils.exercises.verdict = lambda *args, **kwargs: None
utils.exercises.check = lambda *args, **kwargs: print(f"Exercise {args[0]}: correct.")
''',
    # every comparison says "equal"
    "patched-allclose": '''
import torch
torch.allclose = lambda *args, **kwargs: True
torch.equal = lambda *args, **kwargs: True
torch.Tensor.__eq__ = lambda self, other: torch.ones_like(self, dtype=torch.bool)
''',
    # a grader that shells out would be told "passed"
    "patched-subprocess": '''
import subprocess


class _Passed:
    returncode = 0
    stdout = "passed"
    stderr = ""


subprocess.run = lambda *args, **kwargs: _Passed()
subprocess.check_output = lambda *args, **kwargs: "passed"
''',
    # the built-ins a grader might use
    "patched-builtins": '''
import builtins
builtins.isinstance = lambda obj, kinds: True
builtins.AssertionError = type("AssertionError", (Exception,), {})
''',
    # what a passing check prints, printed
    "prints-correct": '''
for number in range(1, 8):
    print(f"Exercise {number}.{number}: correct on all 3 test inputs.")
print("All tests passed. Score: 100%")
''',
}

# Tampering that leaves a Jupyter kernel unable to answer (ipykernel itself calls isinstance): under
# nbgrader its feedback run then waits for one cell's timeout (classroom.autograder.FeedbackRun).
STOPS_THE_KERNEL = ("patched-builtins",)

# An exercise's function that, when the check calls it, patches whatever grader it can reach and
# prints a pass; it returns nothing useful.
PATCHING_ANSWER = '''
def _patch_the_grader():
    import sys
    for module in list(sys.modules.values()):
        for name in ("_compare", "verify_function", "verify_value", "verdict", "report", "diagnose"):
            if hasattr(module, name):
                try:
                    setattr(module, name, lambda *args, **kwargs: None)
                except (AttributeError, TypeError):
                    pass
        if hasattr(module, "CheckFailed"):
            try:
                module.CheckFailed = type("CheckFailed", (Exception,), {})
            except (AttributeError, TypeError):
                pass
    print("correct")
    return 0
'''



def rewrites(path: str | Path) -> str:
    """Code that rewrites a file the grader watches (the course's files; in the tests, a folder of
    their own, so that graders running beside them are not disturbed)."""
    return (f"with open({str(path)!r}, 'a', encoding='utf-8') as _file:\n"
            "    _file.write('\\ndef check(*args, **kwargs):\\n    return None\\n')\n")


def with_cell(nb: nbformat.NotebookNode, code: str, at: int = 1) -> nbformat.NotebookNode:
    """``nb`` with a code cell of ``code`` inserted at ``at``."""
    nb = copy.deepcopy(nb)
    nb.cells.insert(min(at, len(nb.cells)), nbformat.v4.new_code_cell(code.strip()))
    return nb


def tampering_submissions(release: nbformat.NotebookNode,
                          watched: str | Path | None = None) -> dict[str, nbformat.NotebookNode]:
    """{student: notebook}: each tampering cell alone, and all of them together; with ``watched`` (a
    file the grader watches), one that rewrites it."""
    out = {f"tamper-{name}": with_cell(release, code) for name, code in TAMPERING.items()}
    out["tamper-everything"] = with_cell(release, "\n\n".join(
        code for name, code in TAMPERING.items() if name not in STOPS_THE_KERNEL))
    if watched is not None:
        out["tamper-files"] = with_cell(release, rewrites(watched))
    return out


def answering(release: nbformat.NotebookNode, function: str, code: str) -> nbformat.NotebookNode:
    """The release with ``code`` (defining ``function``) in a cell right after the stub's own cell,
    so that the check calls it."""
    at = next(i for i, c in enumerate(release.cells)
              if c.cell_type == "code" and f"def {function}(" in c.source) + 1
    return with_cell(release, code, at)


def patching_submission(release: nbformat.NotebookNode, function: str) -> nbformat.NotebookNode:
    """The release with ``function`` (an exercise's answer) patching the grader when called."""
    return answering(release, function, PATCHING_ANSWER + (
        f"\n\ndef {function}(*args, **kwargs):\n    return _patch_the_grader()\n"))


def half_solved(reference: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The reference submission with the second half of its auto-checked exercises back to what the
    student was given: their solution cells stubbed, a lab's fixes left out."""
    from classroom.check_calls import check_calls
    from classroom.exercises import clear_solution, is_lab_solution

    nb = copy.deepcopy(reference)
    calls = check_calls(nb)
    drop = set()
    for k, call in enumerate(calls):
        if k < len(calls) // 2:
            continue
        grade_id = nb.cells[call.cell].metadata.get("nbgrader", {}).get("grade_id", "")
        for i in range(calls[k - 1].cell + 1 if k else 0, call.cell):
            cell = nb.cells[i]
            if cell.metadata.get("nbgrader", {}).get("grade_id", "").startswith(f"{grade_id}-solution"):
                cell.source = clear_solution(cell.source, f"Exercise {call.number}")
            elif is_lab_solution(cell):
                drop.add(i)
    nb.cells = [cell for i, cell in enumerate(nb.cells) if i not in drop]
    return nb
