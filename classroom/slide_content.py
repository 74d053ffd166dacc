"""What one notebook cell puts on a lecture slide and into its speaker notes (classroom/slides.py
tells the whole story): the slide types, the glued values, markdown shown in short with the prose kept
for the notes, and a code cell's figures, short output and short code."""

from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

SLIDE_TYPES = ("slide", "subslide", "fragment", "-", "skip", "notes")
LEAD_SENTENCES = 3  # per markdown cell: the first sentence of this many paragraphs is shown
CODE_LINES = 12  # code longer than this stays off the slide (tag the cell slides-code to show it)
OUTPUT_LINES = 10  # printed output longer than this stays off the slide


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
    # utils.glue writes the value under papermill's prefix ("application/papermill.record/text/plain")
    text = next((v for k, v in data.items() if k == "text/plain" or k.endswith("/text/plain")), "")
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
        text = glue_text(values[key], match.group("spec") or "")
        if not text:
            raise SlidesError(f"{where}: the glued value {key!r} has no text to show")
        return text
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
                  stem: str, language: str = "en") -> Shown:
    """What a code cell puts on its slide; printed lines in ``language`` (utils.language)."""
    from utils.language import translate_output

    shown = Shown()
    tags = set(cell.get("metadata", {}).get("tags", []))
    source = cell.source.strip()
    hidden = tags & {"hide-input", "remove-input", "remove-cell", "optional-output"}
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
                    not draws and "optional-output" not in tags:  # a figure's cell: the figure alone
                text = translate_output(text.rstrip(), language)
                shown.html.append(f'<pre class="output">{html.escape(text)}</pre>')
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


