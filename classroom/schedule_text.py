"""The guide's schedule section, written from the planner (classroom/schedule.py): how the times are
measured, each notebook's times, and the two plans' tables."""

from __future__ import annotations

from pathlib import Path

from classroom.schedule import (
    CAPSTONE,
    CAPSTONE_AFTER,
    CAPSTONE_INTRO_MIN,
    CAPSTONE_REVIEW_MIN,
    CODE_LINES_PER_MIN,
    INTRO,
    LEAD_WEEKS,
    PLANS,
    PROSE_WORDS_PER_MIN,
    SESSION_MIN,
    WRITE_UP_MIN,
    Notebook,
    Plan,
    Week,
    by_session,
    measure_all,
    plan_weeks,
)


def _numbers(numbers: list[int]) -> str:
    return ", ".join(str(n) for n in numbers) or "–"


def _capstone_cell(plan: Plan, week: Week, notebooks: dict[int, Notebook]) -> str:
    """When the capstone is handed out (the session after chapter 8's end) or due (the last one)."""
    if week.due:
        return f"due in session {week.sessions[-1]}, reviewed in class"
    if not week.handed_out:
        return ""
    split = by_session(plan, week, notebooks)
    session = next(s for s, t in zip(week.sessions, split, strict=True) if INTRO in t)
    return f"handed out in session {session}"


def _sessions_cell(plan: Plan, week: Week, notebooks: dict[int, Notebook]) -> str:
    split = [[n for n in taught if n != INTRO] for taught in by_session(plan, week, notebooks)]
    if len(split) == 1:
        return _numbers(split[0])
    return " · ".join(f"{s}: {_numbers(taught) if taught else 'exercises'}"
                      for s, taught in zip(week.sessions, split, strict=True))


def plan_table(plan: Plan, weeks: list[Week], notebooks: dict[int, Notebook]) -> str:
    """The guide's table of one plan."""
    rows = [f"| Week | Sessions | Notebooks taught, by session | In class (min): teaching + exercises | "
            f"Homework (min) | Total (min, budget {plan.budget}) | Capstone (11) |",
            "|---|---|---|---|---|---|---|"]
    for week in weeks:
        event = _capstone_cell(plan, week, notebooks)
        rows.append(f"| {week.number} | {_numbers(week.sessions)} | "
                    f"{_sessions_cell(plan, week, notebooks)} | {week.notebook_min} + {week.exercise_min} | "
                    f"{week.homework_min} | "
                    f"{week.total_min} | {event} |")
    return "\n".join(rows)


def times_table(notebooks: dict[int, Notebook]) -> str:
    """Each notebook's measured reading, running and exercise time, in minutes."""
    rows = ["| Notebook | Prose (words) | Code (lines) | Reading (min) | Running (min) | "
            "In class: reading + running (min) | Exercises (min) |",
            "|---|---|---|---|---|---|---|"]
    for nb in notebooks.values():
        run = f"{nb.run_min:.1f}" if nb.run_s is not None else "not measured"
        rows.append(f"| {nb.number} | {nb.words} | {nb.code_lines} | {nb.read_min:.0f} | {run} | "
                    f"{nb.class_min} | {nb.exercise_min} |")
    return "\n".join(rows)


def how_it_is_planned(notebooks: dict[int, Notebook]) -> str:
    """The rules of the plans, with their numbers, as the guide states them."""
    short = min(notebooks.values(), key=lambda nb: nb.class_min)
    long = max(notebooks.values(), key=lambda nb: nb.class_min)
    return (
        f"**How the times are measured.** Reading: the words of a notebook's prose at "
        f"{PROSE_WORDS_PER_MIN} words a minute (English words of the English source; technical prose "
        f"with formulas, read to be understood), plus the lines of its code at {CODE_LINES_PER_MIN} "
        f"lines a minute; exercise statements and solutions are exercise time. Running: the run time "
        f"of the table above. Exercises: their estimated minutes. A notebook's class time is its "
        f"reading plus its running time, from {short.class_min} minutes (chapter {short.number}) to "
        f"{long.class_min} (chapter {long.number}).\n\n"
        f"**The capstone.** The ablation ladder (lab {CAPSTONE}) needs chapter {CAPSTONE_AFTER}'s "
        f"Transformer. It is handed out in the session that finishes chapter {CAPSTONE_AFTER}, or a "
        f"later one, at least {LEAD_WEEKS} weeks before the unit ends, with a "
        f"{CAPSTONE_INTRO_MIN}-minute introduction in which every student writes down the predictions "
        f"of Exercise {CAPSTONE}.1. Students then work on it at home beside the other chapters: its "
        f"reading, its runs, its exercises and a {WRITE_UP_MIN}-minute write-up (the predictions, the "
        f"ladder, and one paragraph per rung where the prediction was off by more than 0.2), spread "
        f"evenly over the weeks until the last. It is due in the last session, which spends "
        f"{CAPSTONE_REVIEW_MIN} minutes on it: the ladder read together, and the predictions that "
        f"missed.\n")


def held_back_text(weeks: list[Week]) -> str:
    """When to open the quiz questions that give an exercise away (the bank files them under "after
    the exercises are due"): a chapter's in the week after it is taught, when its homework is due; the
    capstone's after its last session."""
    from classroom.questions import all_questions

    held = sorted({int(q.notebook[:2]) for q in all_questions() if q.spoils})
    count = sum(1 for q in all_questions() if q.spoils)
    def chapters(week: Week) -> str:
        found = [n for n in dict.fromkeys(week.taught) if n in held and n != CAPSTONE]
        return f"chapter{'s' if len(found) > 1 else ''} {_numbers(found)}" if found else ""

    opened = [f"{chapters(week)} in week {week.number + 1}" for week in weeks[:-1] if chapters(week)]
    last = [text for text in (chapters(weeks[-1]), f"lab {CAPSTONE}" if CAPSTONE in held else "")
            if text]
    if last:
        opened.append(f"{' and '.join(last)} after the last session")
    return (f"**Quiz questions held back.** {count} questions of the bank give an exercise away; each "
            "chapter files them apart, under \"after the exercises are due\". Open a chapter's once its "
            f"homework is due: {'; '.join(opened)}.")


def schedule(chapters: Path, seconds: dict[str, float]) -> str:
    """The generated part of the guide's schedule section: the rules, the times, then the two plans."""
    notebooks = measure_all(chapters, seconds)
    parts = [how_it_is_planned(notebooks), times_table(notebooks), ""]
    for plan in PLANS:
        weeks = plan_weeks(plan, notebooks)
        totals = [week.total_min for week in weeks]
        parts += [f"**{plan.name}**, {plan.sessions_per_week} session"
                  f"{'s' if plan.sessions_per_week > 1 else ''} of {SESSION_MIN} minutes a week, "
                  f"notebooks {min(plan.notebooks)} to {max(plan.notebooks)}; budget {plan.budget} "
                  f"minutes a week ({plan.class_budget} in class, up to {plan.homework_budget} at "
                  f"home).", "", plan_table(plan, weeks, notebooks), "",
                  f"Every week is within the budget of {plan.budget} minutes: from {min(totals)} to "
                  f"{max(totals)}.", "", held_back_text(weeks), ""]
    return "\n".join(parts)
