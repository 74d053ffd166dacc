"""Auto-checks for the exercises: each says what was expected, what was given, and gives a hint.

Every exercise in the course asks for a *function*; its check calls that function on a few inputs and
compares with a reference. In the student edition the function body is a stub that raises
``NotImplementedError``; the check turns that into a friendly "not done yet" message with the hint.

    check_function(my_softmax, reference=lambda x: x.softmax(-1), inputs=[(x,)], name="Exercise 0.1",
                   hint="subtract the row maximum before exponentiating")

The chapters check their own trained results the same way: ``check_result("test exact match", 0.995,
at_least=0.98)`` prints the value with its margin, and fails with a message that says what the chapter
promised and what may have moved it. With ``$COURSE_RESULTS`` set to a file, every result is also
appended there as one JSON line and a miss is reported instead of raised: that is how
``scripts/robustness.py`` collects every chapter's results over many seeds and thread counts.

Two modes. While a student works through a notebook (the default), a check that fails *prints* its
verdict and returns False, so Run All still reaches the end of the chapter: an unfinished exercise
prints one line, a wrong answer prints what is wrong and the hint. Under grading (nbgrader sets
``$NBGRADER_EXECUTION``), with ``$COURSE_CHECKS=strict``, or inside ``strict_checks()``, a failed check
raises ``CheckFailed`` instead, so the exercise counts as failed.

A check also recognises the typical mistakes: ``mistakes={"the scores not scaled by sqrt(d_k)":
fn, ...}`` maps a description to a function that makes that mistake; an answer that matches one of them
(and not the reference) gets "this looks like <description>", not only "wrong". ``MISTAKES`` holds the
course's wording for the mistakes that recur from chapter to chapter.
"""

from __future__ import annotations

import copy
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import torch

from utils.language import HINT, say

# The course's one wording for the mistakes that recur across chapters; a check's ``mistakes=`` uses
# these keys' values as its descriptions, so every chapter names a mistake the same way.
MISTAKES = {
    "unscaled": "scores not scaled by sqrt(d_k)",
    "softmax_axis": "a softmax over the wrong axis (each query's weights must sum to 1 over the keys)",
    "mask_transposed": "a transposed mask (rows are queries, columns are keys)",
    "mask_inverted": "an inverted mask (True must mean 'may attend')",
    "causal_off_by_one": "a causal mask off by one (token i may see itself, but not token i + 1)",
    "mask_after_softmax": "a mask applied after the softmax (the kept weights no longer sum to 1)",
    "unbiased_variance": "the unbiased variance in layer norm (divide by d_model, not d_model - 1)",
    "missing_residual": "a missing residual connection (the sublayer's input is not added back)",
    "heads_order": "heads split in the wrong order (view as (B, T, H, D), then move H before T)",
}


class CheckFailed(AssertionError):
    """Raised by a check when an exercise answer is wrong or missing; the message holds the hint.

    In Jupyter (and so in nbgrader's feedback) it shows as its message alone, the diagnosis first:
    IPython renders an exception with ``_render_traceback_`` by those lines instead of a traceback
    through the course's package.
    """

    def _render_traceback_(self) -> list[str]:
        lines = str(self).splitlines() or [type(self).__name__]
        return [f"{type(self).__name__}: {lines[0]}", *lines[1:]]


class NotDoneYet(CheckFailed):
    """A ``CheckFailed`` for an exercise whose function is still the stub that raises."""


_STRICT_DEPTH = 0


def strict() -> bool:
    """True when a failed check must raise: grading, ``$COURSE_CHECKS=strict``, ``strict_checks()``."""
    return (_STRICT_DEPTH > 0 or bool(os.environ.get("NBGRADER_EXECUTION"))
            or os.environ.get("COURSE_CHECKS", "").strip().lower() == "strict")


@contextmanager
def strict_checks() -> Iterator[None]:
    """Within this block every failed check raises ``CheckFailed`` (tests and graders use it)."""
    global _STRICT_DEPTH
    _STRICT_DEPTH += 1
    try:
        yield
    finally:
        _STRICT_DEPTH -= 1


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
    trusted = {*files, __file__}

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


def report(err: CheckFailed) -> bool:
    """Raise ``err`` in strict mode; otherwise print it for the student and return False."""
    if strict():
        raise err.with_traceback(None)
    if isinstance(err, NotDoneYet):
        print(str(err).splitlines()[0])
    else:
        print(say("NOT YET  {err}", err=err))
    return False


def _fail(name: str, problem: str, hint: str | None, kind: type[CheckFailed] = CheckFailed) -> None:
    message = say("{name}: {problem}", name=name, problem=problem)
    if hint:
        message += say(HINT, hint=hint)
    raise kind(message)


def _describe(x: Any) -> str:
    if isinstance(x, torch.Tensor):
        return say("tensor of shape {shape} and dtype {dtype}", shape=tuple(x.shape), dtype=x.dtype)
    return f"{type(x).__name__} {x!r}"[:200]


def _compare(got: Any, want: Any, name: str, hint: str | None, atol: float, rtol: float) -> None:
    """Compare two answers of the same structure (tensors, numbers, sequences, anything with ==)."""
    if isinstance(want, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            _fail(name, say("expected a {want}, got a {got}", want=_describe(want), got=_describe(got)),
                  hint)
        if got.shape != want.shape:
            _fail(name, say("expected shape {want}, got shape {got}", want=tuple(want.shape),
                            got=tuple(got.shape)), hint)
        if want.dtype == torch.bool or not want.is_floating_point():
            if want.dtype != torch.bool and not want.is_complex() and got.dtype != want.dtype:
                _fail(name, say("expected a tensor of dtype {want}, got {got}", want=want.dtype,
                                got=got.dtype), hint)
            if not torch.equal(got.to(want.dtype), want):
                wrong = (got.to(want.dtype) != want).sum().item()
                _fail(name, say("{wrong} of {total} entries differ from the expected values",
                                wrong=wrong, total=want.numel()), hint)
            return
        got_f, want_f = got.detach().double(), want.detach().double()
        if torch.isnan(got_f).any() and not torch.isnan(want_f).any():
            _fail(name, say("your answer contains NaN where the expected one has numbers"), hint)
        if not torch.allclose(got_f, want_f, atol=atol, rtol=rtol, equal_nan=True):
            diff = (got_f - want_f).abs().nan_to_num(0.0).max().item()
            _fail(name, say("values differ from the expected ones (largest difference {diff})",
                            diff=f"{diff:.3g}"), hint)
        return
    if isinstance(want, float) or isinstance(got, float):
        if not isinstance(got, (int, float)):
            _fail(name, say("expected a number close to {want}, got a {got}", want=f"{want:.6g}",
                            got=_describe(got)), hint)
        if abs(float(got) - float(want)) > atol + rtol * abs(float(want)):
            _fail(name, say("expected about {want}, got {got}", want=f"{float(want):.6g}",
                            got=f"{float(got):.6g}"), hint)
        return
    # a sequence holding a tensor or a float is compared item by item, each within the tolerances
    if isinstance(want, (tuple, list)) and any(isinstance(w, (torch.Tensor, float)) for w in want):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            _fail(name, say("expected a sequence of {count} items, got a {got}", count=len(want),
                            got=_describe(got)), hint)
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _compare(g, w, f"{name} (item {i})", hint, atol, rtol)
        return
    if type(want) is int and type(got) is not int:  # a 0-dim tensor or a NumPy integer is not an int
        _fail(name, say("expected a Python int, got a {got} (int(...) converts it)", got=_describe(got)),
              hint)
    if got != want:
        _fail(name, say("expected {want}, got {got}", want=repr(want), got=repr(got)), hint)


def check_value(
    got: Any, expected: Any, *, name: str, hint: str | None = None,
    atol: float = 1e-5, rtol: float = 1e-4,
) -> None:
    """Check one answer against the expected value and print the verdict; return None, so that a cell
    ending with the check shows nothing else (nbgrader would try to read a returned value as a score).

    A wrong answer raises ``CheckFailed`` under grading, and is printed otherwise.
    """
    try:
        _compare(got, expected, name, hint, atol, rtol)
    except CheckFailed as err:
        report(err)
        return None
    print(say("{name}: correct.", name=name))
    return None


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


def _same(a: Any, b: Any, atol: float, rtol: float) -> bool:
    """True when two answers agree within the tolerances (no message, no exception)."""
    try:
        _compare(a, b, "", None, atol, rtol)
    except CheckFailed:
        return False
    except Exception:  # noqa: BLE001 - answers of unrelated types simply differ
        return False
    return True


def diagnose(got: Any, want: Any, args: Sequence[Any], mistakes: Mapping[str, Callable[..., Any]],
             atol: float = 1e-5, rtol: float = 1e-4) -> str | None:
    """The description of the first mistake whose output on ``args`` matches ``got`` but not ``want``."""
    for description, make_mistake in mistakes.items():
        try:
            mistaken = make_mistake(*args)
        except Exception:  # noqa: BLE001 - a mistake that cannot run on this input does not match
            continue
        if _same(got, mistaken, atol, rtol) and not _same(want, mistaken, atol, rtol):
            return description
    return None


def check_function(
    fn: Callable[..., Any],
    reference: Callable[..., Any],
    inputs: Iterable[Sequence[Any]],
    *,
    name: str,
    hint: str | None = None,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    forbidden: Sequence[tuple[Any, str]] = (),
    mistakes: Mapping[str, Callable[..., Any]] | None = None,
) -> None:
    """Call ``fn(*args)`` and ``reference(*args)`` for each ``args`` in ``inputs`` and compare them.

    Prints the verdict and returns None (a cell ending with the check shows nothing else). A stub
    that raises ``NotImplementedError`` is "not done yet"; any other exception is reported with the
    input it happened on. ``forbidden`` lists ``(owner, attribute)`` pairs, e.g. ``[(torch,
    "softmax")]``, that the exercise asks not to use: while ``fn`` runs they raise a ``CheckFailed``
    saying so (the reference may still use them). ``mistakes`` maps a description to a function making
    that mistake: a wrong answer equal to its output is named. A failure raises ``CheckFailed`` under
    grading and is printed otherwise (see the module's docstring).
    """
    try:
        count = verify_function(fn, reference, inputs, name=name, hint=hint, atol=atol, rtol=rtol,
                                forbidden=forbidden, mistakes=mistakes)
    except CheckFailed as err:
        report(err)
        return None
    print(say("{name}: correct on all {count} test inputs.", name=name, count=count))
    return None


def verify_function(
    fn: Callable[..., Any],
    reference: Callable[..., Any],
    inputs: Iterable[Sequence[Any]],
    *,
    name: str,
    hint: str | None = None,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    forbidden: Sequence[tuple[Any, str]] = (),
    mistakes: Mapping[str, Callable[..., Any] | tuple[Callable[..., Any], str]] | None = None,
    exponentials: Callable[..., int] | None = None,
) -> int:
    """``check_function``'s comparisons, raising ``CheckFailed`` at the first miss (in any mode);
    returns the number of inputs checked. A mistake may come with its own hint, ``(function, hint)``:
    a diagnosed mistake shows that hint, not the exercise's general one, which may point elsewhere."""
    if not callable(fn):
        _fail(name, say("expected your function here, got a {got}", got=_describe(fn)), hint)
    cases = list(inputs)
    if not cases:
        raise ValueError(f"{name}: check_function needs at least one input case")
    for owner, attribute in forbidden:
        if not hasattr(owner, attribute):
            raise ValueError(f"{name}: cannot forbid {attribute!r}: {owner!r:.60} has no such attribute")
    for description, make_mistake in (mistakes or {}).items():
        if not callable(make_mistake[0] if isinstance(make_mistake, tuple) else make_mistake):
            raise TypeError(f"{name}: the mistake {description!r} needs a function, got "
                            f"{_describe(make_mistake)}")
    _run_cases(fn, reference, cases, name, hint, atol, rtol, forbidden, mistakes or {}, exponentials)
    return len(cases)


def _run_cases(fn: Callable[..., Any], reference: Callable[..., Any], cases: list[Sequence[Any]],
               name: str, hint: str | None, atol: float, rtol: float,
               forbidden: Sequence[tuple[Any, str]], mistakes: Mapping[str, Any],
               exponentials: Callable[..., int] | None = None) -> None:
    """``check_function``'s comparisons; raises ``CheckFailed`` (or ``NotDoneYet``) at the first miss.

    A wrong answer is named after a mistake only when it equals that mistake's output on every input
    (and the mistake differs from the reference where the answer failed): an answer that agrees with a
    mistake on one input by chance (a function returning 0 where the mistake also picks 0) is told
    what differs instead."""
    answers: dict[int, Any] = {}

    def answer_on(i: int) -> Any:
        if i not in answers:
            args = tuple(cases[i])
            # the learner's function gets a copy: an answer that changes its inputs in place cannot
            # change what the reference is run on
            answers[i] = call_answer(fn, copy.deepcopy(args), name, hint, forbidden,
                                     where=say(" (on input {i}: {args})", i=i,
                                               args=", ".join(_describe(a) for a in args)),
                                     exponentials=exponentials)
        return answers[i]

    for i, args in enumerate(cases):
        args = tuple(args)
        got = answer_on(i)
        want = reference(*args)
        try:
            _compare(got, want, f"{name} (input {i})", hint, atol, rtol)
        except CheckFailed:
            functions = {d: m[0] if isinstance(m, tuple) else m for d, m in mistakes.items()}
            candidate = diagnose(got, want, args, functions, atol, rtol)
            mistake = None
            if candidate is not None:
                everywhere = True
                for j, other in enumerate(cases):
                    try:
                        theirs = answer_on(j)
                    except CheckFailed:
                        everywhere = False
                        break
                    if not _same(theirs, _made_by(functions[candidate], tuple(other)), atol, rtol):
                        everywhere = False
                        break
                mistake = candidate if everywhere else None
            if mistake is None:
                raise
            own = mistakes[mistake]
            _fail(name, say("this looks like {mistake} (on input {i} your answer equals what that "
                            "mistake gives, and on every other input too)", mistake=mistake, i=i),
                  own[1] if isinstance(own, tuple) else None)


def _made_by(make_mistake: Callable[..., Any], args: tuple) -> Any:
    """A mistake's output on ``args``, or an object equal to nothing when it cannot run there."""
    try:
        return make_mistake(*args)
    except Exception:  # noqa: BLE001 - a mistake that cannot run on this input
        return object()


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
    watched = {code: route_label(owner, attribute) for owner, attribute in pairs
               for code in _code_of(getattr(owner, attribute, None))}
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


def _form_of(value: Any, form: type | tuple) -> bool:
    """Whether ``value`` has the ``form`` of a prediction: a type, or a tuple of forms."""
    if isinstance(form, tuple):
        return isinstance(value, (tuple, list)) and len(value) == len(form) and all(
            _form_of(v, f) for v, f in zip(value, form, strict=True))
    if form is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if form is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, form)


def _form_name(form: type | tuple) -> str:
    if isinstance(form, tuple):
        return "(" + ", ".join(_form_name(f) for f in form) + ")"
    return form.__name__


def verify_prediction(
    fn: Callable[[], Any], *, name: str, form: type | tuple, measure: Callable[[], Any],
    labels: Sequence[str], misconceptions: Mapping[int, str | Callable[[Any], str | None]] | None = None,
    atol: float = 0.01, hint: str | None = None,
) -> None:
    """A prediction exercise: ``fn()`` returns the learner's predictions, written before running.

    It passes when the predictions are written in the right ``form`` (e.g. ``(bool, bool, float)``),
    right or wrong: predictions earn credit for being made, not for being right. Only then does
    ``measure()`` run the experiment, and each prediction is shown next to what was measured, a wrong
    one with the misconception it reveals (``misconceptions[i]``, item ``i`` counted from 0: a text, or
    a function of the prediction that returns one).
    """
    predicted = call_answer(fn, (), name, hint)
    if not _form_of(predicted, form):
        _fail(name, say("write your predictions as {form}; got {got}", form=_form_name(form),
                        got=_describe(predicted)), hint)
    measured = measure()
    items = list(predicted) if isinstance(form, tuple) else [predicted]
    truths = list(measured) if isinstance(form, tuple) else [measured]
    lines = [say("{name}: your predictions are recorded (full marks for writing them). The experiment:",
                 name=name)]
    for i, (label, said, truth) in enumerate(zip(labels, items, truths, strict=True)):
        right = _same(said, truth, atol, 0.0) if isinstance(truth, float) else said == truth
        shown = f"{truth:.3g}" if isinstance(truth, float) else repr(truth)
        belief = (misconceptions or {}).get(i)
        if callable(belief):  # a misconception that depends on what was predicted
            belief = belief(said)
        verdict = say("as you predicted") if right else (
            say("not what you predicted ({said}): this is {belief}", said=repr(said), belief=belief)
            if belief else say("not what you predicted ({said})", said=repr(said)))
        lines.append(f"  {i + 1}. {label}: {shown}, {verdict}")
    print("\n".join(lines))


def verify_value(got: Any, expected: Any, *, name: str, hint: str | None = None,
                 atol: float = 1e-5, rtol: float = 1e-4) -> None:
    """``check_value``'s comparison, raising ``CheckFailed`` on a miss in any mode."""
    _compare(got, expected, name, hint, atol, rtol)


# The chapters' own results live in utils.results; their names stay importable from here.
from utils.results import Measured, ResultOutOfRange, check_result  # noqa: E402,F401
