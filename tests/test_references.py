"""Every author-year citation in the prose has an entry in ``book/references.md``.

The prose is the Markdown cells of ``chapters/*.ipynb`` and the pages ``book/*.md`` (the references page
itself aside). A citation is a surname, or a list of surnames, with a year, as the course writes them:
``Vaswani et al. (2017)``, ``(Vaswani et al., 2017, section 3.2)``, ``Shazeer (2019)``,
``Press & Wolf (2017)``, ``Press and Wolf (2017)``, ``Bahdanau, Cho and Bengio (2015)``,
``(Radford et al., 2018, 2019)``. It has an entry when one work in the reference list has the cited
first author as its first author, names the other cited authors, and carries that year.

The papers of ``book/references.md`` are kept in alphabetical order of their first author, then year.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
REFERENCES = REPO / "book" / "references.md"
PROSE = sorted((REPO / "chapters").glob("*.ipynb")) + sorted(
    p for p in (REPO / "book").glob("*.md") if p != REFERENCES)

# A surname: a capital letter, then letters or hyphens, or an apostrophe before a capital (O'Neil, not
# the possessive Shazeer's); lower-case particles before it belong to it ("van den Oord", "de Jong").
_NAME = r"(?:(?:van|von|der|den|de|da|di|du|le|la)\s+)*[A-ZÀ-ÖØ-ÞĀ-Ž](?:[\w-]|['’](?=[A-Z]))*"
_AUTHORS = rf"{_NAME}(?:\s+et\s+al\.|(?:,\s*{_NAME})*\s+(?:and|&)\s+{_NAME})?"
_YEAR = r"(?:1[89]|20)\d\d[a-z]?"
_YEARS = rf"{_YEAR}(?:,\s*{_YEAR})*"
# "Name (2017" or "Name's (2017" (narrative), "Name, 2017" (in parentheses); a year is followed by no
# letter, digit or hyphen (so a date such as 2026-11-23 is not a citation).
_CITATION = re.compile(
    rf"(?<![\w-])(?P<authors>{_AUTHORS})(?:['’]s)?(?:\s+\(|,\s+)(?P<years>{_YEARS})(?![\w-])")
_CODE_SPAN = re.compile(r"`[^`\n]*`")


@dataclass(frozen=True)
class Citation:
    text: str  # as written, whitespace collapsed
    authors: tuple[str, ...]  # surnames, the first author first
    years: tuple[str, ...]


def _squash(text: str) -> str:
    return " ".join(text.split())


def _fold(name: str) -> str:
    """``name`` for comparison: no accents, no case, one kind of apostrophe, single spaces."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
    return _squash(plain.replace("’", "'").casefold())


def located_citations(text: str) -> list[tuple[int, Citation]]:
    """``(offset, citation)`` for the author-year citations in Markdown ``text`` (not in code spans)."""
    found = []
    for m in _CITATION.finditer(_CODE_SPAN.sub(lambda s: " " * len(s[0]), text)):
        authors = re.sub(r"\s+et\s+al\.$", "", m["authors"])
        names = tuple(_squash(n) for n in re.split(r",\s*|\s+(?:and|&)\s+", authors))
        years = tuple(y.strip() for y in m["years"].split(","))
        found.append((m.start(), Citation(_squash(m.group(0)), names, years)))
    return found


def citations(text: str) -> list[Citation]:
    """The author-year citations in Markdown ``text``, in order."""
    return [c for _, c in located_citations(text)]


# ----------------------------------------------------------------------------------------- reference list

_REF_AUTHOR = re.compile(rf"(?<![\w-])({_NAME}),\s+[A-ZÀ-Þ]\.")
_REF_YEARS = re.compile(rf"([^()]*?)\(({_YEARS})\)")


@dataclass(frozen=True)
class Work:
    first_author: str  # folded
    text: str  # folded: the authors as listed
    years: tuple[str, ...]


def reference_entries(markdown: str) -> list[tuple[str, str]]:
    """``(section, entry)`` for every bullet of a reference list; continuation lines are joined."""
    entries: list[tuple[str, str]] = []
    section = ""
    for line in markdown.splitlines():
        if line.startswith("#"):
            section = line.lstrip("#").strip()
        elif line.startswith("- "):
            entries.append((section, line[2:].strip()))
        elif line.startswith(" ") and line.strip() and entries:
            entries[-1] = (entries[-1][0], entries[-1][1] + " " + line.strip())
    return entries


def works(entry: str) -> list[Work]:
    """The works of one entry: each year in brackets, with the authors written before it.

    One entry may hold several works ("Papineni, K. et al. (2002). *BLEU...* ACL. Post, M. (2018).
    *A Call...*"); the authors of a work are what follows the previous title (the text after the last
    ``*``) up to its year.
    """
    found = []
    for m in _REF_YEARS.finditer(entry):
        authors = m[1].rsplit("*", 1)[-1]
        first = _REF_AUTHOR.search(authors)
        if first:
            years = tuple(y.strip() for y in m[2].split(","))
            found.append(Work(_fold(first[1]), _fold(authors), years))
    return found


@cache
def _works() -> list[Work]:
    text = REFERENCES.read_text(encoding="utf-8")
    return [w for _, entry in reference_entries(text) for w in works(entry)]


def has_entry(citation: Citation, year: str, listed: list[Work]) -> bool:
    first, *others = (_fold(a) for a in citation.authors)
    return any(
        w.first_author == first and year in w.years
        and all(re.search(rf"(?<!\w){re.escape(o)}(?!\w)", w.text) for o in others)
        for w in listed)


# ------------------------------------------------------------------------------------------------ prose

def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def prose_citations(path: Path) -> list[tuple[str, Citation]]:
    """``(where, citation)`` for every citation of a chapter's Markdown cells or of a book page."""
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        return [(f"cell {i}", c) for i, cell in enumerate(cells) if cell["cell_type"] == "markdown"
                for c in citations(_source(cell))]
    text = path.read_text(encoding="utf-8")
    return [(f"line {text.count(chr(10), 0, at) + 1}", c) for at, c in located_citations(text)]


# ------------------------------------------------------------------------------------------------ tests

@pytest.mark.parametrize(("text", "expected"), [
    ("as Vaswani et al. (2017) show", [(("Vaswani",), ("2017",))]),
    ("attention (Vaswani et al., 2017, section 3.2).", [(("Vaswani",), ("2017",))]),
    ("of Shazeer (2019). It", [(("Shazeer",), ("2019",))]),
    ("Press & Wolf (2017) tie", [(("Press", "Wolf"), ("2017",))]),
    ("Press and Wolf (2017) tie", [(("Press", "Wolf"), ("2017",))]),
    ("- Bahdanau, Cho and Bengio (2015), *Neural", [(("Bahdanau", "Cho", "Bengio"), ("2015",))]),
    ("(Sutskever et al., 2014; Cho et al., 2014)", [(("Sutskever",), ("2014",)), (("Cho",), ("2014",))]),
    ("GPT (Radford et al., 2018, 2019). A", [(("Radford",), ("2018", "2019"))]),
    ("(Kalchbrenner et al., 2016; van den Oord et al., 2016)",
     [(("Kalchbrenner",), ("2016",)), (("van den Oord",), ("2016",))]),
    ("a gated recurrent unit (GRU, Cho et al., 2014)", [(("Cho",), ("2014",))]),
    ("(Jain and Wallace, 2019; Wiegreffe and Pinter,\n2019)",
     [(("Jain", "Wallace"), ("2019",)), (("Wiegreffe", "Pinter"), ("2019",))]),
    ("Milakov and\n  Gimelshein, 2018) is", [(("Milakov", "Gimelshein"), ("2018",))]),
    ("FlashAttention-2 (Dao, 2023) and", [(("Dao",), ("2023",))]),
    ("Bahdanau et al.'s (2015) score, Shazeer’s (2019) heads, O'Neil (2020)",
     [(("Bahdanau",), ("2015",)), (("Shazeer",), ("2019",)), (("O'Neil",), ("2020",))]),
    ("In 2017 the Transformer came; d_ff = 2048 in the paper (section 3.3).", []),
    ("Measured (2026-11-23, a 2-core Xeon), and `Model(2017)` in code.", []),
    ("a $T \\times T$ matrix, 512 (2017 units)", []),
])
def test_the_extractor_finds_author_year_citations(text, expected):
    assert [(c.authors, c.years) for c in citations(text)] == expected


def test_the_reference_list_is_read_work_by_work():
    sample = (
        "## Papers\n\n"
        "- Papineni, K., Roukos, S. (2002). *BLEU: a Method.* ACL. Post, M. (2018). *A Call for\n"
        "  Clarity in Reporting BLEU Scores.* WMT.\n"
        "- Rabe, M. N., Staats, C. (2021). *Self-attention Does Not Need O(n^2) Memory.*\n"
        "- van den Oord, A. et al. (2016). *WaveNet.* arXiv.\n\n"
        "## Courses and books\n\n"
        "- Rush, A. (2018); Huang, A. et al. (2022). *The Annotated Transformer.*\n")
    entries = reference_entries(sample)
    assert [s for s, _ in entries] == ["Papers"] * 3 + ["Courses and books"]
    listed = [w for _, e in entries for w in works(e)]
    assert [(w.first_author, w.years) for w in listed] == [
        ("papineni", ("2002",)), ("post", ("2018",)), ("rabe", ("2021",)),
        ("van den oord", ("2016",)), ("rush", ("2018",)), ("huang", ("2022",))]

    def cited(text: str) -> bool:
        (c,) = citations(text)
        return all(has_entry(c, y, listed) for y in c.years)

    assert cited("(Post, 2018)") and cited("Rabe and Staats (2021)") and cited("(Huang et al., 2022)")
    assert cited("van den Oord et al. (2016)")
    assert not cited("Post (2019)")  # wrong year
    assert not cited("Roukos et al. (2002)")  # not the first author
    assert not cited("Rabe and Smith (2021)")  # an author the entry does not name


@pytest.mark.parametrize("path", [pytest.param(p, id=p.stem) for p in PROSE])
def test_every_citation_has_a_reference(path):
    missing = [
        f"  {where}: {c.text!r} has no entry whose first author is {c.authors[0]} ({year})"
        for where, c in prose_citations(path) for year in c.years
        if not has_entry(c, year, _works())]
    assert not missing, (
        f"{path.relative_to(REPO)} cites works that book/references.md does not list "
        f"(add them, in alphabetical order):\n" + "\n".join(missing))


def test_the_papers_are_in_alphabetical_order():
    keys = []
    for section, entry in reference_entries(REFERENCES.read_text(encoding="utf-8")):
        listed = works(entry)
        if section == "Papers" and listed:
            keys.append((listed[0].first_author, listed[0].years[0], entry[:60]))
    assert keys, "book/references.md has no '## Papers' list"
    out_of_order = [f"  {b[2]!r} comes after {a[2]!r}" for a, b in pairwise(keys) if b < a]
    assert not out_of_order, (
        "book/references.md: the papers are not in alphabetical order of first author, then year:\n"
        + "\n".join(out_of_order))
