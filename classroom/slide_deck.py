"""A lecture deck of one notebook (classroom/slides.py tells the whole story): its slides from the
cells' slide types, the blocks of a slide too tall for it shared out over several, and the reveal.js
page."""

from __future__ import annotations

import html
import importlib.util
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from classroom.exercises import find_exercises
from classroom.markdown import myst_to_markdown
from classroom.slide_content import (
    _DETAILS,
    SlidesError,
    before_exercises,
    code_on_slide,
    fill_glue,
    first_sentence,
    glue_values,
    markdown_on_slide,
    markdown_parser,
    slide_type,
)

REPO = Path(__file__).resolve().parents[1]
WORDS_PER_MINUTE = 150  # speaking pace for the English notes
HAN_PER_MINUTE = 250  # ... and for the Chinese notes, in Han characters
FIGURE_MINUTES = 1.0  # time to look at a figure, an equation or a code block with the class

WORDS = {
    "en": {"deck": "Slides", "chapter": "The chapter in the book", "notes": "Speaker notes: press S",
           "figure": "Fig.", "continued": "continued", "lang": "en"},
    "zh_CN": {"deck": "幻灯片", "chapter": "本章在书中的页面", "notes": "演讲者备注：按 S 键",
              "figure": "图", "continued": "续", "lang": "zh-CN"},
    "zh_TW": {"deck": "投影片", "chapter": "本章在書中的頁面", "notes": "講者備註：按 S 鍵",
              "figure": "圖", "continued": "續", "lang": "zh-TW"},
}



def _translations_module():
    """scripts/translations.py (its catalogue reader), imported: scripts/ is not a package."""
    spec = importlib.util.spec_from_file_location("course_translations", REPO / "scripts" / "translations.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------------------------------------------
# A deck
# ---------------------------------------------------------------------------------------------------
@dataclass
class Slide:
    title: str = ""  # the heading that opens it, or the section's heading repeated
    body: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    vertical: bool = False
    figures: int = 0
    blocks: int = 0
    has_heading: bool = False


@dataclass
class Deck:
    stem: str
    language: str
    title: str
    slides: list[Slide]
    images: list[tuple[str, bytes]]

    def notes_text(self) -> str:
        return re.sub(r"<[^>]+>", " ", " ".join(" ".join(s.notes) for s in self.slides))

    def minutes(self) -> float:
        """Time to say the notes, plus a moment for each figure and code block shown."""
        text = html.unescape(self.notes_text())
        if self.language == "en":
            speaking = len(re.findall(r"[A-Za-z0-9]+", text)) / WORDS_PER_MINUTE
        else:
            speaking = len(re.findall(r"[\u4e00-\u9fff]", text)) / HAN_PER_MINUTE
        shown = sum(s.figures + s.blocks for s in self.slides)
        return speaking + FIGURE_MINUTES * shown


def _caption_lookup(language: str, stem: str):
    if language == "en":
        return lambda text: text
    translations = _translations_module()
    missing: list[str] = []
    return translations.catalogue_lookup(language, f"chapters/{stem}", missing)


def build_deck(stem: str, executed: nbformat.NotebookNode, language: str = "en",
               text: nbformat.NotebookNode | None = None, numbers: dict[str, str] | None = None,
               glued: dict[str, dict] | None = None) -> Deck:
    """The deck of one notebook: slide types and outputs from ``executed`` (the English run), the
    markdown from ``text`` (the same notebook in ``language``; default: ``executed``), the glued values
    from ``executed``'s glue outputs and ``glued`` (name -> output data)."""
    text = text or executed
    words = WORDS[language]
    if len(text.cells) != len(executed.cells):
        raise SlidesError(f"{stem} ({language}): the text has {len(text.cells)} cells, the executed "
                          f"notebook {len(executed.cells)}: run `python scripts/translations.py notebooks`")
    values = glue_values(executed) | (glued or {})
    names = {label: f"{words['figure']} {n}" for label, n in (numbers or {}).items()}
    names.update({ex.label: ex.name for ex in find_exercises(executed, stem) if ex.label})
    caption_of = _caption_lookup(language, stem)
    md = markdown_parser()
    slides: list[Slide] = []
    images: list[tuple[str, bytes]] = []
    section = ""
    title = ""
    skipping = False  # from the solutions' start marker to its end
    for cell, said in zip(executed.cells, text.cells, strict=True):
        kind = slide_type(cell)
        source = said.source if cell.cell_type == "markdown" else cell.source
        if cell.cell_type == "markdown":
            if "{solution-start}" in source:
                skipping = True
            if "{solution-end}" in source:
                skipping = False
                continue
        if skipping or kind == "skip" or "remove-cell" in cell.get("metadata", {}).get("tags", []):
            continue
        if cell.cell_type == "markdown":
            if re.search(r"[`:]{3,}\{(exercise|solution)", before_exercises(cell.source, source)):
                raise SlidesError(f"{stem}: cell {cell.get('id')} holds an exercise or a solution; "
                                  "mark it skip (a deck never shows the exercises)")
            source = before_exercises(cell.source, source)
            plain = myst_to_markdown(fill_glue(source, values, f"{stem} cell {cell.get('id')}"), names)
            shown = markdown_on_slide(_DETAILS.sub("", plain))
        elif cell.cell_type == "code":
            meta = cell.get("metadata", {}).get("mystnb", {}).get("figure", {})
            caption = caption_of(meta.get("caption", "")) if meta.get("caption") else ""
            short = md.renderInline(first_sentence(caption)) if caption else ""
            shown = code_on_slide(cell, short, images, stem, language)
            if caption:
                shown.notes.append(f"<p>{md.renderInline(caption)}</p>")
        else:
            continue
        for heading in shown.headings:
            plain_heading = re.sub(r"<[^>]+>", "", heading).strip()
            if heading.startswith("<h1"):
                title = title or plain_heading
            elif heading.startswith("<h2"):
                section = heading
        if kind == "notes":
            if not slides:
                raise SlidesError(f"{stem}: the first marked cell is notes; it needs a slide before it")
            slides[-1].notes += [h for h in shown.headings] + shown.notes
            continue
        if kind in ("slide", "subslide") or not slides:
            slides.append(Slide(vertical=kind == "subslide"))
        current = slides[-1]
        body = shown.headings + shown.html
        if not current.body and not shown.headings and section:
            current.title = section.replace("<h2", "<h2 class=\"repeat\"", 1)
        if kind == "fragment":
            body = [f'<div class="fragment">{"".join(body)}</div>'] if body else []
        current.body += body
        current.notes += shown.notes
        current.figures += shown.figures
        current.blocks += shown.blocks
        current.has_heading = current.has_heading or bool(shown.headings)
    for k in range(len(slides) - 1, 0, -1):  # a slide left empty (a figure drawn only with a knob on)
        if not slides[k].body:
            slides[k - 1].notes += slides[k].notes
            del slides[k]
    if not slides:
        raise SlidesError(f"{stem}: no cell is marked as a slide (metadata.slideshow.slide_type)")
    return Deck(stem=stem, language=language, title=title or stem, slides=slides, images=images)


SLIDE_HEIGHT = 720  # reveal.js's slide size (slides.js), in the slide's own pixels
SLIDE_WIDTH = 1280
ROOM = 630  # height the blocks of one slide may fill: the slide less its margins and slide number
LINE_UNITS = 80  # a line of text: this many Latin letters wide (a Han character counts two)


def _text_units(fragment: str) -> int:
    """How wide a piece of HTML is, in Latin letters (a Han character counts two, TeX about half)."""
    text = html.unescape(re.sub(r"<[^>]+>", "", fragment))
    math = sum(len(m) for m in re.findall(r"\\\(.*?\\\)", text, flags=re.S))
    han = len(re.findall(r"[\u3000-\u9fff\uff00-\uffef]", text))
    return len(text) - math + math // 2 + han


def block_height(block: str) -> int:
    """A rough height of one block of a slide (in the slide's pixels), to share blocks out among
    slides; the browser test measures the real one."""
    inner = re.sub(r'^<div class="fragment">(.*)</div>$', r"\1", block, flags=re.S)
    if inner.startswith("<figure"):
        return 560
    if inner.startswith("<h1"):
        return 40 + 70 * -(-_text_units(inner) // 40)
    if inner.startswith("<h2") or inner.startswith("<h3"):
        return 25 + 50 * -(-_text_units(inner) // 55)
    if inner.startswith("<pre"):
        return 30 + 17 * inner.count("\n") + 17
    if inner.startswith('<div class="math"'):
        return 40 + 48 * (inner.count("\\\\") + 1)
    if inner.startswith("<table") or inner.startswith('<div class="output"'):
        rows = re.findall(r"<tr.*?</tr>", inner, flags=re.S) or [inner]
        return 20 + sum(12 + 21 * max(2, -(-_text_units(row) // 95)) for row in rows)
    if inner.startswith("<ul") or inner.startswith("<ol"):
        items = re.findall(r"<li>(.*?)</li>", inner, flags=re.S)
        return sum(14 + 42 * -(-_text_units(item) // (LINE_UNITS - 6)) + 75 * item.count('class="math"')
                   for item in items)
    if inner.startswith('<div class="box"'):
        return 40 + 40 * -(-_text_units(inner) // (LINE_UNITS - 6))
    return 20 + 40 * -(-_text_units(inner) // LINE_UNITS)


def paginate(deck: Deck) -> list[Slide]:
    """Each slide as it will be shown: one whose blocks would not fit goes on over as many slides as it
    needs, its title repeated ("continued"); its notes stay with its first part."""
    pages: list[Slide] = []
    continued = WORDS[deck.language]["continued"]
    for slide in deck.slides:
        title_height = block_height(slide.title) if slide.title else 0
        parts: list[list[str]] = [[]]
        used = title_height
        for block in slide.body:
            height = block_height(block)
            if parts[-1] and used + height > ROOM:
                parts.append([])
                used = title_height
            parts[-1].append(block)
            used += height
        heading = slide.title or next((b for b in slide.body if re.match(r"<h[1-3]", b)), "")
        for k, blocks in enumerate(parts):
            if k == 0:
                pages.append(Slide(title=slide.title, body=blocks, notes=slide.notes,
                                   vertical=slide.vertical, figures=slide.figures, blocks=slide.blocks,
                                   has_heading=slide.has_heading))
                continue
            again = re.sub(r"^<h[1-3][^>]*>(.*?)</h[1-3]>\s*$", r"\1", heading.strip(), flags=re.S)
            title = f'<h2 class="repeat">{again} ({continued})</h2>' if heading else ""
            pages.append(Slide(title=title, body=blocks, vertical=slide.vertical))
    return pages


def deck_html(deck: Deck, chapter_href: str) -> str:
    words = WORDS[deck.language]
    sections = []
    stack: list[str] = []

    def flush() -> None:
        if stack:
            sections.append(stack[0] if len(stack) == 1 else "<section>" + "".join(stack) + "</section>")
            stack.clear()

    for k, slide in enumerate(paginate(deck)):
        notes = "".join(slide.notes)
        inner = (slide.title + "".join(slide.body)
                 + (f'<aside class="notes">{notes}</aside>' if notes else ""))
        if k == 0:
            inner += (f'<p class="deck-links"><a href="{chapter_href}">{words["chapter"]}</a>'
                      f' · {words["notes"]}</p>')
        section = f'<section data-slide="{k + 1}">{inner}</section>'
        if not slide.vertical:
            flush()
        stack.append(section)
    flush()
    title = html.escape(re.sub(r"<[^>]+>", "", deck.title))
    return f"""<!doctype html>
<html lang="{words['lang']}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{title} · {words['deck']}</title>
<link rel="stylesheet" href="../_static/reveal/reveal.css">
<link rel="stylesheet" href="../_static/reveal/theme/simple.css">
<link rel="stylesheet" href="slides.css">
</head>
<body>
<div class="reveal"><div class="slides">
{chr(10).join(sections)}
</div></div>
<script src="../_static/reveal/reveal.js"></script>
<script src="../_static/reveal/plugin/notes.js"></script>
<script src="slides.js"></script>
<script src="../_static/mathjax/tex-chtml-light.js"></script>
</body>
</html>
"""


