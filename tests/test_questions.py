"""The question bank (classroom/questions) and what it exports for Moodle and Canvas.

- every notebook has at least eight questions, in English, 简体 and 繁體;
- a multiple-choice question has one correct option, distinct options in every language, and each
  wrong option stands for a misconception or mistake the course names (a box, a check, the prose);
- numbers and shapes are recomputed by the course's code, and the exported answers are those;
- the Chinese texts are Chinese: no English sentence left, the same code and math as the English,
  short sentences, the termbase's words, no simplified character in the traditional text;
- the GIFT file parses back, with a strict reader written here, to the same questions and answers;
- every QTI package (made by text2qti) is valid XML whose items carry the bank's texts and answers.
"""

from __future__ import annotations

import html
import io
import math
import re
import sys
import xml.etree.ElementTree as ET
import zipfile
from functools import cache
from pathlib import Path

import pytest
import yaml

from classroom import questions as qb
from classroom.questions import export

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import translations  # noqa: E402  (scripts/ is not a package)

NOTEBOOKS = sorted(p.stem for p in (REPO / "chapters").glob("[0-9][0-9]_*.ipynb"))
QUESTIONS = qb.all_questions()
CHINESE = ("zh_CN", "zh_TW")


@cache
def rendered(language: str) -> dict[str, qb.Rendered]:
    return {q.id: qb.render(q, language) for q in QUESTIONS}


def plain(text: str) -> str:
    """A rendered text without the backticks of its code spans (how an option is compared)."""
    return re.sub(r"`([^`]*)`", r"\1", text)


# ---------------------------------------------------------------------------------------------------
# The bank
# ---------------------------------------------------------------------------------------------------
def test_every_notebook_has_at_least_eight_questions_in_each_language():
    bank = qb.load_bank()
    assert sorted(bank) == NOTEBOOKS, "one classroom/questions/chNN.yaml per chapter notebook"
    for language in qb.LANGUAGES:
        texts = rendered(language)
        for notebook, questions in bank.items():
            assert len(questions) >= 8, f"{notebook}: {len(questions)} questions, at least 8 wanted"
            assert all(texts[q.id].stem and texts[q.id].explanation for q in questions)


def test_ids_are_unique_and_name_their_chapter():
    ids = [q.id for q in QUESTIONS]
    assert len(ids) == len(set(ids)), "duplicate question ids"
    for q in QUESTIONS:
        assert re.fullmatch(rf"ch{q.notebook[:2]}-[a-z0-9-]+", q.id), q.id
        assert q.source, f"{q.id}: say where in the chapter the question comes from (source)"


def test_every_parameter_is_stated_in_the_stem():
    """The numbers the stem states are the numbers the answer is computed from."""
    for q in QUESTIONS:
        for language in qb.WRITTEN:
            used = {m.group(1) for m in qb.PLACEHOLDER.finditer(q.stem[language])}
            assert set(q.params) <= used, f"{q.id} ({language}): {set(q.params) - used} not in the stem"
        if q.params:
            assert q.compute, f"{q.id}: parameters without a computation"


def test_multiple_choice_has_one_correct_option_and_distinct_wrong_ones():
    for q in QUESTIONS:
        if q.kind == "numeric":
            continue
        assert sum(o.correct for o in q.options) == 1, f"{q.id}: exactly one correct option"
        assert len(q.options) >= 2, q.id
        for language in qb.LANGUAGES:
            options = [plain(o) for o in rendered(language)[q.id].options]
            assert len(set(options)) == len(options), f"{q.id} ({language}): options repeat: {options}"


def test_wrong_options_are_the_courses_named_misconceptions_and_mistakes():
    problems = []
    for q in QUESTIONS:
        for option in q.options:
            if option.correct:
                assert not option.mistake, f"{q.id}: the correct option names a mistake"
                continue
            problem = qb.mistake_problem(option.mistake, q.notebook)
            if problem:
                problems.append(f"{q.id}: {problem}")
    assert not problems, "\n".join(problems)


def test_the_mistake_references_are_checked():
    assert qb.mistake_problem("MISTAKES.softmax_axis", "00_getting_started") == ""
    assert qb.mistake_problem("MISTAKES.no_such_mistake", "00_getting_started")
    assert qb.mistake_problem("check: scores scaled by sqrt(d_model), not by sqrt(D)", "05_x") == ""
    assert qb.mistake_problem("check: a mistake nobody made", "05_x")
    assert qb.mistake_problem("box: Q and K are really the same thing", "04_self_attention") == ""
    assert qb.mistake_problem("box: Q and K are friends", "04_self_attention")
    assert qb.mistake_problem("chapter: Masking the keys is what matters.", "03_attention_without_rnn") == ""
    assert qb.mistake_problem("chapter: Masking the keys is what matters.", "04_self_attention")
    assert qb.mistake_problem("a plausible wrong answer", "04_self_attention")


def test_answers_are_computed_by_the_courses_code():
    """Numeric answers are recomputed here from the parameters; the correct option of a question with
    an ``answer`` is that computed value, and no wrong option is."""
    for q in QUESTIONS:
        if not q.compute:
            assert not q.answer, f"{q.id}: an answer without a computation"
            continue
        values = qb.computed(q)  # afresh, not the values the exporter kept
        assert q.answer or q.kind == "choice", f"{q.id}: which computed value is the answer?"
        if not q.answer:  # a multiple-choice question whose texts quote computed values
            continue
        assert q.answer in values, f"{q.id}: {q.compute} computes no {q.answer!r}"
        if q.kind == "numeric":
            for language in qb.LANGUAGES:
                assert rendered(language)[q.id].answer == pytest.approx(float(values[q.answer]), abs=1e-9)
            assert q.tolerance > 0 or float(values[q.answer]).is_integer(), f"{q.id}: tolerance 0"
            assert q.tolerance < max(abs(float(values[q.answer])), 1e-3), f"{q.id}: tolerance too wide"
        else:
            options = [plain(o) for o in rendered("en")[q.id].options]
            right = qb.show(values[q.answer])
            assert options[[o.correct for o in q.options].index(True)] == right, (q.id, options, right)
            assert options.count(right) == 1, f"{q.id}: a wrong option equals the answer {right}"


def test_the_kinds_are_mixed_in_every_chapter():
    for notebook, questions in qb.load_bank().items():
        kinds = {q.kind for q in questions}
        assert "choice" in kinds and ({"numeric", "shape"} & kinds), f"{notebook}: {kinds}"


# ---------------------------------------------------------------------------------------------------
# The Chinese texts
# ---------------------------------------------------------------------------------------------------
ENGLISH_RUN = re.compile(r"[A-Za-z][A-Za-z'-]+(?: [A-Za-z][A-Za-z'-]+){3,}")
LONGEST_SENTENCE = 70  # Han characters, as the simplified chapters
CJK = re.compile(r"[\u4e00-\u9fff]")


def _texts_of(q: qb.Question, language: str) -> list[tuple[str, str]]:
    """(English, translated) pairs of the language's own texts, placeholders as written."""
    pairs = [(q.stem["en"], qb.text_in(q.stem, language)),
             (q.explanation["en"], qb.text_in(q.explanation, language))]
    pairs += [(o.text["en"], qb.text_in(o.text, language))
              for o in q.options if o.text["en"] != o.text["zh_CN"]]
    return pairs


def _prose(text: str) -> str:
    """Without code, math, placeholders and quoted words of the course's language."""
    text = qb.PLACEHOLDER.sub(" ", qb.CODE.sub(" ", qb.MATH.sub(" ", text)))
    return re.sub(r"“[^”]*”|「[^」]*」", " ", text)


@pytest.mark.parametrize("language", CHINESE)
def test_chinese_texts_are_translated_and_keep_code_and_math(language):
    problems = []
    for q in QUESTIONS:
        for english, chinese in _texts_of(q, language):
            if not CJK.search(_prose(chinese)):
                problems.append(f"{q.id}: no Chinese in {chinese[:50]!r}")
            problems += [f"{q.id}: English left: {hit!r}" for hit in ENGLISH_RUN.findall(_prose(chinese))]
            kept = translations.translation_problems(english, chinese)
            problems += [f"{q.id}: {p}" for p in kept]
    assert not problems, "\n".join(problems[:30])


def test_simplified_chinese_reads_as_written_in_chinese():
    long, pronouns, han = [], 0, 0
    for q in QUESTIONS:
        for _, chinese in _texts_of(q, "zh_CN"):
            han += len(CJK.findall(chinese))
            pronouns += chinese.count("它")
            long += [f"{q.id}: {s[:30]}" for s in re.split(r"(?<=[。！？；])", chinese)
                     if len(CJK.findall(s)) > LONGEST_SENTENCE]
    assert not long, f"sentences over {LONGEST_SENTENCE} Han characters: {long}"
    assert 1000 * pronouns / han <= 1.0, f"它 {pronouns} times in {han} Han characters: name the thing"


@cache
def _termbase() -> list[dict]:
    return yaml.safe_load((REPO / "locales" / "termbase.yml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("language", CHINESE)
def test_chinese_follows_the_termbase(language):
    misses = []
    for q in QUESTIONS:
        for _, chinese in _texts_of(q, language):
            prose = _prose(chinese)
            for entry in _termbase():
                kept = prose
                for phrase in entry.get("except", {}).get(language, []):
                    kept = kept.replace(phrase, "\u3000")
                for avoided in entry.get("avoid", {}).get(language, []):
                    if re.search(avoided[3:] if avoided.startswith("re:") else re.escape(avoided), kept):
                        misses.append(f"{q.id}: {entry['concept']} is {entry[language]}: {kept[:40]}")
    assert not misses, "\n".join(misses)


def test_traditional_chinese_is_derived_and_has_no_simplified_characters():
    import opencc

    to_traditional = opencc.OpenCC("s2tw").convert
    s2twp = opencc.OpenCC("s2twp").convert
    found = []
    for q in QUESTIONS:
        derived = translations.to_traditional(q.stem["zh_CN"], q.stem["en"], s2twp)
        assert qb.text_in(q.stem, "zh_TW") == derived, q.id
        for _, chinese in _texts_of(q, "zh_TW"):
            chars = {c for c in _prose(chinese) if CJK.match(c) and to_traditional(c) != c}
            found += [f"{q.id}: {''.join(sorted(chars))}"] if chars else []
    assert not found, found


# ---------------------------------------------------------------------------------------------------
# Moodle GIFT, read back with a strict reader
# ---------------------------------------------------------------------------------------------------
ESCAPES = {"\\" + c: chr(1 + k) for k, c in enumerate("\\~=#{}:")}  # backslash first, as Moodle


def _unescape(text: str) -> str:
    for escaped, mark in ESCAPES.items():
        text = text.replace(mark, escaped[1])
    return text


def _markup(text: str) -> str:
    """GIFT's HTML back to the bank's markup: <code> -> `code`, \\( math \\) -> $math$."""
    text = re.sub(r"<code>(.*?)</code>", r"`\1`", text)
    text = re.sub(r"\\\((.*?)\\\)", r"$\1$", text)
    assert "<" not in text and ">" not in text, f"unexpected HTML in {text[:60]!r}"
    return html.unescape(text)


def parse_gift(text: str) -> list[dict]:
    """The questions of a GIFT file as this bank writes it, refusing anything else: ``//`` comments,
    ``$CATEGORY:`` lines, and ``::title::[html]text{...}`` questions separated by blank lines, with
    ``=``/``~`` options or ``#value:tolerance``, and ``####`` general feedback."""
    for escaped, mark in ESCAPES.items():
        text = text.replace(escaped, mark)
    assert "\\" not in text, "a backslash that escapes nothing (Moodle would read \\n as a new line)"
    found, category = [], None
    for block in text.split("\n\n"):
        lines = [line for line in block.split("\n") if line.strip() and not line.startswith("//")]
        if lines and lines[0].startswith("$CATEGORY: "):
            category = lines.pop(0)[len("$CATEGORY: "):]
        if not lines:
            continue
        match = re.fullmatch(r"::([^~=#{}:]+)::\[html\]([^~=#{}:]+)\{([^{}]*)\}", "\n".join(lines))
        assert match, f"not a GIFT question: {block[:80]!r}"
        title, stem, answers = match.groups()
        body, feedback = answers.split("####")
        question = {"category": _unescape(category), "id": _unescape(title), "stem": _markup(_unescape(stem)),
                    "explanation": _markup(_unescape(feedback.strip()))}
        numeric = re.fullmatch(r"\s*#(-?[0-9.]+(?:e-?\d+)?):([0-9.]+(?:e-?\d+)?)\s*", body)
        if numeric:
            question.update(answer=float(numeric.group(1)), tolerance=float(numeric.group(2)))
        else:
            entries = re.findall(r"\s*([=~])([^=~#]+)", body)
            assert "".join(m + t for m, t in entries).replace("\t", "").replace("\n", "") == \
                body.replace("\t", "").replace("\n", ""), f"{title}: options not understood"
            question.update(options=[_markup(_unescape(t.strip())) for _, t in entries],
                            correct=[m for m, _ in entries].index("="),
                            n_correct=[m for m, _ in entries].count("="))
        found.append(question)
    return found


@pytest.mark.parametrize("language", qb.LANGUAGES)
def test_gift_file_parses_back_to_the_bank(tmp_path, language):
    gift = export.gift_bank(language)
    parsed = {q["id"]: q for q in parse_gift(gift)}
    bank = qb.load_bank()
    assert sorted(parsed) == sorted(q.id for q in QUESTIONS)
    for notebook, questions in bank.items():
        category = f"$course$/top/{export.BANK_NAME[language]}/{export.chapter_title(notebook, language)}"
        for q in questions:
            want, got = rendered(language)[q.id], parsed[q.id]
            held = f"/{export.AFTER_DUE[language]}" if q.spoils else ""
            assert got["category"] == category + held
            assert (got["stem"], got["explanation"]) == (want.stem, want.explanation), q.id
            if q.kind == "numeric":
                assert got["tolerance"] == pytest.approx(want.tolerance)
                assert got["answer"] == pytest.approx(want.answer, rel=1e-5, abs=want.tolerance / 100)
            else:
                assert got["options"] == list(want.options) and got["n_correct"] == 1, q.id
                assert got["correct"] == want.correct, q.id


def test_gift_escapes_what_moodle_would_misread():
    assert export.gift_escape(r"\(a \neq b\)") == r"\\(a \\neq b\\)"  # not \n, a new line in GIFT
    assert export.gift_escape("a = b: {c} #d ~e") == r"a \= b\: \{c\} \#d \~e"


# ---------------------------------------------------------------------------------------------------
# Canvas QTI (text2qti)
# ---------------------------------------------------------------------------------------------------
QTI = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"
MANIFEST = "{http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1}"


def _qti_markup(text: str) -> str:
    """text2qti's HTML back to the bank's markup: equation images -> $latex$, <code> -> `code`."""
    text = re.sub(r'<img class="equation_image" title="([^"]*)"[^>]*>', r"$\1$", text)
    text = re.sub(r"<code>(.*?)</code>", r"`\1`", text)
    text = re.fullmatch(r"<p>(.*)</p>", text, re.S).group(1)
    assert "<" not in text, f"unexpected HTML in {text[:60]!r}"
    return html.unescape(text)


def parse_qti(package: bytes) -> list[dict]:
    """The items of a QTI zip: every XML file must parse, the manifest must name the assessment."""
    archive = zipfile.ZipFile(io.BytesIO(package))
    for name in archive.namelist():
        if name.endswith(".xml"):
            ET.fromstring(archive.read(name))
    manifest = ET.fromstring(archive.read("imsmanifest.xml"))
    hrefs = [f.get("href") for r in manifest.iter(f"{MANIFEST}resource") if r.get("type") == "imsqti_xmlv1p2"
             for f in r.iter(f"{MANIFEST}file")]
    assert len(hrefs) == 1 and hrefs[0] in archive.namelist()
    items = []
    for item in ET.fromstring(archive.read(hrefs[0])).iter(f"{QTI}item"):
        meta = {f.find(f"{QTI}fieldlabel").text: f.find(f"{QTI}fieldentry").text
                for f in item.iter(f"{QTI}qtimetadatafield")}
        labels = {label.get("ident"): _qti_markup(label.find(f".//{QTI}mattext").text)
                  for label in item.iter(f"{QTI}response_label")
                  if label.find(f".//{QTI}mattext") is not None}
        scoring = [c for c in item.iter(f"{QTI}respcondition")
                   if any(s.text == "100" for s in c.iter(f"{QTI}setvar"))]
        assert len(scoring) == 1
        condition = scoring[0].find(f"{QTI}conditionvar")
        feedback = item.find(f"{QTI}itemfeedback[@ident='general_fb']")
        found = {"id": item.get("title"), "type": meta["question_type"],
                 "stem": _qti_markup(item.find(f"{QTI}presentation/{QTI}material/{QTI}mattext").text),
                 "explanation": _qti_markup(feedback.find(f".//{QTI}mattext").text)}
        if meta["question_type"] == "numerical_question":
            found["range"] = (float(condition.find(f".//{QTI}vargte").text),
                              float(condition.find(f".//{QTI}varlte").text))
        else:
            right = [v.text for v in condition.iter(f"{QTI}varequal")]
            assert len(right) == 1
            found["options"] = list(labels.values())
            found["correct"] = list(labels).index(right[0])
        items.append(found)
    return items


@pytest.mark.parametrize("language", qb.LANGUAGES)
def test_qti_packages_carry_the_bank(language):
    for notebook, questions in qb.load_bank().items():
        items = []
        for after in (False, True):
            if export.held_back(questions, after):
                items += parse_qti(export.qti_package(export.text2qti_source(notebook, language, after)))
        assert sorted(i["id"] for i in items) == sorted(q.id for q in questions)
        by_id = {i["id"]: i for i in items}
        for q in questions:
            item = by_id[q.id]
            want = rendered(language)[q.id]
            assert (item["stem"], item["explanation"]) == (want.stem, want.explanation), q.id
            if q.kind == "numeric":
                assert item["type"] == "numerical_question"
                low, high = item["range"]
                assert low <= want.answer <= high, q.id
                assert math.isclose(high - low, 2 * want.tolerance, abs_tol=2e-4), q.id
            else:
                assert item["type"] == "multiple_choice_question"
                assert item["options"] == list(want.options), q.id
                assert item["correct"] == want.correct, q.id


def test_the_command_writes_moodle_and_canvas_files(tmp_path, capsys):
    from classroom.__main__ import main

    assert main(["questions", "--out", str(tmp_path), "--language", "zh_TW"]) == 0
    assert (tmp_path / "zh_TW" / "moodle" / "attention_course.gift").is_file()
    zips = sorted((tmp_path / "zh_TW" / "canvas").glob("*.zip"))
    assert sorted(z.stem for z in zips if not z.stem.endswith("_after_due")) == NOTEBOOKS
    held = {q.notebook for q in QUESTIONS if q.spoils}
    assert sorted(z.stem.removesuffix("_after_due") for z in zips if z.stem.endswith("_after_due")) == \
        sorted(held)
    assert "Wrote" in capsys.readouterr().out


def test_the_questions_that_give_an_exercise_away_are_held_back():
    """A question drawn from an exercise (its source names it), and any that names one of lab 10's
    planted bugs, is marked: the exports file it under "after the exercises are due"."""
    from utils.checks import MISTAKES
    from utils.exercises.ch10 import PLANTED

    by_id = {q.id: q for q in QUESTIONS}
    assert by_id["ch02-additive-ceiling"].spoils == ("2.4",)  # the ceiling's formula
    planted = {key for key, text in MISTAKES.items() if text in PLANTED.values()}
    for q in QUESTIONS:
        names_a_bug = any(o.mistake.removeprefix("MISTAKES.") in planted for o in q.options)
        if q.notebook.startswith("10_") and (names_a_bug or q.source.startswith("What the hunt")):
            assert q.spoils, f"{q.id} names a planted bug of lab 10 but is not held back"
    assert set(PLANTED) <= {n for q in QUESTIONS for n in q.spoils}
