"""The Chinese editions: catalogues, the traditional edition derived from the simplified one, the
Chinese books and the Chinese notebooks. The English notebooks and pages stay the only source.

    python scripts/translations.py extract    # English prose -> _build/gettext/*.pot
    python scripts/translations.py update     # extract, merge into locales/zh_CN (new text untranslated,
                                              # changed text fuzzy, obsolete dropped), derive zh_TW
    python scripts/translations.py derive-tw  # locales/zh_TW from locales/zh_CN (and the guide's copies
                                              # of the chapters' goals and titles from the chapters)
    python scripts/translations.py books      # the Chinese books: _build/html/zh_CN, _build/html/zh_TW
    COURSE_EDITION=student python scripts/translations.py books   # the Chinese student's books
                                              # (book/_ext/student_book.py): _build/student_book/html/zh_CN
    python scripts/translations.py notebooks  # translations/<lang>/chapters and .../student
    python scripts/translations.py status     # per catalogue: translated, untranslated, fuzzy
    python scripts/translations.py todo chapters/02_soft_lookup     # what is left, as JSON
    python scripts/translations.py fill chapters/02_soft_lookup F.json  # {msgid: msgstr} -> zh_CN
    python scripts/translations.py outputs-todo 02_soft_lookup  # printed lines to translate (output_texts.py)
    python scripts/translations.py outputs-fill F.json          # {template: 简体} -> utils/locale/

extract and books reuse the executed notebooks of the English build (`make book` first).

Catalogues live in locales/<lang>/LC_MESSAGES/<docname>.po, one per page (gettext_compact off), and are
checked in. Only zh_CN is written by hand. zh_TW is always derived: s2twp phrasing, then the overrides
below and those the glossary implies, then the swap of 行 and 列 (row and column trade places between
mainland and Taiwan usage); a correction to the traditional text goes into the overrides, never into
the zh_TW files. tests/test_translations.py checks the catalogues, the traditional text's known traps
and the Chinese notebooks.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCALES = ROOT / "locales"
BUILD = ROOT / "_build"
GETTEXT = BUILD / "gettext"
NOTEBOOKS_OUT = ROOT / "translations"
STUDENT_HTML = BUILD / "student_book" / "html"  # the student's book (`make student-book`)
SOURCE = "zh_CN"
LANGUAGES = {
    "zh_CN": {"name": "简体中文", "title": "注意力机制：从 seq2seq 到 Transformer",
              "show": "显示单元格内容", "hide": "隐藏单元格内容"},
    "zh_TW": {"name": "繁體中文", "title": "注意力機制：從 seq2seq 到 Transformer",
              "show": "顯示儲存格內容", "hide": "隱藏儲存格內容"},
}

# The table of contents' part captions (book/_toc.yml holds no prose for gettext to extract): simplified
# Chinese here, traditional derived as for the catalogues.
TOC_CAPTIONS = {
    "Before you start": "开始之前",
    "Attention": "注意力",
    "Building blocks of the Transformer": "Transformer 的组成部分",
    "The Transformer": "Transformer",
    "Labs": "实验",
    "Beyond translation": "翻译之外",
    "Real sentences": "真实的句子",
    "Reference": "参考资料",
}

# After s2twp, phrases its software vocabulary gets wrong for this course (the Taiwanese lecture notes
# write 參數, 函數, 資料, 網路, 矩陣). The glossary's own pairs (its simplified and traditional columns)
# are applied too, longest first. Applied in this order, to text outside math and code.
TW_OVERRIDES: list[tuple[str, str]] = [
    ("超引數", "超參數"),
    ("引數", "參數"),
    ("啟用函式", "激活函數"),
    ("函式", "函數"),
    ("區域性最小值", "局部最小值"),
    ("區域性", "局部"),
    ("迴圈神經網路", "循環神經網路"),
    ("程式程式碼", "程式碼"),
    ("迴圈", "循環"),
    ("最佳化器", "優化器"),
    ("例項", "實例"),
    # Phrases s2twp splits wrongly (a character of the next word taken into the first one)
    ("三個陣列成", "三個數組成"), ("片語成", "詞組成"), ("壓縮排", "壓縮進"), ("瞭解碼", "了解碼"),
    ("一箇中", "一個中"), ("複制", "複製"), ("若幹", "若干"), ("的改變數", "的改變量"),
    ("是隻讀", "是唯讀"), ("是隻", "是只"), ("含有隻", "含有只"), ("，併為", "，並為"),
    ("、併為", "、並為"), ("併為每個", "並為每個"), ("，併發出", "，並發出"),
    ("之一齣在", "之一出在"),
    ("推匯出", "推導出"), ("錶示", "表示"), ("映象順序", "鏡像順序"),
    ("計算是序列的", "計算是循序的"),
    # Words Taiwanese texts on machine learning write otherwise
    ("擴充套件", "擴充"), ("全域性", "全域"), ("舍入", "捨入"), ("聯絡起來", "聯繫起來"),
    ("斯坦福大學", "史丹佛大學"), ("要關注的物件", "要關注的對象"), ("嫌疑物件", "嫌疑對象"),
    ("時鐘的指標", "時鐘的指針"), ("的指標區分", "的指針區分"), ("運算元", "核心"), ("棧", "堆疊"),
    ("字首", "前綴"), ("貪心", "貪婪"), ("線性預熱", "線性暖身"), ("短暫的預熱", "短暫的暖身"),
    ("在預熱之後", "在暖身之後"), ("對映", "映射"), ("單元格", "儲存格"),
    ("程式碼單元", "程式碼儲存格"),
    ("返回", "回傳"), ("並行", "平行"), ("大語言模型", "大型語言模型"), ("打印出", "印出"),
    ("打印", "印出"), ("喂入", "餵入"), ("繫結", "綁定"), ("連線", "連接"),
    ("同一個程序中", "同一個行程中"),
    ("質量", "品質"), ("層型別", "層類型"), ("最佳假設的下標", "最佳假設的索引"),
    ("Python 列表", "Python 串列"),
    ("詞的列表", "詞的串列"), ("詞列表", "詞串列"), ("組成的列表", "組成的串列"),
    ("列表裡", "串列裡"),
    ("知名教程", "知名教學"), ("跟蹤", "追蹤"), ("實現", "實作"), ("構建全書", "建置全書"),
    ("構建", "建構"),
    ("課程包", "課程套件"), ("課程套件括", "課程包括"), ("本包中的", "本套件中的"),
    (" 包；", " 套件；"),
    (" 包時", " 套件時"), ("倉庫的克隆中", "儲存庫的本機副本中"), ("克隆", "複製"),
    ("倉庫", "儲存庫"),
    ("方差", "變異數"), ("均值", "平均值"), ("平平均值", "平均值"), ("標準正態", "標準常態"),
    ("鏈式法則", "連鎖律"), ("丟擲", "拋出"), ("啟用值", "激活值"), ("自動求導", "自動微分"),
    ("反饋", "回饋"),
    ("計算機上", "電腦上"), ("校驗和", "檢查碼"), ("例程", "常式"), ("純文本", "純文字"),
    ("置信度", "信心"),
    ("環境配置", "環境設定"), ("需要聯網", "需要連網"),
    # "by means of" is 透過 (通過 is "passes")
    ("通過梯度下降", "透過梯度下降"), ("通過分數起作用", "透過分數起作用"), ("只通過", "只透過"),
    ("只能通過", "只能透過"), ("通過三個可學習", "透過三個可學習"),
    ("它通過縮放點積", "它透過縮放點積"),
    ("可以通過", "可以透過"), ("將通過交叉注意力", "將透過交叉注意力"),
    ("讓它通過編碼器", "讓它透過編碼器"),
    ("無法通過預測", "無法透過預測"), ("通過一個可學習的門控", "透過一個可學習的門控"),
    ("通過混合位置", "透過混合位置"),
    # 循環 is recurrence (above); a program's loop is 迴圈
    ("Python 循環", "Python 迴圈"), ("訓練循環", "訓練迴圈"), ("解碼循環", "解碼迴圈"),
    ("在循環中", "在迴圈中"),
    ("這個循環", "這個迴圈"), ("上面的循環", "上面的迴圈"), ("貪婪循環", "貪婪迴圈"),
    ("同一個循環：", "同一個迴圈："),
    ("就是一個循環", "就是一個迴圈"), ("送回的那個循環", "送回的那個迴圈"),
    ("寫的那個循環", "寫的那個迴圈"),
    ("對詞元的循環", "對詞元的迴圈"), ("逐個頭循環", "逐個頭跑迴圈"),
    # panels of a figure, after the row/column swap turned 左列 (left panel) into 左行
    ("左行，", "左欄，"), ("（右行）", "（右欄）"), ("右行下方", "右欄下方"),
    # must come after 函式 -> 函數
    ("各種庫的", "各種函式庫的"), ("現成的庫", "現成的函式庫"),
    # chapter 4's read-through: Taiwan writes 代名詞 for a pronoun, 方塊圖 for a block diagram, 核心 for
    # a CPU's cores
    ("代詞", "代名詞"), ("框圖", "方塊圖"), ("多核 CPU", "多核心 CPU"), ("核再多", "核心再多"),
    # lab 10's read-through: Taiwan writes 註解 for a code comment, 設定 for a configuration,
    # 母體 for a statistical population, 類別 for a Python class
    ("註釋", "註解"), ("配置", "設定"), ("總體變異數", "母體變異數"), ("模型類，", "模型類別，"),
    # chapter 7's read-through: Taiwan writes 亂數產生器 for a random number generator, 移動平均
    # for a running average, 手動 for working something out by hand
    ("隨機數生成器", "亂數產生器"), ("滑動平均", "移動平均"), ("手工實作", "手動實作"),
    ("手工重算", "手動重算"),
    # chapter 8's read-through: s2twp writes 最多隻 (隻, the measure word) for 最多只 ("at most only")
    ("最多隻", "最多只"),
    # chapter 2's read-through: a slider is 滑桿 in Taiwan (the preface's 滑块, which the block pattern
    # made 滑區塊)
    ("滑塊", "滑桿"),
    # chapter 5's read-through: Taiwan's grammar words, 片語 for a phrase (名詞片語), 介系詞 for a
    # preposition, 連接詞 for a conjunction
    ("短語", "片語"), ("介詞", "介系詞"), ("連詞", "連接詞"),
    # chapter 9's read-through: a GPU's main memory is 主記憶體 and its on-chip memory 晶片內記憶體 in
    # Taiwan; a Python dataclass is a 資料類別; long-range reasoning is 推理 (the glossary's 推論 is
    # inference)
    ("主存", "主記憶體"), ("片上記憶體", "晶片內記憶體"), ("凍結的資料類", "凍結的資料類別"),
    ("長距離推論", "長距離推理"),
    # chapters 11 and 12's read-throughs: noise is 雜訊 in Taiwan; s2twp turns 下游 into 下遊
    ("噪聲", "雜訊"), ("下遊", "下游"),
    # the instructor guide's read-through: slides are 投影片 in Taiwan, a container image 映像
    ("幻燈片", "投影片"), ("映象", "映像"),
    # the second (Taiwan) readers: grammar words for subject and object
    ("主語", "主詞"), ("賓語", "受詞"),
    ("感知機", "感知器"), ("判別器", "鑑別器"),  # a perceptron and a discriminator, in Taiwan
    ("拋出異常", "拋出例外"), ("畫素", "像素"), ("合並", "合併"),  # the guide's second reader
    # an operating system's process is 行程 in Taiwan (s2twp writes 程序, a procedure): the guide's
    # section on where a grade comes from
    ("Python 程序", "Python 行程"), ("自己的程序", "自己的行程"), ("評分器的程序", "評分器的行程"),
    ("同處一個程序", "同處一個行程"), ("執行的程序", "執行的行程"),
]

# Words of locales/termbase.yml that differ between the regions, as patterns (applied after
# TW_OVERRIDES): Taiwan writes 區塊 for a block, 指令 for a command, 串列 for a Python list, 核心 for
# cores, 正規化 for normalisation, 範例 for an example, 印出 for printing, 透過 for "by means of",
# 子句 for a clause, 來源語言, 分布 and 進度列.
TW_PATTERNS: list[tuple[str, str]] = [
    (r"(?<=[一幾每])塊", "個區塊"),
    (r"(?<![區圖方分小])塊", "區塊"),
    (r"命令(?!列)", "指令"),
    (r"列表(?!示)", "串列"),
    (r"(\d\s*|個|多少)核(?!心)", r"\1核心"),
    (r"歸一化", "正規化"),
    (r"示例", "範例"),
    (r"列印在", "印在"),
    (r"列印出?", "印出"),
    (r"(層|模型)的型別", r"\1的類型"),
    (r"施加丟棄法", "套用丟棄法"),
    (r"臺灣地區", "臺灣"),
    # the native read-throughs' book-wide decisions: a clause is 子句 (從句子 is "from the sentence"), the
    # source language 來源語言, a distribution 分布 (the Ministry of Education's form), a progress bar 進度列
    (r"從句(?!子)", "子句"),
    (r"(?<!來)源語言", "來源語言"),
    (r"(?<![來資電根])源(?=句|詞|序列)", "來源"),  # the source sentence, word, sequence
    (r"分佈", "分布"),
    (r"進度條", "進度列"),
]
# 通過 means "passes" (a check, a gate, a layer) in these phrases and at the end of a clause; everywhere
# else it is "by means of", 透過 in Taiwan.
TW_PASSES = ("全部通過", "未通過", "能通過", "無法通過", "依次通過", "狀態通過", "詞元通過模型",
             "通過的檢查", "通過後")


def _by_means_of(text: str) -> str:
    """通過 -> 透過 except where it means "passes" (TW_PASSES)."""
    kept = {f"\ue000{k}\ue001": phrase for k, phrase in enumerate(TW_PASSES)}
    for mark, phrase in kept.items():
        text = text.replace(phrase, mark)
    text = re.sub(r"通過(?![，。；：、）」！？]|\s*$)", "透過", text)  # at a clause's end: "passes"
    for mark, phrase in kept.items():
        text = text.replace(mark, phrase)
    return text


# Whole messages that a phrase override cannot reach safely (one character with several meanings).
TW_MESSAGES = {"周": "週"}

# Row and column trade places: mainland 行 = row, 列 = column; Taiwan 列 = row, 行 = column. In a
# message whose English speaks of rows or columns, every 行 and 列 of the simplified text is swapped,
# except inside these words, where neither means row or column.
ROW_COLUMN_WORDS = re.compile(r"进行|运行|执行|行为|并行|平行|行动|流行|可行|行业|发行|同行|行程|自行|"
                              r"实行|举行|施行|推行|行走|代码行|一行代码|命令行|行内|"
                              r"序列|列表|排列|队列|列出|列举|系列|并列|数列|阵列|行列式|下列|陈列")
ROW_OR_COLUMN = re.compile(r"\b(rows?|columns?|row-wise|column-wise)\b", re.I)


def swap_rows_and_columns(text: str) -> str:
    """行 <-> 列 in a simplified text about rows and columns, except inside ROW_COLUMN_WORDS."""
    kept: list[str] = []

    def keep(match: re.Match) -> str:
        kept.append(match.group(0))
        return f"\0{len(kept) - 1}\0"

    text = ROW_COLUMN_WORDS.sub(keep, text)
    text = text.translate(str.maketrans({"行": "列", "列": "行"}))
    return re.sub("\0(\\d+)\0", lambda m: kept[int(m.group(1))], text)


# ---------------------------------------------------------------------------------------------------
# Catalogues
# ---------------------------------------------------------------------------------------------------
def _read(path: Path):
    from babel.messages.pofile import read_po

    with path.open("rb") as f:
        return read_po(f)


def _write(path: Path, catalog) -> None:
    from babel.messages.pofile import write_po

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        write_po(f, catalog, width=0, omit_header=False, include_previous=False)


def catalogues(language: str) -> list[Path]:
    return sorted((LOCALES / language / "LC_MESSAGES").rglob("*.po"))


def glossary_pairs() -> list[tuple[str, str]]:
    """(simplified, traditional) names from the glossary's index table."""
    pairs = []
    for line in (ROOT / "book" / "glossary.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].startswith("{term}"):
            simplified, traditional = (re.split(r"（", c)[0].strip() for c in cells[1:3])
            if len(simplified) > 1 and traditional and simplified != traditional:  # not 行/列
                pairs.append((simplified, traditional))
    return pairs


def to_traditional(text: str, english: str = "",
                   converter: Callable[[str], str] | None = None) -> str:
    """The Taiwan edition of a simplified text: rows and columns swapped where ``english`` speaks of
    them, s2twp, then the glossary's pairs and TW_OVERRIDES (math and code untouched)."""
    if converter is None:
        import opencc

        converter = opencc.OpenCC("s2twp").convert
    if ROW_OR_COLUMN.search(english):
        text = swap_rows_and_columns(text)
    if text in TW_MESSAGES:
        return TW_MESSAGES[text]
    glossary = [(converter(s), t) for s, t in glossary_pairs() if converter(s) != t]

    def titled_role(match: re.Match) -> str:  # {doc}`术语表 <glossary>`: the title is prose
        title = to_traditional(match.group(2), "", converter)
        return f"{{{match.group(1)}}}`{title} <{match.group(3)}>`"

    text = re.sub(r"\{([\w:-]+)\}`([^`<]*[\u4e00-\u9fff][^`<]*?)\s*<([^<>`]+)>`", titled_role, text)
    pieces = re.split(r"(\$\$.+?\$\$|\$[^$\n]+?\$|`[^`\n]*`)", text, flags=re.S)
    out = []
    for k, piece in enumerate(pieces):
        if k % 2:  # math and code stay as written
            out.append(piece)
            continue
        # a character s2twp's phrases left simplified (論文采用) is converted on its own first: after
        # the overrides it would undo one of them (若干 -> 若幹)
        piece = _characters(converter(piece))
        for wrong, right in sorted(glossary, key=lambda p: -len(p[0])) + TW_OVERRIDES:
            piece = piece.replace(wrong, right)
        for pattern, replacement in TW_PATTERNS:
            piece = re.sub(pattern, replacement, piece)
        out.append(piece)
    text = _by_means_of("".join(out))  # on the whole text: a code span does not end a clause
    return text.replace("“", "「").replace("”", "」")  # Taiwan's quotation marks


CJK = re.compile(r"[\u4e00-\u9fff]")
MANUAL = LOCALES / "zh_TW_manual"  # .po files with hand-written Taiwan text for a few messages


def _manual(relative: Path) -> dict[str, str]:
    path = MANUAL / relative
    return {m.id: m.string for m in _read(path) if m.id and m.string} if path.exists() else {}


def _characters(text: str) -> str:
    """Each character that is still simplified, converted on its own (phrases can hide one)."""
    import opencc

    global _S2TW
    if _S2TW is None:
        _S2TW = opencc.OpenCC("s2tw").convert
    return "".join(_S2TW(c) if CJK.match(c) else c for c in text)


_S2TW = None


def derive_traditional(out: Path = LOCALES / "zh_TW") -> list[Path]:
    """Write <out>/LC_MESSAGES/*.po (locales/zh_TW) from locales/zh_CN; returns the files written."""
    import opencc

    converter = opencc.OpenCC("s2twp").convert
    written = []
    for source in catalogues(SOURCE):
        catalog = _read(source)
        catalog.locale = None
        catalog.language_team = "zh_TW"
        fixed = _manual(source.relative_to(LOCALES / SOURCE))
        for message in catalog:
            if not (message.id and message.string):
                continue
            if message.id in fixed:  # written by hand for Taiwan
                message.string = fixed[message.id]
            elif CJK.search(message.id) and message.string == message.id:
                pass  # Chinese already in the English source (the glossary's names): kept as written
            elif CJK.search(message.id):
                raise SystemExit(f"{source.name}: {message.id[:60]!r} quotes Chinese words that a "
                                 f"converter would change: give its Taiwan text in {MANUAL}")
            else:
                message.string = to_traditional(message.string, message.id, converter)
        target = out / source.relative_to(LOCALES / SOURCE)
        _write(target, catalog)
        text = target.read_text(encoding="utf-8").replace("Language: zh_CN", "Language: zh_TW")
        target.write_text(text, encoding="utf-8")
        written.append(target)
    for stale in set((out / "LC_MESSAGES").rglob("*.po")) - set(written):
        stale.unlink()
    return written


def toc_for(language: str | None) -> Path:
    """book/_toc.yml, or for a Chinese book a copy with its part captions translated."""
    toc = ROOT / "book" / "_toc.yml"
    if not language:
        return toc
    import yaml

    data = yaml.safe_load(toc.read_text(encoding="utf-8"))
    for part in data.get("parts", []):
        caption = TOC_CAPTIONS.get(part["caption"])
        if caption is None:
            raise SystemExit(f"book/_toc.yml: no translation of the caption {part['caption']!r} in "
                             f"scripts/translations.py's TOC_CAPTIONS")
        part["caption"] = caption if language == SOURCE else to_traditional(caption)
    path = BUILD / f"toc_{language}.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def _jupyter_book(*args: str, language: str | None = None) -> None:
    exe = Path(sys.executable).with_name("jupyter-book")
    subprocess.run([str(exe), "build", str(ROOT), "--toc", str(toc_for(language)), *args],
                   check=True, cwd=ROOT, env={**os.environ, "COURSE_PLAIN_PROGRESS": "1"})


def edition() -> str:
    """The book's edition: "teacher" (the public book, the default) or "student" (`COURSE_EDITION`)."""
    chosen = os.environ.get("COURSE_EDITION", "teacher") or "teacher"
    if chosen not in ("teacher", "student"):
        raise SystemExit(f"COURSE_EDITION={chosen!r}: expected teacher or student")
    return chosen


def student_config(config: dict) -> dict:
    """The student's book's settings on top of a book's configuration: book/_ext/student_book.py
    switched on, and no button that opens or links the full notebooks (launch, repository)."""
    config["sphinx"]["local_extensions"]["student_book"] = str(ROOT / "book" / "_ext")
    config["sphinx"]["config"]["course_edition"] = "student"
    config["launch_buttons"] = {}
    config.setdefault("html", {})["use_repository_button"] = False
    return config


def config_for(language: str | None, builder: str = "html") -> Path:
    """_config.yml for one language, reusing the English build's executed notebooks."""
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    config["execute"]["cache"] = str(BUILD / ".jupyter_cache")
    extensions = config.setdefault("sphinx", {}).get("local_extensions") or {}
    config["sphinx"]["local_extensions"] = {name: str(ROOT / path) for name, path in extensions.items()}
    sphinx = config["sphinx"].setdefault("config", {})
    sphinx["html_static_path"] = [str(ROOT / p) for p in sphinx.get("html_static_path", [])]
    sphinx["gettext_compact"] = False
    sphinx["locale_dirs"] = [str(LOCALES)]
    if builder == "gettext":  # as on the page: a code listing's HTML, not its LaTeX (no message)
        sphinx["nb_mime_priority_overrides"] = [["gettext", "text/latex", None]]
    if language:
        config["title"] = LANGUAGES[language]["title"]
        sphinx["language"] = language
        sphinx["nb_code_prompt_show"] = LANGUAGES[language]["show"]  # myst-nb's "Show code cell ..."
        sphinx["nb_code_prompt_hide"] = LANGUAGES[language]["hide"]
        config["repository"]["path_to_book"] = f"translations/{language}"
    student = builder == "html" and edition() == "student"
    if student:
        student_config(config)
    path = BUILD / f"config_{'student_' if student else ''}{language or builder}.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def extract() -> None:
    """The .pot templates of every page, with the executed notebooks' figure captions."""
    if not (BUILD / ".jupyter_cache").exists():
        raise SystemExit("no executed notebooks in _build/.jupyter_cache: run `make book` first")
    shutil.rmtree(BUILD / "gettext_build", ignore_errors=True)
    _jupyter_book("--config", str(config_for(None, "gettext")), "--path-output",
                  str(BUILD / "gettext_build"), "--builder", "custom", "--custom-builder", "gettext")
    shutil.rmtree(GETTEXT, ignore_errors=True)
    shutil.copytree(BUILD / "gettext_build" / "_build" / "gettext", GETTEXT)


def escape_numbered_titles(catalog) -> None:
    """A translated title "5. 多头注意力" would parse as a list starting at 5, which Sphinx then refuses
    as a title and leaves in English: write it "5\\. 多头注意力"."""
    for message in catalog:
        if message.id and re.match(r"\d+\. ", message.id) and re.match(r"\d+\. ", message.string or ""):
            message.string = re.sub(r"^(\d+)\. ", r"\1\\. ", message.string)


GUIDE_DOC = "book/instructor_guide"


def chapter_translations(language: str = SOURCE) -> dict[str, str]:
    """msgid -> msgstr of the chapters' catalogues, for the messages every chapter translates alike."""
    seen: dict[str, set[str]] = {}
    for path in sorted((LOCALES / language / "LC_MESSAGES" / "chapters").glob("*.po")):
        for m in _read(path):
            if m.id and m.string and not m.fuzzy:
                seen.setdefault(m.id, set()).add(m.string)
    return {msgid: next(iter(strings)) for msgid, strings in seen.items() if len(strings) == 1}


def sync_guide() -> int:
    """The instructor guide copies each chapter's learning goals, section titles and exercise titles
    (classroom/guide.py): give those messages the chapter's own translation, so that a chapter's
    rewrite reaches the guide. Returns how many messages changed."""
    path = LOCALES / SOURCE / "LC_MESSAGES" / f"{GUIDE_DOC}.po"
    if not path.exists():
        return 0
    shared = chapter_translations()
    catalog = _read(path)
    changed = 0
    for message in catalog:
        if message.id and message.id in shared and message.string != shared[message.id]:
            message.string = shared[message.id]
            message.flags.discard("fuzzy")
            changed += 1
    if changed:
        _write(path, catalog)
    return changed


def update() -> None:
    """Merge fresh templates into zh_CN (untranslated new text, fuzzy changed text), then zh_TW."""
    from babel.messages.pofile import read_po

    extract()
    for template in sorted(GETTEXT.rglob("*.pot")):
        with template.open("rb") as f:
            pot = read_po(f)
        target = LOCALES / SOURCE / "LC_MESSAGES" / template.relative_to(GETTEXT).with_suffix(".po")
        if target.exists():
            catalog = _read(target)
            catalog.update(pot, update_header_comment=False)
            catalog.obsolete.clear()  # text gone from the English source
        else:
            catalog = pot
            catalog.locale = None
        catalog.fuzzy = False
        escape_numbered_titles(catalog)
        _write(target, catalog)
        print(f"updated {target.relative_to(ROOT)}")
    sync_guide()
    derive_traditional()


def _all_executed() -> bool:
    """Whether every chapter notebook is in the English build's execution cache (nothing to run)."""
    try:
        import nbformat
        from jupyter_cache import get_cache

        store = get_cache(str(BUILD / ".jupyter_cache"))
        for path in sorted((ROOT / "chapters").glob("*.ipynb")):
            store.match_cache_notebook(nbformat.read(path, as_version=4))
    except (ImportError, KeyError, OSError):
        return False
    return True


def books(languages: list[str]) -> None:
    """Build each Chinese book from the English build's cache into _build/html/<lang>/. When every
    notebook is cached (after `make book`'s English build) the books only render: they are built side by
    side, one process each; otherwise one after the other, so that no notebook runs twice at once.
    With COURSE_EDITION=student, the student's books, into _build/student_book/html/<lang>/."""
    student = edition() == "student"
    jobs = []
    for language in languages:
        out = BUILD / (f"student_book_{language}" if student else f"book_{language}")
        args = ("--config", str(config_for(language)), "--path-output", str(out), "-W", "-n",
                "--keep-going")
        if student:  # every page read again: Sphinx cannot see a change of book/_ext/student_book.py
            args += ("--all",)
        jobs.append((language, out, args))
    if len(jobs) > 1 and _all_executed():
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(len(jobs)) as pool:
            for future in [pool.submit(_jupyter_book, *args, language=language)
                           for language, _, args in jobs]:
                future.result()
    else:
        for language, _, args in jobs:
            _jupyter_book(*args, language=language)
    for language, out, _ in jobs:
        target = (STUDENT_HTML if student else BUILD / "html") / language
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(out / "_build" / "html", target)
        # the page's download button serves its notebook from _sources/: the edition's own notebook
        # (the student's book: the student edition, without the solutions)
        served_from = NOTEBOOKS_OUT / language / ("student" if student else "chapters")
        for notebook in sorted(served_from.glob("*.ipynb")):
            served = target / "_sources" / "chapters" / notebook.name
            if served.exists():
                shutil.copyfile(notebook, served)
        if student:
            withhold_sources(target)
        print(f"{LANGUAGES[language]['name']}: {target.relative_to(ROOT)}/index.html")


def withhold_sources(html: Path) -> None:
    """In a student's book, the page sources the download button serves that would show what the pages
    leave out: the instructor guide's (its rubrics) becomes the page's own note."""
    guide = html / "_sources" / "book" / "instructor_guide.md"
    if guide.exists():
        title = guide.read_text(encoding="utf-8").splitlines()[0]
        sys.path.insert(0, str(ROOT / "book" / "_ext"))
        try:
            from student_book import note_text
        finally:
            sys.path.remove(str(ROOT / "book" / "_ext"))
        language = html.name if html.name in LANGUAGES else None
        guide.write_text(f"{title}\n\n{note_text('page', language)}\n", encoding="utf-8")


# ---------------------------------------------------------------------------------------------------
# Translating: what is left, filling it in, and what a translation must keep from its English
# ---------------------------------------------------------------------------------------------------
MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+?\$", re.S)
ROLE = re.compile(r"\{([\w:-]+)\}`([^`]*)`")
CODE = re.compile(r"(?<![}`])`([^`\n]+)`(?!`)")
LINK = re.compile(r"\]\(([^)\s]+)\)")
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


def _role_target(kind: str, text: str) -> str:
    """A role's target: a glue name, or the part in <...> of "title <target>", or the whole text."""
    match = re.search(r"<([^<>]+)>\s*$", text)
    return f"{kind}:{match.group(1) if match and kind != 'glue:text' else text}"


def kept_parts(text: str) -> dict[str, list[str]]:
    """What a translation must carry over unchanged: math, roles' targets, inline code, links."""
    without_math = MATH.sub(" ", text)
    without_roles = ROLE.sub(" ", without_math)
    return {"math": sorted(MATH.findall(text)),
            "role": sorted(_role_target(*m) for m in ROLE.findall(without_math)),
            "code": sorted(CODE.findall(without_roles)),
            "link": sorted(LINK.findall(without_math)),
            "bold": [str(without_math.count("**"))]}


def glossary_headwords() -> set[str]:
    """The terms of the glossary's {glossary} block: link targets, kept in English in every edition."""
    text = (ROOT / "book" / "glossary.md").read_text(encoding="utf-8")
    block = text.split("```{glossary}", 1)[1].split("\n```", 1)[0]
    return {line.strip() for line in block.splitlines() if line.strip() and not line[0].isspace()}


def may_stay_english(docname: str, msgid: str) -> bool:
    """A message whose translation may be the English itself: a glossary headword, a reference."""
    if docname == "book/glossary":
        return msgid in glossary_headwords()
    return docname == "book/references" and re.search(r"\*[^*]+\*", msgid) is not None


def translation_problems(msgid: str, msgstr: str, may_stay: bool = False) -> list[str]:
    """Why ``msgstr`` cannot stand for ``msgid`` on the page (an empty list when it can); ``may_stay``:
    the English itself is a correct translation (see may_stay_english)."""
    if not msgstr.strip():
        return ["empty"]
    problems = []
    english, chinese = kept_parts(msgid), kept_parts(msgstr)
    for kind in english:
        if english[kind] != chinese[kind]:
            lost = sorted(set(english[kind]) - set(chinese[kind]))
            extra = sorted(set(chinese[kind]) - set(english[kind]))
            problems.append(f"{kind} differs: English has {lost or english[kind]}, "
                            f"translation has {extra or chinese[kind]}")
    prose = ROLE.sub(" ", CODE.sub(" ", MATH.sub(" ", msgid)))
    display_math = "$" not in msgid and re.search(r"\\[A-Za-z,;!]|[=^_{}]", msgid)  # a math block
    if len(LATIN_WORD.findall(prose)) >= 3 and not display_math \
            and not (may_stay and msgstr == msgid) and not CJK.search(msgstr):
        problems.append("no Chinese in the translation of an English sentence")
    return problems


def _catalogue(docname: str, language: str = SOURCE) -> Path:
    path = LOCALES / language / "LC_MESSAGES" / f"{docname}.po"
    if not path.exists():
        raise SystemExit(f"no catalogue {path.relative_to(ROOT)}: `python scripts/translations.py "
                         f"status` lists the docnames")
    return path


def status(language: str = SOURCE) -> list[tuple[str, int, int, int]]:
    """(docname, translated, untranslated, fuzzy) for every catalogue of ``language``."""
    rows = []
    base = LOCALES / language / "LC_MESSAGES"
    for path in catalogues(language):
        messages = [m for m in _read(path) if m.id]
        done = sum(bool(m.string) and not m.fuzzy for m in messages)
        fuzzy = sum(bool(m.fuzzy) for m in messages)
        rows.append((str(path.relative_to(base).with_suffix("")), done,
                     len(messages) - done - fuzzy, fuzzy))
    return rows


def todo(docname: str) -> list[dict]:
    """The messages of one zh_CN catalogue that still need a translator: untranslated or fuzzy."""
    return [{"msgid": m.id, "where": ", ".join(f"{f}:{n}" for f, n in m.locations),
             **({"fuzzy_translation": m.string} if m.fuzzy else {})}
            for m in _read(_catalogue(docname)) if m.id and (not m.string or m.fuzzy)]


def fill(docname: str, translations: dict[str, str]) -> list[str]:
    """Write ``translations`` ({msgid: msgstr}) into a zh_CN catalogue; returns what was refused."""
    path = _catalogue(docname)
    catalog = _read(path)
    refused = []
    for msgid, msgstr in translations.items():
        message = catalog.get(msgid)
        if message is None:
            refused.append(f"not in {docname}: {msgid[:70]!r}")
            continue
        problems = translation_problems(msgid, msgstr, may_stay_english(docname, msgid))
        if problems:
            refused.append(f"{msgid[:70]!r}: {'; '.join(problems)}")
            continue
        message.string = msgstr
        message.flags.discard("fuzzy")
    escape_numbered_titles(catalog)
    _write(path, catalog)
    return refused


# ---------------------------------------------------------------------------------------------------
# Notebooks: the Markdown cells translated block by block, code and metadata unchanged
# ---------------------------------------------------------------------------------------------------
def _parser():
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    extensions = {"amsmath", "dollarmath", "colon_fence", "deflist", "substitution"}
    return create_md_parser(MdParserConfig(enable_extensions=extensions), RendererHTML)


TITLED_DIRECTIVES = {"exercise", "admonition", "figure", "dropdown", "topic", "sidebar"}


def message_id(text: str) -> str:
    """The msgid Sphinx extracts for a block of Markdown (its lines joined by spaces)."""
    return text.replace("\n", " ").strip()


def translate_markdown(text: str, lookup: Callable[[str], str], parser=None) -> str:
    """``text`` with each heading, paragraph, list item, table cell and directive title translated."""
    parser = parser or _parser()
    lines = text.split("\n")
    edits: dict[int, tuple[int, list[str]]] = {}
    tokens = parser.parse(text)
    in_table = 0
    for k, token in enumerate(tokens):
        if token.type == "table_open":
            in_table += 1
        elif token.type == "table_close":
            in_table -= 1
        elif token.type == "tr_open" and token.map:
            row = [t for t in tokens[k:] if t.type in ("inline", "tr_close")]
            cells = [lookup(message_id(t.content)) if t.content.strip() else ""
                     for t in row[:next(i for i, t in enumerate(row) if t.type == "tr_close")]]
            edits[token.map[0]] = (token.map[1], ["| " + " | ".join(cells) + " |"])
        elif token.type == "inline" and token.map and not in_table:
            start, end = token.map
            first = token.content.split("\n", 1)[0]
            prefix = lines[start][:lines[start].find(first)] if first else lines[start]
            edits[start] = (end, [prefix + lookup(message_id(token.content))])
        elif token.type in ("fence", "colon_fence") and token.info.startswith("{") and token.map:
            start, end = token.map
            name, _, title = token.info.partition("}")
            title = title.strip()
            body = token.content.split("\n")
            options = []
            while body and re.match(r"^:[\w-]+:", body[0]):
                options.append(body.pop(0))
            inner = translate_markdown("\n".join(body), lookup, parser) if "".join(body).strip() else \
                "\n".join(body)
            if title and name[1:] in TITLED_DIRECTIVES:  # a title, not a label
                title = lookup(message_id(title))
            head = f"{token.markup}{name}}}" + (f" {title}" if title else "")
            close = lines[end - 1] if end - 1 > start and lines[end - 1].strip().startswith(
                token.markup[0]) else token.markup
            edits[start] = (end, [head, *options, *inner.rstrip("\n").split("\n"), close])
        elif token.type in ("math_block", "math_block_label", "amsmath") and token.map:
            # a display formula whose catalogue entry translates its words (\text{...} labels)
            table = getattr(lookup, "table", {})
            formula = token.content.strip()
            if table.get(formula, formula) != formula:
                start, end = token.map
                block = "\n".join(lines[start:end])
                if formula in block:
                    edits[start] = (end, block.replace(formula, table[formula]).split("\n"))
    for start in sorted(edits, reverse=True):
        end, new = edits[start]
        lines[start:end] = new
    return "\n".join(lines)


def translate_notebook(path: Path, lookup: Callable[[str], str]) -> dict:
    nb = json.loads(path.read_text(encoding="utf-8"))
    parser = _parser()
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            source = "".join(cell["source"])
            cell["source"] = translate_markdown(source, lookup, parser).splitlines(keepends=True)
    nb["metadata"]["language_info"] = nb["metadata"].get("language_info", {"name": "python"})
    return nb


def catalogue_lookup(language: str, docname: str, missing: list[str]) -> Callable[[str], str]:
    path = LOCALES / language / "LC_MESSAGES" / f"{docname}.po"
    table = {m.id: m.string for m in _read(path) if m.id and m.string and not m.fuzzy} if path.exists() \
        else {}

    def lookup(msgid: str) -> str:
        if msgid in table:
            return table[msgid]
        missing.append(f"{docname}: {msgid[:80]!r}")
        return msgid

    lookup.table = table  # type: ignore[attr-defined]  (display formulas look up without a miss)
    return lookup


def write_notebooks(out: Path) -> list[str]:
    """Write <out>/<lang>/chapters and <out>/<lang>/student; returns the messages with no translation."""
    problems: list[str] = []
    for language in LANGUAGES:
        chapters_out = out / language / "chapters"
        shutil.rmtree(chapters_out, ignore_errors=True)
        chapters_out.mkdir(parents=True)
        for path in sorted((ROOT / "chapters").glob("*.ipynb")):
            missing: list[str] = []
            nb = translate_notebook(path, catalogue_lookup(language, f"chapters/{path.stem}", missing))
            problems += [f"{language} {m}: no translation" for m in missing]
            text = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
            (chapters_out / path.name).write_text(text, encoding="utf-8")
        student = out / language / "student"
        shutil.rmtree(student, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "classroom", "student", "--chapters", str(chapters_out),
                        "--out", str(student), "--language", language], check=True, cwd=ROOT,
                       stdout=subprocess.DEVNULL)
    return problems


def notebooks(check_only: bool = False) -> list[str]:
    """Write translations/ (or, with ``check_only``, compare it with what would be written)."""
    if not check_only:
        return write_notebooks(NOTEBOOKS_OUT)
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        problems = write_notebooks(Path(tmp))
        fresh = {p.relative_to(tmp): p for p in Path(tmp).rglob("*") if p.is_file()}
        stored = {p.relative_to(NOTEBOOKS_OUT): p for p in NOTEBOOKS_OUT.rglob("*") if p.is_file()}
        for name in sorted(set(fresh) | set(stored)):
            if name not in stored or name not in fresh or \
                    stored[name].read_bytes() != fresh[name].read_bytes():
                problems.append(f"translations/{name}: out of step with the catalogues")
    return problems


# ---------------------------------------------------------------------------------------------------
# The exercises' own words (utils/exercises): the names of recognised mistakes and the hints, which
# utils.language shows in the edition's language
# ---------------------------------------------------------------------------------------------------
EXERCISE_TEXTS = ROOT / "utils" / "exercises" / "locale"


def exercise_texts() -> list[str]:
    """Every mistake name and hint written as a literal in utils/exercises (``hint=...``, the keys of
    ``mistakes={...}`` and their hints, a refusal's ``why=...`` and the ``sizes=(...)`` a loop refusal
    names), with utils.checks.MISTAKES; sorted."""
    import ast

    found: set[str] = set()
    for path in sorted((ROOT / "utils" / "exercises").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.keyword) and node.arg in ("hint", "why") and isinstance(
                    node.value, ast.Constant):
                found.add(node.value.value)
            if isinstance(node, ast.keyword) and node.arg == "sizes" and isinstance(node.value, ast.Tuple):
                found |= {e.value for e in node.value.elts if isinstance(e, ast.Constant)}
            if isinstance(node, ast.keyword) and node.arg == "mistakes" and isinstance(node.value, ast.Dict):
                for key, value in zip(node.value.keys, node.value.values, strict=True):
                    if isinstance(key, ast.Constant):
                        found.add(key.value)
                    if isinstance(value, ast.Tuple) and len(value.elts) > 1 and isinstance(
                            value.elts[1], ast.Constant):
                        found.add(value.elts[1].value)
    sys.path.insert(0, str(ROOT))
    from utils.checks import MISTAKES

    found |= set(MISTAKES.values())
    return sorted(t for t in found if isinstance(t, str) and t.strip())


def _texts(language: str) -> dict[str, str]:
    path = EXERCISE_TEXTS / f"{language}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _write_texts(language: str, table: dict[str, str]) -> None:
    """Write one language's texts, and only when they changed: the file is part of the package, and a
    newer file in utils/ makes every run in the book's execution cache stale (scripts/book_cache.py)."""
    EXERCISE_TEXTS.mkdir(parents=True, exist_ok=True)
    text = json.dumps(dict(sorted(table.items())), ensure_ascii=False, indent=1) + "\n"
    path = EXERCISE_TEXTS / f"{language}.json"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def texts_todo() -> list[str]:
    """The exercises' texts with no simplified translation yet."""
    have = _texts(SOURCE)
    return [t for t in exercise_texts() if not have.get(t)]


def texts_fill(table: dict[str, str]) -> list[str]:
    """Add ``table`` ({English: 简体}) to the simplified texts, refusing a translation that loses a code
    span or a number; drop texts no exercise uses any more; derive the traditional ones."""
    wanted = set(exercise_texts())
    have = {k: v for k, v in _texts(SOURCE).items() if k in wanted}
    refused = []
    for english, chinese in table.items():
        if english not in wanted:
            refused.append(f"not an exercise text: {english[:70]!r}")
            continue
        problems = translation_problems(english, chinese)
        if problems:
            refused.append(f"{english[:70]!r}: {'; '.join(problems)}")
            continue
        have[english] = chinese
    _write_texts(SOURCE, have)
    derive_texts()
    return refused


def derive_texts() -> dict[str, str]:
    """utils/exercises/locale/zh_TW.json from zh_CN.json, as the catalogues are derived."""
    import opencc

    converter = opencc.OpenCC("s2twp").convert
    table = {english: to_traditional(chinese, english, converter)
             for english, chinese in _texts(SOURCE).items()}
    _write_texts("zh_TW", table)
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["extract", "update", "derive-tw", "books", "notebooks",
                                            "status", "todo", "fill", "texts-todo", "texts-fill",
                                            "outputs-todo", "outputs-fill"])
    parser.add_argument("languages", nargs="*", default=list(LANGUAGES),
                        help="languages (books); a docname (todo); a docname and a JSON file (fill)")
    args = parser.parse_args(argv)
    if args.command == "status":
        for language in LANGUAGES:
            for docname, done, left, fuzzy in status(language):
                print(f"{language} {docname:40} {done:4} translated {left:4} untranslated {fuzzy:4} fuzzy")
    elif args.command == "todo":
        print(json.dumps(todo(args.languages[0]), ensure_ascii=False, indent=1))
    elif args.command == "fill":
        docname, source = args.languages
        refused = fill(docname, json.loads(Path(source).read_text(encoding="utf-8")))
        for line in refused:
            print(f"refused {line}")
        return 1 if refused else 0
    elif args.command == "texts-todo":
        print(json.dumps(texts_todo(), ensure_ascii=False, indent=1))
    elif args.command == "texts-fill":
        refused = texts_fill(json.loads(Path(args.languages[0]).read_text(encoding="utf-8")))
        for line in refused:
            print(f"refused {line}")
        return 1 if refused else 0
    elif args.command == "outputs-todo":
        import output_texts

        print(json.dumps(output_texts.todo(args.languages[0]), ensure_ascii=False, indent=1))
    elif args.command == "outputs-fill":
        import output_texts

        refused = output_texts.fill(json.loads(Path(args.languages[0]).read_text(encoding="utf-8")))
        for line in refused:
            print(f"refused {line}")
        return 1 if refused else 0
    elif args.command == "extract":
        extract()
    elif args.command == "update":
        update()
    elif args.command == "derive-tw":
        if changed := sync_guide():
            print(f"{GUIDE_DOC}: {changed} messages take their chapter's translation")
        for path in derive_traditional():
            print(f"wrote {path.relative_to(ROOT)}")
        derive_texts()
        import output_texts

        output_texts.derive()
    elif args.command == "books":
        books(args.languages)
    else:
        problems = notebooks()
        for problem in problems:
            print(problem)
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
