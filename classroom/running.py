"""Running an exercise as the student gets it (a stub) and as solved, as cheaply as it allows."""

from __future__ import annotations

import ast
import contextlib
import copy
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat

from classroom.edition import chapter_notebooks, make_student, verify_student
from classroom.exercises import Exercise, cell_python, clear_solution, find_exercises, gate_problems


def _top_level_statements(nb: nbformat.NotebookNode,
                          upto: int | None = None) -> Iterator[tuple[str, ast.stmt]]:
    """(cell source, statement) for every top-level statement of the code cells before cell ``upto``."""
    for cell in nb.cells[:upto]:
        if cell.cell_type != "code":
            continue
        source = cell_python(cell.source)
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in tree.body:
            yield source, node


def notebook_imports(nb: nbformat.NotebookNode) -> str:
    """Every top-level import statement of the notebook's code cells, as one block of code."""
    lines = [ast.get_source_segment(source, node) or ast.unparse(node)
             for source, node in _top_level_statements(nb)
             if isinstance(node, (ast.Import, ast.ImportFrom))]
    return "\n".join(dict.fromkeys(lines))


def _is_literal_assignment(node: ast.stmt) -> bool:
    """``NAME = <literal>`` or ``A, B = 1, 2`` (numbers, strings, containers of them): no side effect."""

    def names(target: ast.expr) -> bool:
        return isinstance(target, ast.Name) or (
            isinstance(target, (ast.Tuple, ast.List)) and all(names(e) for e in target.elts))

    if isinstance(node, ast.Assign) and all(names(t) for t in node.targets):
        value = node.value
    elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        value = node.value
    else:
        return False
    try:
        ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def notebook_context(nb: nbformat.NotebookNode, upto: int | None = None) -> list[str]:
    """The cheap top-level statements of the code cells before cell ``upto``, in order.

    Imports, ``def`` and ``class`` statements, and assignments of literal constants (``d_model = 32``):
    what an exercise may use from its notebook without running the notebook's computations.
    """
    statements = []
    for source, node in _top_level_statements(nb, upto):
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef,
                             ast.ClassDef)) or _is_literal_assignment(node):
            statements.append(ast.get_source_segment(source, node) or ast.unparse(node))
    return statements


@dataclass
class Run:
    """How one run of an exercise's cells ended: ``error`` is None when every cell ran through."""

    error: str | None
    kinds: tuple[str, ...] = ()  # the names of the exception's classes (its MRO)
    message: str = ""

    @property
    def check_failed(self) -> bool:
        """True when the check raised ``utils.checks.CheckFailed`` (a wrong or missing answer)."""
        return "CheckFailed" in self.kinds


@dataclass
class Outcome:
    """An exercise run as the student gets it (``stub``) and as solved (``solution``), and how it ran:
    "self-contained", "sliced" (with the earlier cells that define what it reads) or "kernel"."""

    exercise: Exercise
    stub: Run
    solution: Run
    mode: str = "self-contained"

    @property
    def self_contained(self) -> bool:
        return self.mode == "self-contained"


def _sources(nb: nbformat.NotebookNode, ex: Exercise, student: bool) -> list[str]:
    """The solution cells (stubbed when ``student``) then the check cell, as code to run."""
    if ex.check_cell is None:
        raise ValueError(f"{ex.notebook}: {ex.name} has no auto-check cell after its solution")
    sources = [nb.cells[i].source for i in ex.solution_cells]
    if student:
        sources = [clear_solution(src, ex.name) for src in sources]
    return [cell_python(src) for src in [*sources, nb.cells[ex.check_cell].source]]


class _Names(ast.NodeVisitor):
    """The names a cell binds at top level (Python has no block scope) and every name it reads."""

    def __init__(self) -> None:
        self.defined: set[str] = set()
        self.used: set[str] = set()

    def visit_Name(self, node: ast.Name) -> None:
        (self.used if isinstance(node.ctx, ast.Load) else self.defined).add(node.id)

    def _own_scope(self, node: ast.AST) -> None:  # a def, class, lambda or comprehension
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.defined.add(node.name)
        self.used |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = _own_scope
    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _own_scope

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        self.defined |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}

    visit_ImportFrom = visit_Import


def _names(source: str) -> tuple[set[str], set[str]]:
    try:
        tree = ast.parse(cell_python(source))
    except SyntaxError:
        return set(), set()
    visitor = _Names()
    visitor.visit(tree)
    return visitor.defined, visitor.used


def slice_cells(nb: nbformat.NotebookNode, ex: Exercise) -> list[int]:
    """The code cells before an exercise that bind, directly or through each other, the names it reads.

    A static backward slice: cheaper than running the notebook, but blind to objects changed in place
    by later cells (a model trained by ``fit(model, ...)``); ``exercise_outcome`` checks the result.
    """
    import builtins

    ignore = set(dir(builtins))
    pending: set[str] = set()
    for source in _sources(nb, ex, student=False):
        defined, used = _names(source)
        pending |= used - defined
    pending -= ignore
    selected = []
    for i in range(min(ex.solution_cells, default=ex.check_cell or 0) - 1, -1, -1):
        if nb.cells[i].cell_type != "code":
            continue
        defined, used = _names(nb.cells[i].source)
        if defined & pending:
            selected.append(i)
            pending = (pending - defined) | (used - ignore)
    return sorted(selected)


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
    try:
        with strict_checks():
            for k, source in enumerate(sources):
                exec(compile(source, f"<{label}, cell {k}>", "exec"), namespace)
    except Exception as err:  # noqa: BLE001 - an exercise cell may raise anything
        return Run(type(err).__name__, tuple(c.__name__ for c in type(err).__mro__), str(err))
    return Run(None)


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
        stub = _run(_sources(nb, ex, True), namespace, label) if only in (None, True) else not_run
        solution = _run(_sources(nb, ex, False), namespace, label) if only in (None, False) else not_run
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


_KERNEL_HELPER = """
import os as __os
__os.environ["COURSE_CHECKS"] = "strict"
import json as __json
__results__ = {}
def __try__(key, sources):
    try:
        for source in sources:
            exec(compile(source, key, "exec"), globals())
    except Exception as err:
        __results__[key] = [type(err).__name__, [c.__name__ for c in type(err).__mro__], str(err)]
    else:
        __results__[key] = [None, [], ""]
"""


def run_exercises_in_kernel(nb: nbformat.NotebookNode, path: str | Path,
                            timeout: int = 600) -> dict[tuple[int, bool], Run]:
    """Run the whole notebook in a Jupyter kernel, each exercise first as a stub, then solved.

    The fallback for exercises that are not self-contained; keyed by (exercise number, student).
    """
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    exercises = [ex for ex in find_exercises(nb, path) if ex.check_cell is not None]
    solution_cells = {i for ex in exercises for i in ex.solution_cells}
    at_check = {ex.check_cell: ex for ex in exercises}
    cells = [nbformat.v4.new_code_cell(_KERNEL_HELPER)]
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or i in solution_cells:
            continue
        if i in at_check:
            ex = at_check[i]
            for student in (True, False):
                key = f"{ex.number}:{int(student)}"
                cells.append(nbformat.v4.new_code_cell(f"__try__({key!r}, {_sources(nb, ex, student)!r})"))
        else:
            cells.append(nbformat.v4.new_code_cell(cell.source))
    cells.append(nbformat.v4.new_code_cell('print("__RESULTS__" + __json.dumps(__results__))'))
    runner = nbformat.v4.new_notebook(cells=cells, metadata=copy.deepcopy(nb.metadata))
    client = NotebookClient(runner, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(Path(path).parent)}})
    try:
        client.execute()
    except CellExecutionError as err:
        failed = Run("CellExecutionError", ("CellExecutionError",), f"the notebook failed: {err}"[:2000])
        return {(ex.number, student): failed for ex in exercises for student in (True, False)}
    text = "".join(out.get("text", "") for out in runner.cells[-1].outputs)
    raw = json.loads(text.split("__RESULTS__", 1)[1])
    results = {}
    for key, (error, kinds, message) in raw.items():
        number, student = key.split(":")
        results[(int(number), bool(int(student)))] = Run(error, tuple(kinds), message)
    return results


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


