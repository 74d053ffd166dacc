"""Chapter 9's exercises (where it goes next): their checks, references and named mistakes.

Shapes: B batch, T_q queries, T_k keys, D head size, V vocabulary.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

import utils.gpt
import utils.subwords
from utils.checks import MISTAKES, also_forbidden, verify_function, verify_prediction
from utils.data import SOURCE_WORDS, Vocab
from utils.exercises import Question, exercise
from utils.runtime import seed_everything


# ---------------------------------------------------------------------------------------------------
# 9.1 Perplexity per word, whatever the tokens
# ---------------------------------------------------------------------------------------------------
def _per_word(token_ppl: float, n_tokens: int, n_words: int) -> float:
    """The reference: the text's total loss is n_tokens * log(token_ppl) nats, shared among its words."""
    return math.exp(math.log(token_ppl) * n_tokens / n_words)


def _per_word_inputs(hidden: bool) -> list[tuple[float, int, int]]:
    # hidden: one token per word (nothing changes), a certain model (1 stays 1), characters, few words
    if hidden:
        return [(7.5, 300, 300), (1.0, 52, 10), (1.8, 5_200, 1_000), (3.2, 9, 2)]
    return [(3.0, 1_500, 1_000), (12.0, 1_000, 1_000), (2.0, 620, 100), (1.25, 48, 12)]


@exercise("9.1", "Perplexity per word, whatever the tokens", "Easy", 10,
          hint="perplexity is the exponential of the mean loss: first undo it to get the text's "
               "total loss in nats (the per-token loss, log(token_ppl), times the number of "
               "tokens), then share that total among the words and take the exponential again",
          questions=[Question(
              "A character model reaches a per-token perplexity of 2.0 on text with 5.2 "
              "characters per word (end markers included); a word model reaches 9.0 per word on "
              "the same text. Which predicts the text better, and why can the per-token numbers "
              "not be compared directly?",
              ("per word the character model has 2.0 ** 5.2, about 36.8, against 9.0: the word "
               "model predicts the text better",
               "a token is a different unit in each model: a character model makes five or six "
               "easier choices per word, a word model one harder one; only the probability of the "
               "whole text, shared among the same words, compares them"), 2)])
def _per_word_perplexity(answer, hidden=False):
    verify_function(
        answer, reference=_per_word, inputs=_per_word_inputs(hidden), name="Exercise 9.1",
        hint=_per_word_perplexity.exercise.hint,
        mistakes={
            "the per-token perplexity returned unchanged (a token is not a word)": (
                lambda ppl, n_tokens, n_words: ppl,
                "a per-token perplexity counts choices per token: convert it to choices per word"),
            "the perplexity itself scaled by n_tokens / n_words (it is the loss that adds up, not "
            "the perplexity)": (
                lambda ppl, n_tokens, n_words: ppl * n_tokens / n_words,
                "losses add over tokens, perplexities multiply: scale log(token_ppl), then exp"),
            "the ratio turned upside down (n_words / n_tokens)": (
                lambda ppl, n_tokens, n_words: ppl ** (n_words / n_tokens),
                "the total loss of the text is n_tokens * log(token_ppl); it is shared among "
                "n_words words"),
            "the loss per word returned, not its exponential": (
                lambda ppl, n_tokens, n_words: math.log(ppl) * n_tokens / n_words,
                "perplexity is exp of the mean loss: take the exponential at the end"),
        })


# ---------------------------------------------------------------------------------------------------
# 9.2 Nucleus (top-p) filtering
# ---------------------------------------------------------------------------------------------------
def _nucleus_by_loop(logits: torch.Tensor, p: float) -> torch.Tensor:
    """The reference: one row at a time, adding tokens from the most probable down until they hold p."""
    rows = logits.reshape(-1, logits.shape[-1]).double()                 # (R, V)
    out = torch.full_like(rows, float("-inf"))
    for r, row in enumerate(rows):
        probs, held = row.softmax(dim=-1), 0.0
        for i in probs.argsort(descending=True).tolist():
            if held >= p:
                break
            out[r, i], held = row[i], held + probs[i].item()
    return out.to(logits.dtype).reshape(logits.shape)


def _nucleus_made_like(mass=lambda z: z.softmax(dim=-1), ranked=True, strict=False,
                       scattered=True, inverted=False):
    """A model answer with one mistake: tokens kept by running sums of mass(logits)."""
    def keep_some(logits, p):
        m = mass(logits)
        m, order = m.sort(dim=-1, descending=True) if ranked else (m, None)
        keep = (m.cumsum(dim=-1) if strict else m.cumsum(dim=-1) - m) < p
        if ranked and scattered:
            keep = torch.zeros_like(keep).scatter(-1, order, keep)   # back to vocabulary order
        return logits.masked_fill(keep if inverted else ~keep, float("-inf"))
    return keep_some


def _top_p_inputs(hidden: bool) -> list[tuple[torch.Tensor, float]]:
    seed_everything(106 if hidden else 6)
    if hidden:  # a saturated softmax (the nucleus is one token), p = 1 (all kept), a larger vocabulary
        return [(torch.tensor([[30.0, 0.0, -1.0, 2.0], [0.0, 1.0, 25.0, 3.0]]), 0.9),
                (torch.randn(2, 6), 1.0), (3 * torch.randn(2, 3, 11), 0.5),
                (torch.randn(1, 30), 0.8)]
    clear_rows = torch.tensor([[0.5, 0.3, 0.15, 0.05], [0.05, 0.15, 0.5, 0.3]]).log()
    # first a row whose raw scores and probabilities keep the same tokens: an answer that returns the
    # scores unchanged is then not mistaken for one that adds up raw scores
    return [(torch.tensor([[6.0, 1, 0, 0, 2]]), 0.9), (clear_rows, 0.75), (clear_rows, 0.85),
            (2 * torch.randn(3, 2, 9), 0.6), (torch.randn(4, 12), 0.95)]


@exercise("9.2", "Nucleus (top-p) filtering", "Medium", 20,
          hint="rank each row's probabilities from the largest down and take running sums; a token "
               "stays when the tokens ranked above it hold less than p. Then carry that decision back "
               "from ranked order to the vocabulary order of the scores",
          questions=[Question(
              "Where the model is sure of the next word, how does top-p with p = 0.9 differ from "
              "top-k with k = 5, and where it is unsure?",
              ("sure (one word with, say, 0.95): the nucleus is that word alone and sampling is "
               "greedy there, while top-5 still keeps four unlikely words and now and then draws one",
               "unsure: the nucleus grows to cover the many plausible words, while top-5 cuts off "
               "plausible words beyond the fifth",
               "top-p adapts the number of candidates to each distribution; top-k keeps a fixed "
               "number"), 2)])
def _top_p(answer, hidden=False):
    verify_function(
        answer, reference=_nucleus_by_loop, inputs=_top_p_inputs(hidden), name="Exercise 9.2",
        hint=_top_p.exercise.hint,
        mistakes={
            "the token that reaches p dropped (the kept tokens then hold less than p)":
                (_nucleus_made_like(strict=True), "keep tokens until the kept ones hold at least "
                 "p, that token included: compare the mass ranked *above* each token with p"),
            "probabilities added up in vocabulary order":
                (_nucleus_made_like(ranked=False), "rank the tokens from the most probable down "
                 "before taking running sums"),
            "the raw scores added up instead of their probabilities":
                (_nucleus_made_like(mass=lambda z: z), "p is a share of probability: take the "
                 "softmax of the row first"),
            "the decision made in ranked order applied to the scores in vocabulary order":
                (_nucleus_made_like(scattered=False), "the i-th entry of the sorted row is the "
                 "token order[i]: scatter the decision back through the sort's indices"),
            "a softmax over the wrong axis (each row's probabilities must sum to 1 over the "
            "vocabulary, the last axis)":
                (_nucleus_made_like(mass=lambda z: z.softmax(dim=0)), "take the softmax over "
                 "dim=-1, the vocabulary"),
            "the nucleus set to -inf and the rest kept (the mask inverted)":
                (_nucleus_made_like(inverted=True), "the nucleus keeps its scores; every other "
                 "score becomes -inf"),
        })


# ---------------------------------------------------------------------------------------------------
# 9.3 Memory-compressed attention
# ---------------------------------------------------------------------------------------------------
def _pooled_attention(q, k, v, stride, consecutive=True, scale=None, summed=False):
    """The reference (by default): attention over the block means of the keys and values;
    consecutive=False pools keys T_k / stride apart, summed=True sums each block."""
    def pool(x):                                             # (B, T_k, D) -> (B, T_k / s, D)
        if consecutive:
            pooled = F.avg_pool1d(x.transpose(1, 2), stride).transpose(1, 2)
        else:
            pooled = x.view(x.shape[0], stride, -1, x.shape[-1]).mean(dim=1)
        return stride * pooled if summed else pooled
    return F.scaled_dot_product_attention(q, pool(k), pool(v), scale=scale)


def _pooled_softmax_over_queries(q, k, v, stride):
    """A model answer: the compressed attention with its softmax over the queries."""
    k_c = F.avg_pool1d(k.transpose(1, 2), stride).transpose(1, 2)    # (B, T_k / s, D)
    v_c = F.avg_pool1d(v.transpose(1, 2), stride).transpose(1, 2)
    scores = q @ k_c.transpose(1, 2) / math.sqrt(q.shape[-1])        # (B, T_q, T_k / s)
    return torch.softmax(scores, dim=1) @ v_c


def _compressed_inputs(hidden: bool) -> list[tuple]:
    seed_everything(103 if hidden else 3)
    # (B, T_q, T_k, D, stride, how far the scores spread)
    shapes = ([(1, 1, 10, 8, 2, 1.0), (2, 6, 12, 4, 4, 3.0), (4, 2, 15, 6, 5, 1.0)] if hidden else
              [(2, 5, 12, 8, 3, 1.0), (1, 4, 8, 4, 1, 1.0), (3, 6, 6, 16, 6, 1.0)])
    return [(spread * torch.randn(b, t_q, d), spread * torch.randn(b, t_k, d), torch.randn(b, t_k, d), s)
            for b, t_q, t_k, d, s, spread in shapes]


@exercise("9.3", "Memory-compressed attention", "Medium", 15,
          hint="cut the key sequence into T_k / stride consecutive groups and replace each group by "
               "its mean vector; a reshape that gives the groups an axis of their own makes that one "
               "reduction. Do the same to the values; what remains is ordinary attention over the "
               "shorter sequence")
def _memory_compressed(answer, hidden=False):
    verify_function(
        answer, reference=_pooled_attention, inputs=_compressed_inputs(hidden), name="Exercise 9.3",
        hint=_memory_compressed.exercise.hint,
        mistakes={
            "keys T_k / stride apart averaged together instead of stride neighbours":
                (lambda q, k, v, s: _pooled_attention(q, k, v, s, consecutive=False),
                 "each summary stands for one stretch of consecutive tokens: view the keys as "
                 "(B, T_k / stride, stride, D) and average over the stride axis"),
            "the keys and values summed over each group instead of averaged":
                (lambda q, k, v, s: _pooled_attention(q, k, v, s, summed=True),
                 "a sum grows with the stride; take the mean of each group"),
            MISTAKES["unscaled"]:
                (lambda q, k, v, s: _pooled_attention(q, k, v, s, scale=1.0),
                 "the compressed keys keep their size D: divide the scores by sqrt(D)"),
            MISTAKES["softmax_axis"]:
                (_pooled_softmax_over_queries, "the weights of each query run over the compressed "
                 "keys, the last axis of the scores"),
        })


# ---------------------------------------------------------------------------------------------------
# 9.4 Merging two partial attentions
# ---------------------------------------------------------------------------------------------------
def _merged(out_a, lse_a, out_b, lse_b):
    """The reference: the share of part a, e^lse_a / (e^lse_a + e^lse_b), is sigmoid(lse_a - lse_b)."""
    return torch.sigmoid(lse_a - lse_b) * out_a + torch.sigmoid(lse_b - lse_a) * out_b


def _merged_through_exp(out_a, lse_a, out_b, lse_b):
    """A model answer: the shares from e^lse itself, which overflows (or underflows)."""
    sum_a, sum_b = torch.exp(lse_a), torch.exp(lse_b)
    return (sum_a * out_a + sum_b * out_b) / (sum_a + sum_b)


def _merged_unnormalised(out_a, lse_a, out_b, lse_b):
    """A model answer: each part rescaled to the larger maximum, never divided by the total."""
    top = torch.maximum(lse_a, lse_b)
    return torch.exp(lse_a - top) * out_a + torch.exp(lse_b - top) * out_b


def _two_parts(q, k, v, split):
    """(out_a, lse_a, out_b, lse_b) of attention over the keys [:split] and [split:]."""
    parts = []
    for keys, values in ((k[..., :split, :], v[..., :split, :]), (k[..., split:, :], v[..., split:, :])):
        scores = q @ keys.transpose(-2, -1) / math.sqrt(q.shape[-1])      # (..., T_q, T_part)
        parts += [torch.softmax(scores, dim=-1) @ values, scores.logsumexp(dim=-1, keepdim=True)]
    return tuple(parts)


def _merge_inputs(hidden: bool) -> list[tuple[torch.Tensor, ...]]:
    seed_everything(104 if hidden else 4)
    if hidden:  # log-sum-exps far below zero (e^lse underflows), a part whose keys were all masked
        return [_two_parts(torch.randn(3, 4, 6), torch.randn(3, 9, 6), torch.randn(3, 9, 6), 2),
                _two_parts(torch.randn(2, 2, 3, 5), torch.randn(2, 2, 11, 5), torch.randn(2, 2, 11, 5), 10),
                (torch.randn(2, 3), torch.full((2, 1), -1000.0), torch.randn(2, 3),
                 torch.full((2, 1), -1004.0)),
                (torch.zeros(2, 3), torch.full((2, 1), float("-inf")), torch.randn(2, 3),
                 torch.randn(2, 1))]
    q_big = 40 * torch.randn(2, 3, 8)                 # large scores: log-sum-exps in the hundreds
    return [_two_parts(torch.randn(2, 5, 8), torch.randn(2, 12, 8), torch.randn(2, 12, 8), 4),
            _two_parts(torch.randn(1, 2, 7, 4), torch.randn(1, 2, 10, 4), torch.randn(1, 2, 10, 4), 9),
            _two_parts(q_big, q_big.flip(1), torch.randn(2, 3, 8), 1),
            (torch.randn(3, 4), torch.full((3, 1), 1000.0), torch.randn(3, 4), torch.full((3, 1), 990.0))]


@exercise("9.4", "Merging two partial attentions", "Hard", 20,
          hint="each part's output is an average normalised by that part's own sum of exponentials, "
               "e^lse. The merged output weights the two averages by their shares of the total sum. "
               "Write those shares with differences of log-sum-exps, never with e^lse itself, and "
               "nothing overflows")
def _merge(answer, hidden=False):
    verify_function(
        answer, reference=_merged, inputs=_merge_inputs(hidden), name="Exercise 9.4",
        hint=_merge.exercise.hint,
        mistakes={
            "the two outputs averaged with equal weights":
                (lambda out_a, _la, out_b, _lb: (out_a + out_b) / 2,
                 "each part counts by its share of the total sum of exponentials, "
                 "e^lse_a / (e^lse_a + e^lse_b)"),
            "the shares computed from e^lse itself, which overflows for large log-sum-exps":
                (_merged_through_exp, "divide the numerator and the denominator by e^lse_a (or by "
                 "e^max): only the difference lse_b - lse_a is left to exponentiate"),
            "the shares swapped (part a weighted by part b's share)":
                (lambda out_a, lse_a, out_b, lse_b: _merged(out_b, lse_a, out_a, lse_b),
                 "the part with the larger log-sum-exp holds more of the total and weighs more"),
            "the shares not normalised (rescaled to the larger maximum, but not divided by the "
            "total, so they do not add up to 1)":
                (_merged_unnormalised, "divide by the total, e^lse_a + e^lse_b, written as "
                 "e^logaddexp(lse_a, lse_b)"),
        })


# ---------------------------------------------------------------------------------------------------
# 9.5 Top-1 sampling at a high temperature (a prediction)
# ---------------------------------------------------------------------------------------------------
def _distinct_top_1_sentences(seed: int) -> int:
    """How many different sentences among 20 top-1 samples at temperature 2 from a fresh TinyGPT."""
    seed_everything(seed)
    vocab = Vocab(SOURCE_WORDS)
    fresh = utils.gpt.TinyGPT(utils.gpt.GPTConfig(vocab_size=len(vocab), d_model=32, num_heads=2,
                                                  num_layers=1, d_ff=64, dropout=0.0, max_len=16))
    drawn = utils.gpt.sample_sentences(fresh, vocab, 20, temperature=2.0, top_k=1, seed=0)
    return len({tuple(words) for words in drawn})


# a prediction is written before the experiment runs: running the model inside it is refused
_EXPERIMENT = [(utils.gpt, "sample_sentences"), (utils.gpt, "generate"), (utils.gpt, "generate_cached"),
               (utils.gpt.TinyGPT, "forward")]


@exercise("9.5", "Top-1 sampling at a high temperature", "Easy", 10, kind="prediction",
          hint="look at what the temperature does to the order of the scores, and at how many tokens "
               "top-k leaves to choose from when k is 1",
          questions=[Question(
              "Explain your prediction: how many different sentences are among the 20 top-1 samples "
              "at temperature 2, and why?",
              ("one sentence, written 20 times",
               "the temperature divides every score by the same positive number, which keeps their "
               "order",
               "top-1 keeps only the highest score, so every draw is the argmax: greedy decoding at "
               "any temperature, trained model or not"), 2)])
def _predict_top_1(answer, hidden=False):
    with also_forbidden(_EXPERIMENT, reason="write the prediction before the experiment runs"):
        verify_prediction(
            answer, name="Exercise 9.5", form=int,
            measure=lambda: _distinct_top_1_sentences(105 if hidden else 5),
            labels=("different sentences among 20 top-1 samples at temperature 2",),
            hint=_predict_top_1.exercise.hint,
            misconceptions={
                0: "the belief that a temperature changes which word is the most likely (dividing "
                   "every score by the same number keeps their order, and top-1 keeps only the "
                   "first, so every draw is greedy)",
            })


# ---------------------------------------------------------------------------------------------------
# 9.6 Encoding by rank
# ---------------------------------------------------------------------------------------------------
def _start(word: str, marker: bool = True) -> list[str]:
    """A word's characters, the end-of-word marker glued to the last one (as learn_bpe starts)."""
    return [*word[:-1], word[-1] + utils.subwords.END] if marker else list(word)


def _pair_joined(symbols: list[str], pair: tuple[str, str]) -> list[str]:
    """Every occurrence of ``pair``, left to right, joined into one symbol (``utils.subwords``'s merge)."""
    return list(utils.subwords._merge(tuple(symbols), tuple(pair)))


def _by_rank_made_like(choose=min, marker=True):
    """The reference (``choose=min``, with the marker) or a model answer with one mistake: merge the
    pair of the word whose rank ``choose`` picks, until no pair of the word is in the list."""
    def encode(word, merges):
        rank = {tuple(pair): r for r, pair in reversed(list(enumerate(merges)))}   # first rank wins
        symbols = _start(word, marker)
        while True:
            ranked = [(rank[pair], k) for k, pair in enumerate(zip(symbols, symbols[1:], strict=False))
                      if pair in rank]
            if not ranked:
                return symbols
            _, k = choose(ranked)
            symbols = _pair_joined(symbols, (symbols[k], symbols[k + 1]))
    return encode


def _replayed(word, merges):
    """A model answer: every merge replayed once, in list order (what ``BPE.encode_word`` does)."""
    symbols = _start(word)
    for pair in merges:
        symbols = _pair_joined(symbols, tuple(pair))
    return symbols


def _leftmost(word, merges):
    """A model answer: the leftmost pair of the word that is in the list, whatever its rank."""
    known, symbols = {tuple(p) for p in merges}, _start(word)
    while True:
        at = next((k for k, pair in enumerate(zip(symbols, symbols[1:], strict=False)) if pair in known),
                  None)
        if at is None:
            return symbols
        symbols = _pair_joined(symbols, (symbols[at], symbols[at + 1]))


def _rank_inputs(hidden: bool) -> list[tuple[str, list[tuple[str, str]]]]:
    from utils.data import make_pairs

    end = utils.subwords.END
    learned = list(utils.subwords.learn_bpe([list(p.src) for p in make_pairs(400, seed=107 if hidden
                                                                               else 7)], 40).merges)
    # a hand-made list in which a merge makes a pair listed earlier: replaying misses it
    made = [("l", "ow" + end), ("o", "w" + end), ("e", "r" + end), ("n", "e")]
    # overlapping pairs of three ranks: the earliest, the latest and the leftmost give three results
    def overlapping(w: str) -> list[tuple[str, str]]:
        return [(w[1], w[2]), (w[2], w[3]), (w[3], w[4] + end), (w[0], w[1])]
    order = [("o", "w"), ("l", "o"), ("ow", "e"), ("w", "e")]
    if hidden:
        return [("pqrst", overlapping("pqrst")), ("teachers", learned), ("a", learned),
                ("aaaaa", [("a", "a"), ("aa", "a" + end)]), ("low", made), ("newer", made),
                ("lowe", order), ("slowest", learned)]
    return [("abcde", overlapping("abcde")), ("greener", learned), ("riverboat", learned),
            ("the", learned), ("low", made), ("lowe", order), ("lowe", list(reversed(order)))]


@exercise("9.6", "Encoding by rank", "Medium", 20,
          hint="start from the characters with </w> glued to the last one; then, again and again, "
               "look at the pairs of neighbours the word has now, keep those that are in the list, "
               "and merge (everywhere in the word) the one that comes first in the list",
          questions=[Question(
              "Does encoding by rank always give what replaying the merges in order gives? When can "
              "the two differ?",
              ("for a list learned by learn_bpe they agree: a merge joins two symbols that earlier "
               "merges made, so the earliest-learned pair present now is the next merge a replay "
               "would make",
               "a hand-made list can break it: when a merge makes a pair that was listed earlier, "
               "a replay has already passed that pair and never merges it, while encoding by rank "
               "does",
               "an example such as ('l', 'ow</w>') listed before ('o', 'w</w>'), on 'low'"), 2)])
def _encode_by_rank(answer, hidden=False):
    verify_function(
        answer, reference=_by_rank_made_like(), inputs=_rank_inputs(hidden), name="Exercise 9.6",
        hint=_encode_by_rank.exercise.hint,
        forbidden=[(utils.subwords.BPE, "encode_word"), (utils.subwords.BPE, "encode"),
                   (utils.subwords, "_merge"), (utils.subwords, "learn_bpe")],
        mistakes={
            "the merges replayed once each, in list order (a pair that a later merge makes is "
            "then missed)":
                (_replayed, "choose again after every merge, among the pairs the word has now: a "
                 "merge can make a pair that comes earlier in the list"),
            "the latest-learned pair merged first":
                (_by_rank_made_like(choose=max), "the pair that comes first in the list wins: "
                 "learn_bpe learned it from more frequent pairs"),
            "the leftmost mergeable pair merged first, whatever its rank":
                (_leftmost, "among the pairs the word has now, merge the one with the smallest "
                 "index in the list, wherever it sits in the word"),
            "no </w> marker on the last character (a word's last symbol must end with </w>)":
                (_by_rank_made_like(marker=False), "glue </w> to the last character before merging, "
                 "as learn_bpe does: merges such as ('e', 'r</w>') only match word ends"),
        })
