"""Grades out to a learning platform: a CSV that Canvas's or Moodle's gradebook imports, one row per
student of the class, one column per exercise, 0 for work not handed in.

    python -m classroom gradebook grades.csv --roster roster.csv --lms canvas --out canvas.csv
    python -m classroom gradebook grades.csv --roster roster.csv --lms moodle --out moodle.csv

GRADES are CSV files written by ``python -m classroom grade --csv`` (one row per student, notebook and
exercise) or by ``nbgrader export`` (one row per student and assignment: its ``score``, after any late
penalty, out of its ``max_score``; the assignment becomes one column). Several may be given; a notebook
comes from one kind of file only.

The ROSTER maps each nbgrader student id to the student in the platform. It is the platform's own
export with one column added, ``student_id``, holding the nbgrader id of each row; or, where the
nbgrader ids already are one of its columns (students log in to the hub with their university login),
``--id-column`` names that column (``--id-column "SIS Login ID"``).

- Canvas (Grades > Export > Export Entire Gradebook): the columns ``Student``, ``ID``, ``SIS User ID``,
  ``SIS Login ID`` and ``Section`` are kept; Canvas's importer finds a row's student by ``ID``, then
  ``SIS User ID``, then ``SIS Login ID``, then the name. The export's "Points Possible" row is skipped.
- Moodle (Grades > Export > Plain text file: ``First name``, ``Last name``, ``ID number``,
  ``Institution``, ``Department``, ``Email address`` by default): the column Moodle's CSV import maps
  students by is the first of ``Email address``, ``ID number`` and ``Username`` that the roster has
  (``--identifier`` names another). Every row needs it: Moodle stops the whole import at a row whose
  student it cannot find.

The CSV written, UTF-8 with a byte-order mark (a spreadsheet then shows Chinese names; Moodle's reader
strips it, and Canvas writes one itself when a user asks for it):

- one row per roster student, in the roster's order; 0 for a notebook or exercise the student did not
  hand in, and for a student with no submission at all;
- one column per exercise ("Exercise 4.2"), in chapter order then exercise number, each notebook's
  exercises followed by "<notebook> total", then "Total" when there are several notebooks
  (``--no-totals`` leaves the totals out);
- Canvas: ``Student, ID, SIS User ID, SIS Login ID, Section`` first, then a second row
  ``    Points Possible`` with each column's maximum (the points of an assignment the import creates)
  and "(read only)" under the totals, which Canvas's importer then leaves alone;
- Moodle: the identifier column, the roster's name columns, then the grade columns; no row of maxima
  (Moodle would read it as a student). On import, map the identifier to ``useremail`` (or
  ``useridnumber``, ``username``) and each exercise column to a new or existing grade item.
"""

from __future__ import annotations

import argparse
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


def _key(name: str) -> str:
    return re.sub(r"[\s_]+", " ", name.replace("\ufeff", "")).strip().lower()


def _natural(text: str) -> tuple:
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
        header = [_key(cell).replace(" ", "_") for cell in rows[0]] if rows else []
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
    by_key = {_key(name): name for name in reversed(columns)}
    id_name = by_key.get(_key(id_column))
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


def _column(roster: Roster, name: str) -> str | None:
    """The roster's spelling of a column (case, spaces and underscores aside), or None."""
    return next((column for column in roster.columns if _key(column) == _key(name)), None)


def check_roster(roster: Roster, grades: Grades, lms: str, identifier: str | None = None) -> str | None:
    """Raise GradebookError for a roster the platform cannot take; return Moodle's identifier column."""
    ids = [student for student, _ in roster.rows if student]
    repeated = sorted({student for student in ids if ids.count(student) > 1})
    if repeated:
        lines = {s: [n for n, (student, _) in zip(roster.lines, roster.rows, strict=True) if student == s]
                 for s in repeated}
        raise GradebookError(f"the roster {roster.path} lists the same nbgrader id on several rows: "
                             + "; ".join(f"{s} (rows {', '.join(map(str, lines[s]))})" for s in repeated))
    missing = sorted(set(grades.points) - set(ids))
    if missing:
        raise GradebookError(
            f"{len(missing)} graded student(s) not in the roster {roster.path}: {', '.join(missing)}. Add "
            f"a row for each (their nbgrader id and platform identity), or leave their grades out")
    if lms == "canvas":
        present = [name for name in CANVAS_IDENTITY if _column(roster, name)]
        if not present:
            raise GradebookError(f"the roster {roster.path} has none of Canvas's columns "
                                 f"{', '.join(CANVAS_IDENTITY)}: start from Canvas's gradebook export")
        unknown = [student or f"row {n}"
                   for n, (student, cells) in zip(roster.lines, roster.rows, strict=True)
                   if not any(cells[_column(roster, name)] for name in present)]
        if unknown:
            raise GradebookError(f"rows of the roster {roster.path} with no {', '.join(present)}: "
                                 f"{', '.join(unknown)}")
        return None
    names = [identifier] if identifier else list(MOODLE_IDENTIFIERS)
    chosen = next((_column(roster, name) for name in names if _column(roster, name)), None)
    if chosen is None:
        raise GradebookError(f"the roster {roster.path} has no column {' or '.join(map(repr, names))}, "
                             f"which Moodle's import maps students by; its columns are "
                             f"{', '.join(roster.columns)}")
    blank = [student or f"row {n}" for n, (student, cells) in zip(roster.lines, roster.rows, strict=True)
             if not cells[chosen]]
    if blank:
        raise GradebookError(f"rows of the roster {roster.path} with no {chosen} (Moodle stops the whole "
                             f"import at a student it cannot find): {', '.join(blank)}")
    values = [cells[chosen] for _, cells in roster.rows]
    twice = sorted({value for value in values if values.count(value) > 1})
    if twice:
        raise GradebookError(f"the roster {roster.path} gives the same {chosen} to several rows: "
                             f"{', '.join(twice)}")
    return chosen


def ordered_items(grades: Grades) -> list[Item]:
    """Every item, in chapter order (the notebook's number), then exercise number."""
    return sorted(grades.maximum, key=lambda item: (_natural(item.notebook), _natural(item.exercise or "")))


def column_names(items: list[Item]) -> dict[Item, str]:
    """Each item's column: "Exercise 4.2" ("<notebook>: Exercise 4.2" where two notebooks share the
    name), or the notebook's name for a whole notebook."""
    counts: dict[str, int] = {}
    for item in items:
        if item.exercise is not None:
            counts[item.exercise] = counts.get(item.exercise, 0) + 1
    return {item: item.notebook if item.exercise is None
            else item.exercise if counts[item.exercise] == 1 else f"{item.notebook}: {item.exercise}"
            for item in items}


def _format(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}".rstrip("0").rstrip(".")


def gradebook_table(grades: Grades, roster: Roster, lms: str, identifier: str | None = None,
                    totals: bool = True) -> list[list[str]]:
    """The rows of the CSV for ``lms``: header, (Canvas) points possible, then one row per student."""
    if lms not in LMS:
        raise GradebookError(f"unknown platform {lms!r}: expected one of {', '.join(LMS)}")
    chosen = check_roster(roster, grades, lms, identifier)
    items = ordered_items(grades)
    names = column_names(items)
    columns: list[tuple[str, list[Item], bool]] = []  # (name, items summed, is a total)
    notebooks = list(dict.fromkeys(item.notebook for item in items))
    for notebook in notebooks:
        mine = [item for item in items if item.notebook == notebook]
        columns += [(names[item], [item], False) for item in mine]
        if totals and any(item.exercise is not None for item in mine):
            columns.append((f"{notebook} total", mine, True))
    if totals and len(notebooks) > 1:
        columns.append(("Total", items, True))

    def scores(student: str) -> list[str]:
        mine = grades.points.get(student, {})
        return [_format(sum(mine.get(item, 0.0) for item in summed)) for _, summed, _ in columns]

    if lms == "canvas":
        identity = [_column(roster, name) for name in CANVAS_COLUMNS]
        table = [[*CANVAS_COLUMNS, *(name for name, _, _ in columns)],
                 [CANVAS_POINTS, "", "", "", "",
                  *(READ_ONLY if total else _format(sum(grades.maximum[i] for i in summed))
                    for _, summed, total in columns)]]
    else:
        identity = [chosen] + [name for name in (_column(roster, n) for n in MOODLE_NAMES) if name]
        table = [[*identity, *(name for name, _, _ in columns)]]
    for student, cells in roster.rows:
        table.append([cells[name] if name else "" for name in identity] + scores(student))
    return table


def write_gradebook(table: list[list[str]], target: str | Path, bom: bool = True) -> None:
    """Write the table as CSV, UTF-8 (with a byte-order mark unless ``bom`` is False)."""
    with open(target, "w", newline="", encoding="utf-8-sig" if bom else "utf-8") as handle:
        csv.writer(handle).writerows(table)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``gradebook`` command's arguments."""
    parser.add_argument("grades", nargs="+", help="CSV files of `python -m classroom grade --csv` or "
                        "`nbgrader export`")
    parser.add_argument("--roster", required=True, help="the platform's roster or gradebook export, with "
                        f"a column {DEFAULT_ID_COLUMN} holding each student's nbgrader id")
    parser.add_argument("--lms", required=True, choices=LMS, help="the platform that imports the CSV")
    parser.add_argument("--out", required=True, help="the CSV file to write")
    parser.add_argument("--id-column", default=DEFAULT_ID_COLUMN,
                        help=f"the roster's column of nbgrader ids (default: {DEFAULT_ID_COLUMN}), "
                             "e.g. \"SIS Login ID\" when the hub's logins are the university's")
    parser.add_argument("--identifier", default=None,
                        help="Moodle: the roster column the import maps students by (default: the first "
                             f"of {', '.join(MOODLE_IDENTIFIERS)} that the roster has)")
    parser.add_argument("--no-totals", action="store_true", help="leave out the per-notebook totals and "
                        "the total")
    parser.add_argument("--no-bom", action="store_true", help="write UTF-8 without a byte-order mark")


def run(args: argparse.Namespace) -> int:
    """``python -m classroom gradebook``: write the CSV, print what it holds; 2 and the reason on error."""
    try:
        grades = read_grades(args.grades)
        roster = read_roster(args.roster, args.lms, args.id_column)
        table = gradebook_table(grades, roster, args.lms, args.identifier, totals=not args.no_totals)
    except GradebookError as err:
        print(f"gradebook: {err}")
        return 2
    write_gradebook(table, args.out, bom=not args.no_bom)
    items = ordered_items(grades)
    print(f"Wrote {args.out} for {args.lms.capitalize()}: {len(roster.rows)} students, {len(items)} grade "
          f"columns from {len({item.notebook for item in items})} notebook(s), "
          f"{sum(grades.maximum.values()):g} points in all"
          + ("" if args.no_totals else ", with the totals"))
    unnamed = [cells for student, cells in roster.rows if not student]
    if unnamed:
        print(f"  {len(unnamed)} roster row(s) have no {args.id_column}: 0 on every column")
    absent = [student for student, _ in roster.rows if student and student not in grades.points]
    if absent:
        print(f"  no grades for {', '.join(absent)}: 0 on every column")
    return 0
