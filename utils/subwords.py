"""Subword tokenisation by byte-pair encoding, learned on the course's own sentences (chapter 9).

Byte-pair encoding (BPE; Gage, 1994, for compression; Sennrich et al., 2016, for translation) starts
from single characters and repeatedly merges the most frequent pair of adjacent symbols into one new
symbol. Each word of the training text starts as its characters plus an end-of-word marker ``</w>``,
so that a symbol at the end of a word (``s</w>``) differs from the same letters inside one. After
``k`` merges the symbol inventory has grown by ``k``: frequent words become one symbol each, rare words
stay split into pieces, and a word never seen in training is still written with known pieces (only a
character never seen at all becomes ``<unk>``).

    bpe = learn_bpe(sentences, num_merges=60)   # sentences: lists of words
    bpe.encode(["the", "cat"])                  # ['the</w>', 'cat</w>'] once both are merged whole
    bpe.decode(bpe.encode(words)) == words      # for words made of known characters

Ties between equally frequent pairs are broken by the pair itself (the smallest in string order), so
the same text always gives the same merges.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

END = "</w>"  # the end-of-word marker: the last symbol of every word ends with it
UNK = "<unk>"  # a character that the training text never contained


def _merge(symbols: tuple[str, ...], pair: tuple[str, str]) -> tuple[str, ...]:
    """``symbols`` with every adjacent occurrence of ``pair`` (left to right) joined into one symbol."""
    out, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
            out.append(symbols[i] + symbols[i + 1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return tuple(out)


def _check_words(words: object, where: str) -> list[str]:
    """The words of one sentence as a list of non-empty strings; a clear error otherwise."""
    if isinstance(words, str):
        raise TypeError(f"{where} takes a sentence as a list of words, e.g. ['the', 'cat']; got the "
                        f"string {words[:40]!r} (split it first: sentence.split())")
    words = list(words)  # type: ignore[call-overload]
    bad = [w for w in words if not isinstance(w, str) or not w or w != w.strip() or " " in w]
    if bad:
        raise ValueError(f"{where}: every word must be a non-empty string without spaces; got {bad[:3]}")
    return words


@dataclass(frozen=True)
class BPE:
    """A learned byte-pair encoding: the characters of the training text and the merges, in order."""

    alphabet: frozenset[str]
    merges: tuple[tuple[str, str], ...]

    @property
    def symbols(self) -> list[str]:
        """Every symbol the encoding can produce: the characters, each also with ``</w>`` (a word's
        last character), and one new symbol per merge."""
        chars = sorted(self.alphabet)
        return [UNK, UNK + END, *chars, *(c + END for c in chars), *(a + b for a, b in self.merges)]

    def encode_word(self, word: str) -> list[str]:
        """One word as symbols: its characters (unknown ones as ``<unk>``) and ``</w>``, then every merge
        replayed in the order it was learned."""
        chars = [c if c in self.alphabet else UNK for c in word]
        symbols = (*chars[:-1], chars[-1] + END)
        for pair in self.merges:
            if len(symbols) == 1:
                break
            symbols = _merge(symbols, pair)
        return list(symbols)

    def encode(self, words: Sequence[str]) -> list[str]:
        """A sentence (a list of words) as one list of symbols."""
        return [s for w in _check_words(words, "encode") for s in self.encode_word(w)]

    def decode(self, symbols: Sequence[str]) -> list[str]:
        """The words back: symbols are concatenated and a word ends at each ``</w>``."""
        text = "".join(symbols)
        if text and not text.endswith(END):
            raise ValueError(f"decode: the last symbol must end a word with {END!r}; got {symbols[-1]!r}")
        return text.split(END)[:-1] if text else []


def learn_bpe(sentences: Iterable[Sequence[str]], num_merges: int) -> BPE:
    """Learn ``num_merges`` merges from ``sentences`` (each a list of words); stops early when no
    word has two symbols left to merge."""
    if isinstance(num_merges, bool) or not isinstance(num_merges, int) or num_merges < 0:
        raise ValueError(f"num_merges must be a non-negative int, got {num_merges!r}")
    counts = Counter(w for s in sentences for w in _check_words(s, "learn_bpe"))
    if not counts:
        raise ValueError("learn_bpe got no words: pass a list of sentences, each a list of words")
    split = {w: (*w[:-1], w[-1] + END) for w in counts}
    merges: list[tuple[str, str]] = []
    for _ in range(num_merges):
        pairs: Counter[tuple[str, str]] = Counter()
        for word, symbols in split.items():
            for pair in pairwise(symbols):
                pairs[pair] += counts[word]
        if not pairs:
            break
        best = min(pairs, key=lambda pair: (-pairs[pair], pair))  # most frequent, then string order
        merges.append(best)
        split = {w: _merge(symbols, best) for w, symbols in split.items()}
    return BPE(frozenset(c for w in counts for c in w), tuple(merges))
