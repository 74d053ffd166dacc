"""The prose of the chapters against their code: measured numbers are glued, figures are referenced by
label, and the notation is the preface's (no execution; the glued values themselves are compared
between two executions in tests/test_book.py).

- A Markdown cell may not state a measured quantity (a decimal, a percentage, a duration, a speed-up)
  as a literal: the cell that measures it calls ``utils.glue.glue`` and the text says
  ``{glue:text}`name```. Numbers that are not measurements (a paper's hyper-parameter, arithmetic, an
  exercise's input) are listed in ``tests/prose/chNN.json`` with the phrase they stand in.
- "The figure above" and "Figure 3" are not references: ``{numref}`fig-...``` is, and its label must
  belong to a figure cell of the same chapter.
- Every single-letter symbol in a chapter's math is in the preface's notation table, or is listed in
  that file's ``local_symbols`` with its meaning (and then it is not a table symbol: one symbol,
  one meaning).
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "chapters").glob("*.ipynb"))
PREFACE = REPO / "book" / "preface.md"

# Per chapter, tests/prose/chNN.json holds what the chapter may say that the rules below would flag:
# "not_measured": {phrase: reason}, exact substrings of one Markdown line whose numbers are not
# measurements of this course's code (a paper's hyper-parameter, arithmetic, an exercise's input);
# "local_symbols": {letter: meaning}, symbols the chapter defines for itself where it uses them.
# Keep both short: a measured number belongs in a glue, a symbol of the whole course in the preface.
EXCEPTIONS = REPO / "tests" / "prose"


@cache
def _exceptions(chapter: str) -> dict[str, dict[str, str]]:
    path = EXCEPTIONS / f"ch{chapter}.json"
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    return {"not_measured": data.get("not_measured", {}), "local_symbols": data.get("local_symbols", {})}


_MEASURED = re.compile(
    r"(?<![\w.^_{\\])(\d+\.\d+|\d+(?:\.\d+)?\s?%|\d+(?:\.\d+)?\s?(?:ms|s|seconds|minutes|×|x|times)\b)"
    r"(?![\w.])")
_EXERCISE_HEADER = re.compile(r"^\*(?:Easy|Medium|Hard) · about \d+ minutes\.\*")
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_ROLE = re.compile(r"\{(?:glue:text|glue|numref|ref|doc|eq|cite)\}`[^`]*`")
_FIGURE_WORDS = re.compile(
    r"\b(?:(?:the|this|that)\s+(?:figure|plot|picture|heatmap|chart)s?\s+(?:above|below)"
    r"|(?:above|below|next|previous|last)\s+(?:figure|plot|picture|chart)s?"
    r"|Fig(?:ure|\.)\s+\d)", re.I)
_NUMREF = re.compile(r"\{numref\}`(?:[^`<]*<)?([^`>]+)>?`")


def _params(paths: list[Path]) -> list:
    return [pytest.param(p, id=p.stem) for p in paths]


@cache
def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _markdown(path: Path) -> list[tuple[int, str]]:
    return [(i, _source(c)) for i, c in enumerate(_cells(path)) if c["cell_type"] == "markdown"]


def _chapter(path: Path) -> str:
    return path.stem[:2]


def measured_literals(text: str, allowed: dict[str, str] | None = None) -> list[str]:
    """Literal measured-looking numbers in Markdown ``text``, outside code spans, roles and exercise
    headers, and not inside one of the ``allowed`` phrases."""
    found = []
    for line in text.splitlines():
        if _EXERCISE_HEADER.match(line.strip()):
            continue
        kept = [phrase for phrase in (allowed or {}) if phrase in line]
        for phrase in kept:
            line = line.replace(phrase, " ")
        line = _ROLE.sub(" ", _CODE_SPAN.sub(" ", line))
        found += [m.group(1) for m in _MEASURED.finditer(line)]
    return found


def test_measured_literals_finds_what_it_should():
    assert measured_literals("reaches about 0.95 and 98% in 35 seconds, 3.2x faster") == [
        "0.95", "98%", "35 seconds", "3.2x"]
    assert measured_literals("exact match {glue:text}`ch01_exact` and `lr=0.001`") == []
    assert measured_literals("*Medium · about 15 minutes.* Write it") == []
    assert measured_literals("size $d_{ff} = 2048$ in 6 layers, h_1.5") == []
    assert measured_literals("with $\\beta_2 = 0.98$ here", {"\\beta_2 = 0.98": "paper"}) == []


@pytest.mark.parametrize("path", _params(NOTEBOOKS))
def test_prose_glues_its_measured_numbers(path):
    allowed = _exceptions(_chapter(path))["not_measured"]
    problems = [f"cell {i}: {', '.join(found)}" for i, text in _markdown(path)
                if (found := measured_literals(text, allowed))]
    assert not problems, (
        f"{path.name}: measured numbers typed into the prose; glue them from the cell that computes "
        "them (utils.glue.glue, then {glue:text}`name`), or, if they are not measurements, list the "
        "phrase in tests/prose/chNN.json (not_measured) with the reason:\n  " + "\n  ".join(problems))


@pytest.mark.parametrize("path", _params(NOTEBOOKS))
def test_prose_names_its_figures_by_label(path):
    labels = {c.get("metadata", {}).get("mystnb", {}).get("figure", {}).get("name")
              for c in _cells(path) if c["cell_type"] == "code"} - {None}
    problems = []
    for i, text in _markdown(path):
        plain = _CODE_SPAN.sub(" ", text)
        problems += [f"cell {i}: '{m.group(0)}' (write {{numref}}`fig-...`)"
                     for m in _FIGURE_WORDS.finditer(plain)]
        problems += [f"cell {i}: {{numref}} to '{label}', which is no figure of this chapter"
                     for label in _NUMREF.findall(text) if label not in labels]
    assert not problems, f"{path.name}:\n  " + "\n  ".join(problems)


# ---------------------------------------------------------------------------------------------------
# Notation

_MATH = re.compile(r"\$\$(.+?)\$\$|\$([^$\n]+?)\$", re.S)
_COMMAND_WITH_WORD = re.compile(
    r"\\(?:text|texttt|mathrm|operatorname|textbf|mathit|mathcal|mathbb|label|tag|mbox)\s*\{[^}]*\}")
_COMMAND = re.compile(r"\\[A-Za-z]+")
_LETTER = re.compile(r"(?<![A-Za-z])([A-Za-z])(?![A-Za-z])")


@cache
def table_symbols() -> set[str]:
    """Single letters of the first column of the preface's notation table."""
    text = PREFACE.read_text(encoding="utf-8")
    table = text[text.index("| Symbol | Code | Meaning |"):]
    table = table[:table.index("\n\n")]
    letters: set[str] = set()
    for row in table.splitlines()[2:]:
        first = row.split("|")[1]
        for math in re.findall(r"\$([^$]+)\$", first):
            letters |= math_letters(math)
    return letters


def math_letters(math: str) -> set[str]:
    """Single-letter symbols in a math string, with words in \\text{...} and commands removed."""
    math = _COMMAND_WITH_WORD.sub(" ", math)
    math = _COMMAND.sub(" ", math)
    math = _SCRIPT.sub(_script_letters, math)
    return set(_LETTER.findall(math))


_SCRIPT = re.compile(r"([_^])\{([A-Za-z]+)\}|([_^])([A-Za-z]{2})(?![A-Za-z])")
_SCRIPT_WORDS = {"ff", "ls", "emb", "model", "blk"}  # d_{ff}, epsilon_{ls}, d_{emb}: labels, not symbols


def _script_letters(m: re.Match) -> str:
    """_{ij} is two indices, i and j; _{ff} and _{model} are labels and name no symbol."""
    letters = m.group(2) or m.group(4)
    return " " if letters in _SCRIPT_WORDS or len(letters) > 2 else " " + " ".join(letters) + " "


def test_math_letters():
    assert math_letters(r"\alpha_{ij} = \frac{\exp(e_{ij})}{\sum_{j'} \exp(e_{ij'})}") == {"i", "j", "e"}
    assert math_letters(r"d_{\text{model}} / H") == {"d", "H"}
    assert {"T", "S", "H", "h", "E", "A", "M", "e", "i", "j"} <= table_symbols()
    assert not {"m", "n", "C", "L"} & table_symbols()


@pytest.mark.parametrize("path", _params(NOTEBOOKS))
def test_math_uses_the_preface_notation(path):
    local = _exceptions(_chapter(path))["local_symbols"]
    clash = sorted(set(local) & table_symbols())
    assert not clash, f"tests/prose/ch{_chapter(path)}.json: local_symbols redefine table symbols {clash}"
    allowed = table_symbols() | set(local)
    problems = []
    for i, text in _markdown(path):
        for m in _MATH.finditer(_CODE_SPAN.sub(" ", text)):
            unknown = sorted(math_letters(m.group(1) or m.group(2)) - allowed)
            if unknown:
                problems.append(f"cell {i}: {unknown} in ${(m.group(1) or m.group(2)).strip()[:60]}$")
    assert not problems, (
        f"{path.name}: symbols that are not in the preface's notation table (book/preface.md) "
        "nor in this chapter's local_symbols (tests/prose/chNN.json):\n  " + "\n  ".join(problems))


@pytest.mark.parametrize("path", _params(NOTEBOOKS))
def test_heads_are_numbered_from_zero(path):
    one_based = re.compile(r"head\}?_\{?H\}?(?!\s*-)|\^\{?\(?H\)?\}?(?!\s*-)|h = 1,\s*\\dots,\s*H\b"
                           r"|\bhead \$?H\$?(?!\s*-)")
    problems = [f"cell {i}: '{m.group(0)}'" for i, text in _markdown(path)
                for m in one_based.finditer(_CODE_SPAN.sub(" ", text))]
    assert not problems, (f"{path.name}: heads are numbered 0 to H - 1, as in the code and the "
                          "figures:\n  " + "\n  ".join(problems))


def _exercise_titles() -> set[str]:
    titles = set()
    for path in NOTEBOOKS:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            titles |= {" ".join(t.split()) for t in re.findall(r"```\{exercise\}[ \t]+([^\n]+)",
                                                               "".join(cell["source"]))}
    return titles


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_exercises_named_in_the_prose_exist(path):
    """"the exercise *Title*" points at an exercise of the course, not at one that was replaced."""
    titles = _exercise_titles()
    named = []
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "markdown":
            named += [" ".join(t.split()) for t in re.findall(r"[Ee]xercises?\s+\*([^*]+)\*",
                                                               "".join(cell["source"]))]
    missing = [t for t in named if t.rstrip(".") not in titles]
    assert not missing, f"{path.name} names exercises that do not exist: {missing}"
