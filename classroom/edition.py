"""The student edition: the chapters with the solutions taken out."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import nbformat

from classroom.exercises import (
    _SOLUTION_END,
    _SOLUTION_START,
    BEGIN,
    END,
    clear_solution,
    find_exercises,
    is_lab_solution,
    is_teacher_only,
    solution_lines,
)
from classroom.markdown import myst_to_markdown

# What a student must never see in a notebook's markdown: MyST syntax that JupyterLab and Colab show raw.
RAW_MYST = re.compile(r"```\{|:::\{|\{solution|\{[\w:.-]+\}`")


def converted_cells(nb: nbformat.NotebookNode, path: str | Path = "notebook",
                    lab_solutions: bool = False) -> list[tuple[int, nbformat.NotebookNode]]:
    """(index in ``nb``, copied cell) for the cells an edition keeps, markdown made plain, outputs cleared.

    Gone: the markdown of every solution gate ({solution-start} to {solution-end}), the cells tagged
    ``teacher-only`` (a lab's answers) and, unless ``lab_solutions``, the cells tagged
    ``lab-solution``. Solution code is left as it is.
    """
    exercises = find_exercises(nb, path)
    names = {ex.label: ex.name for ex in exercises if ex.label}
    answers = answer_cells(nb, exercises)
    kept = []
    in_gate = False
    for i, original in enumerate(nb.cells):
        if is_teacher_only(original):
            continue
        cell = copy.deepcopy(original)
        if cell.cell_type == "markdown":
            if _SOLUTION_START.search(cell.source):
                in_gate = True
            if in_gate:
                if _SOLUTION_END.search(cell.source):
                    in_gate = False
                if i in answers:  # an open question's answer: the editions turn it into an answer cell
                    cell.source = myst_to_markdown(cell.source, names)
                    cell.metadata["course_answer"] = answers[i]
                    kept.append((i, cell))
                continue
            cell.source = myst_to_markdown(cell.source, names)
        elif cell.cell_type == "code":
            if is_lab_solution(cell) and not lab_solutions:
                continue
            cell.outputs = []
            cell.execution_count = None
        kept.append((i, cell))
    return kept


ANSWER_PROMPT = "*Write your answer here.*"


def answer_cells(nb: nbformat.NotebookNode, exercises: list | None = None) -> dict[int, dict]:
    """{cell index: {"exercise": "2.2", "question": k}} for each "**Answer.**" markdown cell inside the
    solution of a registered exercise with open questions (the k-th such cell answers question k); a
    lab's solution holds its fix and the answers to its questions."""
    found: dict[int, dict] = {}
    for ex in exercises if exercises is not None else find_exercises(nb):
        entry = ex.registered
        inside = ex.solution_cells or ex.lab_cells
        if entry is None or not entry.questions or not inside:
            continue
        start = max(i for i in range(min(inside) + 1) if nb.cells[i].cell_type == "markdown"
                    and _SOLUTION_START.search(nb.cells[i].source))
        k = 0
        for i in range(start + 1, len(nb.cells)):
            cell = nb.cells[i]
            if cell.cell_type == "markdown" and _SOLUTION_END.search(cell.source):
                break
            if cell.cell_type == "markdown" and cell.source.lstrip().startswith("**Answer.**") \
                    and k < len(entry.questions):
                found[i] = {"exercise": entry.number, "question": k}
                k += 1
    return found


def answer_prompt(entry, k: int) -> nbformat.NotebookNode:
    """The markdown cell that asks open question ``k`` of a registered exercise; the answer cell (the
    learner's to write) follows it."""
    question = entry.questions[k]
    worth = f"{question.points} point" + ("s" if question.points != 1 else "")
    return nbformat.v4.new_markdown_cell(
        f"**{entry.name}, question {k + 1}** ({worth}, graded by hand): {question.prompt} "
        "Write your answer in the cell below.")


def make_student(nb: nbformat.NotebookNode, path: str | Path = "notebook") -> nbformat.NotebookNode:
    """Return the student edition of a chapter notebook (the input is left unchanged)."""
    from utils.exercises import get

    name_of = {i: ex.name for ex in find_exercises(nb, path) for i in ex.solution_cells}
    student = copy.deepcopy(nb)
    student.cells = []
    for i, cell in converted_cells(nb, path):
        if cell.cell_type == "code" and (BEGIN in cell.source or END in cell.source):
            cell.source = clear_solution(cell.source, name_of.get(i, f"{path} cell {i}"))
        answer = cell.metadata.pop("course_answer", None)
        if answer is not None:
            student.cells.append(answer_prompt(get(answer["exercise"]), answer["question"]))
            cell.source = ANSWER_PROMPT
        student.cells.append(cell)
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
        if cell.cell_type == "code" and is_lab_solution(cell):
            problems.append(f"cell {i} is a lab's solution (tagged lab-solution)")
        raw = RAW_MYST.search(cell.source) if cell.cell_type == "markdown" else None
        if raw:
            problems.append(f"cell {i} still holds MyST that Jupyter shows raw: {raw.group(0)!r}")
    return problems


def chapter_notebooks(chapters: str | Path = "chapters") -> list[Path]:
    """The chapter notebooks, in order."""
    return sorted(Path(chapters).glob("[0-9]*.ipynb"))


def write_student_edition(chapters: str | Path, out: str | Path, language: str = "en") -> list[Path]:
    """Write the student edition of every chapter notebook into ``out``, with a README in ``language``
    (classroom.readmes); return the paths written."""
    from classroom.readmes import student_readme

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for path in chapter_notebooks(chapters):
        nb = nbformat.read(path, as_version=4)
        target = out / path.name
        nbformat.write(make_student(nb, path), target)
        written.append(target)
    (out / "README.md").write_text(student_readme(language), encoding="utf-8")
    return written


