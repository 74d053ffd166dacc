"""The chapters as an nbgrader course, tested with nbgrader 0.9.6 itself (slow: autograde runs notebooks).

``python -m classroom student`` writes ``student/nbgrader/`` (``classroom.nbgrader_course``). Here:
``nbgrader generate_assignment`` must accept every chapter's source notebook; ``nbgrader autograde``
then grades ``reference`` (the source notebook with the solutions, and a lab's fixes), which must score
every exercise's full points in every chapter, and ``untouched`` (the release as handed out), which
must score zero, in the chapters of ``UNTOUCHED`` (Run All reaching the end under grading is the same
plumbing in every chapter; that each check fails on its stub is tested for every exercise of every
chapter in tests/test_exercise_rules.py and tests/test_exercise_mistakes.py, without a notebook run,
and tests/test_student_edition.py runs every release top to bottom). Scores come from the gradebook.

The reference run is also ``make test``'s execution of every full notebook: no cell may raise in it
(the check ``pytest --nbval-lax chapters`` makes; ``make test`` leaves nbval out so that no notebook
runs twice for the same check).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbgrader", reason="needs nbgrader==0.9.6 (requirements.txt)")

import classroom  # noqa: E402
from tests.test_classroom import lab_notebook, toy_notebook  # noqa: E402

pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = classroom.chapter_notebooks(REPO_ROOT / "chapters")
# The chapters whose untouched release is autograded too: the quick ones (each runs in seconds), one of
# them with a hidden-input check cell in every exercise pattern the course uses.
UNTOUCHED = ("00_getting_started", "02_soft_lookup", "04_self_attention", "07_transformer_encoder")


def nbgrader(course: Path, *args: str, timeout: int = 3600) -> str:
    """Run an nbgrader command in the course folder (its nbgrader_config.py sets the root)."""
    env = {k: v for k, v in os.environ.items() if k not in ("COURSE_CHECKS", "NBGRADER_EXECUTION")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # nbgrader runs alembic
    env["OMP_NUM_THREADS"] = "1"
    result = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env,
                            capture_output=True, text=True, timeout=timeout)
    log = result.stdout + result.stderr
    assert result.returncode == 0 and "| ERROR]" not in log, (
        f"nbgrader {' '.join(args)} failed:\n{log[-6000:]}")
    return log


def generate(course: Path, assignment: str) -> nbformat.NotebookNode:
    """``nbgrader generate_assignment``; returns the released notebook."""
    release = course / "release" / assignment / f"{assignment}.ipynb"
    if not release.exists():
        nbgrader(course, "generate_assignment", assignment, "--force")
    return nbformat.read(release, as_version=4)


def autograde(course: Path, full: nbformat.NotebookNode, path: Path) -> dict[str, dict[str, tuple]]:
    """Submit ``reference`` (and ``untouched`` in UNTOUCHED chapters), autograde; {student: {grade_id:
    (score, max)}}."""
    from nbgrader.api import Gradebook

    assignment = path.stem
    release = generate(course, assignment)  # also registers the assignment in the gradebook
    submissions = {"reference": classroom.nbgrader_notebook(full, path, lab_solutions=True)}
    if assignment in UNTOUCHED or assignment not in {p.stem for p in CHAPTERS}:
        submissions["untouched"] = release
    for student, nb in submissions.items():
        target = course / "submitted" / student / assignment / f"{assignment}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
    nbgrader(course, "autograde", assignment, "--force")
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        return {student: {grade.name: (grade.score, grade.max_score) for grade in
                          gradebook.find_submission_notebook(assignment, assignment, student).grades}
                for student in submissions}


def expected_points(full: nbformat.NotebookNode, path: Path) -> dict[str, int]:
    return {ex.grade_id: ex.points for ex in classroom.find_exercises(full, path)
            if ex.check_cell is not None}


def assert_full_and_zero(scores: dict[str, dict[str, tuple]], points: dict[str, int]) -> None:
    assert scores["reference"] == {gid: (p, p) for gid, p in points.items()}, "reference lost points"
    if "untouched" in scores:
        assert scores["untouched"] == {gid: (0, p) for gid, p in points.items()}, "untouched earned points"


def test_toy_course_end_to_end(tmp_path):
    """Two toy chapters (one a find-the-bug lab): generate, autograde, read the gradebook."""
    chapters, course = tmp_path / "chapters", tmp_path / "course"
    chapters.mkdir()
    nbformat.write(toy_notebook(), chapters / "07_toy.ipynb")
    nbformat.write(lab_notebook(), chapters / "17_lab_toy.ipynb")
    classroom.write_nbgrader_course(chapters, course)
    assert "os.path.abspath(__file__)" in (course / "nbgrader_config.py").read_text()
    assert "generate_assignment" in (course / "README.md").read_text()
    for path in sorted(chapters.glob("*.ipynb")):
        full = nbformat.read(path, as_version=4)
        release = generate(course, path.stem)
        assert classroom.verify_student(full, release) == []
        assert 'raise NotImplementedError("write your solution here")' in "\n".join(
            c.source for c in release.cells) or "lab" in path.stem
        points = expected_points(full, path)
        assert sorted(points.values()) == ([2, 3] if "lab" in path.stem else [1, 2])
        assert_full_and_zero(autograde(course, full, path), points)


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """The nbgrader course of the real chapters, written by the documented command."""
    out = tmp_path_factory.mktemp("student")
    import classroom.__main__ as cli

    assert cli.main(["student", "--chapters", str(REPO_ROOT / "chapters"), "--out", str(out)]) == 0
    assert (out / "nbgrader" / "nbgrader_config.py").exists()
    return out / "nbgrader"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_generate_assignment_accepts_every_chapter(path, course):
    full = nbformat.read(path, as_version=4)
    release = generate(course, path.stem)
    assert classroom.verify_student(full, release) == []
    graded = [c for c in release.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert len(graded) == len(expected_points(full, path)) >= 3


def cell_errors(course: Path, student: str, assignment: str) -> list[tuple[int, bool, str]]:
    """(cell index, graded test cell?, error) for each cell of an autograded notebook that raised."""
    graded = nbformat.read(course / "autograded" / student / assignment / f"{assignment}.ipynb",
                           as_version=4)
    return [(i, bool(cell.metadata.get("nbgrader", {}).get("grade")), f"{out.ename}: {out.evalue}"[:300])
            for i, cell in enumerate(graded.cells) if cell.cell_type == "code"
            for out in cell.get("outputs", []) if out.output_type == "error"]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_autograde_gives_reference_full_points_and_untouched_zero(path, course):
    """Also the run of every full notebook in ``make test`` (which leaves nbval out to save the time):
    in the reference submission no cell may raise, which is what ``pytest --nbval-lax`` checks; in the
    untouched release only the graded check cells may (Run All reaches the end under grading too)."""
    full = nbformat.read(path, as_version=4)
    assert_full_and_zero(autograde(course, full, path), expected_points(full, path))
    assert cell_errors(course, "reference", path.stem) == [], f"{path.name}: a cell raised"
    from tests.test_book import record_glue  # for the comparison of the runs' glued numbers

    record_glue("reference", path, nbformat.read(
        course / "autograded" / "reference" / path.stem / f"{path.stem}.ipynb", as_version=4))
    if path.stem in UNTOUCHED:
        ungraded = [e for e in cell_errors(course, "untouched", path.stem) if not e[1]]
        assert ungraded == [], f"{path.name}: the untouched release raised outside its check cells"


def test_untouched_chapters_exist():
    assert set(UNTOUCHED) <= {p.stem for p in CHAPTERS}
