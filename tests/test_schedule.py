"""The instructor guide's schedule (classroom/schedule.py) and the chapter summaries it stands beside:
every notebook taught once and in order, every week within its budget, the capstone handed out early
and due inside the unit, the guide's tables the planner's own, and the learning goals and section
lists the chapters' own, in the preface's notation. No notebook runs: about two seconds."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import nbformat
import pytest

from classroom.guide import GUIDE, chapter_notebooks, goals_of, lists_in_order, sections_of, table_seconds
from classroom.schedule import (
    CAPSTONE,
    CAPSTONE_AFTER,
    INTRO,
    LEAD_WEEKS,
    PLANS,
    Plan,
    by_session,
    measure,
    measure_all,
    plan_weeks,
    teaching_order,
)
from classroom.schedule_text import schedule
from tests.test_prose import _exceptions, math_letters, table_symbols

REPO = Path(__file__).resolve().parents[1]
CHAPTERS = REPO / "chapters"


@cache
def guide() -> str:
    return GUIDE.read_text(encoding="utf-8")


@cache
def notebooks():
    return measure_all(CHAPTERS, table_seconds(guide(), CHAPTERS))


@cache
def weeks(plan: Plan):
    return plan_weeks(plan, notebooks())


def test_the_two_plans_are_a_five_and_a_ten_week_unit():
    assert [(p.weeks, p.sessions_per_week) for p in PLANS] == [(5, 2), (10, 1)]
    assert PLANS[0].notebooks == tuple(range(12)), "5 weeks: chapters 0 to 9 and both labs"
    assert PLANS[1].notebooks == tuple(range(14)), "10 weeks: chapters 12 and 13 as well"
    assert set(PLANS[1].notebooks) == set(notebooks()), "every notebook of chapters/ in the long plan"


@pytest.mark.parametrize("plan", PLANS, ids=lambda p: p.name)
def test_every_notebook_is_taught_once_in_teaching_order(plan):
    taught = [n for week in weeks(plan) for n in week.taught]
    assert taught == teaching_order(plan)
    assert teaching_order(plan) == sorted(set(plan.notebooks) - {CAPSTONE}) + [CAPSTONE]
    assert len(weeks(plan)) == plan.weeks
    sessions = [s for week in weeks(plan) for s in week.sessions]
    assert sessions == list(range(1, plan.weeks * plan.sessions_per_week + 1))


@pytest.mark.parametrize("plan", PLANS, ids=lambda p: p.name)
def test_every_week_is_within_its_budget(plan):
    for week in weeks(plan):
        assert week.class_min <= plan.class_budget, f"week {week.number}: too much for the sessions"
        assert 0 <= week.homework_min <= plan.homework_budget, f"week {week.number}: too much homework"
        assert week.total_min <= plan.budget
        split = by_session(plan, week, notebooks())
        in_sessions = list(dict.fromkeys(n for s in split for n in s if n != INTRO))
        assert in_sessions == week.taught, f"week {week.number}: its sessions lose or swap a notebook"


@pytest.mark.parametrize("plan", PLANS, ids=lambda p: p.name)
def test_the_capstone_is_handed_out_early_and_due_inside_the_unit(plan):
    handed = [w.number for w in weeks(plan) if CAPSTONE in w.handed_out]
    due = [w.number for w in weeks(plan) if CAPSTONE in w.due]
    assert len(handed) == 1 and due == [plan.weeks], "handed out once, due in the last week"
    assert handed[0] <= plan.weeks - LEAD_WEEKS, "handed out at least two weeks before the end"
    taught_in = {n: w.number for w in weeks(plan) for n in w.taught}
    assert taught_in[CAPSTONE_AFTER] <= handed[0], "its prerequisite, chapter 8, comes first"
    week = weeks(plan)[handed[0] - 1]
    order = [n for session in by_session(plan, week, notebooks()) for n in session]
    if CAPSTONE_AFTER in order:
        assert order.index(INTRO) > order.index(CAPSTONE_AFTER)
    last = weeks(plan)[-1]
    assert by_session(plan, last, notebooks())[-1][-1] == CAPSTONE, "reviewed in the last session"


def test_the_planner_refuses_a_budget_that_cannot_hold_the_notebooks():
    with pytest.raises(ValueError, match="cannot fit"):
        plan_weeks(Plan("too short", 3, 1, 60, tuple(range(12))), notebooks())


def test_the_guides_schedule_is_the_planners():
    block = re.search(r"<!-- schedule: start -->\n(.*?)<!-- schedule: end -->", guide(), re.S)
    assert block, "book/instructor_guide.md has no <!-- schedule: start --> ... end markers"
    assert block.group(1) == schedule(CHAPTERS, table_seconds(guide(), CHAPTERS)), (
        "the guide's schedule is not the planner's: run python -m classroom.guide")
    assert "40 minutes walking through" not in guide()


def test_reading_time_counts_prose_and_code_but_not_exercises(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("import os  # set-up\nimport sys", metadata={"tags": ["remove-cell"]}),
        nbformat.v4.new_markdown_cell("# 3. Title\n\nFive words of prose here."),
        nbformat.v4.new_code_cell("x = 1\n\ny = 2"),
        nbformat.v4.new_markdown_cell(":::{exercise} Not counted\n*Easy · about 10 minutes.*\n\n"
                                      "Many words that belong to the exercise time.\n:::"),
    ]
    path = tmp_path / "03_tiny.ipynb"
    nbformat.write(nb, path)
    tiny = measure(path, 120.0)
    assert (tiny.number, tiny.words, tiny.code_lines, tiny.exercise_min) == (3, 7, 2, 10)
    assert tiny.run_min == 2.0


def _section(number: int) -> str:
    return re.search(rf"^### {number}\. .*?(?=^### |^## |\Z)", guide(), re.M | re.S).group(0)


@pytest.mark.parametrize("path", chapter_notebooks(CHAPTERS), ids=lambda p: p.stem[:2])
def test_the_guides_goals_and_sections_are_the_chapters(path):
    section = _section(int(path.name[:2]))
    goals = goals_of(path)
    assert goals, f"{path.name} states no learning goals"
    listed = re.search(r"^\*\*Learning goals\*\*[^\n]*\n\n((?:- [^\n]*\n)+)", section, re.M)
    assert listed and listed.group(1).splitlines() == goals, "goals not copied word for word"
    line = re.search(r"^\*\*Sections\.\*\* (.*?)\n\n", section, re.M | re.S)
    if line:
        assert lists_in_order(line.group(1), sections_of(path)), "sections not as the chapter has them"
    # in the preface's notation: every letter of their math is in its table or the chapter's own
    allowed = table_symbols() | set(_exceptions(path.name[:2])["local_symbols"])
    text = re.sub(r"`[^`\n]*`", " ", "\n".join(goals) + "\n" + (line.group(1) if line else ""))
    strange = {m: math_letters(m) - allowed for m in re.findall(r"\$([^$\n]+)\$", text)}
    assert not {m: s for m, s in strange.items() if s}, "symbols outside the preface's notation"
