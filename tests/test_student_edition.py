"""The student edition as a student meets it: plain Markdown, and Run All reaches the end.

Every chapter's student edition (``python -m classroom student``) must read as ordinary Markdown in
JupyterLab and Colab (no MyST directive, role or solution gate left), and must run top to bottom with
no error: an unfinished exercise's check prints one line and lets the notebook go on (checks are
lenient outside grading). The Run All tests are slow (several minutes of CPU for all notebooks);
under ``make test``'s ``--dist loadgroup`` each runs on whichever worker is free.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

import classroom  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
CHAPTER_DIR = REPO_ROOT / "chapters"
NOTEBOOKS = sorted(CHAPTER_DIR.glob("[0-9][0-9]_*.ipynb"))
RUN_TIMEOUT_S = 1800  # per cell; chapters 8 and 9 take 80 s and 45 s in all at one thread


def student_edition(path: Path) -> nbformat.NotebookNode:
    return classroom.make_student(nbformat.read(path, as_version=4), path)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_student_markdown_is_plain(path):
    student = student_edition(path)
    for i, cell in enumerate(student.cells):
        if cell.cell_type == "markdown":
            raw = classroom.RAW_MYST.search(cell.source)
            assert raw is None, f"{path.name} cell {i}: MyST Jupyter shows raw: {cell.source[:300]}"
            assert ":class:" not in cell.source and ":label:" not in cell.source, cell.source[:300]
    exercises = classroom.find_exercises(nbformat.read(path, as_version=4), path)
    text = "\n".join(c.source for c in student.cells if c.cell_type == "markdown")
    for ex in exercises:
        assert f"### {ex.name}: " in text, f"{path.name}: no heading for {ex.name}"
    assert not [c for c in student.cells if classroom.is_lab_solution(c)]


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_run_all_reaches_the_end(path, monkeypatch):
    """Run All on the student edition, as a student's own run: checks lenient, no error allowed."""
    from nbclient import NotebookClient

    for name in ("COURSE_CHECKS", "NBGRADER_EXECUTION", "COURSE_RESULTS"):
        monkeypatch.delenv(name, raising=False)
    from tests.conftest import kept_runs_env

    env = {**os.environ, "OMP_NUM_THREADS": "1", **kept_runs_env()}  # the book's training runs
    nb = student_edition(path)
    client = NotebookClient(nb, timeout=RUN_TIMEOUT_S, kernel_name="python3", allow_errors=False,
                            startup_timeout=300,
                            resources={"metadata": {"path": str(CHAPTER_DIR)}})
    client.execute(env=env)  # raises CellExecutionError at the first cell that fails
    from tests.test_glue_runs import record_glue  # for the comparison of the runs' glued numbers

    record_glue("student", path, nb)
    printed = "\n".join(out.get("text", "") for c in nb.cells if c.cell_type == "code"
                        for out in c.get("outputs", []))
    for ex in classroom.find_exercises(nbformat.read(path, as_version=4), path):
        if ex.solution_cells:
            assert f"{ex.name}: not implemented yet" in printed, f"{ex.name}: its check said nothing"
