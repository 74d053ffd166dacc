"""The chapters as an nbgrader course, tested with nbgrader 0.9.6 itself (slow: autograde runs notebooks).

``python -m classroom student`` writes ``student/nbgrader/`` (``classroom.nbgrader_course``). Here:
``nbgrader generate_assignment`` must accept every chapter's source notebook; ``nbgrader autograde``
then grades ``reference`` (the source notebook with the solutions, and a lab's fixes), which must score
every exercise's full points in every chapter, and ``untouched`` (the release as handed out), which
must score zero, in the chapters of ``UNTOUCHED`` (Run All reaching the end under grading is the same
plumbing in every chapter; that each check fails on its stub is tested for every exercise of every
chapter in tests/test_exercise_rules.py and tests/test_exercise_mistakes.py, without a notebook run,
and tests/test_student_edition.py runs every release top to bottom). Scores come from the gradebook.

The reference run is also ``make test``'s second execution of every full notebook (after the book's):
no cell may raise in it (the check ``pytest --nbval-lax chapters`` makes; ``make test`` leaves nbval
out). It loads the training runs the book's build kept (``KEPT_RUNS`` in conftest.py), as grading
loads a teacher's; without them (this file run alone) it trains and keeps them for the other
submissions.
"""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbgrader", reason="needs nbgrader==0.9.6 (requirements.txt)")

import classroom  # noqa: E402
from tests.conftest import kept_runs_env  # noqa: E402
from tests.test_classroom import lab_notebook, toy_notebook  # noqa: E402

pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = classroom.chapter_notebooks(REPO_ROOT / "chapters")
# The chapters whose untouched release is autograded too: the quick ones (each runs in seconds), one of
# them with a hidden-input check cell in every exercise pattern the course uses.
UNTOUCHED = ("00_getting_started", "02_soft_lookup", "04_self_attention", "07_transformer_encoder")
# The chapters graded with mistaken and copying submissions too, in every run: an early chapter, a late
# one and a lab; every chapter with COURSE_NBGRADER_ALL=1 (the weekly workflow).
COPY_GRADED = ("02_soft_lookup", "08_transformer_decoder", "10_lab_find_the_bug",
               "11_lab_ablation_ladder")
# The chapters graded with the red team too (tests/red_team.py, see red_team() below) and a student who
# solves half. Each must score what it solved, and no more. In make test the half-solver makes the
# chapter's named mistakes in the half it did not solve (a separate mistaken submission in the weekly
# run), and each check must name its mistake.
RED_TEAM = {"02_soft_lookup": "all", "08_transformer_decoder": "some", "10_lab_find_the_bug": "some",
            "11_lab_ablation_ladder": "some"}
COPIERS_PER_RUN = 1  # copying submissions per chapter in make test (each copy is refused in-process
# by tests/test_copy_proof.py anyway; nbgrader proves the same on a round of them: the first copy of
# each exercise, which is the route the exercise forbids: tests/copy_attempts list those first)
WEEKLY = bool(os.environ.get("COURSE_NBGRADER_ALL"))
GRADING_SECONDS: dict[str, float] = {}  # seconds per non-reference submission, measured by autograde


KERNEL_STOPPED = ("Timeout waiting for execute reply", "Interrupting kernel")


def nbgrader(course: Path, *args: str, timeout: int = 3600, write_checkpoints: bool = False,
             watched: Path | None = None) -> str:
    """Run an nbgrader command through the course's wrapper (``python -m classroom nbgrader``), which
    puts alembic on PATH and, for autograde, loads the assignment's kept training runs; with
    ``write_checkpoints`` the runs are trained and kept (the reference submission)."""
    env = {k: v for k, v in os.environ.items() if k not in ("COURSE_CHECKS", "NBGRADER_EXECUTION",
                                                            "COURSE_CHECKPOINTS_WRITE")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if Path(p).resolve() != Path(sys.executable).parent.resolve())
    env["OMP_NUM_THREADS"] = "1"
    if write_checkpoints:
        env["COURSE_CHECKPOINTS_WRITE"] = "1"
    if watched is not None:  # the grader watches this folder, not the course's (see red_team.rewrites)
        env["COURSE_GRADER_WATCH"] = str(watched)
    result = subprocess.run([sys.executable, "-m", "classroom", "nbgrader", "--course", str(course),
                             *args], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                            timeout=timeout)
    log = result.stdout + result.stderr
    # a kernel that a red-team cell stopped (red_team.STOPS_THE_KERNEL): nbgrader's feedback run times out
    errors = [line for line in log.splitlines() if "| ERROR]" in line
              and not any(known in line for known in KERNEL_STOPPED)]
    assert result.returncode == 0 and not errors, (
        f"nbgrader {' '.join(args)} failed:\n{log[-6000:]}")
    return log


def generate(course: Path, assignment: str) -> nbformat.NotebookNode:
    """``nbgrader generate_assignment``; returns the released notebook."""
    release = course / "release" / assignment / f"{assignment}.ipynb"
    if not release.exists():
        nbgrader(course, "generate_assignment", assignment, "--force")
    return nbformat.read(release, as_version=4)


def answered(reference: nbformat.NotebookNode, answers: dict[str, str]) -> nbformat.NotebookNode:
    """The reference submission with the exercises of ``answers`` ({"ex-2-2": code}) answered by that
    code instead: it replaces the exercise's first solution cell, and its other solution cells go."""
    nb = copy.deepcopy(reference)
    for grade_id, code in answers.items():
        cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id", "").startswith(
            f"{grade_id}-solution")]
        for k, cell in enumerate(cells):
            cell.source = code if k == 0 else "pass"
        if not cells:  # a lab's repair: the learner's version of the component, just before its check
            at = next(i for i, c in enumerate(nb.cells)
                      if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
            nb.cells.insert(at, nbformat.v4.new_code_cell(code))
    return nb


def mistaken_answers(full: nbformat.NotebookNode, path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """({grade_id: code}, {grade_id: the mistake its check must name}): each auto-checked exercise's
    first named wrong answer (tests/wrong_answers)."""
    import importlib

    exercises = {ex.name: ex for ex in classroom.find_exercises(full, path)}
    try:
        wrong = importlib.import_module(f"tests.wrong_answers.ch{path.name[:2]}").WRONG
    except ModuleNotFoundError:
        wrong = []
    from utils.exercises.ch10 import PLANTED

    mistaken = {}
    for answer in wrong:
        ex = exercises[answer.exercise]
        if PLANTED.get(answer.exercise.split()[-1]) == answer.mistake:
            continue  # a lab's planted bug is never named (tests/test_exercise_mistakes.py)
        if ex.registered is not None and ex.registered.kind != "prediction":
            mistaken.setdefault(ex.grade_id, (answer.code, answer.mistake))
    return ({gid: code for gid, (code, _) in mistaken.items()},
            {gid: mistake for gid, (_, mistake) in mistaken.items()})


def graded_submissions(full: nbformat.NotebookNode, path: Path) -> dict[str, tuple[dict, str]]:
    """{student: ({grade_id: code}, what the check must say)} for a chapter of COPY_GRADED: a mistaken
    submission (each exercise's first named wrong answer; in make test, where the chapter has a red
    team, its half-solver makes them instead) and copying ones (copier-k holds the k-th copy of every
    exercise, tests/copy_attempts)."""
    import importlib

    exercises = {ex.name: ex for ex in classroom.find_exercises(full, path)}
    chapter = path.name[:2]
    out: dict[str, tuple[dict, str]] = {}
    answers, mistakes = mistaken_answers(full, path)
    if answers and (WEEKLY or path.stem not in RED_TEAM):
        out["mistaken"] = (answers, mistakes)
    try:
        copies = importlib.import_module(f"tests.copy_attempts.ch{chapter}").COPIES
    except ModuleNotFoundError:
        copies = []
    by_exercise: dict[str, list[str]] = {}
    for attempt in sorted(copies, key=lambda a: not a.featured):  # the featured copy first
        by_exercise.setdefault(exercises[attempt.exercise].grade_id, []).append(attempt.code)
    rounds = max((len(v) for v in by_exercise.values()), default=0)
    if not WEEKLY:  # make test: COPIERS_PER_RUN copiers; weekly: every copy
        rounds = min(rounds, COPIERS_PER_RUN)
    for k in range(rounds):
        out[f"copier-{k + 1}"] = ({gid: codes[k] for gid, codes in by_exercise.items() if k < len(codes)},
                                  {})
    return out


def cell_limit(assignment: str) -> tuple[str, ...]:
    """Chapter 2's red team holds a kernel that stops answering (red_team.STOPS_THE_KERNEL): there,
    where no cell takes more than a few seconds, nbgrader's feedback run waits 20 s per cell, not 30
    minutes."""
    return ("--Execute.timeout=20",) if RED_TEAM.get(assignment) == "all" else ()


def half_solver(reference: nbformat.NotebookNode, full: nbformat.NotebookNode,
                path: Path) -> tuple[nbformat.NotebookNode, dict[str, str]]:
    """The half-solver (red_team.half_solved) and {grade_id: mistake its check must name}: in make
    test it answers the exercises of the half it did not solve with their named mistakes, where they
    have one (the weekly run grades a mistaken submission of its own)."""
    from classroom.check_calls import check_calls
    from tests import red_team as team

    half = team.half_solved(reference)
    if WEEKLY:
        return half, {}
    calls = check_calls(reference)
    unsolved = {"ex-" + c.number.replace(".", "-") for c in calls[len(calls) // 2:]}
    answers, mistakes = mistaken_answers(full, path)
    answers = {gid: code for gid, code in answers.items() if gid in unsolved}
    return answered(half, answers), {gid: mistakes[gid] for gid in answers}


def red_team(release: nbformat.NotebookNode, reference: nbformat.NotebookNode, assignment: str,
             watched: Path, full: nbformat.NotebookNode,
             path: Path) -> tuple[dict[str, nbformat.NotebookNode], dict[str, str]]:
    """({student: notebook} of the red team for ``assignment`` (RED_TEAM), {grade_id: the mistake the
    half-solver's check must name})."""
    from tests import red_team as team

    if assignment not in RED_TEAM:
        return {}, {}
    target = watched / "checks.py"
    all_of_them = team.tampering_submissions(release, target)
    # each tampering cell alone is graded in-process (tests/test_isolated_grading.py); here, where every
    # submission costs a kernel run, chapter 2 takes the famous line alone, all of them together, the
    # kernel stopper and the file rewrite, the others all of them together
    kept = {"all": ("tamper-everything", "tamper-environment", "tamper-files",
                    *(f"tamper-{name}" for name in team.STOPS_THE_KERNEL)),
            "some": ("tamper-everything",)}[RED_TEAM[assignment]]
    half, mistakes = half_solver(reference, full, path)
    return {**{k: v for k, v in all_of_them.items() if k in kept}, "half-solved": half}, mistakes


def autograde(course: Path, full: nbformat.NotebookNode, path: Path,
              extra: dict[str, tuple[dict, object]] | None = None,
              notebooks: dict[str, nbformat.NotebookNode] | None = None,
              watched: Path | None = None) -> dict[str, dict[str, tuple]]:
    """Submit ``reference`` (and ``untouched`` in UNTOUCHED chapters, ``extra`` and ``notebooks``),
    autograde; {student: {grade_id: (score, max)}}. The reference is graded first, training every
    model and keeping the runs; the other submissions then load them (the course's fast grading)."""
    from nbgrader.api import Gradebook

    assignment = path.stem
    release = generate(course, assignment)  # also registers the assignment in the gradebook
    reference = classroom.nbgrader_notebook(full, path, lab_solutions=True)
    submissions = {"reference": reference}
    if assignment in UNTOUCHED or assignment not in {p.stem for p in CHAPTERS}:
        submissions["untouched"] = release
    for student, (answers, _) in (extra or {}).items():
        submissions[student] = answered(reference, answers)
    submissions.update(notebooks or {})
    for student, nb in submissions.items():
        target = course / "submitted" / student / assignment / f"{assignment}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
    # The book's build (`make test`'s first step) has trained the chapter's models and kept the runs:
    # the reference is then graded as any submission is, loading them; without them it trains and
    # keeps its runs for the others.
    kept = kept_runs_env().get("COURSE_CHECKPOINTS")
    if kept:
        folder = course / "checkpoints" / assignment
        folder.mkdir(parents=True, exist_ok=True)
        for run in Path(kept).glob("*.pt"):
            shutil.copy2(run, folder / run.name)
    if kept:  # every submission in one command, as a teacher grades a class
        start = time.perf_counter()
        logs = [nbgrader(course, "autograde", assignment, "--force", *cell_limit(assignment),
                         watched=watched)]
        GRADING_SECONDS[assignment] = (time.perf_counter() - start) / len(submissions)
    else:
        logs = [nbgrader(course, "autograde", assignment, "--force", "--student", "reference",
                         write_checkpoints=True)]
        if len(submissions) > 1:
            start = time.perf_counter()
            logs.append(nbgrader(course, "autograde", assignment, *cell_limit(assignment),
                                 watched=watched))  # the others load the kept runs
            GRADING_SECONDS[assignment] = (time.perf_counter() - start) / (len(submissions) - 1)
    # a check cell shows its verdict and no value that nbgrader would try to read as a score
    assert not [line for log in logs for line in log.splitlines() if "cannot be converted" in line], (
        f"{assignment}: a graded cell echoes a value")
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        return {student: {grade.name: (grade.score, grade.max_score) for grade in
                          gradebook.find_submission_notebook(assignment, assignment, student).grades}
                for student in submissions}


def expected_points(full: nbformat.NotebookNode, path: Path) -> dict[str, int]:
    """The autograded cells' points: each exercise's check cell."""
    return {ex.grade_id: ex.points for ex in classroom.find_exercises(full, path)
            if ex.check_cell is not None}


def manual_points(full: nbformat.NotebookNode, path: Path) -> dict[str, int]:
    """The cells graded by hand: each open question's answer cell (registered exercises)."""
    points = {}
    for answer in classroom.answer_cells(full, classroom.find_exercises(full, path)).values():
        entry = classroom.registry_entry(answer["exercise"])
        k = answer["question"]
        points[f"{entry.grade_id}-answer-{k + 1}"] = entry.questions[k].points
    return points


def assert_full_and_zero(scores: dict[str, dict[str, tuple]], points: dict[str, int],
                         manual: dict[str, int] | None = None) -> None:
    """Full auto points for the reference, none for the untouched release; the open questions are
    there with their points, waiting for a grader (no score before one)."""
    manual = manual or {}
    auto = {student: {gid: s for gid, s in grades.items() if gid not in manual}
            for student, grades in scores.items()}
    assert auto["reference"] == {gid: (p, p) for gid, p in points.items()}, "reference lost points"
    if "untouched" in scores:
        assert auto["untouched"] == {gid: (0, p) for gid, p in points.items()}, "untouched earned points"
    for student, grades in scores.items():
        assert {gid: s[1] for gid, s in grades.items() if gid in manual} == manual, (
            f"{student}: the open questions' cells are not graded by hand with their points")


@pytest.mark.skipif(not os.environ.get("COURSE_NBGRADER_ALL"),
                    reason="weekly (COURSE_NBGRADER_ALL=1): the real chapters, labs included, are graded "
                           "in every run")
def test_toy_course_end_to_end(tmp_path):
    """Two toy chapters (one a find-the-bug lab): generate, autograde, read the gradebook."""
    chapters, course = tmp_path / "chapters", tmp_path / "course"
    chapters.mkdir()
    nbformat.write(toy_notebook(), chapters / "07_toy.ipynb")
    nbformat.write(lab_notebook(), chapters / "17_lab_toy.ipynb")
    classroom.write_nbgrader_course(chapters, course)
    assert "os.path.abspath(__file__)" in (course / "nbgrader_config.py").read_text()
    assert "generate_assignment" in (course / "README.md").read_text()
    for path in sorted(chapters.glob("*.ipynb")):
        full = nbformat.read(path, as_version=4)
        release = generate(course, path.stem)
        assert classroom.verify_student(full, release) == []
        assert 'raise NotImplementedError("write your solution here")' in "\n".join(
            c.source for c in release.cells) or "lab" in path.stem
        points = expected_points(full, path)
        assert sorted(points.values()) == ([2, 3] if "lab" in path.stem else [1, 2])
        assert_full_and_zero(autograde(course, full, path), points)


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """The nbgrader course of the real chapters, written by the documented command."""
    out = tmp_path_factory.mktemp("student")
    import classroom.__main__ as cli

    assert cli.main(["student", "--chapters", str(REPO_ROOT / "chapters"), "--out", str(out)]) == 0
    assert (out / "nbgrader" / "nbgrader_config.py").exists()
    return out / "nbgrader"


def check_release(path: Path, course: Path) -> None:
    """``nbgrader generate_assignment`` accepts the chapter, and its release shows no solution, the
    graded cells with their points, and no hidden test (part of the autograde test below, which
    generates the release anyway: one nbgrader start less per chapter)."""
    full = nbformat.read(path, as_version=4)
    release = generate(course, path.stem)
    assert classroom.verify_student(full, release) == []
    graded = [c for c in release.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert len(graded) == len(expected_points(full, path)) + len(manual_points(full, path))
    assert len(expected_points(full, path)) >= 3
    hidden = [c for c in release.cells if "BEGIN HIDDEN TESTS" in c.source or "hidden=True" in c.source]
    assert not hidden, f"{path.name}: the release shows the hidden tests"


def cell_errors(course: Path, student: str, assignment: str) -> list[tuple[int, bool, str]]:
    """(cell index, graded test cell?, error) for each cell of an autograded notebook that raised."""
    graded = nbformat.read(course / "autograded" / student / assignment / f"{assignment}.ipynb",
                           as_version=4)
    return [(i, bool(cell.metadata.get("nbgrader", {}).get("grade")), f"{out.ename}: {out.evalue}"[:300])
            for i, cell in enumerate(graded.cells) if cell.cell_type == "code"
            for out in cell.get("outputs", []) if out.output_type == "error"]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_autograde_gives_reference_full_points_and_untouched_zero(path, course):
    """Also the run of every full notebook in ``make test`` (which leaves nbval out to save the time):
    in the reference submission no cell may raise, which is what ``pytest --nbval-lax`` checks; in the
    untouched release only the graded check cells may (Run All reaches the end under grading too)."""
    check_release(path, course)
    full = nbformat.read(path, as_version=4)
    graded = path.stem in COPY_GRADED or os.environ.get("COURSE_NBGRADER_ALL")
    extra = graded_submissions(full, path) if graded else {}
    watched = course / "watched" / path.stem
    watched.mkdir(parents=True, exist_ok=True)
    (watched / "checks.py").write_text("def check(number, answer):\n    raise AssertionError\n")
    team, half_mistakes = red_team(generate(course, path.stem),
                                   classroom.nbgrader_notebook(full, path, lab_solutions=True),
                                   path.stem, watched, full, path)
    scores = autograde(course, full, path, extra, team, watched)
    assert_full_and_zero({s: g for s, g in scores.items() if s not in extra and s not in team},
                         expected_points(full, path), manual_points(full, path))
    assert_red_team(scores, team, full, path)
    assert cell_errors(course, "reference", path.stem) == [], f"{path.name}: a cell raised"
    named = [*extra.items(), *([("half-solved", (half_mistakes, half_mistakes))] if half_mistakes else [])]
    for student, (answers, mistakes) in named:
        earned = {gid: scores[student][gid] for gid in answers if scores[student][gid][0]}
        assert not earned, f"{path.name}: {student} earned points for {earned}"
        errors = {i: e for i, _, e in cell_errors(course, student, path.stem)}
        for gid, mistake in mistakes.items():  # the diagnosis is the first line of the feedback
            first = first_feedback_line(course, student, path.stem, gid)
            assert first.startswith("CheckFailed: Exercise") and f"this looks like {mistake}" in first, (
                f"{path.name}: {student}'s feedback for {gid} starts {first!r}; errors: {errors}")
    if path.stem in GRADING_SECONDS:
        print(f"{path.stem}: {GRADING_SECONDS[path.stem]:.1f} s per graded submission")
    if extra and path.stem == "08_transformer_decoder":  # the other submissions trained nothing
        student = next(iter(extra))
        printed = "\n".join(out.get("text", "") for cell in nbformat.read(
            course / "autograded" / student / path.stem / f"{path.stem}.ipynb", as_version=4).cells
            if cell.cell_type == "code" for out in cell.get("outputs", []))
        assert printed.count("loaded from") >= 2, f"{student}'s grading trained the chapter's models"
    from tests.test_glue_runs import record_glue  # for the comparison of the runs' glued numbers

    record_glue("reference", path, nbformat.read(
        course / "autograded" / "reference" / path.stem / f"{path.stem}.ipynb", as_version=4))
    if path.stem in UNTOUCHED:
        ungraded = [e for e in cell_errors(course, "untouched", path.stem) if not e[1]]
        assert ungraded == [], f"{path.name}: the untouched release raised outside its check cells"


def assert_red_team(scores: dict[str, dict[str, tuple]], team: dict[str, nbformat.NotebookNode],
                    full: nbformat.NotebookNode, path: Path) -> None:
    """Every tampering submission scores 0 on every auto-graded cell; the half-solver exactly the
    exercises it solved (the first half of the check cells)."""
    from classroom.check_calls import check_calls

    points = expected_points(full, path)
    calls = check_calls(classroom.nbgrader_notebook(full, path, lab_solutions=True))
    solved = {"ex-" + c.number.replace(".", "-") for c in calls[: len(calls) // 2]}
    for student in team:
        auto = {gid: s for gid, s in scores[student].items() if gid in points}
        if student == "half-solved":
            want = {gid: (p if gid in solved else 0, p) for gid, p in points.items()}
        else:
            want = {gid: (0, p) for gid, p in points.items()}
        assert auto == want, f"{path.name}: {student} scored {auto}, not {want}"


def test_untouched_chapters_exist():
    assert set(UNTOUCHED) <= {p.stem for p in CHAPTERS}


def first_feedback_line(course: Path, student: str, assignment: str, grade_id: str) -> str:
    """The first line of the error a check cell shows in the autograded notebook (what nbgrader's
    feedback shows the learner)."""
    graded = nbformat.read(course / "autograded" / student / assignment / f"{assignment}.ipynb",
                           as_version=4)
    cell = next(c for c in graded.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
    errors = [out for out in cell.get("outputs", []) if out.output_type == "error"]
    return errors[0].traceback[0] if errors and errors[0].traceback else ""

