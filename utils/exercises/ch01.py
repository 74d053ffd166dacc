"""Chapter 1's exercises (the seq2seq bottleneck, attention inside an RNN): their checks, references
and named mistakes. None needs the chapter's trained models: each builds its own small inputs."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from utils.checks import MISTAKES, verify_function, verify_prediction
from utils.exercises import Question, exercise
from utils.exercises.common import refuse_non_int, refuse_python_loops
from utils.rnn import RNNAttention


def _padded(lengths: list[int], width: int) -> torch.Tensor:
    """The (B, S) mask of a padded batch, True at the real positions."""
    return torch.arange(width)[None, :] < torch.tensor(lengths)[:, None]


def _projections(g: torch.Generator, c: int, d_k: int, d_v: int) -> tuple[torch.Tensor, ...]:
    """W_Q, W_K (C, d_k) and W_V (C, d_v), scaled so that unscaled scores stay near 1 in size and
    the weights spread over several positions (a mistake then shows in them)."""
    return (torch.randn(c, d_k, generator=g) / c ** 0.5, torch.randn(c, d_k, generator=g) / c ** 0.5,
            torch.randn(c, d_v, generator=g) / c ** 0.5)


# ---------------------------------------------------------------------------------------------------
# 1.1 A mean-pooled context vector
# ---------------------------------------------------------------------------------------------------
def _mean_of_real(states, lengths):
    """The check's reference: each sentence's real states averaged one sentence at a time."""
    return torch.stack([states[b, :int(lengths[b])].mean(dim=0) for b in range(states.shape[0])])


def _sum_of_real(states, lengths):
    return torch.stack([states[b, :int(lengths[b])].sum(dim=0) for b in range(states.shape[0])])


def _last_real(states, lengths):
    return states[torch.arange(states.shape[0]), lengths.long() - 1]


def _one_padding_too_many(states, lengths):
    real = torch.arange(states.shape[1])[None, :] <= lengths[:, None]   # (B, S): one too many
    return (states * real[:, :, None]).sum(dim=1) / lengths[:, None]


def _context_inputs(hidden: bool) -> list[tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(111 if hidden else 11)
    if not hidden:
        return [(torch.randn(3, 5, 4, generator=g), torch.tensor([5, 2, 1])),
                (torch.randn(4, 9, 6, generator=g), torch.tensor([9, 3, 5, 1]))]
    loud = torch.randn(2, 6, 3, generator=g)
    loud[~_padded([6, 1], 6)] = 100.0            # padding that would move a mean a long way
    return [(loud, torch.tensor([6, 1])),
            (torch.randn(1, 1, 2, generator=g), torch.tensor([1])),   # one word, no padding
            (torch.randn(3, 7, 5, generator=g), torch.tensor([3, 7, 2], dtype=torch.int32))]


@exercise("1.1", "A mean-pooled context vector", "Easy", 10,
          hint="position i of a sentence of n words is real exactly when i < n; compare a row of "
               "positions with a column of lengths to get a (B, S) table of real positions, use "
               "it to zero the padding before summing over the positions, and divide by the "
               "number of real words, not by S",
          questions=[Question(
              "Does this context remove the bottleneck?",
              ("no: it is still a single vector of d_model numbers, the same size for 20 words "
               "as for 5", "computed once, before the decoder writes anything: the decoder must "
               "still unpack which word came where", "attention instead gives every decoder "
               "step its own weighted mixture of all the states"), 1)])
def _mean_context(answer, hidden=False):
    verify_function(
        answer, reference=_mean_of_real, inputs=_context_inputs(hidden), name="Exercise 1.1",
        hint=_mean_context.exercise.hint,
        mistakes={
            "the mean over all S positions, padding included":
                (lambda states, lengths: states.mean(dim=1),
                 "leave the padding out: zero it with a (B, S) table of real positions, then "
                 "divide by each sentence's own length"),
            "the sum of the real states, not divided by the length":
                (_sum_of_real, "divide each sentence's sum by its number of real words, "
                               "lengths[:, None]"),
            "the state of the last time step, padding included":
                (lambda states, lengths: states[:, -1],
                 "the context asked for is the mean of all the real states, not one state"),
            "the last real state h_S (the context of the model without attention), not the mean":
                (_last_real, "this is the chapter's c = h_S; the exercise asks for the mean of "
                             "h_1 .. h_S"),
            "one padding state counted as real (positions i <= n instead of i < n)":
                (_one_padding_too_many, "positions count from 0: a sentence of n words fills "
                                        "positions 0 .. n - 1, so position i is real when i < n"),
        })
    g = torch.Generator().manual_seed(12)
    refuse_python_loops(
        answer, (torch.randn(2, 5, 3, generator=g), torch.tensor([3, 5])),
        (torch.randn(18, 5, 3, generator=g), torch.randint(1, 6, (18,), generator=g)),
        name="Exercise 1.1", sizes=("a batch of 2 sentences", "a batch of 18"), threshold=8,
        hint="the (B, S) table of real positions covers the whole batch at once: "
             "torch.arange(S)[None, :] < lengths[:, None]")


# ---------------------------------------------------------------------------------------------------
# 1.2 Keys that say nothing
# ---------------------------------------------------------------------------------------------------
def _zero_key_weights() -> tuple[float, ...]:
    """The 8 weights of one decoder step of an RNNAttention whose W_K is 0, to two decimals."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(1)
        zero_keys = RNNAttention(d_dec=6, d_enc=6, d_k=4, d_v=4)
        with torch.no_grad():
            zero_keys.w_k.weight.zero_()                                  # every k_j = 0
            src_mask = torch.tensor([[True] * 5 + [False] * 3])           # (B, S) = (1, 8)
            _, alpha = zero_keys(torch.randn(1, 2, 6), torch.randn(1, 8, 6), src_mask)
    return tuple(round(weight, 2) for weight in alpha[0, 0].tolist())     # (1, 2, 8) -> 8


_ON_A_WORD = ("the belief that a real word gets a weight other than 1/5 (its score q_i . 0 = 0 is "
              "the same for all five words, and equal scores share a total weight of 1)")
_ON_PADDING = ("the belief that a padded position gets some weight (its score is -inf before the "
               "softmax, so its weight is exactly 0)")


@exercise("1.2", "Keys that say nothing", "Easy", 10, kind="prediction",
          hint="work out the score q_i . k_j of every real position when every key is zero, "
               "remember what the mask does to the padded positions before the softmax, and that "
               "the weights of one step sum to 1",
          questions=[Question(
              "What context c_i does the decoder read at each step?",
              ("every real score is q_i . 0 = 0 and the padded ones -inf: weight 1/5 on each "
               "word, 0 on the padding, whatever the query",
               "c_i is the plain mean of the 5 values, (1/5) sum_j h_j W_V",
               "the same at every decoder step: one fixed, mean-pooled context vector again, as "
               "in the previous exercise"), 2)])
def _predict_zero_keys(answer, hidden=False):
    verify_prediction(
        answer, name="Exercise 1.2", form=(float,) * 8, measure=_zero_key_weights,
        hint=_predict_zero_keys.exercise.hint,
        labels=[f"the weight of word {j + 1}" for j in range(5)]
        + [f"the weight of padding position {j + 1}" for j in range(5, 8)],
        misconceptions={0: _ON_A_WORD, 5: _ON_PADDING})   # named once, at the first of each


# ---------------------------------------------------------------------------------------------------
# 1.3 Fix the batched attention
# ---------------------------------------------------------------------------------------------------
def _attention_made_like(hide_real=False, dim=-1, mask_after=False, mask_rows=False, scaled=False):
    """A model answer: batched attention with the padding hidden, right or with one mistake."""
    def attend(s, H, src_mask, W_Q, W_K, W_V):
        q, k, v = s @ W_Q, H @ W_K, H @ W_V                         # (B, T, d_k), (B, S, ...)
        scores = q @ k.transpose(1, 2)                              # (B, T, S)
        if scaled:
            scores = scores / q.shape[-1] ** 0.5
        real = src_mask[:, :, None] if mask_rows else src_mask[:, None, :]   # (B, S, 1), (B, 1, S)
        hide = real if hide_real else ~real
        if mask_after:
            alpha = torch.softmax(scores, dim=dim).masked_fill(hide, 0.0)
        else:
            alpha = torch.softmax(scores.masked_fill(hide, float("-inf")), dim=dim)
        return alpha @ v, alpha
    return attend


def _batch_inputs(hidden: bool) -> list[tuple[torch.Tensor, ...]]:
    g = torch.Generator().manual_seed(113 if hidden else 13)
    # B, T, S, C, d_k, d_v, the lengths, the size of the states (4: nearly one-hot weights)
    cases = ([(2, 4, 4, 5, 3, 2, [2, 4], 1.0),      # T = S: a transposed mask broadcasts
              (3, 2, 6, 4, 4, 3, [6, 1, 3], 4.0),
              (1, 3, 1, 2, 2, 2, [1], 1.0)] if hidden else
             [(2, 3, 3, 4, 2, 3, [3, 1], 1.0), (3, 5, 4, 6, 3, 2, [4, 2, 3], 1.0)])
    return [(size * torch.randn(b, t, c, generator=g), size * torch.randn(b, s, c, generator=g),
             _padded(lengths, s), *_projections(g, c, d_k, d_v))
            for b, t, s, c, d_k, d_v, lengths, size in cases]


@exercise("1.3", "Fix the batched attention", "Medium", 15, kind="fix",
          hint="read the mask's meaning again: masked_fill overwrites the entries where its mask "
               "is True, so decide which positions must be overwritten; then ask over which axis "
               "of the (B, T, S) scores one decoder step's weights must sum to 1",
          questions=[Question(
              "Which of the two bugs does assert torch.allclose(alpha.sum(-1), torch.ones(B, T)) "
              "catch?",
              ("the two bugs: an inverted mask (masked_fill hides where src_mask is True, the "
               "real words) and a softmax over dim=1, the decoder steps",
               "the assert catches the wrong axis (rows no longer sum to 1) and the NaN rows of "
               "the inverted mask on a sentence without padding",
               "an inverted mask on a padded sentence still gives rows that sum to 1: only a "
               "check that the padded weights are 0 finds it"), 2)])
def _batch_attention(answer, hidden=False):
    verify_function(
        answer, reference=_attention_made_like(), inputs=_batch_inputs(hidden),
        name="Exercise 1.3", hint=_batch_attention.exercise.hint,
        # the package's RNNAttention is the fixed code: calling it skips the debugging
        forbidden=[(RNNAttention, "forward")],
        mistakes={
            "the classmate's code unchanged (both bugs still in)":
                (_attention_made_like(hide_real=True, dim=1),
                 "two things are wrong: which positions the mask hides, and the axis of the "
                 "softmax"),
            MISTAKES["mask_inverted"]:
                (_attention_made_like(hide_real=True),
                 "masked_fill overwrites where its mask is True, and src_mask is True at the real "
                 "words: hide ~src_mask, the padding"),
            MISTAKES["softmax_axis"]:
                (_attention_made_like(dim=1),
                 "the scores are (B, T, S): one decoder step's weights run over the source "
                 "positions, the last axis"),
            MISTAKES["mask_after_softmax"]:
                (_attention_made_like(mask_after=True),
                 "give the padded scores -inf before the softmax; zeroing weights afterwards "
                 "leaves rows that no longer sum to 1"),
            MISTAKES["mask_transposed"]:
                (_attention_made_like(mask_rows=True),
                 "src_mask (B, S) runs over the source positions, the columns of the (B, T, S) "
                 "scores: give it the new axis in the middle, src_mask[:, None, :]"),
            "scores divided by sqrt(d_k) (this exercise's scores are unscaled, as in the chapter)":
                (_attention_made_like(scaled=True),
                 "the bugs are in the mask and the softmax; leave the scores unscaled"),
        })


# ---------------------------------------------------------------------------------------------------
# 1.4 Has every source word been read?
# ---------------------------------------------------------------------------------------------------
def _coverage_made_like(extra_rows: int = 0, how: str = "sum", axis: int = 1) -> Callable:
    """A model answer: the weights of the first ``written + extra_rows`` decoder steps of each sentence,
    summed over the steps (``axis`` 1) per source word; or all steps (``extra_rows`` None)."""
    def coverage(weights: torch.Tensor, written: torch.Tensor) -> torch.Tensor:
        steps = torch.arange(weights.shape[1])                              # (T,)
        if extra_rows is None:
            kept = torch.ones(weights.shape[:2], dtype=torch.bool)
        else:
            kept = steps[None, :] < written[:, None] + extra_rows           # (B, T)
        counted = weights * kept[:, :, None]                                # (B, T, S)
        if how == "mean":
            return counted.sum(dim=axis) / written[:, None].clamp(min=1)
        return counted.sum(dim=axis)                                        # (B, S)
    return coverage


def _coverage_inputs(hidden: bool) -> list[tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(114 if hidden else 14)

    def weights(b: int, t: int, s: int, src_lengths: list[int]) -> torch.Tensor:
        real = torch.arange(s)[None, :] < torch.tensor(src_lengths)[:, None]      # (B, S)
        scores = (2 * torch.randn(b, t, s, generator=g)).masked_fill(~real[:, None, :], float("-inf"))
        return torch.softmax(scores, dim=-1)                                      # (B, T, S)

    if hidden:  # nothing written; every step written; one sentence, one source word
        return [(weights(3, 6, 5, [5, 2, 4]), torch.tensor([0, 6, 3])),
                (weights(1, 4, 1, [1]), torch.tensor([2]))]
    return [(weights(3, 7, 6, [6, 4, 5]), torch.tensor([5, 3, 7])),
            (weights(2, 5, 5, [5, 5]), torch.tensor([1, 4]))]


@exercise("1.4", "Has every source word been read?", "Medium", 15,
          hint="keep the rows of the steps that wrote a word, the first written[b] rows of "
               "sentence b (compare torch.arange(T) with written[:, None]), then add up the "
               "weights over the steps, axis 1, so that one number is left per source word",
          questions=[Question(
              "Compute the coverage of the chapter's test translations (the weights and ids of the "
              "alignment cell): how often is a source word read less than half a time, in the "
              "sentences translated right and in those translated wrong? What does that say?",
              ("in the sentences translated wrong a larger share of the source words is read less "
               "than half a time than in those translated right: skipped words go with wrong "
               "translations",
               "low coverage also occurs in correct translations: the encoder reads left to right, "
               "so the decoder can read a word through its neighbour's state; coverage is a "
               "symptom, not a proof",
               "nothing in attention makes the coverage 1: Tu et al. (2016) feed it back into the "
               "scores so that the decoder knows what it has read"), 2)])
def _coverage(answer, hidden=False):
    verify_function(
        answer, reference=_coverage_made_like(), inputs=_coverage_inputs(hidden),
        name="Exercise 1.4", hint=_coverage.exercise.hint,
        mistakes={
            "the weights summed over the source words (axis -1): each step's weights sum to 1": (
                _coverage_made_like(axis=-1),
                "one number per source word: add up over the decoder steps, axis 1"),
            "every decoder step counted, also those after the sentence's last word": (
                _coverage_made_like(extra_rows=None),
                "the decoder goes on computing weights for a finished sentence: keep only its "
                "first written[b] rows"),
            "one step too many counted (the step that wrote <eos> as well)": (
                _coverage_made_like(extra_rows=1),
                "steps 0 to written[b] - 1 wrote the words: arange(T) < written[:, None]"),
            "one step too few counted (the last word's step left out)": (
                _coverage_made_like(extra_rows=-1),
                "steps 0 to written[b] - 1 wrote the words: arange(T) < written[:, None]"),
            "the weights averaged over the steps instead of added up": (
                _coverage_made_like(how="mean"),
                "coverage counts how many times a word was read in all: a sum, about 1 for a "
                "word translated once"),
        })


# ---------------------------------------------------------------------------------------------------
# 1.5 How far strided convolutions see
# ---------------------------------------------------------------------------------------------------
def _field_by_gradients(kernel_size, strides):
    """The check's reference: the inputs with a nonzero gradient at the first output."""
    length = kernel_size ** len(strides)   # enough: a layer at most multiplies the field by k
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(15)
        stack = nn.Sequential(*[nn.Conv1d(1, 1, kernel_size, stride=s, bias=False)
                                for s in strides]).double()
        signal = torch.randn(1, 1, length, dtype=torch.float64, requires_grad=True)
    stack(signal)[0, 0, 0].backward()
    return int((signal.grad != 0).sum())


def _field_made_like(own_stride=False, ignore_strides=False):
    """A model answer: the window grown layer by layer, with one mistake."""
    def field(kernel_size, strides):
        total, step = 1, 1
        for stride in strides:
            if own_stride:
                step *= stride
            total += (kernel_size - 1) * (1 if ignore_strides else step)
            if not own_stride:
                step *= stride
        return total
    return field


def _stack_inputs(hidden: bool) -> list[tuple[int, list[int]]]:
    if hidden:  # no layer at all, strides as wide as the filter, long stride-1 stacks
        return [(3, []), (4, [4, 4, 4]), (2, [1, 1, 1, 1, 1, 1]), (7, [3, 1, 2])]
    return [(3, [1, 1, 1]), (3, [2, 2, 2]), (2, [2, 2]), (5, [1, 3, 2]), (3, [2])]


@exercise("1.5", "How far strided convolutions see", "Medium", 15,
          hint="follow the window up the stack: a layer adds k - 1 gaps between its taps, and each "
               "gap spans as many inputs as lie between two adjacent outputs of the layers below "
               "it; that distance is the product of their strides, not counting the layer's own",
          questions=[Question(
              "How many layers of width 3 and stride 2 give one output a window of at least 25 "
              "words, where stride 1 needs 12?",
              ("the window after N layers is 1 + 2(1 + 2 + ... + 2^(N-1)) = 2^(N+1) - 1: 7, 15, "
               "31 for N = 2, 3, 4", "four layers: it grows geometrically instead of linearly",
               "the price is resolution: each layer keeps every second position (dilated "
               "filters, as in ByteNet and WaveNet, keep the growth and every position)"), 2)])
def _strided_field(answer, hidden=False):
    verify_function(
        answer, reference=_field_by_gradients, inputs=_stack_inputs(hidden),
        name="Exercise 1.5", hint=_strided_field.exercise.hint,
        mistakes={
            "the strides ignored: every layer widening the window by kernel_size - 1":
                (_field_made_like(ignore_strides=True),
                 "a layer above a stride-2 layer reads outputs that lie 2 inputs apart: each of "
                 "its k - 1 gaps spans 2 inputs (the product of the strides below it)"),
            "a layer's own stride spreading its taps (only the strides of the layers below it "
            "do)":
                (_field_made_like(own_stride=True),
                 "a layer's own stride decides which of its outputs are kept, not how far apart "
                 "its taps are: multiply the step after the layer is counted"),
        })
    refuse_non_int(answer, (3, [2, 2]), "Exercise 1.5")
