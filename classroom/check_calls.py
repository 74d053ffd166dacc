"""What the isolated grader grades: the course's check calls, and the submission's cells they need.

The spec comes from the course's notebook (the chapter, or nbgrader's source), never from the
submission: which exercises there are, the name of each answer and the notebook values each check is
given. The submission only supplies code: its imports, its cheap definitions and the cells that define
what a check reads (a static backward slice, as ``classroom.context`` makes for the tests).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import nbformat

from classroom.context import notebook_context, notebook_imports
from classroom.exercises import cell_python, is_lab_solution


@dataclass(frozen=True)
class CheckCall:
    """One auto-check cell of the course: ``check("2.2", lookup_jacobian, **context)``."""

    cell: int            # its index in the course's notebook
    source: str          # the cell's source (matched in the submission)
    number: str          # "2.2"
    answer: str          # the expression naming the student's answer
    context: tuple[tuple[str, str], ...]  # (keyword, expression) of the notebook's values it passes
    hidden: bool         # the cell also runs the hidden inputs (nbgrader's source)


def check_calls(nb: nbformat.NotebookNode) -> list[CheckCall]:
    """The registered check cells of a notebook (``utils.exercises.check`` calls), in order."""
    calls = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or "check(" not in cell.source:
            continue
        try:
            tree = ast.parse(cell_python(cell.source))
        except SyntaxError:
            continue
        found = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
                 and getattr(node.func, "id", None) == "check" and node.args
                 and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)]
        if not found:
            continue
        first = found[0]
        answer = ast.unparse(first.args[1]) if len(first.args) > 1 else "None"
        context = tuple((kw.arg, ast.unparse(kw.value)) for kw in first.keywords
                        if kw.arg not in (None, "hidden"))
        hidden = any(kw.arg == "hidden" for node in found for kw in node.keywords)
        calls.append(CheckCall(i, cell.source, first.args[0].value, answer, context, hidden))
    return calls


def _read_names(expressions: list[str]) -> set[str]:
    names: set[str] = set()
    for expression in expressions:
        names |= {n.id for n in ast.walk(ast.parse(expression, mode="eval")) if isinstance(n, ast.Name)}
    return names


def _cell_names(source: str) -> tuple[set[str], set[str]]:
    """(names the cell binds at top level, names it reads from the notebook's namespace).

    A function's parameters and locals are its own (``symtable`` tells them apart): only the globals a
    function reads count, so a parameter that shares a name with a notebook variable drags in no cell.
    """
    import symtable

    try:
        table = symtable.symtable(cell_python(source), "<cell>", "exec")
    except SyntaxError:
        return set(), set()
    defined = {s.get_name() for s in table.get_symbols()
               if s.is_assigned() or s.is_imported() or s.is_namespace()}
    used = {s.get_name() for s in table.get_symbols() if s.is_referenced()}
    pending = list(table.get_children())
    while pending:
        child = pending.pop()
        pending += child.get_children()
        used |= {s.get_name() for s in child.get_symbols() if s.is_referenced() and s.is_global()}
    return defined, used


def _imported(nb: nbformat.NotebookNode, upto: int) -> set[str]:
    names: set[str] = set()
    for cell in nb.cells[:upto]:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell_python(cell.source))
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}
    return names


def needed_cells(nb: nbformat.NotebookNode, upto: int, names: set[str]) -> list[int]:
    """The code cells before ``upto`` that bind, directly or through each other, ``names``: every
    cell binding a name the check or a selected cell reads, in the notebook's order (a later cell that
    rebinds a name, such as a lab's repaired function, runs after the first)."""
    import builtins

    cells = {i: _cell_names(nb.cells[i].source) for i in range(min(upto, len(nb.cells)))
             if nb.cells[i].cell_type == "code" and not is_lab_solution(nb.cells[i])}
    # what the notebook's import statements bind is there already (``notebook_imports`` runs first):
    # a cell that also imports such a name is not needed for it
    ignore = set(dir(builtins)) | _imported(nb, upto)
    pending, selected = set(names) - ignore, set()
    grew = True
    while grew:
        grew = False
        for i, (defined, used) in cells.items():
            if i not in selected and defined & pending:
                selected.add(i)
                pending |= used - ignore
                grew = True
    return sorted(selected)


def position_in(submission: nbformat.NotebookNode, call: CheckCall) -> int:
    """Where the check cell stands in the submission (a cell with its source, else one making the same
    exercise's check call); the end of the notebook when the student deleted it."""
    for i, cell in enumerate(submission.cells):
        if cell.cell_type == "code" and cell.source.strip() == call.source.strip():
            return i
    for i, cell in enumerate(submission.cells):
        if cell.cell_type == "code" and any(c.number == call.number for c in check_calls(
                nbformat.v4.new_notebook(cells=[cell]))):
            return i
    return len(submission.cells)


def _untagged(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The submission with no cell tagged as a lab's fix: in a submission, every cell is the student's
    (a reference submission keeps the fixes' tags, which the edition reads to leave them out)."""
    import copy

    if not any(is_lab_solution(cell) for cell in nb.cells):
        return nb
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags")
        if tags:
            cell.metadata["tags"] = [t for t in tags if t != "lab-solution"]
    return nb


def sources_for(submission: nbformat.NotebookNode, call: CheckCall) -> list[tuple[str, str]]:
    """(label, code) to run in the sandbox before the check: imports, cheap definitions, the cells that
    define what the check reads."""
    submission = _untagged(submission)
    upto = position_in(submission, call)
    names = _read_names([call.answer, *(expr for _, expr in call.context)])
    runs = [("<imports>", notebook_imports(submission))]
    runs += [("<definitions>", statement) for statement in notebook_context(submission, upto)]
    runs += [(f"<cell {i}>", cell_python(submission.cells[i].source))
             for i in needed_cells(submission, upto, names)]
    return runs
