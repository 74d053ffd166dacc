"""The built book (``built_book`` in conftest.py builds it once, executing every notebook, with -W).

Checks the HTML a reader gets: every page of the toc, every executed figure with its caption and alt
text, MathJax-ready math, solutions as collapsed dropdowns, the Colab link of each chapter, no
tracebacks, and a warm execution cache (so a second `make book` executes nothing).

Slow (minutes): the first test to ask for ``built_book`` runs the whole build. Set ``COURSE_BOOK_TOC``
to an alternative toc to build and check only some pages while working on the tests.
"""

from __future__ import annotations

import json
import os
import re
import sys
from functools import cache
from pathlib import Path

import pytest

bs4 = pytest.importorskip("bs4")
yaml = pytest.importorskip("yaml")

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

import output_texts  # noqa: E402  (scripts/ is not a package)
from output_texts import english_left  # noqa: E402

TOC = Path(os.environ["COURSE_BOOK_TOC"]).resolve() if os.environ.get("COURSE_BOOK_TOC") \
    else REPO / "book" / "_toc.yml"


def _toc_entries() -> list[str]:
    """Every root/file entry of the toc, in order, without a suffix ('chapters/00_getting_started')."""
    entries: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("root", "file") and isinstance(value, str):
                    entries.append(re.sub(r"\.(ipynb|md)$", "", value))
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(yaml.safe_load(TOC.read_text(encoding="utf-8")))
    return entries


ENTRIES = _toc_entries()
NOTEBOOK_ENTRIES = [e for e in ENTRIES if (REPO / f"{e}.ipynb").is_file()]


def _params(entries: list[str]) -> list:
    return [pytest.param(e, id=e) for e in entries]


@cache
def _notebook(entry: str) -> dict:
    return json.loads((REPO / f"{entry}.ipynb").read_text(encoding="utf-8"))


def _cells(entry: str, kind: str) -> list[dict]:
    return [c for c in _notebook(entry)["cells"] if c["cell_type"] == kind]


def _source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _page(html: Path, entry: str):
    path = html / f"{entry}.html"
    if not path.is_file():
        pytest.fail(f"{entry}: no page {path.relative_to(html)} in the built book")
    return bs4.BeautifulSoup(path.read_text(encoding="utf-8"), "lxml"), path


def _repository() -> tuple[str, str]:
    config = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))
    repo = config["repository"]
    return repo["url"].rstrip("/").removeprefix("https://github.com/"), repo.get("branch", "main")


# ---------------------------------------------------------------------------------------------------
# The build and its pages
# ---------------------------------------------------------------------------------------------------
def test_the_book_builds_with_warnings_as_errors(built_book, book_toc):
    assert book_toc == TOC, "conftest.py and test_book.py disagree on the table of contents"
    assert (built_book / "index.html").is_file()
    assert (built_book / "_images").is_dir() or not NOTEBOOK_ENTRIES


@pytest.mark.parametrize("entry", _params(ENTRIES))
def test_every_toc_page_is_built(built_book, entry):
    page, _ = _page(built_book, entry)
    assert page.find("h1"), f"{entry}: the page has no title (h1)"


# ---------------------------------------------------------------------------------------------------
# Executed figures
# ---------------------------------------------------------------------------------------------------
def _figure_cells(entry: str) -> list[dict]:
    # "optional-output": a figure drawn only when a knob is on (the real corpus, a GPU), absent by default
    hidden = {"remove-output", "remove-cell", "optional-output"}
    return [c for c in _cells(entry, "code") if c.get("metadata", {}).get("mystnb", {}).get("figure")
            and not hidden & set(c.get("metadata", {}).get("tags", []))]


@pytest.mark.parametrize("entry", _params(NOTEBOOK_ENTRIES))
def test_executed_figures_are_on_the_page(built_book, entry):
    page, path = _page(built_book, entry)
    images = [img for img in page.select("div.cell_output img")
              if img.get("src", "").startswith("data:") or "_images/" in img.get("src", "")]
    expected = len(_figure_cells(entry))
    assert len(images) >= expected, (
        f"{entry}: {len(images)} executed figures on the page, but {expected} cells have figure metadata; "
        "was the book built with MPLBACKEND=Agg, or did a figure cell not call plt.show()?")
    problems = []
    for img in images:
        src = img["src"]
        if not src.startswith("data:") and not (path.parent / src).resolve().is_file():
            problems.append(f"{src}: the image file is missing")
        figure = img.find_parent("figure")
        caption = figure.find("figcaption") if figure else None
        if caption is None or not caption.get_text(strip=True):
            problems.append(f"{src[:60]}: not in a captioned figure (give its cell mystnb.figure.caption)")
        if not img.get("alt", "").strip():
            problems.append(f"{src[:60]}: no alt text (give its cell mystnb.image.alt)")
    assert not problems, f"{entry}:\n  " + "\n  ".join(problems)


# ---------------------------------------------------------------------------------------------------
# Math, exercises, Colab
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("entry", _params(NOTEBOOK_ENTRIES))
def test_math_is_mathjax_ready(built_book, entry):
    page, _ = _page(built_book, entry)
    if not any("$" in _source(c) for c in _cells(entry, "markdown")):
        pytest.skip(f"{entry} has no math")
    maths = page.select("span.math, div.math")
    assert maths, f"{entry}: the notebook has $...$ math but the page has no span.math/div.math elements"
    delimited = [m for m in maths if re.match(r"\s*(\\\(|\\\[|\\begin\{)", m.get_text())]
    assert len(delimited) == len(maths), f"{entry}: math elements without MathJax delimiters \\( \\[ ..."
    scripts = [s.get("src", "") for s in page.find_all("script")]
    assert any("mathjax" in s.lower() or "tex-mml" in s for s in scripts), f"{entry}: no MathJax script"


@pytest.mark.parametrize("entry", _params(ENTRIES))
def test_no_unrendered_display_math(built_book, entry):
    page, _ = _page(built_book, entry)
    for skip in page.select("pre, code, .math, script, style, .highlight"):
        skip.decompose()
    main = page.find("main") or page
    assert "$$" not in main.get_text(), f"{entry}: a '$$' survived into the text: display math not parsed"


def _count(entry: str, directive: str) -> int:
    return sum(len(re.findall(rf"^[`:]{{3,}}\s*\{{{directive}\}}", _source(c), re.M))
               for c in _cells(entry, "markdown"))


@pytest.mark.parametrize("entry", _params(NOTEBOOK_ENTRIES))
def test_exercises_and_collapsed_solutions(built_book, entry):
    page, _ = _page(built_book, entry)
    exercises = page.select("div.exercise")
    solutions = page.select("div.solution")
    assert len(exercises) == _count(entry, "exercise"), f"{entry}: exercises missing from the page"
    assert len(solutions) == _count(entry, "solution-start"), f"{entry}: solutions missing from the page"
    for solution in solutions:
        assert "dropdown" in solution.get("class", []), (
            f"{entry}: solution {solution.get('id')} is not a collapsed dropdown (':class: dropdown')")
        assert solution.select("div.cell"), (
            f"{entry}: solution {solution.get('id')} holds no code cell: are {{solution-start}} and "
            "{solution-end} in separate markdown cells around the code?")


def _check_names(entry: str) -> list[str]:
    """The exercise names the notebook's auto-checks use, in order ("Exercise 4.1", ...)."""
    names = []
    for cell in _cells(entry, "code"):
        names += [f"Exercise {number}" for number in
                  re.findall(r"""\bcheck\(\s*["'](\d+\.\d+)["']""", _source(cell))]
    return list(dict.fromkeys(names))


@pytest.mark.parametrize("entry", _params(NOTEBOOK_ENTRIES))
def test_exercises_are_numbered_per_chapter_as_the_checks_name_them(built_book, entry):
    page, _ = _page(built_book, entry)
    shown = [re.match(r"Exercise (\d+\.\d+)", e.select_one(".admonition-title, p.admonition-title")
                      .get_text(" ", strip=True)) for e in page.select("div.exercise")]
    shown_names = [f"Exercise {m.group(1)}" for m in shown if m]
    assert len(shown_names) == len(shown), f"{entry}: an exercise title is not 'Exercise N.k'"
    chapter = int(Path(entry).name[:2])
    assert shown_names == [f"Exercise {chapter}.{k}" for k in range(1, len(shown) + 1)]
    assert shown_names == _check_names(entry), (
        f"{entry}: the book numbers {shown_names}, the checks name {_check_names(entry)}")
    for solution in page.select("div.solution"):
        title = solution.select_one(".admonition-title, p.admonition-title").get_text(" ", strip=True)
        assert re.match(rf"Solution to Exercise {chapter}\.\d+", title), f"{entry}: {title!r}"


@pytest.mark.parametrize("entry", _params(NOTEBOOK_ENTRIES))
def test_no_solution_marker_on_the_page(built_book, entry):
    _, path = _page(built_book, entry)
    text = path.read_text(encoding="utf-8")
    for marker in ("BEGIN SOLUTION", "END SOLUTION"):
        assert marker not in text, f"{entry}: the page shows '### {marker}'"


@pytest.mark.parametrize("entry", _params(NOTEBOOK_ENTRIES))
def test_answers_to_the_readers_questions_are_collapsed(built_book, entry):
    page, _ = _page(built_book, entry)
    answers = [a for a in page.select("div.admonition")
               if (t := a.select_one(".admonition-title")) and t.get_text(strip=True) == "Answer"]
    assert len(answers) == _count(entry, "admonition") - _count_other_admonitions(entry)
    for answer in answers:
        assert "dropdown" in answer.get("class", []), f"{entry}: an Answer is not collapsed"


def _count_other_admonitions(entry: str) -> int:
    return sum(len(re.findall(r"^[`:]{3,}\s*\{admonition\}[ \t]*(?!Answer[ \t]*$)\S", _source(c), re.M))
               for c in _cells(entry, "markdown"))


@pytest.mark.parametrize("entry", _params(NOTEBOOK_ENTRIES))
def test_colab_link_points_at_the_notebook(built_book, entry):
    page, _ = _page(built_book, entry)
    repo, branch = _repository()
    expected = f"https://colab.research.google.com/github/{repo}/blob/{branch}/{entry}.ipynb"
    links = [a["href"] for a in page.find_all("a", href=True) if "colab.research.google.com" in a["href"]]
    assert expected in links, f"{entry}: expected a Colab link {expected}, found {links}"


# ---------------------------------------------------------------------------------------------------
# Clean outputs and a warm cache
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("entry", _params(ENTRIES))
def test_no_traceback_in_outputs(built_book, entry):
    page, _ = _page(built_book, entry)
    assert not page.select(".output.traceback, .output.error"), f"{entry}: a cell output is an error"
    for output in page.select("div.cell_output"):
        text = output.get_text()
        assert "Traceback (most recent call last)" not in text, f"{entry}: a traceback in a cell output"


@pytest.mark.parametrize("entry", _params(NOTEBOOK_ENTRIES))
def test_no_warnings_in_outputs(built_book, entry):
    page, _ = _page(built_book, entry)
    warnings = [m.group(0) for out in page.select("div.cell_output .output.stderr")
                for m in re.finditer(r"\b\w*Warning: [^\n]{0,100}", out.get_text())]
    assert not warnings, f"{entry}: warnings printed in the book (fix or silence them): {warnings}"


@pytest.mark.parametrize("entry", _params(NOTEBOOK_ENTRIES))
def test_the_book_ran_with_a_newcomers_threads(built_book, entry):
    """Each chapter's set-up prints its thread count: the build must use a newcomer's, not the suite's 1."""
    from tests.conftest import book_threads

    page, _ = _page(built_book, entry)
    counts = {int(n) for n in re.findall(r"CPU threads: (\d+) \(", page.get_text())}
    assert counts, f"{entry}: no 'CPU threads: N' line; does the set-up cell call choose_threads()?"
    assert counts == {book_threads()}, (
        f"{entry}: executed with {sorted(counts)} CPU threads, but a newcomer's `make book` here uses "
        f"{book_threads()}; the build fixture should have dropped such runs from the execution cache "
        "(scripts/book_cache.py)")


def test_a_rebuild_would_execute_nothing(built_book):
    jupyter_cache = pytest.importorskip("jupyter_cache")
    nbformat = pytest.importorskip("nbformat")
    cache_dir = built_book.parent / ".jupyter_cache"
    assert cache_dir.is_dir(), f"no execution cache at {cache_dir}: is execute_notebooks 'cache'?"
    store = jupyter_cache.get_cache(str(cache_dir))
    missing = []
    for entry in NOTEBOOK_ENTRIES:
        try:
            store.match_cache_notebook(nbformat.read(REPO / f"{entry}.ipynb", as_version=4))
        except KeyError:
            missing.append(entry)
    assert not missing, f"not in the execution cache (a rebuild would execute them again): {missing}"


# ---------------------------------------------------------------------------------------------------
# The Chinese books (scripts/translations.py books, run by `make book` and by the built_book fixture)
# ---------------------------------------------------------------------------------------------------
LANGUAGES = {"zh_CN": "zh-CN", "zh_TW": "zh-TW"}
CJK = re.compile(r"[\u4e00-\u9fff]")


def _translated_page(html: Path, language: str, entry: str):
    path = html / language / f"{entry}.html"
    assert path.is_file(), f"{path} is missing: did `python scripts/translations.py books` run?"
    return bs4.BeautifulSoup(path.read_text(encoding="utf-8"), "lxml")


@pytest.mark.parametrize("language", list(LANGUAGES))
@pytest.mark.parametrize("entry", _params(ENTRIES))
def test_translated_page_is_built_in_its_language(built_book, language, entry):
    if TOC != REPO / "book" / "_toc.yml":
        pytest.skip("the Chinese books are built with the book's own toc only")
    page = _translated_page(built_book, language, entry)
    assert page.html.get("lang") == LANGUAGES[language], f"{language}/{entry}: lang={page.html.get('lang')}"
    title = page.find("h1")
    assert title and CJK.search(title.get_text()) or entry == "book/glossary" or \
        "Transformer" in title.get_text(), f"{language}/{entry}: the title is not translated: {title}"
    captions = [c.get_text(strip=True) for c in page.select("nav .caption-text")]
    english = [c for c in captions if not CJK.search(c) and c != "Transformer"]
    assert captions and not english, f"{language}/{entry}: the contents' captions {english} are English"
    switcher = page.select("nav.course-languages a")
    assert len(switcher) == 2, f"{language}/{entry}: expected links to the two other languages"
    for link in switcher:
        target = (built_book / language / entry).parent / link["href"]
        assert target.resolve().is_file(), f"{language}/{entry}: the switcher's {link['href']} is missing"
        assert target.resolve().name == Path(entry).name + ".html"
    if entry in NOTEBOOK_ENTRIES:  # Colab opens the Chinese notebook
        repo, branch = _repository()
        expected = (f"https://colab.research.google.com/github/{repo}/blob/{branch}/translations/"
                    f"{language}/{entry}.ipynb")
        links = [a["href"] for a in page.find_all("a", href=True) if "colab.research" in a["href"]]
        assert expected in links, f"{language}/{entry}: expected a Colab link {expected}, found {links}"
        assert (REPO / "translations" / language / f"{entry}.ipynb").is_file()


@pytest.mark.parametrize("language", list(LANGUAGES))
@pytest.mark.parametrize("entry", _params(NOTEBOOK_ENTRIES))
def test_translated_page_shows_the_same_figures_and_outputs(built_book, language, entry):
    if TOC != REPO / "book" / "_toc.yml":
        pytest.skip("the Chinese books are built with the book's own toc only")
    english, _ = _page(built_book, entry)
    chinese = _translated_page(built_book, language, entry)
    images = [len(p.select("main img")) for p in (english, chinese)]
    assert images[0] == images[1], f"{language}/{entry}: {images[1]} images, the English page has {images[0]}"
    for page in (english, chinese):  # the captions are translated, and the printed lines' words
        for caption in page.select(".cell_output figcaption"):
            caption.decompose()
    outputs = [[o.get_text() for o in p.select(".cell_output")] for p in (english, chinese)]
    assert len(outputs[0]) == len(outputs[1]), f"{language}/{entry}: not the English page's outputs"
    for mine, theirs in zip(*outputs, strict=True):  # the same numbers, line by line, as the English run
        assert [sorted(NUMBER.findall(line)) for line in mine.split("\n")] == [
            sorted(NUMBER.findall(line)) for line in theirs.split("\n")], (
            f"{language}/{entry}: an output's numbers differ from the English page's:\n{mine[:300]}")
    captions = [len(p.select("figcaption")) for p in (english, chinese)]
    assert captions[0] == captions[1]
    exercises = [len(p.select(".exercise")) for p in (english, chinese)]
    assert exercises[0] == exercises[1]


@pytest.mark.parametrize("language", list(LANGUAGES))
@pytest.mark.parametrize("entry", _params(NOTEBOOK_ENTRIES))
def test_a_chinese_page_prints_no_english_sentence(built_book, language, entry):
    """What the code printed reads in the page's language: no line keeps two English words in a row
    outside its data (numbers, quoted words, lists, the corpus's sentences) and code."""
    if TOC != REPO / "book" / "_toc.yml":
        pytest.skip("the Chinese books are built with the book's own toc only")
    page = _translated_page(built_book, language, entry)
    english = [line for block in page.select(".cell_output .output.stream, .cell_output .output.stderr")
               for line in block.get_text().split("\n") if english_left(line)]
    assert not english, (f"{language}/{entry}: printed lines left in English (translate them with "
                         "`python scripts/translations.py outputs-todo`):\n  " + "\n  ".join(english[:15]))


def test_every_printed_line_of_the_run_has_its_translation(built_book):
    if TOC != REPO / "book" / "_toc.yml":
        pytest.skip("the Chinese books are built with the book's own toc only")
    left = output_texts.missing(built_book)
    assert not left, ("printed lines with no 简体 translation (`python scripts/translations.py "
                      f"outputs-todo <notebook>`, then outputs-fill): {left}")


# a number as printed (a translated line may put its numbers in another order)
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")

EXERCISE_WORD = {"zh_CN": "练习", "zh_TW": "練習"}


@pytest.mark.parametrize("language", list(LANGUAGES))
@pytest.mark.parametrize("entry", _params(NOTEBOOK_ENTRIES))
def test_exercises_and_solutions_are_headed_in_the_pages_language(built_book, language, entry):
    """"练习 4.1 (标题)" and "解答 练习 4.1 (标题)" on a Chinese page: the label in the page's script (the
    exercise extension ships no traditional Chinese) and the title translated in the solution's heading
    too (sphinx-exercise copies it from the exercise before the page is translated)."""
    if TOC != REPO / "book" / "_toc.yml":
        pytest.skip("the Chinese books are built with the book's own toc only")
    page = _translated_page(built_book, language, entry)
    word = EXERCISE_WORD[language]
    titles = [t.get_text(" ", strip=True) for t in page.select(".exercise .admonition-title")]
    headings = [t.get_text(" ", strip=True) for t in page.select(".solution .admonition-title")]
    assert titles and headings, f"{language}/{entry}: no exercise or no solution found"
    for text in titles + headings:
        assert word in text and "Exercise" not in text and "Solution" not in text, (
            f"{language}/{entry}: {text!r} is not headed with {word}")
        inside = re.search(r"\((.*)\)\s*$", text)
        assert inside is None or CJK.search(inside.group(1)) or not re.search(r"[A-Za-z]{3,} [a-z]{3,}",
                                                                               inside.group(1)), (
            f"{language}/{entry}: the title in {text!r} is English")


def test_catalogues_are_up_to_date_with_the_english(built_book):
    """Re-extracting the English prose adds nothing untranslated: an English edit without its
    translation fails here (update with `python scripts/translations.py update`, then translate)."""
    if TOC != REPO / "book" / "_toc.yml":
        pytest.skip("the catalogues are extracted from the whole book")
    import sys

    sys.path.insert(0, str(REPO / "scripts"))
    import translations

    translations.extract()
    stale = []
    for template in sorted(translations.GETTEXT.rglob("*.pot")):
        docname = str(template.relative_to(translations.GETTEXT).with_suffix(""))
        wanted = {m.id for m in translations._read(template) if m.id}
        for language in LANGUAGES:
            path = translations.LOCALES / language / "LC_MESSAGES" / f"{docname}.po"
            have = {m.id for m in translations._read(path) if m.id and m.string and not m.fuzzy} \
                if path.exists() else set()
            stale += [f"{language}/{docname}: no translation of {msgid[:70]!r}" for msgid in wanted - have]
            stale += [f"{language}/{docname}: a translation of text no longer in the English: {msgid[:70]!r}"
                      for msgid in have - wanted]
    assert not stale, (f"{len(stale)} messages out of step with the English; run `python "
                       f"scripts/translations.py update`, translate what `status` shows, and derive-tw:\n  "
                       + "\n  ".join(stale[:15]))


@pytest.mark.parametrize("entry", _params(NOTEBOOK_ENTRIES))
def test_checks_and_glue_leave_no_stray_value_under_their_cell(built_book, entry):
    """A cell that ends with check(...), check_result(...) or glue(...) shows its verdict line, or
    nothing, never an echoed value (``True``, ``0.7818181818181819``, ``'32'``): nbgrader cannot read
    a check cell's ``True`` as a score, and the book would show it."""
    import ast

    executed = json.loads((built_book.parent / "jupyter_execute" / f"{entry}.ipynb").read_text(
        encoding="utf-8"))
    stray = []
    for cell in executed["cells"]:
        if cell["cell_type"] != "code":
            continue
        try:
            body = ast.parse(_source(cell)).body
        except SyntaxError:  # IPython magics: not ours to judge
            continue
        last = body[-1] if body else None
        if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and \
                getattr(last.value.func, "id", None) in ("check", "check_result", "glue"):
            stray += [f"{_source(cell)[:60]!r} -> {out.get('data', {}).get('text/plain')!r}"
                      for out in cell.get("outputs", []) if out.get("output_type") == "execute_result"]
    assert not stray, f"{entry}: cells echo a value under their verdict:\n  " + "\n  ".join(stray)


def test_glued_text_is_a_value_not_a_phrase(built_book):
    """A glued string lands inside the prose of all three books: it must be a number, a token or a name
    (RNN, "quiet"), never English words that a Chinese sentence would then quote ("the RNN",
    'drops "lape" (for "quiet")'). The sentence around it belongs to the page, where it is translated."""
    import json

    phrases = []
    for glued in sorted((built_book.parent / "jupyter_execute").rglob("*.glue.json")):
        for key, value in json.loads(glued.read_text(encoding="utf-8")).items():
            text = value.get("data", {}).get("text/plain", "")
            if text[:1] not in "'\"":
                continue
            outside_quotes = re.sub(r'"[^"]*"', " ", text[1:-1])
            if len(re.findall(r"[A-Za-z]{2,}", outside_quotes)) >= 2:
                phrases.append(f"{glued.name}: {key} = {text}")
    assert not phrases, "glued English phrases (glue the value, write the words in the page):\n  " + \
        "\n  ".join(phrases)


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_a_chinese_pages_download_button_gives_the_chinese_notebook(built_book, language):
    if TOC != REPO / "book" / "_toc.yml":
        pytest.skip("the Chinese books are built with the book's own toc only")
    for entry in NOTEBOOK_ENTRIES:
        page = _translated_page(built_book, language, entry)
        links = [a["href"] for a in page.find_all("a", href=True) if a["href"].endswith(".ipynb")
                 and "_sources" in a["href"]]
        assert links, f"{language}/{entry}: no download link"
        served = (built_book / language / entry).parent / links[0]
        own = REPO / "translations" / language / f"{entry}.ipynb"
        assert served.resolve().read_bytes() == own.read_bytes(), (
            f"{language}/{entry}: the download button serves another notebook than the edition's own")
