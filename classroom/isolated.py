"""Grades computed where no student code ran: the submitted file's code in a sandbox, the checks here.

The kernel that ran a student's notebook cannot be trusted to grade it: one cell can turn every check
into a print (``os.environ.pop("NBGRADER_EXECUTION")``), patch ``utils.checks`` or ``torch.allclose``,
or print "correct". So the grade never comes from that kernel. For each exercise of a submission:

1. the **spec** comes from the course, not from the submission: which exercises the notebook has, and
   each check call (the exercise's number, the name of the student's answer, the notebook values the
   check needs), read from the course's own notebook (``chapters/`` or nbgrader's source);
2. the submission's **code** runs in a **sandbox** (``classroom/sandbox.py``): a fresh Python process
   with a clean environment, in an empty folder, with a memory limit, a time limit per step and no
   network. It runs the notebook's imports and cheap definitions and the cells that define what the
   check reads (``classroom.context``), then calls the student's function whenever the check asks;
3. the **check** runs here, in the grader's process: the exercise's reference, its inputs (visible and
   hidden), its comparisons and its diagnoses (``utils.exercises``). The student's function is a
   ``RemoteAnswer``: calling it sends the inputs to the sandbox and gets the result back as data
   (``classroom.wire``: tensors as dtype, shape and bytes; nothing is unpickled here). What the check
   refuses (a forbidden route, the course's reference code, autograd, a numerical derivative) is
   recorded in the sandbox while the function runs (``utils.routes``) and refuses the answer here.

Nothing a cell does to its kernel or to the sandbox changes what this process compares: the sandbox
sends answers, never verdicts. ``grade_submission`` grades one notebook; ``IsolatedGrading`` is the
nbgrader preprocessor that replaces the kernel's verdicts in ``nbgrader autograde`` (the course's
``nbgrader_config.py`` installs it); ``classroom grade`` uses ``grade_submission`` directly.

What this does not protect against is said in the instructor guide: a student who reads the public
book's answers and retypes them, and code written to subvert the sandbox's own record of the operations
it runs (the sandbox reports what it saw; it cannot be proven honest from inside the process it shares
with the student's code).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from classroom import wire

SANDBOX = Path(__file__).with_name("sandbox.py")
MEMORY_BYTES = int(os.environ.get("COURSE_SANDBOX_MEMORY", 6 * 2**30))  # the sandbox's address space
STEP_SECONDS = int(os.environ.get("COURSE_SANDBOX_STEP_SECONDS", 600))  # one cell, or one call
START_SECONDS = 120


class SandboxError(RuntimeError):
    """The sandbox ended, timed out or answered out of protocol: the exercise scores 0."""


def sandbox_env(checkpoints: str | Path | None = None, language: str | None = None,
                home: str | Path | None = None) -> dict[str, str]:
    """The sandbox's whole environment: nothing of the grader's (no NBGRADER_EXECUTION, no tokens)."""
    env = {"PATH": os.defpath, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONHASHSEED": "0",
           "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "COURSE_PLAIN_PROGRESS": "1",
           "MPLBACKEND": "Agg", "HOME": str(home or tempfile.gettempdir())}
    if checkpoints:
        env["COURSE_CHECKPOINTS"] = str(Path(checkpoints).resolve())
    if language:
        env["COURSE_LANGUAGE"] = language
    return env


class Sandbox:
    """One sandbox process, for one submission; ``request`` sends a command and waits for the reply."""

    def __init__(self, checkpoints: str | Path | None = None, language: str | None = None,
                 memory: int = MEMORY_BYTES, step_seconds: int = STEP_SECONDS) -> None:
        self.folder = tempfile.TemporaryDirectory(prefix="course-sandbox-")
        self.step_seconds = step_seconds
        self.process = subprocess.Popen(
            # -I: no PYTHON* variables, no user site; the sandbox sets its own limits before any
            # student code runs (no preexec_fn: the grader may start it from a thread)
            [sys.executable, "-I", str(SANDBOX), str(memory)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, cwd=self.folder.name,
            env=sandbox_env(checkpoints, language, self.folder.name), start_new_session=True)
        ready = self._read(START_SECONDS)
        if not ready.get("ready"):
            self.close()
            raise SandboxError("the sandbox did not start")

    def _read(self, seconds: float) -> dict:
        out = self.process.stdout
        deadline = time.monotonic() + seconds
        line = b""
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([out], [], [], left)[0]:
                self.close()
                raise SandboxError(f"no reply within {seconds:.0f} s (the step's time limit)")
            chunk = os.read(out.fileno(), 1 << 20)
            if not chunk:
                self.close()
                raise SandboxError("the sandbox ended (the code may have exited, crashed or run out "
                                   f"of its {MEMORY_BYTES // 2**30} GiB of memory)")
            line += chunk
        try:
            reply = json.loads(line)
        except json.JSONDecodeError as err:
            self.close()
            raise SandboxError("the sandbox answered out of protocol") from err
        if not isinstance(reply, dict):
            raise SandboxError("the sandbox answered out of protocol")
        return reply

    def request(self, message: dict, seconds: float | None = None) -> dict:
        if self.process.poll() is not None:
            raise SandboxError("the sandbox has ended")
        try:
            self.process.stdin.write((json.dumps(message) + "\n").encode("utf-8"))
            self.process.stdin.flush()
        except (BrokenPipeError, OSError) as err:
            raise SandboxError("the sandbox has ended") from err
        return self._read(seconds or self.step_seconds)

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, 9)
            except (ProcessLookupError, PermissionError):
                self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        self.folder.cleanup()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _send(args: tuple) -> Any:
    """A check's inputs for the sandbox: data where they are data, a pickle otherwise (the sandbox may
    unpickle what the grader made; the grader never unpickles what the sandbox sends)."""
    return wire.encode(args, pickled=True)


class RemoteAnswer:
    """The student's function (or class), living in the sandbox; the checks call it like the real one."""

    def __init__(self, sandbox: Sandbox, target: str, info: dict) -> None:
        self._sandbox, self._target, self._info = sandbox, target, info
        self.__name__ = info.get("name", target)
        self.__qualname__ = self.__name__
        self.__module__ = info.get("module", "")
        self.is_class = bool(info.get("is_class"))

    def __repr__(self) -> str:
        return f"<{self._info.get('type', 'object')} {self.__name__} in the sandbox>"

    def _reply(self, request: dict, name: str) -> dict:
        from utils import checks

        try:
            reply = self._sandbox.request(request)
        except SandboxError as err:
            raise checks.CheckFailed(f"{name}: {err}") from None
        if reply.get("ok"):
            return reply
        failed = reply.get("failed")
        if failed:
            kind = checks.NotDoneYet if failed.get("kind") == "NotDoneYet" else checks.CheckFailed
            raise kind(str(failed.get("message", "")))
        error = reply.get("error", {})
        raise checks.CheckFailed(f"{name}: {error.get('kind', 'error')}: {error.get('message', '')}")

    def course_remote_call(self, args: Any, *, name: str, hint: str | None, forbidden: Any = (),
                           where: str = "", exponentials: Any = None) -> Any:
        from utils import checks
        from utils.routes import route_label

        args = tuple(args)
        request = {
            "cmd": "call", "target": self._target, "args": _send(args), "name": name, "hint": hint,
            "where": where, "forbidden": [route_label(o, a) for o, a in forbidden],
            "also": [[route_label(o, a), why] for o, a, why in checks._ALSO_FORBIDDEN],
            "files": [list(pair) for pair in checks._FORBIDDEN_FILES],
            "exponentials": None if exponentials is None else int(exponentials(*args))}
        return wire.decode(self._reply(request, name)["result"])

    def course_remote_steps(self, args: Any, name: str, where: str) -> tuple[int, Any]:
        request = {"cmd": "call", "target": self._target, "args": _send(tuple(args)), "name": name,
                   "where": where, "steps": True}
        reply = self._reply(request, name)
        return int(reply["steps"]), wire.decode(reply["result"])

    def course_remote_is(self, routes: list[str]) -> int | None:
        """The index of the route among ``routes`` that this answer is (or wraps), or None."""
        reply = self._sandbox.request({"cmd": "describe", "target": self._target, "routes": routes})
        return reply.get("is_route") if reply.get("ok") else None

    def course_remote_sibling(self, name: str, exercise: str) -> RemoteAnswer:
        """The notebook's function ``name`` (a lab's check is given the model class and reads the part
        it checks from the notebook that defines the class)."""
        from utils import checks

        if not self.is_class:
            return self
        found = describe(self._sandbox, name)
        if found is None or not found.get("callable"):
            raise checks.CheckFailed(f"{exercise}: expected the lab's model class, LabTransformer, from "
                                     f"the notebook that defines the model's parts; got {self.__name__}")
        return RemoteAnswer(self._sandbox, name, found)

    def __call__(self, *args: Any) -> Any:
        return self.course_remote_call(args, name=f"your {self.__name__}", hint=None)


def describe(sandbox: Sandbox, target: str) -> dict | None:
    reply = sandbox.request({"cmd": "describe", "target": target, "routes": []})
    return reply if reply.get("ok") else None


SOURCE_SUFFIXES = (".py", ".json", ".js", ".yaml", ".css", ".txt")


class CourseFiles:
    """The course's files on disk (``utils/`` and ``classroom/``) as they were when grading began. A
    student's code runs as the same user as the grader, in nbgrader's kernel and in the sandbox, and
    could rewrite a check for the next process that imports it. ``changed()`` lists the source files
    changed, added or removed since; ``restore()`` puts them back, removes the ones added, and deletes
    every bytecode cache written since (Python compiles it again from the source: a cache cannot be
    told apart from one a legitimate first import wrote, so none is trusted)."""

    def __init__(self, roots: list[Path] | None = None) -> None:
        import classroom
        import utils

        watched = os.environ.get("COURSE_GRADER_WATCH", "")  # other folders instead (the tests')
        self.roots = roots or [Path(p) for p in watched.split(os.pathsep) if p] or [
            Path(utils.__file__).parent, Path(classroom.__file__).parent]
        self.files = {p: p.read_bytes() for p in self._walk()}
        self.caches = {p: p.read_bytes() for p in self._walk(caches=True)}

    def _walk(self, caches: bool = False) -> list[Path]:
        if caches:
            return sorted(p for root in self.roots for p in root.rglob("*.pyc") if p.is_file())
        return sorted(p for root in self.roots for p in root.rglob("*") if p.is_file()
                      and p.suffix in SOURCE_SUFFIXES and "__pycache__" not in p.parts)

    def changed(self) -> list[Path]:
        now = set(self._walk())
        return sorted({p for p, data in self.files.items() if p not in now or p.read_bytes() != data}
                      | (now - set(self.files)))

    def restore(self) -> list[Path]:
        """Undo every change; returns the source files that had changed."""
        changed = self.changed()
        for path in changed:
            if path in self.files:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(self.files[path])
            else:
                path.unlink()
        for path in self._walk(caches=True):
            if self.caches.get(path) != path.read_bytes():
                path.unlink(missing_ok=True)
        return changed
