"""How a check calls the learner's function: with the routes the exercise forbids refused, by name,
by the operators they run and by their code however reached (``utils.routes``), and with the
exercise's own reference code refused (``also_forbidden``). ``utils.checks`` re-exports these names.

An answer that lives in a grader's sandbox (``classroom.isolated``) is called there, with the same
refusals: ``call_answer`` hands it the routes, and the sandbox runs ``run_refusing`` itself.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from utils.check_errors import CheckFailed, NotDoneYet, _describe, _fail
from utils.language import say

# A check may wrap the learner's function in one of its own (utils.checks' prediction form check)
_CHECKS_FILE = __file__.replace("refusals.py", "checks.py")
_ALSO_FORBIDDEN: list[tuple[Any, str, str]] = []  # (owner, attribute, why), see also_forbidden
_FORBIDDEN_FILES: list[tuple[str, str]] = []  # (source file, why): no function of it may run


@contextmanager
def also_forbidden(pairs: Sequence[tuple[Any, str]], reason: str,
                   files: Sequence[str] = ()) -> Iterator[None]:
    """Within this block, every check also refuses ``owner.attribute`` for each pair while the
    learner's code runs, and any function defined in one of ``files``, however the learner reached it
    (a name, a copy captured earlier, a closure): ``utils.exercises`` refuses a chapter's own reference
    code this way."""
    added = [(owner, attribute, reason) for owner, attribute in pairs]
    _ALSO_FORBIDDEN.extend(added)
    _FORBIDDEN_FILES.extend((str(f), reason) for f in files)
    try:
        yield
    finally:
        del _ALSO_FORBIDDEN[len(_ALSO_FORBIDDEN) - len(added):]
        del _FORBIDDEN_FILES[len(_FORBIDDEN_FILES) - len(files):]


@contextmanager
def _files_refused(name: str) -> Iterator[None]:
    """While the learner's code runs, a call of any function defined in a forbidden file raises
    ``CheckFailed`` (a profile hook sees every Python call, whatever name or object it came through)."""
    if not _FORBIDDEN_FILES:
        yield
        return
    files = dict(_FORBIDDEN_FILES)
    # A check may wrap the learner's function in one of its own (a prediction's form check): code of a
    # forbidden file may run when called from this module or from such a file, never from the
    # learner's code or a library it called.
    trusted = {*files, __file__, _CHECKS_FILE}

    previous = sys.getprofile()

    def hook(frame: Any, event: str, arg: Any) -> None:
        if previous is not None:  # a record of the answer's operations (utils.routes) goes on
            previous(frame, event, arg)
        caller = frame.f_back.f_code.co_filename if frame.f_back is not None else ""
        if event == "call" and frame.f_code.co_filename in files and caller not in trusted:
            raise CheckFailed(say("{name}: your code runs {function} from {file}, which a check refuses "
                                  "({why})", name=name, function=frame.f_code.co_name,
                                  file=frame.f_code.co_filename.rsplit('/', 1)[-1],
                                  why=files[frame.f_code.co_filename]))

    sys.setprofile(hook)
    try:
        yield
    finally:
        sys.setprofile(previous)


@contextmanager
def _forbid(forbidden: Sequence[tuple[Any, str]], name: str,
            namespace: dict[str, Any] | None = None) -> Iterator[None]:
    """Temporarily replace each ``owner.attribute`` by a function that fails with a clear message.

    Names bound to the same object in ``namespace`` (the globals of the student's function, where a
    ``from module import name`` lands) are replaced too.
    """
    saved: list[tuple[Any, str, Any]] = []
    saved_names: list[tuple[str, Any]] = []
    pairs = [(owner, attribute, None) for owner, attribute in forbidden] + list(_ALSO_FORBIDDEN)
    for owner, attribute, why in pairs:
        label = f"{getattr(owner, '__name__', type(owner).__name__)}.{attribute}"
        message = (say("{name}: your code calls {label}, which a check refuses ({why})", name=name,
                       label=label, why=why) if why else
                   say("{name}: this exercise asks you to write it without {label}; build it from simpler "
                       "operations", name=name, label=label))

        def refuse(*_args: Any, _message: str = message, **_kwargs: Any) -> Any:
            raise CheckFailed(_message)

        original = getattr(owner, attribute)
        saved.append((owner, attribute, original))
        setattr(owner, attribute, refuse)
        for key, value in list((namespace or {}).items()):
            if value is original:
                saved_names.append((key, value))
                namespace[key] = refuse  # type: ignore[index]
    try:
        yield
    finally:
        for owner, attribute, original in reversed(saved):
            setattr(owner, attribute, original)
        for key, value in saved_names:
            namespace[key] = value  # type: ignore[index]


def call_answer(fn: Callable[..., Any], args: Sequence[Any], name: str, hint: str | None,
                forbidden: Sequence[tuple[Any, str]] = (), where: str = "",
                exponentials: Callable[..., int] | None = None) -> Any:
    """Call the learner's ``fn(*args)`` with the forbidden routes refused (and, within
    ``utils.exercises.check``, the exercise's own reference code); a stub is "not done yet".

    A route is refused by its name (the function is replaced while ``fn`` runs), by the operators it
    runs and by its code however it was reached (``utils.routes``); ``exponentials(*args)``, when
    given, is the most numbers the answer may put through an exponential (a numerical derivative
    exponentiates the input again for each direction it shifts). An answer that runs in a grader's
    sandbox (``classroom.isolated``) is called there, with the same refusals."""
    if not callable(fn):
        _fail(name, say("expected your function here, got a {got}", got=_describe(fn)), hint)
    remote = getattr(type(fn), "course_remote_call", None)
    if remote is not None:
        return remote(fn, args, name=name, hint=hint, forbidden=forbidden, where=where,
                      exponentials=exponentials)
    return run_refusing(fn, args, name, hint, forbidden, where, exponentials)


def _code_of(value: Any) -> list[Any]:
    """The Python code objects a refused route runs: a function's, a class's own methods'."""
    value = getattr(value, "__wrapped__", value)
    if isinstance(value, type):
        return [c for v in vars(value).values() for c in _code_of(v) if isinstance(v, Callable)]
    code = getattr(getattr(value, "__func__", value), "__code__", None)
    return [code] if code is not None else []


def run_refusing(fn: Callable[..., Any], args: Sequence[Any], name: str, hint: str | None,
                 forbidden: Sequence[tuple[Any, str]] = (), where: str = "",
                 exponentials: Callable[..., int] | None = None) -> Any:
    """``call_answer`` in this process."""
    from utils.routes import OPERATORS, recording, route_label

    pairs = [*forbidden, *((owner, attribute) for owner, attribute, _ in _ALSO_FORBIDDEN)]
    labels = [route_label(owner, attribute) for owner, attribute in forbidden]
    # code in a refused file (the exercise's own module) is refused by _files_refused already
    refused_files = {file for file, _ in _FORBIDDEN_FILES}
    watched = {code: route_label(owner, attribute) for owner, attribute in pairs
               for code in _code_of(getattr(owner, attribute, None))
               if code.co_filename not in refused_files}
    record_them = bool(watched) or exponentials is not None or any(lab in OPERATORS for lab in labels)
    stub, record = False, None
    try:
        with _forbid(forbidden, name, getattr(fn, "__globals__", None)), _files_refused(name):
            if record_them:
                with recording(watched) as record:
                    got = fn(*args)
            else:
                got = fn(*args)
    except NotImplementedError:
        stub = True
    except CheckFailed:
        raise
    except Exception as err:  # noqa: BLE001 - a student's code may raise anything
        _fail(name, say("your function raised {kind}: {err}{where}", kind=type(err).__name__, err=err,
                        where=where), hint)
    if stub:  # reported here, outside the handler, so no stub traceback is chained to it
        _fail(name, say("not implemented yet: write your code in place of the `raise "
                        "NotImplementedError` line in the exercise cell, run that cell, then this one"),
              hint, NotDoneYet)
    if record is not None:
        _refuse_recorded(record, labels, name, exponentials, args)
    return got


def _refuse_recorded(record: Any, labels: Sequence[str], name: str,
                     exponentials: Callable[..., int] | None, args: Sequence[Any]) -> None:
    """A ``CheckFailed`` when the record shows a refused route, or was switched off."""
    from utils.routes import AUTOGRAD, refusal

    if not record.complete:
        raise CheckFailed(say("{name}: your code switched off the check's record of the operations it "
                              "runs; a check cannot accept an answer it cannot see", name=name))
    if record.called:
        raise CheckFailed(say("{name}: your code runs {label}, which this exercise asks you to do "
                              "without (it was reached through another name or a copy, and still "
                              "counts)", name=name, label=record.called[0]))
    found = refusal(record, labels)
    if found is not None and found[0] == AUTOGRAD:
        raise CheckFailed(say("{name}: your code differentiates automatically (PyTorch entered {how}), "
                              "which this exercise asks you to do without, in every mode of autograd: "
                              "derive it by hand", name=name, how=found[1]))
    if found is not None:
        raise CheckFailed(say("{name}: your code runs {label} (PyTorch ran the operator {how}), which "
                              "this exercise asks you to do without, whatever name reaches it; build it "
                              "from simpler operations", name=name, label=found[0], how=found[1]))
    if exponentials is not None and record.exponentiated > exponentials(*args):
        raise CheckFailed(say("{name}: your code puts {count} numbers through an exponential (exp, "
                              "softmax) where the formula needs at most {most}: that is the function "
                              "evaluated again at shifted inputs, a numerical derivative, which this "
                              "exercise asks you to do without; compute the softmax once and build "
                              "the derivative from it", name=name, count=record.exponentiated,
                              most=exponentials(*args)))
