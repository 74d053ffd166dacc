"""classroom.gradebook: the grades as a CSV for Canvas's or Moodle's gradebook (no notebook runs)."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

import classroom.__main__ as cli
from classroom.gradebook import GradebookError, gradebook_table, read_grades, read_roster

LONG = "student,notebook,exercise,points,max_points,passed,diagnosis\n"
NBGRADER = ("assignment,duedate,timestamp,student_id,last_name,first_name,email,raw_score,"
            "late_submission_penalty,score,max_score\n")


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _read(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8-sig") as handle:
        return list(csv.reader(handle))


@pytest.fixture
def grades(tmp_path: Path) -> Path:
    """ada did chapter 4 (one exercise wrong) and chapter 10; bob only chapter 10, one exercise of it."""
    return _write(tmp_path / "grades.csv", LONG + "\n".join([
        "ada,04_self_attention,Exercise 4.1,1,1,True,ran",
        "ada,04_self_attention,Exercise 4.2,0,2,False,this looks like a causal mask off by one",
        "ada,10_lab_find_the_bug,Exercise 10.1,3,3,True,ran",
        "ada,10_lab_find_the_bug,Exercise 10.2,2,2,True,ran",
        "bob,10_lab_find_the_bug,Exercise 10.2,2,2,True,ran",
    ]) + "\n")


@pytest.fixture
def canvas_roster(tmp_path: Path) -> Path:
    """Canvas's own gradebook export (its points row, a hidden-assignments row, the test student) with
    the nbgrader ids added in a column student_id; 曹 has handed in nothing."""
    return _write(tmp_path / "canvas_export.csv", "\n".join([
        "Student,ID,SIS User ID,SIS Login ID,Section,student_id,Quiz 1 (111),Current Score",
        ",,,,,,Manual Posting,",
        "    Points Possible,,,,,,10,(read only)",
        "\"Lovelace, Ada\",101,S-1,ada.l,Sec A,ada,9,90",
        "\"Bob, Builder\",102,S-2,bob.b,Sec A,bob,8,80",
        "曹雪芹,103,S-3,cao.x,Sec B,cao,,",
        "\"Student, Test\",999,,,Sec A,,,",
    ]) + "\n")


@pytest.fixture
def moodle_roster(tmp_path: Path) -> Path:
    return _write(tmp_path / "moodle_export.csv", "\n".join([
        "First name,Last name,ID number,Institution,Department,Email address,student_id",
        "Ada,Lovelace,1001,,,ada@example.edu,ada",
        "Bob,Builder,1002,,,bob@example.edu,bob",
        "雪芹,曹,1003,,,cao@example.edu,cao",
    ]) + "\n")


EXERCISES = ["Exercise 4.1", "Exercise 4.2", "04_self_attention total", "Exercise 10.1", "Exercise 10.2",
             "10_lab_find_the_bug total", "Total"]


def test_canvas_file_has_its_header_points_row_and_zeros_for_missing_work(grades, canvas_roster, tmp_path):
    out = tmp_path / "canvas.csv"
    assert cli.main(["gradebook", str(grades), "--roster", str(canvas_roster), "--lms", "canvas",
                     "--out", str(out)]) == 0
    rows = _read(out)
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *EXERCISES]
    ro = "(read only)"
    assert rows[1] == ["    Points Possible", "", "", "", "", "1", "2", ro, "3", "2", ro, ro]
    by_id = {row[1]: row for row in rows[2:]}
    assert list(by_id) == ["101", "102", "103", "999"]  # the roster's order; Canvas's extra rows skipped
    assert by_id["101"] == ["Lovelace, Ada", "101", "S-1", "ada.l", "Sec A", *"1013256"]
    assert by_id["102"][5:] == list("0000222")  # chapter 4 and exercise 10.1 not handed in
    assert by_id["103"][5:] == ["0"] * 7  # no submission at all
    assert by_id["999"][5:] == ["0"] * 7  # the test student, who has no nbgrader id


def test_moodle_file_has_the_identifier_the_names_and_no_points_row(grades, moodle_roster, tmp_path):
    out = tmp_path / "moodle.csv"
    assert cli.main(["gradebook", str(grades), "--roster", str(moodle_roster), "--lms", "moodle",
                     "--out", str(out), "--no-totals"]) == 0
    rows = _read(out)
    assert rows[0] == ["Email address", "First name", "Last name", "Exercise 4.1", "Exercise 4.2",
                       "Exercise 10.1", "Exercise 10.2"]
    assert rows[1:] == [["ada@example.edu", "Ada", "Lovelace", "1", "0", "3", "2"],
                        ["bob@example.edu", "Bob", "Builder", "0", "0", "0", "2"],
                        ["cao@example.edu", "雪芹", "曹", "0", "0", "0", "0"]]
    table = gradebook_table(read_grades([grades]), read_roster(moodle_roster, "moodle"), "moodle",
                            identifier="ID number", totals=False)
    assert table[0][0] == "ID number" and [row[0] for row in table[1:]] == ["1001", "1002", "1003"]


def test_round_trip_gives_back_every_points_and_the_totals(grades, canvas_roster, tmp_path):
    out = tmp_path / "canvas.csv"
    cli.main(["gradebook", str(grades), "--roster", str(canvas_roster), "--lms", "canvas", "--out", str(out)])
    header, points_row, *students = _read(out)
    login = {row[3]: dict(zip(header, row, strict=True)) for row in students}
    student_of = {"ada": "ada.l", "bob": "bob.b", "cao": "cao.x"}
    exercises = [name for name in EXERCISES if name.startswith("Exercise")]
    for student, _, exercise, points, *_ in _read(grades)[1:]:
        assert float(login[student_of[student]][exercise]) == float(points)
    for row in login.values():
        assert float(row["Total"]) == sum(float(row[name]) for name in exercises)
    maxima = dict(zip(header, points_row, strict=True))
    assert sum(float(maxima[name]) for name in exercises) == 8


def test_chinese_names_survive_and_the_file_starts_with_a_byte_order_mark(grades, canvas_roster, tmp_path):
    out = tmp_path / "canvas.csv"
    cli.main(["gradebook", str(grades), "--roster", str(canvas_roster), "--lms", "canvas", "--out", str(out)])
    data = out.read_bytes()
    assert data.startswith(b"\xef\xbb\xbfStudent,ID,")
    assert "曹雪芹,103,S-3,cao.x,Sec B" in data.decode("utf-8-sig")
    cli.main(["gradebook", str(grades), "--roster", str(canvas_roster), "--lms", "canvas", "--out", str(out),
              "--no-bom"])
    assert out.read_bytes().startswith(b"Student,ID,")


def test_columns_follow_chapter_order_then_exercise_number(tmp_path, moodle_roster):
    rows = [f"ada,{nb},{ex},1,1,True,ran" for nb, ex in [
        ("10_lab_find_the_bug", "Exercise 10.2"), ("02_soft_lookup", "Exercise 2.10"),
        ("10_lab_find_the_bug", "Exercise 10.1"), ("02_soft_lookup", "Exercise 2.9")]]
    table = gradebook_table(read_grades([_write(tmp_path / "g.csv", LONG + "\n".join(rows))]),
                            read_roster(moodle_roster, "moodle"), "moodle", totals=False)
    assert table[0][3:] == ["Exercise 2.9", "Exercise 2.10", "Exercise 10.1", "Exercise 10.2"]


def test_nbgrader_export_gives_one_column_per_assignment(tmp_path, moodle_roster, grades):
    export = _write(tmp_path / "nbgrader.csv", NBGRADER + "\n".join([
        "08_transformer_decoder,,2026-11-20 10:00:00,ada,Lovelace, Jr.,Ada,ada@example.edu,7.5,0.5,7.0,9.0",
        "08_transformer_decoder,,,bob,,,,0.0,0.0,0.0,9.0",  # nbgrader's zero for no submission
    ]) + "\n")  # nbgrader writes its rows unquoted: the comma in "Lovelace, Jr." splits the name
    table = gradebook_table(read_grades([grades, export]), read_roster(moodle_roster, "moodle"), "moodle")
    header = table[0]
    assert header[3:] == [*EXERCISES[:3], "08_transformer_decoder", *EXERCISES[3:]]
    ada = dict(zip(header, table[1], strict=True))
    assert ada["08_transformer_decoder"] == "7" and ada["Total"] == "13"
    assert table[3][header.index("08_transformer_decoder")] == "0"  # cao: not in the export at all


def test_canvas_roster_may_name_its_own_column_of_nbgrader_ids(tmp_path, grades):
    roster = _write(tmp_path / "r.csv", "Student,ID,SIS Login ID,Section\nAda,101,ada,A\nBob,102,bob,A\n")
    table = gradebook_table(read_grades([grades]), read_roster(roster, "canvas", "SIS Login ID"), "canvas")
    assert [row[3] for row in table[2:]] == ["ada", "bob"] and table[2][2] == ""  # no SIS User ID: blank


@pytest.mark.parametrize("roster, lms, message", [
    ("Student,ID,student_id\nAda,101,ada\n", "canvas", r"1 graded student\(s\) not in the roster .*: bob"),
    ("Student,ID,student_id\n    Points Possible,,\nAda,101,ada\nBob,102,bob\n\nBobby,103,bob\n", "canvas",
     r"same nbgrader id on several rows: bob \(rows 4, 6\)"),  # the file's lines
    ("Student,ID\nAda,101\nBob,102\n", "canvas", r"no column 'student_id' .*--id-column"),
    ("Name,student_id\nAda,ada\nBob,bob\n", "canvas", r"none of Canvas's columns"),
    ("First name,student_id\nAda,ada\nBob,bob\n", "moodle", r"no column 'Email address' or 'ID number'"),
    ("Email address,student_id\nada@x.org,ada\n,bob\n", "moodle", r"with no Email address .*: bob"),
    ("Email address,student_id\nada@x.org,ada\nada@x.org,bob\n", "moodle", r"same Email address .*ada@x.org"),
])
def test_roster_errors_say_what_to_fix(tmp_path, grades, roster, lms, message):
    path = _write(tmp_path / "roster.csv", roster)
    with pytest.raises(GradebookError, match=message):
        gradebook_table(read_grades([grades]), read_roster(path, lms), lms)


@pytest.mark.parametrize("text, message", [
    ("name,score\nada,1\n", r"not a grades file: expected the columns of `python -m classroom grade"),
    (LONG + "ada,04_self_attention,Exercise 4.1,one,1,True,ran\n", r"line 2: points 'one' is not a number"),
    (LONG + "ada,04_self_attention,Exercise 4.1,1\n", r"line 2: 4 cells where the header has 7"),
    (LONG + "ada,04_self_attention,Exercise 4.1,1,1,,\nada,04_self_attention,Exercise 4.1,0,1,,\n",
     r"Exercise 4.1 of 04_self_attention appears twice: .* line 2 and line 3"),
    ("", r"not a grades file.*\(empty file\)"),
])
def test_malformed_grades_are_refused_with_the_line(tmp_path, text, message):
    with pytest.raises(GradebookError, match=message):
        read_grades([_write(tmp_path / "grades.csv", text)])


def test_a_notebook_graded_both_per_exercise_and_whole_is_refused(tmp_path, grades):
    export = _write(tmp_path / "nb.csv", NBGRADER + "04_self_attention,,,ada,,,,3,0,3,3\n")
    with pytest.raises(GradebookError, match="per exercise in one file and as a whole in the other"):
        read_grades([grades, export])


def test_command_line_reports_an_error_and_writes_nothing(tmp_path, grades, capsys):
    roster = _write(tmp_path / "roster.csv", "Student,ID,student_id\nAda,101,ada\n")
    out = tmp_path / "out.csv"
    assert cli.main(["gradebook", str(grades), "--roster", str(roster), "--lms", "canvas",
                     "--out", str(out)]) == 2
    assert "gradebook: 1 graded student(s) not in the roster" in capsys.readouterr().out
    assert not out.exists()
    assert cli.main(["gradebook", str(tmp_path / "none.csv"), "--roster", str(roster), "--lms", "canvas",
                     "--out", str(out)]) == 2
    assert "no grades file at" in capsys.readouterr().out


def test_canvas_header_meets_the_rules_of_canvas_importer(grades, canvas_roster):
    """The rules of Canvas's GradebookImporter (canvas-lms, app/models/gradebook_importer.rb): with
    "SIS User ID" then "SIS Login ID" in columns 3 and 4, the student columns end at column 5, which
    must contain "Section"; a column whose title ends in " (digits)" is an existing assignment's id;
    titles containing "Current Score", "Final Grade" and the like are dropped as Canvas's own totals;
    a row starting "Points Possible" gives the maxima, and "read only" in it leaves a column alone."""
    roster = read_roster(canvas_roster, "canvas")
    header, points, *_ = gradebook_table(read_grades([grades]), roster, "canvas")
    assert "Student" in header[0] and "ID" in header[1] and header[2:4] == ["SIS User ID", "SIS Login ID"]
    assert "Section" in header[4]
    canvas_totals = re.compile("Current Score|Current Points|Current Grade|Final Score|Final Points|"
                               "Final Grade|Override Score|Override Grade|Override Status")
    assert not any(canvas_totals.search(name) or re.search(r"\s\(\d+\)\Z", name) for name in header[5:])
    assert "Points Possible" in points[0]
    read_only = [name for name, cell in zip(header, points, strict=True) if re.search(r"read\s+only", cell)]
    assert read_only == ["04_self_attention total", "10_lab_find_the_bug total", "Total"]
