"""The course's grader inside ``nbgrader autograde``: three preprocessors that the course's
``nbgrader_config.py`` installs (``classroom.nbgrader_course``).

- ``StartIsolatedGrading``, first: starts grading the submission in isolation
  (``classroom.autograder.grade_submission``), beside nbgrader's run of the notebook;
- ``FeedbackRun``, nbgrader's ``Execute`` bounded in time: the kernel's outputs are the student's
  feedback, and no grade depends on them;
- ``IsolatedGrading``, after it: writes each exercise's isolated verdict into its autograder test cell,
  which is what nbgrader's ``SaveAutoGrades`` scores.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from classroom.autograder import Verdict, _tampered, grade_submission, prepare
from classroom.check_calls import check_calls

try:  # nbgrader's preprocessor base (nbconvert); the course works without nbgrader installed
    from nbconvert.preprocessors import Preprocessor
    from traitlets import Bool, Unicode
except ImportError:  # pragma: no cover
    Preprocessor = object  # type: ignore[assignment,misc]

    def Unicode(*_args, **_kwargs):  # type: ignore[no-redef]  # noqa: N802
        return ""

    def Bool(*_args, **_kwargs):  # type: ignore[no-redef]  # noqa: N802
        return True

_STARTED = "course_isolated_grading"  # where StartIsolatedGrading leaves its grading in resources


class _Nbgrader(Preprocessor):
    enabled = Bool(True, help="nbconvert runs a preprocessor only when it is enabled").tag(config=True)
    course_root = Unicode("", help="the nbgrader course folder (its source/ holds the teacher's "
                                   "notebooks); the working folder when empty").tag(config=True)

    def spec(self, nb: nbformat.NotebookNode, resources: dict) -> nbformat.NotebookNode:
        """The teacher's source notebook, ``<course_root>/source/<assignment>/<notebook>.ipynb``; without
        it, the submission's locked test cells (nbgrader restored them from the source)."""
        info = (resources or {}).get("nbgrader", {})
        assignment, notebook = info.get("assignment"), info.get("notebook")
        if assignment and notebook:
            path = Path(self.course_root or ".") / "source" / assignment / f"{notebook}.ipynb"
            if path.is_file():
                return nbformat.read(path, as_version=4)
        return nbformat.v4.new_notebook(cells=[c for c in nb.cells if _is_test(c)])


def _is_test(cell: nbformat.NotebookNode) -> bool:
    meta = cell.metadata.get("nbgrader", {}) if cell.cell_type == "code" else {}
    return bool(meta.get("grade")) and not meta.get("solution")


def _grade_in_background(nb, course, checkpoints) -> dict:
    import threading

    box: dict = {}

    def work() -> None:
        try:
            box["verdicts"] = grade_submission(nb, course, checkpoints=checkpoints)
        except BaseException as err:  # noqa: BLE001 - reported where the verdicts are read
            box["error"] = err

    box["thread"] = threading.Thread(target=work, name="isolated grading", daemon=True)
    box["thread"].start()
    return box


class StartIsolatedGrading(_Nbgrader):
    """Before nbgrader's run of the notebook: start grading it in isolation meanwhile (the sandbox is a
    process of its own, so both use a core each); ``IsolatedGrading`` collects the verdicts."""

    def preprocess(self, nb, resources):  # noqa: D401 - nbconvert's interface
        import copy
        import os

        resources[_STARTED] = _grade_in_background(
            copy.deepcopy(nb), self.spec(nb, resources), os.environ.get("COURSE_CHECKPOINTS") or None)
        return nb, resources


class IsolatedGrading(_Nbgrader):
    """nbgrader's autograde step: every autograder test cell gets the isolated verdict as its output.

    Runs after nbgrader's run of the notebook. The spec (the check calls, and the values the checks are
    given) comes from the teacher's source notebook, the code from the submission's cells. Into each
    test cell of a registered exercise it writes an error output when the exercise failed (nbgrader
    scores it 0) and a line when it passed (full points); the kernel's outputs of those cells are
    dropped (the student's code could have written them). Last, the course's files are checked once
    more, now that the kernel has ended: a submission that changed them scores 0.
    """

    def preprocess(self, nb, resources):  # noqa: D401 - nbconvert's interface
        import os

        course = self.spec(nb, resources)
        started = (resources or {}).pop(_STARTED, None)
        if started is None:
            verdicts = grade_submission(nb, course,
                                        checkpoints=os.environ.get("COURSE_CHECKPOINTS") or None)
        else:
            started["thread"].join()
            if "error" in started:
                raise started["error"]
            verdicts = started["verdicts"]
        calls = check_calls(course)
        changed = prepare().restore()
        if changed:
            verdicts = _tampered(calls, changed)
        found = {v.number: v for v in verdicts}
        tests = [i for i, c in enumerate(nb.cells) if _is_test(c)]
        by_id = {nb.cells[i].metadata["nbgrader"].get("grade_id"): i for i in tests}
        for call in calls:
            grade_id = course.cells[call.cell].metadata.get("nbgrader", {}).get("grade_id")
            index = by_id.get(grade_id)
            if index is None:  # matched by its source
                index = next((i for i in tests if nb.cells[i].source.strip() == call.source.strip()),
                             None)
            if index is not None:
                nb.cells[index].outputs = [_output(call.number, found.get(call.number))]
        return nb, resources


try:
    from nbgrader.preprocessors import Execute
    from traitlets import Enum, Integer
except ImportError:  # pragma: no cover
    Execute = object  # type: ignore[assignment,misc]

    def Integer(*_args, **_kwargs):  # type: ignore[no-redef]  # noqa: N802
        return 0

    Enum = Integer  # type: ignore[assignment,misc]


class FeedbackRun(Execute):
    """nbgrader's run of the submission in a kernel, kept for the student's feedback (every cell's
    outputs) and bounded: the grade does not come from it (``IsolatedGrading`` does), so a kernel that
    a student's cell broke (a patched built-in can leave it unable to answer) costs one cell's timeout,
    and the whole run at most ``total_seconds``: after a cell times out, or past the budget, the
    remaining cells are not run."""

    total_seconds = Integer(1800, help="the whole feedback run's time budget").tag(config=True)
    # the outputs are in once the last cell has run: the kernel is stopped, not asked to stop (a
    # graceful shutdown waited about 3 s per submission for a kernel that had imported torch)
    shutdown_kernel = Enum(["graceful", "immediate"], default_value="immediate",
                           help="how the kernel is stopped after the run").tag(config=True)

    def preprocess(self, nb, resources=None, km=None):  # noqa: D401 - nbconvert's interface
        import time

        self._deadline = time.monotonic() + self.total_seconds
        self._stopped = False
        self._cell_timeout = self.timeout
        try:
            return super().preprocess(nb, resources, km)
        except Exception as err:  # noqa: BLE001 - a kernel the student's code broke: grading goes on
            self.log.warning("the feedback run stopped (%s: %s); the grade does not depend on it",
                             type(err).__name__, str(err)[:200])
            return nb, resources

    def preprocess_cell(self, cell, resources, index):  # noqa: D401 - nbconvert's interface
        import time

        left = self._deadline - time.monotonic()
        if self._stopped or left <= 0:
            self._stopped = True
            return cell, resources
        if cell.cell_type == "code" and self._cell_timeout:
            self.timeout = max(1, int(min(self._cell_timeout, left)))
        cell, resources = super().preprocess_cell(cell, resources, index)
        if any(out.get("ename") == "CellTimeoutError" for out in cell.get("outputs", [])):
            self._stopped = True  # the kernel is stuck, or the budget is spent: grading goes on
        return cell, resources


def _output(number: str, found: Verdict | None) -> nbformat.NotebookNode:
    if found is not None and found.passed:
        return nbformat.v4.new_output("stream", name="stdout", text=found.printed + (
            f"Exercise {number}: correct (graded outside your kernel).\n"))
    message = found.message if found is not None else f"Exercise {number}: not graded"
    lines = message.splitlines() or ["failed"]
    return nbformat.v4.new_output("error", ename="CheckFailed", evalue=message,
                                  traceback=[f"CheckFailed: {lines[0]}", *lines[1:]])
