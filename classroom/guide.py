"""Keep the instructor guide's tables true: each chapter's learning goals and exercises, and each
notebook's run time.

    python -m classroom.guide                  # rewrite book/instructor_guide.md from the notebooks
    python -m classroom.guide --check          # exit 1 if the guide disagrees with the notebooks

The exercise lines ("**Exercises**: Exercise 4.1 *Title* (medium, about 15 min; 2 points); ...") are
read from the chapters, the rubrics of the open questions from the exercise registry
(``utils.exercises``), and the table of each notebook's grading time and peak memory from
``book/_data/resources.json`` (``scripts/chapter_resources.py``). The run times are the ones the last
book build measured: ``make book`` executes every notebook and its execution cache
(``_build/.jupyter_cache``) records the seconds each took, on that machine, with the threads
``utils.choose_threads`` picked there (without a build, the guide's table stays as it is).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

from classroom.exercises import find_exercises
from classroom.schedule_text import schedule

REPO = Path(__file__).resolve().parents[1]
GUIDE = REPO / "book" / "instructor_guide.md"
DIFFICULTY = re.compile(r"^\*(?P<level>Easy|Medium|Hard) · about (?P<minutes>\d+) minutes\.\*", re.M)
POINTS = {"Easy": 1, "Medium": 2, "Hard": 3}
_EXERCISE = re.compile(r"^[`:]{3,}\s*\{exercise\}[ \t]*(?P<title>[^\n]*)\n(?P<body>.*?)^[`:]{3,}\s*$",
                       re.M | re.S)
_TIMES = re.compile(r"(<!-- times: start -->\n)(?:.*?\n)?(<!-- times: end -->)", re.S)
_SCHEDULE = re.compile(r"(<!-- schedule: start -->\n)(?:.*?\n)?(<!-- schedule: end -->)", re.S)


def chapter_notebooks(chapters: Path = REPO / "chapters") -> list[Path]:
    return sorted(chapters.glob("[0-9][0-9]_*.ipynb"))


def title_of(nb: nbformat.NotebookNode) -> str:
    """The notebook's first level-1 heading, without a leading chapter number."""
    for cell in nb.cells:
        match = re.search(r"^# (.+)$", cell.source, re.M) if cell.cell_type == "markdown" else None
        if match:
            return re.sub(r"^(Chapter )?\d+[.:]?\s*", "", match.group(1)).strip()
    return "(untitled)"


def exercises_of(path: Path) -> list[dict]:
    """Name, title, difficulty, minutes and points of each exercise of a notebook, in order."""
    nb = nbformat.read(path, as_version=4)
    blocks = []
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for match in _EXERCISE.finditer(cell.source):
            found = DIFFICULTY.search(match.group("body"))
            level, minutes = (found.group("level"), int(found.group("minutes"))) if found else ("Medium", 15)
            blocks.append({"title": match.group("title").strip(), "level": level, "minutes": minutes,
                           "points": POINTS[level]})
    found = find_exercises(nb, path)
    for block, ex in zip(blocks, found, strict=False):
        block["name"] = ex.name
        entry = ex.registered
        if entry is not None:  # the registry defines it (its text in the notebook says the same)
            block.update(title=entry.title, level=entry.difficulty, minutes=entry.minutes,
                         points=entry.points)
        block["by_hand"] = sum(q.points for q in entry.questions) if entry else 0
    return blocks


def exercise_line(path: Path) -> str:
    parts = [f"{ex.get('name', '?')} *{ex['title']}* ({ex['level'].lower()}, about {ex['minutes']} min; "
             f"{ex['points']} point{'s' if ex['points'] > 1 else ''}"
             + (f" + {ex['by_hand']} by hand" if ex.get("by_hand") else "") + ")"
             for ex in exercises_of(path)]
    return "**Exercises** (each with an auto-check): " + "; ".join(parts) + "."


_RUBRICS = re.compile(r"(<!-- rubrics: start -->\n)(?:.*?\n)?(<!-- rubrics: end -->)", re.S)
_RESOURCES = re.compile(r"(<!-- resources: start -->\n)(?:.*?\n)?(<!-- resources: end -->)", re.S)
RESOURCES = REPO / "book" / "_data" / "resources.json"


def rubrics(chapters: Path) -> str:
    """Every open question of the registered exercises with its points and rubric, chapter by chapter."""
    lines = []
    for path in chapter_notebooks(chapters):
        nb = nbformat.read(path, as_version=4)
        entries = [ex.registered for ex in find_exercises(nb, path)
                   if ex.registered is not None and ex.registered.questions]
        if not entries:
            continue
        lines.append(f"**{int(path.name[:2])}. {title_of(nb)}**\n")
        for entry in entries:
            for k, question in enumerate(entry.questions, start=1):
                worth = f"{question.points} point{'s' if question.points > 1 else ''}"
                items = " ".join(f"({n}) {item.rstrip('.')}." for n, item in
                                 enumerate(question.rubric, start=1))
                line = (f"- {entry.name}, question {k} ({worth}): {question.prompt} "
                        f"A full answer: {items}")
                # the special tokens as code, as everywhere in the book (Markdown would eat <bos>)
                lines.append(re.sub(r"(?<!`)(<(?:bos|eos|pad|unk)>)(?!`)", r"`\1`", line))
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def resources_table(data: Path = RESOURCES) -> str:
    """The table of each notebook's run time, grading time and peak memory (scripts/chapter_resources.py)."""
    import json

    if not data.is_file():
        return "Not measured yet: run `python scripts/chapter_resources.py`.\n"
    record = json.loads(data.read_text())
    rows = ["| Notebook | Run All (s) | Grading one submission (s) | Peak memory (MiB) |",
            "|---|---|---|---|"]
    for stem, row in sorted(record["notebooks"].items()):
        rows.append(f"| {stem} | {row['run_all_s']:.0f} | {row['grading_s']:.0f} | {row['peak_mib']} |")
    return "\n".join(rows) + f"\n\nMeasured {record['measured']}.\n"


def measured_seconds(cache: Path = REPO / "_build" / ".jupyter_cache") -> dict[str, float]:
    """Seconds each notebook took in the last book build, from its execution cache (may be empty)."""
    if not cache.exists():
        return {}
    from jupyter_cache import get_cache

    records = sorted((r for r in get_cache(str(cache)).list_cache_records() if r.data),
                     key=lambda r: r.created)  # the latest run of each notebook wins
    return {Path(r.uri).stem: float(r.data.get("execution_seconds", "nan")) for r in records}


def table_seconds(text: str, chapters: Path = REPO / "chapters") -> dict[str, float]:
    """The run times the guide's time table states now, by notebook (those not measured left out)."""
    found = _TIMES.search(text)
    stems = {int(p.name[:2]): p.stem for p in chapter_notebooks(chapters)}
    rows = re.findall(r"^\| (\d+)\. [^|]*\| (\d+(?:\.\d+)?) \|", found.group(0) if found else "", re.M)
    return {stems[int(n)]: float(s) for n, s in rows if int(n) in stems}


def time_table(chapters: Path, seconds: dict[str, float]) -> str:
    rows = ["| Notebook | Run time, last book build (s) | Exercises | Exercise time (min) |",
            "|---|---|---|---|"]
    for path in chapter_notebooks(chapters):
        nb = nbformat.read(path, as_version=4)
        exercises = exercises_of(path)
        run = f"{seconds[path.stem]:.0f}" if path.stem in seconds else "not measured"
        rows.append(f"| {int(path.name[:2])}. {title_of(nb)} | {run} | {len(exercises)} | "
                    f"{sum(ex['minutes'] for ex in exercises)} |")
    return "\n".join(rows)


_GOALS = re.compile(r"^\*\*Learning goals\*\*[^\n]*\n\n((?:- [^\n]*\n(?:  [^\n]*\n)*)+)", re.M)


def goals_of(path: Path) -> list[str]:
    """The learning goals a notebook states (the list under its "**Learning goals**"), one line each."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        found = _GOALS.search(cell.source + "\n") if cell.cell_type == "markdown" else None
        if found:
            items = re.split(r"^- ", found.group(1), flags=re.M)[1:]
            return ["- " + " ".join(line.strip() for line in item.splitlines()) for item in items]
    return []


def sections_of(path: Path) -> list[str]:
    """The titles of a notebook's sections (its level-2 headings), without Summary and Exercises."""
    nb = nbformat.read(path, as_version=4)
    return [title for cell in nb.cells if cell.cell_type == "markdown"
            for title in re.findall(r"^## (.+?)\s*$", cell.source, re.M)
            if title not in ("Summary", "Exercises")]


def lists_in_order(line: str, titles: list[str]) -> bool:
    """Whether the guide's "**Sections.**" line names every title, word for word and in order (it may
    say more about each, in parentheses)."""
    at, line = 0, " ".join(line.split())
    for title in titles:
        at = line.find(title, at)
        if at < 0:
            return False
        at += len(title)
    return True


def updated_guide(text: str, chapters: Path, seconds: dict[str, float] | None) -> str:
    """The guide with every chapter's learning goals and exercise line (and, given ``seconds``, the
    time table) redone."""
    for path in chapter_notebooks(chapters):
        number = int(path.name[:2])
        section = re.search(rf"^### {number}\. .*?(?=^### |^## |\Z)", text, re.M | re.S)
        if section is None:
            continue
        body = section.group(0)
        goals = goals_of(path)
        if goals:  # as the chapter states them, word for word
            body_goals = _GOALS.search(body)
            if body_goals:
                new_body = body.replace(body_goals.group(1), "\n".join(goals) + "\n", 1)
                text = text.replace(body, new_body, 1)
                body = new_body
        sections = re.search(r"^\*\*Sections\.\*\* (.*?)\n\n", body, re.M | re.S)
        if sections and not lists_in_order(sections.group(1), sections_of(path)):
            new_body = body.replace(sections.group(1), "; ".join(sections_of(path)) + ".", 1)
            text = text.replace(body, new_body, 1)
            body = new_body
        new_line = exercise_line(path)
        if re.search(r"^\*\*Exercises\*\*.*$", body, re.M):
            new_body = re.sub(r"^\*\*Exercises\*\*.*$", new_line.replace("\\", r"\\"), body, count=1,
                              flags=re.M)
        else:
            new_body = body.rstrip("\n") + "\n\n" + new_line + "\n\n"
        text = text.replace(body, new_body, 1)
    # without a fresh measurement, the run times the table states stand (its other columns are redone)
    run = seconds if seconds is not None else table_seconds(text, chapters)
    text = _TIMES.sub(lambda m: m.group(1) + time_table(chapters, run) + "\n" + m.group(2), text)
    text = _SCHEDULE.sub(lambda m: m.group(1) + schedule(chapters, run) + m.group(2), text)
    text = _RUBRICS.sub(lambda m: m.group(1) + rubrics(chapters) + m.group(2), text)
    text = _RESOURCES.sub(lambda m: m.group(1) + resources_table() + m.group(2), text)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m classroom.guide", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report whether the guide is current")
    parser.add_argument("--chapters", type=Path, default=REPO / "chapters")
    parser.add_argument("--guide", type=Path, default=GUIDE)
    args = parser.parse_args(argv)
    text = args.guide.read_text(encoding="utf-8")
    if args.check:
        if updated_guide(text, args.chapters, None) != text:
            print(f"{args.guide}: the goals, sections, exercises, times or schedule disagree with the "
                  "notebooks; "
                  "run python -m classroom.guide")
            return 1
        print(f"{args.guide}: current")
        return 0
    seconds = measured_seconds() or None  # no book built here: keep the table the guide has
    args.guide.write_text(updated_guide(text, args.chapters, seconds), encoding="utf-8")
    print(f"rewrote {args.guide}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
