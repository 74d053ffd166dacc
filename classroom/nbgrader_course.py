"""The chapters as an nbgrader course: ``student/nbgrader/`` (written with the student edition).

Each chapter is one assignment named after the notebook (``04_self_attention``) holding that notebook
in ``source/<assignment>/``. In it, with nbgrader's cell metadata (schema version 3):

- every solution cell (``### BEGIN SOLUTION`` / ``### END SOLUTION``) is an nbgrader solution cell;
- every exercise's auto-check cell is a locked autograder test cell worth 1, 2 or 3 points (Easy,
  Medium, Hard, from the ``*Medium · about 15 minutes.*`` line), its grade_id "ex-4-2";
- every exercise's text is a locked, read-only markdown cell;
- the markdown is plain (as in the student edition); gate markdown and lab-solution cells are gone.
"""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat

from classroom.edition import answer_prompt, chapter_notebooks, converted_cells
from classroom.exercises import BEGIN, find_exercises, is_lab_solution
from utils.exercises import get

SCHEMA_VERSION = 3
CODE_STUB = '# YOUR CODE HERE\nraise NotImplementedError("write your solution here")'

CONFIG = f'''"""nbgrader configuration of the course: run nbgrader commands from this folder."""
import os

c = get_config()  # noqa: F821 (nbgrader provides it)

# The course folder is this file's folder, wherever the course was copied to.
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.ClearSolutions.code_stub = {{"python": {CODE_STUB!r}}}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
# Autograding runs every notebook top to bottom; the longest chapters train small models (minutes on
# a laptop CPU). A cell gets this many seconds before it counts as failed.
c.ExecutePreprocessor.timeout = 1800
c.Execute.timeout = 1800
# Grades come from the course's isolated grader, never from the student's kernel: nbgrader still runs
# the notebook (every output stays as the student's feedback), while the course's grader grades each
# exercise again, the submission's code in a sandbox and the checks in this process, and writes its
# verdict into each autograder test cell, which is what SaveAutoGrades scores (classroom/autograder.py,
# classroom/nbgrader_grading.py).
# The isolated grading starts before nbgrader's run and runs beside it (its sandbox is a process of its
# own). FeedbackRun is nbgrader's Execute bounded in time: after a cell times out (a student's cell can
# leave the kernel unable to answer) the rest is not run, since no grade depends on it.
# prepare() loads every check and records the course's files before any student code runs.
from classroom.nbgrader_grading import (  # noqa: E402
    FeedbackRun, IsolatedGrading, StartIsolatedGrading, prepare)
from nbconvert.preprocessors import ClearMetadataPreprocessor  # noqa: E402
from nbgrader.preprocessors import (  # noqa: E402
    AssignLatePenalties, CheckCellMetadata, IgnorePattern, LimitOutput, SaveAutoGrades)

prepare()
c.StartIsolatedGrading.course_root = c.IsolatedGrading.course_root = c.CourseDirectory.root
c.Autograde.autograde_preprocessors = [
    StartIsolatedGrading, FeedbackRun, IsolatedGrading, IgnorePattern, ClearMetadataPreprocessor,
    LimitOutput, SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
# On a JupyterHub, the course's id and the exchange folder that teachers and students share (the same
# two lines go into /etc/jupyter/nbgrader_config.py on the students' image):
# c.CourseDirectory.course_id = "attention"
# c.Exchange.root = "/srv/nbgrader/exchange"
'''

# The README (in the edition's language) is classroom.readmes.nbgrader_readme.


def _meta(grade_id: str, *, solution: bool = False, grade: bool = False, locked: bool = False,
          points: int | None = None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": SCHEMA_VERSION,
            "solution": solution}
    if grade:
        meta["points"] = points
    return meta


def nbgrader_notebook(nb: nbformat.NotebookNode, path: str | Path = "notebook",
                      lab_solutions: bool = False) -> nbformat.NotebookNode:
    """The nbgrader source notebook of a chapter (solutions kept, in nbgrader's cell metadata).

    ``lab_solutions``: keep the cells tagged ``lab-solution`` (a lab solved, as a reference submission).
    """
    exercises = find_exercises(nb, path)
    roles: dict[int, dict] = {}
    for ex in exercises:
        for k, i in enumerate(ex.solution_cells):
            roles[i] = _meta(f"{ex.grade_id}-solution" + (f"-{k + 1}" if k else ""), solution=True)
        if ex.check_cell is not None:
            roles[ex.check_cell] = _meta(ex.grade_id, grade=True, locked=True, points=ex.points)
        if ex.text_cell is not None:
            roles[ex.text_cell] = _meta(f"{ex.grade_id}-text", locked=True)
    registered = {ex.check_cell: ex.registered for ex in exercises if ex.registered is not None}
    out = copy.deepcopy(nb)
    out.cells = []
    for i, cell in converted_cells(nb, path, lab_solutions=lab_solutions):
        if i not in roles and cell.cell_type == "code" and BEGIN in cell.source:
            roles[i] = _meta(f"solution-cell-{i}", solution=True)  # markers outside any exercise
        answer = cell.metadata.pop("course_answer", None)
        if answer is not None:  # an open question: its locked prompt, then the answer graded by hand
            entry = get(answer["exercise"])
            k = answer["question"]
            prompt = answer_prompt(entry, k)
            prompt.metadata["nbgrader"] = _meta(f"{entry.grade_id}-question-{k + 1}", locked=True)
            out.cells.append(prompt)
            roles[i] = _meta(f"{entry.grade_id}-answer-{k + 1}", solution=True, grade=True,
                             points=entry.questions[k].points)
        if i in registered:
            cell.source = with_hidden_tests(cell.source)
        if i in roles:
            cell.metadata["nbgrader"] = roles[i]
        else:
            cell.metadata.pop("nbgrader", None)
        out.cells.append(cell)
    return out


HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"


def with_hidden_tests(source: str) -> str:
    """A registered check cell with nbgrader's hidden tests appended: the same call with
    ``hidden=True`` (other inputs), which nbgrader removes from the release and runs when grading."""
    import ast

    calls = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)
             and getattr(node.func, "id", None) == "check"]
    if len(calls) != 1:
        raise ValueError(f"a registered check cell makes one check(...) call; this one makes "
                         f"{len(calls)}:\n{source}")
    call = calls[0]
    call.keywords.append(ast.keyword("hidden", ast.Constant(True)))
    return f"{source.rstrip()}\n{HIDDEN_BEGIN}\n{ast.unparse(call)}\n{HIDDEN_END}"


def write_nbgrader_course(chapters: str | Path, out: str | Path, language: str = "en") -> list[Path]:
    """Write the nbgrader course folder ``out`` (config, README in ``language``, ``source/``); return the
    notebooks."""
    from classroom.readmes import nbgrader_readme

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "nbgrader_config.py").write_text(CONFIG)
    (out / "README.md").write_text(nbgrader_readme(language), encoding="utf-8")
    written = []
    for path in chapter_notebooks(chapters):
        nb = nbformat.read(path, as_version=4)
        target = out / "source" / path.stem / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nbgrader_notebook(nb, path), target)
        written.append(target)
        if any(is_lab_solution(cell) for cell in nb.cells):  # a lab: its source has no fixes
            solved = out / REFERENCE / path.stem / path.name
            solved.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(nbgrader_notebook(nb, path, lab_solutions=True), solved)
    return written


# A lab solved, for the teacher only (outside source/, so nbgrader never releases it): the run that
# keeps the repaired model's training for grading (``python -m classroom nbgrader checkpoints``).
REFERENCE = "reference"
