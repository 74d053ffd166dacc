"""Reading what ``classroom.gradebook`` joins: the grades (``classroom grade --csv`` or ``nbgrader
export``) and the platform's roster with each student's nbgrader id. See classroom/gradebook.py."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

LONG_COLUMNS = ("student", "notebook", "exercise", "points", "max_points")  # classroom grade --csv
NBGRADER_COLUMNS = ("assignment", "student_id", "score", "max_score")  # nbgrader export
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
CANVAS_IDENTITY = ("ID", "SIS User ID", "SIS Login ID", "Student")  # the order Canvas matches them in
CANVAS_POINTS = "    Points Possible"  # the first cell of Canvas's own export's second row
READ_ONLY = "(read only)"
MOODLE_IDENTIFIERS = ("Email address", "ID number", "Username")
MOODLE_NAMES = ("First name", "Last name", "Surname")
DEFAULT_ID_COLUMN = "student_id"
LMS = ("canvas", "moodle")


class GradebookError(ValueError):
    """A grades file or roster the gradebook cannot be made from; the message says what to fix."""


@dataclass(frozen=True)
class Item:
    """One grade column: an exercise of a notebook, or a whole notebook (``exercise`` None)."""

    notebook: str
    exercise: str | None = None


@dataclass
class Grades:
    """Every student's points per item, and each item's maximum."""

    points: dict[str, dict[Item, float]] = field(default_factory=dict)
    maximum: dict[Item, float] = field(default_factory=dict)
    source: dict[tuple[str, Item], str] = field(default_factory=dict)  # "grades.csv line 4"


@dataclass
class Roster:
    """The class: each row's nbgrader id ('' where it has none) and its columns, by the roster's names;
    ``lines``: each row's line in the file."""

    path: Path
    columns: list[str]
    rows: list[tuple[str, dict[str, str]]]
    lines: list[int]


def column_key(name: str) -> str:
    return re.sub(r"[\s_]+", " ", name.replace("\ufeff", "")).strip().lower()


def natural_order(text: str) -> tuple:
    """Sort key that puts "Exercise 9.2" before "Exercise 10.1"."""
    parts = re.split(r"(\d+)", text)
    return tuple(int(part) if k % 2 else part for k, part in enumerate(parts))


def _number(text: str, where: str, column: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise GradebookError(f"{where}: {column} {text!r} is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise GradebookError(f"{where}: {column} {text!r} is not a number")
    return value


def _read_rows(path: Path, what: str) -> list[list[str]]:
    if not path.is_file():
        raise GradebookError(f"no {what} at {path}")
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            return list(csv.reader(handle))
    except UnicodeDecodeError:
        raise GradebookError(f"{path} is not UTF-8 text: save the {what} as CSV UTF-8") from None
    except csv.Error as err:
        raise GradebookError(f"{path}: not a readable CSV file ({err})") from None


def read_grades(paths: list[str | Path]) -> Grades:
    """The points of every student and item in ``paths`` (``classroom grade --csv`` files or
    ``nbgrader export`` files), with each item's maximum (the largest seen)."""
    grades = Grades()
    kinds: dict[str, tuple[str, str]] = {}  # notebook -> (per exercise or whole, first file)
    for path in map(Path, paths):
        rows = _read_rows(path, "grades file")
        header = [column_key(cell).replace(" ", "_") for cell in rows[0]] if rows else []
        if all(name in header for name in LONG_COLUMNS):
            kind = "per exercise"
        elif all(name in header for name in NBGRADER_COLUMNS):
            kind = "whole"
        else:
            raise GradebookError(
                f"{path} is not a grades file: expected the columns of `python -m classroom grade --csv` "
                f"({', '.join(LONG_COLUMNS)}, ...) or of `nbgrader export` (assignment, student_id, ..., "
                f"score, max_score); its first row is {', '.join(rows[0]) if rows else '(empty file)'}")
        for line, row in enumerate(rows[1:], start=2):
            if not any(cell.strip() for cell in row):
                continue
            where = f"{path} line {line}"
            cells = _cells(header, row, where)
            if kind == "per exercise":
                student, item = cells["student"], Item(cells["notebook"], cells["exercise"])
                points = _number(cells["points"], where, "points")
                maximum = _number(cells["max_points"], where, "max_points")
            else:
                student, item = cells["student_id"], Item(cells["assignment"])
                points = _number(cells["score"], where, "score")
                maximum = _number(cells["max_score"], where, "max_score")
            if not student or not item.notebook or item.exercise == "":
                raise GradebookError(f"{where}: the student, notebook or exercise is empty")
            first = kinds.setdefault(item.notebook, (kind, str(path)))
            if first[0] != kind:
                raise GradebookError(
                    f"{item.notebook} is graded per exercise in one file and as a whole in the other "
                    f"({first[1]}, {path}): give one of them")
            if (student, item) in grades.source:
                raise GradebookError(
                    f"{student}'s {item.exercise or 'grade'} of {item.notebook} appears twice: "
                    f"{grades.source[student, item]} and line {line} of {path}")
            grades.source[student, item] = where
            grades.points.setdefault(student, {})[item] = points
            grades.maximum[item] = max(maximum, grades.maximum.get(item, maximum))
    return grades


def _cells(header: list[str], row: list[str], where: str) -> dict[str, str]:
    """A row by column name. ``nbgrader export`` writes its rows without quoting, so a name with a
    comma gives a row longer than the header: its columns before the names are read from the start,
    the ones after from the end."""
    if len(row) == len(header):
        return {name: cell.strip() for name, cell in zip(header, row, strict=True)}
    if len(row) > len(header) and {"last_name", "first_name", "email"} <= set(header):
        first = min(header.index(name) for name in ("last_name", "first_name", "email"))
        last = max(header.index(name) for name in ("last_name", "first_name", "email"))
        return {name: row[k if k < first else k - len(header)].strip() for k, name in enumerate(header)
                if k < first or k > last}
    raise GradebookError(f"{where}: {len(row)} cells where the header has {len(header)}")


def read_roster(path: str | Path, lms: str, id_column: str = DEFAULT_ID_COLUMN) -> Roster:
    """The class roster: each row's nbgrader id (from ``id_column``) and its platform columns. Skips
    empty rows and a Canvas export's "Points Possible" and hidden-assignments rows."""
    path = Path(path)
    rows = [(line, row) for line, row in enumerate(_read_rows(path, "roster"), start=1)
            if any(cell.strip() for cell in row)]
    if not rows:
        raise GradebookError(f"the roster {path} is empty")
    columns = [cell.replace("\ufeff", "").strip() for cell in rows[0][1]]
    by_key = {column_key(name): name for name in reversed(columns)}
    id_name = by_key.get(column_key(id_column))
    if id_name is None:
        raise GradebookError(
            f"the roster {path} has no column {id_column!r} (the nbgrader student id of each row): add "
            f"it, or name the column that holds the nbgrader ids with --id-column; its columns are "
            f"{', '.join(columns)}")
    out, lines = [], []
    for line, row in rows[1:]:
        cells = {name: (row[k].strip() if k < len(row) else "") for k, name in enumerate(columns)}
        first = row[0].strip() if row else ""
        if lms == "canvas" and (first.startswith("Points Possible") or (not first and not cells[id_name]
                                and not any(cells.get(name) for name in CANVAS_IDENTITY))):
            continue  # Canvas's row of maxima, or its row marking hidden (muted) assignments
        out.append((cells[id_name], cells))
        lines.append(line)
    return Roster(path, columns, out, lines)
