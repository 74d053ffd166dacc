"""Lecture slides for every chapter and lab, made from the notebooks themselves (reveal.js decks).

    python -m classroom.slides                    # decks beside each built book (after `make book`)
    python -m classroom.slides --html DIR         # ... for the book built in DIR (default _build/html)
    python -m classroom.slides --report           # each deck's slides and estimated minutes, as a table
    python -m classroom.slides --guide            # ... and that table into the instructor guide

What goes on a slide is marked in the notebooks, with Jupyter's own slideshow metadata
(``cell.metadata.slideshow.slide_type``), so a teacher changes a deck in JupyterLab: select a cell,
open the property inspector (the gear icon on the right), pick its "Slide Type". The types mean what
they mean in JupyterLab and nbconvert:

- ``slide``: the cell starts a new slide; ``subslide``: a new slide below the current one (reveal.js's
  vertical stack); ``fragment``: on the current slide, shown at the next key press; ``-``: on the
  current slide; ``skip``: not in the deck; ``notes``: the speaker notes of the current slide.

A notebook is a book chapter, so a deck shows less of a cell than the page does:

- a markdown cell on a slide shows its headings, equations, lists, tables, code and boxes, and the
  first sentence of each paragraph (at most ``LEAD_SENTENCES`` of them); every paragraph in full goes
  to the speaker notes (press S in the deck), so the notes are the chapter's prose;
- a code cell on a slide shows its figures and short printed output, and its code when the code is
  short, draws no figure and the book shows it (not ``hide-input``), or the cell is tagged
  ``slides-code``; a figure's
  caption (``metadata.mystnb.figure.caption``) is shown in short, in full in the notes;
- the exercises and their solutions never reach a deck, nor do the dropdown answers of open questions,
  interactive views (the static figure beside each stays) or glued values' own outputs.

The numbers the prose glues from the run ({glue:text}) are read from the executed notebook, figure
references ({numref}) get the book's figure numbers, and the Chinese decks take the Chinese notebooks'
text (translations/<lang>/chapters) and the catalogues' figure captions, with the English run's outputs.

Decks are written to ``<book>/slides/`` for the English book and ``<book>/zh_CN/slides/``,
``<book>/zh_TW/slides/`` for the Chinese ones. They load reveal.js (npm, MIT; unpacked by
``scripts/install_browser.py`` into ``_vendor/reveal.js``, which every book serves as
``_static/reveal.js``) and the book's own MathJax from ``../_static/``: no request leaves the site.
Each chapter page links to its deck.

The estimated time of a deck is the time to say its speaker notes (``WORDS_PER_MINUTE`` English words,
``HAN_PER_MINUTE`` Chinese characters) plus ``FIGURE_MINUTES`` per figure, equation or code block shown. A cell
too long for one slide goes on over the next (``paginate``: a rough measure of each block's height),
and the browser test checks that every slide of every deck fits.
"""

from __future__ import annotations

import argparse
import base64
import html
import importlib.util
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from classroom.exercises import find_exercises
from classroom.markdown import myst_to_markdown

REPO = Path(__file__).resolve().parents[1]
CHAPTERS = REPO / "chapters"
STATIC = Path(__file__).resolve().parent / "slides_static"
LANGUAGES = {"en": "", "zh_CN": "zh_CN/", "zh_TW": "zh_TW/"}  # language -> folder under the book
SLIDE_TYPES = ("slide", "subslide", "fragment", "-", "skip", "notes")
LEAD_SENTENCES = 3  # per markdown cell: the first sentence of this many paragraphs is shown
CODE_LINES = 12  # code longer than this stays off the slide (tag the cell slides-code to show it)
OUTPUT_LINES = 10  # printed output longer than this stays off the slide
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


class SlidesError(RuntimeError):
    """A deck cannot be made: what was expected, and what was found."""


# ---------------------------------------------------------------------------------------------------
# Reading the notebooks
# ---------------------------------------------------------------------------------------------------
def slide_type(cell: nbformat.NotebookNode) -> str:
    """The cell's slide type; a cell with none continues the current slide (Jupyter's default)."""
    kind = cell.get("metadata", {}).get("slideshow", {}).get("slide_type", "-")
    if kind not in SLIDE_TYPES:
        raise SlidesError(f"cell {cell.get('id', '?')}: slide_type {kind!r} is not one of "
                          f"{', '.join(SLIDE_TYPES)}")
    return kind


def glue_values(nb: nbformat.NotebookNode) -> dict[str, dict]:
    """name -> output data of every value the notebook glues (myst-nb's ``glue``)."""
    values = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                values[name] = output.get("data", {})
    return values


def glue_text(data: dict, spec: str) -> str:
    """A glued value as {glue:text} shows it: its text, formatted by ``spec`` (``key:.2f``)."""
    text = data.get("text/plain", "")
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    if spec:
        try:
            return format(float(text), spec)
        except ValueError:
            return text
    return text


_GLUE = re.compile(r"\{glue(?::text|:)?\}`(?P<key>[^`:]+)(?::(?P<spec>[^`]*))?`")


def fill_glue(source: str, values: dict[str, dict], where: str) -> str:
    def value(match: re.Match[str]) -> str:
        key = match.group("key").strip()
        if key not in values:
            raise SlidesError(f"{where}: the prose glues {key!r}, which the executed notebook does not "
                              "hold (was it executed? `make book` runs every notebook)")
        return glue_text(values[key], match.group("spec") or "")
    return _GLUE.sub(value, source)


def figure_numbers(page: Path) -> dict[str, str]:
    """label -> figure number ("20") read from the book's HTML page of a chapter."""
    if not page.exists():
        return {}
    text = page.read_text(encoding="utf-8")
    numbers = {}
    for match in re.finditer(r'<figure[^>]*\bid="(?P<id>[^"]+)"(?P<body>.*?)</figure>', text, re.S):
        number = re.search(r'class="caption-number">[^<\d]*(\d+)', match.group("body"))
        if number:
            numbers[match.group("id")] = number.group(1)
    return numbers


def _translations_module():
    """scripts/translations.py (its catalogue reader), imported: scripts/ is not a package."""
    spec = importlib.util.spec_from_file_location("course_translations", REPO / "scripts" / "translations.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------------------------------------------
# Markdown: what a slide shows, what goes to the notes
# ---------------------------------------------------------------------------------------------------
def _markdown_parser():
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    md = MarkdownIt("commonmark", {"html": True}).enable("table")
    md.use(dollarmath_plugin, allow_labels=True, allow_space=True, double_inline=True)

    def inline_math(self, tokens, idx, options, env):
        return f'<span class="math">\\({html.escape(tokens[idx].content)}\\)</span>'

    def block_math(self, tokens, idx, options, env):
        return f'<div class="math">\\[{html.escape(tokens[idx].content)}\\]</div>\n'

    md.add_render_rule("math_inline", inline_math)
    md.add_render_rule("math_inline_double", block_math)
    md.add_render_rule("math_block", block_math)
    md.add_render_rule("math_block_label", block_math)
    return md


_MD = None


def markdown_parser():
    global _MD
    if _MD is None:
        _MD = _markdown_parser()
    return _MD


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z*_(\[`$\"'])|(?<=[。！？])")
_ABBREVIATIONS = re.compile(r"(?:e\.g|i\.e|cf|et al|vs|Fig|Eq|Sec|approx)\.$", re.I)


def first_sentence(text: str) -> str:
    """The first sentence of a paragraph's Markdown source (math, code and links kept whole)."""
    protected: list[str] = []

    def hide(match: re.Match[str]) -> str:
        protected.append(match.group(0))
        return f"\x00{len(protected) - 1}\x00"

    masked = re.sub(r"\$\$.*?\$\$|\$[^$]*\$|`[^`]*`|\[[^\]]*\]\([^)]*\)", hide, text, flags=re.S)
    pieces = _SENTENCE_END.split(masked.strip())
    sentence = pieces[0]
    k = 1
    while k < len(pieces) and _ABBREVIATIONS.search(sentence):
        sentence += " " + pieces[k]
        k += 1
    return re.sub(r"\x00(\d+)\x00", lambda m: protected[int(m.group(1))], sentence).strip()


@dataclass
class Shown:
    """What one cell puts on a slide and in its notes."""

    html: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)
    figures: int = 0
    blocks: int = 0  # code blocks and equations shown


def _blocks(tokens):
    """Top-level blocks of a token stream: (first token, tokens of the block)."""
    start = 0
    depth = 0
    for i, token in enumerate(tokens):
        depth += token.nesting
        if depth == 0:
            yield tokens[start], tokens[start:i + 1]
            start = i + 1


def markdown_on_slide(source: str) -> Shown:
    """Split a markdown cell (plain Markdown, MyST already converted) into slide and notes."""
    md = markdown_parser()
    env: dict = {}
    tokens = md.parse(source, env)
    lines = source.splitlines()
    shown = Shown()
    leads = 0
    for first, block in _blocks(tokens):
        rendered = md.renderer.render(block, md.options, env)
        text = "\n".join(lines[first.map[0]:first.map[1]]) if first.map else ""
        kind = first.type
        if kind == "heading_open":
            shown.headings.append(rendered)
        elif kind == "paragraph_open":
            shown.notes.append(rendered)
            if re.fullmatch(r"\s*!\[[^\]]*\]\([^)]*\)\s*", text):  # an image alone
                shown.html.append(rendered)
                shown.figures += 1
            elif leads < LEAD_SENTENCES:
                shown.html.append(f"<p>{md.renderInline(first_sentence(text), env)}</p>")
                leads += 1
        elif kind in ("bullet_list_open", "ordered_list_open"):
            shown.notes.append(rendered)
            items = [md.renderInline(first_sentence(item), env) for item in _list_items(block, lines)]
            start = int(first.attrGet("start") or 1)
            for k, item in enumerate(items):  # an item a block: a long list may go on over two slides
                tag = "ul" if kind == "bullet_list_open" else f'ol start="{start + k}"'
                shown.html.append(f"<{tag}><li>{item}</li></{tag.split()[0]}>")
        elif kind in ("math_block", "math_block_label", "fence", "code_block", "table_open"):
            if kind in ("fence", "code_block") and len(first.content.splitlines()) > CODE_LINES:
                shown.notes.append(rendered)
                continue
            shown.html.append(rendered)
            shown.blocks += 1
        elif kind == "blockquote_open":  # an admonition: its title and first sentence
            shown.notes.append(rendered)
            inner = re.sub(r"^\s*>\s?", "", text, flags=re.M)
            title, _, body = inner.partition("\n\n")
            lead = first_sentence(body) if body.strip() else ""
            shown.html.append('<div class="box">' + md.render(title + ("\n\n" + lead if lead else ""))
                              + "</div>")
        elif kind == "html_block":
            if "<details" in first.content:  # a dropdown answer: not on a slide, not in the notes
                continue
            shown.notes.append(rendered)
        else:
            shown.notes.append(rendered)
    return shown


def _list_items(block, lines: list[str]) -> list[str]:
    items = []
    depth = 0
    for token in block:
        if token.type == "list_item_open" and depth == 1 and token.map:
            text = "\n".join(lines[token.map[0]:token.map[1]])
            items.append(re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", text).strip())
        depth += token.nesting
    return items


_DETAILS = re.compile(r"<details>.*?</details>", re.S)
_HEADING = re.compile(r"^#{1,6} ", re.M)


def before_exercises(english: str, said: str) -> str:
    """A cell that runs on into the ``## Exercises`` section, cut where that section starts: the English
    cell finds the heading, ``said`` (the same cell in the deck's language) is cut at the same one."""
    headings = [m.start() for m in _HEADING.finditer(english)]
    for k, start in enumerate(headings):
        if re.match(r"## Exercises\b", english[start:]):
            cut = [m.start() for m in _HEADING.finditer(said)]
            return said[:cut[k]] if k < len(cut) else said
    return said


# ---------------------------------------------------------------------------------------------------
# Code cells
# ---------------------------------------------------------------------------------------------------
def code_on_slide(cell: nbformat.NotebookNode, caption: str, images: list[tuple[str, bytes]],
                  stem: str) -> Shown:
    shown = Shown()
    tags = set(cell.get("metadata", {}).get("tags", []))
    source = cell.source.strip()
    hidden = tags & {"hide-input", "remove-input", "remove-cell"}
    draws = any("image/png" in o.get("data", {}) or "image/jpeg" in o.get("data", {})
                for o in cell.get("outputs", []) if not o.get("metadata", {}).get("scrapbook"))
    short = not hidden and not draws and len(source.splitlines()) <= CODE_LINES
    if source and ("slides-code" in tags or short):  # a figure's own code: only when asked for
        shown.html.append(f'<pre class="code"><code>{html.escape(source)}</code></pre>')
        shown.blocks += 1
    for output in cell.get("outputs", []):
        if output.get("metadata", {}).get("scrapbook"):
            continue  # a glued value: the prose shows it
        data = output.get("data", {})
        if output.get("output_type") == "stream":
            text = output.get("text", "")
            if output.get("name") == "stdout" and 0 < len(text.splitlines()) <= OUTPUT_LINES and \
                    "optional-output" not in tags:  # not "the knob is off, nothing drawn"
                shown.html.append(f'<pre class="output">{html.escape(text.rstrip())}</pre>')
            continue
        for mime, suffix in (("image/png", "png"), ("image/jpeg", "jpg")):
            if mime in data:
                name = f"{stem}_{len(images) + 1}.{suffix}"
                images.append((name, base64.b64decode(data[mime])))
                alt = cell.get("metadata", {}).get("mystnb", {}).get("image", {}).get("alt", "")
                shown.html.append(f'<figure><img src="{stem}_files/{name}" alt="{html.escape(alt)}">'
                                  + (f"<figcaption>{caption}</figcaption>" if caption else "")
                                  + "</figure>")
                shown.figures += 1
                break
        else:
            if "text/html" in data and "<script" not in data["text/html"] and \
                    "image/png" not in data:
                shown.html.append(f'<div class="output">{data["text/html"]}</div>')
            elif "text/plain" in data and output.get("output_type") == "execute_result" and \
                    len(data["text/plain"].splitlines()) <= OUTPUT_LINES and not shown.figures:
                shown.html.append(f'<pre class="output">{html.escape(data["text/plain"])}</pre>')
    return shown


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
               text: nbformat.NotebookNode | None = None, numbers: dict[str, str] | None = None) -> Deck:
    """The deck of one notebook: slide types and outputs from ``executed`` (the English run), the
    markdown from ``text`` (the same notebook in ``language``; default: ``executed``)."""
    text = text or executed
    words = WORDS[language]
    if len(text.cells) != len(executed.cells):
        raise SlidesError(f"{stem} ({language}): the text has {len(text.cells)} cells, the executed "
                          f"notebook {len(executed.cells)}: run `python scripts/translations.py notebooks`")
    values = glue_values(executed)
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
            shown = code_on_slide(cell, short, images, stem)
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
    if not slides:
        raise SlidesError(f"{stem}: no cell is marked as a slide (metadata.slideshow.slide_type)")
    return Deck(stem=stem, language=language, title=title or stem, slides=slides, images=images)


SLIDE_HEIGHT = 720  # reveal.js's slide size (slides.js), in the slide's own pixels
SLIDE_WIDTH = 1280
ROOM = 640  # height the blocks of one slide may fill: the slide less its margins and slide number
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
        return 30 + 30 * max(1, inner.count("<tr"))
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
<link rel="stylesheet" href="../_static/reveal.js/reveal.css">
<link rel="stylesheet" href="../_static/reveal.js/theme/simple.css">
<link rel="stylesheet" href="slides.css">
</head>
<body>
<div class="reveal"><div class="slides">
{chr(10).join(sections)}
</div></div>
<script src="../_static/reveal.js/reveal.js"></script>
<script src="../_static/reveal.js/plugin/notes.js"></script>
<script src="slides.js"></script>
<script src="../_static/mathjax/tex-chtml-light.js"></script>
</body>
</html>
"""


# ---------------------------------------------------------------------------------------------------
# Writing every deck of a book
# ---------------------------------------------------------------------------------------------------
def executed_notebook(book: Path, stem: str) -> nbformat.NotebookNode:
    """The English notebook as the book's build executed it (``_build/jupyter_execute``)."""
    path = book.parent / "jupyter_execute" / "chapters" / f"{stem}.ipynb"
    if not path.exists():
        raise SlidesError(f"{path} is missing: the decks show the outputs of the book's run, so build "
                          "the book first (`make book`)")
    return nbformat.read(path, as_version=4)


def install_static(folder: Path, root: Path) -> None:
    """slides.css and slides.js beside the decks; reveal.js and MathJax are the book's own."""
    for needed in ("reveal.js/reveal.js", "reveal.js/plugin/notes.js", "mathjax/tex-chtml-light.js"):
        if not (root / "_static" / needed).exists():
            raise SlidesError(f"{root / '_static' / needed} is missing: `python scripts/install_browser.py "
                              "--mathjax` unpacks MathJax and reveal.js into _vendor/, which the book's "
                              "build serves as _static/ (run it, then `make book`)")
    for name in ("slides.css", "slides.js"):
        shutil.copy2(STATIC / name, folder / name)


def write_decks(book: Path, languages: list[str] | None = None) -> list[Deck]:
    """Write every notebook's deck in every language beside ``book`` (the English ``_build/html``)."""
    decks = []
    english_pages = book / "chapters"
    for language in languages or list(LANGUAGES):
        root = book / LANGUAGES[language]
        if language != "en" and not root.exists():
            raise SlidesError(f"{root} is missing: build the Chinese books first "
                              "(`python scripts/translations.py books`)")
        folder = root / "slides"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        install_static(folder, root)
        for path in sorted(CHAPTERS.glob("[0-9][0-9]_*.ipynb")):
            stem = path.stem
            executed = executed_notebook(book, stem)
            text = None
            if language != "en":
                text = nbformat.read(REPO / "translations" / language / "chapters" / path.name,
                                     as_version=4)
            deck = build_deck(stem, executed, language, text, figure_numbers(english_pages / f"{stem}.html"))
            files = folder / f"{stem}_files"
            files.mkdir(exist_ok=True)
            for name, data in deck.images:
                (files / name).write_bytes(data)
            (folder / f"{stem}.html").write_text(deck_html(deck, f"../chapters/{stem}.html"),
                                                 encoding="utf-8")
            decks.append(deck)
    return decks


def report(decks: list[Deck]) -> str:
    rows = ["| Deck | Language | Slides | Figures and code shown | Estimated minutes |",
            "|---|---|---|---|---|"]
    for deck in decks:
        shown = sum(s.figures + s.blocks for s in deck.slides)
        rows.append(f"| {deck.stem} | {deck.language} | {len(deck.slides)} | {shown} "
                    f"| {deck.minutes():.0f} |")
    return "\n".join(rows)


GUIDE = REPO / "book" / "instructor_guide.md"
_GUIDE_TABLE = re.compile(r"(<!-- slides: start -->\n)(?:.*?\n)?(<!-- slides: end -->)", re.S)


def guide_table(decks: list[Deck]) -> str:
    """The instructor guide's table of the English decks: slides, what they show, estimated minutes."""
    from classroom.guide import title_of

    rows = ["| Notebook | Slides | Figures, equations and code shown | Estimated minutes |",
            "|---|---|---|---|"]
    for deck in decks:
        if deck.language != "en":
            continue
        number = int(deck.stem[:2])
        title = title_of(nbformat.read(CHAPTERS / f"{deck.stem}.ipynb", as_version=4))
        shown = sum(s.figures + s.blocks for s in deck.slides)
        rows.append(f"| {number}. {title} | {{slides}}`{deck.stem}` ({len(deck.slides)}) | {shown} "
                    f"| {deck.minutes():.0f} |")
    return "\n".join(rows) + "\n"


def write_guide(decks: list[Deck], guide: Path = GUIDE) -> bool:
    """Put the decks' table into the guide; True when it changed."""
    text = guide.read_text(encoding="utf-8")
    if not _GUIDE_TABLE.search(text):
        raise SlidesError(f"{guide} has no <!-- slides: start --> / <!-- slides: end --> markers")
    new = _GUIDE_TABLE.sub(lambda m: m.group(1) + guide_table(decks) + m.group(2), text)
    guide.write_text(new, encoding="utf-8")
    return new != text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--html", type=Path, default=REPO / "_build" / "html",
                        help="the English book's HTML folder (default: _build/html)")
    parser.add_argument("--languages", nargs="*", default=list(LANGUAGES), choices=list(LANGUAGES))
    parser.add_argument("--report", action="store_true", help="print each deck's size and minutes")
    parser.add_argument("--guide", action="store_true",
                        help="also write the decks' table into book/instructor_guide.md")
    args = parser.parse_args(argv)
    try:
        decks = write_decks(args.html, args.languages)
        if args.guide and write_guide(decks):
            print(f"slides: updated the decks' table in {GUIDE.relative_to(REPO)}")
    except SlidesError as error:
        print(f"slides: {error}", file=sys.stderr)
        return 1
    print(f"slides: {len(decks)} decks in {args.html / 'slides'} (and the Chinese books' slides/)")
    if args.report:
        print(report(decks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
