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
from utils.transformer import EncoderLayer, check_sequence_ids, check_sizes


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
        check_sizes(self, ("vocab_size", "d_model", "num_heads", "num_layers", "d_ff", "max_len"))
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
        check_sequence_ids(ids, self.config.vocab_size, self.config.max_len)
        t = ids.shape[1]
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


def _generation_setup(model: TinyGPT, prompt: torch.Tensor, max_new_tokens: int, temperature: float,
                      seed: int | None) -> torch.Generator:
    """Check ``generate``'s arguments and return its seeded random generator."""
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
    return generator


def _choose_next(logits: torch.Tensor, temperature: float, top_k: int | None,
                 generator: torch.Generator) -> torch.Tensor:
    """The next token id per row (B,) from its scores (B, V): greedy at temperature 0, else sampled."""
    if temperature == 0:
        return logits.argmax(-1)  # (B,)
    logits = logits / temperature  # < 1 sharpens the distribution, > 1 flattens it
    if top_k is not None:
        logits = top_k_filter(logits, top_k)
    probs = torch.softmax(logits, dim=-1)  # (B, V)
    return torch.multinomial(probs, 1, generator=generator).squeeze(1)  # (B,)


@torch.no_grad()
def generate(model: TinyGPT, prompt: torch.Tensor, max_new_tokens: int, temperature: float = 1.0,
             top_k: int | None = None, seed: int | None = None) -> torch.Tensor:
    """Sample from softmax(logits / temperature), top-k filtered, token by token: (B, T0) -> (B, T0 + n).

    ``temperature=0`` picks the most probable token (greedy). After ``<eos>`` a row gets ``<pad>``.
    The same ``seed`` gives the same samples.
    """
    generator = _generation_setup(model, prompt, max_new_tokens, temperature, seed)
    c = model.config
    was_training = model.training
    model.eval()
    ids = prompt
    done = (prompt == c.eos_id).any(dim=1)  # (B,)
    for _ in range(max_new_tokens):
        logits = model(ids)[:, -1]  # (B, V): the scores for the next token only
        next_id = _choose_next(logits, temperature, top_k, generator)  # (B,)
        next_id = next_id.masked_fill(done, c.pad_id)
        ids = torch.cat([ids, next_id[:, None]], dim=1)  # (B, t) -> (B, t + 1)
        done |= next_id == c.eos_id
        if done.all():
            break
    model.train(was_training)
    return ids


# ---------------------------------------------------------------------------------------------------
# Cached decoding: keep every layer's keys and values, compute only the new token's (chapter 9)
# ---------------------------------------------------------------------------------------------------
@dataclass
class KVCache:
    """Per layer, the keys and values of every token seen so far: lists of (B, H, T, D) tensors.

    ``key_mask`` (B, T) is False at ``<pad>`` tokens, which are never attended to (as in ``TinyGPT``).
    """

    keys: list[torch.Tensor]
    values: list[torch.Tensor]
    key_mask: torch.Tensor

    @property
    def length(self) -> int:
        """Number of tokens whose keys and values are stored (T)."""
        return self.key_mask.shape[1]


def layer_step_cached(layer: EncoderLayer, x: torch.Tensor, cache: KVCache,
                      i: int) -> torch.Tensor:
    """Layer i for new tokens x (B, T_new, C) only, attending over cached and new keys.

    Appends the new tokens' keys and values to the cache's layer i. Works for a pre- or
    post-norm ``EncoderLayer`` and returns what the layer returns for those tokens.
    """
    attn = layer.self_attn
    h = layer.norm_1(x) if layer.norm_first else x
    q = attn._split(attn.w_q(h))  # (B, T_new, C) -> (B, H, T_new, D)
    k, v = attn._split(attn.w_k(h)), attn._split(attn.w_v(h))
    if i < len(cache.keys):  # (B, H, T, D) -> (B, H, T + T_new, D)
        cache.keys[i] = torch.cat([cache.keys[i], k], dim=2)
        cache.values[i] = torch.cat([cache.values[i], v], dim=2)
    else:  # the first call fills the cache
        cache.keys.append(k)
        cache.values.append(v)
    t_new, t = x.shape[1], cache.keys[i].shape[2]
    allowed = causal_mask(t, x.device)[t - t_new:]  # (T_new, T): the new rows of the mask
    allowed = allowed & cache.key_mask[:, None, None, :]  # (B, 1, T_new, T): no <pad>
    scores = q @ cache.keys[i].transpose(-2, -1) / attn.d_head ** 0.5  # (B, H, T_new, T)
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    a = weights @ cache.values[i]  # (B, H, T_new, D)
    a = attn.w_o(a.transpose(1, 2).reshape(x.shape))  # (B, T_new, C)
    if layer.norm_first:
        x = x + a
        return x + layer.feed_forward(layer.norm_2(x))
    x = layer.norm_1(x + a)
    return layer.norm_2(x + layer.feed_forward(x))


@torch.no_grad()
def forward_step(model: TinyGPT, ids: torch.Tensor, cache: KVCache | None = None
                 ) -> tuple[torch.Tensor, KVCache]:
    """Logits (B, T_new, V) for new tokens ids (B, T_new) after the cached ones; returns the grown cache.

    Equals ``model(all_ids)[:, -T_new:]`` in eval mode; only the new tokens' q, k, v are computed.
    """
    if model.training:
        raise RuntimeError("forward_step is for decoding: call model.eval() first (dropout is off)")
    if not isinstance(ids, torch.Tensor) or ids.dim() != 2 or ids.shape[1] < 1:
        shape = tuple(ids.shape) if isinstance(ids, torch.Tensor) else type(ids).__name__
        raise ValueError(f"ids must be (batch, new_tokens >= 1) token ids, got {shape}")
    check_token_ids(ids, "ids")
    c = model.config
    if ids.min() < 0 or ids.max() >= c.vocab_size:
        raise ValueError(f"token ids must lie in 0..{c.vocab_size - 1}, got "
                         f"{ids.min().item()}..{ids.max().item()}")
    past = 0 if cache is None else cache.length
    if cache is not None and cache.key_mask.shape[0] != ids.shape[0]:
        raise ValueError(f"the cache holds {cache.key_mask.shape[0]} sequences, ids has {ids.shape[0]}")
    if cache is not None and len(cache.keys) != c.num_layers:
        raise ValueError(f"the cache has {len(cache.keys)} layers, the model {c.num_layers}")
    if past + ids.shape[1] > c.max_len:
        raise ValueError(f"the cache would hold {past + ids.shape[1]} tokens, more than the model's "
                         f"max_len={c.max_len} positions; start a new cache or shorten the sequence")
    new_mask = ids != c.pad_id  # (B, T_new)
    if cache is None:
        cache = KVCache([], [], new_mask)
    else:
        cache.key_mask = torch.cat([cache.key_mask, new_mask], dim=1)  # (B, T + T_new)
    x = model.positional(model.embed(ids), offset=past)  # (B, T_new) -> (B, T_new, C)
    for i, layer in enumerate(model.layers):
        x = layer_step_cached(layer, x, cache, i)
    return model.output(model.norm(x)), cache  # (B, T_new, V)


@torch.no_grad()
def generate_cached(model: TinyGPT, prompt: torch.Tensor, max_new_tokens: int,
                    temperature: float = 1.0, top_k: int | None = None,
                    seed: int | None = None, return_logits: bool = False
                    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """``generate`` with a KV cache: the same tokens, each step computing only the newest token.

    With ``return_logits`` also returns the (B, n, V) scores each step chose from (before temperature).
    """
    generator = _generation_setup(model, prompt, max_new_tokens, temperature, seed)
    c = model.config
    was_training = model.training
    model.eval()
    ids, step_logits = prompt, []
    done = (prompt == c.eos_id).any(dim=1)  # (B,)
    logits, cache = forward_step(model, prompt)  # the prompt fills the cache in one pass
    logits = logits[:, -1]  # (B, V)
    for n in range(max_new_tokens):
        step_logits.append(logits)
        next_id = _choose_next(logits, temperature, top_k, generator)  # (B,)
        next_id = next_id.masked_fill(done, c.pad_id)
        ids = torch.cat([ids, next_id[:, None]], dim=1)  # (B, t) -> (B, t + 1)
        done |= next_id == c.eos_id
        if done.all() or n == max_new_tokens - 1:
            break
        logits = forward_step(model, next_id[:, None], cache)[0][:, -1]  # only the new token: (B, V)
    model.train(was_training)
    return (ids, torch.stack(step_logits, dim=1)) if return_logits else ids


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
