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

The work is shared by three modules: ``classroom.slide_content`` (what one cell puts on a slide and in
the notes), ``classroom.slide_deck`` (a notebook's deck, paginated, as a reveal.js page) and this one
(every deck of a book, the guide's table, the command line).

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
``scripts/install_browser.py`` into ``_vendor/reveal``, which every book serves as
``_static/reveal/``) and the book's own MathJax from ``../_static/``: no request leaves the site.
Each chapter page links to its deck.

The estimated time of a deck is the time to say its speaker notes (``WORDS_PER_MINUTE`` English words,
``HAN_PER_MINUTE`` Chinese characters) plus ``FIGURE_MINUTES`` per figure, equation or code block
shown. A cell too long for one slide goes on over the next (``paginate``: a rough measure of each
block's height), and the browser test checks that every slide of every deck fits.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

import nbformat

from classroom.slide_content import (  # noqa: F401
    LEAD_SENTENCES,
    SLIDE_TYPES,
    Shown,
    SlidesError,
    figure_numbers,
    first_sentence,
    markdown_on_slide,
)
from classroom.slide_deck import (  # noqa: F401
    FIGURE_MINUTES,
    HAN_PER_MINUTE,
    WORDS,
    WORDS_PER_MINUTE,
    Deck,
    Slide,
    build_deck,
    deck_html,
    paginate,
)

REPO = Path(__file__).resolve().parents[1]
CHAPTERS = REPO / "chapters"
STATIC = Path(__file__).resolve().parent / "slides_static"
LANGUAGES = {"en": "", "zh_CN": "zh_CN/", "zh_TW": "zh_TW/"}  # language -> folder under the book


# ---------------------------------------------------------------------------------------------------
# Writing every deck of a book
# ---------------------------------------------------------------------------------------------------
def executed_notebook(book: Path, stem: str) -> nbformat.NotebookNode:
    """The English notebook with the outputs of the book's run: from the build's execution cache
    (``_build/.jupyter_cache``, which ``make book`` fills; it matches a notebook by its code)."""
    from jupyter_cache import get_cache

    folder = book.parent / ".jupyter_cache"
    if not folder.is_dir():
        raise SlidesError(f"{folder} is missing: the decks show the outputs of the book's run, so build "
                          "the book first (`make book`)")
    nb = nbformat.read(CHAPTERS / f"{stem}.ipynb", as_version=4)
    try:
        _, executed = get_cache(str(folder)).merge_match_into_notebook(nb)
    except KeyError as error:
        raise SlidesError(f"chapters/{stem}.ipynb has no run in {folder} that matches its code: build "
                          "the book again (`make book`)") from error
    return executed


def install_static(folder: Path, root: Path) -> None:
    """slides.css and slides.js beside the decks; reveal.js and MathJax are the book's own."""
    for needed in ("reveal/reveal.js", "reveal/plugin/notes.js", "mathjax/tex-chtml-light.js"):
        if not (root / "_static" / needed).exists():
            raise SlidesError(f"{root / '_static' / needed} is missing: `python scripts/install_browser.py "
                              "--mathjax` unpacks MathJax and reveal.js into _vendor/, which the book's "
                              "build serves as _static/ (run it, then `make book`)")
    for name in ("slides.css", "slides.js"):
        shutil.copy2(STATIC / name, folder / name)


def decks_of(book: Path, language: str = "en") -> list[Deck]:
    """Every notebook's deck in ``language``, from the book built in ``book`` (``_build/html``)."""
    decks = []
    for path in sorted(CHAPTERS.glob("[0-9][0-9]_*.ipynb")):
        text = None
        if language != "en":
            text = nbformat.read(REPO / "translations" / language / "chapters" / path.name, as_version=4)
        numbers = figure_numbers(book / "chapters" / f"{path.stem}.html")
        decks.append(build_deck(path.stem, executed_notebook(book, path.stem), language, text, numbers))
    return decks


def write_decks(book: Path, languages: list[str] | None = None) -> list[Deck]:
    """Write every notebook's deck in every language beside ``book`` (the English ``_build/html``)."""
    decks = []
    for language in languages or list(LANGUAGES):
        root = book / LANGUAGES[language]
        if language != "en" and not root.exists():
            raise SlidesError(f"{root} is missing: build the Chinese books first "
                              "(`python scripts/translations.py books`)")
        folder = root / "slides"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        install_static(folder, root)
        for deck in decks_of(book, language):
            files = folder / f"{deck.stem}_files"
            files.mkdir(exist_ok=True)
            for name, data in deck.images:
                (files / name).write_bytes(data)
            (folder / f"{deck.stem}.html").write_text(deck_html(deck, f"../chapters/{deck.stem}.html"),
                                                      encoding="utf-8")
            decks.append(deck)
    return decks


def report(decks: list[Deck]) -> str:
    rows = ["| Deck | Language | Slides | Figures and code shown | Estimated minutes |",
            "|---|---|---|---|---|"]
    for deck in decks:
        shown = sum(s.figures + s.blocks for s in deck.slides)
        rows.append(f"| {deck.stem} | {deck.language} | {len(paginate(deck))} | {shown} "
                    f"| {deck.minutes():.0f} |")
    return "\n".join(rows)


GUIDE = REPO / "book" / "instructor_guide.md"
_GUIDE_TABLE = re.compile(r"(<!-- slides: start -->\n)(?:.*?\n)?(<!-- slides: end -->)", re.S)


def guide_table(decks: list[Deck]) -> str:
    """The instructor guide's table of the English decks: slides, what they show, estimated minutes."""
    from classroom.guide import title_of

    rows = ["| Notebook | Deck | Slides | Figures, equations and code shown | Estimated minutes |",
            "|---|---|---|---|---|"]
    for deck in decks:
        if deck.language != "en":
            continue
        number = int(deck.stem[:2])
        title = title_of(nbformat.read(CHAPTERS / f"{deck.stem}.ipynb", as_version=4))
        shown = sum(s.figures + s.blocks for s in deck.slides)
        rows.append(f"| {number}. {title} | {{slides}}`{deck.stem}` | {len(paginate(deck))} | {shown} "
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
