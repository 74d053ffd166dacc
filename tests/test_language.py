"""The checks speak the language of the edition being run (utils.language)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch

from utils import language
from utils.checks import check_function

REPO = Path(__file__).resolve().parents[1]


def test_the_language_comes_from_the_environment_then_from_the_editions_folder(tmp_path, monkeypatch):
    monkeypatch.delenv(language.ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    assert language.current() == "en"
    for edition in ("zh_CN", "zh_TW"):
        folder = tmp_path / "translations" / edition / "student" / "nbgrader"
        folder.mkdir(parents=True)
        monkeypatch.chdir(folder)
        assert language.current() == edition
    monkeypatch.setenv(language.ENV, "en")
    assert language.current() == "en"
    monkeypatch.setenv(language.ENV, "fr")
    with pytest.raises(ValueError, match="expected one of en, zh_CN, zh_TW"):
        language.current()


def _softmax(x):
    return x.softmax(-1)


def _stub(x):
    raise NotImplementedError


def _wrong(x):
    return x.softmax(0)


@pytest.mark.parametrize("edition, words", [
    ("zh_CN", ("练习 0.1", "还没通过", "提示：", "正确", "还没有实现")),
    ("zh_TW", ("練習 0.1", "尚未通過", "提示：", "正確", "尚未實作")),
])
def test_a_check_speaks_the_editions_language(edition, words, monkeypatch, capsys):
    monkeypatch.setenv(language.ENV, edition)
    monkeypatch.delenv("COURSE_CHECKS", raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    x = torch.randn(3, 4)
    for answer in (_wrong, _stub, _softmax):
        check_function(answer, reference=_softmax, inputs=[(x,)], name="Exercise 0.1", hint="h")
    out = capsys.readouterr().out
    for word in words:
        assert word in out, f"{word!r} missing from:\n{out}"
    assert "Exercise" not in out and "Hint" not in out and "correct" not in out


def test_english_stays_the_default(monkeypatch, capsys, tmp_path):
    monkeypatch.delenv(language.ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COURSE_CHECKS", raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    check_function(_softmax, reference=_softmax, inputs=[(torch.randn(2, 3),)], name="Exercise 0.1")
    assert capsys.readouterr().out == "Exercise 0.1: correct on all 1 test inputs.\n"


def _templates_used() -> set[str]:
    used = set()
    for path in sorted((REPO / "utils").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "say" and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    used.add(first.value)
                elif isinstance(first, ast.Name) and first.id == "HINT":
                    used.add(language.HINT)
                elif isinstance(first, ast.IfExp):
                    used |= {n.value for n in (first.body, first.orelse) if isinstance(n, ast.Constant)}
    return used


def test_every_message_a_check_says_is_translated_and_every_translation_is_said():
    used = _templates_used()
    assert len(used) > 25, "say(...) calls not found"
    assert used - set(language.MESSAGES) == set(), "messages without a translation"
    assert set(language.MESSAGES) - used == set(), "translations of messages no check says"
    for english, translated in language.MESSAGES.items():
        fields = sorted(part.split("}")[0] for part in english.split("{")[1:])
        for text in translated:
            assert sorted(part.split("}")[0] for part in text.split("{")[1:]) == fields, (english, text)


def test_the_traditional_messages_have_no_simplified_character():
    opencc = pytest.importorskip("opencc")
    convert = opencc.OpenCC("s2tw").convert
    for _, traditional in language.MESSAGES.values():
        assert convert(traditional) == traditional, traditional
