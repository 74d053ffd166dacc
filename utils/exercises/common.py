"""What several chapters' checks share: refusing a Python loop by what it does, and asking for an int.

``refuse_python_loops`` refuses a loop by what it does, not by how it is spelled: the learner's own
lines run more often on a larger input, whether the loop is a ``for``, a ``while``, a comprehension,
``map`` with a lambda or a recursion.
"""

from __future__ import annotations

import os
import site
import sys
import sysconfig
from collections.abc import Callable, Sequence
from typing import Any

import torch

from utils import checks
from utils.checks import CheckFailed
from utils.language import HINT, say


def _library_prefixes() -> tuple[str, ...]:
    """Folders whose code is not the learner's: Python's own, the installed packages, ``utils``."""
    folders = [*sysconfig.get_paths().values(), sys.prefix, sys.base_prefix, sys.exec_prefix,
               os.path.dirname(checks.__file__)]
    try:
        folders += [*site.getsitepackages(), site.getusersitepackages()]
    except AttributeError:  # an old virtualenv's site module lacks them
        pass
    found = {os.path.join(p, "") for folder in folders if folder
             for p in (folder, os.path.realpath(folder))}
    return tuple(sorted(found)) + ("<frozen",)


_LIBRARIES = _library_prefixes()


def python_steps(answer: Callable[..., Any], args: Sequence[Any], name: str,
                  where: str) -> tuple[int, Any]:
    """(how many calls and lines of the learner's own code ran, the result) for ``answer(*args)``.

    A line counts again each time a loop jumps back to it, and each call of a learner's function
    (a lambda given to ``map``, a recursion) counts once: a loop makes the count grow with the input.
    """
    remote = getattr(type(answer), "course_remote_steps", None)
    if remote is not None:  # the answer runs in a grader's sandbox (classroom.isolated), counted there
        return remote(answer, args, name, where)
    own = getattr(getattr(answer, "__code__", None), "co_filename", None)
    count = 0

    def in_frame(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
        return in_frame

    def on_call(frame, event, arg):
        nonlocal count
        filename = frame.f_code.co_filename
        if filename != own and filename.startswith(_LIBRARIES):
            return None  # library code: not traced
        count += 1
        return in_frame

    before = sys.gettrace()
    sys.settrace(on_call)
    try:
        result = answer(*args)
    except Exception as err:  # noqa: BLE001 - a learner's code may raise anything
        raise CheckFailed(say("{name}: your function raised {kind}: {err} (on {where})", name=name,
                              kind=type(err).__name__, err=err, where=where)) from None
    finally:
        sys.settrace(before)
    return count, result


def refuse_python_loops(answer: Callable[..., Any], small: Sequence[Any], large: Sequence[Any], *,
                         name: str, sizes: tuple[str, str], threshold: int, hint: str) -> None:
    """Refuse an answer whose own Python code runs ``threshold`` or more steps more on ``large`` than
    on ``small`` (inputs that differ only in the sizes a loop would run over): a Python loop."""
    few, _ = python_steps(answer, small, name, sizes[0])
    many, _ = python_steps(answer, large, name, sizes[1])
    if many - few >= threshold:
        raise CheckFailed(say("{name}: your values are right, but your own Python code runs {few} steps on "
                              "{small} and {many} on {large}: that is a Python loop (a for or while "
                              "loop, a comprehension, map with a lambda, or a recursion), which this "
                              "exercise asks you to do without", name=name, few=few, small=sizes[0],
                              many=many, large=sizes[1]) + say(HINT, hint=hint))


def refuse_non_int(answer: Callable[..., Any], args: Sequence[Any], name: str) -> None:
    """Refuse an answer whose value is right but is not a Python ``int`` (a tensor, a float)."""
    _, result = python_steps(answer, args, name, say("the input {args}", args=repr(args)))
    if isinstance(result, bool) or not isinstance(result, int):
        raise CheckFailed(say("{name}: the count is right, but it is a {kind}; the exercise asks for a "
                              "Python int", name=name, kind=type(result).__name__)
                          + say(HINT, hint=say("int(...) turns a one-element tensor into a Python int")))


def refuse_as_is(answer: Any, routes: Sequence[tuple[Any, str]], name: str,
                 why: str | None = None) -> None:
    """Refuse an answer that *is* a refused function, or a ``functools.partial`` or wrapper of one
    (``subsequent_mask = causal_mask``): held as it is, it would bypass the refusal, which replaces the
    function where it is looked up."""
    remote = getattr(type(answer), "course_remote_is", None)
    if remote is not None:  # the answer lives in a grader's sandbox (classroom.isolated)
        from utils.routes import route_label

        found = remote(answer, [route_label(owner, attribute) for owner, attribute in routes])
        routes = [routes[found]] if found is not None else []
        answer = inner = None
        if routes:
            owner, attribute = routes[0]
            answer = getattr(owner, attribute)
    else:
        inner = getattr(answer, "func", None) or getattr(answer, "__wrapped__", None)
    for owner, attribute in routes:
        original = getattr(owner, attribute)
        if answer is original or inner is original:
            label = f"{getattr(owner, '__name__', type(owner).__name__)}.{attribute}"
            why = why or say("the exercise asks you to write it without that function")
            raise CheckFailed(say("{name}: your answer is {label} itself; {why}", name=name, label=label,
                                  why=why))


def built_with_seed(seed: int, build: Callable[[], Any]) -> Any:
    """``build()`` with torch's random state seeded, then restored: a check's model has the same
    weights on every run, and the learner's random stream goes on as it was."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return build()
