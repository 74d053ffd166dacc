"""The sandbox: a fresh Python process that runs one student's code for the grader, and nothing else.

Started by ``classroom.isolated`` as ``python -I classroom/sandbox.py`` with a clean environment, in a
folder of its own, under memory and time limits. It never decides a grade: it runs the cells the grader
sends, calls the student's functions on the inputs the grader sends, and sends back what they returned
as data (``classroom.wire``), with what the check refuses recorded while they ran (``utils.checks``).
Every comparison happens in the grader's process, which no student code touches.

The protocol is one JSON object per line over the process's original stdin and stdout; before any
student code runs, those are moved to private descriptors, and the student's prints (Python's and the
C libraries') go to stderr, so nothing a cell prints can be read as a reply.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import json
import os
import sys
import traceback
from pathlib import Path


def _load_wire():
    spec = importlib.util.spec_from_file_location("course_wire", Path(__file__).with_name("wire.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _private_channel() -> tuple[io.TextIOWrapper, io.TextIOWrapper]:
    """The protocol's pipes on new descriptors; stdin from /dev/null, stdout into stderr."""
    inbox = os.fdopen(os.dup(0), "r", encoding="utf-8")
    outbox = os.fdopen(os.dup(1), "w", encoding="utf-8")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115
    sys.stdout = sys.stderr
    return inbox, outbox


def _limits(memory: int) -> None:
    """The sandbox's own limits, set before any student code runs: its address space, no core files,
    and a network namespace of its own where the kernel allows one (root, user namespaces)."""
    import resource

    if memory > 0:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).unshare(0x40000000)  # CLONE_NEWNET; else the socket guard
    except Exception:  # noqa: BLE001
        pass


def _block_network() -> None:
    """No connection leaves the sandbox (the grader also tries a network namespace of its own)."""
    import socket

    def refused(*_args, **_kwargs):
        raise OSError("the grader's sandbox has no network")

    socket.socket.connect = refused  # type: ignore[method-assign]
    socket.socket.connect_ex = refused  # type: ignore[method-assign]
    socket.create_connection = refused  # type: ignore[assignment]
    socket.getaddrinfo = refused  # type: ignore[assignment]


def _resolve(dotted: str) -> tuple[object, str]:
    """(owner, attribute) of a refused route named ``package.module.Class.attribute``."""
    parts = dotted.split(".")
    owner: object = importlib.import_module(parts[0])
    for k, part in enumerate(parts[1:-1], start=1):
        if hasattr(owner, part):
            owner = getattr(owner, part)
        else:
            owner = importlib.import_module(".".join(parts[:k + 1]))
    return owner, parts[-1]


def _error(err: BaseException) -> dict:
    return {"kind": type(err).__name__, "kinds": [c.__name__ for c in type(err).__mro__],
            "message": str(err)[:4000]}


class Runner:
    def __init__(self, wire) -> None:
        self.wire = wire
        self.namespace: dict = {}
        self.fresh()

    def fresh(self) -> dict:
        self.namespace = {"__name__": "__main__", "__builtins__": __builtins__}
        try:
            from IPython.display import display  # notebooks call it without importing it

            self.namespace["display"] = display
        except ImportError:
            pass
        return {"ok": True}

    def run_code(self, code: str, label: str) -> dict:
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                exec(compile(code, label, "exec"), self.namespace)
        except BaseException as err:  # noqa: BLE001 - a student's cell may raise anything
            if isinstance(err, (KeyboardInterrupt, SystemExit)) and not isinstance(err, SystemExit):
                raise
            return {"ok": False, "error": _error(err), "printed": printed.getvalue()[-2000:]}
        return {"ok": True, "printed": printed.getvalue()[-2000:]}

    def course(self, statements: list[str]) -> dict:
        """The course's own definitions as the module ``__course__`` (objects of its classes that the
        grader sends are rebuilt from it)."""
        import types

        module = types.ModuleType("__course__")
        sys.modules["__course__"] = module
        for statement in statements:
            try:
                exec(compile(statement, "<course>", "exec"), module.__dict__)
            except Exception:  # noqa: BLE001 - a definition that needs the notebook's run
                continue
        return {"ok": True}

    def target(self, expr: str):
        return eval(compile(expr, "<grader>", "eval"), self.namespace)

    def describe(self, expr: str, routes: list[str]) -> dict:
        try:
            value = self.target(expr)
        except BaseException as err:  # noqa: BLE001
            return {"ok": False, "error": _error(err)}
        inner = getattr(value, "func", None) or getattr(value, "__wrapped__", None)
        identical = None
        for k, route in enumerate(routes):
            try:
                owner, attribute = _resolve(route)
                original = getattr(owner, attribute)
            except (ImportError, AttributeError):
                continue
            if value is original or inner is original:
                identical = k
                break
        try:
            data = self.wire.encode(value)
        except Exception:  # noqa: BLE001 - not data: the grader gets a handle on it
            data = None
        return {"ok": True, "callable": callable(value), "is_class": isinstance(value, type),
                "module": str(getattr(value, "__module__", "") or ""),
                "name": str(getattr(value, "__name__", type(value).__name__)),
                "type": type(value).__qualname__, "is_route": identical, "data": data}

    def call(self, request: dict) -> dict:
        from utils import checks
        from utils.exercises import common

        fn = self.target(request["target"])
        args = self.wire.decode(request["args"], allow_pickle=True)
        name, hint, where = request["name"], request.get("hint"), request.get("where", "")
        forbidden = []
        for route in request.get("forbidden", []):
            try:
                forbidden.append(_resolve(route))
            except (ImportError, AttributeError):
                continue
        also = []
        for route, why in request.get("also", []):
            try:
                also.append((*_resolve(route), why))
            except (ImportError, AttributeError):
                continue
        most = request.get("exponentials")
        try:
            with contextlib.ExitStack() as stack:
                for owner, attribute, why in also:
                    stack.enter_context(checks.also_forbidden([(owner, attribute)], why))
                for file, why in request.get("files", []):
                    stack.enter_context(checks.also_forbidden([], why, files=[file]))
                if request.get("steps"):
                    count, got = common.python_steps(fn, args, name, where)
                    return {"ok": True, "steps": count, "result": self.wire.encode(got, strict=False)}
                got = checks.run_refusing(fn, args, name, hint, forbidden, where,
                                          None if most is None else (lambda *_: most))
        except checks.CheckFailed as err:
            return {"ok": False, "failed": {"kind": type(err).__name__, "message": str(err)[:4000]}}
        return {"ok": True, "result": self.wire.encode(got, strict=False)}

    def handle(self, request: dict) -> dict:
        command = request.get("cmd")
        if command == "fresh":
            return self.fresh()
        if command == "course":
            return self.course(request["statements"])
        if command == "exec":
            return self.run_code(request["code"], request.get("label", "<cell>"))
        if command == "describe":
            return self.describe(request["target"], request.get("routes", []))
        if command == "call":
            return self.call(request)
        return {"ok": False, "error": {"kind": "ProtocolError", "kinds": [],
                                       "message": f"unknown command {command!r}"}}


def main() -> int:
    _limits(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    inbox, outbox = _private_channel()
    wire = _load_wire()
    _block_network()
    sys.path[:] = [p for p in sys.path if p and Path(p).resolve() != Path(__file__).parent.resolve()]
    import torch  # noqa: F401 - loaded before any student code, as the notebooks load it

    import utils.checks  # noqa: F401
    import utils.exercises.common  # noqa: F401

    runner = Runner(wire)
    outbox.write(json.dumps({"ready": True}) + "\n")
    outbox.flush()
    for line in inbox:
        try:
            request = json.loads(line)
        except json.JSONDecodeError:
            break
        if request.get("cmd") == "bye":
            break
        try:
            reply = runner.handle(request)
        except BaseException as err:  # noqa: BLE001 - reported, the grader decides
            reply = {"ok": False, "error": _error(err), "trace": traceback.format_exc()[-2000:]}
        outbox.write(json.dumps(reply) + "\n")
        outbox.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
