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
from classroom.exercises import BEGIN, find_exercises
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
# On a JupyterHub, the course's id and the exchange folder that teachers and students share (the same
# two lines go into /etc/jupyter/nbgrader_config.py on the students' image):
# c.CourseDirectory.course_id = "attention"
# c.Exchange.root = "/srv/nbgrader/exchange"
'''

README = """# The course as an nbgrader course

Written by `python -m classroom student --out student` (`make student`) next to the student edition.
Every chapter is an assignment named after its notebook (`04_self_attention`). Each exercise's check
cell is an autograded test cell worth 1, 2 or 3 points (Easy, Medium, Hard); its grade id is `ex-4-2`
for Exercise 4.2. Exercise texts and checks are locked. Under nbgrader the checks run strict (nbgrader
sets `NBGRADER_EXECUTION`): a wrong or missing answer raises, so the exercise scores 0.

Every open question of an exercise is a read-only prompt followed by an answer cell graded by hand
(formgrader's "Manual grading"); the instructor guide gives each one's rubric. Each check cell also
runs hidden tests (other inputs), which the release does not show.

Run nbgrader through the course's wrapper, from the repository root: it puts nbgrader's `alembic` on
`PATH`, gives each notebook one CPU thread, and lets `autograde` load the reference run's trained
models (kept once by `checkpoints`) instead of training them for every submission:

    python -m classroom nbgrader generate_assignment 04_self_attention  # -> release/ (hand it out)
    # collect the students' notebooks into submitted/<student>/04_self_attention/04_self_attention.ipynb
    # (or `collect` with an exchange, or `zip_collect`)
    python -m classroom nbgrader checkpoints 04_self_attention   # once, before autograding
    python -m classroom nbgrader autograde 04_self_attention     # every submission; fills gradebook.db
    python -m classroom nbgrader export --to grades.csv           # one row per student and assignment
    python -m classroom nbgrader generate_feedback 04_self_attention   # -> feedback/ (HTML per student)

`--course DIR` (before the command) names this folder when it is not `student/nbgrader`.

`nbgrader formgrade` (in JupyterLab with the nbgrader extension) shows each exercise's score.
Without nbgrader, `python -m classroom grade submitted --csv grades.csv` (from the repository) runs the
same submissions and prints each exercise's points with the check's diagnosis, e.g. "this looks like a
causal mask off by one".
"""


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


def write_nbgrader_course(chapters: str | Path, out: str | Path) -> list[Path]:
    """Write the nbgrader course folder ``out`` (config, README, ``source/``); return the notebooks."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "nbgrader_config.py").write_text(CONFIG)
    (out / "README.md").write_text(README)
    written = []
    for path in chapter_notebooks(chapters):
        nb = nbformat.read(path, as_version=4)
        target = out / "source" / path.stem / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nbgrader_notebook(nb, path), target)
        written.append(target)
    return written
