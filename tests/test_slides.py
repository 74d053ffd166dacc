"""The lecture decks (classroom/slides.py): what a slide shows, what goes to the notes, what never
reaches a deck, and the marks in every notebook. The decks of the built book are opened in a browser by
tests/test_browser.py (test_every_deck_opens_and_every_slide_fits)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import nbformat
import pytest

from classroom import slides

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "chapters").glob("[0-9][0-9]_*.ipynb"))
PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")).decode()


def _cell(kind: str, source: str, slide_type: str | None = "slide", **metadata) -> nbformat.NotebookNode:
    make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
    cell = make(source)
    if slide_type is not None:
        metadata["slideshow"] = {"slide_type": slide_type}
    cell.metadata.update(metadata)
    return cell


def _notebook(*cells) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = list(cells)
    return nb


def _glue(name: str, value: str) -> dict:
    """A glued value as utils.glue writes it: its text, quoted, under papermill's prefix."""
    prefix = "application/papermill.record/"
    return nbformat.v4.new_output("display_data", data={prefix + "text/plain": repr(value)},
                                  metadata={"scrapbook": {"name": name, "mime_prefix": prefix}})


def test_a_paragraph_shows_its_first_sentence_and_goes_whole_to_the_notes():
    shown = slides.markdown_on_slide(
        "## Scores\n\nThe score is $q \\cdot k$. It grows with $d_k$, e.g. for random vectors. More.\n\n"
        "$$\nA = \\mathrm{softmax}(QK^\\top)\n$$\n")
    assert shown.headings == ["<h2>Scores</h2>\n"]
    body = "".join(shown.html)
    assert "The score is" in body and "It grows" not in body
    assert "\\[" in body and shown.blocks == 1, "the display equation is shown"
    assert "It grows with" in "".join(shown.notes) and "More." in "".join(shown.notes)


def test_first_sentence_keeps_math_abbreviations_and_chinese_whole():
    assert slides.first_sentence("Take $x. y$ here, e.g. now. Then more.") == "Take $x. y$ here, e.g. now."
    assert slides.first_sentence("注意力是软查找。它很有用。") == "注意力是软查找。"
    assert slides.first_sentence("One sentence only") == "One sentence only"


def test_a_slide_shows_few_lead_sentences_and_the_lists_items_in_short():
    paragraphs = "\n\n".join(f"Paragraph {k} starts. And goes on." for k in range(6))
    shown = slides.markdown_on_slide(paragraphs + "\n\n- First item. Its detail.\n- Second item.\n")
    body = "".join(shown.html)
    assert body.count("<p>") == slides.LEAD_SENTENCES
    assert "<li>First item.</li>" in body and "Its detail" not in body
    assert "Its detail" in "".join(shown.notes)


def test_the_deck_fills_glue_numbers_figures_and_keeps_answers_out():
    figure = _cell("code", "plot()", mystnb={"figure": {"caption": "Weights. Each row sums to 1.",
                                                          "name": "fig-x"}, "image": {"alt": "a map"}})
    figure.outputs = [nbformat.v4.new_output("display_data", data={"image/png": PNG, "text/plain": "F"})]
    glue = _cell("code", "glue('acc', acc)", slide_type="skip")
    glue.outputs = [_glue("acc", "0.9731")]
    nb = _notebook(
        _cell("markdown", "# 4. Self-attention\n\nIt reaches {glue:text}`acc:.2f` (see {numref}`fig-x`)."),
        figure,
        _cell("markdown", "Spoken, not shown.", slide_type="notes"),
        _cell("markdown", "What do you expect?\n\n```{admonition} Answer\n:class: dropdown\nSECRET\n```"),
        glue,
        _cell("markdown", "## Exercises\n\n```{exercise} Try\nDo it.\n```", slide_type="skip"),
        _cell("markdown", "```{solution-start} ex\n```", slide_type="skip"),
        _cell("code", "### BEGIN SOLUTION\nanswer = 42\n### END SOLUTION", slide_type="skip"),
        _cell("markdown", "```{solution-end}\n```", slide_type="skip"),
    )
    deck = slides.build_deck("04_self_attention", nb, numbers={"fig-x": "20"})
    assert deck.title == "4. Self-attention"
    assert len(deck.slides) == 3
    first, second, third = deck.slides
    assert "It reaches 0.97 (see Fig. 20)." in "".join(first.body)
    assert second.figures == 1 and "<figcaption>Weights.</figcaption>" in "".join(second.body)
    assert "Each row sums to 1." in "".join(second.notes)
    assert "Spoken, not shown." in "".join(second.notes)
    assert "Spoken" not in "".join(second.body)
    text = slides.deck_html(deck, "../chapters/04_self_attention.html")
    assert "SECRET" not in text and "answer = 42" not in text and "Do it" not in text
    assert deck.images and deck.images[0][0] == "04_self_attention_1.png"
    assert 'href="../chapters/04_self_attention.html"' in text
    assert "http" not in text.replace('href="../', ""), "a deck asks nothing of the internet"


def test_an_exercise_marked_as_a_slide_is_refused():
    nb = _notebook(_cell("markdown", "# T"), _cell("markdown", "```{exercise} Try\nDo it.\n```"))
    with pytest.raises(slides.SlidesError, match="exercise or a solution"):
        slides.build_deck("x", nb)


def test_a_bad_slide_type_and_missing_glue_say_what_is_wrong():
    with pytest.raises(slides.SlidesError, match="slide_type 'slides' is not one of"):
        slides.build_deck("x", _notebook(_cell("markdown", "# T", slide_type="slides")))
    with pytest.raises(slides.SlidesError, match="glues 'acc'"):
        slides.build_deck("x", _notebook(_cell("markdown", "# T {glue:text}`acc`")))


def test_the_deck_takes_the_translated_text_and_the_english_run():
    english = _notebook(_cell("markdown", "# 4. Self-attention\n\nEnglish prose."))
    chinese = _notebook(_cell("markdown", "# 4. 自注意力\n\n中文的讲解。"))
    deck = slides.build_deck("04_self_attention", english, "zh_CN", chinese)
    assert deck.title == "4. 自注意力" and "中文的讲解。" in "".join(deck.slides[0].body)
    assert 'lang="zh-CN"' in slides.deck_html(deck, "x.html")
    with pytest.raises(slides.SlidesError, match="cells"):
        slides.build_deck("x", english, "zh_CN", _notebook())


def test_minutes_count_the_notes_and_what_is_shown():
    deck = slides.Deck("x", "en", "x", [slides.Slide(notes=["word " * 300], figures=2)], [])
    assert deck.minutes() == pytest.approx(300 / slides.WORDS_PER_MINUTE + 2 * slides.FIGURE_MINUTES)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_cell_is_marked_and_no_exercise_reaches_a_slide(path):
    """Each chapter's cells carry a slide type (a new cell without one would land on whatever slide
    comes before it), exercises and solutions are skipped, and the deck has a title slide."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    unmarked = [c.get("id") for c in nb["cells"] if "slideshow" not in c.get("metadata", {})]
    assert not unmarked, f"{path.name}: cells without metadata.slideshow.slide_type: {unmarked[:5]}"
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        kind = cell["metadata"]["slideshow"]["slide_type"]
        if "{solution" in source or "### BEGIN SOLUTION" in source or "lab-solution" in \
                cell["metadata"].get("tags", []):
            assert kind == "skip", f"{path.name} cell {cell.get('id')}: a solution marked {kind!r}"
    first = next(c for c in nb["cells"] if c["metadata"]["slideshow"]["slide_type"] != "skip")
    assert "".join(first["source"]).lstrip().startswith("# "), f"{path.name}: the deck opens on the title"


def test_a_slide_with_nothing_to_show_is_dropped_and_its_notes_kept():
    """A figure drawn only when a knob is on (a GPU, the real corpus) leaves its slide empty."""
    optional = _cell("code", "if USE_GPU:\n    plot()", tags=["optional-output"])
    optional.outputs = [nbformat.v4.new_output("stream", name="stdout", text="USE_GPU is False\n")]
    nb = _notebook(_cell("markdown", "# T\n\nFirst."), optional,
                   _cell("markdown", "Said about the figure.", slide_type="notes"))
    deck = slides.build_deck("x", nb)
    assert len(deck.slides) == 1 and "Said about the figure." in "".join(deck.slides[0].notes)
