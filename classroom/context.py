"""What an exercise needs from its notebook: imports, cheap definitions, the cells that define the names
it reads; and the results of running it (``Run``, ``Outcome``)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

import nbformat

from classroom.exercises import Exercise, cell_python, clear_solution, is_lab_solution


def _top_level_statements(nb: nbformat.NotebookNode,
                          upto: int | None = None) -> Iterator[tuple[str, ast.stmt]]:
    """(cell source, statement) for every top-level statement of the code cells before cell ``upto``."""
    for cell in nb.cells[:upto]:
        if cell.cell_type != "code" or is_lab_solution(cell):  # a lab's fix is never context
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
    output: str = ""  # what the cells printed (a prediction check's comparison, a verdict)

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


def exercise_sources(nb: nbformat.NotebookNode, ex: Exercise, student: bool) -> list[str]:
    """The solution cells (stubbed when ``student``) then the check cell, as code to run."""
    if ex.check_cell is None:
        raise ValueError(f"{ex.notebook}: {ex.name} has no auto-check cell after its solution")
    sources = [nb.cells[i].source for i in ex.solution_cells]
    if student:
        sources = [clear_solution(src, ex.name) for src in sources]
    else:
        sources += [nb.cells[i].source for i in ex.lab_cells]  # a lab's fixes
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
    for source in exercise_sources(nb, ex, student=False):
        defined, used = _names(source)
        pending |= used - defined
    pending -= ignore
    selected = []
    for i in range(min(ex.solution_cells, default=ex.check_cell or 0) - 1, -1, -1):
        if nb.cells[i].cell_type != "code" or is_lab_solution(nb.cells[i]):
            continue
        defined, used = _names(nb.cells[i].source)
        if defined & pending:
            selected.append(i)
            pending = (pending - defined) | (used - ignore)
    return sorted(selected)
