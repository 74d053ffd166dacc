"""The Chinese editions kept in step with the English source (scripts/translations.py).

Fast checks of the checked-in catalogues and notebooks; no book is built here. That every catalogue is
up to date with the English (re-extracting adds nothing untranslated) is checked against the built book
in tests/test_book.py, and the translated pages are read in a browser in tests/test_browser.py.

- every catalogue of both languages is complete: no untranslated, fuzzy or obsolete message;
- every translation keeps what the page needs from the English: math, roles' targets, inline code,
  links, bold (``translation_problems``);
- the traditional catalogues are exactly what derive_traditional() makes of the simplified ones, and
  contain no simplified-only character and none of OpenCC's known traps for this course's vocabulary;
- row and column are 行 and 列 in the simplified edition and 列 and 行 in the traditional one;
- the glossary's words are the ones the chapters use, in each language;
- the Chinese notebooks (translations/) are what the catalogues make of the English notebooks.
"""

from __future__ import annotations

import re
import sys
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import translations  # noqa: E402  (scripts/ is not a package)

pytest.importorskip("opencc", reason="opencc-py is in requirements.txt")

LANGUAGES = list(translations.LANGUAGES)


def _docname(path: Path, language: str) -> str:
    return str(path.relative_to(translations.LOCALES / language / "LC_MESSAGES").with_suffix(""))


DOCNAMES = [_docname(p, "zh_CN") for p in translations.catalogues("zh_CN")]


@cache
def _messages(language: str, docname: str) -> list:
    path = translations.LOCALES / language / "LC_MESSAGES" / f"{docname}.po"
    return [m for m in translations._read(path) if m.id]


@cache
def _catalog(language: str, docname: str):
    return translations._read(translations.LOCALES / language / "LC_MESSAGES" / f"{docname}.po")


def test_every_page_of_the_book_has_a_catalogue_in_each_language():
    toc = translations.ROOT / "book" / "_toc.yml"
    pages = re.findall(r"(?:root|file):\s*(\S+)", toc.read_text(encoding="utf-8"))
    pages = [re.sub(r"\.(md|ipynb)$", "", page) for page in pages]
    for language in LANGUAGES:
        have = {_docname(p, language) for p in translations.catalogues(language)}
        assert set(pages) <= have, f"{language}: no catalogue for {sorted(set(pages) - have)}"
        extra = sorted(have - set(pages))
        assert not extra, f"{language}: catalogues of pages not in the book: {extra}"


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("docname", DOCNAMES)
def test_catalogue_is_complete(language, docname):
    catalog = _catalog(language, docname)
    assert not catalog.fuzzy, f"{language}/{docname}.po: its header is fuzzy, so Sphinx would apply nothing"
    untranslated = [m.id[:70] for m in _messages(language, docname) if not m.string]
    fuzzy = [m.id[:70] for m in _messages(language, docname) if m.fuzzy]
    assert not untranslated, (f"{language}/{docname}: {len(untranslated)} untranslated (see `python "
                              f"scripts/translations.py todo {docname}`): {untranslated[:5]}")
    assert not fuzzy, f"{language}/{docname}: {len(fuzzy)} fuzzy (the English changed): {fuzzy[:5]}"
    assert not catalog.obsolete, (f"{language}/{docname}: {len(catalog.obsolete)} obsolete messages "
                                  f"(English text that is gone): {list(catalog.obsolete)[:3]}")


@pytest.mark.parametrize("docname", DOCNAMES)
def test_translations_keep_what_the_page_needs(docname):
    problems = [f"{m.id[:60]!r}: {p}" for m in _messages("zh_CN", docname)
                for p in translations.translation_problems(
                    m.id, m.string, translations.may_stay_english(docname, m.id))]
    assert not problems, f"zh_CN/{docname}:\n  " + "\n  ".join(problems[:10])


def test_translation_problems_name_what_is_lost():
    check = translations.translation_problems
    english = "The weights $\\alpha_{ij}$ of `softmax` in {numref}`fig-x`, see [the paper](https://a.b/c)."
    good = "权重 $\\alpha_{ij}$ 来自 `softmax`，见 {numref}`fig-x` 与[论文](https://a.b/c)。"
    assert check(english, good) == []
    assert any("math" in p for p in check(english, "权重 $\\alpha$ 来自 `softmax`，{numref}`fig-x`"
                                                   "[论文](https://a.b/c)。"))
    assert any("code" in p for p in check(english, "权重 $\\alpha_{ij}$，{numref}`fig-x`[论文](https://a.b/c)。"))
    assert any("role" in p for p in check(english, "权重 $\\alpha_{ij}$ `softmax` [论文](https://a.b/c)。"))
    assert any("link" in p for p in check(english, "权重 $\\alpha_{ij}$ `softmax` {numref}`fig-x`。"))
    assert check("An English sentence left as is.", "An English sentence left as is.") != []
    assert check("{doc}`the preface <preface>`", "{doc}`前言 <preface>`") == []
    assert check("**Answer.** Yes, it does.", "答案。是的。") != []  # the bold went
    assert check("q_i = a_i W_Q \\quad\\text{(to look)}", "q_i = a_i W_Q \\quad\\text{(查找)}") == []


def test_traditional_catalogues_are_derived_from_the_simplified_ones(tmp_path):
    translations.derive_traditional(tmp_path)
    for docname in DOCNAMES:
        fresh = {m.id: m.string for m in translations._read(tmp_path / "LC_MESSAGES" / f"{docname}.po")
                 if m.id}
        stored = {m.id: m.string for m in _messages("zh_TW", docname)}
        differ = [msgid[:60] for msgid in fresh if fresh[msgid] != stored.get(msgid)]
        assert not differ and fresh.keys() == stored.keys(), (
            f"locales/zh_TW/{docname}.po is not what `python scripts/translations.py derive-tw` makes of "
            f"zh_CN (a Taiwan correction belongs in TW_OVERRIDES or locales/zh_TW_manual): {differ[:5]}")


def _outside_code_and_math(text: str) -> str:
    return re.sub(r"`[^`]*`", " ", translations.MATH.sub(" ", text))


@cache
def _simplified_only() -> callable:
    import opencc

    to_traditional = opencc.OpenCC("s2tw").convert  # Taiwan's standard characters (峰, not 峯)
    return lambda c: bool(translations.CJK.match(c)) and to_traditional(c) != c


# Words whose characters are traditional as they stand although a character-by-character converter
# would change one of them (s2tw writes 干 as 幹: 若干, "several", keeps 干 in Taiwan too).
TRADITIONAL_AS_WRITTEN = ("若干",)


@pytest.mark.parametrize("docname", DOCNAMES)
def test_traditional_edition_has_no_simplified_characters(docname):
    simplified = _simplified_only()
    found = []
    for m in _messages("zh_TW", docname):
        quoted = set(m.id)  # Chinese the English itself quotes (the glossary's simplified names)
        prose = _outside_code_and_math(m.string)
        for word in TRADITIONAL_AS_WRITTEN:
            prose = prose.replace(word, "")
        chars = {c for c in prose if simplified(c) and c not in quoted}
        if chars:
            found.append(f"{''.join(sorted(chars))} in {m.string[:50]!r}")
    assert not found, f"zh_TW/{docname}: simplified characters in the traditional edition: {found[:5]}"


# What OpenCC's s2twp makes of this course's words, and what Taiwanese texts write instead.
TRAPS = {"引數": "參數 (parameter)", "函式(?!庫)": "函數 (函式庫, a library, is right)",
         "啟用函式": "激活函數", "區域性": "局部",
         "迴圈神經網路": "循環神經網路", "程式程式碼": "程式碼", "網絡": "網路", "數據": "資料",
         "最佳化器": "優化器", "例項": "實例", "信息": "資訊", "默認": "預設"}


@pytest.mark.parametrize("docname", DOCNAMES)
def test_traditional_edition_avoids_the_converters_traps(docname):
    found = [f"{trap} (write {right}) in {m.string[:50]!r}" for m in _messages("zh_TW", docname)
             for trap, right in TRAPS.items() if re.search(trap, m.string) and not re.search(trap, m.id)]
    assert not found, f"zh_TW/{docname}: {found[:5]}"


def test_the_traps_are_overridden_where_a_converter_makes_them():
    converter = lambda text: text.replace("参数", "引數").replace("函数", "函式")  # noqa: E731
    assert translations.to_traditional("参数和函数", converter=converter) == "參數和函數"
    assert translations.to_traditional("激活函数", "activation") == "激活函數"
    assert translations.to_traditional("循环神经网络的参数") == "循環神經網路的參數"


def test_rows_and_columns_swap_between_the_editions():
    english = "Each row of $A$ sums to one; the third column is the key."
    simplified = "$A$ 的每一行之和为一；第三列对应键，运行后可见。"
    traditional = translations.to_traditional(simplified, english)
    assert "每一列" in traditional and "第三行" in traditional and "執行" in traditional
    # a message that is not about rows and columns keeps its 行 and 列 as the converter leaves them
    assert "行" in translations.to_traditional("一行代码", "one line of code")


_ROW = re.compile(r"\brows?\b|\brow-wise\b", re.I)
_COLUMN = re.compile(r"\bcolumns?\b|\bcolumn-wise\b", re.I)


def _row_column_words(text: str) -> str:
    """The 行 and 列 of a text that can mean row or column (not inside 进行, 序列, ...)."""
    text = translations.ROW_COLUMN_WORDS.sub(" ", _outside_code_and_math(text))
    return "".join(c for c in text if c in "行列")


@pytest.mark.parametrize("docname", DOCNAMES)
def test_row_is_hang_in_simplified_and_lie_in_traditional(docname):
    """A message about rows only (or columns only): mainland 行 = row, 列 = column; Taiwan the reverse."""
    wrong = []
    for m in _messages("zh_CN", docname):
        row, column = bool(_ROW.search(m.id)), bool(_COLUMN.search(m.id))
        if row == column or translations.CJK.search(m.id):
            continue
        want_cn, want_tw = ("行", "列") if row else ("列", "行")
        tw = next(t.string for t in _messages("zh_TW", docname) if t.id == m.id)
        if set(_row_column_words(m.string)) - {want_cn}:
            wrong.append(f"zh_CN writes {_row_column_words(m.string)} for {'row' if row else 'column'}: "
                         f"{m.string[:50]!r}")
        if set(_row_column_words(tw.translate(str.maketrans("執進並", "执进并")))) - {want_tw}:
            wrong.append(f"zh_TW writes {_row_column_words(tw)} for {'row' if row else 'column'}: "
                         f"{tw[:50]!r}")
    assert not wrong, f"{docname}:\n  " + "\n  ".join(wrong[:8])


def glossary_terms() -> list[tuple[str, list[str], list[str]]]:
    """(English term, simplified names, traditional names) from the glossary's index table; the
    names in brackets are alternatives, and an English word kept in Chinese text counts too."""
    terms = []
    for line in (REPO / "book" / "glossary.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        match = re.fullmatch(r"\{term\}`([^`]+)`", cells[0]) if len(cells) == 4 else None
        if match:
            names = [[n.strip() for n in re.split(r"[（）]", cell) if n.strip()] for cell in cells[1:3]]
            terms.append((match.group(1), *names))
    return terms


CHAPTERS = [d for d in DOCNAMES if d.startswith("chapters/")]


@pytest.mark.parametrize("language", LANGUAGES)
def test_chapters_use_the_glossarys_words(language):
    """Where a chapter's English names a glossary term, its translation uses the glossary's word for it
    (or keeps the English term, as Chinese texts do for Transformer, softmax, logits ...)."""
    column = 1 if language == "zh_CN" else 2
    misses, uses = [], 0
    for term, *names in glossary_terms():
        pattern = re.compile(rf"\b{re.escape(term)}s?\b", re.I)
        accepted = [n for n in names[column - 1]] + [term]
        for docname in CHAPTERS:
            for m in _messages(language, docname):
                if not pattern.search(_outside_code_and_math(m.id)):
                    continue
                uses += 1
                if not any(name.lower() in m.string.lower() for name in accepted):
                    misses.append(f"{docname}: {term} -> {' / '.join(accepted)}: {m.string[:50]!r}")
    assert uses > 300, f"only {uses} uses of glossary terms found: is the glossary table parsed?"
    assert len(misses) <= ALLOWED_OTHER_WORDINGS * uses, (
        f"{language}: {len(misses)} of {uses} uses of a glossary term are translated with another word "
        f"than the glossary's:\n  " + "\n  ".join(misses[:20]))


# A term is sometimes rightly said another way (a pronoun, a verb for "attention", a shorter form in a
# heading): a small share of the uses may differ from the glossary's noun.
ALLOWED_OTHER_WORDINGS = 0.02


def test_chinese_notebooks_are_in_step_with_the_catalogues():
    problems = translations.notebooks(check_only=True)
    assert not problems, ("the Chinese notebooks are out of step; run `python scripts/translations.py "
                          "notebooks`:\n  " + "\n  ".join(problems[:10]))


def test_chinese_notebooks_keep_the_code_and_translate_the_prose():
    import json

    for language in LANGUAGES:
        for english in sorted((REPO / "chapters").glob("*.ipynb")):
            translated = REPO / "translations" / language / "chapters" / english.name
            source, target = (json.loads(p.read_text(encoding="utf-8")) for p in (english, translated))
            assert len(source["cells"]) == len(target["cells"]), translated
            for a, b in zip(source["cells"], target["cells"], strict=True):
                assert a["cell_type"] == b["cell_type"]
                if a["cell_type"] == "code":
                    assert a["source"] == b["source"], f"{translated}: code changed"
            prose = "".join("".join(c["source"]) for c in target["cells"] if c["cell_type"] == "markdown")
            assert len(translations.CJK.findall(prose)) > 1000, f"{translated}: hardly any Chinese"
        student = REPO / "translations" / language / "student"
        assert sorted(p.name for p in student.glob("*.ipynb")) == sorted(
            p.name for p in (REPO / "chapters").glob("*.ipynb")), f"{student}: not every chapter"


def test_the_table_of_contents_captions_are_translated():
    toc = (REPO / "book" / "_toc.yml").read_text(encoding="utf-8")
    captions = re.findall(r"caption:\s*(.+)", toc)
    assert captions and all(c.strip() in translations.TOC_CAPTIONS for c in captions), (
        f"captions without a translation in TOC_CAPTIONS: "
        f"{[c for c in captions if c.strip() not in translations.TOC_CAPTIONS]}")
    for language in LANGUAGES:
        written = translations.toc_for(language).read_text(encoding="utf-8")
        assert "Before you start" not in written and "开始之前" in written or language != "zh_CN"
        assert "開始之前" in written or language != "zh_TW"


# ---------------------------------------------------------------------------------------------------
# The termbase (locales/termbase.yml): one word per concept and region, in every message
# ---------------------------------------------------------------------------------------------------
@cache
def _termbase() -> list[dict]:
    import yaml

    return yaml.safe_load((translations.LOCALES / "termbase.yml").read_text(encoding="utf-8"))


def termbase_misses(language: str, docname: str, text: str) -> list[str]:
    """The termbase entries ``text`` (a message of ``docname`` in ``language``) breaks: an avoided word
    outside the entry's exceptions, code and math."""
    prose = _outside_code_and_math(text)
    misses = []
    for entry in _termbase():
        if docname in entry.get("pages", []):
            continue
        kept = prose
        for phrase in entry.get("except", {}).get(language, []):
            kept = kept.replace(phrase, "\u3000")
        for avoided in entry.get("avoid", {}).get(language, []):
            found = (re.search(avoided[3:], kept) if avoided.startswith("re:")
                     else avoided in kept and re.search(re.escape(avoided), kept))
            if found:
                start = max(found.start() - 12, 0)
                misses.append(f"{docname}: {entry['concept']} is {entry[language]}, not "
                              f"{found.group(0)!r}: ...{kept[start:found.end() + 12]}...")
    return misses


def test_the_termbase_gives_each_concept_one_word_per_edition():
    entries = _termbase()
    assert len(entries) >= 12
    for entry in entries:
        assert set(entry) <= {"concept", "zh_CN", "zh_TW", "avoid", "except", "pages"}, entry
        assert entry["zh_CN"] and entry["zh_TW"] and entry.get("avoid"), entry
        for language, words in entry["avoid"].items():
            assert language in LANGUAGES and words, entry
            for word in words:  # the word to write is never one to avoid
                if not word.startswith("re:"):
                    assert word not in entry[language] or word in entry.get("except", {}).get(
                        language, []) or entry[language] in entry.get("except", {}).get(language, []), entry


@pytest.mark.parametrize("language", LANGUAGES)
def test_messages_follow_the_termbase(language):
    misses = []
    for docname in DOCNAMES:
        for m in _messages(language, docname):
            if m.string:
                misses += termbase_misses(language, docname, m.string)
    assert not misses, (f"{language}: {len(misses)} words against locales/termbase.yml:\n  "
                        + "\n  ".join(misses[:40]))


def test_the_termbase_catches_what_it_names():
    assert termbase_misses("zh_TW", "chapters/07_transformer_encoder", "每個解碼器塊")
    assert not termbase_misses("zh_TW", "chapters/07_transformer_encoder", "每個解碼器區塊和圖塊")
    assert termbase_misses("zh_TW", "chapters/02_soft_lookup", "通過分數起作用")
    assert not termbase_misses("zh_TW", "chapters/02_soft_lookup", "五項檢查都通過後，`通過`")
    assert termbase_misses("zh_CN", "chapters/02_soft_lookup", "把它看作一张软查找表")
    assert not termbase_misses("zh_CN", "book/glossary", "软寻址（软查找）")
    assert termbase_misses("zh_TW", "chapters/01_seq2seq_attention", "無論你有多少個核。")
    assert termbase_misses("zh_CN", "book/preface", "打开该 notebook。")
    assert termbase_misses("zh_TW", "chapters/05_multi_head_attention", "動詞放在從句末尾")
    assert not termbase_misses("zh_TW", "chapters/05_multi_head_attention", "這個向量從句子中收集資訊")
    assert termbase_misses("zh_TW", "chapters/01_seq2seq_attention", "把源語言譯成目標語言")
    assert not termbase_misses("zh_TW", "chapters/01_seq2seq_attention", "把來源語言譯成目標語言")


@pytest.mark.parametrize("language", LANGUAGES)
def test_printed_lines_follow_the_termbase(language):
    import output_texts

    misses = [miss for template, text in output_texts.table(language).items()
              for miss in termbase_misses(language, "outputs", text)]
    assert not misses, f"{language}: printed lines against locales/termbase.yml:\n  " + "\n  ".join(misses)
    assert not termbase_misses("zh_CN", "book/preface", "`source/<notebook>/` 中")


def test_the_converter_writes_taiwans_words():
    assert translations.to_traditional("训练最初的若干步") == "訓練最初的若干步"
    assert translations.to_traditional("并通过比较嵌入的尺度") == "並透過比較嵌入的尺度"
    assert translations.to_traditional("五项检查都通过后") == "五項檢查都通過後"
    assert translations.to_traditional("每个解码器块和图块嵌入") == "每個解碼器區塊和圖塊嵌入"
    assert translations.to_traditional("每块有自己的键") == "每個區塊有自己的鍵"
    assert translations.to_traditional("一条命令") == "一條指令"
    assert translations.to_traditional("在 2 核 CPU 上") == "在 2 核心 CPU 上"
    assert translations.to_traditional("层归一化") == "層正規化"


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_chinese_student_editions_have_readmes_in_chinese_that_name_their_own_folders(language):
    student = REPO / "translations" / language / "student"
    for readme in (student / "README.md", student / "nbgrader" / "README.md"):
        text = readme.read_text(encoding="utf-8")
        assert len(translations.CJK.findall(text)) > 100, f"{readme}: hardly any Chinese"
        prose = re.sub(r"`[^`\n]*`|“[^”]*”|「[^」]*」|^    .*$", " ", text, flags=re.M)
        english = re.findall(r"[A-Za-z]+(?: [A-Za-z]+){3,}", prose)
        assert not english, f"{readme}: English sentences {english}"
        assert "cd student" not in text
        for course in re.findall(r"--course ([\w/.-]+)", text):
            assert course == f"translations/{language}/student/nbgrader", f"{readme}: --course {course}"
            assert (REPO / course / "nbgrader_config.py").is_file()
        for chapters in re.findall(r"--chapters ([\w/.-]+)", text):
            assert (REPO / chapters).is_dir() and any((REPO / chapters).glob("*.ipynb")), chapters
    assert "--course" in (student / "nbgrader" / "README.md").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------------
# The simplified chapters read as written in Chinese: few pronouns 它, no sentence a reader must parse
# twice. (The seed lecture notes, written in Chinese, use 0-3.2 它 per 1,000 Han characters; a text
# translated word by word from English, 7.6-12.7.)
# ---------------------------------------------------------------------------------------------------
PRONOUNS_PER_1000 = 4.0
LONGEST_SENTENCE = 80  # Han characters
CALQUES = ("它是顺序的", "看着它", "而事实表明", "再用注意力修复它")


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[。！？；])", text) if s.strip()]


@pytest.mark.parametrize("docname", CHAPTERS)
def test_simplified_chapters_read_as_written_in_chinese(docname):
    messages = [m.string for m in _messages("zh_CN", docname) if m.string]
    text = "".join(messages)
    han = len(translations.CJK.findall(text))
    density = 1000 * text.count("它") / max(han, 1)
    assert density <= PRONOUNS_PER_1000, (
        f"{docname}: 它 {density:.1f} times per 1,000 Han characters (at most {PRONOUNS_PER_1000}): "
        "name the thing, or let the sentence go without a subject")
    long = [s[:40] for m in messages for s in _sentences(m)
            if len(translations.CJK.findall(s)) > LONGEST_SENTENCE]
    assert not long, f"{docname}: sentences over {LONGEST_SENTENCE} Han characters: {long}"
    calques = [c for c in CALQUES if c in text]
    assert not calques, f"{docname}: {calques}"


ENGLISH_IN_MATH = re.compile(r"\\text\{\s*([^{}$]*?[A-Za-z]{2,}[ (-][^{}$]*?)\s*\}")


@pytest.mark.parametrize("language", LANGUAGES)
def test_words_inside_formulas_are_translated(language):
    """A label written in words inside a formula ("\\text{(to be found)}", "\\text{held out}") is prose:
    a formula on its own is a message of its own, and its Chinese translates the label."""
    left = []
    for docname in DOCNAMES:
        for m in _messages(language, docname):
            for phrase in ENGLISH_IN_MATH.findall(m.id):
                if m.string and f"{{{phrase}}}" in m.string.replace("\\text{ ", "\\text{"):
                    left.append(f"{docname}: \\text{{{phrase}}}")
    assert not left, f"{language}: English words left inside formulas:\n  " + "\n  ".join(left)


def _chinese_prose(text: str) -> str:
    """A translation without what may stay English: code, math, roles, links, quoted words, and the
    course's example sentences (lowercase, in italics: *the cat sat down*)."""
    text = translations.ROLE.sub(" ", translations.CODE.sub(" ", translations.MATH.sub(" ", text)))
    text = re.sub(r"\[[^\]]*\]\([^)]*\)", " ", text)
    text = re.sub(r"“[^”]*”|\"[^\"]*\"|「[^」]*」|『[^』]*』|'[^']*'|‘[^’]*’", " ", text)
    return re.sub(r"\*[a-z][a-z ,.'-]*\*", " ", text)


ENGLISH_RUN = re.compile(r"[A-Za-z][A-Za-z'-]+(?: [A-Za-z][A-Za-z'-]+){3,}")


@cache
def _titles_of_works() -> set[str]:
    """The titles the reference list prints in italics (a paper's or a book's title stays as published)."""
    text = (REPO / "book" / "references.md").read_text(encoding="utf-8")
    titles = {" ".join(t.split()).strip(" .") for t in re.findall(r"\*([^*]+)\*", text)}
    return titles | {t.split(":")[0] for t in titles}  # a title may be cited without its subtitle


def _without_titles(text: str) -> str:
    for title in re.findall(r"\*([^*]+)\*", text):
        if " ".join(title.split()).strip(" .") in _titles_of_works():
            text = text.replace(f"*{title}*", " ")
    return text


@pytest.mark.parametrize("language", LANGUAGES)
def test_no_english_sentence_in_the_chinese_prose(language):
    """Outside code, math, quotes, example sentences and the reference list, a Chinese page has no four
    English words in a row (an exercise's English title, a formula's label, a glued phrase)."""
    found = []
    for docname in DOCNAMES:
        if docname == "book/references":
            continue
        for m in _messages(language, docname):
            if m.string and not translations.CJK.search(m.id):
                prose = _chinese_prose(_without_titles(m.string))
                found += [f"{docname}: {hit!r}" for hit in ENGLISH_RUN.findall(prose)]
    assert not found, f"{language}: English left in the Chinese prose:\n  " + "\n  ".join(found[:30])


# ---------------------------------------------------------------------------------------------------
# The exercises' own words (mistake names, hints) in both editions: utils/exercises/locale/
# ---------------------------------------------------------------------------------------------------
def test_every_mistake_name_and_hint_has_its_chinese():
    texts = translations.exercise_texts()
    assert len(texts) > 300, "the exercises' texts were not found"
    simplified = translations._texts("zh_CN")
    missing = [t for t in texts if not simplified.get(t)]
    assert not missing, (f"{len(missing)} mistake names or hints have no 简体 translation: run "
                         f"`python scripts/translations.py texts-todo`:\n  " + "\n  ".join(missing[:10]))
    assert set(simplified) <= set(texts), "translations of texts no exercise uses any more"
    bad = {e: p for e, c in simplified.items() if (p := translations.translation_problems(e, c))}
    assert not bad, bad


def test_the_traditional_hints_are_derived_from_the_simplified_ones():
    derived = {e: translations.to_traditional(c, e) for e, c in translations._texts("zh_CN").items()}
    assert translations._texts("zh_TW") == derived, (
        "utils/exercises/locale/zh_TW.json is out of step: run `python scripts/translations.py derive-tw`")


def test_a_recognised_mistake_is_named_in_chinese(monkeypatch, capsys):
    import torch

    from utils import language
    from utils.checks import MISTAKES, check_function

    monkeypatch.setenv(language.ENV, "zh_CN")
    monkeypatch.delenv("COURSE_CHECKS", raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    mistake = MISTAKES["softmax_axis"]

    def wrong_axis(x):
        return x.softmax(0)

    check_function(wrong_axis, reference=lambda x: x.softmax(-1), inputs=[(torch.randn(3, 4),)],
                   name="Exercise 0.1", mistakes={mistake: wrong_axis})
    out = capsys.readouterr().out
    assert translations._texts("zh_CN")[mistake] in out and mistake not in out, out


def test_writing_unchanged_exercise_texts_leaves_the_file_alone(tmp_path, monkeypatch):
    """derive-tw rewrites utils/exercises/locale/zh_TW.json; a file of the package newer than the book's
    cached runs makes scripts/book_cache.py drop every run, so an unchanged text must not be written."""
    import os

    monkeypatch.setattr(translations, "EXERCISE_TEXTS", tmp_path)
    translations._write_texts("zh_TW", {"b": "乙", "a": "甲"})
    path = tmp_path / "zh_TW.json"
    os.utime(path, (1_000_000_000, 1_000_000_000))
    translations._write_texts("zh_TW", {"a": "甲", "b": "乙"})
    assert path.stat().st_mtime == 1_000_000_000, "the same texts were written again"
    translations._write_texts("zh_TW", {"a": "甲", "b": "丙"})
    assert path.stat().st_mtime > 1_000_000_000 and "丙" in path.read_text(encoding="utf-8")


def test_a_display_formulas_words_are_translated_in_the_chinese_notebooks():
    """A formula whose catalogue entry translates its \\text{} labels (chapter 4's roles of q, k, v)
    reads in Chinese in the Chinese notebook (and so in the Chinese decks), not only in the book."""
    formula = "q_i = a_i W_Q \\quad \\text{(to look for others)}"
    table = {"Roles:": "角色：", formula: "q_i = a_i W_Q \\quad \\text{（用来寻找别的词元）}"}

    def lookup(msgid: str) -> str:
        return table.get(msgid, msgid)

    lookup.table = table
    out = translations.translate_markdown(f"Roles:\n\n$$\n{formula}\n$$\n", lookup)
    assert "（用来寻找别的词元）" in out and "to look for others" not in out and out.count("$$") == 2


def test_the_guides_copies_of_the_chapters_read_as_the_chapters_do():
    """The instructor guide copies each chapter's learning goals and titles; their 简体 is the chapter
    catalogue's own (derive-tw and update copy it over), so a chapter's rewrite reaches the guide."""
    shared = translations.chapter_translations()
    guide = translations.LOCALES / "zh_CN" / "LC_MESSAGES" / "book" / "instructor_guide.po"
    stale = [m.id[:70] for m in translations._read(guide)
             if m.id in shared and m.string != shared[m.id]]
    assert not stale, f"{len(stale)} of the guide's copies differ from their chapter's: {stale[:5]}"


# ---------------------------------------------------------------------------------------------------
# What the code prints, in the Chinese books and notebooks (utils.language.translate_output)
# ---------------------------------------------------------------------------------------------------
def test_a_printed_line_keeps_its_template_whatever_the_data():
    from utils.language import output_template

    a = output_template("OK   with attention, exact match: 0.914 (promised at least 0.85; margin 0.064)")
    b = output_template("OK   with attention, exact match: 1 (promised at least 0.85; margin 0.15)")
    assert a[0] == b[0] == "OK with attention, exact match: {1} (promised at least {2}; margin {3})"
    assert a[1] == ["0.914", "0.85", "0.064"]
    # padding that moves with a timing's digits, quoted words, lists, times, a corpus sentence, subwords
    assert output_template("T =   16:  GRU    0.81 ms")[0] == output_template("T = 1024:  GRU  120.55 ms")[0]
    assert output_template("drops \"lape\" (for \"quiet\")") == ("drops {1} (for {2})", ['"lape"', '"quiet"'])
    assert output_template("weight 0.05 on 'quiet' of the last word's")[0] == (
        "weight {1} on {2} of the last word's")
    assert output_template("moves: [0, 0, 2, -1]; time x5.7, 2.0x")[0] == "moves: {1}; time {2}, {3}"
    assert output_template("source:    every green teacher carries my red old cat") == (
        "source: {1}", ["every green teacher carries my red old cat"])
    assert output_template("BPE, 40 merges: the</w> c a t s</w>")[0] == "BPE, {1} merges: {2}"
    assert output_template("positions 0..11 only (max_len=12); 12,704 parameters, 67% of them")[0] == (
        "positions {1}..{2} only (max_len={3}); {4} parameters, {5} of them")


def test_a_translated_line_gets_its_data_back(monkeypatch):
    from utils import language

    table = {"{1} source words: {2}": "{1} 个源词：{2}",
             "trained in {1} s, loss {2}": "训练 {1} 秒，损失 {2}"}
    monkeypatch.setattr(language, "output_table", lambda _: table)
    text = "  12 source words: the small young apple sees this book\ntrained in 8.7 s, loss 0.832\n0.5 0.7"
    assert language.translate_output(text, "zh_CN") == (
        "  12 个源词：the small young apple sees this book\n训练 8.7 秒，损失 0.832\n0.5 0.7")
    assert language.translate_output(text, "en") == text


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_printed_line_translation_keeps_its_data(language):
    import output_texts

    table = output_texts.table(language)
    assert len(table) > 250, f"utils/locale/outputs_{language}.json: {len(table)} lines, expected them all"
    bad = {t: p for t, c in table.items() if (p := output_texts.problems(t, c))}
    assert not bad, bad


def test_the_traditional_printed_lines_are_derived():
    import output_texts

    assert output_texts.table("zh_TW") == {
        t: translations.to_traditional(c, t) for t, c in output_texts.table("zh_CN").items()}, (
        "utils/locale/outputs_zh_TW.json is out of step: run `python scripts/translations.py derive-tw`")


def test_a_chinese_notebook_prints_the_courses_own_lines_in_chinese(monkeypatch, capsys):
    from utils import language
    from utils.checks import check_result

    monkeypatch.setenv(language.ENV, "zh_TW")
    monkeypatch.delenv("COURSE_RESULTS", raising=False)
    check_result("fitted slope", 2.98, at_least=2.9, at_most=3.1)
    out = capsys.readouterr().out
    assert out.startswith("OK") and "應在 2.9 到 3.1 之間" in out and "promised" not in out, out


def test_the_taiwan_book_converts_the_models_simplified_chinese():
    """Chapter 13's model writes simplified Chinese; the Taiwan book shows its printed lines converted
    with the edition's own converter, and leaves traditional and English lines alone."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
    from course_book import taiwan_chinese

    printed = "I like green tea.\n    -> 我喜欢绿茶。\n訓練：26,536 對\nreference: 汤姆没有礼貌。"
    assert taiwan_chinese(printed).split("\n") == [
        "I like green tea.", "    -> 我喜歡綠茶。", "訓練：26,536 對", "reference: 湯姆沒有禮貌。"]
