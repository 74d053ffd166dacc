"""The course's grader: each exercise of a submitted notebook graded outside the student's kernel.

``grade_submission(submission, course)`` runs the submission's code in a sandbox and the course's
checks in this process (``classroom.isolated``; the spec from ``classroom.check_calls``) and returns one
``Verdict`` per auto-checked exercise. Both graders use it:

- ``nbgrader autograde``: ``IsolatedGrading``, a preprocessor that the course's ``nbgrader_config.py``
  puts right after nbgrader's ``Execute``. nbgrader still runs the notebook in a kernel, so the student
  gets every output as feedback; then each autograder test cell's outputs are replaced by the isolated
  verdict (an error when the exercise fails, a line saying so when it passes), which is what nbgrader's
  ``SaveAutoGrades`` scores. Nothing the kernel printed or raised reaches a score.
- ``python -m classroom grade``: ``classroom.grading`` calls ``grade_submission`` directly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

from classroom import wire
from classroom.check_calls import CheckCall, check_calls, sources_for
from classroom.isolated import CourseFiles, RemoteAnswer, Sandbox, SandboxError, describe

_PREFIX = re.compile(r"^Exercise\s+[\w.]+(\s+\(input \d+\))?:\s*")
TOTAL_SECONDS = 1800  # one submission, all its exercises


@dataclass
class Verdict:
    """One exercise of one submission, graded in isolation."""

    number: str       # "2.2"
    passed: bool
    message: str      # the check's whole message ("" when it passed)
    printed: str = ""  # what the check printed (a prediction's comparison with the experiment)

    @property
    def diagnosis(self) -> str:
        """The message's first line without its "Exercise 2.2: " prefix ("correct" when passed)."""
        if self.passed:
            return "correct"
        lines = [line for line in self.message.strip().splitlines() if line.strip()]
        return _PREFIX.sub("", lines[0].strip()) if lines else "failed"


class CourseValues:
    """The values a check is given (``translator=LadderTranslator``, ``rungs=RUNGS``), from the course's
    own notebook, in this process: its imports, ``def``s, ``class``es and literal constants (teacher's
    code, never the submission's). The same definitions go to the sandbox as the module ``__course__``,
    so that an object of a course class (a lab's model built by the check) can be sent there."""

    MODULE = "__course__"

    def __init__(self, course: nbformat.NotebookNode) -> None:
        import sys
        import types

        from classroom.context import notebook_context, notebook_imports

        self.statements = [notebook_imports(course), *notebook_context(course)]
        self.module = types.ModuleType(self.MODULE)
        sys.modules[self.MODULE] = self.module
        for statement in self.statements:
            try:
                exec(compile(statement, "<course>", "exec"), self.module.__dict__)
            except Exception:  # noqa: BLE001 - a definition that needs the notebook's run
                continue

    def value(self, expression: str) -> object:
        """The expression's value in the course's namespace; ``NameError`` when it needs the run."""
        return eval(compile(expression, "<course>", "eval"), self.module.__dict__)

    def send(self, sandbox: Sandbox) -> None:
        sandbox.request({"cmd": "course", "statements": self.statements})


def _context_value(sandbox: Sandbox, course: CourseValues | None, expression: str) -> object:
    """A value the check is given: the course's own when its notebook defines it without running,
    else the submission's run's, as data (the checks use those only to show a measurement)."""
    if course is not None:
        try:
            return course.value(expression)
        except Exception:  # noqa: BLE001 - it needs the notebook's run
            pass
    return _value(sandbox, expression)


def _value(sandbox: Sandbox, expression: str) -> object:
    """A notebook value a check reads: as data when it is data, else a handle on it in the sandbox."""
    info = describe(sandbox, expression)
    if info is None:
        raise NameError(expression)
    if info.get("data") is not None or not info.get("callable"):
        return wire.decode(info.get("data"))
    return RemoteAnswer(sandbox, expression, info)


def _grade_one(sandbox: Sandbox, submission: nbformat.NotebookNode, call: CheckCall,
               both: bool, course: CourseValues | None = None) -> Verdict:
    import contextlib
    import io

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        found = _grade_quietly(sandbox, submission, call, both, course)
    found.printed = printed.getvalue()
    return found


def _grade_quietly(sandbox: Sandbox, submission: nbformat.NotebookNode, call: CheckCall,
                   both: bool, course: CourseValues | None = None) -> Verdict:
    from utils import checks
    from utils.exercises import get, verdict

    name = get(call.number).name
    sandbox.request({"cmd": "fresh"})
    if course is not None:
        course.send(sandbox)
    raised = []
    for label, code in sources_for(submission, call):
        reply = sandbox.request({"cmd": "exec", "code": code, "label": label})
        if not reply.get("ok") and label.startswith("<cell"):
            error = reply.get("error", {})
            raised.append(f"{label.strip('<>')} raised {error.get('kind')}: {error.get('message')}")
    try:
        answer = _value(sandbox, call.answer)
        context = {keyword: _context_value(sandbox, course, expression)
                   for keyword, expression in call.context}
    except NameError as err:
        why = f"; {raised[0]}" if raised else ""
        return Verdict(call.number, False, f"{name}: {err} is not defined when the check runs{why}")
    try:
        for hidden in ((False, True) if both or call.hidden else (False,)):
            verdict(call.number, answer, hidden=hidden, **context)
    except checks.CheckFailed as err:
        return Verdict(call.number, False, str(err))
    except SandboxError as err:
        return Verdict(call.number, False, f"{name}: {err}")
    except Exception as err:  # noqa: BLE001 - an answer of an unexpected kind broke the check
        return Verdict(call.number, False, f"{name}: the check could not use your answer "
                                           f"({type(err).__name__}: {err})")
    return Verdict(call.number, True, "")


_FILES: CourseFiles | None = None


def prepare() -> CourseFiles:
    """Before any student code runs: load every exercise's check into this process and record the
    course's files as they are (``CourseFiles``). The course's nbgrader_config.py calls it."""
    global _FILES
    from utils.exercises import load_all

    load_all()
    if _FILES is None:
        _FILES = CourseFiles()
    return _FILES


def _tampered(calls: list[CheckCall], changed: list[Path]) -> list[Verdict]:
    shown = ", ".join(str(p.name) for p in changed[:3]) + (" ..." if len(changed) > 3 else "")
    return [Verdict(c.number, False, f"Exercise {c.number}: not graded: the submission changed the "
                                     f"course's own files ({shown}); they were put back")
            for c in calls]


def grade_submission(submission: nbformat.NotebookNode, course: nbformat.NotebookNode, *,
                     checkpoints: str | Path | None = None, language: str | None = None,
                     hidden: bool = True, total_seconds: float = TOTAL_SECONDS,
                     files: CourseFiles | None = None) -> list[Verdict]:
    """One ``Verdict`` per check cell of ``course`` (the course's notebook), for ``submission``.

    ``hidden``: also run each check's hidden inputs (nbgrader's source cells ask for them anyway).
    A submission that changed the course's files (before grading, in its kernel, or while it was
    graded) scores nothing, and the files are put back.
    """
    files = files or prepare()
    calls = check_calls(course)
    changed = files.restore()
    if changed:
        return _tampered(calls, changed)
    verdicts = _grade_calls(submission, calls, checkpoints, language, hidden, total_seconds,
                            CourseValues(course))
    changed = files.restore()
    return _tampered(calls, changed) if changed else verdicts


def _grade_calls(submission: nbformat.NotebookNode, calls: list[CheckCall],
                 checkpoints: str | Path | None, language: str | None, hidden: bool,
                 total_seconds: float, course: CourseValues | None = None) -> list[Verdict]:
    import time

    verdicts: list[Verdict] = []
    sandbox: Sandbox | None = None
    deadline = time.monotonic() + total_seconds
    try:
        for call in calls:
            if time.monotonic() > deadline:
                verdicts.append(Verdict(call.number, False, f"Exercise {call.number}: not graded, the "
                                        f"submission used its {total_seconds:.0f} s"))
                continue
            try:
                if sandbox is None:
                    sandbox = Sandbox(checkpoints, language)
                verdicts.append(_grade_one(sandbox, submission, call, hidden, course))
            except SandboxError as err:
                verdicts.append(Verdict(call.number, False, f"Exercise {call.number}: {err}"))
                if sandbox is not None:
                    sandbox.close()
                sandbox = None
    finally:
        if sandbox is not None:
            sandbox.close()
    return verdicts


try:  # nbgrader's preprocessor base (nbconvert); the course works without nbgrader installed
    from nbconvert.preprocessors import Preprocessor
except ImportError:  # pragma: no cover
    Preprocessor = object  # type: ignore[assignment,misc]


class IsolatedGrading(Preprocessor):
    """nbgrader's autograde step: every autograder test cell gets the isolated verdict as its output.

    Runs after ``Execute``: reads the executed notebook's cells (their sources are the submission's,
    the test cells nbgrader's own, restored from the source by ``OverwriteCells``), grades them with
    ``grade_submission`` and writes, into each test cell of a registered exercise, an error output when
    the exercise failed (nbgrader scores it 0) and one line when it passed (full points). The kernel's
    outputs of those cells are dropped: they are feedback the student's code could have written.
    """

    def preprocess(self, nb, resources):  # noqa: D401 - nbconvert's interface
        import os

        checkpoints = os.environ.get("COURSE_CHECKPOINTS") or None
        tests = {i: c for i, c in enumerate(nb.cells) if c.cell_type == "code"
                 and c.metadata.get("nbgrader", {}).get("grade") and not c.metadata["nbgrader"].get(
                     "solution")}
        course = nbformat.v4.new_notebook(cells=[nb.cells[i] for i in sorted(tests)])
        verdicts = {v.number: v for v in grade_submission(nb, course, checkpoints=checkpoints)}
        for call in check_calls(course):
            found = verdicts.get(call.number)
            index = sorted(tests)[call.cell]
            nb.cells[index].outputs = [_output(call.number, found)]
        return nb, resources


try:
    from nbgrader.preprocessors import Execute
    from traitlets import Integer
except ImportError:  # pragma: no cover
    Execute = object  # type: ignore[assignment,misc]

    def Integer(*_args, **_kwargs):  # type: ignore[no-redef]  # noqa: N802
        return 0


class FeedbackRun(Execute):
    """nbgrader's run of the submission in a kernel, kept for the student's feedback (every cell's
    outputs) and bounded: the grade does not come from it (``IsolatedGrading`` does), so a kernel that
    a student's cell broke (a patched built-in can leave it unable to answer) costs one cell's timeout,
    and the whole run at most ``total_seconds``: after a cell times out, or past the budget, the
    remaining cells are not run."""

    total_seconds = Integer(1800, help="the whole feedback run's time budget").tag(config=True)

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
