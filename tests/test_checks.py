"""Tests for utils/checks.py: the exercise auto-checks' verdicts and the messages a student reads."""

from __future__ import annotations

import json

import pytest
import torch

from utils.checks import (
    MISTAKES,
    CheckFailed,
    NotDoneYet,
    ResultOutOfRange,
    check_function,
    check_result,
    check_value,
    strict,
    strict_checks,
)

HINT = "subtract the row maximum before exponentiating"


@pytest.fixture(autouse=True)
def _strict(monkeypatch):
    """These tests read the raised messages: checks raise as under grading (see the lenient tests)."""
    monkeypatch.setenv("COURSE_CHECKS", "strict")
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)


def _reference(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)


def _inputs() -> list[tuple[torch.Tensor]]:
    g = torch.Generator().manual_seed(0)
    return [(torch.randn(2, 3, generator=g),), (torch.randn(4, 5, generator=g),)]


# ---------------------------------------------------------------------------------------------------
# check_value
# ---------------------------------------------------------------------------------------------------
def test_check_value_accepts_a_right_answer(capsys):
    x = torch.randn(3, 4)
    check_value(x.clone(), x, name="Exercise 0.1")
    check_value(x + 1e-7, x, name="Exercise 0.1b")  # within the tolerance
    check_value(0.5 + 1e-7, 0.5, name="Exercise 0.2")
    check_value(3, 3, name="Exercise 0.3")
    check_value(torch.tensor([True, False]), torch.tensor([True, False]), name="Exercise 0.4")
    out = capsys.readouterr().out
    assert "Exercise 0.1: correct." in out
    assert out.count("correct.") == 5


def test_check_value_compares_sequences_of_tensors_item_by_item():
    a, b = torch.ones(2), torch.zeros(3)
    check_value((a, b), [a.clone(), b.clone()], name="pair")
    with pytest.raises(CheckFailed, match=r"pair \(item 1\): expected shape \(3,\), got shape \(2,\)"):
        check_value((a, b[:2]), (a, b), name="pair")
    with pytest.raises(CheckFailed, match=r"pair: expected a sequence of 2 items, got a tensor"):
        check_value(a, (a, b), name="pair")


def test_check_value_reports_a_wrong_shape_with_the_hint():
    with pytest.raises(CheckFailed,
                       match=r"Exercise 1.1: expected shape \(2, 3\), got shape \(3, 2\)") as err:
        check_value(torch.zeros(3, 2), torch.zeros(2, 3), name="Exercise 1.1", hint=HINT)
    assert str(err.value).endswith(f"\nHint: {HINT}")
    assert isinstance(err.value, AssertionError)  # a failed check reads like a failed assert


def test_check_value_reports_the_largest_difference():
    want = torch.zeros(2, 2)
    got = want.clone()
    got[1, 0] = 0.25
    with pytest.raises(CheckFailed,
                       match=r"values differ from the expected ones \(largest difference 0.25\)"):
        check_value(got, want, name="Exercise 1.2")


def test_check_value_reports_nan():
    got = torch.tensor([1.0, float("nan")])
    with pytest.raises(CheckFailed, match=r"your answer contains NaN where the expected one has numbers"):
        check_value(got, torch.tensor([1.0, 2.0]), name="Exercise 1.3", hint=HINT)
    check_value(got, got.clone(), name="NaN where NaN is expected")  # equal_nan


def test_check_value_reports_a_wrong_type_and_wrong_integers():
    with pytest.raises(CheckFailed,
                       match=r"expected a tensor of shape \(2,\) and dtype torch.float32, got a list"):
        check_value([1.0, 2.0], torch.tensor([1.0, 2.0]), name="types")
    with pytest.raises(CheckFailed, match=r"1 of 3 entries differ from the expected values"):
        check_value(torch.tensor([1, 2, 4]), torch.tensor([1, 2, 3]), name="ints")
    with pytest.raises(CheckFailed, match=r"expected about 0.5, got 0.6"):
        check_value(0.6, 0.5, name="number")
    with pytest.raises(CheckFailed, match=r"expected a number close to 0.5, got a str 'half'"):
        check_value("half", 0.5, name="number")
    with pytest.raises(CheckFailed, match=r"expected \['a', 'b'\], got \['b', 'a'\]"):
        check_value(["b", "a"], ["a", "b"], name="words")


def test_check_value_without_hint_has_no_hint_line():
    with pytest.raises(CheckFailed) as err:
        check_value(1, 2, name="plain")
    assert "Hint" not in str(err.value)


# ---------------------------------------------------------------------------------------------------
# check_function
# ---------------------------------------------------------------------------------------------------
def test_check_function_passes_a_correct_function(capsys):
    def my_softmax(x: torch.Tensor) -> torch.Tensor:
        e = (x - x.max(dim=-1, keepdim=True).values).exp()
        return e / e.sum(dim=-1, keepdim=True)

    check_function(my_softmax, _reference, _inputs(), name="Exercise 0.1", hint=HINT)
    assert capsys.readouterr().out.strip() == "Exercise 0.1: correct on all 2 test inputs."


def test_check_function_accepts_a_generator_of_inputs(capsys):
    check_function(torch.relu, torch.nn.functional.relu, ((torch.randn(3),) for _ in range(3)), name="relu")
    assert "correct on all 3 test inputs" in capsys.readouterr().out


def test_check_function_turns_the_student_stub_into_a_friendly_message():
    def my_softmax(x: torch.Tensor) -> torch.Tensor:
        # YOUR CODE HERE
        raise NotImplementedError()

    with pytest.raises(CheckFailed, match=r"Exercise 0.1: not implemented yet") as err:
        check_function(my_softmax, _reference, _inputs(), name="Exercise 0.1", hint=HINT)
    message = str(err.value)
    assert "raise NotImplementedError" in message  # tells the student which line to replace
    assert f"Hint: {HINT}" in message
    assert err.value.__context__ is None  # the student sees one short message, not the stub's traceback


def test_check_function_names_the_failing_input():
    def almost(x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=0) if x.shape[0] == 4 else torch.softmax(x, dim=-1)

    with pytest.raises(CheckFailed, match=r"Exercise 0.1 \(input 1\): values differ") as err:
        check_function(almost, _reference, _inputs(), name="Exercise 0.1", hint=HINT)
    assert f"Hint: {HINT}" in str(err.value)


def test_check_function_reports_a_wrong_shape_on_the_input():
    with pytest.raises(CheckFailed, match=r"\(input 0\): expected shape \(2, 3\), got shape \(3, 2\)"):
        check_function(lambda x: _reference(x).T, _reference, _inputs(), name="Exercise 0.1")


def test_check_function_reports_nan():
    with pytest.raises(CheckFailed, match=r"\(input 0\): your answer contains NaN"):
        check_function(lambda x: x.exp() / 0 * 0, _reference, _inputs(), name="Exercise 0.1")


def test_check_function_reports_an_exception_with_the_input_index_and_shapes():
    def broken(x: torch.Tensor) -> torch.Tensor:
        if x.shape[0] == 4:
            raise IndexError("index 7 is out of bounds")
        return _reference(x)

    with pytest.raises(CheckFailed, match=r"Exercise 0.1: your function raised IndexError: index 7 is out of "
                                          r"bounds \(on input 1: tensor of shape \(4, 5\) and dtype "
                                          r"torch.float32\)\nHint: " + HINT) as err:
        check_function(broken, _reference, _inputs(), name="Exercise 0.1", hint=HINT)
    assert isinstance(err.value.__context__, IndexError)  # the student's own traceback stays visible


def test_check_function_lets_a_nested_check_failure_through():
    def uses_a_check(x: torch.Tensor) -> torch.Tensor:
        check_value(1, 2, name="inner")
        return x

    with pytest.raises(CheckFailed, match=r"^inner: expected 2, got 1$"):
        check_function(uses_a_check, _reference, _inputs(), name="outer")


def test_check_function_rejects_bad_arguments():
    # a learner who passes a value where the exercise wants a function gets a verdict, not a crash
    with strict_checks(), pytest.raises(
            CheckFailed, match=r"Exercise 0.1: expected your function here, got a tensor of shape \(2,\)"):
        check_function(torch.zeros(2), _reference, _inputs(), name="Exercise 0.1")
    with strict_checks(), pytest.raises(
            CheckFailed, match=r"Exercise 0.1: expected your function here, got a NoneType None"):
        check_function(None, _reference, _inputs(), name="Exercise 0.1")
    with pytest.raises(ValueError, match=r"Exercise 0.1: check_function needs at least one input case"):
        check_function(_reference, _reference, [], name="Exercise 0.1")


def test_forbidden_functions_fail_while_the_answer_runs_but_not_for_the_reference():
    def cheating(x):
        return torch.softmax(x, dim=-1)

    def honest(x):
        e = (x - x.max(dim=-1, keepdim=True).values).exp()
        return e / e.sum(dim=-1, keepdim=True)

    reference = lambda x: torch.softmax(x, dim=-1)  # noqa: E731 - the reference may use it
    with pytest.raises(CheckFailed, match=r"without torch\.softmax"):
        check_function(cheating, reference, [(torch.randn(2, 3),)], name="Ex", forbidden=[(torch, "softmax")])
    assert torch.softmax is not None and torch.softmax(torch.zeros(2), dim=0)[0] == 0.5  # restored
    check_function(honest, reference, [(torch.randn(2, 3),)], name="Ex", forbidden=[(torch, "softmax")])
    with pytest.raises(ValueError, match="cannot forbid"):
        check_function(honest, reference, [(torch.randn(2),)], name="Ex", forbidden=[(torch, "nope")])


def test_forbidden_functions_are_caught_when_imported_by_name():
    namespace: dict = {}
    exec(  # a student's cell that imported the function by name before the check ran
        "from torch.nn.functional import softmax\n"
        "def sneaky(x):\n    return softmax(x, dim=-1)\n", namespace)
    reference = lambda x: torch.softmax(x, dim=-1)  # noqa: E731
    import torch.nn.functional as F

    with pytest.raises(CheckFailed, match="without"):
        check_function(namespace["sneaky"], reference, [(torch.randn(2, 3),)], name="Ex",
                       forbidden=[(F, "softmax")])
    assert namespace["softmax"] is F.softmax  # restored afterwards


# ---------------------------------------------------------------------------------------------------
# check_result: the chapters' own trained results
# ---------------------------------------------------------------------------------------------------
@pytest.fixture
def _no_results_file(monkeypatch):
    monkeypatch.delenv("COURSE_RESULTS", raising=False)


def test_check_result_prints_the_value_and_its_margin(capsys, _no_results_file):
    assert check_result("test exact match", 0.995, at_least=0.98) == 0.995
    assert capsys.readouterr().out == "OK   test exact match: 0.995 (promised at least 0.98; margin 0.015)\n"
    check_result("next-word accuracy", 0.5, at_least=0.25, at_most=0.55)
    assert "promised at least 0.25 and at most 0.55; margin 0.05" in capsys.readouterr().out


@pytest.mark.parametrize(("value", "bounds", "words"), [
    (0.979, {"at_least": 0.98}, "is 0.979, but this chapter promises at least 0.98"),
    (0.6, {"at_most": 0.4}, "is 0.6, but this chapter promises at most 0.4"),
    (float("nan"), {"at_least": 0.0}, "is nan"),
])
def test_check_result_fails_with_what_was_promised_and_what_to_do(value, bounds, words, _no_results_file):
    with pytest.raises(ResultOutOfRange, match="environment_report") as info:
        check_result("accuracy", value, **bounds)
    assert words in str(info.value)
    assert isinstance(info.value, AssertionError)  # a failed promise stops a notebook like an assert


def test_check_result_needs_a_bound(_no_results_file):
    with pytest.raises(ValueError, match="needs at_least, at_most or both"):
        check_result("accuracy", 0.9)


def test_check_result_records_every_result_and_reports_a_miss_when_asked(monkeypatch, tmp_path, capsys):
    log = tmp_path / "results.jsonl"
    monkeypatch.setenv("COURSE_RESULTS", str(log))
    check_result("good", 0.99, at_least=0.98)
    check_result("bad", 0.5, at_least=0.98)   # recorded, not raised: the benchmark wants every result
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["name"] for r in records] == ["good", "bad"]
    assert records[0] == {"name": "good", "value": 0.99, "at_least": 0.98, "at_most": None,
                          "margin": pytest.approx(0.01), "passed": True}
    assert records[1]["passed"] is False and records[1]["margin"] == pytest.approx(-0.48)
    assert "MISS bad: 0.5" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------------
# Lenient and strict modes, mistakes, predictions
# ---------------------------------------------------------------------------------------------------
def _stub(x):
    raise NotImplementedError("Exercise 0.1: write your solution here")


def test_a_student_run_prints_one_line_for_an_unfinished_exercise_and_goes_on(monkeypatch, capsys):
    monkeypatch.delenv("COURSE_CHECKS")
    assert not strict()
    assert check_function(_stub, _reference, _inputs(), name="Exercise 0.1", hint=HINT) is None
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith("Exercise 0.1: not implemented yet")


def test_a_student_run_prints_a_wrong_answer_with_its_hint_and_goes_on(monkeypatch, capsys):
    monkeypatch.delenv("COURSE_CHECKS")
    assert check_function(torch.exp, _reference, _inputs(), name="Exercise 0.1", hint=HINT) is None
    assert check_value(1, 2, name="Exercise 0.2") is None
    out = capsys.readouterr().out
    assert "NOT YET  Exercise 0.1 (input 0): values differ" in out and f"Hint: {HINT}" in out
    assert "NOT YET  Exercise 0.2: expected 2, got 1" in out


@pytest.mark.parametrize("how", ["nbgrader", "env", "context"])
def test_grading_makes_an_unfinished_exercise_fail(monkeypatch, how):
    monkeypatch.delenv("COURSE_CHECKS")
    if how == "nbgrader":
        monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    elif how == "env":
        monkeypatch.setenv("COURSE_CHECKS", "strict")
    with strict_checks() if how == "context" else _nothing():
        assert strict()
        with pytest.raises(NotDoneYet, match="Exercise 0.1: not implemented yet.*\nHint: "):
            check_function(_stub, _reference, _inputs(), name="Exercise 0.1", hint=HINT)
    assert strict() == (how != "context")


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _scaled(q, k):
    return torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, dim=-1)


_ATTENTION_MISTAKES = {
    MISTAKES["unscaled"]: lambda q, k: torch.softmax(q @ k.transpose(-2, -1), dim=-1),
    MISTAKES["softmax_axis"]: lambda q, k: torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5,
                                                         dim=-2),
}


@pytest.mark.parametrize("key", ["unscaled", "softmax_axis"])
def test_a_typical_mistake_is_named(key):
    wrong = _ATTENTION_MISTAKES[MISTAKES[key]]
    q, k = torch.randn(2, 4, 8), torch.randn(2, 5, 8)
    with pytest.raises(CheckFailed, match="Exercise 2.1: this looks like " + MISTAKES[key][:20]):
        check_function(wrong, _scaled, [(q, k)], name="Exercise 2.1", hint=HINT,
                       mistakes=_ATTENTION_MISTAKES)


def test_an_unknown_mistake_still_gets_the_plain_verdict():
    q, k = torch.randn(2, 4, 8), torch.randn(2, 5, 8)
    with pytest.raises(CheckFailed, match="values differ") as err:
        check_function(lambda q, k: _scaled(q, k) * 2, _scaled, [(q, k)], name="Exercise 2.1",
                       mistakes=_ATTENTION_MISTAKES)
    assert "looks like" not in str(err.value)


def test_a_mistake_that_equals_the_reference_is_not_blamed():
    # on 1-dimensional keys the scaling by sqrt(1) changes nothing: no "unscaled" diagnosis
    q, k = torch.randn(1, 3, 1), torch.randn(1, 3, 1)
    with pytest.raises(CheckFailed) as err:
        check_function(lambda q, k: _scaled(q, k) + 1, _scaled, [(q, k)], name="Exercise 2.1",
                       mistakes=_ATTENTION_MISTAKES)
    assert "looks like" not in str(err.value)


def test_mistakes_must_be_functions():
    with pytest.raises(TypeError, match="the mistake 'x' needs a function"):
        check_function(_scaled, _scaled, [(torch.ones(1, 1, 1), torch.ones(1, 1, 1))], name="E",
                       mistakes={"x": 3})
