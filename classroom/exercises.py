"""Finding a chapter's exercises: their solution cells, check cells, names and hints."""

from __future__ import annotations

import ast
import re
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




def cell_python(source: str) -> str:
    """A code cell's source as plain Python: IPython magics (%, %%) and shell escapes (!) become ``pass``."""
    lines = []
    for line in source.splitlines():
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        lines.append(f"{indent}pass" if stripped.startswith(("%", "!")) else line)
    return "\n".join(lines)




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


