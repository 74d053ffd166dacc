"""Chapter 3's exercises (attention without an RNN): their checks, references and named mistakes."""

from __future__ import annotations

import torch
import torch.nn.functional as F

import utils.attention
from utils.checks import MISTAKES, verify_function, verify_prediction
from utils.exercises import Question, exercise

# Fused attention in any form: exercise 3.1 asks for matrix products, a mask and a softmax
_FUSED_ATTENTION = [
    (F, "scaled_dot_product_attention"), (F, "multi_head_attention_forward"),
    (utils.attention, "scaled_dot_product_attention"),
    (utils.attention.SingleHeadAttention, "forward"), (utils.attention.SelfAttention, "forward"),
    (utils.attention.MultiHeadAttention, "forward"),
]


def _keys_before(k: torch.Tensor, ends: torch.Tensor) -> torch.Tensor:
    """(B, T_k) bool, True at the keys of row b whose position is below ends[b]."""
    return torch.arange(k.shape[1])[None, :] < ends[:, None]


def _attend(q, k, v, allowed, scale=None, dim=-1, fill=float("-inf")):
    """The check's models: softmax over ``dim`` of the scores, ``fill`` where ``allowed`` is False."""
    scores = q @ k.transpose(1, 2) * (q.shape[-1] ** -0.5 if scale is None else scale)  # (B, T_q, T_k)
    return torch.softmax(scores.masked_fill(~allowed, fill), dim=dim) @ v


def _weights_then_mask(q, k, v, lengths, renormalise=False):
    """The check's models of a mask applied to the weights, after the softmax."""
    weights = torch.softmax(q @ k.transpose(1, 2) * q.shape[-1] ** -0.5, dim=-1)
    weights = weights * _keys_before(k, lengths)[:, None, :]
    if renormalise:
        weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights @ v


def _length_reference(q, k, v, lengths):
    """PyTorch's attention over the first lengths[b] keys: (B, T_q, d_v)."""
    return F.scaled_dot_product_attention(q, k, v, attn_mask=_keys_before(k, lengths)[:, None, :])


def _length_inputs(hidden: bool) -> list[tuple[torch.Tensor, ...]]:
    gen = torch.Generator().manual_seed(103 if hidden else 3)

    def randn(*shape):
        return torch.randn(*shape, generator=gen)

    # (B, T_q, T_k, d_k, d_v, lengths): lengths == T_k is a sentence without padding, 1 a sentence of
    # one word; the first input has T_q == T_k (so a transposed mask runs) and no row left empty by
    # an off-by-one mask
    shapes = ([(3, 5, 5, 4, 2, [5, 2, 3]), (2, 1, 7, 6, 3, [1, 7])] if hidden else
              [(2, 4, 4, 8, 5, [3, 2]), (3, 2, 5, 4, 6, [5, 2, 4])])
    cases = [(randn(b, t_q, d_k), randn(b, t_k, d_k), randn(b, t_k, d_v), torch.tensor(lengths))
             for b, t_q, t_k, d_k, d_v, lengths in shapes]
    # Saturated: the padded keys point where the queries do, 30 times longer than a real key, so
    # without the mask they would take all of the weight (the real weights underflow to exactly 0)
    b, t_q, d_k, lengths = (2, 3, 6, [1, 4]) if hidden else (1, 2, 4, [3])
    t_k = max(lengths) + 2
    q = 3.0 + 0.3 * randn(b, t_q, d_k)
    real = torch.arange(t_k)[None, :, None] < torch.tensor(lengths)[:, None, None]   # (B, T_k, 1)
    k = torch.where(real, randn(b, t_k, d_k), 30.0 + randn(b, t_k, d_k))
    cases.append((q, k, randn(b, t_k, 3), torch.tensor(lengths)))
    return cases


@exercise("3.1", "A padding mask from the lengths", "Medium", 15,
          hint="compare every key's position with its sentence's length to get a (B, T_k) table that is "
               "True at real keys; it has no query axis, so give it one of size 1 to broadcast over the "
               "queries. A padded key's score must become minus infinity before the softmax, so that the "
               "real keys share all of the weight")
def _length_masked(answer, hidden=False):
    verify_function(
        answer, reference=_length_reference, inputs=_length_inputs(hidden), name="Exercise 3.1",
        hint=_length_masked.exercise.hint, forbidden=_FUSED_ATTENTION,
        mistakes={
            MISTAKES["mask_inverted"]: (
                lambda q, k, v, n: _attend(q, k, v, ~_keys_before(k, n)[:, None, :]),
                "your mask hides the real words and keeps the padding: build it True at the first "
                "lengths[b] keys (may attend), and hand masked_fill its negation"),
            MISTAKES["mask_transposed"]: (
                lambda q, k, v, n: _attend(q, k, v, _keys_before(k, n)[:, :, None]),
                "the (B, T_k) table belongs on the last axis, the keys': reshape it to (B, 1, T_k), "
                "not (B, T_k, 1)"),
            "a length mask off by one that lets the first padded key through (the real keys of "
            "sentence b are positions 0 .. lengths[b] - 1)": (
                lambda q, k, v, n: _attend(q, k, v, _keys_before(k, n + 1)[:, None, :]),
                "position lengths[b] is the first pad: a key is real when its position is < lengths[b], "
                "not <="),
            "a length mask off by one that hides the last real key (the real keys of sentence b are "
            "positions 0 .. lengths[b] - 1)": (
                lambda q, k, v, n: _attend(q, k, v, _keys_before(k, n - 1)[:, None, :]),
                "position lengths[b] - 1 is the last real word and must stay visible: a key is real "
                "when its position is < lengths[b]"),
            MISTAKES["mask_after_softmax"]: (
                _weights_then_mask,
                "set the padded scores to minus infinity before the softmax, so that the real keys "
                "share all of the weight"),
            "a mask applied after the softmax and the weights renormalised (when the pads take "
            "nearly all the weight, the real weights underflow to 0 and 0 / 0 is NaN)": (
                lambda q, k, v, n: _weights_then_mask(q, k, v, n, renormalise=True),
                "mask the scores, not the weights: minus infinity before the softmax never divides by "
                "zero, however large the padded scores are"),
            "padded scores set to 0, not to minus infinity (a score of 0 still gets weight, e^0 = 1)": (
                lambda q, k, v, n: _attend(q, k, v, _keys_before(k, n)[:, None, :], fill=0.0),
                "only minus infinity gives a weight of exactly 0 (the chapter's misconception box): "
                "fill the padded scores with float('-inf')"),
            MISTAKES["unscaled"]: (
                lambda q, k, v, n: _attend(q, k, v, _keys_before(k, n)[:, None, :], scale=1.0),
                "your mask is right; divide the scores by sqrt(d_k) as well"),
            MISTAKES["softmax_axis"]: (
                lambda q, k, v, n: _attend(q, k, v, _keys_before(k, n)[:, None, :], dim=1),
                "the softmax runs over the keys, the last axis (dim=-1): each query's weights sum to 1"),
        })


def _pad_share(hidden: bool) -> float:
    """The experiment: the total weight that a zero query gives two zero pads after four words."""
    gen = torch.Generator().manual_seed(104 if hidden else 4)
    d_k = 16 if hidden else 8
    zero_query = torch.zeros(1, 1, d_k)                                       # (B, T_q, d_k)
    keys = torch.cat([torch.randn(1, 4, d_k, generator=gen), torch.zeros(1, 2, d_k)], dim=1)
    weights = torch.softmax(zero_query @ keys.transpose(1, 2) / d_k**0.5, dim=-1)   # (1, 1, 6)
    return weights[0, 0, 4:].sum().item()


def _pad_misconception(predicted: float) -> str:
    """What a wrong prediction of the pads' share reveals."""
    if abs(predicted) < 0.01:
        return ("the belief that a pad scoring 0 gets no weight (only minus infinity gives a weight of "
                "0, and there is no mask here)")
    if abs(predicted - 1 / 6) < 0.01:
        return ("the weight of one pad, 1/6, not of the two pads together (six equal scores give six "
                "weights of 1/6)")
    return ("the belief that the real words' keys decide the pads' share (a zero query scores 0 "
            "against every key, real or padded: six equal scores)")


@exercise("3.2", "Predict: how much weight goes to the padding?", "Easy", 5, kind="prediction",
          hint="a zero query has the same dot product with every key; what does the softmax make of "
               "six equal scores, and which of them belong to the pads?",
          questions=[Question(
              "Explain your prediction: what total weight do the two pads get, and why?",
              ("a zero query scores 0 against every key, real or padded", "six equal scores give six "
               "weights of 1/6, so the two pads take 2/6 = 1/3", "a score of 0 is an ordinary score: "
               "only minus infinity (the padding mask) gives a weight of 0"), 1)])
def _predict_pads(answer, hidden=False):
    said: list = []
    misconceptions: dict[int, str] = {}  # chosen once the prediction is known

    def prediction():
        said.append(answer())
        return said[-1]

    def measure() -> float:
        misconceptions[0] = _pad_misconception(float(said[-1]))
        return _pad_share(hidden)

    verify_prediction(
        prediction if callable(answer) else answer, name="Exercise 3.2", form=float, measure=measure,
        labels=("the total weight of the two pads (zero query, no mask)",),
        misconceptions=misconceptions)


def _positions_appended(a, max_len, first=0, before=False, size=None):
    """The check's models: one-hot positions from ``first`` (``size`` entries), after or before a."""
    positions = F.one_hot(torch.arange(first, first + a.shape[1]), size or max_len).to(a.dtype)
    positions = positions.expand(a.shape[0], -1, -1)                       # (B, S, max_len)
    return torch.cat([positions, a] if before else [a, positions], dim=-1)


def _with_positions(a, max_len):
    """(B, S, C) -> (B, S, C + max_len): each row followed by its one-hot position."""
    return _positions_appended(a, max_len)


def _position_inputs(hidden: bool) -> list[tuple]:
    gen = torch.Generator().manual_seed(105 if hidden else 5)
    shapes = ([(4, 3, 1, 10), (1, 7, 5, 7), (2, 2, 3, 3)] if hidden else
              [(2, 4, 3, 6), (1, 5, 2, 5), (3, 1, 4, 2)])
    return [(torch.randn(b, s, c, generator=gen), max_len) for b, s, c, max_len in shapes]


@exercise("3.3", "Give every word its position", "Easy", 10,
          hint="the position features are the same for every sentence of the batch: the first S rows of "
               "an identity matrix of size max_len, one row per position. Give them a batch axis and put "
               "them after each embedding, along the feature axis",
          questions=[Question(
              "If keys and values were computed from these vectors, would shuffling the source words "
              "still leave every output of the attention layer unchanged?",
              ("no, not in general", "a moved word carries the one-hot vector of its new position, so "
               "its key and its value change (unless W_K and W_V ignore the position part)", "the keys "
               "and values are no longer the old ones reordered: the weights and the weighted sum "
               "change, so the layer can use order"), 2)])
def _position_features(answer, hidden=False):
    verify_function(
        answer, reference=_with_positions, inputs=_position_inputs(hidden), name="Exercise 3.3",
        hint=_position_features.exercise.hint,
        mistakes={
            "positions counted from 1 (the first word is position 0)": (
                lambda a, max_len: _positions_appended(a, max_len, first=1),
                "the first word is position 0: its one-hot vector has its 1 at index 0"),
            "the position features put before the embedding, not after it": (
                lambda a, max_len: _positions_appended(a, max_len, before=True),
                "the embedding comes first and the position after it: [a, one_hot] along the last axis"),
            "one-hot vectors of the sentence's length S, not of max_len": (
                lambda a, max_len: _positions_appended(a, max_len, size=a.shape[1]),
                "every one-hot vector has max_len entries, whatever the sentence's length: take the "
                "first S rows of an identity matrix of size max_len"),
        })


def _matches(prediction, reference):
    """How many reference words find a partner in a shrinking pool of the predicted words."""
    pool, hits = list(prediction), 0
    for word in reference:
        if word in pool:
            pool.remove(word)
            hits += 1
    return hits


def _recall_by_removal(prediction, reference):
    """The fraction of the reference's words matched in the prediction, as multisets."""
    return _matches(prediction, reference) / len(reference)


def _recall_inputs(hidden: bool) -> list[tuple[list[str], list[str]]]:
    if hidden:
        return [(["x", "x", "x"], ["x", "y"]), (["b", "a"], ["a", "a", "a"]), ([], ["a", "b"]),
                ("the cat sat".split(), "the cat sat".split()),
                ("kafe nuzu kafe kafe rupi".split(), "rupi kafe sotu kafe nuzu nuzu".split())]
    return [("a a b d".split(), "a a a b c".split()), (["a", "a", "b"], ["a", "b", "b", "c"]),
            ("mozome bimo sidi mozome bimo".split(), "nuzu bimo sotu rupi mozome vogo sidi".split()),
            ("c b a a".split(), "a a b c".split()), ([], ["x"])]


@exercise("3.4", "Right words, wrong places?", "Medium", 15,
          hint="think of both lists as bags of words: a reference word that occurs r times can be matched "
               "at most as many times as the prediction holds it; add up the matches and divide by the "
               "length of the reference",
          questions=[Question(
              "The check computes it for the model's test predictions: is it higher than the token "
              "accuracy, and why?",
              ("yes, clearly: the check prints a mean recall far above the token accuracy",
               "the model picks the right kinds of words, often the right words, but puts them in the "
               "wrong places", "recall ignores extra words, and the looping outputs are longer than the "
               "references, which flatters it: precision would complete the picture"), 2)])
def _bag_recall(answer, hidden=False, predictions=None, references=None, token_accuracy=None):
    verify_function(
        answer, reference=_recall_by_removal, inputs=_recall_inputs(hidden), name="Exercise 3.4",
        hint=_bag_recall.exercise.hint,
        mistakes={
            "the matches divided by the length of the prediction, not of the reference": (
                lambda p, r: _matches(p, r) / max(len(p), 1),
                "recall asks how much of the reference was found: divide by len(reference)"),
            "repeated reference words all counted once the prediction holds the word once (match "
            "each word at most as often as the prediction has it)": (
                lambda p, r: sum(word in p for word in r) / len(r),
                "a word that the prediction holds once can match only one of the reference's repeats: "
                "for each word, take the smaller of its two counts"),
            "the words compared as sets (repeats ignored on both sides)": (
                lambda p, r: len(set(p) & set(r)) / len(set(r)),
                "repeats count: a reference word that occurs twice needs two matches, and the "
                "reference's length includes its repeats"),
        })
    if predictions is not None and references is not None:  # the chapter's model, measured
        recalls = [answer(list(p), list(r)) for p, r in zip(predictions, references, strict=True)]
        shown = "" if token_accuracy is None else f", against a token accuracy of {token_accuracy:.3f}"
        print(f"On the chapter's {len(recalls)} test sentences your function gives a mean recall of "
              f"{sum(recalls) / len(recalls):.3f}{shown}.")
