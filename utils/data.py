"""The course's data: a synthetic language pair, vocabularies, padded batches and padding masks.

The synthetic pair is an English-like *source* language and an invented *target* language with a
different word order, generated from a seed:

- source:  ``the big red cat sees my dog near the river today``        (subject verb object, SVO)
- target:  ``konola luleda sidi zedu rasozi bimo konola tuke zalo lefe la``  (subject object ... verb)
  word by word: the cat red big my dog the river near today sees

In the target, adjectives follow their noun in mirror order ("big red cat" -> "cat red big"),
prepositions become postpositions ("near the river" -> "the river near") and the verb moves to the end
of its clause. Every source word has exactly one target word, so a sentence pair has the same length and
its word alignment is a permutation: ``pair.alignment[j]`` is the source position of target word j.
Clauses joined by "and" make long sentences, long enough to show the bottleneck of chapter 1.

Mask contract (the whole course): a mask is a ``torch.bool`` tensor in which **True means "may attend /
is a real token"** and False means "masked out", the convention of
``torch.nn.functional.scaled_dot_product_attention``. ``padding_mask`` returns (B, T) with True at real
tokens.
"""

from __future__ import annotations

import random
from bisect import bisect
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import torch

# ---------------------------------------------------------------------------------------------------
# The grammar and the dictionary
# ---------------------------------------------------------------------------------------------------
DETERMINERS = ["the", "this", "my", "every"]
ADJECTIVES = ["big", "small", "red", "old", "young", "happy", "quiet", "green"]
NOUNS = ["cat", "dog", "bird", "child", "teacher", "farmer", "house", "river", "tree", "book",
         "apple", "garden"]
VERBS = ["sees", "likes", "finds", "follows", "paints", "carries", "watches", "helps"]
PREPOSITIONS = ["near", "under", "behind", "with"]
ADVERBS = ["today", "often", "again", "slowly"]
CONJUNCTION = "and"
SOURCE_WORDS = DETERMINERS + ADJECTIVES + NOUNS + VERBS + PREPOSITIONS + ADVERBS + [CONJUNCTION]


def _invent_target_words(n: int) -> list[str]:
    """Invent ``n`` distinct pronounceable words from consonant-vowel syllables (fixed, seedless)."""
    consonants, vowels = "bdfgklmnprstvz", "aeiou"
    syllables = [c + v for c in consonants for v in vowels]
    rng = random.Random(2024)  # fixed: the dictionary is part of the language, not of a data seed
    words: list[str] = []
    while len(words) < n:
        word = "".join(rng.sample(syllables, rng.choice([1, 2, 2, 3])))
        if word not in words:
            words.append(word)
    return words


DICTIONARY: dict[str, str] = dict(zip(SOURCE_WORDS, _invent_target_words(len(SOURCE_WORDS)),
                                      strict=True))


@dataclass(frozen=True)
class Pair:
    """One sentence pair; ``alignment[j]`` is the source position that target position j translates."""

    src: tuple[str, ...]
    tgt: tuple[str, ...]
    alignment: tuple[int, ...]


# rng.choices([0, 1, 2], weights=[0.5, 0.3, 0.2]) draws one random() and bisects these running sums;
# done by hand it draws the same numbers three times faster.
_ADJECTIVE_COUNT_CUMULATIVE = (0.5, 0.8, 1.0)


def _noun_phrase(rng: random.Random, start: int) -> tuple[list[str], list[int]]:
    """Source words of 'det adj* noun' and the target order as source positions (det noun adj-mirror)."""
    n_adj = bisect(_ADJECTIVE_COUNT_CUMULATIVE, rng.random())  # 0, 1, 2 with weights .5, .3, .2
    words = [rng.choice(DETERMINERS), *rng.sample(ADJECTIVES, n_adj), rng.choice(NOUNS)]
    pos = list(range(start, start + len(words)))
    order = [pos[0], pos[-1], *reversed(pos[1:-1])]
    return words, order


def _clause(rng: random.Random, start: int) -> tuple[list[str], list[int]]:
    """Source words of one clause and the target order as source positions."""
    words: list[str] = []
    subj, subj_order = _noun_phrase(rng, start)
    words += subj
    verb_pos = start + len(words)
    words.append(rng.choice(VERBS))
    obj, obj_order = _noun_phrase(rng, start + len(words))
    words += obj
    order = subj_order + obj_order
    if rng.random() < 0.4:  # prepositional phrase -> postposition
        prep_pos = start + len(words)
        words.append(rng.choice(PREPOSITIONS))
        np_words, np_order = _noun_phrase(rng, start + len(words))
        words += np_words
        order += np_order + [prep_pos]
    if rng.random() < 0.3:
        order.append(start + len(words))
        words.append(rng.choice(ADVERBS))
    order.append(verb_pos)  # the verb closes the clause in the target
    return words, order


def sample_pair(rng: random.Random, max_clauses: int = 2) -> Pair:
    """Draw one sentence pair with 1..``max_clauses`` clauses joined by 'and'."""
    if max_clauses < 1:
        raise ValueError(f"max_clauses must be at least 1, got {max_clauses}")
    n_clauses = rng.randint(1, max_clauses)
    words: list[str] = []
    order: list[int] = []
    for c in range(n_clauses):
        if c > 0:
            order.append(len(words))
            words.append(CONJUNCTION)
        clause_words, clause_order = _clause(rng, len(words))
        words += clause_words
        order += clause_order
    tgt = tuple(DICTIONARY[words[i]] for i in order)
    return Pair(src=tuple(words), tgt=tgt, alignment=tuple(order))


def make_pairs(n: int, seed: int = 0, max_clauses: int = 2) -> list[Pair]:
    """Generate ``n`` sentence pairs deterministically from ``seed`` (20,000 in about a CPU second)."""
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n}")
    rng = random.Random(seed)
    return [sample_pair(rng, max_clauses) for _ in range(n)]


# ---------------------------------------------------------------------------------------------------
# Vocabularies
# ---------------------------------------------------------------------------------------------------
class Vocab:
    """A word <-> id mapping with the special tokens ``<pad>``=0, ``<bos>``=1, ``<eos>``=2, ``<unk>``=3."""

    PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
    SPECIALS = (PAD, BOS, EOS, UNK)

    def __init__(self, words: Iterable[str]):
        self.itos: list[str] = list(self.SPECIALS)
        for word in sorted(set(words) - set(self.SPECIALS)):
            self.itos.append(word)
        self.stoi: dict[str, int] = {w: i for i, w in enumerate(self.itos)}
        self.pad_id, self.bos_id, self.eos_id, self.unk_id = 0, 1, 2, 3

    @classmethod
    def from_sentences(cls, sentences: Iterable[Sequence[str]]) -> Vocab:
        """Build a vocabulary of every word that appears in ``sentences``."""
        return cls(word for sentence in sentences for word in sentence)

    def __len__(self) -> int:
        return len(self.itos)

    def __repr__(self) -> str:
        return f"Vocab({len(self)} tokens: {self.itos[:8]}...)"

    def encode(self, words: Sequence[str], bos: bool = False, eos: bool = False) -> list[int]:
        """Word list -> id list, unknown words -> ``<unk>``; optionally wrapped in ``<bos>``/``<eos>``."""
        if isinstance(words, str):
            raise TypeError("encode expects a list of words, got a string; use sentence.split()")
        ids = [self.stoi.get(w, self.unk_id) for w in words]
        return ([self.bos_id] if bos else []) + ids + ([self.eos_id] if eos else [])

    def decode(self, ids: Iterable[int] | torch.Tensor, strip: bool = True) -> list[str]:
        """Id list -> word list; with ``strip`` stop at ``<eos>`` and drop ``<pad>`` and ``<bos>``."""
        if isinstance(ids, torch.Tensor):
            if ids.dim() != 1:
                raise ValueError(f"decode expects a 1-D sequence of ids, got shape {tuple(ids.shape)}")
            ids = ids.tolist()
        words = []
        for i in ids:
            if not 0 <= i < len(self):
                raise ValueError(f"id {i} is outside this vocabulary of {len(self)} tokens")
            if strip and i == self.eos_id:
                break
            if strip and i in (self.pad_id, self.bos_id):
                continue
            words.append(self.itos[i])
        return words


# ---------------------------------------------------------------------------------------------------
# Batches and masks
# ---------------------------------------------------------------------------------------------------
def pad_sequences(seqs: Sequence[Sequence[int]], pad_id: int = 0) -> torch.Tensor:
    """Stack id lists of different lengths into a (B, T) LongTensor, right-padded with ``pad_id``."""
    if len(seqs) == 0:
        raise ValueError("pad_sequences got no sequences")
    longest = max(len(s) for s in seqs)
    out = torch.full((len(seqs), longest), pad_id, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = torch.as_tensor(list(s), dtype=torch.long)
    return out


def check_token_ids(ids: torch.Tensor, name: str = "ids") -> None:
    """Raise a clear ValueError unless ``ids`` is a (batch, seq_len) tensor of token ids, dtype torch.long."""
    expected = f"{name} must be a (batch, seq_len) LongTensor of token ids (dtype torch.long)"
    if not isinstance(ids, torch.Tensor):
        raise ValueError(f"{expected}, got a {type(ids).__name__}; build it with torch.tensor([[...]])")
    if ids.dim() != 2:
        raise ValueError(f"{expected}, got shape {tuple(ids.shape)}")
    if ids.dtype != torch.long:  # floats from arithmetic, or int32 from numpy: embeddings want int64
        raise ValueError(f"{expected}, got dtype {ids.dtype} (shape {tuple(ids.shape)}); token ids are "
                         f"integer indices into the embedding table: convert with `{name}.long()`")


def padding_mask(ids: torch.Tensor, pad_id: int = 0) -> torch.Tensor:
    """(B, T) bool mask, True at real tokens and False at padding (the course's mask contract)."""
    if ids.dim() != 2:
        raise ValueError(f"ids must be (batch, seq_len), got shape {tuple(ids.shape)}")
    return ids != pad_id


@dataclass
class Batch:
    """A padded batch of sentence pairs for teacher forcing.

    ``tgt_in`` = ``<bos>`` y_1 .. y_n (decoder input), ``tgt_out`` = y_1 .. y_n ``<eos>`` (labels),
    both padded to the same length; the masks are True at real tokens, and ``tgt_mask`` is True exactly
    where ``tgt_out`` carries a label (``tgt_out != pad_id``).
    """

    src: torch.Tensor  # (B, S)
    tgt_in: torch.Tensor  # (B, T)
    tgt_out: torch.Tensor  # (B, T)
    src_mask: torch.Tensor  # (B, S) bool
    tgt_mask: torch.Tensor  # (B, T) bool
    src_lengths: torch.Tensor  # (B,)

    def to(self, device: torch.device | str) -> Batch:
        """Move every tensor of the batch to ``device``."""
        return Batch(*(getattr(self, f).to(device) for f in self.__dataclass_fields__))

    def __len__(self) -> int:
        return self.src.shape[0]


def make_batch(pairs: Sequence[Pair], src_vocab: Vocab, tgt_vocab: Vocab) -> Batch:
    """Encode and pad ``pairs`` into one ``Batch``."""
    src = pad_sequences([src_vocab.encode(p.src) for p in pairs], src_vocab.pad_id)
    tgt_in = pad_sequences([tgt_vocab.encode(p.tgt, bos=True) for p in pairs], tgt_vocab.pad_id)
    tgt_out = pad_sequences([tgt_vocab.encode(p.tgt, eos=True) for p in pairs], tgt_vocab.pad_id)
    return Batch(src=src, tgt_in=tgt_in, tgt_out=tgt_out,
                 src_mask=padding_mask(src, src_vocab.pad_id),
                 tgt_mask=padding_mask(tgt_in, tgt_vocab.pad_id),
                 src_lengths=torch.tensor([len(p.src) for p in pairs]))


def batches(pairs: Sequence[Pair], src_vocab: Vocab, tgt_vocab: Vocab, batch_size: int = 64,
            shuffle: bool = True, seed: int = 0) -> Iterator[Batch]:
    """Yield batches of ``batch_size`` pairs, shuffled with ``seed`` (the same order for the same seed)."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    order = list(range(len(pairs)))
    if shuffle:
        random.Random(seed).shuffle(order)
    for i in range(0, len(order), batch_size):
        yield make_batch([pairs[j] for j in order[i:i + batch_size]], src_vocab, tgt_vocab)


@dataclass
class TranslationData:
    """Train/validation/test splits of the synthetic pair with their vocabularies."""

    train: list[Pair]
    valid: list[Pair]
    test: list[Pair]
    src_vocab: Vocab
    tgt_vocab: Vocab


def load_synthetic(n_train: int = 20_000, n_valid: int = 1_000, n_test: int = 1_000, seed: int = 0,
                   max_clauses: int = 2) -> TranslationData:
    """Generate the synthetic splits (validation and test never repeat a training source sentence)."""
    pairs = make_pairs(n_train + 3 * (n_valid + n_test), seed=seed, max_clauses=max_clauses)
    train = pairs[:n_train]
    seen = {p.src for p in train}
    held_out: list[Pair] = []
    for p in pairs[n_train:]:
        if p.src not in seen:
            held_out.append(p)
            seen.add(p.src)
    if len(held_out) < n_valid + n_test:
        raise RuntimeError("could not find enough unseen sentences; lower n_valid/n_test")
    src_vocab = Vocab(SOURCE_WORDS)
    tgt_vocab = Vocab(DICTIONARY.values())
    return TranslationData(train, held_out[:n_valid], held_out[n_valid:n_valid + n_test],
                           src_vocab, tgt_vocab)
