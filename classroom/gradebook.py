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
from pathlib import Path

from classroom.grades_files import (
    CANVAS_COLUMNS,
    CANVAS_IDENTITY,
    CANVAS_POINTS,
    DEFAULT_ID_COLUMN,
    LMS,
    MOODLE_IDENTIFIERS,
    MOODLE_NAMES,
    READ_ONLY,
    GradebookError,
    Grades,
    Item,
    Roster,
    column_key,
    natural_order,
    read_grades,
    read_roster,
)


def _column(roster: Roster, name: str) -> str | None:
    """The roster's spelling of a column (case, spaces and underscores aside), or None."""
    return next((column for column in roster.columns if column_key(column) == column_key(name)), None)


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
    return sorted(grades.maximum,
                  key=lambda item: (natural_order(item.notebook), natural_order(item.exercise or "")))


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
