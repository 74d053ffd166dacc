"""Running an exercise as the student gets it (a stub) and as solved, as cheaply as it allows."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import nbformat

from classroom.context import (
    Outcome,
    Run,
    exercise_sources,
    notebook_context,
    notebook_imports,
    slice_cells,
)
from classroom.edition import chapter_notebooks, make_student, verify_student
from classroom.exercises import Exercise, cell_python, find_exercises, gate_problems
from classroom.kernel import run_exercises_in_kernel

__all__ = ["Outcome", "Run", "check", "check_exercises", "exercise_outcome", "exercise_outcomes",
           "outcome_problems", "run_exercise", "run_exercise_both", "run_exercises_in_kernel",
           "run_with_answer", "slice_cells"]


def _namespace(nb: nbformat.NotebookNode, ex: Exercise, cells: list[int] | None) -> dict[str, object]:
    """A fresh namespace with the notebook's imports and cheap context, then ``cells`` run in it."""
    namespace: dict[str, object] = {"__name__": "__exercise__"}
    try:
        from IPython.display import display  # notebooks call it without importing it

        namespace["display"] = display
    except ImportError:
        pass
    exec(compile(notebook_imports(nb), f"<{ex.notebook} imports>", "exec"), namespace)
    for statement in notebook_context(nb, min(ex.solution_cells, default=ex.check_cell)):
        try:  # a definition that needs the notebook's state is skipped; a NameError tells later
            exec(compile(statement, f"<{ex.notebook} context>", "exec"), namespace)
        except Exception:  # noqa: BLE001
            continue
    for i in cells or []:
        exec(compile(cell_python(nb.cells[i].source), f"<{ex.notebook} cell {i}>", "exec"), namespace)
    return namespace


def _run(sources: list[str], namespace: dict[str, object], label: str) -> Run:
    from utils.checks import strict_checks
    from utils.runtime import seed_everything

    seed_everything(0)
    printed = io.StringIO()
    try:
        with strict_checks(), contextlib.redirect_stdout(printed):
            for k, source in enumerate(sources):
                exec(compile(source, f"<{label}, cell {k}>", "exec"), namespace)
    except Exception as err:  # noqa: BLE001 - an exercise cell may raise anything
        return Run(type(err).__name__, tuple(c.__name__ for c in type(err).__mro__), str(err),
                   printed.getvalue())
    return Run(None, output=printed.getvalue())


def run_exercise(nb: nbformat.NotebookNode, ex: Exercise, student: bool,
                 cells: list[int] | None = None) -> Run:
    """Run an exercise's cells in a fresh namespace holding the notebook's imports, definitions and
    literal constants from before the exercise (see ``notebook_context``), none of its computations;
    with ``cells``, those notebook cells run first (see ``slice_cells``)."""
    return run_exercise_both(nb, ex, cells, only=student)[0 if student else 1]


def run_exercise_both(nb: nbformat.NotebookNode, ex: Exercise, cells: list[int] | None = None,
                      only: bool | None = None) -> tuple[Run, Run]:
    """(stub run, solution run) of an exercise, in one namespace prepared once (``run_exercise``)."""
    label = f"{ex.notebook}: {ex.name}"
    not_run = Run("NotRun", ("NotRun",), "not run")
    with contextlib.redirect_stdout(io.StringIO()):
        from utils.runtime import seed_everything

        seed_everything(0)
        try:
            namespace = _namespace(nb, ex, cells)
        except Exception as err:  # noqa: BLE001 - the notebook's own cells failed
            failed = Run(type(err).__name__, tuple(c.__name__ for c in type(err).__mro__), str(err))
            return failed, failed
        stub = _run(exercise_sources(nb, ex, True), namespace, label) if only in (None, True) else not_run
        solution = (_run(exercise_sources(nb, ex, False), namespace, label) if only in (None, False)
                    else not_run)
    return stub, solution


def run_with_answer(nb: nbformat.NotebookNode, ex: Exercise, answer: str,
                    cells: list[int] | None = None) -> Run:
    """Run an exercise's check with ``answer`` (the code of a whole solution cell) in place of the
    reference solution, in the same fresh namespace as ``run_exercise``; the check runs strict."""
    if ex.check_cell is None:
        raise ValueError(f"{ex.notebook}: {ex.name} has no auto-check cell after its solution")
    label = f"{ex.notebook}: {ex.name} (a given answer)"
    with contextlib.redirect_stdout(io.StringIO()):
        from utils.runtime import seed_everything

        seed_everything(0)
        try:
            namespace = _namespace(nb, ex, cells)
        except Exception as err:  # noqa: BLE001 - the notebook's own cells failed
            return Run(type(err).__name__, tuple(c.__name__ for c in type(err).__mro__), str(err))
        sources = [cell_python(answer), cell_python(nb.cells[ex.check_cell].source)]
        return _run(sources, namespace, label)


def exercise_outcome(nb: nbformat.NotebookNode, ex: Exercise, path: str | Path = "notebook",
                     allow_kernel: bool = True, kernel_cache: dict | None = None) -> Outcome:
    """Run one exercise as a stub and solved, as cheaply as it allows.

    First in a fresh namespace (a self-contained exercise). If its cells raise ``NameError`` they need
    the notebook's state: then with the earlier cells that define what they read (``slice_cells``), and
    if that does not give a clean result either, with ``allow_kernel``, in a run of the whole notebook
    in a Jupyter kernel (slow; one run per notebook, kept in ``kernel_cache``).
    """
    stub, solution = run_exercise_both(nb, ex)
    if "NameError" not in (stub.error, solution.error):
        return Outcome(ex, stub, solution)
    sliced = Outcome(ex, *run_exercise_both(nb, ex, slice_cells(nb, ex)), "sliced")
    if not allow_kernel or not outcome_problems(sliced):
        return sliced
    cache = kernel_cache if kernel_cache is not None else {}
    if str(path) not in cache:
        cache[str(path)] = run_exercises_in_kernel(nb, path)
    results = cache[str(path)]
    return Outcome(ex, results[(ex.number, True)], results[(ex.number, False)], "kernel")


def exercise_outcomes(nb: nbformat.NotebookNode, path: str | Path = "notebook",
                      allow_kernel: bool = True) -> list[Outcome]:
    """``exercise_outcome`` for every exercise of a notebook that has a check."""
    cache: dict = {}
    return [exercise_outcome(nb, ex, path, allow_kernel, cache)
            for ex in find_exercises(nb, path) if ex.check_cell is not None]


def outcome_problems(outcome: Outcome) -> list[str]:
    """What is wrong with one exercise's outcome: the stub must fail with a hint, the solution pass."""
    ex, stub, problems = outcome.exercise, outcome.stub, []
    label = f"{Path(ex.notebook).name}: {ex.name}"
    if stub.error is None:
        problems.append(f"{label}: the check passed on the stub (it must fail until the student writes code)")
    elif not stub.check_failed:
        problems.append(f"{label}: on the stub the cells raised {stub.error}: {stub.message} "
                        "(expected utils.checks.CheckFailed)")
    elif ex.lab_cells and not ex.solution_cells:
        pass  # a find-the-bug lab: the buggy code fails its check, with whatever diagnosis fits
    elif "not implemented yet" not in stub.message or "Hint:" not in stub.message:
        problems.append(f"{label}: the stub's message lacks 'not implemented yet' or a hint: {stub.message}")
    elif ex.hint and ex.hint not in stub.message:
        problems.append(f"{label}: the stub's message does not show the check's hint: {stub.message}")
    if outcome.solution.error is not None:
        problems.append(f"{label}: the reference solution fails its check: {outcome.solution.error}: "
                        f"{outcome.solution.message}")
    return problems


def check_exercises(nb: nbformat.NotebookNode, path: str | Path = "notebook") -> list[str]:
    """Run every exercise as the student gets it and as solved; returns the problems found."""
    problems = [f"{Path(path).name}: {ex.name} has no auto-check cell after its solution"
                for ex in find_exercises(nb, path) if ex.check_cell is None]
    for outcome in exercise_outcomes(nb, path):
        problems += outcome_problems(outcome)
    return problems




def check(chapters: str | Path, out: str | Path | None, execute: bool) -> list[str]:
    """Check the student edition (the one in ``out``, or made in memory) of every chapter."""
    problems = []
    for path in chapter_notebooks(chapters):
        full = nbformat.read(path, as_version=4)
        target = Path(out) / path.name if out is not None else None
        if target is not None and not target.exists():
            problems.append(f"{target}: missing (run `make student`)")
            continue
        student = nbformat.read(target, as_version=4) if target is not None else make_student(full, path)
        problems += [f"{path.name}: {p}" for p in verify_student(full, student) + gate_problems(full)]
        if not find_exercises(full, path):
            problems.append(f"{path.name}: has no exercise with solution markers")
        if execute:
            problems += check_exercises(full, path)
    return problems
