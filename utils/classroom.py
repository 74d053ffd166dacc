"""The classroom kit: a student edition of the chapters with the solutions taken out, and its checks.

    python -m utils.classroom student --out student            # write student/NN_name.ipynb (`make student`)
    python -m utils.classroom student --out student --verify   # ... then check it (see below)
    python -m utils.classroom check                            # check, writing nothing
    python -m utils.classroom grade submissions/*.ipynb --csv grades.csv   # run and read the checks

The student edition follows nbgrader's ``ClearSolutions`` convention, with nbformat only:

- in every code cell the lines from ``### BEGIN SOLUTION`` to ``### END SOLUTION`` become
  ``# YOUR CODE HERE`` and ``raise NotImplementedError("Exercise N.k: write your solution here")`` at
  the indentation of the ``### BEGIN SOLUTION`` line (the ``def`` line above it stays);
- the ``{solution-start}`` and ``{solution-end}`` markdown cells, and any markdown between them, go;
- the ``{exercise}`` blocks become plain markdown headings (Jupyter does not render MyST directives);
- the auto-check cells stay; every output and execution count is cleared.

Exercise rule (the tests rely on it): an exercise is SELF-CONTAINED. Its solution cell(s) and the
auto-check cell after ``{solution-end}`` must run in a fresh namespace that holds only the notebook's
imports (every top-level ``import`` / ``from ... import``) and, from the cells before the exercise,
its top-level ``def`` / ``class`` statements and literal constants (``d_model = 32``), but none of its
computations (no data, model or tensor made earlier). Data the check needs is made inside the check
cell. The check calls ``utils.checks.check_function`` (or ``check_value``) with a literal ``hint=``;
on the stub it must raise ``CheckFailed`` saying "not implemented yet" with that hint, and on the
reference solution it must pass. An exercise that breaks the rule still gets tested, more slowly: with
the earlier cells that define the names it reads (``slice_cells``), or failing that in a run of its
whole notebook in a Jupyter kernel (``run_exercises_in_kernel``); the test warns.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import io
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
STUB_COMMENT = "# YOUR CODE HERE"
_SOLUTION_START = re.compile(r"^[`:]{3,}\s*\{solution-start\}[ \t]*(?P<label>\S*)", re.M)
_SOLUTION_END = re.compile(r"^[`:]{3,}\s*\{solution-end\}", re.M)
_EXERCISE = re.compile(
    r"^(?P<fence>[`:]{3,})\s*\{exercise\}[ \t]*(?P<title>[^\n]*)\n(?P<body>.*?)^(?P=fence)\s*$", re.M | re.S)
_LABEL = re.compile(r"^\s*:label:\s*(?P<label>\S+)", re.M)
_CHECK_NAME = re.compile(r"""\bname\s*=\s*(["'])(?P<name>.+?)\1""")


# --- finding exercises and writing the student edition ------------------------------------------------------

@dataclass
class Exercise:
    """One exercise of a notebook: its solution code cells, its check cell, its name and hint."""

    notebook: str
    number: int  # 1, 2, ... within the notebook
    name: str  # "Exercise 4.2", as the check cell names it
    label: str = ""  # the {exercise} label named by {solution-start}, e.g. "ex-04-softmax"
    solution_cells: list[int] = field(default_factory=list)
    check_cell: int | None = None
    hint: str | None = None


def _chapter_number(path: str | Path) -> int | None:
    match = re.match(r"(\d+)", Path(path).name)
    return int(match.group(1)) if match else None


def clear_solution(source: str, name: str) -> str:
    """Replace each BEGIN/END SOLUTION block of a code cell by an indented stub that raises."""
    out: list[str] = []
    inside = False
    for lineno, line in enumerate(source.splitlines(), start=1):
        stripped = line.strip()
        if stripped == BEGIN:
            if inside:
                raise ValueError(f"{name}: line {lineno} opens '{BEGIN}' again before '{END}'")
            inside = True
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}{STUB_COMMENT}")
            out.append(f'{indent}raise NotImplementedError("{name}: write your solution here")')
        elif stripped == END:
            if not inside:
                raise ValueError(f"{name}: line {lineno} has '{END}' without a '{BEGIN}' before it")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError(f"{name}: '{BEGIN}' is never closed by '{END}'")
    return "\n".join(out)


def solution_lines(source: str) -> list[str]:
    """The stripped, non-empty lines strictly between BEGIN and END SOLUTION markers."""
    lines, inside = [], False
    for line in source.splitlines():
        stripped = line.strip()
        if stripped in (BEGIN, END):
            inside = stripped == BEGIN
        elif inside and stripped:
            lines.append(stripped)
    return lines


def _hint_of(check_source: str) -> str | None:
    """The literal ``hint=`` string of the check call, when it is one."""
    try:
        tree = ast.parse(cell_python(check_source))
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg == "hint":
                    try:
                        value = ast.literal_eval(kw.value)
                    except ValueError:
                        return None
                    return value if isinstance(value, str) else None
    return None


def find_exercises(nb: nbformat.NotebookNode, path: str | Path = "notebook") -> list[Exercise]:
    """Find each exercise: code cells holding solution markers, grouped by their solution gate."""
    chapter = _chapter_number(path)
    exercises: list[Exercise] = []
    gate: Exercise | None = None  # the exercise whose {solution-start} gate is open
    current: Exercise | None = None  # the exercise still waiting for its check cell
    for i, cell in enumerate(nb.cells):
        src = cell.source
        if cell.cell_type == "markdown":
            start = _SOLUTION_START.search(src)
            if start:
                gate = current = Exercise(str(path), len(exercises) + 1, "", label=start.group("label"))
                exercises.append(gate)
            if _SOLUTION_END.search(src):
                gate = None
            continue
        if cell.cell_type != "code":
            continue
        if BEGIN in src:
            if gate is None and (current is None or current.check_cell is not None or
                                 not current.solution_cells):
                current = Exercise(str(path), len(exercises) + 1, "")
                exercises.append(current)
            target = gate or current
            assert target is not None
            target.solution_cells.append(i)
        elif gate is not None:
            continue  # unmarked code inside a gate: reported by `gate_problems`, kept as it is
        elif current is not None and current.check_cell is None and current.solution_cells:
            current.check_cell = i
            current = None
    for ex in exercises:
        default = f"Exercise {chapter}.{ex.number}" if chapter is not None else f"Exercise {ex.number}"
        if ex.check_cell is not None:
            check_src = nb.cells[ex.check_cell].source
            found = _CHECK_NAME.search(check_src)
            ex.name = found.group("name") if found else default
            ex.hint = _hint_of(check_src)
        else:
            ex.name = default
    return exercises


def gate_problems(nb: nbformat.NotebookNode) -> list[str]:
    """Code cells inside a solution gate without BEGIN/END markers (they would reach students)."""
    problems, in_gate = [], False
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            in_gate = bool(_SOLUTION_START.search(cell.source)) or (
                in_gate and not _SOLUTION_END.search(cell.source))
        elif cell.cell_type == "code" and in_gate and BEGIN not in cell.source:
            problems.append(f"cell {i} is inside a solution gate but has no '{BEGIN}' marker")
    return problems


def _exercise_heading(markdown: str, names: dict[str, str]) -> str:
    """Rewrite ``{exercise}`` directive blocks as plain markdown a notebook renders."""

    def replace(match: re.Match[str]) -> str:
        label = _LABEL.search(match.group("body"))
        body = "\n".join(line for line in match.group("body").splitlines()
                         if not re.match(r"^\s*:[\w-]+:", line)).strip()
        title = match.group("title").strip()
        name = names.get(label.group("label") if label else "", "Exercise")
        return f"### {name}: {title}\n\n{body}" if title else f"### {name}\n\n{body}"

    return _EXERCISE.sub(replace, markdown)


def make_student(nb: nbformat.NotebookNode, path: str | Path = "notebook") -> nbformat.NotebookNode:
    """Return the student edition of a chapter notebook (the input is left unchanged)."""
    exercises = find_exercises(nb, path)
    name_of = {i: ex.name for ex in exercises for i in ex.solution_cells}
    names = {ex.label: ex.name for ex in exercises if ex.label}
    student = copy.deepcopy(nb)
    kept = []
    in_gate = False
    for i, cell in enumerate(student.cells):
        if cell.cell_type == "markdown":
            if _SOLUTION_START.search(cell.source):
                in_gate = True
            if in_gate:
                if _SOLUTION_END.search(cell.source):
                    in_gate = False
                continue
            cell.source = _exercise_heading(cell.source, names)
        elif cell.cell_type == "code":
            if BEGIN in cell.source or END in cell.source:
                cell.source = clear_solution(cell.source, name_of.get(i, f"{path} cell {i}"))
            cell.outputs = []
            cell.execution_count = None
        kept.append(cell)
    student.cells = kept
    return student


def verify_student(full: nbformat.NotebookNode, student: nbformat.NotebookNode) -> list[str]:
    """Static checks of a student edition against its full notebook; returns the problems found."""
    problems = []
    text = "\n".join(cell.source for cell in student.cells)
    for marker in (BEGIN, END, "{solution-start}", "{solution-end}"):
        if marker in text:
            problems.append(f"the student edition still contains {marker!r}")
    # A solution line leaks when it appears in the student edition but nowhere else in the full one.
    outside = set()
    for cell in full.cells:
        inside = False
        for line in cell.source.splitlines():
            s = line.strip()
            if s in (BEGIN, END):
                inside = s == BEGIN
            elif not inside:
                outside.add(s)
    student_lines = {line.strip() for line in text.splitlines()}
    for cell in full.cells:
        if cell.cell_type == "code":
            for line in solution_lines(cell.source):
                if line in student_lines and line not in outside:
                    problems.append(f"solution line survives in the student edition: {line!r}")
    for i, cell in enumerate(student.cells):
        if cell.cell_type == "code" and (cell.get("outputs") or cell.get("execution_count")):
            problems.append(f"cell {i} still has outputs or an execution count")
    return problems


# --- running an exercise as a stub and solved, as cheaply as it allows --------------------------------------

def cell_python(source: str) -> str:
    """A code cell's source as plain Python: IPython magics (%, %%) and shell escapes (!) become ``pass``."""
    lines = []
    for line in source.splitlines():
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        lines.append(f"{indent}pass" if stripped.startswith(("%", "!")) else line)
    return "\n".join(lines)


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


# --- whole chapters, grading, and the command line ----------------------------------------------------------

def chapter_notebooks(chapters: str | Path = "chapters") -> list[Path]:
    """The chapter notebooks, in order."""
    return sorted(Path(chapters).glob("[0-9]*.ipynb"))


def write_student_edition(chapters: str | Path, out: str | Path) -> list[Path]:
    """Write the student edition of every chapter notebook into ``out``; return the paths written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for path in chapter_notebooks(chapters):
        nb = nbformat.read(path, as_version=4)
        target = out / path.name
        nbformat.write(make_student(nb, path), target)
        written.append(target)
    (out / "README.md").write_text(
        "# Student edition\n\nThe chapter notebooks of the course with the exercise solutions removed.\n"
        "Each exercise cell raises `NotImplementedError` until you write your solution; the check cell\n"
        "after it then tells you whether your function is right, with a hint when it is not.\n"
        "Generated by `make student` (`python -m utils.classroom student --out student`).\n")
    return written


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


_CHECK_CALL = re.compile(r"\bcheck_(function|value)\s*\(")


def grade_notebook(path: str | Path, timeout: int = 600) -> list[tuple[str, bool, str]]:
    """Run a student's notebook top to bottom (errors allowed) and read each auto-check's verdict.

    Returns (exercise name, passed, message) per check cell: passed when the cell ran without an error;
    the message is the check's last line (its verdict, or the error with the hint).
    """
    from nbclient import NotebookClient

    import os

    nb = nbformat.read(path, as_version=4)
    os.environ["COURSE_CHECKS"] = "strict"  # the kernel inherits it: a failed check raises
    NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(Path(path).parent)}}).execute()
    results = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or not _CHECK_CALL.search(cell.source):
            continue
        found = _CHECK_NAME.search(cell.source)
        name = found.group("name") if found else f"cell {i}"
        errors = [out for out in cell.outputs if out.output_type == "error"]
        if errors:
            results.append((name, False, f"{errors[0].ename}: {errors[0].evalue}".replace("\n", " ")))
        else:
            text = "".join(out.get("text", "") for out in cell.outputs if out.output_type == "stream")
            results.append((name, True, text.strip().splitlines()[-1] if text.strip() else "ran"))
    return results


def main(argv: list[str] | None = None) -> int:
    """Command line: ``student`` (write the student edition), ``check`` (verify one), ``grade``."""
    parser = argparse.ArgumentParser(prog="python -m utils.classroom", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    student = sub.add_parser("student", help="write the student edition")
    student.add_argument("--out", default="student", help="folder to write (default: student)")
    student.add_argument("--verify", action="store_true", help="then check it, running every exercise")
    checker = sub.add_parser("check", help="check the student edition and run every exercise's check")
    checker.add_argument("--out", default=None, help="check this written edition, not one made in memory")
    checker.add_argument("--no-execute", action="store_true", help="only the static checks")
    for p in (student, checker):
        p.add_argument("--chapters", default="chapters", help="folder of the full notebooks")
    grader = sub.add_parser("grade", help="run students' notebooks and report each exercise's check")
    grader.add_argument("notebooks", nargs="+", help="submitted notebooks")
    grader.add_argument("--csv", default=None, help="also write the results to this CSV file")
    args = parser.parse_args(argv)
    if args.command == "grade":
        rows = [(nb, *result) for nb in args.notebooks for result in grade_notebook(nb)]
        for nb, name, passed, message in rows:
            print(f"{'PASS' if passed else 'FAIL'}  {Path(nb).name}  {name}: {message}")
        if args.csv:
            import csv

            with open(args.csv, "w", newline="") as handle:
                csv.writer(handle).writerows([("notebook", "exercise", "passed", "message"), *rows])
        print(f"{sum(r[2] for r in rows)} of {len(rows)} checks passed")
        return 0
    if args.command == "student":
        written = write_student_edition(args.chapters, args.out)
        print(f"Wrote {len(written)} student notebooks to {args.out}/")
        if not args.verify:
            return 0
        problems = check(args.chapters, args.out, execute=True)
    else:
        problems = check(args.chapters, args.out, execute=not args.no_execute)
    for problem in problems:
        print("PROBLEM:", problem)
    print("Student edition: OK" if not problems else f"Student edition: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
