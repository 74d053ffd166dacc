"""The course's grader: each exercise of a submitted notebook graded outside the student's kernel.

``grade_submission(submission, course)`` runs the submission's code in a sandbox and the course's
checks in this process (``classroom.isolated``; the spec from ``classroom.check_calls``) and returns one
``Verdict`` per auto-checked exercise. Both graders use it:

- ``nbgrader autograde``: the preprocessors of ``classroom.nbgrader_grading``, which the course's
  ``nbgrader_config.py`` installs around nbgrader's run of the notebook (the student's feedback): each
  autograder test cell's outputs are replaced by the isolated verdict, which is what nbgrader's
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
