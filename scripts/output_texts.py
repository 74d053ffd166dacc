"""What the notebooks print, in the Chinese books: the templates of the English run's printed lines and
their translations (utils/locale/outputs_<language>.json, read by utils.language.translate_output).

    python scripts/translations.py outputs-todo 04_self_attention   # untranslated templates, as JSON
    python scripts/translations.py outputs-fill F.json              # {template: 简体} -> zh_CN, derive zh_TW

A template is a printed line with its data taken out (utils.language.output_template). Only the lines
with English words in them are templates to translate; a table of numbers is left as printed. The
templates come from the book's execution cache, so `make book` first.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLES = ROOT / "utils" / "locale"
CHAPTERS = ROOT / "chapters"
SOURCE = "zh_CN"
sys.path.insert(0, str(ROOT))

from utils.language import _PLACEHOLDER, output_template  # noqa: E402

# Two English words in a row, once the data and the code (names with _ . ( = or digits) are out
_WORDS = re.compile(r"[A-Za-z][A-Za-z'-]+[ ,;:]+[A-Za-z][A-Za-z'-]+")


def _prose(template: str) -> str:
    """A template without its placeholders and code (names with _ . ( = or digits)."""
    return " ".join(t for t in _PLACEHOLDER.sub(" ", template).split()
                    if not re.search(r"[_.(=)\d\[\]]", t) or re.fullmatch(r"[A-Za-z'-]+[.,;:)]?", t))


def needs_translation(template: str) -> bool:
    """Whether a printed line has words a reader should read in their language."""
    return bool(_WORDS.search(_prose(template)))


def english_left(line: str) -> bool:
    """Whether a line of a Chinese page's printed output is still English: words to translate and no
    Chinese, or four English words in a row (names such as CUDA GPU or OK BLEU may stay)."""
    template, _ = output_template(line)
    if not needs_translation(template):
        return False
    return not re.search(r"[\u4e00-\u9fff]", template) or bool(
        re.search(r"[A-Za-z][A-Za-z'-]+(?:[ ,;:]+[A-Za-z][A-Za-z'-]+){3}", _prose(template)))


def printed_text(stem: str, build: Path = ROOT / "_build" / "html") -> list[str]:
    """Every stream output of the book's run of chapters/<stem>.ipynb, in order."""
    from classroom.slides import executed_notebook

    notebook = executed_notebook(build, stem)
    return [output.text for cell in notebook.cells for output in cell.get("outputs", [])
            if output.output_type == "stream"]


def templates(stem: str, build: Path = ROOT / "_build" / "html") -> list[str]:
    """The templates of a notebook's printed lines that need translating, in the order printed."""
    found: dict[str, None] = {}
    for text in printed_text(stem, build):
        for line in text.split("\n"):
            template, _ = output_template(line)
            if template and needs_translation(template):
                found[template] = None
    return list(found)


def table(language: str) -> dict[str, str]:
    path = TABLES / f"outputs_{language}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def write_table(language: str, entries: dict[str, str]) -> None:
    """Write one language's table, only when it changed."""
    TABLES.mkdir(parents=True, exist_ok=True)
    text = json.dumps(dict(sorted(entries.items())), ensure_ascii=False, indent=1) + "\n"
    path = TABLES / f"outputs_{language}.json"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def problems(template: str, translation: str) -> list[str]:
    """What a translation of a template loses: a placeholder, or every Chinese character."""
    found = []
    want, got = sorted(_PLACEHOLDER.findall(template)), sorted(_PLACEHOLDER.findall(translation))
    if want != got:
        found.append(f"placeholders {got}, expected {want}")
    if not re.search(r"[\u4e00-\u9fff]", translation):
        found.append("no Chinese in the translation")
    return found


def todo(stem: str) -> dict[str, str]:
    have = table(SOURCE)
    return {t: "" for t in templates(stem) if not have.get(t)}


def fill(entries: dict[str, str]) -> list[str]:
    """Add {template: 简体} to the simplified table, refusing a broken one; derive the traditional."""
    have, refused = table(SOURCE), []
    for template, chinese in entries.items():
        if found := problems(template, chinese):
            refused.append(f"{template[:70]!r}: {'; '.join(found)}")
        else:
            have[template] = chinese
    write_table(SOURCE, have)
    derive()
    return refused


def derive() -> dict[str, str]:
    """utils/locale/outputs_zh_TW.json from the simplified table, as the catalogues are derived."""
    import opencc

    from translations import to_traditional

    converter = opencc.OpenCC("s2twp").convert
    derived = {t: to_traditional(c, t, converter) for t, c in table(SOURCE).items()}
    write_table("zh_TW", derived)
    return derived


def missing(build: Path = ROOT / "_build" / "html") -> dict[str, list[str]]:
    """Per notebook, the templates of this build with no simplified translation."""
    have = table(SOURCE)
    return {stem: left for stem in sorted(p.stem for p in CHAPTERS.glob("*.ipynb"))
            if (left := [t for t in templates(stem, build) if not have.get(t)])}
