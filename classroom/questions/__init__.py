"""The question bank: at least eight questions per chapter, in English, 简体 and 繁體, for an LMS.

    python -m classroom questions --out question_bank     # Moodle GIFT and Canvas QTI, per language

One YAML file per notebook (``classroom/questions/chNN.yaml``) holds its questions. Each has an
``id``, a ``kind`` and a ``source`` (where in the chapter it comes from), and its texts in English
(``en``) and simplified Chinese (``zh_CN``); the traditional Chinese (``zh_TW``) is derived from the
simplified at export time with the converter of the course's Taiwan edition
(``scripts/translations.py``: OpenCC s2twp, then the course's overrides and the glossary's words).

Kinds:

- ``choice``: multiple choice, one ``correct: true`` option. Every wrong option names, in
  ``mistake``, the course's own wording of the misconception or mistake it stands for (see
  ``mistake_problem``), so that a wrong answer tells the teacher which idea went wrong.
- ``numeric``: a number the learner types; ``answer`` names a value computed by
  ``classroom.questions.compute`` from the question's ``params``, accepted within ``tolerance``.
- ``shape``: "predict the shape", multiple choice whose options are shapes computed by running the
  package's layers; the wrong ones are what a named mistake would give.

Texts are one line each: plain text with `code` spans and $math$ (LaTeX). ``[[name]]`` (or
``[[name:.3f]]``) is replaced by a parameter or a computed value, so the numbers a stem states and
the numbers the answer is computed from are one set: every parameter appears in its stem.
"""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from classroom.questions.compute import COMPUTE

FOLDER = Path(__file__).resolve().parent
REPO = FOLDER.parents[1]
LANGUAGES = ("en", "zh_CN", "zh_TW")
WRITTEN = ("en", "zh_CN")  # zh_TW is derived
KINDS = ("choice", "numeric", "shape")
PLACEHOLDER = re.compile(r"\[\[(\w+)(?::([^\]]*))?\]\]")
MATH = re.compile(r"\$[^$]+\$")
CODE = re.compile(r"`[^`]+`")


@dataclass(frozen=True)
class Option:
    """One option of a multiple-choice or shape question: texts per written language (or one text for
    all, ``text``), whether it is the answer, and the named mistake a wrong option stands for."""

    text: dict[str, str]
    correct: bool = False
    mistake: str = ""


@dataclass(frozen=True)
class Question:
    id: str
    notebook: str  # "04_self_attention"
    kind: str
    source: str
    stem: dict[str, str]
    explanation: dict[str, str]
    options: tuple[Option, ...] = ()
    answer: str = ""  # the computed value that is the answer (numeric) or the correct option's text
    tolerance: float = 0.0
    compute: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    spoils: tuple[str, ...] = ()  # the exercises it gives away: open it only once they are due

    @property
    def chapter(self) -> int:
        return int(self.notebook[:2])


EXERCISE_IN_SOURCE = re.compile(r"\bExercise (\d+\.\d+)")


def spoiled(entry: dict, source: str) -> tuple[str, ...]:
    """The exercises a question gives away: those its ``source`` names ("Exercise 2.4": a question
    drawn from an exercise asks what the exercise asks), and those its ``spoils`` key adds (a lab's
    question that names a planted bug)."""
    found = EXERCISE_IN_SOURCE.findall(source) + [str(n) for n in entry.get("spoils", [])]
    return tuple(dict.fromkeys(found))


@dataclass(frozen=True)
class Rendered:
    """A question in one language, values filled in: what the exporters write."""

    id: str
    kind: str
    stem: str
    explanation: str
    options: tuple[str, ...] = ()
    correct: int = -1  # index of the correct option
    answer: float | None = None  # numeric questions
    tolerance: float = 0.0


_WIDE = "\u3000-\u303f\u4e00-\u9fff\uff00-\uffef“”‘’"  # Han characters and full-width punctuation
_WIDE_PUNCTUATION = "\u3000-\u303f\uff00-\uffef“”‘’"


def one_line(text: str) -> str:
    """The text on one line: line breaks and runs of spaces become one space, except where Chinese
    meets Chinese or a full-width punctuation mark (a folded YAML line must not leave a space there)."""
    text = " ".join(str(text).split())
    text = re.sub(f"(?<=[{_WIDE}]) (?=[{_WIDE}])", "", text)
    return re.sub(f"(?<=[{_WIDE_PUNCTUATION}]) | (?=[{_WIDE_PUNCTUATION}])", "", text)


def _texts(entry: Any, where: str, languages: tuple[str, ...] = WRITTEN) -> dict[str, str]:
    if not isinstance(entry, dict) or set(entry) != set(languages):
        raise ValueError(f"{where}: give the text in {' and '.join(languages)}, got {entry!r}")
    texts = {lang: one_line(entry[lang]) for lang in languages}
    for lang, text in texts.items():
        if not text:
            raise ValueError(f"{where}: the {lang} text is empty")
    return texts


def _option(entry: Any, where: str) -> Option:
    keys = set(entry) if isinstance(entry, dict) else set()
    allowed = {"text", "correct", "mistake"} | set(WRITTEN)
    if not keys or keys - allowed:
        raise ValueError(f"{where}: an option has keys among {sorted(allowed)}, got {entry!r}")
    if "text" in entry:  # one text for every language (a shape, a number, code)
        if keys & set(WRITTEN):
            raise ValueError(f"{where}: an option has either `text` or texts per language")
        text = {lang: one_line(entry["text"]) for lang in WRITTEN}
    else:
        text = _texts({lang: entry.get(lang) for lang in WRITTEN}, where)
    return Option(text, bool(entry.get("correct", False)), str(entry.get("mistake", "")))


def load_chapter(path: Path) -> list[Question]:
    """The questions of one YAML file, checked for their form (not yet computed)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser where PyYAML has it
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
    if not isinstance(data, dict) or set(data) != {"notebook", "questions"}:
        raise ValueError(f"{path.name}: expected the keys notebook and questions")
    notebook = data["notebook"]
    questions = []
    for entry in data["questions"]:
        where = f"{path.name}: {entry.get('id', '?')}"
        allowed = {"id", "kind", "source", "stem", "explanation", "options", "answer", "tolerance",
                   "compute", "params", "spoils"}
        if set(entry) - allowed:
            raise ValueError(f"{where}: unknown keys {sorted(set(entry) - allowed)}")
        kind = entry.get("kind")
        if kind not in KINDS:
            raise ValueError(f"{where}: kind must be one of {KINDS}, got {kind!r}")
        options = tuple(_option(o, where) for o in entry.get("options", []))
        if (kind == "numeric") == bool(options):
            raise ValueError(f"{where}: a numeric question has no options, the others have them")
        if entry.get("compute") and entry["compute"] not in COMPUTE:
            raise ValueError(f"{where}: no computation named {entry['compute']!r} in compute.py")
        questions.append(Question(
            id=str(entry["id"]), notebook=notebook, kind=kind, source=str(entry.get("source", "")),
            stem=_texts(entry.get("stem"), where), explanation=_texts(entry.get("explanation"), where),
            options=options, answer=str(entry.get("answer", "")),
            tolerance=float(entry.get("tolerance", 0.0)), compute=str(entry.get("compute", "")),
            params=dict(entry.get("params") or {}),
            spoils=spoiled(entry, str(entry.get("source", "")))))
    return questions


def bank_files() -> list[Path]:
    return sorted(FOLDER.glob("ch[0-9][0-9].yaml"))


@functools.cache
def load_bank() -> dict[str, tuple[Question, ...]]:
    """Every chapter's questions, by notebook name, in the order of the files."""
    bank: dict[str, tuple[Question, ...]] = {}
    for path in bank_files():
        questions = load_chapter(path)
        bank[questions[0].notebook] = tuple(questions)
    return bank


def all_questions() -> list[Question]:
    return [q for questions in load_bank().values() for q in questions]


# ---------------------------------------------------------------------------------------------------
# Values: the parameters and what the course's code computes from them
# ---------------------------------------------------------------------------------------------------
_VALUES: dict[str, dict[str, Any]] = {}


def values_of(question: Question) -> dict[str, Any]:
    """The question's parameters and, when it has a ``compute``, the values computed from them."""
    if question.id not in _VALUES:
        values = dict(question.params)
        if question.compute:
            values.update(computed(question))
        _VALUES[question.id] = values
    return _VALUES[question.id]


def computed(question: Question) -> dict[str, Any]:
    """What ``question.compute`` makes of its parameters, computed afresh (on one thread: the models
    are tiny, and one thread is fastest on a busy machine)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return COMPUTE[question.compute](**question.params)
    finally:
        torch.set_num_threads(threads)


def show(value: Any, spec: str = "") -> str:
    """A value as the text shows it: floats with ``spec`` (default: shortest), sequences in brackets."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return format(value, spec or "g")
    if isinstance(value, int):
        return format(value, spec or "d")
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(show(v, spec) for v in value) + ")"
    return str(value)


def fill(template: str, values: dict[str, Any], where: str = "") -> str:
    """``template`` with every ``[[name]]`` / ``[[name:spec]]`` replaced by its value."""
    def one(match: re.Match) -> str:
        name, spec = match.group(1), match.group(2) or ""
        if name not in values:
            raise KeyError(f"{where}: no value named {name!r} (parameters and computed values: "
                           f"{sorted(values)})")
        return show(values[name], spec)

    return PLACEHOLDER.sub(one, template)


# ---------------------------------------------------------------------------------------------------
# Traditional Chinese, derived as the Taiwan edition of the book is
# ---------------------------------------------------------------------------------------------------
@functools.cache
def _translations_module():
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import translations
    finally:
        sys.path.remove(str(REPO / "scripts"))
    return translations


@functools.cache
def converter():
    """OpenCC's s2twp, as ``to_traditional`` uses it, remembering what it converted."""
    import opencc

    return functools.cache(opencc.OpenCC("s2twp").convert)


@functools.cache
def _fast_translations():
    """``scripts/translations.py`` with its pure helpers remembered: it reads the glossary and builds a
    character converter on every call, which is slow for hundreds of short texts (same results)."""
    import opencc

    translations = _translations_module()
    translations.glossary_pairs = functools.cache(translations.glossary_pairs)
    if getattr(translations, "_S2TW", None) is None and hasattr(translations, "_S2TW"):
        translations._S2TW = functools.cache(opencc.OpenCC("s2tw").convert)
    return translations


@functools.cache
def traditional(simplified: str, english: str) -> str:
    """The Taiwan text of a simplified one (``scripts/translations.py``'s ``to_traditional``: rows and
    columns swapped where the English speaks of them, s2twp, the glossary's pairs, the overrides)."""
    return _fast_translations().to_traditional(simplified, english, converter())


def text_in(texts: dict[str, str], language: str) -> str:
    """The template in ``language``: written for en and zh_CN, derived for zh_TW."""
    if language == "zh_TW":
        return traditional(texts["zh_CN"], texts["en"])
    return texts[language]


def render(question: Question, language: str) -> Rendered:
    """The question in ``language`` with its values filled in."""
    if language not in LANGUAGES:
        raise ValueError(f"language must be one of {LANGUAGES}, got {language!r}")
    values = values_of(question)
    where = question.id

    def text(texts: dict[str, str]) -> str:
        return fill(text_in(texts, language), values, where)

    options = tuple(text(o.text) if o.text["en"] != o.text["zh_CN"] else fill(o.text["en"], values, where)
                    for o in question.options)
    correct = next((k for k, o in enumerate(question.options) if o.correct), -1)
    answer = None
    if question.kind == "numeric":
        if question.answer not in values:
            raise KeyError(f"{where}: the answer {question.answer!r} is not a computed value")
        answer = float(values[question.answer])
    return Rendered(id=question.id, kind=question.kind, stem=text(question.stem),
                    explanation=text(question.explanation), options=options, correct=correct,
                    answer=answer, tolerance=question.tolerance)


# ---------------------------------------------------------------------------------------------------
# Checks the tests and the exporter share
# ---------------------------------------------------------------------------------------------------
@functools.cache
def chapter_markdown(notebook: str) -> str:
    """The prose of a chapter (its markdown cells), whitespace normalised."""
    import nbformat

    nb = nbformat.read(REPO / "chapters" / f"{notebook}.ipynb", as_version=4)
    return " ".join(" ".join(c.source for c in nb.cells if c.cell_type == "markdown").split())


@functools.cache
def _exercise_strings() -> tuple[str, ...]:
    """Every string the exercises' checks hold (``utils/exercises``): the mistakes they name, the
    misconceptions a wrong prediction reveals, their hints; whitespace normalised."""
    import ast

    found = []
    for path in sorted((REPO / "utils" / "exercises").glob("ch*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.append(" ".join(node.value.split()))
    return tuple(found)


def mistake_problem(mistake: str, notebook: str) -> str:
    """Why ``mistake`` is not one of the course's named misconceptions or mistakes ('' when it is):

    - ``MISTAKES.<key>``: a key of ``utils.checks.MISTAKES``, the course's wording of the recurring ones;
    - ``check: <words>``: words of a mistake or a misconception an exercise's check names
      (``utils/exercises``), word for word;
    - ``box: <title>``: the title of a "Common misconception" box of a chapter, word for word;
    - ``chapter: <words>``: words of this chapter's prose, which name the wrong idea and correct it.
    """
    kind, _, name = mistake.partition(":")
    name = name.strip()
    if kind.startswith("MISTAKES."):
        from utils.checks import MISTAKES

        return "" if kind.split(".", 1)[1] in MISTAKES else f"no key {kind} in utils.checks.MISTAKES"
    if kind == "check":
        return "" if any(name in text for text in _exercise_strings()) else \
            f"no exercise check names the mistake {name!r} (quote utils/exercises word for word)"
    if kind == "box":
        title = f'Common misconception: "{name}"'
        chapters = sorted(p.stem for p in (REPO / "chapters").glob("[0-9][0-9]_*.ipynb"))
        return "" if any(title in chapter_markdown(n) for n in chapters) else f"no box titled {title!r}"
    if kind == "chapter":
        return "" if name and name in chapter_markdown(notebook) else \
            f"{notebook} does not say {name!r} (quote its prose word for word)"
    return f"{mistake!r} names no misconception: use MISTAKES.<key>, check:, box: or chapter:"
