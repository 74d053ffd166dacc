"""The rules every chapter's exercises and questions follow (CONTRIBUTING.md, "Exercises"); static, fast.

- at least four exercises per chapter, each opening with its difficulty and time
  ("*Medium · about 15 minutes.*"), and checks named "Exercise N.k" in the chapter's order;
- every question the prose asks and leaves open (a paragraph ending in "?") is followed by a collapsed
  ``{admonition} Answer``; a question inside an exercise is answered inside its solution gate.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "chapters").glob("[0-9][0-9]_*.ipynb"))
MIN_EXERCISES = 4
DIFFICULTY = re.compile(r"^\*(Easy|Medium|Hard) · about (\d+) minutes\.\*")
_FENCE = re.compile(r"^(?P<fence>[`:]{3,})\s*(?:\{(?P<directive>[\w-]+)\}(?P<argument>[^\n]*))?")
_ANSWER_START = re.compile(r"^[`:]{3,}\s*\{admonition\}\s*Answer\s*$")


def _markdown(path: Path) -> list[tuple[int, str]]:
    nb = nbformat.read(path, as_version=4)
    return [(i, c.source) for i, c in enumerate(nb.cells) if c.cell_type == "markdown"]


def _exercise_bodies(source: str) -> list[tuple[str, str]]:
    """(title, body) of each ``{exercise}`` block of a markdown cell."""
    blocks = re.finditer(r"^(?P<f>[`:]{3,})\s*\{exercise\}[ \t]*(?P<title>[^\n]*)\n(?P<body>.*?)^(?P=f)\s*$",
                         source, re.M | re.S)
    return [(m.group("title").strip(), "\n".join(line for line in m.group("body").splitlines()
                                                 if not re.match(r"^\s*:[\w-]+:", line)).strip())
            for m in blocks]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_exercises_have_a_difficulty_and_time_and_are_numbered_in_order(path):
    bodies = [b for _, source in _markdown(path) for b in _exercise_bodies(source)]
    assert len(bodies) >= MIN_EXERCISES, f"{path.name}: {len(bodies)} exercises, at least {MIN_EXERCISES}"
    for title, body in bodies:
        assert DIFFICULTY.match(body), (
            f"{path.name}: exercise {title!r} must open with '*Easy|Medium|Hard · about N minutes.*'")
        assert not re.match(r"^\d", title), f"{path.name}: {title!r}: the book numbers exercises itself"
    nb = nbformat.read(path, as_version=4)
    names = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            names += re.findall(r"""\bname\s*=\s*["'](Exercise [\d.]+)["']""", cell.source)
            names += [f"Exercise {n}" for n in re.findall(r"""\bcheck\(\s*["'](\d+\.\d+)["']""",
                                                          cell.source)]
    names = list(dict.fromkeys(names))
    chapter = int(path.name[:2])
    assert names == [f"Exercise {chapter}.{k}" for k in range(1, len(bodies) + 1)], (
        f"{path.name}: checks are named {names}; expected Exercise {chapter}.1 .. {chapter}.{len(bodies)}")


def open_questions(source: str) -> list[tuple[str, bool]]:
    """(question, answered) for each paragraph of prose that ends in a question mark.

    Skipped: headings, code, and the inside of exercise and Answer blocks. A question is answered when
    the next thing in the cell is an ``{admonition} Answer`` block (``answered`` False: look at the
    next cell).
    """
    lines = source.splitlines()
    found: list[tuple[str, bool]] = []
    stack: list[tuple[str, str | None]] = []
    for n, line in enumerate(lines):
        match = _FENCE.match(line.strip())
        if match:
            fence, directive = match.group("fence"), match.group("directive")
            if stack and fence == stack[-1][0] and not directive and not match.group("argument"):
                stack.pop()
                continue
            if directive or not stack or stack[-1][1] != "code":
                stack.append((fence, directive or "code"))
                continue
        if any(kind in ("code", "exercise", "math") for _, kind in stack) or any(
                kind == "admonition" for _, kind in stack[-1:]) and _in_answer(lines, n):
            continue
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        ends_paragraph = n + 1 == len(lines) or not lines[n + 1].strip()
        if ends_paragraph and re.search(r"\?[)*_\s]*$", text):
            rest = [x for x in lines[n + 1:] if x.strip()]
            found.append((text, bool(rest) and bool(_ANSWER_START.match(rest[0].strip()))
                          if rest else False))
            if not rest:
                found[-1] = (text, None)  # decided by the next cell
    return found


def _in_answer(lines: list[str], n: int) -> bool:
    for line in reversed(lines[:n]):
        match = _FENCE.match(line.strip())
        if match and match.group("directive") == "admonition":
            return _ANSWER_START.match(line.strip()) is not None
    return False


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_open_question_has_a_collapsed_answer(path):
    cells = _markdown(path)
    unanswered = []
    for k, (_, source) in enumerate(cells):
        for question, answered in open_questions(source):
            if answered is None:  # the question ends the cell: the next markdown cell must answer it
                following = cells[k + 1][1].strip() if k + 1 < len(cells) else ""
                answered = bool(following) and bool(_ANSWER_START.match(following.splitlines()[0]))
            if not answered:
                unanswered.append(question)
    assert not unanswered, (f"{path.name}: questions without a collapsed Answer right after them: "
                            f"{unanswered}")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_questions_inside_exercises_are_answered_in_the_solution(path):
    nb = nbformat.read(path, as_version=4)
    missing = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        for title, body in _exercise_bodies(cell.source):
            if "?" not in re.sub(r"`[^`]*`|\$[^$]*\$", "", body):
                continue
            gate = []
            for later in nb.cells[i + 1:]:
                gate.append(later)
                if later.cell_type == "markdown" and "{solution-end}" in later.source:
                    break
            if not any(c.cell_type == "markdown" and "**Answer.**" in c.source for c in gate):
                missing.append(title)
    assert not missing, (f"{path.name}: exercises that ask a question in words but answer it nowhere "
                         f"in their solution (a markdown cell starting '**Answer.**'): {missing}")


def test_teachers_tooling_lives_apart_from_the_learners_package():
    utils = REPO / "utils"
    assert not (utils / "classroom.py").exists(), "the teacher's kit belongs in classroom/, not utils/"
    for module in utils.glob("*.py"):
        text = module.read_text(encoding="utf-8")
        for tool in ("nbgrader", "nbclient", "nbformat"):
            assert not re.search(rf"^\s*(import|from) {tool}\b", text, re.M), (
                f"utils/{module.name} imports {tool}: notebook tooling belongs in classroom/")
    for module in (REPO / "classroom").glob("*.py"):
        lines = len(module.read_text(encoding="utf-8").splitlines())
        assert lines <= 320, f"classroom/{module.name} has {lines} lines; split it (about 300 at most)"


def test_the_instructor_guide_lists_every_chapters_exercises_as_they_are():
    from classroom.guide import GUIDE, updated_guide

    text = GUIDE.read_text(encoding="utf-8")
    assert updated_guide(text, REPO / "chapters", None) == text, (
        "book/instructor_guide.md disagrees with the notebooks' exercises: run python -m classroom.guide")
    assert "<!-- times: start -->" in text and "<!-- times: end -->" in text
    table = text.split("<!-- times: start -->")[1].split("<!-- times: end -->")[0]
    for path in NOTEBOOKS:
        row = re.search(rf"^\| {int(path.name[:2])}\. .*$", table, re.M)
        assert row and "not measured" not in row.group(0), f"the time table lacks {path.name}'s time"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_registry_and_the_notebook_say_the_same_of_each_exercise(path):
    """An exercise whose check cell is ``check("N.k", ...)`` is defined in utils.exercises: its title,
    difficulty and minutes there are what the notebook's text says, and its open questions are as many
    as the "(Then: ...?)" questions of its text."""
    import classroom

    nb = nbformat.read(path, as_version=4)
    for ex in classroom.find_exercises(nb, path):
        entry = ex.registered
        if entry is None:
            continue
        text = nb.cells[ex.text_cell].source
        (title, body), = _exercise_bodies(text)
        level, minutes = DIFFICULTY.match(body).groups()
        assert (entry.title, entry.difficulty, entry.minutes) == (title, level, int(minutes)), (
            f"{path.name}: {ex.name} is registered as {entry.title!r}, {entry.difficulty}, "
            f"{entry.minutes} min; the notebook says {title!r}, {level}, {minutes} min")
        asked = "(Then:" in body
        assert len(entry.questions) >= asked, (
            f"{path.name}: {ex.name} asks an open question in its text but registers none")


# Masks are drilled at most three times in the course (issue 24 counted seven). A solution that builds
# or applies a mask over (query, key) pairs, or an infinite score, is a mask drill unless it is listed
# below with what it does instead; a new one must be listed here, where the count is tested.
MAX_MASK_DRILLS = 3
MASK_DRILLS = {
    "Exercise 3.1": "the padding mask, built from the lengths",
    "Exercise 4.2": "the causal mask, in self-attention",
    "Exercise 6.4": "ALiBi's distance penalty, with the causal mask",
}
NOT_MASK_DRILLS = {
    "Exercise 0.4": "counts the crossings of an alignment with an upper triangle",
    "Exercise 1.3": "repairs how a given padding mask is applied (a fix, not a mask to build)",
    "Exercise 8.4": "sets the scores of finished beams, not attention weights",
    "Exercise 9.2": "removes tokens from the vocabulary (top-p), not keys from attention",
    "Exercise 11.3": "hands the model's own causal mask to its sub-layer to read the weights",
}
_MASK_CODE = re.compile(r"\.tril\(|\.triu\(|torch\.tril|torch\.triu|masked_fill|causal_mask|"
                        r"float\(\"-inf\"\)|-math\.inf|-torch\.inf")


def _solution_code(nb, ex) -> str:
    return "\n".join(nb.cells[i].source for i in ex.solution_cells if nb.cells[i].cell_type == "code")


def test_masks_are_drilled_at_most_three_times():
    import classroom

    found = {}
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        for ex in classroom.find_exercises(nb, path):
            if _MASK_CODE.search(_solution_code(nb, ex)):
                found[ex.name] = path.name
    unlisted = {name: where for name, where in found.items()
                if name not in MASK_DRILLS and name not in NOT_MASK_DRILLS}
    assert not unlisted, (
        f"solutions that build or apply a mask: {unlisted}; list each in MASK_DRILLS (at most "
        f"{MAX_MASK_DRILLS} in the course) or, with what it does instead, in NOT_MASK_DRILLS")
    stale = sorted((MASK_DRILLS.keys() | NOT_MASK_DRILLS.keys()) - found.keys())
    assert not stale, f"listed but no longer building a mask (update the lists): {stale}"
    assert len(MASK_DRILLS) <= MAX_MASK_DRILLS, (
        f"{len(MASK_DRILLS)} mask-building exercises: {sorted(MASK_DRILLS)}; the course drills masks "
        f"at most {MAX_MASK_DRILLS} times")
