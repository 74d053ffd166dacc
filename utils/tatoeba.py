"""A real translator's data: Tatoeba English-Mandarin sentence pairs, shipped with the course.

The sentences come from the Tatoeba project (https://tatoeba.org, CC-BY 2.0 FR), as packaged by
manythings.org (https://www.manythings.org/anki/) in the tab-separated file ``cmn.txt``: English,
Chinese, and the attribution of both sentences, one pair per line. The course ships that file
compressed in ``utils/corpora/cmn.txt.xz`` (the data card is ``utils/corpora/README.md``), so nothing
is downloaded; the loader checks the SHA-256 of the decompressed text and keeps every attribution.

    from utils.tatoeba import load_cmn
    data = load_cmn()                                   # about five seconds, all in memory
    data.train[0].src, data.train[0].tgt                # BPE symbols of English, Chinese characters
    data.references("test")[0]                          # every Chinese translation of a test sentence

The result is a ``utils.data.TranslationData``, so ``make_batch``, ``batches``, ``train_translation``
and ``evaluate_translation`` take it unchanged (``pair.alignment`` is ``()``: unknown for real text).

The split cannot leak: lines are grouped by their English sentence (the exact string), the distinct
English sentences are shuffled with ``random.Random(seed)`` (seed 0), and the first 1,500 go to test,
the next 1,000 to validation, the rest to training, each with all of its Chinese translations. In
training every line is one pair; in validation and test each English sentence is one pair whose
``tgt`` is its first translation in the file, and ``references(split)`` gives all of them for BLEU.
No test English sentence is in training even after lowercasing; a Chinese sentence can be (a reference
of 260 of the 1,500 test sentences is also a training target: several English sentences share one
translation).

Tokenisation. English is lowercased: Chinese has no case to predict, "He"/"he" would otherwise split
the counts of a small corpus, and names stay distinct words ("tom", "boston"); the cost is a few
clashes such as "US"/"us" and "May"/"may". It is then split into words and punctuation marks by
``WORD_PATTERN``, and the words into subwords by the course's BPE (``utils.subwords``, chapter 9).
Chinese is split into characters: no word segmenter is needed (Chinese writes no spaces, and where to
cut words is itself ambiguous), the vocabulary stays small (about 2,400 characters seen at least twice
in training cover 99.6% of the held-out text), and sacrebleu's ``zh`` tokenizer, with which
``utils.bleu`` scores BLEU, also cuts Chinese into single characters. Vocabularies come from the
training split only; anything else becomes ``<unk>``.
"""

from __future__ import annotations

import hashlib
import lzma
import random
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Literal

from utils.corpus import CorpusUnavailable
from utils.data import Pair, TranslationData, Vocab
from utils.subwords import BPE, END, UNK, _merge, learn_bpe

CMN_PATH = Path(__file__).parent / "corpora" / "cmn.txt.xz"
CMN_SHA256 = "aa264a2447b26ab7c9d413f8321f9e2a779fd134b5118306b6e26a3499b3926e"  # of the decompressed text
CMN_BYTES = 4_151_383
RESTORE = "Restore the course's copy with `git checkout utils/corpora/cmn.txt.xz` (or reinstall the package)."

# Words with inner apostrophes or hyphens (don't, eighty-one, 1880's, boys'), numbers with separators
# (10,000  7:45), dotted abbreviations (p.m.), "no.3", "c++"; every other non-space character alone.
WORD_PATTERN = re.compile(r"(?:[a-z]\.){2,}|[a-z]+\.\d+|\d+(?:[.,:]\d+)+|\w+(?:['-]\w+)*(?:\+\+|'(?!\w))?"
                          r"|[^\w\s]")
NO_SPACE_BEFORE = frozenset(".,!?;:%)]}")
NO_SPACE_AFTER = frozenset("([{$")
QUOTES = frozenset("\"'")
ZH_UNK = "□"  # how detokenize_zh writes <unk>: one symbol, so BLEU counts it as one wrong character
_NOT_WRITTEN = frozenset({Vocab.PAD, Vocab.BOS, Vocab.EOS})
Split = Literal["train", "valid", "test"]


@dataclass(frozen=True)
class Entry:
    """One English sentence of the corpus with every Chinese translation of it, in file order."""

    english: str
    chinese: tuple[str, ...]
    attributions: tuple[str, ...]  # "CC-BY 2.0 (France) Attribution: tatoeba.org #... & #..." per line


# ---------------------------------------------------------------------------------------------------
# Reading and checking the file
# ---------------------------------------------------------------------------------------------------
def read_cmn_text(path: str | Path | None = None) -> str:
    """The decompressed text of ``cmn.txt.xz`` (default: the course's copy), after checking its SHA-256;
    ``utils.corpus.CorpusUnavailable`` if the file is missing, unreadable or different."""
    path = Path(path) if path is not None else CMN_PATH
    if not path.is_file():
        raise CorpusUnavailable(f"{path} does not exist: expected the Tatoeba English-Mandarin corpus "
                                f"(cmn.txt compressed with xz, shipped with the course). {RESTORE}")
    try:
        raw = lzma.decompress(path.read_bytes())
    except lzma.LZMAError as err:
        raise CorpusUnavailable(f"{path} is not a readable xz file ({err}): expected cmn.txt compressed "
                                f"with xz, {CMN_BYTES:,} bytes once decompressed. {RESTORE}") from err
    found = hashlib.sha256(raw).hexdigest()
    if found != CMN_SHA256:
        raise CorpusUnavailable(f"{path} is damaged or a different version: its decompressed text has "
                                f"SHA-256 {found} ({len(raw):,} bytes), expected {CMN_SHA256} ({CMN_BYTES:,} "
                                f"bytes). {RESTORE}")
    return raw.decode("utf-8")


def parse_cmn(text: str) -> list[tuple[str, str, str]]:
    """(English, Chinese, attribution) per line of ``cmn.txt``; a BOM is dropped, blank lines at the end
    are allowed, any other line without exactly three tab-separated fields is a ValueError."""
    lines = text.removeprefix("\ufeff").rstrip("\n").split("\n")
    rows = []
    for number, line in enumerate(lines, start=1):
        fields = line.split("\t")
        if len(fields) != 3 or not all(f.strip() for f in fields):
            raise ValueError(f"line {number} of cmn.txt should hold three non-empty fields, "
                             f"'English<TAB>Chinese<TAB>attribution'; got {len(fields)} field(s): "
                             f"{line[:80]!r}")
        rows.append((fields[0], fields[1], fields[2]))
    return rows


def group_by_english(rows: Sequence[tuple[str, str, str]]) -> list[Entry]:
    """One Entry per distinct English sentence (exact string), in order of first appearance."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for english, chinese, attribution in rows:
        groups.setdefault(english, []).append((chinese, attribution))
    return [Entry(en, tuple(c for c, _ in g), tuple(a for _, a in g)) for en, g in groups.items()]


def split_entries(entries: Sequence[Entry], n_valid: int = 1_000, n_test: int = 1_500,
                  seed: int = 0) -> tuple[list[Entry], list[Entry], list[Entry]]:
    """(train, valid, test): shuffle the entries with ``random.Random(seed)``, test first, then valid."""
    if n_valid < 1 or n_test < 1 or n_valid + n_test >= len(entries):
        raise ValueError(f"need n_valid >= 1, n_test >= 1 and n_valid + n_test < {len(entries)} (the "
                         f"number of English sentences); got n_valid={n_valid}, n_test={n_test}")
    order = list(entries)
    random.Random(seed).shuffle(order)
    return order[n_test + n_valid:], order[n_test:n_test + n_valid], order[:n_test]


# ---------------------------------------------------------------------------------------------------
# Tokenisation: English words then BPE symbols; Chinese characters
# ---------------------------------------------------------------------------------------------------
def normalize_en(sentence: str) -> str:
    """Lowercase, curly quotes made straight, runs of white space made one space."""
    table = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})
    return " ".join(sentence.translate(table).lower().split())


def english_words(sentence: str) -> list[str]:
    """The words and punctuation marks of ``normalize_en(sentence)`` (``WORD_PATTERN``)."""
    return WORD_PATTERN.findall(normalize_en(sentence))


def join_english(words: Sequence[str]) -> str:
    """Words back into text: a space between words, none before . , ! ? or after ( $; an opening
    quote hugs the word after it, a closing quote the word before it (straight quotes alternate)."""
    text, open_quotes, after_opening = "", set[str](), False
    for word in words:
        glue = not text or word in NO_SPACE_BEFORE or text[-1] in NO_SPACE_AFTER or after_opening
        after_opening = False
        if word in QUOTES and word in open_quotes:  # closing
            glue = True
            open_quotes.discard(word)
        elif word in QUOTES:  # opening
            open_quotes.add(word)
            after_opening = True
        text += word if glue else " " + word
    return text


class EnglishTokenizer:
    """English text <-> BPE symbols with a learned ``utils.subwords.BPE`` (words cached in memory)."""

    def __init__(self, bpe: BPE):
        self.bpe = bpe
        self._ranks: dict[tuple[str, str], list[int]] = {}
        for rank, pair in enumerate(bpe.merges):
            self._ranks.setdefault(pair, []).append(rank)
        self._cache: dict[str, tuple[str, ...]] = {}

    def encode_word(self, word: str) -> tuple[str, ...]:
        """Exactly ``bpe.encode_word(word)``, faster: instead of replaying every merge in order, jump to
        the earliest later merge whose pair is present (the ones skipped would change nothing)."""
        if not word or " " in word:
            raise ValueError(f"encode_word takes one non-empty word without spaces, got {word!r}")
        if word not in self._cache:
            chars = [c if c in self.bpe.alphabet else UNK for c in word]
            symbols, last = (*chars[:-1], chars[-1] + END), -1
            while len(symbols) > 1:
                later = [ranks[i] for p in pairwise(symbols) if (ranks := self._ranks.get(p))
                         and (i := bisect_right(ranks, last)) < len(ranks)]
                if not later:
                    break
                last = min(later)
                symbols = _merge(symbols, self.bpe.merges[last])
            self._cache[word] = symbols
        return self._cache[word]

    def tokenize(self, sentence: str) -> tuple[str, ...]:
        """A sentence as BPE symbols: normalised, split into words, each word encoded."""
        return tuple(s for w in english_words(sentence) for s in self.encode_word(w))

    def detokenize(self, symbols: Sequence[str]) -> str:
        """Symbols back into text: pieces joined into words at each ``</w>``, words by ``join_english``."""
        text = "".join(UNK + END if s == UNK else s for s in symbols if s not in _NOT_WRITTEN)
        return join_english([w for w in text.split(END) if w])


def learn_english_bpe(sentences: Sequence[str], num_merges: int = 1_000, n_words: int = 1_000) -> BPE:
    """``learn_bpe`` on the ``n_words`` most frequent words of ``sentences`` (with their counts), plus
    every character of them once as a one-letter word so that the alphabet is complete (a one-symbol
    word has no pair, so it changes no merge). ``learn_bpe`` costs time per merge in proportion to the
    number of distinct words: 1,000 merges on all ~7,000 training words take over a minute, on the 1,000
    most frequent (which cover 90% of the running words) about three seconds."""
    counts = Counter(w for s in sentences for w in english_words(s))
    frequent = [[word] * count for word, count in counts.most_common(n_words)]
    alphabet = sorted({c for word in counts for c in word})
    return learn_bpe(frequent + [[c] for c in alphabet], num_merges)


def tokenize_zh(sentence: str) -> tuple[str, ...]:
    """Chinese as characters; white space and zero-width spaces are dropped (Chinese writes none)."""
    return tuple(c for c in sentence if not c.isspace() and c not in "\u200b\ufeff")


def detokenize_zh(chars: Sequence[str]) -> str:
    """Characters joined with no space; ``<unk>`` written as ``ZH_UNK``, <pad>/<bos>/<eos> dropped."""
    return "".join(ZH_UNK if c == Vocab.UNK else c for c in chars if c not in _NOT_WRITTEN)


def normalize_zh(sentence: str) -> str:
    """The text ``detokenize_zh(tokenize_zh(sentence))`` gives back: ``sentence`` without white space."""
    return "".join(tokenize_zh(sentence))


# ---------------------------------------------------------------------------------------------------
# The data set
# ---------------------------------------------------------------------------------------------------
@dataclass
class TatoebaData(TranslationData):
    """The splits as ``Pair``s (what batches are made of), the entries behind them, and the tokenizer."""

    train_entries: list[Entry]
    valid_entries: list[Entry]
    test_entries: list[Entry]
    english: EnglishTokenizer

    def entries(self, split: Split) -> list[Entry]:
        """The English sentences of one split with all their translations."""
        if split not in ("train", "valid", "test"):
            raise ValueError(f"split must be 'train', 'valid' or 'test', got {split!r}")
        return {"train": self.train_entries, "valid": self.valid_entries, "test": self.test_entries}[split]

    def references(self, split: Split) -> list[list[str]]:
        """For each English sentence of ``split``, every Chinese translation (normalised) for BLEU;
        in validation and test, in the order of ``self.valid`` / ``self.test``."""
        return [[normalize_zh(c) for c in e.chinese] for e in self.entries(split)]


def load_cmn(path: str | Path | None = None, *, n_valid: int = 1_000, n_test: int = 1_500, seed: int = 0,
             num_merges: int = 1_000, bpe_words: int = 1_000, zh_min_freq: int = 2) -> TatoebaData:
    """English -> Chinese splits of the shipped Tatoeba corpus, with vocabularies of the training split.

    ``num_merges`` BPE merges are learned on the ``bpe_words`` most frequent training words (about
    1,050 English symbols; 3.4 s on one busy CPU core, 1,500 of each take 8 s); the English vocabulary
    is every symbol of the training English (BPE already splits rare words into known pieces). Chinese
    characters seen fewer than ``zh_min_freq`` times in training become ``<unk>``: with 2, about 2,400
    characters stay and 0.35% of reference characters are unknown (with 1: 2,800 and 0.15%)."""
    if zh_min_freq < 1:
        raise ValueError(f"zh_min_freq must be at least 1, got {zh_min_freq}")
    entries = group_by_english(parse_cmn(read_cmn_text(path)))
    train_entries, valid_entries, test_entries = split_entries(entries, n_valid, n_test, seed)
    english = EnglishTokenizer(learn_english_bpe([e.english for e in train_entries], num_merges, bpe_words))
    train = [Pair(english.tokenize(e.english), tokenize_zh(c), ()) for e in train_entries for c in e.chinese]
    src_vocab = Vocab(s for p in train for s in p.src)
    tgt_counts = Counter(c for p in train for c in p.tgt)
    tgt_vocab = Vocab(c for c, n in tgt_counts.items() if n >= zh_min_freq)

    def held_out(split: list[Entry]) -> list[Pair]:
        return [Pair(english.tokenize(e.english), tokenize_zh(e.chinese[0]), ()) for e in split]

    return TatoebaData(train, held_out(valid_entries), held_out(test_entries), src_vocab, tgt_vocab,
                       train_entries, valid_entries, test_entries, english)


def vocabulary_report(data: TatoebaData, show: bool = True) -> dict[str, float]:
    """Vocabulary sizes and the share of validation and test tokens that become ``<unk>``, per side
    (Chinese: over every reference); printed when ``show``."""
    report: dict[str, float] = {"english vocabulary": len(data.src_vocab),
                                "chinese vocabulary": len(data.tgt_vocab)}
    for split in ("valid", "test"):
        entries = data.entries(split)
        src = [s for e in entries for s in data.english.tokenize(e.english)]
        tgt = [c for e in entries for zh in e.chinese for c in tokenize_zh(zh)]
        report[f"english unknown rate, {split}"] = sum(s not in data.src_vocab.stoi for s in src) / len(src)
        report[f"chinese unknown rate, {split}"] = sum(c not in data.tgt_vocab.stoi for c in tgt) / len(tgt)
    if show:
        for name, value in report.items():
            print(f"{name:>30}: {value:,}" if value >= 1 else f"{name:>30}: {value:.2%}")
    return report
