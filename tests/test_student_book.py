"""The student's book (`make student-book`, book/_ext/student_book.py, scripts/student_book.py).

Unit tests of what the extension leaves out, on small hand-made pages (milliseconds); a check that
every piece it lists exists in its notebook; and one build of a small book (lab 11 and chapter 0) as
the student's book from `make book`'s execution cache, compared with the same pages of the public book.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "book" / "_ext"))
import student_book  # noqa: E402
from student_book import NOTE_CLASS, WITHHELD, Withheld, note_text, withhold  # noqa: E402

sys.path.remove(str(REPO / "book" / "_ext"))


# ---------------------------------------------------------------------------------------------------
# Small pages, made by hand as myst-nb and sphinx-exercise make them
# ---------------------------------------------------------------------------------------------------
def page() -> nodes.document:
    return new_document("test", get_default_settings(Parser))


def at(cell: int, node: nodes.Element, offset: int = 1) -> nodes.Element:
    """``node`` as myst-nb places a block of notebook cell ``cell``: line (cell + 1) * 10000 + offset."""
    node.line = (cell + 1) * 10000 + offset
    return node


def code_cell(cell: int, source: str, output: str | None = None, tags: tuple[str, ...] = (),
              figure: nodes.figure | None = None) -> nodes.container:
    container = at(cell, nodes.container(nb_element="cell_code", cell_index=cell,
                                         cell_metadata={"tags": list(tags)}))
    container += nodes.container("", nodes.literal_block(source, source), nb_element="cell_code_source")
    if output is not None or figure is not None:
        out = nodes.container(nb_element="cell_code_output")
        if output is not None:
            out += nodes.literal_block(output, output)
        if figure is not None:
            out += figure
        container += out
    return container


def section(name: str, title: str, *children: nodes.Node) -> nodes.section:
    return nodes.section("", nodes.title(title, title), *children, ids=[name], names=[name])


def para(text: str, cell: int | None = None) -> nodes.paragraph:
    node = nodes.paragraph(text, text)
    return at(cell, node) if cell is not None else node


def notes(document: nodes.document) -> list[str]:
    return [n.astext() for n in document.findall(nodes.note) if NOTE_CLASS in n["classes"]]


def test_solutions_answers_and_check_verdicts_are_left_out_with_a_note():
    from sphinx_exercise.nodes import solution_node

    doc = page()
    solution = solution_node()
    solution += code_cell(3, "def f():\n    return 42  # the model answer", output="42")
    solution += para("**Answer.** Because the scores are scaled.")
    answer = nodes.admonition("", nodes.title("Answer", "Answer"), para("The weights are uniform."),
                              classes=["dropdown"])  # :class: dropdown replaces admonition-answer
    misconception = nodes.admonition("", nodes.title("Common misconception", "Common misconception"),
                                     para("A falling loss proves nothing."),
                                     classes=["admonition-common-misconception", "warning"])
    doc += section("ex", "Exercises", para("Write f.", 2), solution,
                   code_cell(4, 'from utils.exercises import check\n\ncheck("4.1", f)',
                             output="Exercise 4.1: correct."),
                   para("Why are the weights uniform?", 5), answer, misconception,
                   code_cell(6, "fixed = True", tags=("lab-solution",)))
    assert withhold(doc, "chapters/04_x", None, cell_ids=None, withheld=[]) == []
    text = doc.astext()
    for gone in ("the model answer", "Because the scores", "Exercise 4.1: correct.",
                 "The weights are uniform.", "fixed = True"):
        assert gone not in text
    for kept in ("Write f.", 'check("4.1", f)', "Why are the weights uniform?",
                 "A falling loss proves nothing."):
        assert kept in text
    assert notes(doc) == [note_text("solution", None), note_text("answer", None)]


def test_the_notes_speak_the_books_language():
    assert note_text("answer", None) == "The answer is in the teacher's edition of this book."
    assert note_text("answer", "zh_CN") == "答案在本书的教师版中。"
    traditional = note_text("answer", "zh_TW")
    assert "教師版" in traditional and "本書" in traditional
    for kind in student_book.NOTES:
        assert "teacher's edition" in note_text(kind, None)
        assert "教师版" in note_text(kind, "zh_CN") and "教師版" in note_text(kind, "zh_TW")


def test_withheld_outputs_keep_the_figure_number_and_caption():
    figure = nodes.figure("", nodes.image(uri="ladder.png", alt="bars collapsing at rung 5"),
                          nodes.caption("Exact match of each rung.", "Exact match of each rung."),
                          ids=["fig-11-ladder"], names=["fig-11-ladder"])
    doc = page()
    doc += section("ladder", "The ladder",
                   code_cell(0, "train()", output="rung 5: exact match 0.02"),
                   code_cell(1, "plot()", figure=figure),
                   code_cell(2, "other()", output="kept output"))
    ids = ["a", "b", "c"]
    pieces = [Withheld("outputs", "a", ""), Withheld("outputs", "b", "")]
    assert withhold(doc, "chapters/11_x", None, ids, pieces) == []
    text = doc.astext()
    assert "exact match 0.02" not in text and "kept output" in text
    assert "train()" in text and "plot()" in text  # the code stays
    assert not list(doc.findall(nodes.image))
    (shell,) = doc.findall(nodes.figure)
    assert shell["ids"] == ["fig-11-ladder"]
    assert shell.next_node(nodes.caption).astext() == "Exact match of each rung."
    assert notes(doc) == [note_text("outputs", None), note_text("figure", None)]


def test_withheld_cells_and_sections_keep_their_headings():
    doc = page()
    reading = section("reading-the-ladder", "Reading the ladder",
                      para("Positions are the first big step (0.02 to 0.41).", 4),
                      para("Rung 5 collapses.", 4), para("How would you check it?", 5),
                      code_cell(6, "check_result(...)", output="0.93"))
    summary = section("summary", "Summary", at(7, nodes.bullet_list("", nodes.list_item(
        "", para("The mask is worth the most."))), 2))
    exercises = section("exercises", "Exercises", para("The first exercise was the predictions.", 7))
    doc += section("lab", "Lab", reading, summary, exercises)
    ids = ["c0", "c1", "c2", "c3", "prose", "question", "checks", "summary-cell"]
    pieces = [Withheld("cell", "prose", ""), Withheld("cell", "checks", ""),
              Withheld("section", "summary", "")]
    assert withhold(doc, "chapters/11_x", None, ids, pieces) == []
    text = doc.astext()
    assert "first big step" not in text and "collapses" not in text and "0.93" not in text
    assert "check_result" not in text and "worth the most" not in text
    assert "How would you check it?" in text and "The first exercise was the predictions." in text
    titles = [t.astext() for t in doc.findall(nodes.title)]
    assert titles == ["Lab", "Reading the ladder", "Summary", "Exercises"]
    assert notes(doc) == [note_text("cell", None), note_text("cell", None), note_text("section", None)]


def test_a_withheld_page_keeps_its_title_and_a_listed_piece_that_is_missing_is_reported():
    doc = page()
    doc += section("guide", "Instructor guide", para("Rubric: a full answer says ..."),
                   section("rubrics", "Rubrics", para("Exercise 0.2: dog . cat = 8.1")))
    assert withhold(doc, "book/instructor_guide", "zh_CN", None, [Withheld("page", "", "")]) == []
    assert [t.astext() for t in doc.findall(nodes.title)] == ["Instructor guide"]
    assert "Rubric" not in doc.astext() and notes(doc) == [note_text("page", "zh_CN")]
    problems = withhold(page(), "chapters/11_x", None, ["a"], [Withheld("outputs", "gone", "why")])
    assert len(problems) == 1 and "'gone'" in problems[0]


def _slug(title: str) -> str:
    return nodes.make_id(title)


def test_every_withheld_piece_exists_in_its_notebook():
    """A listed cell id or section that the notebook lost would leave its piece in the student's book
    (the build warns, and fails under -W; this finds it without a build)."""
    import nbformat

    for docname, pieces in WITHHELD.items():
        path = REPO / f"{docname}.ipynb"
        if not path.exists():
            assert (REPO / f"{docname}.md").exists(), docname
            assert {p.kind for p in pieces} == {"page"}
            continue
        nb = nbformat.read(path, as_version=4)
        cells = {cell.id: cell for cell in nb.cells}
        headings = {_slug(h) for cell in nb.cells if cell.cell_type == "markdown"
                    for h in re.findall(r"^#+\s+(.+)$", cell.source, re.M)}
        for piece in pieces:
            if piece.kind == "section":
                assert piece.target in headings, (docname, piece)
            else:
                assert piece.target in cells, (docname, piece)
                if piece.kind == "outputs":
                    assert cells[piece.target].cell_type == "code", (docname, piece)


def test_the_public_book_does_not_load_the_extension():
    """`make book` stays as it was: only the student's book's configuration names the extension."""
    assert "student_book" not in (REPO / "_config.yml").read_text(encoding="utf-8")
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import translations
    finally:
        sys.path.remove(str(REPO / "scripts"))
    config = {"sphinx": {"local_extensions": {}, "config": {}}, "launch_buttons": {"colab_url": "x"},
              "html": {"use_repository_button": True}}
    student = translations.student_config(json.loads(json.dumps(config)))
    assert student["sphinx"]["config"]["course_edition"] == "student"
    assert "student_book" in student["sphinx"]["local_extensions"]
    assert student["launch_buttons"] == {} and student["html"]["use_repository_button"] is False


@pytest.mark.parametrize("language", [None, "zh_CN", "zh_TW"])
def test_the_guides_source_is_withheld_from_the_download_button(tmp_path, language):
    """The download button serves a page's source from _sources/: the guide's would show its rubrics."""
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import translations
    finally:
        sys.path.remove(str(REPO / "scripts"))
    html_dir = tmp_path / (language or "html")
    source = html_dir / "_sources" / "book" / "instructor_guide.md"
    source.parent.mkdir(parents=True)
    source.write_text((REPO / "book" / "instructor_guide.md").read_text(encoding="utf-8"), encoding="utf-8")
    translations.withhold_sources(html_dir)
    assert source.read_text(encoding="utf-8") == f"# Instructor guide\n\n{note_text('page', language)}\n"


# ---------------------------------------------------------------------------------------------------
# One small student's book, built from the execution cache, against the public book's pages
# ---------------------------------------------------------------------------------------------------
SMALL_TOC = """format: jb-book
root: chapters/00_getting_started
chapters:
  - file: chapters/11_lab_ablation_ladder
"""


def _cached(notebooks: list[str]) -> bool:
    """Whether `make book`'s execution cache holds a run of each of these notebooks."""
    try:
        import nbformat
        from jupyter_cache import get_cache
    except ImportError:
        return False
    cache = REPO / "_build" / ".jupyter_cache"
    if not cache.is_dir():
        return False
    store = get_cache(str(cache))
    try:
        for name in notebooks:
            store.match_cache_notebook(nbformat.read(REPO / "chapters" / f"{name}.ipynb", as_version=4))
    except KeyError:
        return False
    return True


def _code_blocks(page_html: str) -> list[str]:
    """The text of every code box of a built page."""
    blocks = re.findall(r'<div class="highlight"><pre>(.*?)</pre>', page_html, re.S)
    return [html.unescape(re.sub(r"<[^>]+>", "", block)) for block in blocks]


def _copied_function(page_html: str, name: str):
    """What a student gets by copying the page's definition of ``name`` into a notebook: the function,
    or None when the page shows no definition of it."""
    for block in _code_blocks(page_html):
        if re.search(rf"^def {name}\(", block, re.M):
            namespace: dict = {}
            exec("import math\nimport torch\n" + block, namespace)  # noqa: S102 (the page's own code)
            return namespace[name]
    return None


@pytest.fixture(scope="module")
def small_books(tmp_path_factory):
    """(student's book pages, public book pages, the student's build folder) of lab 11 and chapter 0,
    from the execution cache."""
    chapters = ["00_getting_started", "11_lab_ablation_ladder"]
    if not _cached(chapters):
        pytest.skip("the execution cache lacks lab 11 or chapter 0: run `make book` first")
    public = REPO / "_build" / "html" / "chapters"
    if not all((public / f"{name}.html").exists() for name in chapters):
        pytest.skip("no public book in _build/html: run `make book` first")
    tmp = tmp_path_factory.mktemp("student_book")
    toc = tmp / "toc.yml"
    toc.write_text(SMALL_TOC, encoding="utf-8")
    env = {**os.environ, "COURSE_EDITION": "student"}
    code = ("import sys; sys.path.insert(0, 'scripts'); import translations as t; "
            "print(t.config_for(None))")
    config = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, text=True, check=True,
                            capture_output=True).stdout.strip()
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    start = time.perf_counter()
    result = subprocess.run([str(jupyter_book), "build", str(REPO), "--toc", str(toc), "--config", config,
                             "--path-output", str(tmp), "-W", "-n", "--keep-going"], cwd=REPO, env=env,
                            text=True, capture_output=True, timeout=900)
    seconds = time.perf_counter() - start
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    log = result.stdout + result.stderr
    assert "Executing notebook" not in log, "the build executed a notebook: the cache was not used"
    built = tmp / "_build" / "html" / "chapters"
    print(f"small student's book built in {seconds:.0f} s")
    return ({name: (built / f"{name}.html").read_text(encoding="utf-8") for name in chapters},
            {name: (public / f"{name}.html").read_text(encoding="utf-8") for name in chapters},
            tmp / "_build")


def _glued(name: str, build: Path = REPO / "_build") -> dict[str, str]:
    """The values a build glued on a page (myst-nb's <page>.glue.json), as shown: the public book's
    unless ``build`` names another."""
    path = build / "jupyter_execute" / "chapters" / f"{name}.glue.json"
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    return {key: value["data"].get("text/plain", "").strip("'\"") for key, value in data.items()}


def _text(page_html: str) -> str:
    """A built page's text, tags removed and white space collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", page_html)).replace("’", "'").split())


def _pasted(page_html: str) -> list[str]:
    """The glued values a page shows ({glue:text} renders each one as a span of class pasted-text)."""
    return re.findall(r'<span class="pasted-text">([^<]*)</span>', page_html)


@pytest.mark.xdist_group(name="student_book")  # one build of the small book
def test_the_student_book_shows_no_solution_answer_or_ladder_number(small_books):
    student, public, build = small_books
    lab = "11_lab_ablation_ladder"
    shown, full = _text(student[lab]), _text(public[lab])
    # the authors' predictions, their reasoning and the open questions' answers
    for text in ('"5: + self-attention": 0.05', "The reasoning behind the predictions above",
                 "In training, the decoder's inputs are the whole target shifted by one",
                 "Accuracy with teacher forcing cannot tell"):
        assert text in full and text not in shown, text
    # the ladder's measured numbers: the table the training prints, and every glued exact match
    table = re.findall(r"\d: [^:]{0,40}? [\d,]+ parameters exact match [\d.]+", full)
    assert len(table) == 8 and not re.findall(r"parameters exact match \d", shown), table
    glued = _glued(lab)
    rungs = {glued[f"ch11_exact_rung_{k}"] for k in range(8)} & set(_pasted(public[lab]))
    assert len(rungs) >= 4, rungs  # the prose reads rungs 0, 1, 5, 6 and 7
    ours = _glued(lab, build)  # the student's book's own run (the cache may be newer than _build/html)
    assert _pasted(student[lab]) == [ours["ch11_time_ladder"], ours["ch11_time_self_attention"]]
    # the ladder figure keeps its number and caption, without its bars
    figure = student[lab].split('id="fig-11-ladder"')[1].split("</figure>")[0]
    assert "<img" not in figure and "Held-out exact match of each rung" in figure
    assert "Reading the ladder" in shown and "Positions (rung 1) are the first big step" not in shown
    assert "Positions (rung 1) are the first big step" in full
    # every solution and check verdict gone, the exercises and their check calls kept
    for name in student:
        shown, full = _text(student[name]), _text(public[name])
        assert "solution-content" not in student[name] and "solution-content" in public[name]
        calls = re.findall(r'check\("\d+\.\d+"', full)
        assert calls and re.findall(r'check\("\d+\.\d+"', shown) == calls
        assert re.search(r"Exercise \d+\.\d+: correct\.", full)
        assert not re.search(r"Exercise \d+\.\d+: correct\.", shown)
        assert student[name].count(NOTE_CLASS) >= len(calls)
        assert "teacher's edition" in shown
    # no launch button opens the full notebook
    assert "colab.research.google.com" in public[lab] and "colab.research.google.com" not in student[lab]


@pytest.mark.xdist_group(name="student_book")  # one build of the small book
def test_an_exercise_cannot_be_passed_by_copying_the_student_book(small_books):
    """Copy the definition of exercise 11.5's function from each page and check it: the public book's
    passes (it is the solution), the student's book has nothing to copy."""
    from utils.checks import strict_checks
    from utils.exercises import check

    student, public, _ = small_books
    lab = "11_lab_ablation_ladder"
    copied = _copied_function(public[lab], "paired_step")
    assert copied is not None
    with strict_checks():
        check("11.5", copied)
    assert _copied_function(student[lab], "paired_step") is None
    shown = "\n".join(_code_blocks(student[lab]))
    assert "math.comb" not in shown and "gained = int(" not in shown
    for name in ("my_predictions", "influence", "next_word_weight", "order_blind"):
        assert _copied_function(student[lab], name) is None, name


@pytest.mark.parametrize("language", ["en", "zh_CN", "zh_TW"])
def test_the_student_editions_readme_links_to_the_students_book(language):
    """Each student edition's README (make student; translations/<lang>/student) points to the
    student's book that `make student-book` writes for its language, by a link that works from it."""
    from classroom.readmes import edition_folders, student_readme

    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import translations
    finally:
        sys.path.remove(str(REPO / "scripts"))
    text = student_readme(language)
    assert "make student-book" in text
    (link,) = re.findall(r"\]\(([^)]+)\)", text)
    folder = REPO / edition_folders(language)[0]
    written = translations.STUDENT_HTML / ("" if language == "en" else language) / "index.html"
    assert (folder / link).resolve() == written.resolve()
    if language != "en":  # the Chinese editions' READMEs are checked in
        assert (folder / "README.md").read_text(encoding="utf-8") == text
