"""Three touches the course's book needs on top of Jupyter Book 1.x and sphinx-exercise.

1. Exercises are numbered per chapter, "Exercise 4.2" for the second exercise of
   ``chapters/04_*.ipynb``, as the checks, the student edition and the instructor guide number them
   (sphinx-exercise alone counts across the whole book: "Exercise 19").
2. The ``### BEGIN SOLUTION`` / ``### END SOLUTION`` lines that mark a solution for the student edition
   and nbgrader stay in the notebooks but are not shown on the page.
3. The page: code boxes wide enough for the notebooks' 88 columns, and figures that open at full size
   on a click (``static/course_book.css`` and ``static/course_book.js``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

STATIC = Path(__file__).resolve().parent / "static"
MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")
_CHAPTER = re.compile(r"(?:^|/)(\d{2})_[^/]*$")


def chapter_of(docname: str) -> int | None:
    """The chapter number of a chapter page's docname (``chapters/04_self_attention`` -> 4)."""
    match = _CHAPTER.search(docname)
    return int(match.group(1)) if match else None


def renumber_exercises(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """Give each chapter's exercises the numbers N.1, N.2, ... in the order the chapter shows them."""
    for docname, numbers in env.toc_fignumbers.items():
        chapter = chapter_of(docname)
        exercises = numbers.get("exercise")
        if chapter is None or not exercises:
            continue
        in_order = sorted(exercises, key=lambda target: exercises[target])
        numbers["exercise"] = {target: (chapter, k) for k, target in enumerate(in_order, start=1)}
    return []


def strip_solution_markers(source: str) -> str:
    """The code without the lines that hold only a solution marker."""
    return "\n".join(line for line in source.split("\n") if line.strip() not in MARKERS)


def hide_markers(app: Sphinx, doctree: nodes.document) -> None:
    """Drop the solution-marker lines from every code block of the page."""
    for block in list(doctree.findall(nodes.literal_block)):
        text = block.astext()
        if not any(marker in text for marker in MARKERS):
            continue
        cleaned = strip_solution_markers(text)
        block.children = [nodes.Text(cleaned)]
        block.rawsource = cleaned


def add_static_files(app: Sphinx) -> None:
    """Serve static/ with the book and load its stylesheet and script on every page."""
    app.config.html_static_path.append(str(STATIC))
    app.add_css_file("course_book.css")
    app.add_js_file("course_book.js")


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", add_static_files)
    app.connect("env-get-updated", renumber_exercises, priority=900)  # after Sphinx numbers figures
    app.connect("doctree-read", hide_markers)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
