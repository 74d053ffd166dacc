"""Plan the unit from the notebooks' measured times: a 5-week and a 10-week schedule for the guide.

    python -m classroom.schedule     # print the guide's schedule section (classroom/schedule_text.py)

Per notebook it measures three times:

- reading: the words of its Markdown prose (English words of the English source, not characters of
  a translation) at ``PROSE_WORDS_PER_MIN``, plus the non-blank lines of its code cells at
  ``CODE_LINES_PER_MIN``; exercise statements, solutions, checks and removed set-up cells are left
  out (they belong to the exercise time or to no one);
- running: the seconds the last book build measured, as the guide's time table states them;
- exercises: the estimated minutes of its exercises (``classroom.guide.exercises_of``).

A notebook is taught in class by walking through it at reading pace, running its cells: its class
time is its reading plus its running time. Its exercises are that week's homework, less the class
time the week has left over (exercises in pairs). The capstone (lab 11) is handed out with a short
introduction once chapter 8, its prerequisite, is taught, at least ``LEAD_WEEKS`` weeks before the
end; it is worked on at home (its reading, runs, exercises and a write-up, spread evenly over the
weeks until the last) and reviewed in class in the last session, where it is due. Notebooks go to
weeks in teaching order, each week within its class time and its homework budget, and the split
that balances the weekly homework best wins.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from classroom.exercises import find_exercises

REPO = Path(__file__).resolve().parents[1]
PROSE_WORDS_PER_MIN = 120  # English technical prose with formulas and figures, read to be understood
CODE_LINES_PER_MIN = 20  # code read line by line, before it runs
SESSION_MIN = 90
RECAP_MIN = 10  # at the start of every session: the last chapter's misconceptions as questions
CAPSTONE, CAPSTONE_AFTER = 11, 8  # the ablation ladder needs chapter 8's full Transformer
CAPSTONE_INTRO_MIN = 20  # in class at hand-out: the rungs, and every student's predictions (11.1)
CAPSTONE_REVIEW_MIN = 45  # in class when it is due: the ladder read together, the predictions that missed
WRITE_UP_MIN = 90  # the capstone's write-up: predictions, ladder, a paragraph per missed rung
INTRO = -1  # the capstone's introduction, in a session's list of notebooks
LEAD_WEEKS = 2  # the capstone is handed out at least this many weeks before the unit ends

_WORD = re.compile(r"[A-Za-z0-9]+(?:['’-][A-Za-z0-9]+)*")
_BLOCK = re.compile(r"^([`:]{3,})\s*\{(?:exercise|solution)\}.*?^\1\s*$", re.M | re.S)
_COMMENT = re.compile(r"<!--.*?-->", re.S)


@dataclass(frozen=True)
class Notebook:
    """One notebook's measured times, in minutes."""

    number: int
    words: int
    code_lines: int
    run_s: float | None  # None: not measured yet
    exercise_min: int

    @property
    def read_min(self) -> float:
        return self.words / PROSE_WORDS_PER_MIN + self.code_lines / CODE_LINES_PER_MIN

    @property
    def run_min(self) -> float:
        return (self.run_s or 0) / 60

    @property
    def class_min(self) -> int:
        """Walking through it in class: reading plus running, in whole minutes."""
        return math.ceil(self.read_min + self.run_min)


def measure(path: Path, run_s: float | None) -> Notebook:
    """Words of prose, lines of code and exercise minutes of one notebook (see the module's doc)."""
    from classroom.guide import exercises_of

    nb = nbformat.read(path, as_version=4)
    skip: set[int] = set()
    for ex in find_exercises(nb, path):
        skip |= set(ex.solution_cells) | set(ex.lab_cells) | {ex.check_cell, ex.text_cell}
    gated = False
    words = lines = 0
    for i, cell in enumerate(nb.cells):
        opens = cell.cell_type == "markdown" and "{solution-start}" in cell.source
        closes = cell.cell_type == "markdown" and "{solution-end}" in cell.source
        gated = gated or opens
        hidden = "remove-cell" in cell.get("metadata", {}).get("tags", [])
        if cell.cell_type == "markdown" and not hidden:
            words += len(_WORD.findall(_COMMENT.sub(" ", _BLOCK.sub(" ", cell.source))))
        elif cell.cell_type == "code" and not hidden and not gated and i not in skip:
            lines += sum(1 for line in cell.source.splitlines() if line.strip())
        gated = gated and not closes
    return Notebook(int(path.name[:2]), words, lines, run_s,
                    sum(ex["minutes"] for ex in exercises_of(path)))


@dataclass(frozen=True)
class Plan:
    """A unit's shape: weeks, sessions a week, the homework budget and the notebooks taught."""

    name: str
    weeks: int
    sessions_per_week: int
    homework_budget: int  # minutes a week
    notebooks: tuple[int, ...]

    @property
    def class_budget(self) -> int:
        return self.sessions_per_week * SESSION_MIN

    @property
    def budget(self) -> int:
        return self.class_budget + self.homework_budget


PLANS = (
    Plan("5 weeks", 5, 2, 240, tuple(range(12))),  # chapters 12 and 13: an optional sixth week
    Plan("10 weeks", 10, 1, 150, tuple(range(14))),  # chapters 12 and 13 as well
)


@dataclass
class Week:
    number: int
    sessions: list[int]
    taught: list[int]  # notebooks walked through in class this week, in order
    notebook_min: int  # class time on notebooks, recaps and the capstone's introduction or review
    exercise_min: int  # class time left for exercises in pairs
    homework_min: int
    handed_out: list[int] = field(default_factory=list)
    due: list[int] = field(default_factory=list)

    @property
    def class_min(self) -> int:
        return self.notebook_min + self.exercise_min

    @property
    def total_min(self) -> int:
        return self.class_min + self.homework_min


def teaching_order(plan: Plan) -> list[int]:
    """The order notebooks are walked through: by number, the capstone's review last."""
    return [n for n in plan.notebooks if n != CAPSTONE] + [CAPSTONE]


def capstone_homework(capstone: Notebook) -> int:
    """Minutes of the capstone's work at home: its reading, runs, exercises and the write-up."""
    return math.ceil(capstone.read_min + capstone.run_min) + capstone.exercise_min + WRITE_UP_MIN


def _week(plan: Plan, number: int, group: list[Notebook], handout: int, share: int) -> Week | None:
    """Week ``number`` teaching ``group``, or None when it does not fit its class time or budget."""
    last = number == plan.weeks
    extra = (CAPSTONE_INTRO_MIN if number == handout else 0) + (CAPSTONE_REVIEW_MIN if last else 0)
    recaps = RECAP_MIN * plan.sessions_per_week
    used = recaps + extra + sum(nb.class_min for nb in group)
    if used > plan.class_budget:
        return None
    left = plan.class_budget - used
    work = sum(nb.exercise_min for nb in group) + (share if number >= handout else 0)
    in_class = min(left, work)
    homework = work - in_class
    if homework > plan.homework_budget:
        return None
    first = (number - 1) * plan.sessions_per_week + 1
    return Week(number, list(range(first, first + plan.sessions_per_week)),
                [nb.number for nb in group] + ([CAPSTONE] if last else []),
                used, in_class, homework, [CAPSTONE] if number == handout else [],
                [CAPSTONE] if last else [])


def plan_weeks(plan: Plan, notebooks: dict[int, Notebook]) -> list[Week]:
    """The notebooks of ``plan`` in teaching order, split into its weeks (see the module's doc).

    Every split into consecutive groups is tried (a dynamic programme over notebooks and weeks, for
    each week the capstone can be handed out in); a week must fit its class time and homework budget,
    and the smallest sum of squared weekly homework wins (the most even split)."""
    order = [notebooks[n] for n in teaching_order(plan) if n != CAPSTONE]
    after = next(k for k, nb in enumerate(order) if nb.number == CAPSTONE_AFTER)
    work = capstone_homework(notebooks[CAPSTONE])
    best: tuple[int, list[Week]] | None = None
    for handout in range(1, plan.weeks - LEAD_WEEKS + 1):
        share = math.ceil(work / (plan.weeks - handout + 1))
        # cost[w][k]: the best (sum of squares, weeks) that teaches order[:k] in weeks 1..w
        cost: list[dict[int, tuple[int, list[Week]]]] = [{0: (0, [])}]
        for w in range(1, plan.weeks + 1):
            cost.append({})
            for k0, (c0, weeks0) in cost[w - 1].items():
                for k in range(k0, len(order) + 1):
                    # chapter 8 is taught by the end of the hand-out week, before the introduction
                    if w == handout and k <= after:
                        continue
                    if w > handout and k0 <= after:
                        break
                    week = _week(plan, w, order[k0:k], handout, share)
                    if week is None:
                        continue
                    c = c0 + week.homework_min ** 2
                    if k not in cost[w] or c < cost[w][k][0]:
                        cost[w][k] = (c, weeks0 + [week])
        done = cost[plan.weeks].get(len(order))
        if done is not None and (best is None or done[0] < best[0]):
            best = done
    if best is None:
        raise ValueError(f"the {plan.name} plan cannot fit the notebooks in its budget")
    return best[1]


def measure_all(chapters: Path, seconds: dict[str, float]) -> dict[int, Notebook]:
    from classroom.guide import chapter_notebooks

    return {int(p.name[:2]): measure(p, seconds.get(p.stem)) for p in chapter_notebooks(chapters)}


def by_session(plan: Plan, week: Week, notebooks: dict[int, Notebook]) -> list[list[int]]:
    """The notebooks each session of ``week`` walks through, in order; a notebook that runs over the
    end of a session is continued in the next one. ``INTRO`` stands for the capstone's introduction
    (after chapter 8); its review takes the last session."""
    items = [(n, notebooks[n].class_min if n != CAPSTONE else CAPSTONE_REVIEW_MIN) for n in week.taught]
    if week.handed_out:
        at = week.taught.index(CAPSTONE_AFTER) + 1 if CAPSTONE_AFTER in week.taught else 0
        items.insert(at, (INTRO, CAPSTONE_INTRO_MIN))
    review = items.pop() if week.due else None  # it takes the last session, whatever is left
    sessions: list[list[int]] = [[] for _ in week.sessions]
    k, room = 0, SESSION_MIN - RECAP_MIN
    for number, minutes in items:
        while True:
            if number not in sessions[k]:
                sessions[k].append(number)
            used = min(room, minutes)
            minutes, room = minutes - used, room - used
            if minutes == 0 or k == len(sessions) - 1:
                break
            k, room = k + 1, SESSION_MIN - RECAP_MIN
        if room == 0 and k < len(sessions) - 1:
            k, room = k + 1, SESSION_MIN - RECAP_MIN
    if review is not None:
        sessions[-1].append(review[0])
    return sessions


def main() -> int:
    from classroom.guide import GUIDE, table_seconds
    from classroom.schedule_text import schedule

    print(schedule(REPO / "chapters", table_seconds(GUIDE.read_text(encoding="utf-8"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
