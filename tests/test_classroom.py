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
            Write `double(x)`.
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
            Write `Negator().apply(x)`.
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
    assert "### Exercise 7.1: Double it\n\nWrite `double(x)`." in text  # directive -> heading
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
    assert "Student edition: OK" in capsys.readouterr().out
    leaked = nbformat.read(out / "07_toy.ipynb", as_version=4)
    leaked.cells[0].source += "\n    return -x  # secret-negate-line"
    nbformat.write(leaked, out / "07_toy.ipynb")
    assert cli.main(["check", "--chapters", str(chapters), "--out", str(out), "--no-execute"]) == 1
    assert "secret-negate-line" in capsys.readouterr().out


@pytest.mark.slow
def test_grade_runs_a_submission_and_reads_each_check(tmp_path, capsys):
    submission = classroom.make_student(toy_notebook(), "07_toy.ipynb")
    stub = next(c for c in submission.cells if "def double" in c.source)
    stub.source = stub.source.replace('raise NotImplementedError("Exercise 7.1: write your solution here")',
                                      "return x * 2")
    nbformat.write(submission, tmp_path / "07_alice.ipynb")
    assert cli.main(["grade", str(tmp_path / "07_alice.ipynb"), "--csv", str(tmp_path / "g.csv")]) == 0
    out = capsys.readouterr().out
    assert "PASS  07_alice.ipynb  Exercise 7.1: Exercise 7.1: correct on all 1 test inputs." in out
    assert "FAIL  07_alice.ipynb  Exercise 7.2: NotDoneYet: Exercise 7.2: not implemented yet" in out
    assert "1 of 2 checks passed" in out
    assert (tmp_path / "g.csv").read_text().splitlines()[0] == "notebook,exercise,passed,message"


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
    assert len(stubs) >= len(exercises)


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
