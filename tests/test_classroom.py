"""Tests of classroom/: the student edition, and every exercise's auto-check on every chapter.

For each chapter in chapters/ the student edition (written by the documented command) must contain no
solution text, and each exercise's check must fail on the stub with "not implemented yet" and its hint,
and pass on the reference solution. Exercises run in a fresh namespace holding only the notebook's
imports (they are required to be self-contained, see classroom/); one that is not falls back
to a run of its whole notebook in a kernel, with a warning.
"""

from __future__ import annotations

import re
import textwrap
import warnings
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="the classroom kit needs nbformat (requirements.txt)")

import classroom  # noqa: E402  (needs nbformat)
import classroom.__main__ as cli  # noqa: E402
from utils.checks import CheckFailed  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = classroom.chapter_notebooks(REPO_ROOT / "chapters")


def _md(source: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_markdown_cell(textwrap.dedent(source).strip())


def _code(source: str, **kwargs) -> nbformat.NotebookNode:
    return nbformat.v4.new_code_cell(textwrap.dedent(source).strip(), **kwargs)


def toy_notebook(state: str = "") -> nbformat.NotebookNode:
    """A small chapter with two exercises in the course's pattern (the second one is ungated).

    ``state``: "" for self-contained exercises; "computed" when the first check reads a tensor the
    notebook computed; "mutated" when it also relies on a later in-place change of that tensor.
    """
    data = {"": "torch.ones(3)", "computed": "ones * scale", "mutated": "ones"}[state]
    extra = "\nassert ones.sum() == 6, 'ones was not doubled'" if state == "mutated" else ""
    cells = [
        _code("import torch\n\nfrom utils.checks import check_function"),
        _code("scale = 2.0\nones = torch.ones(3)  # state: a computation",
              outputs=[nbformat.v4.new_output("stream", text="hello\n")], execution_count=3),
        _code("ones.mul_(scale)  # changed in place" if state == "mutated" else "print('nothing')"),
        _md("""
            ```{exercise} Double it
            :label: ex-07-double
            *Medium · about 10 minutes.* Write `double(x)`.
            ```
            """),
        _md("""
            ```{solution-start} ex-07-double
            :class: dropdown
            ```
            """),
        _md("A remark that belongs to the solution: multiply by two."),
        _code('''
            def double(x: torch.Tensor) -> torch.Tensor:
                """Twice x."""
                ### BEGIN SOLUTION
                y = x + x  # secret-double-line
                return y
                ### END SOLUTION
            '''),
        _md("```{solution-end}\n```"),
        _code(f"""
            check_function(double, reference=lambda x: 2 * x, inputs=[({data},)], name="Exercise 7.1",
                           hint="add x to itself")
            """ + extra),
        _md("""
            ```{exercise} Negate it
            :label: ex-07-negate
            *Easy · about 5 minutes.* Write `Negator().apply(x)`.
            ```
            """),
        _code('''
            class Negator:
                def apply(self, x):
                    ### BEGIN SOLUTION
                    return -x  # secret-negate-line
                    ### END SOLUTION
            '''),
        _code("""
            check_function(Negator().apply, reference=torch.neg, inputs=[(torch.ones(2),)],
                           name="Exercise 7.2", hint="a minus sign is enough")
            """),
    ]
    return nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})


# --- the transformation ---------------------------------------------------------------------------

def test_clear_solution_keeps_indentation_and_the_def_line():
    source = "def f(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n"
    assert classroom.clear_solution(source, "Exercise 1.1") == (
        'def f(x):\n    # YOUR CODE HERE\n'
        '    raise NotImplementedError("Exercise 1.1: write your solution here")')


def test_clear_solution_handles_several_blocks_and_deeper_indentation():
    source = ("class A:\n    def f(self):\n        ### BEGIN SOLUTION\n        return 1\n"
              "        ### END SOLUTION\n    def g(self):\n        ### BEGIN SOLUTION\n        return 2\n"
              "        ### END SOLUTION")
    cleared = classroom.clear_solution(source, "Exercise 2.3")
    assert cleared.count("        raise NotImplementedError(") == 2
    assert "return" not in cleared
    compile(cleared, "<cleared>", "exec")  # still valid Python


@pytest.mark.parametrize("source, message", [
    ("### BEGIN SOLUTION\nx = 1\n", "never closed"),
    ("x = 1\n### END SOLUTION\n", "line 2 has '### END SOLUTION' without"),
    ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION", "line 2 opens '### BEGIN SOLUTION' again"),
])
def test_clear_solution_rejects_unbalanced_markers(source, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        classroom.clear_solution(source, "Exercise 1.1")


def test_find_exercises_reads_names_hints_and_cells():
    nb = toy_notebook()
    first, second = classroom.find_exercises(nb, "chapters/07_toy.ipynb")
    assert (first.name, first.label, first.solution_cells, first.check_cell) == (
        "Exercise 7.1", "ex-07-double", [6], 8)
    assert first.hint == "add x to itself"
    assert (second.name, second.solution_cells, second.check_cell) == ("Exercise 7.2", [10], 11)


def test_make_student_removes_solutions_and_keeps_checks():
    nb = toy_notebook()
    student = classroom.make_student(nb, "chapters/07_toy.ipynb")
    text = "\n".join(cell.source for cell in student.cells)
    assert "secret" not in text and "BEGIN SOLUTION" not in text and "END SOLUTION" not in text
    assert "{solution-start}" not in text and "{solution-end}" not in text
    assert "belongs to the solution" not in text  # markdown inside the gate goes too
    assert text.count("check_function(") == 2  # auto-checks kept
    assert 'raise NotImplementedError("Exercise 7.1: write your solution here")' in text
    assert "### Exercise 7.1: Double it\n\n*Medium · about 10 minutes.* Write `double(x)`." in text
    assert ":label:" not in text
    assert all(not c.get("outputs") and c.get("execution_count") is None
               for c in student.cells if c.cell_type == "code")
    assert len(student.cells) == len(nb.cells) - 3
    assert "secret-double-line" in nb.cells[6].source and nb.cells[1].outputs  # input left unchanged


def test_verify_student_finds_leaks_markers_and_outputs():
    nb = toy_notebook()
    student = classroom.make_student(nb)
    assert classroom.verify_student(nb, student) == []
    student.cells[0].source += "\ny = x + x  # secret-double-line"
    student.cells[1].outputs = [nbformat.v4.new_output("stream", text="x")]
    student.cells.append(_md("### END SOLUTION"))
    problems = "\n".join(classroom.verify_student(nb, student))
    assert "secret-double-line" in problems
    assert "cell 1 still has outputs" in problems
    assert "still contains '### END SOLUTION'" in problems


def test_gate_problems_flags_unmarked_code_inside_a_solution_gate():
    nb = toy_notebook()
    assert classroom.gate_problems(nb) == []
    nb.cells.insert(7, _code("helper = 1"))
    assert classroom.gate_problems(nb) == [
        "cell 7 is inside a solution gate but has no '### BEGIN SOLUTION' marker"]


def test_notebook_imports_collects_top_level_imports_only():
    nb = toy_notebook()
    nb.cells.append(_code("%matplotlib inline\nimport math\nif True:\n    import json"))
    imports = classroom.notebook_imports(nb)
    assert imports == "import torch\nfrom utils.checks import check_function\nimport math"


def test_notebook_context_keeps_definitions_and_literal_constants_before_the_exercise():
    nb = toy_notebook()
    nb.cells[1].source = ("scale = 2.0\nsizes: tuple = (1, 2)\na, (b, c) = 1, (2, 3)\ndata = torch.ones(3)\n"
                          "def helper(x):\n    return x\nclass Box:\n    pass\nprint(scale)")
    assert classroom.notebook_context(nb, upto=6) == [
        "import torch", "from utils.checks import check_function", "scale = 2.0", "sizes: tuple = (1, 2)",
        "a, (b, c) = 1, (2, 3)", "def helper(x):\n    return x", "class Box:\n    pass"]
    assert "def double" not in "\n".join(classroom.notebook_context(nb, upto=6))  # only cells before


def test_myst_becomes_plain_markdown():
    source = textwrap.dedent("""
        (sec-scores)=
        Why divide by $\\sqrt{d_k}$? See {numref}`ex-07-double`, {term}`softmax`, {term}`keys <key>`,
        {doc}`chapter 4 <04_self_attention>`, {glue:}`accuracy`, {cite}`vaswani2017` and {math}`x^2`.

        ```{admonition} Answer
        :class: dropdown
        Large dot products push the softmax into its flat regions.
        ```

        ```{warning}
        Not a dropdown.
        ```

        :::{admonition} Common misconception: "zero means no weight"
        :class: warning
        A score of 0 is not $-\\infty$.

        - first
        :::

        ```{figure} images/attention.png
        :name: fig-attention
        :width: 60%
        The weights.
        ```

        ```{glossary}
        query
          what a position looks for
        ```
        """).strip()
    plain = classroom.myst_to_markdown(source, {"ex-07-double": "Exercise 7.1"})
    assert "(sec-scores)=" not in plain
    assert "See Exercise 7.1, softmax, keys,\nchapter 4, accuracy, (vaswani2017) and $x^2$." in plain
    assert ("<details><summary>Answer</summary>\n\nLarge dot products push the softmax into its flat "
            "regions.\n\n</details>") in plain
    assert "> **Warning**\n>\n> Not a dropdown." in plain
    assert ('> **Common misconception: "zero means no weight"**\n>\n> A score of 0 is not $-\\infty$.\n>\n'
            "> - first") in plain
    assert "![The weights.](images/attention.png)" in plain
    assert "- **query**: what a position looks for" in plain
    assert not classroom.RAW_MYST.search(plain), plain
    assert ":class:" not in plain and ":name:" not in plain


def lab_notebook() -> nbformat.NotebookNode:
    """A find-the-bug lab: a buggy cell, its fix tagged lab-solution inside a gate, then the check."""
    nb = toy_notebook()
    nb.cells[9:] = [
        _md("""
            ```{exercise} Find the bug
            :label: ex-07-bug
            *Hard · about 20 minutes.* `halve` is wrong: fix it in place.
            ```
            """),
        _code("def halve(x):\n    return x * 2  # the bug"),
        _md("```{solution-start} ex-07-bug\n:class: dropdown\n```"),
        _code("def halve(x):\n    return x / 2  # lab-fix", metadata={"tags": ["lab-solution"]}),
        _md("```{solution-end}\n```"),
        _code("""
            check_function(halve, reference=lambda x: x / 2, inputs=[(torch.ones(2),)], name="Exercise 7.2",
                           hint="halve, do not double")
            """),
    ]
    return nb


def test_lab_solutions_are_found_removed_and_not_flagged():
    nb = lab_notebook()
    assert classroom.gate_problems(nb) == []
    lab = classroom.find_exercises(nb, "07_toy.ipynb")[1]
    assert (lab.name, lab.lab_cells, lab.check_cell, lab.points, lab.difficulty) == (
        "Exercise 7.2", [12], 14, 3, "Hard")
    student = classroom.make_student(nb, "07_toy.ipynb")
    assert "lab-fix" not in "\n".join(c.source for c in student.cells)
    assert "return x * 2  # the bug" in "\n".join(c.source for c in student.cells)
    assert classroom.verify_student(nb, student) == []
    outcome = classroom.exercise_outcomes(nb, "07_toy.ipynb", allow_kernel=False)[1]
    assert outcome.stub.check_failed and outcome.solution.error is None  # the bug fails, the fix passes
    assert classroom.outcome_problems(outcome) == []


def test_nbgrader_source_has_solution_test_and_locked_cells():
    nb = lab_notebook()
    source = classroom.nbgrader_notebook(nb, "07_toy.ipynb")
    meta = {c.metadata["nbgrader"]["grade_id"]: (c.cell_type, c.metadata["nbgrader"])
            for c in source.cells if "nbgrader" in c.metadata}
    assert meta["ex-7-1-solution"][1] == {"solution": True, "grade": False, "locked": False,
                                          "grade_id": "ex-7-1-solution", "schema_version": 3}
    assert meta["ex-7-1"] == ("code", {"solution": False, "grade": True, "locked": True, "points": 2,
                                       "grade_id": "ex-7-1", "schema_version": 3})
    assert meta["ex-7-2"][1]["points"] == 3
    assert meta["ex-7-1-text"][0] == "markdown" and meta["ex-7-1-text"][1]["locked"]
    assert set(meta) == {"ex-7-1-solution", "ex-7-1", "ex-7-1-text", "ex-7-2", "ex-7-2-text"}
    text = "\n".join(c.source for c in source.cells)
    assert "secret-double-line" in text and "lab-fix" not in text and "{solution" not in text
    assert "belongs to the solution" not in text
    assert "### Exercise 7.1: Double it" in text
    kept = classroom.nbgrader_notebook(nb, "07_toy.ipynb", lab_solutions=True)
    assert "lab-fix" in "\n".join(c.source for c in kept.cells)


# --- running exercises ----------------------------------------------------------------------------

def test_run_exercise_stub_fails_with_hint_and_solution_passes():
    nb = toy_notebook()
    for outcome in classroom.exercise_outcomes(nb, "chapters/07_toy.ipynb", allow_kernel=False):
        assert outcome.self_contained
        assert outcome.stub.check_failed and "not implemented yet" in outcome.stub.message
        assert f"Hint: {outcome.exercise.hint}" in outcome.stub.message
        assert outcome.solution.error is None
        assert classroom.outcome_problems(outcome) == []


def test_outcome_problems_reports_a_check_that_passes_on_the_stub():
    nb = toy_notebook()
    nb.cells[8].source = "print('no check here')"
    outcome = classroom.exercise_outcomes(nb, "chapters/07_toy.ipynb", allow_kernel=False)[0]
    assert classroom.outcome_problems(outcome) == [
        "07_toy.ipynb: Exercise 7.1: the check passed on the stub "
        "(it must fail until the student writes code)"]


def test_exercise_needing_notebook_state_runs_with_the_cells_that_define_it():
    nb = toy_notebook(state="computed")
    first = classroom.find_exercises(nb)[0]
    assert classroom.slice_cells(nb, first) == [0, 1]  # the imports and the cell making `ones`, not cell 2
    outcome = classroom.exercise_outcome(nb, first, allow_kernel=False)
    assert outcome.mode == "sliced" and not outcome.self_contained
    assert classroom.outcome_problems(outcome) == []


def test_slice_blind_to_an_in_place_change_is_reported_without_a_kernel():
    nb = toy_notebook(state="mutated")
    outcome = classroom.exercise_outcome(nb, classroom.find_exercises(nb)[0], allow_kernel=False)
    assert outcome.mode == "sliced" and outcome.solution.error == "AssertionError"


@pytest.mark.slow
def test_kernel_fallback_runs_the_notebook_for_exercises_that_need_its_state(tmp_path):
    nb = toy_notebook(state="mutated")
    path = tmp_path / "07_toy.ipynb"
    nbformat.write(nb, path)
    outcomes = classroom.exercise_outcomes(nb, path)
    assert [o.mode for o in outcomes] == ["kernel", "self-contained"]
    assert outcomes[0].stub.check_failed and "Hint: add x to itself" in outcomes[0].stub.message
    assert outcomes[0].solution.error is None


def test_command_line_writes_and_checks_a_student_edition(tmp_path, capsys):
    chapters, out = tmp_path / "chapters", tmp_path / "student"
    chapters.mkdir()
    nbformat.write(toy_notebook(), chapters / "07_toy.ipynb")
    assert cli.main(["student", "--chapters", str(chapters), "--out", str(out), "--verify"]) == 0
    assert (out / "07_toy.ipynb").exists() and (out / "README.md").exists()
    course = out / "nbgrader"  # the nbgrader course, written beside the edition
    assert (course / "nbgrader_config.py").exists() and (course / "README.md").exists()
    source = nbformat.read(course / "source" / "07_toy" / "07_toy.ipynb", as_version=4)
    assert [c.metadata["nbgrader"]["grade_id"] for c in source.cells if "nbgrader" in c.metadata] == [
        "ex-7-1-text", "ex-7-1-solution", "ex-7-1", "ex-7-2-text", "ex-7-2-solution", "ex-7-2"]
    assert "Student edition: OK" in capsys.readouterr().out
    leaked = nbformat.read(out / "07_toy.ipynb", as_version=4)
    leaked.cells[0].source += "\n    return -x  # secret-negate-line"
    nbformat.write(leaked, out / "07_toy.ipynb")
    assert cli.main(["check", "--chapters", str(chapters), "--out", str(out), "--no-execute"]) == 1
    assert "secret-negate-line" in capsys.readouterr().out


def _submission(double_body: str = "return x * 2") -> nbformat.NotebookNode:
    """The toy chapter's student edition with Exercise 7.1 answered by ``double_body``."""
    submission = classroom.make_student(toy_notebook(), "07_toy.ipynb")
    stub = next(c for c in submission.cells if "def double" in c.source)
    stub.source = stub.source.replace('raise NotImplementedError("Exercise 7.1: write your solution here")',
                                      double_body)
    return submission


@pytest.mark.slow
def test_grade_runs_submissions_in_every_layout_and_reports_points(tmp_path, capsys):
    flat, nbgrader, folders = tmp_path / "flat", tmp_path / "course" / "submitted", tmp_path / "folders"
    flat.mkdir()
    nbformat.write(_submission(), flat / "alice__07_toy.ipynb")  # Exercise 7.1 right (2 points)
    (nbgrader / "bob" / "07_toy").mkdir(parents=True)
    nbformat.write(_submission("return x - 1"), nbgrader / "bob" / "07_toy" / "07_toy.ipynb")  # wrong
    (folders / "carol").mkdir(parents=True)
    nbformat.write(_submission("return x * 3"), folders / "carol" / "07_toy.ipynb")
    csv_path = tmp_path / "grades.csv"
    assert cli.main(["grade", str(flat), str(nbgrader), str(folders), "--csv", str(csv_path),
                     "--chapters", str(tmp_path / "no_chapters")]) == 0
    out = capsys.readouterr().out
    assert "alice: 2/3" in out and "  07_toy: 2/3" in out
    assert "Exercise 7.1   2/2  correct on all 1 test inputs." in out
    assert "Exercise 7.2   0/1  not implemented yet" in out
    assert "bob: 0/3" in out and "carol: 0/3" in out
    import csv

    rows = list(csv.DictReader(csv_path.open()))
    assert list(rows[0]) == ["student", "notebook", "exercise", "points", "max_points", "passed", "diagnosis"]
    assert [(r["student"], r["notebook"], r["exercise"], r["points"], r["max_points"], r["passed"])
            for r in rows] == [
        ("alice", "07_toy", "Exercise 7.1", "2", "2", "True"),
        ("alice", "07_toy", "Exercise 7.2", "0", "1", "False"),
        ("bob", "07_toy", "Exercise 7.1", "0", "2", "False"),
        ("bob", "07_toy", "Exercise 7.2", "0", "1", "False"),
        ("carol", "07_toy", "Exercise 7.1", "0", "2", "False"),
        ("carol", "07_toy", "Exercise 7.2", "0", "1", "False")]
    assert rows[1]["diagnosis"] == "not implemented yet"
    assert rows[4]["diagnosis"] == "values differ from the expected ones (largest difference 1)"  # carol
    assert "Hint" not in rows[4]["diagnosis"]  # the first line only


def test_find_submissions_reads_the_three_layouts(tmp_path):
    for relative in ["submitted/bob/07_toy/07_toy.ipynb", "carol/08_other.ipynb", "alice__07_toy.ipynb",
                     "carol/.ipynb_checkpoints/08_other-checkpoint.ipynb"]:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("{}")
    found = [(s, n, p.relative_to(tmp_path).as_posix())
             for s, n, p in classroom.find_submissions([tmp_path])]
    assert found == [("alice", "07_toy", "alice__07_toy.ipynb"),
                     ("bob", "07_toy", "submitted/bob/07_toy/07_toy.ipynb"),
                     ("carol", "08_other", "carol/08_other.ipynb")]
    assert classroom.find_submissions([tmp_path / "carol" / "08_other.ipynb"])[0][:2] == ("carol", "08_other")


def test_read_verdicts_gives_points_by_difficulty_and_the_diagnosis():
    from classroom.grading import points_by_name, read_verdicts

    full = toy_notebook()
    student = classroom.make_student(full, "07_toy.ipynb")
    assert points_by_name(full) == points_by_name(student) == {"Exercise 7.1": 2, "Exercise 7.2": 1}
    checks = [c for c in student.cells if "check_function(" in c.source]
    checks[0].outputs = [nbformat.v4.new_output(
        "error", ename="CheckFailed", evalue="Exercise 7.1: this looks like a causal mask off by one (on "
        "input 0 ...)\nHint: add x to itself", traceback=[])]
    checks[1].outputs = [nbformat.v4.new_output("stream",
                                                 text="Exercise 7.2: correct on all 1 test inputs.\n")]
    grades = read_verdicts(student, points_by_name(student))
    assert [(g.exercise, g.points, g.max_points, g.passed) for g in grades] == [
        ("Exercise 7.1", 0, 2, False), ("Exercise 7.2", 1, 1, True)]
    assert grades[0].diagnosis == "this looks like a causal mask off by one (on input 0 ...)"
    assert grades[1].diagnosis == "correct on all 1 test inputs."


def test_make_student_is_the_documented_command():
    makefile = (REPO_ROOT / "Makefile").read_text()
    assert "-m classroom student --out student" in makefile


# --- every real chapter ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def student_edition(tmp_path_factory) -> Path:
    """The student edition of the real chapters, written by the documented command."""
    out = tmp_path_factory.mktemp("student")
    assert cli.main(["student", "--chapters", str(REPO_ROOT / "chapters"), "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_student_edition_contains_no_solution(path, student_edition):
    full = nbformat.read(path, as_version=4)
    student = nbformat.read(student_edition / path.name, as_version=4)
    assert classroom.verify_student(full, student) == []
    assert classroom.gate_problems(full) == []
    exercises = classroom.find_exercises(full, path)
    assert len(exercises) >= 3, f"{path.name}: expected at least three exercises, found {len(exercises)}"
    for ex in exercises:
        assert ex.check_cell is not None, f"{path.name}: {ex.name} has no auto-check cell after it"
        assert ex.hint, f"{path.name}: the check of {ex.name} gives no literal hint= string"
    stubs = [c.source for c in student.cells if "raise NotImplementedError(" in c.source]
    assert len(stubs) >= len([ex for ex in exercises if ex.solution_cells])  # a lab's fixes are no stubs


def _exercise_cases() -> list:
    cases = []
    for path in CHAPTERS:
        nb = nbformat.read(path, as_version=4)
        for ex in classroom.find_exercises(nb, path):
            cases.append(pytest.param(path, ex.number, id=f"{path.stem}-ex{ex.number}"))
    return cases


_kernel_results: dict[str, dict] = {}


@pytest.mark.parametrize("path, number", _exercise_cases())
def test_exercise_check_fails_on_stub_and_passes_on_solution(path, number):
    nb = nbformat.read(path, as_version=4)
    ex = classroom.find_exercises(nb, path)[number - 1]
    assert ex.check_cell is not None, f"{path.name}: {ex.name} has no auto-check cell after its solution"
    outcome = classroom.exercise_outcome(nb, ex, path, kernel_cache=_kernel_results)
    if not outcome.self_contained:
        warnings.warn(f"{path.name}: {ex.name} is not self-contained (it reads variables the notebook "
                      f"computed earlier); tested {outcome.mode}, which is slower. See classroom/.",
                      stacklevel=1)
    assert classroom.outcome_problems(outcome) == []
    assert issubclass(CheckFailed, AssertionError)


def test_read_roster_takes_a_csv_column_or_the_first_column(tmp_path):
    from classroom.grading import read_roster

    (tmp_path / "canvas.csv").write_text("Name,Student,Section\nAda L,ada,1\nBob K,bob,2\n\n")
    (tmp_path / "plain.csv").write_text("ada\nbob\nada\n")
    assert read_roster(tmp_path / "canvas.csv") == ["ada", "bob"]
    assert read_roster(tmp_path / "plain.csv") == ["ada", "bob"]
    with pytest.raises(FileNotFoundError, match="no roster at"):
        read_roster(tmp_path / "missing.csv")


def test_work_not_handed_in_scores_zero_per_exercise(tmp_path):
    from classroom.grading import NOT_SUBMITTED, Grade, with_missing_work

    chapters = tmp_path / "chapters"
    chapters.mkdir()
    nbformat.write(toy_notebook(), chapters / "07_toy.ipynb")
    rows = [("alice", "07_toy", Grade("Exercise 7.1", 2, 2, True, "correct")),
            ("alice", "07_toy", Grade("Exercise 7.2", 1, 1, True, "correct"))]
    out = with_missing_work(rows, ["alice", "bob"], chapters, ["07_toy"])
    bob = [(n, g.exercise, g.points, g.max_points, g.diagnosis) for s, n, g in out if s == "bob"]
    assert bob == [("07_toy", "Exercise 7.1", 0, 2, NOT_SUBMITTED),
                   ("07_toy", "Exercise 7.2", 0, 1, NOT_SUBMITTED)]
    report = classroom.grading.report(out)
    assert "alice: 3/3" in report and "bob: 0/3" in report


def test_grade_with_a_roster_writes_zeros_for_missing_work(tmp_path, monkeypatch, capsys):
    import csv

    from classroom.grading import Grade

    chapters = tmp_path / "chapters"
    chapters.mkdir()
    nbformat.write(toy_notebook(), chapters / "07_toy.ipynb")
    submitted = tmp_path / "submitted" / "alice" / "07_toy"
    submitted.mkdir(parents=True)
    nbformat.write(_submission(), submitted / "07_toy.ipynb")
    (tmp_path / "roster.csv").write_text("student\nalice\nbob\n")
    monkeypatch.setattr(cli, "grade_all", lambda *args: [
        ("alice", "07_toy", Grade("Exercise 7.1", 2, 2, True, "correct")),
        ("alice", "07_toy", Grade("Exercise 7.2", 0, 1, False, "not implemented yet"))])
    target = tmp_path / "grades.csv"
    assert cli.main(["grade", str(tmp_path / "submitted"), "--roster", str(tmp_path / "roster.csv"),
                     "--chapters", str(chapters), "--csv", str(target)]) == 0
    assert "bob: 0/3" in capsys.readouterr().out
    rows = list(csv.DictReader(target.open()))
    bob = [(r["student"], r["exercise"], r["points"], r["diagnosis"]) for r in rows if r["student"] == "bob"]
    assert bob == [("bob", "Exercise 7.1", "0", "not submitted"),
                   ("bob", "Exercise 7.2", "0", "not submitted")]
