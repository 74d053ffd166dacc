"""The student's book: the course's book without what a student who hands in work must not see.

`make student-book` (scripts/student_book.py) builds the three books with this extension loaded and
``course_edition = "student"``; `make book` never loads it, so the public book (the teacher's edition)
is the same with or without this file. Built from the same executed notebooks, the student's book
leaves out, each time with a short note in the page's language where the piece was:

1. every solution (sphinx-exercise's ``{solution}`` and gated ``{solution-start}`` blocks: the code,
   its outputs, the ``**Answer.**`` cells inside, a lab's fixes), and the output of every exercise's
   check cell, which shows the verdict on the authors' solution (for a prediction exercise: what the
   experiment measured);
2. the answers to the prose's open questions (``{admonition} Answer``);
3. the cells tagged ``lab-solution``, wherever they stand;
4. what ``WITHHELD`` lists: the ablation ladder's measured outputs and the prose that reads them
   (lab 11), the summary that names the five slips (lab 10), and the instructor guide, which holds
   the rubrics.

Everything else stays: the prose, the code, the other figures and outputs, the exercises' texts and
their check calls. A figure whose output is withheld keeps its number and caption (other paragraphs
refer to it) and shows the note in place of the image.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform
from sphinx.util import logging

logger = logging.getLogger(__name__)
ROOT = Path(__file__).resolve().parents[2]
CHECK_CALL = "from utils.exercises import check"
NOTE_CLASS = "course-student-note"


@dataclass(frozen=True)
class Withheld:
    """One piece of a page that the student's book leaves out.

    ``kind``: "outputs" (a code cell's outputs, by the cell's id), "cell" (a whole code cell, or a
    markdown cell's blocks with its headings kept, by id), "section" (a section's own blocks, its
    heading kept, by the section's id) or "page" (all but the page's title)."""

    kind: str
    target: str
    why: str
    note: str = ""  # which note stands in its place (NOTES); the kind's own by default


WITHHELD: dict[str, list[Withheld]] = {
    "chapters/10_lab_find_the_bug": [
        Withheld("section", "what-the-hunt-showed", "names the five slips, the lab's answers",
                 note="answers"),
    ],
    "chapters/11_lab_ablation_ladder": [
        Withheld("outputs", "e14b960d", "rungs 0-4 trained: their losses"),
        Withheld("outputs", "281171fa", "rungs 5-7 trained, and the table of every rung's exact match"),
        Withheld("outputs", "ec90b11b", "the ladder figure: measured bars and the authors' predictions"),
        Withheld("cell", "c5d41f51", "the checks on the ladder: their bounds say what it shows"),
        Withheld("cell", "ebc4d158", "reading the ladder: every step's measured exact match, explained"),
        Withheld("outputs", "37bf9de1", "rung 5 and rung 6 with random later inputs, measured"),
        Withheld("cell", "adac92fa", "the prose that reads those numbers"),
        Withheld("section", "summary", "the ladder's findings, the write-up's answers"),
    ],
    "book/instructor_guide": [
        Withheld("page", "", "rubrics with full answers, the labs' slips and usual mispredictions"),
    ],
}

# What the note says, by kind of piece. Simplified Chinese here; the traditional text is derived with
# the Taiwan edition's own converter (scripts/translations.py), as for the catalogues.
NOTES = {
    "solution": ("The solution is in the teacher's edition of this book.", "解答在本书的教师版中。"),
    "answer": ("The answer is in the teacher's edition of this book.", "答案在本书的教师版中。"),
    "outputs": ("The measured results are in the teacher's edition of this book: run the notebook "
                "to see yours.", "测量结果在本书的教师版中：运行笔记本，就能看到你自己的结果。"),
    "figure": ("This figure's measurements are in the teacher's edition of this book: run the "
               "notebook to draw yours.", "这张图的测量结果在本书的教师版中：运行笔记本，画出你自己的图。"),
    "cell": ("This part reads the measured results; it is in the teacher's edition of this book.",
             "这一部分解读测量结果，收在本书的教师版中。"),
    "section": ("This part reads the measured results; it is in the teacher's edition of this book.",
                "这一部分解读测量结果，收在本书的教师版中。"),
    "answers": ("This part gives the lab's answers; it is in the teacher's edition of this book.",
                "这一部分给出了实验的答案，收在本书的教师版中。"),
    "page": ("The instructor guide is in the teacher's edition of this book: it holds the rubrics "
             "and the labs' answers.", "教师指南在本书的教师版中：其中有评分标准和实验的答案。"),
}


def note_text(kind: str, language: str | None) -> str:
    """The note that stands where a piece of ``kind`` was left out, in ``language``."""
    english, simplified = NOTES[kind]
    if language == "zh_CN":
        return simplified
    if language == "zh_TW":
        return _traditional(simplified)
    return english


def _traditional(text: str) -> str:
    import sys

    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from translations import to_traditional
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    return to_traditional(text)


def note(kind: str, language: str | None) -> nodes.Element:
    """A short, visible note: a paragraph in italics inside a ``note`` admonition."""
    text = note_text(kind, language)
    box = nodes.note("", nodes.paragraph("", "", nodes.emphasis(text, text)), classes=[NOTE_CLASS])
    return box


# ---------------------------------------------------------------------------------------------------
# Finding the pieces
# ---------------------------------------------------------------------------------------------------
def cell_index(node: nodes.Node) -> int | None:
    """The notebook cell a node comes from: myst-nb numbers a cell's lines from (index + 1) * 10000."""
    if isinstance(node, nodes.Element) and node.get("nb_element") == "cell_code":
        return node["cell_index"]
    line = getattr(node, "line", None)
    return line // 10000 - 1 if line and line >= 10000 else None


def is_code_cell(node: nodes.Node) -> bool:
    return isinstance(node, nodes.container) and node.get("nb_element") == "cell_code"


def cell_source(cell: nodes.Element) -> str:
    """The code of a myst-nb code cell container ("" when its input is removed)."""
    return "\n".join(block.astext() for block in cell.findall(nodes.literal_block)
                     if block.parent.get("nb_element") == "cell_code_source")


def output_of(cell: nodes.Element) -> nodes.Element | None:
    for child in cell.children:
        if isinstance(child, nodes.Element) and child.get("nb_element") == "cell_code_output":
            return child
    return None


def is_answer(node: nodes.Node) -> bool:
    """An open question's collapsed answer: ``{admonition} Answer`` (read before the translation)."""
    if not isinstance(node, nodes.admonition):
        return False
    title = node.next_node(nodes.title)
    return "admonition-answer" in node.get("classes", []) or (
        title is not None and title.parent is node and title.astext().strip() == "Answer")


def is_solution(node: nodes.Node) -> bool:
    from sphinx_exercise.nodes import solution_end_node, solution_node, solution_start_node

    return isinstance(node, (solution_node, solution_start_node, solution_end_node))


def is_lab_solution(node: nodes.Node) -> bool:
    return is_code_cell(node) and "lab-solution" in (node.get("cell_metadata") or {}).get("tags", [])


def blocks(document: nodes.document) -> list[nodes.Element]:
    """The page's blocks: the children of the document and of its sections, but sections and titles."""
    found = []
    for parent in [document, *document.findall(nodes.section)]:
        found += [child for child in parent.children if isinstance(child, nodes.Element)
                  and not isinstance(child, (nodes.section, nodes.title))]
    return found


def notebook_cell_ids(path: Path) -> list[str]:
    import nbformat

    return [cell.get("id", "") for cell in nbformat.read(path, as_version=4).cells]


# ---------------------------------------------------------------------------------------------------
# Leaving them out
# ---------------------------------------------------------------------------------------------------
def withhold(document: nodes.document, docname: str, language: str | None,
             cell_ids: list[str] | None = None, withheld: list[Withheld] | None = None) -> list[str]:
    """Leave out of ``document`` what a student must not see; return the problems (a listed piece that
    was not found). ``cell_ids``: the ids of the page's notebook cells, in order (None: not a notebook)."""
    problems: list[str] = []
    # the page's own list first: it finds its pieces by the lines the notebook's cells gave them
    for piece in (WITHHELD.get(docname, []) if withheld is None else withheld):
        if not _withhold_piece(document, piece, language, cell_ids):
            problems.append(f"{docname}: the student's book should leave out {piece.kind} "
                            f"{piece.target!r} ({piece.why}), which the page does not have")
    # 1. solutions, and the check cells' verdicts
    for node in list(document.findall(is_solution)):
        if node.parent is not None:
            node.replace_self(note("solution", language))
    for cell in list(document.findall(is_code_cell)):
        if CHECK_CALL in cell_source(cell):
            output = output_of(cell)
            if output is not None:
                cell.remove(output)
    # 2. the open questions' answers
    for node in list(document.findall(is_answer)):
        node.replace_self(note("answer", language))
    # 3. a lab's fixes outside a solution
    for node in list(document.findall(is_lab_solution)):
        node.parent.remove(node)
    return problems


def _withhold_piece(document: nodes.document, piece: Withheld, language: str | None,
                    cell_ids: list[str] | None) -> bool:
    if piece.kind == "page":
        sections = [s for s in document.children if isinstance(s, nodes.section)]
        if not sections:
            return False
        top = sections[0]
        for child in list(top.children):
            if not isinstance(child, nodes.title):
                top.remove(child)
        top.append(note("page", language))
        for other in sections[1:]:
            document.remove(other)
        return True
    if piece.kind == "section":
        for section in document.findall(nodes.section):
            if piece.target in section["ids"]:
                own = [c for c in section.children if not isinstance(c, (nodes.title, nodes.section))]
                for child in own:
                    section.remove(child)
                position = 1 if section.children and isinstance(section[0], nodes.title) else 0
                section.insert(position, note(piece.note or "section", language))
                return True
        return False
    if cell_ids is None or piece.target not in cell_ids:
        return False
    index = cell_ids.index(piece.target)
    if piece.kind == "outputs":
        for cell in document.findall(is_code_cell):
            if cell["cell_index"] == index:
                output = output_of(cell)
                if output is None:
                    return False
                figures = list(output.findall(nodes.figure))
                output.children = []
                if figures:  # the figure keeps its number and caption: paragraphs refer to it
                    for figure in figures:
                        shell = nodes.figure("", **{k: v for k, v in figure.attributes.items()})
                        shell += note("figure", language)
                        shell += [c for c in figure.children if isinstance(c, nodes.caption)]
                        output += shell
                else:
                    cell.remove(output)
                    cell += note("outputs", language)
                return True
        return False
    if piece.kind == "cell":
        found = [b for b in blocks(document) if cell_index(b) == index]
        if not found:
            return False
        found[0].parent.replace(found[0], note(piece.note or "cell", language))
        for block in found[1:]:
            block.parent.remove(block)
        return True
    raise ValueError(f"unknown kind of withheld piece: {piece.kind!r}")


class StudentBook(SphinxTransform):
    """After sphinx-exercise's merge of gated solutions (priority 10), before the translation (the
    Locale transform, 20: an answer is still titled "Answer") and before the labels are collected
    (850): leave out what a student must not see."""

    default_priority = 12

    def apply(self, **kwargs: Any) -> None:
        if self.config.course_edition != "student":
            return
        docname = self.env.docname
        path = Path(self.env.doc2path(docname))
        cell_ids = notebook_cell_ids(path) if path.suffix == ".ipynb" else None
        language = self.config.language if self.config.language in ("zh_CN", "zh_TW") else None
        for problem in withhold(self.document, docname, language, cell_ids):
            logger.warning(problem, location=docname)


def no_slides_link(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                   doctree: Any) -> None:
    """The lecture decks (classroom/slides.py) are made beside the public book, from its executed
    notebooks: the student's book does not link to them."""
    if app.config.course_edition == "student" and "body" in context:
        context["body"] = re.sub(r'<p class="course-slides-link">.*?</p>', "", context["body"],
                                 flags=re.S)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("course_edition", "teacher", "env")
    app.add_transform(StudentBook)
    app.connect("html-page-context", no_slides_link, priority=900)  # after course_book's links
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
