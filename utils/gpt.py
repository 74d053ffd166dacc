"""A tiny decoder-only (GPT-style) language model built from the course's encoder layer (chapter 9).

Shape legend: B batch, T tokens, L layers, H heads, C = d_model, V vocabulary size.

A decoder-only model (Radford et al., 2018, 2019) is a stack of self-attention blocks whose attention
is causal: position t sees positions 0..t only, so the output at t can be trained to predict token t+1
for every t at once. The block is ``utils.transformer.EncoderLayer`` with a causal ``attn_mask``; no
second attention block is written here. Around it: token embeddings, learned positions (as in GPT), a
final LayerNorm (pre-norm) and a linear layer to next-token logits.

Also here: language-model batches and loss, sampling with temperature and top-k, and a checker for
the synthetic source grammar of ``utils.data`` that scores what the model writes.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from utils.attention import causal_mask
from utils.data import (
    ADJECTIVES,
    ADVERBS,
    CONJUNCTION,
    DETERMINERS,
    NOUNS,
    PREPOSITIONS,
    VERBS,
    Vocab,
    check_token_ids,
    pad_sequences,
)
from utils.positional import LearnedPositionalEncoding
from utils.transformer import EncoderLayer


@dataclass(frozen=True)
class GPTConfig:
    """Sizes of the tiny decoder-only model; special ids follow ``utils.data.Vocab``."""

    vocab_size: int
    d_model: int = 64
    num_heads: int = 4
    num_layers: int = 2
    d_ff: int = 256
    dropout: float = 0.1
    max_len: int = 48
    norm_first: bool = True  # pre-norm, as in GPT-2
    pad_id: int = 0
    bos_id: int = 1
    eos_id: int = 2

    def __post_init__(self) -> None:
        for name in ("vocab_size", "d_model", "num_heads", "num_layers", "d_ff", "max_len"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if self.d_model % self.num_heads != 0:
            raise ValueError(f"d_model must be divisible by num_heads; got d_model={self.d_model}, "
                             f"num_heads={self.num_heads}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")
        for name in ("pad_id", "bos_id", "eos_id"):
            if not 0 <= getattr(self, name) < self.vocab_size:
                raise ValueError(f"{name}={getattr(self, name)} is outside the vocabulary of "
                                 f"{self.vocab_size} tokens")


class TinyGPT(nn.Module):
    """Token embedding + learned positions, L causal ``EncoderLayer`` blocks, LayerNorm, next-token logits."""

    def __init__(self, config: GPTConfig):
        super().__init__()
        if not isinstance(config, GPTConfig):
            raise TypeError(f"TinyGPT takes a GPTConfig, got {type(config).__name__}")
        c = self.config = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.positional = LearnedPositionalEncoding(c.d_model, c.max_len, c.dropout)
        self.layers = nn.ModuleList(EncoderLayer(c.d_model, c.num_heads, c.d_ff, c.dropout, c.norm_first)
                                    for _ in range(c.num_layers))
        self.norm = nn.LayerNorm(c.d_model) if c.norm_first else nn.Identity()
        self.output = nn.Linear(c.d_model, c.vocab_size)

    def _run(self, ids: torch.Tensor, need_weights: bool) -> tuple[torch.Tensor, list[torch.Tensor]]:
        check_token_ids(ids, "ids")
        t = ids.shape[1]
        if not 1 <= t <= self.config.max_len:
            raise ValueError(f"a sequence needs 1..max_len={self.config.max_len} tokens, got {t}")
        if ids.min() < 0 or ids.max() >= self.config.vocab_size:
            raise ValueError(f"token ids must lie in 0..{self.config.vocab_size - 1}, got "
                             f"{ids.min().item()}..{ids.max().item()}")
        key_mask = ids != self.config.pad_id  # (B, T): right padding is never attended to
        attn_mask = causal_mask(t, ids.device)  # (T, T): position t sees positions 0..t
        x = self.positional(self.embed(ids))  # (B, T) -> (B, T, C)
        weights = []
        for layer in self.layers:
            x, w = layer(x, key_mask, attn_mask, need_weights)  # (B, T, C), (B, H, T, T) or None
            weights.append(w)
        return self.output(self.norm(x)), weights  # (B, T, C) -> (B, T, V)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """ids (B, T) -> logits (B, T, V); row t scores the token that follows ids[:, :t + 1]."""
        return self._run(ids, need_weights=False)[0]

    @torch.no_grad()
    def attention_weights(self, ids: torch.Tensor) -> torch.Tensor:
        """Causal self-attention weights of every layer and head for ids (B, T): (L, B, H, T, T)."""
        return torch.stack(self._run(ids, need_weights=True)[1])


# ---------------------------------------------------------------------------------------------------
# Language-model data and loss
# ---------------------------------------------------------------------------------------------------
def lm_batches(sentences: Sequence[Sequence[str]], vocab: Vocab, batch_size: int = 64,
               seed: int = 0) -> Iterator[torch.Tensor]:
    """Yield (B, T) id batches of ``<bos> w_1 .. w_n <eos>``, right-padded, shuffled with ``seed``."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    if len(sentences) == 0:
        raise ValueError("lm_batches got no sentences")
    order = list(range(len(sentences)))
    random.Random(seed).shuffle(order)
    for i in range(0, len(order), batch_size):
        chunk = [vocab.encode(sentences[j], bos=True, eos=True) for j in order[i:i + batch_size]]
        yield pad_sequences(chunk, vocab.pad_id)


def lm_loss(model: TinyGPT, ids: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of predicting ids[:, t + 1] from ids[:, :t + 1], padding ignored."""
    logits = model(ids[:, :-1])  # (B, T - 1, V): inputs <bos> w_1 .. w_n
    return F.cross_entropy(logits.flatten(0, 1), ids[:, 1:].flatten(),  # targets w_1 .. w_n <eos>
                           ignore_index=model.config.pad_id)


# ---------------------------------------------------------------------------------------------------
# Generation: one token at a time, each sampled token fed back in
# ---------------------------------------------------------------------------------------------------
def top_k_filter(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Keep the k largest logits of every row (..., V), set the rest to -inf (ties with the k-th kept)."""
    if not isinstance(k, int) or k < 1:
        raise ValueError(f"top_k must be a positive int, got {k!r}")
    if k >= logits.shape[-1]:
        return logits
    kth = logits.topk(k, dim=-1).values[..., -1:]  # (..., 1): the k-th largest value
    return logits.masked_fill(logits < kth, float("-inf"))


@torch.no_grad()
def generate(model: TinyGPT, prompt: torch.Tensor, max_new_tokens: int, temperature: float = 1.0,
             top_k: int | None = None, seed: int | None = None) -> torch.Tensor:
    """Sample from softmax(logits / temperature), top-k filtered, token by token: (B, T0) -> (B, T0 + n).

    ``temperature=0`` picks the most probable token (greedy). After ``<eos>`` a row gets ``<pad>``.
    The same ``seed`` gives the same samples.
    """
    if not isinstance(prompt, torch.Tensor) or prompt.dim() != 2 or prompt.shape[1] < 1:
        shape = tuple(prompt.shape) if isinstance(prompt, torch.Tensor) else type(prompt).__name__
        raise ValueError(f"prompt must be (batch, prompt_len >= 1) token ids, e.g. a column of <bos>; "
                         f"got {shape}")
    if not isinstance(max_new_tokens, int) or max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be a positive int, got {max_new_tokens!r}")
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0 (0 = greedy), got {temperature}")
    c = model.config
    if prompt.shape[1] + max_new_tokens > c.max_len:
        raise ValueError(f"prompt length {prompt.shape[1]} + max_new_tokens {max_new_tokens} exceeds "
                         f"max_len={c.max_len}")
    generator = torch.Generator(device=prompt.device)
    generator.manual_seed(seed if seed is not None else int(torch.randint(2**62, (1,))))  # global RNG
    was_training = model.training
    model.eval()
    ids = prompt
    done = (prompt == c.eos_id).any(dim=1)  # (B,)
    for _ in range(max_new_tokens):
        logits = model(ids)[:, -1]  # (B, V): the scores for the next token only
        if temperature == 0:
            next_id = logits.argmax(-1)  # (B,)
        else:
            logits = logits / temperature  # < 1 sharpens the distribution, > 1 flattens it
            if top_k is not None:
                logits = top_k_filter(logits, top_k)
            probs = torch.softmax(logits, dim=-1)  # (B, V)
            next_id = torch.multinomial(probs, 1, generator=generator).squeeze(1)  # (B,)
        next_id = next_id.masked_fill(done, c.pad_id)
        ids = torch.cat([ids, next_id[:, None]], dim=1)  # (B, t) -> (B, t + 1)
        done |= next_id == c.eos_id
        if done.all():
            break
    model.train(was_training)
    return ids


def sample_sentences(model: TinyGPT, vocab: Vocab, n: int, temperature: float = 1.0,
                     top_k: int | None = None, seed: int = 0) -> list[list[str]]:
    """Generate ``n`` sentences from ``<bos>`` alone and decode them to words (up to ``<eos>``)."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    prompt = torch.full((n, 1), vocab.bos_id, dtype=torch.long,
                        device=next(model.parameters()).device)  # (n, 1)
    ids = generate(model, prompt, model.config.max_len - 1, temperature, top_k, seed)
    return [vocab.decode(row) for row in ids.cpu()]


# ---------------------------------------------------------------------------------------------------
# The synthetic source grammar (utils.data), as a checker
# ---------------------------------------------------------------------------------------------------
_CATEGORY = {**{w: "D" for w in DETERMINERS}, **{w: "A" for w in ADJECTIVES}, **{w: "N" for w in NOUNS},
             **{w: "V" for w in VERBS}, **{w: "P" for w in PREPOSITIONS}, **{w: "R" for w in ADVERBS},
             CONJUNCTION: "C"}
_NOUN_PHRASE = "DA{0,2}N"  # determiner, up to two adjectives, noun
_CLAUSE = f"{_NOUN_PHRASE}V{_NOUN_PHRASE}(?:P{_NOUN_PHRASE})?R?"  # subject verb object [prep NP] [adverb]


def is_grammatical(words: Sequence[str], max_clauses: int = 2) -> bool:
    """True if ``words`` could come from the source grammar of ``utils.data`` with <= ``max_clauses``."""
    if isinstance(words, str):
        raise TypeError("is_grammatical expects a list of words, got a string; use sentence.split()")
    if not isinstance(max_clauses, int) or max_clauses < 1:
        raise ValueError(f"max_clauses must be a positive int, got {max_clauses!r}")
    if any(w not in _CATEGORY for w in words):
        return False
    tags = "".join(_CATEGORY[w] for w in words)  # e.g. "DANVDN" for "the big cat sees a dog"
    if re.fullmatch(f"{_CLAUSE}(?:C{_CLAUSE}){{0,{max_clauses - 1}}}", tags) is None:
        return False
    for run in re.finditer("A+", tags):  # the two adjectives of a noun phrase are different words
        adjectives = words[run.start():run.end()]
        if len(set(adjectives)) != len(adjectives):
            return False
    return True
