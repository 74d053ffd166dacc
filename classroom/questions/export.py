"""Write the question bank in the formats learning platforms import.

    python -m classroom questions --out question_bank            # all three languages
    python -m classroom questions --out question_bank --language zh_CN

For each language it writes

- ``<lang>/moodle/attention_course.gift``: Moodle's GIFT, one file with a ``$CATEGORY`` per chapter,
  and below it one, "after the exercises are due", for the questions that give an exercise away
  (Question bank > Import > GIFT format, "Get category from file"); text in HTML, math as ``\\( .. \\)``
  for Moodle's MathJax filter, GIFT's special characters ``~ = # { } :`` and the backslash escaped;
- ``<lang>/canvas/NN_name.zip``: a QTI 1.2 package per chapter for Canvas (Settings > Import course
  content > QTI .zip file), made by text2qti (a maintained converter, on PyPI) from the text it reads,
  which is kept beside it as ``NN_name.txt``; math becomes Canvas's own equation images. The questions
  that give an exercise away are a quiz of their own, ``NN_name_after_due.zip``.

Every question carries its explanation as general feedback, shown after an attempt.
"""

from __future__ import annotations

import functools
import html
import re
from pathlib import Path

import nbformat

from classroom.questions import (
    CODE,
    LANGUAGES,
    MATH,
    REPO,
    Question,
    Rendered,
    all_questions,
    load_bank,
    render,
)

BANK_NAME = {"en": "Attention course (English)", "zh_CN": "注意力课程（简体中文）",
             "zh_TW": "注意力課程（繁體中文）"}
GIFT_SPECIAL = "~=#{}:"
PIECES = re.compile(f"({CODE.pattern}|{MATH.pattern})")


@functools.cache
def chapter_title(notebook: str, language: str) -> str:
    """'4. Self-attention', from the notebook of that language (the Chinese ones in translations/)."""
    folder = REPO / "chapters" if language == "en" else REPO / "translations" / language / "chapters"
    nb = nbformat.read(folder / f"{notebook}.ipynb", as_version=4)
    for cell in nb.cells:
        found = re.search(r"^# (.+)$", cell.source, re.M) if cell.cell_type == "markdown" else None
        if found:
            title = re.sub(r"^\d+\\?\.\s*", "", found.group(1)).strip()
            return f"{int(notebook[:2])}. {title}"
    raise ValueError(f"{notebook} has no title")


# ---------------------------------------------------------------------------------------------------
# Moodle GIFT
# ---------------------------------------------------------------------------------------------------
def gift_escape(text: str) -> str:
    """A backslash before each of GIFT's special characters and before every backslash (LaTeX's):
    Moodle's reader turns ``\\\\`` into one backslash before it looks for ``\\n`` (a new line) or
    ``\\{`` (a brace), so ``\\neq`` and ``\\{`` reach MathJax as written."""
    return "".join("\\" + c if c in GIFT_SPECIAL or c == "\\" else c for c in text)


def to_html(text: str) -> str:
    """The bank's markup as HTML: `code` -> <code>, $math$ -> \\( math \\) for MathJax."""
    out = []
    for piece in PIECES.split(text):
        if CODE.fullmatch(piece):
            out.append(f"<code>{html.escape(piece[1:-1], quote=False)}</code>")
        elif MATH.fullmatch(piece):
            out.append(f"\\({html.escape(piece[1:-1], quote=False)}\\)")
        else:
            out.append(html.escape(piece, quote=False))
    return "".join(out)


def gift_number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.6g}"


def gift_question(q: Rendered, source: str) -> str:
    """One question in GIFT: ``::id::[html]stem{answers####explanation}``."""
    head = f"// {q.id} ({q.kind}) from {source}\n::{gift_escape(q.id)}::[html]{gift_escape(to_html(q.stem))}"
    feedback = f"####{gift_escape(to_html(q.explanation))}"
    if q.kind == "numeric":
        return f"{head}{{#{gift_number(q.answer)}:{gift_number(q.tolerance)}\n\t{feedback}\n}}"
    lines = [("=" if k == q.correct else "~") + gift_escape(to_html(option))
             for k, option in enumerate(q.options)]
    return head + "{\n" + "".join(f"\t{line}\n" for line in lines) + f"\t{feedback}\n}}"


# The category (Moodle) or quiz (Canvas) of a chapter's questions that give an exercise away: open it
# only once the chapter's exercises are due (the guide's schedule says when).
AFTER_DUE = {"en": "after the exercises are due", "zh_CN": "练习截止之后", "zh_TW": "練習截止之後"}


def held_back(questions: tuple[Question, ...] | list[Question], after: bool) -> list[Question]:
    """The questions that give an exercise away (``after=True``), or the others."""
    return [q for q in questions if bool(q.spoils) == after]


def gift_bank(language: str) -> str:
    """The whole bank in one GIFT file, one category per chapter, and in it one for the questions that
    give an exercise away (``AFTER_DUE``)."""
    parts = [f"// The question bank of the course, {BANK_NAME[language]}: {len(all_questions())} "
             "questions.\n// Written by `python -m classroom questions` from classroom/questions/*.yaml: "
             "edit those, not this file.\n"]
    for notebook, questions in load_bank().items():
        category = f"$course$/top/{BANK_NAME[language]}/{chapter_title(notebook, language)}"
        for after in (False, True):
            chosen = held_back(questions, after)
            if chosen:
                parts.append(f"$CATEGORY: {category}{'/' + AFTER_DUE[language] if after else ''}\n")
                parts += [gift_question(render(q, language), q.source) + "\n" for q in chosen]
    return "\n".join(parts)


# ---------------------------------------------------------------------------------------------------
# Canvas: QTI through text2qti
# ---------------------------------------------------------------------------------------------------
def to_markdown(text: str) -> str:
    """The bank's markup as text2qti's Markdown: code and $math$ as they are, the rest escaped."""
    out = []
    for piece in PIECES.split(text):
        if CODE.fullmatch(piece) or MATH.fullmatch(piece):
            out.append(piece)
        else:
            piece = piece.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            # Markdown's own characters, and those the smarty extension would make typographic
            out.append(re.sub(r"([\\`*_\[\]{}#+!|\"'.-])", r"\\\1", piece))
    return "".join(out)


def qti_number(x: float, tolerance: float) -> str:
    if float(x).is_integer() and tolerance == 0:
        return str(int(x))
    return f"{x:.6g} +- {tolerance:g}"


def text2qti_source(notebook: str, language: str, after: bool = False) -> str:
    """The chapter's questions in text2qti's plain-text quiz format: those that give no exercise away,
    or (``after``) those that do, a quiz of their own to open once the exercises are due."""
    title = chapter_title(notebook, language)
    if after:
        title = f"{title} ({AFTER_DUE[language]})"
    lines = [f"Quiz title: {title}",
             f"Quiz description: {BANK_NAME[language]}, {title}: generated by python -m classroom "
             f"questions from classroom/questions/ch{notebook[:2]}.yaml.", ""]
    for n, question in enumerate(held_back(load_bank()[notebook], after), start=1):
        q = render(question, language)
        lines += [f"Title: {q.id}", "Points: 1", f"{n}.  {to_markdown(q.stem)}",
                  f"... {to_markdown(q.explanation)}"]
        if q.kind == "numeric":
            lines.append(f"=   {qti_number(q.answer, q.tolerance)}")
        else:
            for k, option in enumerate(q.options):
                label = f"{'*' if k == q.correct else ''}{chr(ord('a') + k)})"
                lines.append(f"{label:<4}{to_markdown(option)}")
        lines.append("")
    return "\n".join(lines)


def qti_package(source: str) -> bytes:
    """text2qti's QTI zip of a quiz text. Its default configuration is used as it stands (no user
    file is read or written): LaTeX becomes Canvas equation images served by the course's own Canvas."""
    from text2qti.config import Config
    from text2qti.qti import QTI
    from text2qti.quiz import Quiz

    return QTI(Quiz(source, config=Config(), source_name="<question bank>")).zip_bytes()


# ---------------------------------------------------------------------------------------------------
# Everything
# ---------------------------------------------------------------------------------------------------
def write_bank(out: Path, languages: tuple[str, ...] = LANGUAGES) -> list[Path]:
    """Write the GIFT file and the QTI packages of each language under ``out``; returns the files."""
    written = []
    for language in languages:
        moodle, canvas = out / language / "moodle", out / language / "canvas"
        moodle.mkdir(parents=True, exist_ok=True)
        canvas.mkdir(parents=True, exist_ok=True)
        gift = moodle / "attention_course.gift"
        gift.write_text(gift_bank(language), encoding="utf-8")
        written.append(gift)
        for notebook, questions in load_bank().items():
            for after in (False, True):
                if not held_back(questions, after):
                    continue
                name = f"{notebook}_after_due" if after else notebook
                source = text2qti_source(notebook, language, after)
                (canvas / f"{name}.txt").write_text(source, encoding="utf-8")
                (canvas / f"{name}.zip").write_bytes(qti_package(source))
                written += [canvas / f"{name}.txt", canvas / f"{name}.zip"]
    return written


def summary() -> str:
    """Questions per chapter and kind, as a small table."""
    rows = ["chapter                          choice  numeric  shape  total"]
    for notebook, questions in load_bank().items():
        counts = [sum(q.kind == kind for q in questions) for kind in ("choice", "numeric", "shape")]
        rows.append(f"{notebook:<32} {counts[0]:>6}  {counts[1]:>7}  {counts[2]:>5}  {len(questions):>5}")
    return "\n".join(rows)
