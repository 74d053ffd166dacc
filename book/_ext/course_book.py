"""Three touches the course's book needs on top of Jupyter Book 1.x and sphinx-exercise.

1. Exercises are numbered per chapter, "Exercise 4.2" for the second exercise of
   ``chapters/04_*.ipynb``, as the checks, the student edition and the instructor guide number them
   (sphinx-exercise alone counts across the whole book: "Exercise 19").
2. The ``### BEGIN SOLUTION`` / ``### END SOLUTION`` lines that mark a solution for the student edition
   and nbgrader stay in the notebooks but are not shown on the page.
3. The page: code boxes wide enough for the notebooks' 88 columns, and figures that open at full size
   on a click (``static/course_book.css`` and ``static/course_book.js``).
4. The three editions (English, 简体中文, 繁體中文; scripts/translations.py): exercise titles are
   translatable messages like any paragraph, sphinx-exercise's own words ("Exercise", "Solution to")
   exist in traditional Chinese too, and every page carries a switcher to the same page in the other
   languages. The English book is at the site's root, each Chinese book in a folder beside it
   (``zh_CN/``, ``zh_TW/``).
5. Each chapter page links to its lecture deck (``slides/<chapter>.html``, written by
   ``classroom/slides.py`` beside the book).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.transforms import SphinxTransform
from sphinx.transforms.post_transforms import SphinxPostTransform

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


# ---------------------------------------------------------------------------------------------------
# The editions
# ---------------------------------------------------------------------------------------------------
LANGUAGES = {"en": ("English", ""), "zh_CN": ("简体中文", "zh_CN/"), "zh_TW": ("繁體中文", "zh_TW/")}
LOCALES = Path(__file__).resolve().parent / "locales"  # sphinx-exercise's words in zh_TW


class TranslatableExerciseTitles(SphinxTransform):
    """Give sphinx-exercise's subtitles ("A mean-pooled context vector") a source and a raw text, so
    that gettext extracts them and the Locale transform (priority 20) translates them."""

    default_priority = 15

    def apply(self, **kwargs: Any) -> None:
        mark_subtitles(self.document)


def mark_subtitles(doctree: nodes.document) -> None:
    """Give every subtitle without one a source, a line and its text as raw source (translatable)."""
    for node in doctree.findall(nodes.subtitle):
        if not node.astext().strip():
            continue
        parent = node.parent
        while parent is not None and not parent.source:
            parent = parent.parent
        node.source = node.source or (parent.source if parent is not None else doctree["source"])
        node.line = node.line or (parent.line if parent is not None else 0)
        node.rawsource = node.rawsource or node.astext()


class ExerciseTitlesForGettext(SphinxPostTransform):
    """For the gettext builder only: sphinx-exercise's post-transform (priority 20) folds each subtitle
    into a plain title, which gettext would not extract; keep a translatable copy of each one first."""

    default_priority = 10
    builders = ("gettext",)

    def run(self, **kwargs: Any) -> None:
        for node in list(self.document.findall(nodes.subtitle)):
            if node.rawsource and node.source:
                copy = nodes.paragraph(node.rawsource, "", *[c.deepcopy() for c in node.children])
                copy.source, copy.line = node.source, node.line
                copy.uid = getattr(node, "uid", "")  # gettext's catalogue skips nodes without one
                node.parent.parent.append(copy)


# Translated paragraphs are parsed again, each in a small document of its own (Sphinx's Locale
# transform, after the notebook itself was read), where myst-nb's glue roles find no glue data. myst-nb
# has by then written the notebook's glued values to <output>/jupyter_execute/<page>.glue.json; a lookup
# that fails falls back to that file.
def _glue_in_translations() -> None:
    import json

    from myst_nb.ext.glue import directives, roles, utils

    original = utils.retrieve_glue_data
    if getattr(original, "course_book", False):
        return

    def retrieve_glue_data(document: nodes.document, key: str) -> Any:
        try:
            return original(document, key)
        except utils.RetrievalError:
            env = getattr(document.settings, "env", None)
            if env is None:
                raise
            glued = Path(env.app.outdir).parent / "jupyter_execute" / f"{env.docname}.glue.json"
            data = json.loads(glued.read_text(encoding="utf-8")) if glued.is_file() else {}
            if key not in data:
                raise
            return utils.VariableOutput(data=data[key]["data"], metadata=data[key].get("metadata", {}),
                                        nb_renderer=document.get("nb_renderer"), vtype="glue")

    retrieve_glue_data.course_book = True  # type: ignore[attr-defined]
    for module in (utils, roles, directives):
        module.retrieve_glue_data = retrieve_glue_data


def translate_printed_outputs(app: Sphinx, doctree: nodes.document) -> None:
    """In a Chinese book, what the code printed in the English run, in the page's language: each line
    whose template utils/locale/outputs_<language>.json translates (utils.language.translate_output).
    Code, numbers and the corpus's sentences stay as printed."""
    language = app.config.language
    if language not in ("zh_CN", "zh_TW"):
        return
    from utils.language import translate_output

    for node in list(doctree.findall(nodes.literal_block)):
        if "output" in node["classes"] and ({"stream", "stderr"} & set(node["classes"])):
            text = node.astext()
            translated = translate_output(text, language)
            if language == "zh_TW":
                translated = taiwan_chinese(translated)
            if translated != text:
                node.children[:] = []
                node += nodes.Text(translated)
                node.rawsource = translated


def taiwan_chinese(text: str) -> str:
    """Printed lines in simplified Chinese (chapter 13's model writes it) converted with the converter
    that writes the Taiwan edition (scripts/translations.py: s2twp, the glossary, the overrides);
    lines already in traditional characters, or with none, stay as they are."""
    import sys

    root = str(Path(__file__).resolve().parents[2])
    if root not in sys.path:
        sys.path.insert(0, root)
    from scripts.translations import _characters, to_traditional

    return "\n".join(to_traditional(line) if _characters(line) != line else line
                     for line in text.split("\n"))


def language_switcher(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                      doctree: Any) -> None:
    """Links at the top of every page to the same page in the other languages."""
    if "body" not in context:
        return
    current = app.config.language if app.config.language in LANGUAGES else "en"
    up = "../" * pagename.count("/") + ("../" if LANGUAGES[current][1] else "")  # to the site's root
    links = []
    for code, (name, folder) in LANGUAGES.items():
        if code == current:
            links.append(f'<span class="course-language-current" lang="{_html_lang(code)}">{name}</span>')
        else:
            links.append(f'<a class="course-language-link" hreflang="{_html_lang(code)}" '
                         f'lang="{_html_lang(code)}" href="{up}{folder}{pagename}.html">{name}</a>')
    switcher = ('<nav class="course-languages" aria-label="Language / 语言 / 語言">'
                + " · ".join(links) + "</nav>")
    context["body"] = switcher + slides_link(pagename, current) + context["body"]


SLIDES_LABEL = {"en": "Slides for this chapter", "zh_CN": "本章幻灯片", "zh_TW": "本章投影片"}
SLIDES_WORD = {"en": "slides", "zh_CN": "幻灯片", "zh_TW": "投影片"}


def slides_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{slides}`04_self_attention``` -> a link to that deck, from any page of the book."""
    env = inliner.document.settings.env
    language = env.config.language if env.config.language in LANGUAGES else "en"
    up = "../" * env.docname.count("/")
    stem = text.strip()
    return [nodes.reference(rawtext, SLIDES_WORD[language], refuri=f"{up}slides/{stem}.html")], []


def slides_link(pagename: str, language: str) -> str:
    """A chapter page's link to its lecture deck (classroom/slides.py writes the decks into the
    book's ``slides/`` folder after the build; `make book` runs both)."""
    if not pagename.startswith("chapters/") or chapter_of(pagename) is None:
        return ""
    stem = pagename.split("/", 1)[1]
    up = "../" * pagename.count("/")
    return (f'<p class="course-slides-link"><a href="{up}slides/{stem}.html">'
            f"{SLIDES_LABEL[language]}</a></p>")


def _html_lang(code: str) -> str:
    return {"en": "en", "zh_CN": "zh-CN", "zh_TW": "zh-TW"}[code]


def add_exercise_words(app: Sphinx, config: Any = None) -> None:
    """sphinx-exercise ships "Exercise" and "Solution to" in simplified Chinese only: add traditional.

    Runs at config-inited before sphinx-exercise's own handler, which writes the exercise label into
    ``numfig_format`` then, once, from whatever catalogue is loaded at that moment."""
    if app.config.language != "zh_TW":
        return
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    source = LOCALES / "zh_TW" / "LC_MESSAGES" / "exercise.po"
    compiled = Path(app.outdir).parent / "course_locales" / "zh_TW" / "LC_MESSAGES" / "exercise.mo"
    compiled.parent.mkdir(parents=True, exist_ok=True)
    with source.open("rb") as f:
        catalog = read_po(f)
    with compiled.open("wb") as f:
        write_mo(f, catalog)
    app.add_message_catalog("exercise", str(compiled.parents[2]))


class TranslatedExercisesForSolutions(SphinxPostTransform):
    """A solution's heading repeats its exercise's title ("Solution to Exercise 4.1 (title)"), which
    sphinx-exercise reads from a copy of the exercise made when the page was parsed, before the Locale
    transform translated it. Before that heading is written (priority 21), point the registry at a copy
    of the exercise as it stands on the page, translated, for every exercise of this page."""

    default_priority = 19

    def run(self, **kwargs: Any) -> None:
        registry = getattr(self.env, "sphinx_exercise_registry", None)
        if not registry:
            return
        from sphinx_exercise.nodes import exercise_enumerable_node, exercise_node, exercise_title

        for node in self.document.findall(lambda n: isinstance(n, (exercise_node,
                                                                   exercise_enumerable_node))):
            label = node.get("label")
            if label in registry and node.children and isinstance(node.children[0], exercise_title):
                registry[label]["node"] = node.deepcopy()


def add_static_files(app: Sphinx) -> None:
    """Serve static/ with the book and load its stylesheet and script on every page."""
    app.config.html_static_path.append(str(STATIC))
    app.add_css_file("course_book.css")
    app.add_js_file("course_book.js")


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", add_static_files)
    app.connect("config-inited", add_exercise_words, priority=400)  # before sphinx-exercise
    app.connect("html-page-context", language_switcher)
    app.add_role("slides", slides_role)
    app.add_transform(TranslatableExerciseTitles)
    _glue_in_translations()
    app.add_post_transform(ExerciseTitlesForGettext)
    app.add_post_transform(TranslatedExercisesForSolutions)
    app.connect("env-get-updated", renumber_exercises, priority=900)  # after Sphinx numbers figures
    app.connect("doctree-read", hide_markers)
    app.connect("doctree-read", translate_printed_outputs)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
