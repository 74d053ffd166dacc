"""A tiny BERT: masked-language-model pre-training on the course's sentences, then a classifier (chapter 12).

Shape legend: B batch, T tokens, L layers, H heads, C = d_model, V vocabulary size, K classes.

BERT (Devlin et al., 2019) is the encoder of chapter 7 with no decoder: every position attends to every
other, left and right. It cannot be trained to predict the next word (it would see it), so it is
trained to fill in words hidden from it. About 15% of the real tokens of each sentence are *chosen*;
a chosen token is replaced by ``<mask>`` 80% of the time, by a random word 10% of the time and left as
it is 10% of the time; the loss is the cross-entropy of the model's guess at the chosen positions only
(``IGNORE`` elsewhere). A sentence starts with ``<cls>``, whose final vector a downstream classifier
reads.

The downstream task here is the course's small version of CoLA (Warstadt et al., 2019), a task BERT
was evaluated on: is a sentence grammatical, or were two neighbouring words swapped?
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from utils.data import Vocab, check_token_ids, pad_sequences
from utils.gpt import is_grammatical
from utils.positional import LearnedPositionalEncoding
from utils.transformer import Encoder, check_sequence_ids, check_sizes

CLS, MASK = "<cls>", "<mask>"
IGNORE = -100  # the target of a position the loss skips (F.cross_entropy's default ignore_index)


def bert_vocab(sentences: Sequence[Sequence[str]]) -> Vocab:
    """A ``Vocab`` of every word in ``sentences`` plus ``<cls>`` and ``<mask>``."""
    return Vocab([w for s in sentences for w in s] + [CLS, MASK])


def word_ids(vocab: Vocab) -> torch.Tensor:
    """The ids of real words (no special token): what a random replacement draws from."""
    return torch.tensor([i for i, w in enumerate(vocab.itos) if not w.startswith("<")])


def encode_sentences(sentences: Sequence[Sequence[str]], vocab: Vocab) -> torch.Tensor:
    """Sentences -> (B, T) ids ``<cls> w_1 .. w_n``, right-padded with ``<pad>``."""
    if MASK not in vocab.stoi or CLS not in vocab.stoi:
        raise ValueError("this vocabulary has no <cls> or <mask> token: build it with bert_vocab")
    return pad_sequences([[vocab.stoi[CLS]] + vocab.encode(s) for s in sentences], vocab.pad_id)


@dataclass(frozen=True)
class BERTConfig:
    """Sizes of the tiny BERT; ``pad_id``, ``cls_id`` and ``mask_id`` come from ``bert_vocab``."""

    vocab_size: int
    cls_id: int
    mask_id: int
    d_model: int = 64
    num_heads: int = 4
    num_layers: int = 2
    d_ff: int = 128
    dropout: float = 0.1
    max_len: int = 32
    pad_id: int = 0

    def __post_init__(self) -> None:
        check_sizes(self, ("vocab_size", "d_model", "num_heads", "num_layers", "d_ff", "max_len"))
        for name in ("pad_id", "cls_id", "mask_id"):
            if not 0 <= getattr(self, name) < self.vocab_size:
                raise ValueError(f"{name}={getattr(self, name)} is outside the vocabulary of "
                                 f"{self.vocab_size} tokens")

    @classmethod
    def for_vocab(cls, vocab: Vocab, **sizes: object) -> BERTConfig:
        """The configuration whose special ids are those of ``vocab`` (built by ``bert_vocab``)."""
        if MASK not in vocab.stoi or CLS not in vocab.stoi:
            raise ValueError("this vocabulary has no <cls> or <mask> token: build it with bert_vocab")
        return cls(len(vocab), vocab.stoi[CLS], vocab.stoi[MASK], pad_id=vocab.pad_id, **sizes)


class TinyBERT(nn.Module):
    """Token embedding + learned positions, an L-layer post-norm ``Encoder`` (no mask but padding),
    and a masked-language-model head: the vector of every position -> logits over the vocabulary."""

    def __init__(self, config: BERTConfig):
        super().__init__()
        if not isinstance(config, BERTConfig):
            raise TypeError(f"TinyBERT takes a BERTConfig, got {type(config).__name__}")
        c = self.config = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.positional = LearnedPositionalEncoding(c.d_model, c.max_len, c.dropout)
        self.norm = nn.LayerNorm(c.d_model)  # on the embeddings, as in BERT
        self.encoder = Encoder(c.num_layers, c.d_model, c.num_heads, c.d_ff, c.dropout)
        self.mlm_head = nn.Linear(c.d_model, c.vocab_size)

    def _run(self, ids: torch.Tensor, need_weights: bool) -> tuple[torch.Tensor, list | None]:
        check_sequence_ids(ids, self.config.vocab_size, self.config.max_len)
        key_mask = ids != self.config.pad_id  # (B, T): every real token sees every real token
        x = self.norm(self.positional(self.embed(ids)))  # (B, T) -> (B, T, C)
        return self.encoder(x, key_mask, need_weights)  # (B, T, C), L x (B, H, T, T) or None

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """ids (B, T) -> the top layer's vectors (B, T, C); row 0 is the ``<cls>`` vector."""
        return self._run(ids, need_weights=False)[0]

    def mlm_logits(self, ids: torch.Tensor) -> torch.Tensor:
        """ids (B, T) -> logits (B, T, V): the model's guess of the original word at every position."""
        return self.mlm_head(self(ids))  # (B, T, C) -> (B, T, V)

    @torch.no_grad()
    def attention_weights(self, ids: torch.Tensor) -> torch.Tensor:
        """Self-attention weights of every layer and head for ids (B, T): (L, B, H, T, T)."""
        return torch.stack(self._run(ids, need_weights=True)[1])


# ---------------------------------------------------------------------------------------------------
# Pre-training: hide words, predict them
# ---------------------------------------------------------------------------------------------------
def mask_tokens(ids: torch.Tensor, config: BERTConfig, words: torch.Tensor, generator: torch.Generator,
                rate: float = 0.15) -> tuple[torch.Tensor, torch.Tensor]:
    """Corrupt ids (B, T) for masked-language modelling (Devlin et al. 2019, section 3.1).

    Each real word (not ``<pad>`` or ``<cls>``) is chosen with probability ``rate``; a chosen one
    becomes ``<mask>`` (80%), a random id from ``words`` (10%) or stays (10%). Returns the corrupted
    inputs (B, T) and the targets (B, T): the original id where chosen, ``IGNORE`` elsewhere.
    """
    check_token_ids(ids, "ids")
    if not 0.0 < rate <= 1.0:
        raise ValueError(f"rate must be in (0, 1], got {rate}")
    real = (ids != config.pad_id) & (ids != config.cls_id)  # (B, T)
    chosen = real & (torch.rand(ids.shape, generator=generator) < rate)
    how = torch.rand(ids.shape, generator=generator)  # < 0.8: <mask>; 0.8..0.9: random; else keep
    random_ids = words[torch.randint(len(words), ids.shape, generator=generator)]
    inputs = torch.where(chosen & (how < 0.8), config.mask_id, ids)
    inputs = torch.where(chosen & (how >= 0.8) & (how < 0.9), random_ids, inputs)
    targets = torch.where(chosen, ids, IGNORE)
    return inputs, targets


def mlm_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy over the chosen positions only: logits (B, T, V), targets (B, T) with IGNORE."""
    if logits.shape[:2] != targets.shape:
        raise ValueError(f"logits (B, T, V) and targets (B, T) disagree: {tuple(logits.shape)} and "
                         f"{tuple(targets.shape)}")
    if not (targets != IGNORE).any():
        raise ValueError("no position was chosen: the masked-language-model loss has nothing to score")
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE)


def mlm_batches(ids: torch.Tensor, config: BERTConfig, words: torch.Tensor, batch_size: int = 64,
                seed: int = 0, rate: float = 0.15) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Shuffled (inputs, targets) batches of ids (N, T), with fresh masks drawn from ``seed``."""
    generator = torch.Generator().manual_seed(seed)
    order = torch.randperm(len(ids), generator=generator)
    for start in range(0, len(ids), batch_size):
        batch = ids[order[start:start + batch_size]]
        batch = batch[:, : int((batch != config.pad_id).sum(1).max())]  # drop all-padding columns
        yield mask_tokens(batch, config, words, generator, rate)


@torch.no_grad()
def masked_accuracy(model: TinyBERT, ids: torch.Tensor, words: torch.Tensor, seed: int = 0,
                    batch_size: int = 256) -> float:
    """Share of the chosen positions whose original word is the model's top guess (held-out ids)."""
    model.eval()
    right = total = 0
    for inputs, targets in mlm_batches(ids, model.config, words, batch_size, seed):
        chosen = targets != IGNORE
        guess = model.mlm_logits(inputs).argmax(-1)  # (B, T)
        right += int((guess[chosen] == targets[chosen]).sum())
        total += int(chosen.sum())
    return right / total


# ---------------------------------------------------------------------------------------------------
# Downstream: is the sentence grammatical?
# ---------------------------------------------------------------------------------------------------
def swap_neighbours(words: Sequence[str], rng: random.Random) -> tuple[str, ...]:
    """The sentence with one random pair of neighbouring, different words swapped."""
    positions = [i for i in range(len(words) - 1) if words[i] != words[i + 1]]
    if not positions:
        raise ValueError(f"no two neighbouring words differ in {list(words)}")
    i = rng.choice(positions)
    out = list(words)
    out[i], out[i + 1] = out[i + 1], out[i]
    return tuple(out)


def grammar_task(sentences: Sequence[Sequence[str]], seed: int = 0
                 ) -> tuple[list[tuple[str, ...]], torch.Tensor]:
    """Half the sentences as they are (label 1), half with two neighbours swapped (label 0).

    A swap that happens to leave a grammatical sentence (two adjectives, say) is labelled by
    ``utils.gpt.is_grammatical``, so every label is true of its sentence.
    """
    rng = random.Random(seed)
    out, labels = [], []
    for k, words in enumerate(sentences):
        words = tuple(words) if k % 2 == 0 else swap_neighbours(words, rng)
        out.append(words)
        labels.append(int(is_grammatical(words)))
    return out, torch.tensor(labels)


class CLSClassifier(nn.Module):
    """A BERT body and one linear layer on its ``<cls>`` vector: ids (B, T) -> logits (B, K)."""

    def __init__(self, body: TinyBERT, num_classes: int):
        super().__init__()
        if num_classes < 2:
            raise ValueError(f"a classifier needs at least 2 classes, got {num_classes}")
        self.body = body
        self.head = nn.Linear(body.config.d_model, num_classes)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        if not bool((ids[:, 0] == self.body.config.cls_id).all()):
            raise ValueError("every sequence must start with <cls>: encode sentences with "
                             "utils.bert.encode_sentences")
        return self.head(self.body(ids)[:, 0])  # (B, T, C) -> (B, C) -> (B, K)


@torch.no_grad()
def accuracy(model: nn.Module, inputs: torch.Tensor, labels: torch.Tensor, batch_size: int = 256) -> float:
    """Share of ``inputs`` whose top logit is the label (any classifier: ids or images in)."""
    model.eval()
    right = 0
    for start in range(0, len(inputs), batch_size):
        logits = model(inputs[start:start + batch_size])
        right += int((logits.argmax(-1) == labels[start:start + batch_size]).sum())
    return right / len(inputs)
