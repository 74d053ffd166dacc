"""Chapter 8's exercises (the Transformer decoder): their checks, references and named mistakes.

Shape legend: B batch, T target positions, V vocabulary; 8.1's logits are (N, V), one row per target
position (in 8.5, as in the chapter, N is the number of decoder blocks).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

import utils.attention
import utils.data
import utils.gpt
from utils.checks import MISTAKES, verify_function, verify_prediction
from utils.exercises import Question, exercise
from utils.transformer import Transformer, TransformerConfig


def _generator(seed: int) -> torch.Generator:
    """The check's own random numbers, so that checking leaves the notebook's seed alone."""
    return torch.Generator().manual_seed(seed)


# ---------------------------------------------------------------------------------------------------
# 8.1 Label smoothing by hand
# ---------------------------------------------------------------------------------------------------
def _smoothed_reference(logits, targets, epsilon, pad_id):
    return F.cross_entropy(logits, targets, ignore_index=pad_id, label_smoothing=epsilon)


def _smoothing_made_like(log_probs_of=lambda lg: lg.log_softmax(dim=-1), uniform_share=None,
                         count_padding=False):
    """A model answer: the smoothed cross-entropy with one mistake.

    ``uniform_share(log_probs, right)`` gives the (N,) cross-entropy against the part that is spread.
    """
    def loss(logits, targets, epsilon, pad_id):
        log_probs = log_probs_of(logits)                               # (N, V)
        right = log_probs.gather(-1, targets[:, None])[:, 0]           # (N,): log p(right word)
        spread = (log_probs.mean(dim=-1) if uniform_share is None
                  else uniform_share(log_probs, right))                # (N,)
        per_position = -((1 - epsilon) * right + epsilon * spread)     # (N,)
        return per_position.mean() if count_padding else per_position[targets != pad_id].mean()
    return loss


def _smoothing_inputs(hidden: bool) -> list[tuple]:
    g = _generator(108 if hidden else 8)
    if hidden:
        return [(60 * torch.randn(7, 10, generator=g), torch.tensor([3, 0, 9, 1, 0, 4, 7]), 0.1, 0),
                (torch.randn(6, 5, generator=g), torch.tensor([4, 4, 2, 4, 4, 4]), 0.2, 4),
                (torch.randn(4, 2, generator=g), torch.tensor([1, 0, 1, 1]), 1.0, 0),
                (torch.randn(9, 13, generator=g), torch.randint(1, 13, (9,), generator=g), 0.05, 0)]
    return [(torch.randn(6, 10, generator=g), torch.tensor([1, 2, 3, 0, 4, 0]), 0.1, 0),
            (3 * torch.randn(8, 7, generator=g), torch.randint(1, 7, (8,), generator=g), 0.0, 0),
            (torch.randn(5, 12, generator=g), torch.tensor([11, 3, 5, 11, 0]), 0.3, 11)]


@exercise("8.1", "Label smoothing by hand", "Medium", 15,
          hint="work with log-probabilities; the smoothed target mixes two distributions, a one-hot "
               "on the right word and a uniform one, so the loss is the same mixture of two "
               "cross-entropies; padding positions take no part in the mean")
def _smoothed_cross_entropy(answer, hidden=False):
    verify_function(
        answer, reference=_smoothed_reference, inputs=_smoothing_inputs(hidden), name="Exercise 8.1",
        hint=_smoothed_cross_entropy.exercise.hint,
        # the text forbids the library's losses; the last three are what they call underneath
        forbidden=[(F, "cross_entropy"), (F, "nll_loss"), (nn, "CrossEntropyLoss"), (nn, "NLLLoss"),
                   (torch._C._nn, "cross_entropy_loss"), (torch._C._nn, "nll_loss"),
                   (torch._C._nn, "nll_loss_nd")],
        mistakes={
            "epsilon spread over the |V| - 1 wrong words only (PyTorch's label smoothing, like the "
            "chapter's, spreads it over all |V| words, the right one included)":
                (_smoothing_made_like(uniform_share=lambda lp, right: (lp.sum(dim=-1) - right)
                                      / (lp.shape[-1] - 1)),
                 "the uniform part of the target gives epsilon / |V| to every one of the |V| words, the "
                 "right word included, which then gets 1 - epsilon + epsilon / |V| in all"),
            "padding positions counted in the mean (average over the real targets only)":
                (_smoothing_made_like(count_padding=True),
                 "leave out the positions whose target is pad_id before you average"),
            "epsilon put on every word instead of epsilon / |V| (the uniform part of the target must "
            "sum to epsilon)":
                (_smoothing_made_like(uniform_share=lambda lp, right: lp.sum(dim=-1)),
                 "the cross-entropy against the uniform distribution is the mean of -log p over "
                 "the |V| words, not their sum"),
            "the log of the softmax taken in two steps (a probability that underflows to 0 gives "
            "log 0 = -inf)":
                (_smoothing_made_like(log_probs_of=lambda lg: lg.softmax(dim=-1).log()),
                 "with large logits the softmax rounds small probabilities to 0; log_softmax "
                 "(x minus its logsumexp) stays finite"),
        })


# ---------------------------------------------------------------------------------------------------
# 8.2 Inputs and labels from a padded batch
# ---------------------------------------------------------------------------------------------------
def _pair_by_lists(ids, bos_id, eos_id, pad_id, eos_at=0):
    """One list per sentence, then pad. ``eos_at=-1`` puts <eos> over the last word and
    ``eos_at=None`` after the padding: two wrong-answer models."""
    n, rows_in, rows_out = ids.shape[1], [], []
    for row in ids.tolist():
        words = [w for w in row if w != pad_id]
        padding = [pad_id] * (n - len(words))
        rows_in.append([bos_id, *words, *padding])
        if eos_at is None:
            rows_out.append([*words, *padding, eos_id])
        else:
            labels = [*words, pad_id, *padding]
            labels[len(words) + eos_at] = eos_id
            rows_out.append(labels)
    return torch.tensor(rows_in, dtype=ids.dtype), torch.tensor(rows_out, dtype=ids.dtype)


def _right_padded(lengths: list[int], n: int, pad_id: int, g: torch.Generator,
                  dtype: torch.dtype = torch.long) -> torch.Tensor:
    """(B, n) random word ids (none equal to pad_id), sentence b right-padded after lengths[b]."""
    ids = torch.randint(pad_id + 1, pad_id + 40, (len(lengths), n), generator=g, dtype=dtype)
    real = torch.arange(n)[None, :] < torch.tensor(lengths)[:, None]           # (B, n)
    return ids.masked_fill(~real, pad_id)


def _shift_inputs(hidden: bool) -> list[tuple]:
    g = _generator(108 if hidden else 8)
    if hidden:
        return [(torch.tensor([[9]]), 1, 2, 0),
                (_right_padded([7, 2, 5, 1, 7], 7, 6, g, torch.int32), 3, 4, 6),
                (_right_padded([3, 3], 3, 0, g), 1, 2, 0),
                (_right_padded([1, 4, 2], 4, 50, g), 1, 2, 50)]
    return [(torch.tensor([[5, 6, 7]]), 1, 2, 0),
            (torch.tensor([[5, 6, 7, 8], [9, 4, 0, 0], [6, 0, 0, 0]]), 1, 2, 0),
            (torch.tensor([[7, 8, 3], [9, 3, 3]]), 0, 1, 3),
            (torch.randint(4, 30, (3, 6), generator=g), 1, 2, 0)]


@exercise("8.2", "Inputs and labels from a padded batch", "Easy", 10,
          hint="both tensors are the words with one extra column. For the input the start token goes "
               "in front. For the labels the end token goes after each sentence's own last word, "
               "which in a short sentence is the first padding position, not the end of the row")
def _teacher_forcing_pair(answer, hidden=False):
    verify_function(
        answer, reference=_pair_by_lists, inputs=_shift_inputs(hidden), name="Exercise 8.2",
        hint=_teacher_forcing_pair.exercise.hint,
        # "Build them from a tensor instead" of the chapter's make_batch
        forbidden=[(utils.data, "make_batch")],
        mistakes={
            "tgt_in and tgt_out swapped (the input starts with <bos>, the labels end with <eos>)":
                (lambda *args: _pair_by_lists(*args)[::-1],
                 "return (tgt_in, tgt_out) in this order: first what the decoder reads, then what "
                 "it must predict"),
            "<eos> put after the padding (it belongs right after the sentence's last word)":
                (lambda *args: _pair_by_lists(*args, eos_at=None),
                 "count each sentence's real words (the entries that are not pad_id): <eos> goes "
                 "at that position of tgt_out, the first padding position of a short sentence"),
            "<eos> written over the last word (it comes after it)":
                (lambda *args: _pair_by_lists(*args, eos_at=-1),
                 "a sentence of n words has its n words in tgt_out followed by <eos> at index n, "
                 "not n - 1"),
        })


# ---------------------------------------------------------------------------------------------------
# 8.3 The decoder's self-attention mask
# ---------------------------------------------------------------------------------------------------
def _key_not_later(t: int, shift: int = 0) -> torch.Tensor:
    """(T, T) bool, True where key j <= query i + shift (shift 0: the causal pattern)."""
    positions = torch.arange(t)
    return positions[None, :] <= positions[:, None] + shift          # (1, T) vs (T, 1)


def _decoder_allowed(t: int, tgt_mask: torch.Tensor) -> torch.Tensor:
    return _key_not_later(t) & tgt_mask[:, None, :]                  # (T, T) & (B, 1, T) -> (B, T, T)


def _masked_weights(allowed_of=_decoder_allowed, dim=-1, hidden_score=-math.inf, inverted=False,
                    after=False):
    """A model answer: hide the scores where ``allowed_of(T, tgt_mask)`` is False, softmax over
    ``dim``; the defaults give the reference, each other argument one mistake."""
    def weights(scores, tgt_mask):
        allowed = allowed_of(scores.shape[-1], tgt_mask)              # (B, T, T) or (T, T)
        if after:
            return torch.softmax(scores, dim=dim) * allowed
        hide = allowed if inverted else ~allowed
        return torch.softmax(scores.masked_fill(hide, hidden_score), dim=dim)
    return weights


def _real_tokens(lengths: list[int], t: int) -> torch.Tensor:
    return torch.arange(t)[None, :] < torch.tensor(lengths)[:, None]  # (B, T): True before lengths[b]


def _decoder_mask_inputs(hidden: bool) -> list[tuple]:
    g = _generator(103 if hidden else 3)
    if hidden:
        return [(torch.randn(4, 9, 9, generator=g), _real_tokens([9, 1, 5, 3], 9)),
                (torch.randn(1, 1, 1, generator=g), _real_tokens([1], 1)),
                (torch.randn(2, 8, 8, generator=g), _real_tokens([8, 8], 8)),       # no padding
                (40 * torch.randn(3, 6, 6, generator=g), _real_tokens([2, 6, 4], 6))]  # saturated
    return [(torch.randn(3, 6, 6, generator=g), _real_tokens([6, 4, 2], 6)),
            (torch.randn(2, 7, 7, generator=g), _real_tokens([3, 7], 7)),
            (torch.randn(1, 5, 5, generator=g), _real_tokens([5], 5))]


_AXIS_HINT = ("the scores are (B, T, T) with the queries on the rows and the keys on the columns, so a "
              "query's weights are one row and the softmax runs over the last axis, dim=-1")


@exercise("8.3", "The decoder's self-attention mask", "Medium", 15,
          hint="a key is visible to a query when two conditions hold at once: it is not later than "
               "the query, and it is a real token of the same sentence. The first is one (T, T) "
               "pattern for all sentences, the second one entry per key of each sentence, so give "
               "the padding mask a size-1 query axis before combining them. Hide the scores before "
               "the softmax",
          questions=[Question(
              "The rows of the padding positions are computed too (nothing reads them): why does "
              "none of the rows end up with every key hidden?",
              ("key 0 comes before every query, so the causal mask never hides it",
               "with right padding position 0 holds <bos>, a real token of every sentence",
               "a row with every key hidden would hold only -inf and its softmax would be NaN "
               "(as left padding would give in the first rows of a short sentence)"), 2)])
def _decoder_self_attention_weights(answer, hidden=False):
    verify_function(
        answer, reference=_masked_weights(), inputs=_decoder_mask_inputs(hidden), name="Exercise 8.3",
        hint=_decoder_self_attention_weights.exercise.hint,
        # "Build both masks yourself": the chapter's causal_mask (also reachable through utils.gpt),
        # PyTorch's nn.Transformer.generate_square_subsequent_mask and the is_causal=True of the
        # fused attention all build the causal mask for you
        forbidden=[(utils.attention, "causal_mask"), (utils.gpt, "causal_mask"),
                   (torch.nn.modules.transformer, "_generate_square_subsequent_mask"),
                   (F, "scaled_dot_product_attention")],
        mistakes={
            MISTAKES["softmax_axis"]:
                (_masked_weights(dim=-2),
                 _AXIS_HINT + "; over dim=-2 each key's column is normalised, and the column of a "
                 "padded key holds nothing but -inf, which is where the NaN comes from"),
            MISTAKES["softmax_axis"] + "; here dim=-2 with a large negative number for the hidden "
            "scores":
                (_masked_weights(dim=-2, hidden_score=-1e9),
                 _AXIS_HINT + "; over dim=-2 each key's column is normalised, so a padded key, "
                 "hidden from every query, gets 1 / T from each"),
            MISTAKES["softmax_axis"] + "; here dim=0, across the sentences of the batch":
                (_masked_weights(dim=0), _AXIS_HINT),
            MISTAKES["causal_off_by_one"]:
                (_masked_weights(lambda t, m: _key_not_later(t, shift=1) & m[:, None, :]),
                 "query i may see keys 0 .. i: keep the diagonal and hide everything strictly above "
                 "it; check which diagonal your tril or triu starts from"),
            "a causal mask that also hides the diagonal (token i may see itself; without it row 0 "
            "has no key left and its softmax is NaN)":
                (_masked_weights(lambda t, m: _key_not_later(t, shift=-1) & m[:, None, :]),
                 "query i may see keys 0 .. i, itself included: the allowed pattern is a tril of "
                 "ones with the diagonal kept"),
            MISTAKES["mask_transposed"]:
                (_masked_weights(lambda t, m: _decoder_allowed(t, m).transpose(-2, -1)),
                 "row i (query i) keeps the columns j <= i, a lower triangle, and the padding mask "
                 "runs along the columns, the keys: tgt_mask[:, None, :]"),
            "the padding mask applied to the queries instead of the keys (a padded key must get no "
            "weight from any query)":
                (_masked_weights(lambda t, m: _key_not_later(t) & m[:, :, None]),
                 "tgt_mask[:, :, None] lays the mask along the rows (the queries); the padding to "
                 "hide is a set of keys, the columns: tgt_mask[:, None, :]"),
            MISTAKES["mask_inverted"]:
                (_masked_weights(inverted=True),
                 "the combined mask is True where a query may look; hide the scores where it is "
                 "False: masked_fill(~allowed, float('-inf'))"),
            "the padding mask left out (a padded key still gets weight from the queries after it)":
                (_masked_weights(lambda t, m: _key_not_later(t)),
                 "combine the causal pattern with the padding mask of the keys, "
                 "tgt_mask[:, None, :], before hiding the scores"),
            "the causal mask left out (a query still sees the keys after it)":
                (_masked_weights(lambda t, m: m[:, None, :].expand(-1, t, -1)),
                 "combine the padding mask with a (T, T) lower-triangular pattern, True for "
                 "j <= i"),
            MISTAKES["mask_after_softmax"]:
                (_masked_weights(after=True),
                 "set the hidden scores to -inf before the softmax, so that it spreads each row's "
                 "weight over the allowed keys only"),
        })


# ---------------------------------------------------------------------------------------------------
# 8.4 Picking the best finished beam
# ---------------------------------------------------------------------------------------------------
def _best_by(score):
    """A model answer: the index of the hypothesis of best ``score(log_probs, n, alpha)``."""
    def best(log_probs, lengths, alpha):
        return max(range(len(lengths)), key=lambda r: score(log_probs[r], int(lengths[r]), alpha))
    return best


def _normalised(lp, n, alpha):
    return sum(lp[:n].tolist()) / math.pow((5 + n) / 6, alpha)


def _best_penalised_by_width(log_probs, lengths, alpha):
    """The mistake of one penalty for all: ((5 + width) / 6) ** alpha, the padded width."""
    width = log_probs.shape[1]
    return _best_by(lambda lp, n, a: sum(lp[:n].tolist()) / math.pow((5 + width) / 6, a))(
        log_probs, lengths, alpha)


def _best_zeroing_by_product(log_probs, lengths, alpha):
    """The mistake of multiplying by a 0/1 mask: -inf (or NaN) times 0 is NaN, and argmax picks it."""
    real = torch.arange(log_probs.shape[1])[None, :] < lengths[:, None]      # (n_hyp, T)
    total = (log_probs * real).sum(dim=-1)                                   # (n_hyp,)
    return int((total / ((5 + lengths.float()) / 6) ** alpha).argmax())


def _beam_inputs(hidden: bool) -> list[tuple]:
    g = _generator(108 if hidden else 8)
    if hidden:
        ended = -torch.rand(4, 7, generator=g)
        ended[[0, 2, 3], 3:] = -math.inf        # a beam may store -inf after a hypothesis has ended
        # the best hypothesis by length-normalised score, by total and by total times the penalty
        # are three different ones
        three_ways = torch.zeros(3, 10)
        three_ways[0, :2], three_ways[1, :5], three_ways[2] = -0.25, -0.09, -0.06
        return [(ended, torch.tensor([3, 7, 2, 3]), 0.6),
                (three_ways, torch.tensor([2, 5, 10]), 1.0),
                (-torch.rand(1, 5, generator=g), torch.tensor([4]), 0.6),
                (-torch.rand(6, 10, generator=g), torch.tensor([10, 1, 4, 9, 6, 2]), 2.0),
                (-3 * torch.rand(5, 9, generator=g), torch.tensor([9, 8, 3, 5, 1]), 0.0),
                (-torch.rand(3, 4, generator=g), torch.tensor([4, 4, 4]), 1.0)]   # equal lengths
    padding_helps = torch.tensor([[-0.5, -0.5, -0.5, 1.0, 1.0, 1.0],    # 3 tokens, padding
                                  [-0.2, -0.2, -0.2, -0.2, -0.2, -0.2]])  # 6 tokens
    short_or_long = torch.tensor([[-0.5, -0.5, -0.5, 0.0, 0.0, 0.0],
                                  [-0.3, -0.3, -0.3, -0.3, -0.3, -0.3]])
    three_ways = torch.zeros(3, 9)  # the best by normalised score, by total, by total * penalty
    three_ways[0, :1], three_ways[1, :4], three_ways[2] = -0.45, -0.1, -0.06
    return [(padding_helps, torch.tensor([3, 6]), 0.0),
            (short_or_long, torch.tensor([3, 6]), 0.0),
            (three_ways, torch.tensor([1, 4, 9]), 1.0),
            (short_or_long, torch.tensor([3, 6]), 1.0),
            (-2 * torch.rand(5, 8, generator=g), torch.tensor([3, 8, 5, 6, 2]), 0.6),
            (-torch.rand(4, 7, generator=g), torch.tensor([7, 1, 4, 2]), 0.6)]


@exercise("8.4", "Picking the best finished beam", "Medium", 15,
          hint="a hypothesis' log-probability is the sum over its own tokens only; every extra word "
               "lowers that sum, and the penalty, which grows with length, is what lets longer "
               "hypotheses compete",
          questions=[Question(
              "With alpha = 0 which hypotheses win, and why?",
              ("with alpha = 0 the penalty is 1: hypotheses are compared by their total "
               "log-probability",
               "every token adds a log-probability below zero, so the total falls as a hypothesis "
               "grows: short hypotheses win, usually the shortest",
               "a penalty that grows with the length (alpha > 0) divides longer hypotheses' totals "
               "by more and corrects that bias"), 2)])
def _best_hypothesis(answer, hidden=False):
    verify_function(
        answer, reference=_best_by(_normalised), inputs=_beam_inputs(hidden), name="Exercise 8.4",
        hint=_best_hypothesis.exercise.hint,
        mistakes={
            "padding entries counted in the sum (a hypothesis' log-probability sums its own tokens "
            "only)":
                (_best_by(lambda lp, n, a: sum(lp.tolist()) / math.pow((5 + n) / 6, a)),
                 "entries at positions >= lengths[r] are not tokens of hypothesis r: zero them "
                 "(masked_fill) before summing"),
            "the length penalty multiplied instead of divided (dividing a negative total by a "
            "penalty above 1 is what lets longer hypotheses compete)":
                (_best_by(lambda lp, n, a: sum(lp[:n].tolist()) * math.pow((5 + n) / 6, a)),
                 "the score is the total log-probability divided by ((5 + T) / 6) ** alpha"),
            "the length penalty computed from the padded width (every hypothesis then gets the "
            "same penalty)":
                (_best_penalised_by_width,
                 "T in the penalty is each hypothesis' own length, lengths[r], <eos> included"),
            "padding zeroed by multiplying with a 0/1 mask (a padding entry of -inf or NaN times 0 "
            "is NaN, not 0)":
                (_best_zeroing_by_product,
                 "the padding must be ignored whatever it holds: replace it with masked_fill or "
                 "torch.where instead of multiplying it by 0"),
        })


# ---------------------------------------------------------------------------------------------------
# 8.5 How much work does the decoding loop do? (a prediction)
# ---------------------------------------------------------------------------------------------------
_STEPS = 11  # 10 words, then <eos>


def _decoder_rows(seed: int) -> int:
    """Position vectors through the decoder blocks of a tiny untrained model (N = 2) decoding
    ``_STEPS`` cache-free greedy steps, counted with forward hooks."""
    with torch.random.fork_rng(devices=[]):   # leave the notebook's random state alone
        torch.manual_seed(seed)
        config = TransformerConfig(12, 12, d_model=16, num_heads=2, num_encoder_layers=1,
                                   num_decoder_layers=2, d_ff=32, dropout=0.0)
        model = Transformer(config).eval()
        src = torch.randint(3, 12, (1, 5))
    rows: list[int] = []

    def count_rows(_module, args, _output):      # args[0]: the block's input, (B, t, C)
        rows.append(args[0].shape[1])

    hooks = [layer.register_forward_hook(count_rows) for layer in model.decoder.layers]
    try:
        with torch.no_grad():
            memory = model.encode(src)                                   # (1, S, C), once
            prefix = torch.full((1, 1), model.config.bos_id)             # (1, 1): <bos>
            for _ in range(_STEPS):                                      # <eos> or not
                next_id = model.decode(prefix, memory)[:, -1].argmax(-1, keepdim=True)  # (1, 1)
                prefix = torch.cat([prefix, next_id], dim=1)
    finally:
        for hook in hooks:
            hook.remove()
    return sum(rows)


_ROW_BELIEFS = {
    2 * _STEPS: "the belief that each step feeds only the newest token (one row per step and block: "
                "a key-value cache would allow that; this loop has none)",
    sum(range(1, _STEPS + 1)): "the belief that the prefix passes through one block only (every "
                               "step runs it through all N blocks)",
    2 * _STEPS * _STEPS: "the belief that every step is as long as the final prefix (the prefix "
                         "grows by one token per step)",
}


@exercise("8.5", "How much work does the decoding loop do?", "Easy", 10, kind="prediction",
          hint="write down the length of the decoder's input at step 1, 2, ..., 11: it starts with "
               "<bos> alone and grows by one token per step, and each block processes all of it",
          questions=[Question(
              "How does the count grow with the length of the output, and what would a cache of the "
              "keys and values of earlier positions change?",
              ("T steps cost N (1 + 2 + ... + T) = N T (T + 1) / 2 rows: quadratic in the output "
               "length, though each step uses only the top block's last row",
               "a key-value cache lets each step feed only the newest token: N T rows, linear",
               "attention still reads all earlier keys, so a step's cost still grows with its "
               "position, but nothing is recomputed"), 2)])
def _predict_decoder_rows(answer, hidden=False):
    verify_prediction(
        answer, name="Exercise 8.5", form=int, measure=lambda: _decoder_rows(108 if hidden else 8),
        labels=(f"position vectors through the decoder blocks in {_STEPS} cache-free greedy steps, "
                "N = 2",),
        misconceptions={0: _ROW_BELIEFS.get},  # the belief behind a wrong count, by its value
        atol=0, hint=_predict_decoder_rows.exercise.hint)
