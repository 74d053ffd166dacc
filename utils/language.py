"""The language of the checks' messages: English, simplified or traditional Chinese, as the edition run.

A check's verdicts ("correct", "not implemented yet", "expected shape ..., got ...", "this looks like
<mistake>") are written in the language of the notebook being run:

- ``$COURSE_LANGUAGE`` (``en``, ``zh_CN`` or ``zh_TW``) when set, for example in Colab;
- otherwise the edition the kernel runs in: Jupyter starts a kernel in its notebook's folder, so a
  notebook of ``translations/zh_CN/`` (chapters, student edition, nbgrader course) speaks 简体中文
  and one of ``translations/zh_TW/`` 繁體中文;
- otherwise English.

The words each exercise brings itself (the name of a recognised mistake, a hint, the reason a route is
refused) come from ``utils/exercises/locale/<language>.json`` (written with
``python scripts/translations.py texts-fill``); a text missing there is shown in English.
"""

from __future__ import annotations

import json
import os
import re
from functools import cache
from pathlib import Path

LANGUAGES = ("en", "zh_CN", "zh_TW")
ENV = "COURSE_LANGUAGE"


def current() -> str:
    """The language of the learner's messages (see the module's docstring)."""
    chosen = os.environ.get(ENV, "").strip()
    if chosen:
        if chosen not in LANGUAGES:
            raise ValueError(f"${ENV} is {chosen!r}: expected one of {', '.join(LANGUAGES)}")
        return chosen
    try:
        parts = Path.cwd().parts
    except OSError:  # the working folder was removed
        return "en"
    for language in ("zh_CN", "zh_TW"):
        if language in parts:
            return language
    return "en"


# English template -> (简体, 繁體). The templates are the checks' own (utils.checks, utils.exercises);
# a template missing here is shown in English.
MESSAGES: dict[str, tuple[str, str]] = {
    # lab 11's exercises 11.1 and 11.4: the form of an answer
    "write your predictions as a dict from each name in RUNGS to a fraction; got a {kind}": (
        "请把预测写成一个 dict：键是 RUNGS 里的每个名字，值是一个比例；得到的是 {kind}",
        "請把預測寫成一個 dict：鍵是 RUNGS 裡的每個名字，值是一個比例；得到的是 {kind}"),
    "missing: {keys}": ("缺少：{keys}", "缺少：{keys}"),
    "not a rung of RUNGS: {keys}": ("不是 RUNGS 里的级：{keys}", "不是 RUNGS 裡的級：{keys}"),
    "a missing or misspelt rung (one prediction per name in RUNGS): {details}": (
        "缺少或拼错了某一级（RUNGS 里的每个名字各一个预测）：{details}",
        "缺少或拼錯了某一級（RUNGS 裡的每個名字各一個預測）：{details}"),
    "each prediction must be a number between 0 and 1; these are not: {names}": (
        "每个预测都必须是 0 到 1 之间的数；这些不是：{names}",
        "每個預測都必須是 0 到 1 之間的數；這些不是：{names}"),
    "percentages instead of fractions (write 0.4 for 40%)": (
        "写成了百分数，而不是比例（40% 写作 0.4）", "寫成了百分數，而不是比例（40% 寫作 0.4）"),
    "exact match is a fraction between 0 and 1; these predictions are outside: {names}": (
        "完全匹配率是 0 到 1 之间的比例；这些预测超出了范围：{names}",
        "完全匹配率是 0 到 1 之間的比例；這些預測超出了範圍：{names}"),
    "{name}: return a dict with exactly these keys: {keys}; got {got}": (
        "{name}：返回的 dict 必须恰好有这些键：{keys}；得到的是 {got}",
        "{name}：回傳的 dict 必須恰好有這些鍵：{keys}；得到的是 {got}"),
    "{name}: each value must be True (logits unchanged) or False; got {got}": (
        "{name}：每个值都必须是 True（logits 不变）或 False；得到的是 {got}",
        "{name}：每個值都必須是 True（logits 不變）或 False；得到的是 {got}"),
    "{name}: correct.": ("{name}：正确。", "{name}：正確。"),
    "{name}: correct on all {count} test inputs.": ("{name}：{count} 个测试输入全部正确。",
                                                    "{name}：{count} 個測試輸入全部正確。"),
    "{name}: correct on the hidden tests too.": ("{name}：隐藏测试也全部正确。",
                                                 "{name}：隱藏測試也全部正確。"),
    "NOT YET  {err}": ("还没通过  {err}", "尚未通過  {err}"),
    "\nHint: {hint}": ("\n提示：{hint}", "\n提示：{hint}"),
    "{name}: {problem}": ("{name}：{problem}", "{name}：{problem}"),
    "tensor of shape {shape} and dtype {dtype}": ("形状为 {shape}、dtype 为 {dtype} 的张量",
                                                  "形狀為 {shape}、dtype 為 {dtype} 的張量"),
    "expected a {want}, got a {got}": ("应为{want}，得到的是{got}", "應為{want}，得到的是{got}"),
    "expected shape {want}, got shape {got}": ("形状应为 {want}，得到的形状是 {got}",
                                               "形狀應為 {want}，得到的形狀是 {got}"),
    "expected a tensor of dtype {want}, got {got}": ("张量的 dtype 应为 {want}，得到的是 {got}",
                                                     "張量的 dtype 應為 {want}，得到的是 {got}"),
    "{wrong} of {total} entries differ from the expected values": (
        "{total} 个元素中有 {wrong} 个与期望值不同", "{total} 個元素中有 {wrong} 個與期望值不同"),
    "your answer contains NaN where the expected one has numbers": (
        "你的答案里有 NaN，而期望的答案在那些位置上是数值",
        "你的答案裡有 NaN，而期望的答案在那些位置上是數值"),
    "values differ from the expected ones (largest difference {diff})": (
        "数值与期望值不同（最大差值为 {diff}）", "數值與期望值不同（最大差值為 {diff}）"),
    "expected a number close to {want}, got a {got}": ("应为接近 {want} 的数，得到的是{got}",
                                                       "應為接近 {want} 的數，得到的是{got}"),
    "expected about {want}, got {got}": ("应约为 {want}，得到的是 {got}", "應約為 {want}，得到的是 {got}"),
    "expected a sequence of {count} items, got a {got}": ("应为含 {count} 项的序列，得到的是{got}",
                                                          "應為含 {count} 項的序列，得到的是{got}"),
    "expected a Python int, got a {got} (int(...) converts it)": (
        "应为 Python 的 int，得到的是{got}（可以用 int(...) 转换）",
        "應為 Python 的 int，得到的是{got}（可以用 int(...) 轉換）"),
    "expected {want}, got {got}": ("应为 {want}，得到的是 {got}", "應為 {want}，得到的是 {got}"),
    "this looks like {mistake} (on input {i} your answer equals what that mistake gives, and on every "
    "other input too)": (
        "这看起来是这种错误：{mistake}（在输入 {i} 上，你的答案与这种错误给出的结果相同，"
        "在其余每个输入上也相同）",
        "這看起來是這種錯誤：{mistake}（在輸入 {i} 上，你的答案與這種錯誤給出的結果相同，"
        "在其餘每個輸入上也相同）"),
    "{name}: your code switched off the check's record of the operations it runs; a check cannot "
    "accept an answer it cannot see": (
        "{name}：你的代码关掉了检查对它所执行运算的记录；检查无法接受一个它看不到的答案",
        "{name}：你的程式碼關掉了檢查對它所執行運算的記錄；檢查無法接受一個它看不到的答案"),
    "{name}: your code runs {label}, which this exercise asks you to do without (it was reached "
    "through another name or a copy, and still counts)": (
        "{name}：你的代码执行了 {label}，而这道练习要求不用它（换个名字或先存一份副本再调用，也一样算）",
        "{name}：你的程式碼執行了 {label}，而這道練習要求不用它（換個名稱或先存一份副本再呼叫，也一樣算）"),
    "{name}: your code differentiates automatically (PyTorch entered {how}), which this exercise "
    "asks you to do without, in every mode of autograd: derive it by hand": (
        "{name}：你的代码用了自动微分（PyTorch 进入了 {how}），而这道练习要求不用任何形式的自动微分："
        "请亲手推导",
        "{name}：你的程式碼用了自動微分（PyTorch 進入了 {how}），而這道練習要求不用任何形式的自動微分："
        "請親手推導"),
    "{name}: your code runs {label} (PyTorch ran the operator {how}), which this exercise asks you "
    "to do without, whatever name reaches it; build it from simpler operations": (
        "{name}：你的代码执行了 {label}（PyTorch 执行了算子 {how}），而这道练习要求不用它，无论通过"
        "哪个名字调用；请用更基本的运算搭出来",
        "{name}：你的程式碼執行了 {label}（PyTorch 執行了運算子 {how}），而這道練習要求不用它，無論"
        "透過哪個名稱呼叫；請用更基本的運算組出來"),
    "{name}: your code puts {count} numbers through an exponential (exp, softmax) where the formula "
    "needs at most {most}: that is the function evaluated again at shifted inputs, a numerical "
    "derivative, which this exercise asks you to do without; compute the softmax once and build the "
    "derivative from it": (
        "{name}：你的代码让 {count} 个数经过了指数运算（exp、softmax），而公式顶多需要 {most} 个："
        "这是在平移后的输入上重新计算函数，即数值求导，而这道练习要求不用它；请只算一次 softmax，"
        "再由它构建导数",
        "{name}：你的程式碼讓 {count} 個數經過了指數運算（exp、softmax），而公式頂多需要 {most} 個："
        "這是在平移後的輸入上重新計算函數，即數值微分，而這道練習要求不用它；請只算一次 softmax，"
        "再由它建構導數"),
    "your function raised {kind}: {err}{where}": ("你的函数抛出了 {kind}：{err}{where}",
                                                  "你的函數拋出了 {kind}：{err}{where}"),
    " (on input {i}: {args})": ("（输入 {i}：{args}）", "（輸入 {i}：{args}）"),
    "not implemented yet: write your code in place of the `raise NotImplementedError` line in the "
    "exercise cell, run that cell, then this one": (
        "还没有实现：在练习单元格里用你的代码替换 `raise NotImplementedError` 那一行，先运行那个单元格，"
        "再运行这一个",
        "尚未實作：在練習儲存格裡用你的程式碼取代 `raise NotImplementedError` 那一行，先執行那個儲存格，"
        "再執行這一個"),
    "expected your function here, got a {got}": ("这里应传入你的函数，得到的是{got}",
                                                 "這裡應傳入你的函數，得到的是{got}"),
    "{name}: your code calls {label}, which a check refuses ({why})": (
        "{name}：你的代码调用了 {label}，检查不接受这种做法（{why}）",
        "{name}：你的程式碼呼叫了 {label}，檢查不接受這種做法（{why}）"),
    "{name}: this exercise asks you to write it without {label}; build it from simpler operations": (
        "{name}：这道练习要求不用 {label} 来写；请用更基本的运算搭出来",
        "{name}：這道練習要求不用 {label} 來寫；請用更基本的運算組出來"),
    "{name}: your code runs {function} from {file}, which a check refuses ({why})": (
        "{name}：你的代码运行了 {file} 中的 {function}，检查不接受这种做法（{why}）",
        "{name}：你的程式碼執行了 {file} 中的 {function}，檢查不接受這種做法（{why}）"),
    "{name}: your answer is the check's own reference code from {module}; write your own": (
        "{name}：你的答案就是检查在 {module} 中自带的参考代码；请自己写一个",
        "{name}：你的答案就是檢查在 {module} 中附帶的參考程式碼；請自己寫一個"),
    "write your predictions as {form}; got {got}": ("请把预测写成 {form}；得到的是 {got}",
                                                    "請把預測寫成 {form}；得到的是 {got}"),
    "{name}: your predictions are recorded (full marks for writing them). The experiment:": (
        "{name}：你的预测已记录（写出预测即得满分）。实验结果：",
        "{name}：你的預測已記錄（寫出預測即得滿分）。實驗結果："),
    "{name}: your function raised {kind}: {err} (on {where})": (
        "{name}：你的函数抛出了 {kind}：{err}（在{where}上）",
        "{name}：你的函數拋出了 {kind}：{err}（在{where}上）"),
    "{name}: your values are right, but your own Python code runs {few} steps on {small} and {many} on "
    "{large}: that is a Python loop (a for or while loop, a comprehension, map with a lambda, or a "
    "recursion), which this exercise asks you to do without": (
        "{name}：数值是对的，但你自己的 Python 代码在{small}上执行了 {few} 步，"
        "在{large}上执行了 {many} 步：这说明用了 Python 循环（for 或 while 循环、推导式、"
        "带 lambda 的 map，或者递归），而这道练习要求不用循环",
        "{name}：數值是對的，但你自己的 Python 程式碼在{small}上執行了 {few} 步，"
        "在{large}上執行了 {many} 步：這說明用了 Python 迴圈（for 或 while 迴圈、推導式、"
        "帶 lambda 的 map，或者遞迴），而這道練習要求不用迴圈"),
    "the input {args}": ("输入 {args}", "輸入 {args}"),
    "{name}: the count is right, but it is a {kind}; the exercise asks for a Python int": (
        "{name}：数目是对的，但它的类型是 {kind}；练习要求返回 Python 的 int",
        "{name}：數目是對的，但它的類型是 {kind}；練習要求回傳 Python 的 int"),
    "int(...) turns a one-element tensor into a Python int": (
        "int(...) 可以把只有一个元素的张量变成 Python 的 int",
        "int(...) 可以把只有一個元素的張量變成 Python 的 int"),
    "the exercise asks you to write it without that function": (
        "这道练习要求不用这个函数来写", "這道練習要求不用這個函數來寫"),
    "{name}: your answer is {label} itself; {why}": (
        "{name}：你的答案就是 {label} 本身；{why}", "{name}：你的答案就是 {label} 本身；{why}"),
    "as you predicted": ("与你的预测一致", "與你的預測一致"),
    "not what you predicted ({said}): this is {belief}": ("与你的预测（{said}）不同：这是{belief}",
                                                          "與你的預測（{said}）不同：這是{belief}"),
    "not what you predicted ({said})": ("与你的预测（{said}）不同", "與你的預測（{said}）不同"),
}

_EXERCISE = {"zh_CN": "练习", "zh_TW": "練習"}
_INPUT = {"zh_CN": "（输入 {}）", "zh_TW": "（輸入 {}）"}
_ITEM = {"zh_CN": "（第 {} 项）", "zh_TW": "（第 {} 項）"}


def exercise_name(name: str, language: str | None = None) -> str:
    """ "Exercise 4.2 (input 0)" in the learner's language: "练习 4.2（输入 0）"."""
    language = language or current()
    if language == "en" or not isinstance(name, str):
        return name
    name = re.sub(r"^Exercise\b", _EXERCISE[language], name)
    name = re.sub(r" \(input (\d+)\)", lambda m: _INPUT[language].format(m.group(1)), name)
    return re.sub(r" \(item (\d+)\)", lambda m: _ITEM[language].format(m.group(1)), name)


@cache
def exercise_texts(language: str) -> dict[str, str]:
    """{English: translation} of the exercises' own words (mistake names, hints) in ``language``."""
    path = Path(__file__).resolve().parent / "exercises" / "locale" / f"{language}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def say(template: str, **values: object) -> str:
    """``template.format(**values)`` in the learner's language (MESSAGES); an exercise's name passed as
    ``name``, and any value that is one of the exercises' own texts (a mistake's name, a hint), are
    translated too."""
    language = current()
    if language != "en":
        pair = MESSAGES.get(template)
        if pair is not None:
            template = pair[LANGUAGES.index(language) - 1]
        texts = exercise_texts(language)
        values = {key: texts.get(value, value) if isinstance(value, str) else value
                  for key, value in values.items()}
        if "name" in values:
            values["name"] = exercise_name(values["name"], language)  # type: ignore[arg-type]
    return template.format(**values)


# The line that gives a hint, and how it starts in every language (a check adds the exercise's hint
# to a message that has none)
HINT = "\nHint: {hint}"
HINT_MARKS = ("\nHint:", "\n提示：")


# ---------------------------------------------------------------------------------------------------
# What the code prints, in the learner's language
#
# A printed line is looked up with its data taken out: numbers, quoted words, bracketed lists, and runs
# of three or more of the toy corpus's words (a sentence the model wrote). What is left is the line's
# template ("with attention: exact match {1}, token accuracy {2}"), the same on every run and processor,
# and utils/locale/outputs_<language>.json gives its translation, written with
# ``python scripts/translations.py outputs-fill``. The Chinese books and decks translate the English
# run's outputs with it; a Chinese notebook prints the course's own lines through ``show``.
# ---------------------------------------------------------------------------------------------------
_DATA = re.compile(
    r"(?<![A-Za-z])'[^'\n]*'(?![A-Za-z])"  # a quoted word: 'quiet'
    r'|"[^"\n]*"'  # "lape"
    r"|\[(?:[^\[\]\n]|\[(?:[^\[\]\n]|\[[^\[\]\n]*\])*\])*\]"  # a list, nested up to three deep
    r"|\{[^{}\n]*\}"  # a dict
    r"|\((?:\s*[-+.\de]+\s*,)+\s*[-+.\de]*\s*\)"  # a tuple of numbers
    r"|(?<![A-Za-z_\d])(?<!\d\.)x?[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e[-+]?\d+)?%?x?(?![A-Za-z\d])")
_PLACEHOLDER = re.compile(r"\{(\d+)\}")
_SUBWORDS = re.compile(r"(?<!\S)(?:[a-z]+(?:</w>)? +)+[a-z]+(?:</w>)?(?!\S)")  # m y</w> g r e e n</w>
_CORPUS_RUN = 3  # this many corpus words in a row are data


@cache
def _corpus_words() -> frozenset[str]:
    from utils.data import DICTIONARY, SOURCE_WORDS

    specials = {"<bos>", "<eos>", "<pad>", "<unk>", "<mask>", "<cls>", "[MASK]", "[CLS]"}
    return frozenset(SOURCE_WORDS) | frozenset(DICTIONARY.values()) | specials


def output_template(line: str) -> tuple[str, list[str]]:
    """A printed line without its data: (the template, with {1}, {2} ... in its place; the data). Runs
    of spaces count as one, and the line's indentation is left out."""
    indent = len(line) - len(line.lstrip())
    line = line[indent:]
    values: list[str] = []

    def subwords(match: re.Match[str]) -> str:  # a sentence cut into subwords is data too
        if "</w>" not in match.group():
            return match.group()
        values.append(match.group())
        return f"\x00{len(values)}\x00"

    line = _SUBWORDS.sub(subwords, line)
    words = _corpus_words()
    tokens = list(re.finditer(r"\S+", line))
    pieces, i, start = [], 0, 0
    while i < len(tokens):  # sentences of the corpus first: runs of its words
        j = i
        while j < len(tokens) and tokens[j].group().strip(",.;:") in words:
            j += 1
        if j - i >= _CORPUS_RUN:
            pieces.append(line[start:tokens[i].start()])
            values.append(line[tokens[i].start():tokens[j - 1].end()])
            pieces.append(f"\x00{len(values)}\x00")
            start, i = tokens[j - 1].end(), j
        else:
            i += 1
    pieces.append(line[start:])
    masked = "".join(pieces)
    numbered: dict[int, str] = {}

    def take(match: re.Match[str]) -> str:
        values.append(match.group())
        numbered[len(values)] = match.group()
        return f"\x00{len(values)}\x00"

    parts = re.split(r"(\x00\d+\x00)", masked)  # mask the data between the corpus runs
    masked = "".join(p if p.startswith("\x00") else _DATA.sub(take, p) for p in parts)
    order = [int(n) for n in re.findall(r"\x00(\d+)\x00", masked)]  # number the data as it reads
    values = [values[n - 1] for n in order]
    for new, old in enumerate(order, 1):
        masked = masked.replace(f"\x00{old}\x00", f"{{{new}}}", 1)
    return " ".join(masked.split()), values


@cache
def output_table(language: str) -> dict[str, str]:
    """{template: translation} of the printed lines, for ``language``."""
    path = Path(__file__).resolve().parent / "locale" / f"outputs_{language}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _fill(template: str, values: list[str]) -> str:
    return _PLACEHOLDER.sub(lambda m: values[int(m.group(1)) - 1], template)


def translate_output(text: str, language: str | None = None) -> str:
    """``text`` as printed, each line whose template has a translation in ``language`` translated."""
    language = language or current()
    if language == "en":
        return text
    table = output_table(language)
    lines = []
    for line in text.split("\n"):
        template, values = output_template(line)
        translated = table.get(template)
        if translated is not None and template:
            indent = line[:len(line) - len(line.lstrip())]
            line = indent + _fill(translated, values)
        lines.append(line)
    return "\n".join(lines)


def show(text: str) -> None:
    """``print(text)`` in the learner's language (a line of the course's own, such as a check's OK)."""
    print(translate_output(text))
