"""Keep the instructor guide's tables true: each chapter's exercises and each notebook's run time.

    python -m classroom.guide                  # rewrite book/instructor_guide.md from the notebooks
    python -m classroom.guide --check          # exit 1 if the guide disagrees with the notebooks

The exercise lines ("**Exercises**: Exercise 4.1 *Title* (medium, about 15 min; 2 points); ...") are
read from the chapters. The run times are the ones the last book build measured: ``make book``
executes every notebook and its execution cache (``_build/.jupyter_cache``) records the seconds each
took, on that machine, with the threads ``utils.choose_threads`` picked there.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

from classroom.exercises import find_exercises

REPO = Path(__file__).resolve().parents[1]
GUIDE = REPO / "book" / "instructor_guide.md"
DIFFICULTY = re.compile(r"^\*(?P<level>Easy|Medium|Hard) · about (?P<minutes>\d+) minutes\.\*", re.M)
POINTS = {"Easy": 1, "Medium": 2, "Hard": 3}
_EXERCISE = re.compile(r"^[`:]{3,}\s*\{exercise\}[ \t]*(?P<title>[^\n]*)\n(?P<body>.*?)^[`:]{3,}\s*$",
                       re.M | re.S)
_TIMES = re.compile(r"(<!-- times: start -->\n)(?:.*?\n)?(<!-- times: end -->)", re.S)


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
    names = [ex.name for ex in find_exercises(nb, path)]
    for block, name in zip(blocks, names, strict=False):
        block["name"] = name
    return blocks


def exercise_line(path: Path) -> str:
    parts = [f"{ex.get('name', '?')} *{ex['title']}* ({ex['level'].lower()}, about {ex['minutes']} min; "
             f"{ex['points']} point{'s' if ex['points'] > 1 else ''})" for ex in exercises_of(path)]
    return "**Exercises** (each with an auto-check): " + "; ".join(parts) + "."


def measured_seconds(cache: Path = REPO / "_build" / ".jupyter_cache") -> dict[str, float]:
    """Seconds each notebook took in the last book build, from its execution cache (may be empty)."""
    if not cache.exists():
        return {}
    from jupyter_cache import get_cache

    records = sorted((r for r in get_cache(str(cache)).list_cache_records() if r.data),
                     key=lambda r: r.created)  # the latest run of each notebook wins
    return {Path(r.uri).stem: float(r.data.get("execution_seconds", "nan")) for r in records}


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


def updated_guide(text: str, chapters: Path, seconds: dict[str, float] | None) -> str:
    """The guide with every chapter's exercise line (and, given ``seconds``, the time table) redone."""
    for path in chapter_notebooks(chapters):
        number = int(path.name[:2])
        section = re.search(rf"^### {number}\. .*?(?=^### |^## |\Z)", text, re.M | re.S)
        if section is None:
            continue
        body = section.group(0)
        new_line = exercise_line(path)
        if re.search(r"^\*\*Exercises\*\*.*$", body, re.M):
            new_body = re.sub(r"^\*\*Exercises\*\*.*$", new_line.replace("\\", r"\\"), body, count=1,
                              flags=re.M)
        else:
            new_body = body.rstrip("\n") + "\n\n" + new_line + "\n\n"
        text = text.replace(body, new_body, 1)
    if seconds is not None:
        text = _TIMES.sub(lambda m: m.group(1) + time_table(chapters, seconds) + "\n" + m.group(2), text)
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
            print(f"{args.guide}: the exercise lines disagree with the notebooks; "
                  "run python -m classroom.guide")
            return 1
        print(f"{args.guide}: current")
        return 0
    args.guide.write_text(updated_guide(text, args.chapters, measured_seconds()), encoding="utf-8")
    print(f"rewrote {args.guide}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
