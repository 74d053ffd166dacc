"""The isolated grader (classroom.autograder): grades computed where no student code ran.

In-process here (``grade_submission``, as ``classroom grade`` uses it); ``tests/test_nbgrader.py`` runs
the same red team through ``nbgrader autograde``. Also the pieces: values crossing as data and never as
pickles (``classroom.wire``), the sandbox's environment and limits, the course's files put back, and a
diagnosis named only when the answer equals the mistake on every input.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch
from torch import nn

import classroom
from classroom import wire
from classroom.autograder import grade_submission
from classroom.check_calls import check_calls
from classroom.isolated import CourseFiles, Sandbox
from tests import red_team

REPO = Path(__file__).resolve().parents[1]
CH02 = REPO / "chapters" / "02_soft_lookup.ipynb"


@pytest.fixture(scope="module")
def chapter2():
    full = nbformat.read(CH02, as_version=4)
    reference = classroom.nbgrader_notebook(full, CH02, lab_solutions=True)
    release = classroom.make_student(full, CH02)
    return reference, release


def _passed(verdicts) -> dict[str, bool]:
    return {v.number: v.passed for v in verdicts}


# --- values as data ----------------------------------------------------------------------------------
def test_values_cross_as_data_and_come_back_equal():
    value = (torch.randn(2, 3), torch.tensor([True, False]), torch.arange(4, dtype=torch.int32),
             torch.zeros(0, 3), torch.randn(2, dtype=torch.float64), [1, 2.5, "a", None],
             {"k": float("nan"), "inf": -math.inf}, np.int64(3), np.arange(3.0), torch.device("cpu"),
             torch.float16, torch.randn(3).to(torch.bfloat16))
    back = wire.decode(wire.encode(value))
    for got, want in zip(back, value, strict=True):
        if isinstance(want, torch.Tensor):
            assert got.dtype == want.dtype and torch.equal(got, want)
        elif isinstance(want, np.ndarray):
            assert np.array_equal(got, want)
        elif isinstance(want, dict):
            assert math.isnan(got["k"]) and got["inf"] == -math.inf
        else:
            assert got == want and type(got) is type(want)


def test_a_module_input_crosses_with_its_weights():
    norm = nn.LayerNorm(4)
    with torch.no_grad():
        norm.weight.uniform_()
    back = wire.decode(wire.encode(norm))
    x = torch.randn(2, 4)
    assert torch.equal(back(x), norm(x))


def test_what_is_not_data_arrives_as_something_equal_to_nothing_and_pickles_are_refused():
    sent = wire.encode(lambda x: x, strict=False)
    back = wire.decode(sent)
    assert isinstance(back, wire.Unsendable) and back != back
    pickled = wire.encode(nn.GRU(2, 2), pickled=True)
    with pytest.raises(wire.WireError):
        wire.decode(pickled)  # the grader never unpickles
    assert isinstance(wire.decode(pickled, allow_pickle=True), nn.GRU)  # the sandbox may
    with pytest.raises(wire.WireError):
        wire.decode({"tensor": {"dtype": "float32", "shape": [2, 2], "data": "AAAA"}})  # 3 bytes


# --- the sandbox ---------------------------------------------------------------------------------------
def test_the_sandbox_has_a_clean_environment_no_network_and_its_prints_stay_out_of_the_protocol(
        monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    monkeypatch.setenv("GRADER_SECRET", "s3cret")
    with Sandbox() as sandbox:
        reply = sandbox.request({"cmd": "exec", "label": "<cell>", "code": (
            "import os, socket, sys\n"
            "print('{\"ok\": true, \"result\": 1}')\n"
            "os.write(1, b'{\"forged\": 1}\\n')\n"
            "names = sorted(os.environ)\n"
            "try:\n    socket.create_connection(('example.org', 80), timeout=1)\n    net = 'open'\n"
            "except OSError:\n    net = 'closed'\n")})
        assert reply["ok"]
        names = sandbox.request({"cmd": "describe", "target": "names", "routes": []})["data"]
        assert "NBGRADER_EXECUTION" not in names and "GRADER_SECRET" not in names
        assert sandbox.request({"cmd": "describe", "target": "net", "routes": []})["data"] == "closed"


def test_a_sandbox_that_runs_past_its_step_or_dies_ends_the_exercise_not_the_grader():
    from classroom.isolated import SandboxError

    sandbox = Sandbox(step_seconds=3)
    with pytest.raises(SandboxError, match="within 3 s"):
        sandbox.request({"cmd": "exec", "label": "<cell>", "code": "while True:\n    pass"})
    with Sandbox() as other, pytest.raises(SandboxError, match="ended"):
        other.request({"cmd": "exec", "label": "<cell>", "code": "import os\nos._exit(3)"})


# --- grading ------------------------------------------------------------------------------------------
def test_the_reference_scores_everything_and_the_release_nothing(chapter2):
    reference, release = chapter2
    assert set(_passed(grade_submission(reference, reference)).values()) == {True}
    assert set(_passed(grade_submission(release, reference)).values()) == {False}


@pytest.fixture
def watched(tmp_path):
    """A folder the grader watches in place of the course's own (graders running beside this test
    would otherwise see the change)."""
    folder = tmp_path / "watched"
    folder.mkdir()
    (folder / "checks.py").write_text("def check(number, answer):\n    raise AssertionError\n")
    return CourseFiles([folder]), folder / "checks.py"


@pytest.mark.parametrize("name", [*red_team.TAMPERING, "everything", "files"])
def test_a_tampering_submission_scores_nothing(chapter2, watched, name):
    reference, release = chapter2
    files, target = watched
    submission = red_team.tampering_submissions(release, target)[f"tamper-{name}"]
    before = target.read_text()
    verdicts = grade_submission(submission, reference, files=files)
    assert not any(v.passed for v in verdicts), [(v.number, v.diagnosis) for v in verdicts]
    assert target.read_text() == before


def test_an_answer_that_patches_the_grader_when_called_scores_nothing(chapter2):
    reference, release = chapter2
    submission = red_team.patching_submission(release, "lookup_jacobian")
    verdicts = {v.number: v for v in grade_submission(submission, reference)}
    assert not any(v.passed for v in verdicts.values())
    assert "expected a tensor" in verdicts["2.2"].diagnosis, verdicts["2.2"].diagnosis


def test_an_answer_that_rewrites_the_course_files_scores_nothing_and_they_are_put_back(chapter2,
                                                                                      watched):
    reference, release = chapter2
    files, target = watched
    answer = ("def lookup_jacobian(query, keys, values):\n" + "\n".join(
        "    " + line for line in red_team.rewrites(target).strip().splitlines())
        + "\n    return torch.zeros(values.shape[1], len(query))\n")
    submission = red_team.answering(release, "lookup_jacobian", answer)
    before = target.read_text()
    verdicts = grade_submission(submission, reference, files=files)
    assert not any(v.passed for v in verdicts)
    assert all("changed the course's own files" in v.diagnosis for v in verdicts)
    assert target.read_text() == before


def test_a_student_who_solves_half_gets_exactly_that_half(chapter2):
    reference, release = chapter2
    submission = red_team.half_solved(reference)
    calls = check_calls(reference)
    solved = {c.number for c in calls[: len(calls) // 2]}
    assert _passed(grade_submission(submission, reference)) == {
        c.number: c.number in solved for c in calls}


def test_a_copy_through_the_dispatcher_scores_nothing_in_the_grader():
    path = REPO / "chapters" / "08_transformer_decoder.ipynb"
    full = nbformat.read(path, as_version=4)
    reference = classroom.nbgrader_notebook(full, path, lab_solutions=True)
    copied = copy.deepcopy(reference)
    cell = next(c for c in copied.cells if "def smoothed_cross_entropy(" in c.source)
    cell.source = ("def smoothed_cross_entropy(logits, targets, epsilon, pad_id):\n"
                   "    return torch.ops.aten.cross_entropy_loss(logits, targets, None, 1, pad_id, "
                   "epsilon)\n")
    only = nbformat.v4.new_notebook(cells=[reference.cells[c.cell] for c in check_calls(reference)
                                           if c.number == "8.1"])
    (found,) = grade_submission(copied, only)
    assert not found.passed and "aten::nll_loss_forward" in found.diagnosis, found.diagnosis


def test_the_course_files_are_put_back(tmp_path):
    root = tmp_path / "pkg"
    (root / "__pycache__").mkdir(parents=True)
    (root / "a.py").write_text("x = 1\n")
    (root / "__pycache__" / "a.pyc").write_bytes(b"cache")
    files = CourseFiles([root])
    (root / "a.py").write_text("x = 2\n")
    (root / "b.py").write_text("evil = 1\n")
    (root / "__pycache__" / "a.pyc").write_bytes(b"poisoned")
    assert files.changed() == [root / "a.py", root / "b.py"]
    files.restore()
    assert (root / "a.py").read_text() == "x = 1\n" and not (root / "b.py").exists()
    assert not (root / "__pycache__" / "a.pyc").exists()  # compiled again from the source
    assert files.changed() == []


# --- diagnoses that are true ---------------------------------------------------------------------------
def test_a_mistake_is_named_only_when_the_answer_equals_it_on_every_input():
    from utils.checks import CheckFailed
    from utils.exercises import verdict

    with pytest.raises(CheckFailed) as zero:
        verdict("8.4", lambda log_probs, lengths, alpha: 0)
    assert "this looks like" not in str(zero.value) and "expected 1, got 0" in str(zero.value)
    padded = ("def best(log_probs, lengths, alpha):\n"
              "    totals = log_probs.sum(dim=-1)\n"
              "    return int((totals / ((5 + lengths.float()) / 6) ** alpha).argmax())\n")
    namespace: dict = {}
    exec(padded, namespace)
    with pytest.raises(CheckFailed, match="padding entries counted in the sum"):
        verdict("8.4", namespace["best"])


def test_a_labs_checkpoints_come_from_the_lab_solved_then_as_handed_out(tmp_path, monkeypatch):
    """``python -m classroom nbgrader checkpoints`` on a lab: the reference (fixes in, never in
    source/) runs with its checks strict, then the source as handed out with errors allowed (its checks
    fail), so that a repaired lab and an unfinished one both find kept runs; a chapter runs its source
    alone."""
    import nbclient

    from classroom import hub
    from classroom.nbgrader_course import REFERENCE, write_nbgrader_course

    chapters = tmp_path / "chapters"
    chapters.mkdir()
    for name in ("02_soft_lookup.ipynb", "10_lab_find_the_bug.ipynb"):
        (chapters / name).write_bytes((REPO / "chapters" / name).read_bytes())
    course = tmp_path / "course"
    write_nbgrader_course(chapters, course)
    assert (course / REFERENCE / "10_lab_find_the_bug" / "10_lab_find_the_bug.ipynb").is_file()
    assert not (course / REFERENCE / "02_soft_lookup").exists()
    solved = nbformat.read(course / REFERENCE / "10_lab_find_the_bug" / "10_lab_find_the_bug.ipynb",
                           as_version=4)
    assert any("lab-solution" in c.metadata.get("tags", []) for c in solved.cells)
    runs = []

    class Client:
        def __init__(self, nb, allow_errors=False, **_kwargs):
            self.nb, self.allow_errors = nb, allow_errors

        def execute(self):
            fixed = any("lab-solution" in c.metadata.get("tags", []) for c in self.nb.cells)
            runs.append(("solved" if fixed else "as handed out", self.allow_errors))

    monkeypatch.setattr(nbclient, "NotebookClient", Client)
    hub.write_checkpoints(course, "10_lab_find_the_bug")
    hub.write_checkpoints(course, "02_soft_lookup")
    assert runs == [("solved", False), ("as handed out", True), ("as handed out", False)]


def test_nbgraders_step_replaces_what_the_kernel_printed_with_the_isolated_verdict(chapter2, tmp_path):
    """IsolatedGrading as nbgrader calls it (``preprocessor(nb, resources)``): a release whose kernel
    printed "correct" under every test cell gets an error output there, which nbgrader scores 0; the
    reference gets a passing line. The spec comes from the teacher's source notebook."""
    from classroom.nbgrader_grading import IsolatedGrading, StartIsolatedGrading

    full = nbformat.read(CH02, as_version=4)
    source = classroom.nbgrader_notebook(full, CH02)
    (tmp_path / "source" / "02_soft_lookup").mkdir(parents=True)
    nbformat.write(source, tmp_path / "source" / "02_soft_lookup" / "02_soft_lookup.ipynb")
    resources = {"nbgrader": {"assignment": "02_soft_lookup", "notebook": "02_soft_lookup"}}
    reference = classroom.nbgrader_notebook(full, CH02, lab_solutions=True)
    release = copy.deepcopy(source)
    for cell in release.cells:
        if cell.metadata.get("nbgrader", {}).get("solution") and cell.cell_type == "code":
            cell.source = classroom.clear_solution(cell.source, "Exercise 2")
    for nb, passed in ((release, False), (reference, True)):
        tests = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")
                 and not c.metadata["nbgrader"].get("solution")]
        for cell in tests:
            cell.outputs = [nbformat.v4.new_output("stream", text="Exercise 2.2: correct.\n")]
        start = StartIsolatedGrading(course_root=str(tmp_path))
        finish = IsolatedGrading(course_root=str(tmp_path))
        nb, got = finish(*start(nb, dict(resources)))
        kinds = [[o.output_type for o in cell.outputs] for cell in tests]
        assert kinds == [["stream" if passed else "error"]] * len(tests), kinds
        assert "course_isolated_grading" not in got
