"""Grading students' notebooks by running them and reading each auto-check's verdict.

    python -m classroom grade SUBMISSIONS... [--csv grades.csv] [--chapters chapters]

SUBMISSIONS are folders or notebooks, in any of three layouts (a folder is searched recursively):

- nbgrader's ``submitted/<student>/<assignment>/<notebook>.ipynb``;
- a folder per student, ``<student>/<notebook>.ipynb``;
- flat files named ``<student>__<notebook>.ipynb``.

The course's exercises (``check("4.2", ...)`` cells) are graded by ``classroom.autograder``: the
submission's code runs in a sandbox, the checks in this process, with the check calls read from the
course's notebook in ``chapters/`` (a student who edits or deletes a check cell changes nothing), so
nothing a cell does to its kernel changes a grade. An exercise scores its points (1, 2, 3 for Easy,
Medium, Hard, read from the exercise's ``*Medium · about 15 minutes.*`` line) when its check passes on
the visible and the hidden inputs, else 0; its diagnosis is the first line of the check's message ("this
looks like a causal mask off by one").

A notebook that is not the course's (no registered check) is run top to bottom in a Jupyter kernel with
``COURSE_CHECKS=strict`` and graded from its check cells' outputs, as before: that kernel is the
student's, so such grades are feedback, not proof.
"""

from __future__ import annotations

import csv
import os
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

from classroom.check_calls import check_calls
from classroom.exercises import (
    _CHECK_NAME,
    _EXERCISE,
    CHECK_CALL,
    DEFAULT_POINTS,
    difficulty_points,
    find_exercises,
)

_CHECK_CALL = re.compile(r"\bcheck(_function|_value)?\s*\(")
_HEADING = re.compile(r"^#+\s*(?P<name>Exercise\s+[\w.]+)\b", re.M)
_PREFIX = re.compile(r"^Exercise\s+[\w.]+(\s+\(input \d+\))?:\s*")
KERNEL_START_S = 300  # a kernel may take long to start on a machine busy grading other notebooks
CSV_COLUMNS = ("student", "notebook", "exercise", "points", "max_points", "passed", "diagnosis")


@dataclass
class Grade:
    """One exercise of one submission."""

    exercise: str  # "Exercise 4.2"
    points: int
    max_points: int
    passed: bool
    diagnosis: str  # the check's verdict, first line, without the "Exercise 4.2: " prefix


def points_by_name(nb: nbformat.NotebookNode, path: str | Path = "notebook") -> dict[str, int]:
    """Each exercise's points, from its difficulty line: {exercise} blocks, or the student edition's
    "### Exercise N.k: Title" headings."""
    points = {ex.name: ex.points for ex in find_exercises(nb, path) if ex.text_cell is not None}
    for cell in nb.cells:
        if cell.cell_type != "markdown" or _EXERCISE.search(cell.source):
            continue
        for found in _HEADING.finditer(cell.source):
            rest = cell.source[found.end():]
            following = _HEADING.search(rest)
            points.setdefault(found.group("name"),
                              difficulty_points(rest[:following.start() if following else None])[1])
    return points


def _first_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return _PREFIX.sub("", lines[0].strip()) if lines else ""


def read_verdicts(nb: nbformat.NotebookNode, points: dict[str, int]) -> list[Grade]:
    """The grade of every check cell of an executed notebook."""
    grades = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or not _CHECK_CALL.search(cell.source):
            continue
        call, found = CHECK_CALL.search(cell.source), _CHECK_NAME.search(cell.source)
        name = (f"Exercise {call.group('number')}" if call else found.group("name") if found
                else f"cell {i}")
        worth = points.get(name, DEFAULT_POINTS)
        errors = [out for out in cell.get("outputs", []) if out.output_type == "error"]
        if errors:
            error = errors[0]
            kind = "" if error.ename in ("CheckFailed", "NotDoneYet") else f"{error.ename}: "
            diagnosis = _first_line(error.evalue)
            if error.ename == "NotDoneYet":  # "not implemented yet: write your code in place of ..."
                diagnosis = diagnosis.split(": ", 1)[0]
            grades.append(Grade(name, 0, worth, False, kind + diagnosis))
            continue
        text = "".join(out.get("text", "") for out in cell.get("outputs", []) if out.output_type == "stream")
        verdicts = [line for line in text.splitlines() if line.startswith(name)]
        grades.append(Grade(name, worth, worth, True, _first_line(verdicts[-1] if verdicts else "ran")))
    return grades


def grade_notebook(path: str | Path, timeout: int = 1800,
                   chapters: str | Path | None = "chapters",
                   checkpoints: str | Path | None = None) -> list[Grade]:
    """Grade each exercise of a student's notebook: in isolation (the course's exercises), else by
    running it top to bottom (checks strict, errors allowed; see the module's docstring).

    Points and the check calls come from ``chapters/<notebook>.ipynb`` when there is one, else from the
    submission itself.
    """
    from nbclient import NotebookClient

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    points = points_by_name(nb, path)
    notebook = submission_of(path)[1]
    reference = Path(chapters) / f"{notebook}.ipynb" if chapters else None
    course = nb
    if reference is not None and reference.exists():
        course = nbformat.read(reference, as_version=4)
        points.update(points_by_name(course, reference))
    if check_calls(course):
        return isolated_grades(nb, course, points, checkpoints)
    env = {**os.environ, "COURSE_CHECKS": "strict"}  # the kernel's: a failed check raises
    if checkpoints is not None:
        env["COURSE_CHECKPOINTS"] = str(Path(checkpoints).resolve())
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                            startup_timeout=KERNEL_START_S,
                            resources={"metadata": {"path": str(path.parent.resolve())}})
    client.execute(env=env)
    return read_verdicts(nb, points)


def isolated_grades(submission: nbformat.NotebookNode, course: nbformat.NotebookNode,
                    points: dict[str, int], checkpoints: str | Path | None = None) -> list[Grade]:
    """Each registered exercise of ``course``, graded in isolation for ``submission``."""
    from classroom.autograder import grade_submission
    from utils.exercises import get

    grades = []
    for found in grade_submission(submission, course, checkpoints=checkpoints):
        name = get(found.number).name
        worth = points.get(name, DEFAULT_POINTS)
        grades.append(Grade(name, worth if found.passed else 0, worth, found.passed, found.diagnosis))
    return grades


def submission_of(path: Path, root: Path | None = None) -> tuple[str, str]:
    """(student, notebook) of a submitted notebook, from its name and folders (see the layouts above)."""
    if "__" in path.stem:
        student, notebook = path.stem.split("__", 1)
        return student, notebook
    parts = path.parts
    if len(parts) >= 4 and parts[-4] == "submitted":
        return parts[-3], path.stem
    if root is not None and path.parent != root:
        return path.relative_to(root).parts[0], path.stem
    return path.parent.name or "student", path.stem


def find_submissions(paths: list[str | Path]) -> list[tuple[str, str, Path]]:
    """(student, notebook, path) for every notebook named or found (recursively) in a named folder."""
    found = []
    for item in map(Path, paths):
        if item.is_dir():
            for nb in sorted(item.rglob("*.ipynb")):
                if ".ipynb_checkpoints" not in nb.parts:
                    found.append((*submission_of(nb, item), nb))
        else:
            found.append((*submission_of(item), item))
    return sorted(found, key=lambda row: (row[0], row[1]))


def grade_all(paths: list[str | Path], chapters: str | Path | None = "chapters",
              timeout: int = 1800, checkpoints: str | Path | None = None) -> list[tuple[str, str, Grade]]:
    """Grade every submission; (student, notebook, grade) per exercise. ``checkpoints``: a folder with
    one subfolder of kept training runs per notebook (``utils.checkpoints``), loaded instead of training."""
    return [(student, notebook, grade) for student, notebook, path in find_submissions(paths)
            for grade in grade_notebook(path, timeout, chapters,
                                        Path(checkpoints) / notebook if checkpoints else None)]


NOT_SUBMITTED = "not submitted"


def read_roster(path: str | Path) -> list[str]:
    """The students of a class: a CSV roster (the column ``student``, ``id``, ``username`` or
    ``email``, else the first column; a header row is recognised by one of those names), or nbgrader's
    gradebook (``gradebook.db``: every student it knows)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no roster at {path}: give a CSV with one student id per row, or "
                                "nbgrader's gradebook.db")
    if path.suffix == ".db":
        from nbgrader.api import Gradebook

        with Gradebook(f"sqlite:///{path.resolve()}") as gradebook:
            return sorted(student.id for student in gradebook.students)
    with open(path, newline="", encoding="utf-8-sig") as handle:
        rows = [row for row in csv.reader(handle) if row and any(cell.strip() for cell in row)]
    if not rows:
        return []
    header = [cell.strip().lower() for cell in rows[0]]
    column = next((header.index(name) for name in ("student", "id", "username", "email")
                   if name in header), None)
    body = rows[1:] if column is not None else rows
    return list(dict.fromkeys(row[column or 0].strip() for row in body if len(row) > (column or 0)))


def with_missing_work(rows: list[tuple[str, str, Grade]], roster: list[str],
                      chapters: str | Path = "chapters",
                      notebooks: list[str] | None = None) -> list[tuple[str, str, Grade]]:
    """``rows`` plus, for every student of ``roster`` and every notebook assigned (``notebooks``, or
    every notebook anyone submitted) that the student did not hand in, each exercise at 0 points."""
    assigned = list(dict.fromkeys([*(notebooks or []), *(r[1] for r in rows)]))
    handed_in = {(student, notebook) for student, notebook, _ in rows}
    points_of: dict[str, dict[str, int]] = {}
    for notebook in assigned:
        reference = Path(chapters) / f"{notebook}.ipynb"
        if reference.is_file():
            points_of[notebook] = points_by_name(nbformat.read(reference, as_version=4), reference)
        else:  # not a chapter: the exercises someone's submission showed
            points_of[notebook] = {g.exercise: g.max_points for _, n, g in rows if n == notebook}
    out = list(rows)
    for student in [*roster, *(s for s in dict.fromkeys(r[0] for r in rows) if s not in roster)]:
        for notebook in assigned:
            if (student, notebook) not in handed_in:
                out += [(student, notebook, Grade(name, 0, worth, False, NOT_SUBMITTED))
                        for name, worth in points_of[notebook].items()]
    order = {student: k for k, student in enumerate([*roster, *(r[0] for r in rows)])}
    return sorted(out, key=lambda row: (order.get(row[0], len(order)), assigned.index(row[1])))


def report(rows: list[tuple[str, str, Grade]]) -> str:
    """Per student, per notebook, per exercise: points / max points and the diagnosis; with totals."""
    lines: list[str] = []
    for student in dict.fromkeys(r[0] for r in rows):
        mine = [r for r in rows if r[0] == student]
        lines.append(f"{student}: {sum(g.points for *_, g in mine)}/{sum(g.max_points for *_, g in mine)}")
        for notebook in dict.fromkeys(r[1] for r in mine):
            grades = [g for s, n, g in mine if n == notebook]
            lines.append(f"  {notebook}: {sum(g.points for g in grades)}/{sum(g.max_points for g in grades)}")
            lines += [f"    {g.exercise:<14} {g.points}/{g.max_points}  {g.diagnosis}" for g in grades]
    return "\n".join(lines)


def write_csv(rows: list[tuple[str, str, Grade]], target: str | Path) -> None:
    """One row per student, notebook and exercise (``CSV_COLUMNS``)."""
    with open(target, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_COLUMNS)
        writer.writerows((student, notebook, g.exercise, g.points, g.max_points, g.passed, g.diagnosis)
                         for student, notebook, g in rows)
