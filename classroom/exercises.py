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
# a check cell of the registry's kind: check("4.2", my_function) (utils.exercises)
CHECK_CALL = re.compile(r"""\bcheck\(\s*(["'])(?P<number>\d+\.\d+)\1""")
_DIFFICULTY = re.compile(r"\*(?P<level>Easy|Medium|Hard) · about (?P<minutes>\d+) minutes?\.\*")
POINTS = {"Easy": 1, "Medium": 2, "Hard": 3}  # an exercise's points (nbgrader, `classroom grade`)
DEFAULT_POINTS = 1  # for an exercise whose text gives no difficulty line
LAB_SOLUTION_TAG = "lab-solution"  # a find-the-bug lab's fix: a code cell inside a solution gate


TEACHER_TAG = "teacher-only"  # a cell that gives a lab's answers away: the book's, never a student's


def is_teacher_only(cell: nbformat.NotebookNode) -> bool:
    """A cell tagged ``teacher-only``: the summary naming a lab's bugs, the prose that reads a lab's
    measured results. The editions a student gets leave it out; the book keeps it."""
    return TEACHER_TAG in cell.get("metadata", {}).get("tags", [])


def is_lab_solution(cell: nbformat.NotebookNode) -> bool:
    """A code cell tagged ``lab-solution`` (the fix of a lab's buggy cell; students never get it)."""
    return LAB_SOLUTION_TAG in cell.get("metadata", {}).get("tags", [])


def difficulty_points(markdown: str) -> tuple[str, int, int | None]:
    """(difficulty, points, minutes) from an exercise's ``*Medium · about 15 minutes.*`` line."""
    found = _DIFFICULTY.search(markdown)
    if not found:
        return "", DEFAULT_POINTS, None
    return found.group("level"), POINTS[found.group("level")], int(found.group("minutes"))


def cell_python(source: str) -> str:
    """A code cell's source as plain Python: IPython magics (%, %%) and shell escapes (!) become ``pass``."""
    lines = []
    for line in source.splitlines():
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        lines.append(f"{indent}pass" if stripped.startswith(("%", "!")) else line)
    return "\n".join(lines)


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
    text_cell: int | None = None  # the markdown cell holding its {exercise} block
    lab_cells: list[int] = field(default_factory=list)  # a lab's fixes (cells tagged lab-solution)
    difficulty: str = ""  # Easy, Medium or Hard ("" when the text does not say)
    points: int = DEFAULT_POINTS
    registered: object = None  # its utils.exercises.Exercise, when its check cell is check("N.k", ...)

    @property
    def grade_id(self) -> str:
        """The id nbgrader knows its check cell by: "ex-4-2" for "Exercise 4.2" (nbgrader's ids allow
        only letters, digits, "_" and "-")."""
        number = self.name.rsplit(" ", 1)[-1] if self.name.startswith("Exercise ") else str(self.number)
        return f"ex-{re.sub(r'[^A-Za-z0-9_-]', '-', number)}"


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
    texts: dict[str, int] = {}  # {exercise} label -> its markdown cell
    last_text: int | None = None  # the latest {exercise} cell not yet given to an exercise
    gate: Exercise | None = None  # the exercise whose {solution-start} gate is open
    current: Exercise | None = None  # the exercise still waiting for its check cell
    for i, cell in enumerate(nb.cells):
        src = cell.source
        if cell.cell_type == "markdown":
            if _EXERCISE.search(src):
                label = _LABEL.search(_EXERCISE.search(src).group("body"))
                texts[label.group("label") if label else f"cell {i}"] = last_text = i
            start = _SOLUTION_START.search(src)
            if start:
                label = start.group("label")
                gate = current = Exercise(str(path), len(exercises) + 1, "", label=label,
                                          text_cell=texts.get(label, last_text))
                last_text = None
                exercises.append(gate)
            if _SOLUTION_END.search(src):
                gate = None
            continue
        if cell.cell_type != "code":
            continue
        if BEGIN in src:
            if gate is None and (current is None or current.check_cell is not None or
                                 not current.solution_cells):
                current = Exercise(str(path), len(exercises) + 1, "", text_cell=last_text)
                last_text = None
                exercises.append(current)
            target = gate or current
            assert target is not None
            target.solution_cells.append(i)
        elif gate is not None:
            if is_lab_solution(cell):
                gate.lab_cells.append(i)
            continue  # other unmarked code inside a gate: reported by `gate_problems`, kept as it is
        elif current is not None and current.check_cell is None and (current.solution_cells or
                                                                      current.lab_cells):
            current.check_cell = i
            current = None
    for ex in exercises:
        default = f"Exercise {chapter}.{ex.number}" if chapter is not None else f"Exercise {ex.number}"
        registered = None
        if ex.check_cell is not None:
            check_src = nb.cells[ex.check_cell].source
            call = CHECK_CALL.search(check_src)
            if call:  # the registry holds its name, hint and points (utils.exercises)
                registered = registry_entry(call.group("number"))
                ex.name, ex.hint = registered.name, registered.hint
            else:
                found = _CHECK_NAME.search(check_src)
                ex.name = found.group("name") if found else default
                ex.hint = _hint_of(check_src)
        else:
            ex.name = default
        if ex.text_cell is not None:
            text = nb.cells[ex.text_cell].source
            ex.difficulty, ex.points, _ = difficulty_points(text)
            label = _LABEL.search(_EXERCISE.search(text).group("body")) if _EXERCISE.search(text) else None
            ex.label = ex.label or (label.group("label") if label else "")
        if registered is not None:
            ex.difficulty, ex.points, ex.registered = registered.difficulty, registered.points, registered
    return exercises


def registry_entry(number: str):
    """The exercise ``number`` ("4.2") of the course's registry (``utils.exercises``)."""
    from utils.exercises import get

    return get(number)


def gate_problems(nb: nbformat.NotebookNode) -> list[str]:
    """Code cells inside a solution gate without BEGIN/END markers (they would reach students)."""
    problems, in_gate = [], False
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            in_gate = bool(_SOLUTION_START.search(cell.source)) or (
                in_gate and not _SOLUTION_END.search(cell.source))
        elif cell.cell_type == "code" and in_gate and BEGIN not in cell.source and not is_lab_solution(cell):
            problems.append(f"cell {i} is inside a solution gate but has no '{BEGIN}' marker")
    return problems
