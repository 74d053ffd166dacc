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
prints one line, a wrong answer prints what is wrong and the hint. With ``$COURSE_CHECKS=strict`` (or
inside ``strict_checks()``, or nbgrader's run) a failed check raises ``CheckFailed`` instead. Either way
this is feedback: a grade is computed outside the student's kernel (``classroom.autograder``), which
calls the same checks with the student's function running in a sandbox.

A check also recognises the typical mistakes: ``mistakes={"the scores not scaled by sqrt(d_k)":
fn, ...}`` maps a description to a function that makes that mistake; an answer that matches one of them
(and not the reference) gets "this looks like <description>", not only "wrong". ``MISTAKES`` holds the
course's wording for the mistakes that recur from chapter to chapter.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import torch

from utils.check_errors import (  # noqa: F401 - the course's names for them are utils.checks'
    CheckFailed,
    NotDoneYet,
    _describe,
    _fail,
    report,
    strict,
    strict_checks,
)
from utils.language import say
from utils.refusals import (  # noqa: F401 - the course's names for them are utils.checks'
    _ALSO_FORBIDDEN,
    _FORBIDDEN_FILES,
    _files_refused,
    _forbid,
    also_forbidden,
    call_answer,
    run_refusing,
)

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
    where it gives an answer at all (it may raise, or give NaN, elsewhere), and the mistake differs from
    the reference where the answer failed: an answer that agrees with a mistake on one input by chance
    (a function returning 0 where the mistake also picks 0) is told what differs instead."""
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
                        continue  # the answer fails there in another way: no evidence either way
                    if _has_nan(theirs):
                        continue
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


def _has_nan(value: Any) -> bool:
    """Whether an answer holds a NaN anywhere (it gave no usable value there)."""
    if isinstance(value, torch.Tensor):
        return bool(value.is_floating_point() and torch.isnan(value.detach()).any())
    if isinstance(value, float):
        return value != value
    if isinstance(value, (tuple, list)):
        return any(_has_nan(v) for v in value)
    return False


def _made_by(make_mistake: Callable[..., Any], args: tuple) -> Any:
    """A mistake's output on ``args``, or an object equal to nothing when it cannot run there."""
    try:
        return make_mistake(*args)
    except Exception:  # noqa: BLE001 - a mistake that cannot run on this input
        return object()


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
