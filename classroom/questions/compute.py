"""The numbers and shapes of the question bank, computed by the course's own code at export time.

Each function takes the parameters a question states in its stem (``params:`` in the chapter's YAML
file) and returns the values its text and its answer use, by name: a parameter count comes from
``utils.train.count_parameters`` of the package's module, a shape from running the package's layer on
a tensor of that shape, a weight from ``utils.attention``'s softmax. Nothing here is a typed-in answer;
where a question names a mistake, the value that mistake gives is computed beside the right one, so
that the test can check that the two differ. Models are built under a fixed seed, without touching
the caller's random state.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

COMPUTE: dict[str, Callable[..., dict[str, Any]]] = {}


def computed(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """Register ``fn`` under its name, the ``compute:`` key of a question."""
    COMPUTE[fn.__name__] = fn
    return fn


def shape(*dims: int | Sequence[int]) -> str:
    """(2, 5, 5) as the book writes a shape."""
    if len(dims) == 1 and not isinstance(dims[0], int):
        dims = tuple(dims[0])
    return "(" + ", ".join(str(int(d)) for d in dims) + ")"


def _seeded(fn: Callable[[], Any], seed: int = 0) -> Any:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        with torch.no_grad():
            return fn()


def _weights(scores: Sequence[float], d_k: int = 1) -> torch.Tensor:
    """The course's scaled dot-product attention on a query and keys whose dot products are ``scores``:
    q = (1, 0, ..), k_j = (e_j, 0, ..) in d_k dimensions, so the weights are softmax(e / sqrt(d_k))."""
    from utils.attention import scaled_dot_product_attention

    s = torch.tensor(scores, dtype=torch.float64)
    q = torch.zeros(1, d_k, dtype=torch.float64)
    q[0, 0] = 1.0
    k = torch.zeros(len(s), d_k, dtype=torch.float64)
    k[:, 0] = s
    v = torch.eye(len(s), dtype=torch.float64)
    _, weights = scaled_dot_product_attention(q, k, v)
    return weights[0]


# ---------------------------------------------------------------------------------------------------
# 0. Getting started
# ---------------------------------------------------------------------------------------------------
@computed
def softmax_row(scores: Sequence[float]) -> dict[str, Any]:
    """Weights of one row of scores (d_k = 1, so no scaling), the largest and the first."""
    w = _weights(scores)
    return {"w0": float(w[0]), "w_max": float(w.max()), "w_last": float(w[-1])}


@computed
def softmax_down_one_row(row: Sequence[float]) -> dict[str, Any]:
    """``torch.softmax(torch.tensor([row]), dim=0)``: the sum of its entries, and of the row's softmax."""
    x = torch.tensor([row], dtype=torch.float64)
    return {"total": float(torch.softmax(x, dim=0).sum()), "row_total": float(torch.softmax(x, -1).sum())}


@computed
def column_totals(rows: Sequence[Sequence[float]]) -> dict[str, Any]:
    """``torch.softmax(rows, dim=-1).sum(dim=0)``: the weight each key receives over all queries."""
    totals = torch.softmax(torch.tensor(rows, dtype=torch.float64), dim=-1).sum(dim=0)
    return {"last": float(totals[-1]), "first": float(totals[0])}


@computed
def score_shapes(B: int, T: int, C: int) -> dict[str, Any]:
    """Dot-product scores of a batch with itself (``utils.attention.dot_scores``), and the wrong products."""
    from utils.attention import dot_scores

    x = torch.zeros(B, T, C)
    return {"right": shape(dot_scores(x, x).shape),
            "features": shape((x.transpose(-2, -1) @ x).shape),  # (B, C, C): the wrong two axes
            "no_batch": shape(T, T), "same": shape(x.shape)}


@computed
def self_or_other(word: str, other: str, x: Sequence[float], y: Sequence[float]) -> dict[str, Any]:
    """Which of two words ``word`` (vector x) scores highest against itself by dot product
    (``utils.attention.dot_scores``, as chapter 0's heatmap): itself or ``other`` (vector y)."""
    from utils.attention import dot_scores

    scores = dot_scores(torch.tensor([x]), torch.tensor([x, y]))[0]
    return {"best": word if scores[0] >= scores[1] else other, "self_score": float(scores[0]),
            "other_score": float(scores[1])}


@computed
def linear_shapes(B: int, T: int, C: int, F: int) -> dict[str, Any]:
    """``nn.Linear(C, F)`` applied to a (B, T, C) batch of row vectors, and its stored weight."""
    layer = _seeded(lambda: nn.Linear(C, F))
    return {"out": shape(layer(torch.zeros(B, T, C)).shape), "weight": shape(layer.weight.shape),
            "columns": shape(B, F, T), "flat": shape(B * T, F)}


@computed
def crossings(seed: int, max_words: int) -> dict[str, Any]:
    """The first pair of ``utils.data.make_pairs(100, seed)`` with at most ``max_words`` target words
    and a reordering, and the crossings of its alignment, all pairs compared at once; also what the
    named mistakes count (the words that moved, neighbours only)."""
    from utils.data import make_pairs

    alignment = next(p.alignment for p in make_pairs(100, seed=seed)
                     if len(p.alignment) <= max_words and list(p.alignment) != sorted(p.alignment))
    a = torch.tensor(alignment)
    later = torch.arange(len(a))[:, None] < torch.arange(len(a))[None, :]  # i < i'
    count = int((later & (a[:, None] > a[None, :])).sum())
    return {"alignment": shape(alignment), "count": count,
            "moved": int((a != torch.arange(len(a))).sum()),
            "neighbours": int((a[:-1] > a[1:]).sum())}


# ---------------------------------------------------------------------------------------------------
# 1. The seq2seq bottleneck and attention in an RNN
# ---------------------------------------------------------------------------------------------------
@computed
def zero_keys(n_real: int, n_pad: int, C: int) -> dict[str, Any]:
    """``utils.rnn.RNNAttention`` with W_K = 0 over ``n_real`` words and ``n_pad`` pads: the weights."""
    from utils.rnn import RNNAttention

    def run():
        attention = RNNAttention(C, C, C, C)
        attention.w_k.weight.zero_()
        mask = torch.tensor([[True] * n_real + [False] * n_pad])
        _, alpha = attention(torch.randn(1, 3, C), torch.randn(1, n_real + n_pad, C), mask)
        return alpha[0]

    alpha = _seeded(run)
    assert torch.allclose(alpha, alpha[0:1].expand_as(alpha))  # the same weights at every step
    return {"w_real": float(alpha[0, 0]), "w_pad": float(alpha[0, -1]),
            "total_real": float(alpha[0, :n_real].sum())}


@computed
def rnn_attention_shapes(B: int, T: int, S: int, C: int, d_k: int, d_v: int) -> dict[str, Any]:
    """Shapes of the contexts and weights of ``utils.rnn.RNNAttention`` for T decoder steps, S words."""
    from utils.rnn import RNNAttention

    def run():
        c, alpha = RNNAttention(C, C, d_k, d_v)(torch.randn(B, T, C), torch.randn(B, S, C),
                                                torch.ones(B, S, dtype=torch.bool))
        return c.shape, alpha.shape

    context, alpha = _seeded(run)
    return {"alpha": shape(alpha), "context": shape(context), "alpha_t": shape(B, S, T),
            "once": shape(B, S), "keys": shape(B, T, d_k)}


def _conv_stack(num_layers: int, kernel_size: int, length: int) -> nn.Sequential:
    """Stride-1 convolutions with centred kernels ("same" zero padding) and positive weights."""
    layers = []
    for _ in range(num_layers):
        conv = nn.Conv1d(1, 1, kernel_size, padding=kernel_size // 2, bias=False)
        nn.init.constant_(conv.weight, 1.0 / kernel_size)
        layers.append(conv)
    return nn.Sequential(*layers)


def _inputs_seen(num_layers: int, kernel_size: int, length: int, output: int) -> torch.Tensor:
    """Which input positions the output at ``output`` depends on (measured with autograd)."""
    x = torch.ones(1, 1, length, requires_grad=True)
    _conv_stack(num_layers, kernel_size, length)(x)[0, 0, output].backward()
    return x.grad[0, 0] != 0


@computed
def conv_window(num_layers: int, kernel_size: int) -> dict[str, Any]:
    """Inputs one output of ``num_layers`` stride-1 convolutions of width ``kernel_size`` sees, far from
    the edges (measured by autograd, as chapter 1 does)."""
    length = 2 * num_layers * kernel_size + 1
    seen = _inputs_seen(num_layers, kernel_size, length, length // 2)
    return {"window": int(seen.sum())}


@computed
def conv_layers_for_both_ends(length: int, kernel_size: int) -> dict[str, Any]:
    """Layers of centred stride-1 convolutions before the middle output, and the last output, of a
    ``length``-word sentence depend on both its first and its last word (measured by autograd)."""
    found = {}
    for name, output in (("middle", (length - 1) // 2), ("last", length - 1)):
        for n in range(1, 2 * length):
            seen = _inputs_seen(n, kernel_size, length, output)
            if seen[0] and seen[-1]:
                found[name] = n
                break
    return found


@computed
def exact_match_chance(p_word: float, words: int) -> dict[str, Any]:
    """Chance that every word of a sentence is right when each is right with probability ``p_word``."""
    return {"chance": p_word ** words}


# ---------------------------------------------------------------------------------------------------
# 2. Attention as a soft lookup
# ---------------------------------------------------------------------------------------------------
@computed
def cosine_and_angle(q: Sequence[float], k: Sequence[float]) -> dict[str, Any]:
    """``utils.attention.cosine_scores`` of one query and one key, and the angle it is the cosine of."""
    from utils.attention import cosine_scores, dot_scores

    qt, kt = torch.tensor([q], dtype=torch.float64), torch.tensor([k], dtype=torch.float64)
    cos = float(cosine_scores(qt, kt)[0, 0])
    return {"cos": cos, "angle": math.acos(cos), "degrees": math.degrees(math.acos(cos)),
            "dot": float(dot_scores(qt, kt)[0, 0])}


@computed
def scaled_weights(dots: Sequence[float], d_k: int) -> dict[str, Any]:
    """Weights of scaled dot-product attention (``utils.attention``) for the given dot products q . k_j."""
    w = _weights(dots, d_k)
    plain = _weights(dots, 1)
    return {"w0": float(w[0]), "unscaled_w0": float(plain[0]), "root": math.sqrt(d_k)}


@computed
def softmax_jacobian(scores: Sequence[float]) -> dict[str, Any]:
    """The Jacobian of the softmax at ``scores``, by autograd: its first diagonal entry and its size."""
    s = torch.tensor(scores, dtype=torch.float64)
    jac = torch.autograd.functional.jacobian(lambda e: torch.softmax(e, -1), s)
    return {"j00": float(jac[0, 0]), "j01": float(jac[0, 1]), "p0": float(torch.softmax(s, -1)[0])}


@computed
def additive_ceiling(w: Sequence[float], T_k: int) -> dict[str, Any]:
    """The largest weight one key can take under ``utils.attention.AdditiveScore`` with this w, reached
    by saturating every tanh with the sign of w for that key and against it for the other T_k - 1."""
    from utils.attention import AdditiveScore

    d = len(w)
    w_t = torch.tensor([w], dtype=torch.float64)

    def run():
        score = AdditiveScore(d, d, d).double()
        score.w.weight.copy_(w_t)
        score.w_q.weight.zero_()
        score.w_k.weight.copy_(1e4 * torch.eye(d, dtype=torch.float64))
        keys = -torch.sign(w_t).repeat(T_k, 1)
        keys[0] = torch.sign(w_t)
        return torch.softmax(score(torch.zeros(1, d, dtype=torch.float64), keys), dim=-1)[0, 0]

    best = float(_seeded(run))
    a = float(w_t.abs().sum())
    assert abs(best - 1 / (1 + (T_k - 1) * math.exp(-2 * a))) < 1e-9
    return {"ceiling": best, "a": a}


@computed
def column_convention_shapes(d_k: int, d_v: int, T_q: int, T_k: int) -> dict[str, Any]:
    """The column convention: O^c = V^c A^c, computed as the course's attention transposed."""
    from utils.attention import scaled_dot_product_attention

    qc, kc, vc = torch.zeros(d_k, T_q), torch.zeros(d_k, T_k), torch.zeros(d_v, T_k)
    out, weights = scaled_dot_product_attention(qc.T, kc.T, vc.T)
    return {"out": shape(out.T.shape), "rows": shape(out.shape), "weights": shape(weights.T.shape),
            "wrong": shape(d_v, T_k)}


# ---------------------------------------------------------------------------------------------------
# 3. Attention without an RNN
# ---------------------------------------------------------------------------------------------------
@computed
def zero_query(n_real: int, n_pad: int, d_k: int) -> dict[str, Any]:
    """A zero query over real keys and zero pad keys, without and with the padding mask
    (``utils.attention.scaled_dot_product_attention``)."""
    from utils.attention import scaled_dot_product_attention

    def run():
        k = torch.cat([torch.randn(n_real, d_k), torch.zeros(n_pad, d_k)])
        v = torch.randn(n_real + n_pad, 3)
        q = torch.zeros(1, d_k)
        _, free = scaled_dot_product_attention(q, k, v)
        mask = torch.tensor([[True] * n_real + [False] * n_pad])
        _, masked = scaled_dot_product_attention(q, k, v, mask)
        return free[0], masked[0]

    free, masked = _seeded(run)
    return {"pads": float(free[n_real:].sum()), "real_masked": float(masked[0]),
            "pads_masked": float(masked[n_real:].sum())}


@computed
def cross_attention_layer_shapes(B: int, T_q: int, T_k: int, d_model: int, d_kv: int, d_k: int,
                                 d_v: int) -> dict[str, Any]:
    """``utils.attention.SingleHeadAttention`` with queries of one sequence and memory of another."""
    from utils.attention import SingleHeadAttention

    def run():
        layer = SingleHeadAttention(d_model, d_k=d_k, d_v=d_v, d_kv=d_kv)
        return layer(torch.randn(B, T_q, d_model), torch.randn(B, T_k, d_kv))

    out, weights = _seeded(run)
    return {"out": shape(out.shape), "weights": shape(weights.shape), "by_keys": shape(B, T_k, d_v),
            "query_width": shape(B, T_q, d_model)}


@computed
def key_mask_broadcast(B: int, T: int, S: int) -> dict[str, Any]:
    """The (B, S) padding mask reshaped as chapter 3 does to meet (B, T, S) scores, and the reshapes
    that fail or mean something else."""
    from utils.data import padding_mask

    lengths = torch.arange(S - B + 1, S + 1)  # B sentences, the last one unpadded
    src = (torch.arange(S)[None, :] < lengths[:, None]).long()  # 1 at real tokens, 0 = <pad>
    mask = padding_mask(src)  # (B, S)
    scores = torch.zeros(B, T, S)
    right = mask[:, None, :]
    assert scores.masked_fill(~right, float("-inf")).shape == scores.shape
    return {"right": shape(right.shape), "transposed": shape(mask[:, :, None].shape),
            "flat": shape(mask.shape), "batch_last": shape(S, 1, B)}


@computed
def bag_recall(prediction: Sequence[str], reference: Sequence[str]) -> dict[str, Any]:
    """Exercise 3.4's recall: reference words found in the prediction, each at most as often as there."""
    have = Counter(prediction)
    found = sum(min(n, have[w]) for w, n in Counter(reference).items())
    return {"recall": found / len(reference), "by_prediction": found / len(prediction),
            "as_sets": len(set(prediction) & set(reference)) / len(set(reference))}


# ---------------------------------------------------------------------------------------------------
# 4. Self-attention
# ---------------------------------------------------------------------------------------------------
@computed
def weights_memory(B: int, H: int, T: int) -> dict[str, Any]:
    """MiB of one float32 (B, H, T, T) weight matrix (``utils.efficient.attention_matrix_bytes``)."""
    from utils.efficient import attention_matrix_bytes

    return {"mib": attention_matrix_bytes(B, H, T, T) / 2 ** 20,
            "one_head_mib": attention_matrix_bytes(B, 1, T, T) / 2 ** 20}


@computed
def longest_fit(gib: int, B: int, H: int) -> dict[str, Any]:
    """The largest T whose float32 (B, H, T, T) matrix fits in ``gib`` GiB (``attention_matrix_bytes``)."""
    from utils.efficient import attention_matrix_bytes

    budget = gib * 2 ** 30
    t = math.isqrt(budget // attention_matrix_bytes(B, H, 1, 1))
    assert attention_matrix_bytes(B, H, t, t) <= budget < attention_matrix_bytes(B, H, t + 1, t + 1)
    t2 = math.isqrt(2 * budget // attention_matrix_bytes(B, H, 1, 1))
    return {"T": t, "T_double": t2}


@computed
def gru_crossover(d_model: int) -> dict[str, Any]:
    """Chapter 4's counts: self-attention 3 T d^2 + 2 T^2 d multiply-adds, a GRU layer 6 T d^2. The
    length at which they are equal (the first T where attention's count reaches the GRU's)."""
    def attention(t):
        return 3 * t * d_model ** 2 + 2 * t ** 2 * d_model

    def gru(t):
        return 6 * t * d_model ** 2

    t = next(t for t in range(1, 100 * d_model) if attention(t) >= gru(t))
    return {"T": t}


@computed
def self_attention_shapes(B: int, T: int, d_model: int, d_k: int, d_v: int) -> dict[str, Any]:
    """Outputs and weights of ``utils.attention.SelfAttention``."""
    from utils.attention import SelfAttention

    out, weights = _seeded(lambda: SelfAttention(d_model, d_k=d_k, d_v=d_v)(torch.randn(B, T, d_model)))
    return {"out": shape(out.shape), "weights": shape(weights.shape), "keys": shape(B, T, d_k),
            "model": shape(B, T, d_model), "square_features": shape(B, d_v, d_v)}


@computed
def uniform_entropy(T: int) -> dict[str, Any]:
    """The entropy of a row whose query is zero (``utils.attention``: equal scores), in nats and bits."""
    from utils.attention import scaled_dot_product_attention

    _, w = _seeded(lambda: scaled_dot_product_attention(torch.zeros(1, 4), torch.randn(T, 4),
                                                        torch.randn(T, 4)))
    w = w[0].double()
    nats = float(-(w * w.log()).sum())
    return {"nats": nats, "bits": nats / math.log(2)}


@computed
def causal_pairs(T: int) -> dict[str, Any]:
    """Pairs (i, j) that ``utils.attention.causal_mask`` allows, and what the off-by-one masks allow."""
    from utils.attention import causal_mask

    mask = causal_mask(T)
    return {"allowed": int(mask.sum()), "one_too_many": int(torch.ones(T, T).tril(diagonal=1).sum()),
            "without_self": int(torch.ones(T, T).tril(diagonal=-1).sum())}


# ---------------------------------------------------------------------------------------------------
# 5. Multi-head attention
# ---------------------------------------------------------------------------------------------------
@computed
def mha_weight_shapes(B: int, T_q: int, T_k: int, d_model: int, H: int) -> dict[str, Any]:
    """Outputs and per-head weights of ``utils.attention.MultiHeadAttention`` (cross-attention)."""
    from utils.attention import MultiHeadAttention

    def run():
        mha = MultiHeadAttention(d_model, H)
        memory = torch.randn(B, T_k, d_model)
        return mha(torch.randn(B, T_q, d_model), memory, memory, need_weights=True)

    out, weights = _seeded(run)
    return {"weights": shape(weights.shape), "out": shape(out.shape), "averaged": shape(B, T_q, T_k),
            "heads_third": shape(B, T_q, H, T_k), "head_width": shape(B, H, T_q, d_model // H)}


@computed
def mha_parameters(d_model: int, H: int) -> dict[str, Any]:
    """``count_parameters`` of ``MultiHeadAttention(d_model, H)`` and of the same layer with one head."""
    from utils.attention import MultiHeadAttention
    from utils.train import count_parameters

    many = _seeded(lambda: count_parameters(MultiHeadAttention(d_model, H)))
    one = _seeded(lambda: count_parameters(MultiHeadAttention(d_model, 1)))
    return {"params": many, "one_head": one}


@computed
def head_scale(d_model: int, H: int) -> dict[str, Any]:
    """The number a head of ``MultiHeadAttention(d_model, H)`` divides its scores by, sqrt(D)."""
    from utils.attention import MultiHeadAttention

    d = _seeded(lambda: MultiHeadAttention(d_model, H).d_head)
    return {"root_D": math.sqrt(d), "D": d, "root_model": math.sqrt(d_model), "root_H": math.sqrt(H)}


@computed
def gqa_head(H: int, G: int, h: int) -> dict[str, Any]:
    """The key and value head that query head h reads in grouped-query attention: groups of H / G
    consecutive query heads share one (``repeat_interleave``); the named mistake tiles them (h mod G)."""
    owner = torch.arange(G).repeat_interleave(H // G)
    return {"kv": int(owner[h]), "tiled": h % G, "divided": h // G}


@computed
def torch_in_proj(C: int, H: int) -> dict[str, Any]:
    """The shape of ``nn.MultiheadAttention``'s stacked ``in_proj_weight`` and of ``out_proj.weight``."""
    layer = _seeded(lambda: nn.MultiheadAttention(C, H, batch_first=True))
    return {"in_proj": shape(layer.in_proj_weight.shape), "out_proj": shape(layer.out_proj.weight.shape),
            "transposed": shape(C, 3 * C), "split": shape(3, C, C)}


@computed
def w_o_block(d_model: int, H: int, h: int) -> dict[str, Any]:
    """The rows of W_O that meet head h: the block h D .. (h + 1) D - 1 (``MultiHeadAttention.d_head``)."""
    from utils.attention import MultiHeadAttention

    d = _seeded(lambda: MultiHeadAttention(d_model, H).d_head)
    rows = torch.arange(d_model).view(H, d)[h]
    return {"first": int(rows[0]), "last": int(rows[-1])}


# ---------------------------------------------------------------------------------------------------
# 6. Positional encoding
# ---------------------------------------------------------------------------------------------------
@computed
def pe_entry(pos: int, dim: int, d_model: int) -> dict[str, Any]:
    """PE(pos, dim) from ``utils.positional.sinusoidal_encoding``."""
    from utils.positional import sinusoidal_encoding

    return {"value": float(sinusoidal_encoding(pos + 1, d_model)[pos, dim])}


@computed
def pe_dot(p: int, k: int, d_model: int) -> dict[str, Any]:
    """PE(p) . PE(p + k) from the package's table, which depends on k only: sum_i cos(k w_i)."""
    from utils.positional import frequencies, sinusoidal_encoding

    pe = sinusoidal_encoding(p + k + 1, d_model).double()
    dot = float(pe[p] @ pe[p + k])
    assert abs(dot - float(torch.cos(k * frequencies(d_model)).sum())) < 1e-4
    return {"dot": dot, "same": float(pe[p] @ pe[p]), "half": d_model // 2}


@computed
def full_turns(d_model: int, last: int) -> dict[str, Any]:
    """How many pairs (``utils.positional.frequencies``) turn by 2 pi or more by position ``last``."""
    from utils.positional import frequencies

    return {"pairs": int((last * frequencies(d_model) >= 2 * math.pi).sum()), "all": d_model // 2}


@computed
def slowest_half_turn(d_model: int) -> dict[str, Any]:
    """Offsets the slowest pair of ``frequencies(d_model)`` reads unambiguously: half a turn, pi / w."""
    from utils.positional import frequencies

    w = frequencies(d_model)
    return {"offset": math.pi / float(w[-1]), "fastest": 2 * math.pi / float(w[0])}


@computed
def alibi_slope(H: int, h: int) -> dict[str, Any]:
    """ALiBi's slope m_h = 2^(-8 (h + 1) / H) for head h (exercise 6.4), and the named mistake's."""
    return {"slope": 2 ** (-8 * (h + 1) / H), "from_zero": 2 ** (-8 * h / H)}


@computed
def relative_shift(k: int, d_model: int, pos: int) -> dict[str, Any]:
    """``relative_shift_matrix``: PE(pos) R_k against PE(pos + k), and R_k's own size."""
    from utils.positional import relative_shift_matrix, sinusoidal_encoding

    pe = sinusoidal_encoding(pos + k + 1, d_model)
    r = relative_shift_matrix(k, d_model)
    return {"error": float((pe[pos] @ r - pe[pos + k]).abs().max()), "shape": shape(r.shape)}


# ---------------------------------------------------------------------------------------------------
# 7. The Transformer encoder
# ---------------------------------------------------------------------------------------------------
@computed
def encoder_layer_parameters(d_model: int, H: int, d_ff: int) -> dict[str, Any]:
    """``count_parameters`` of the package's ``EncoderLayer`` and of its feed-forward network."""
    from utils.train import count_parameters
    from utils.transformer import EncoderLayer

    layer = _seeded(lambda: EncoderLayer(d_model, H, d_ff))
    total, ffn = count_parameters(layer), count_parameters(layer.feed_forward)
    return {"params": total, "ffn": ffn, "ffn_share": ffn / total,
            "attention": count_parameters(layer.self_attn)}


@computed
def padding_reach(T: int, n_pad: int, changed: int, d_model: int, H: int) -> dict[str, Any]:
    """How many outputs of a post-norm ``EncoderLayer`` (eval mode) move when the input at ``changed``
    moves, with the last ``n_pad`` positions hidden by the key mask."""
    from utils.transformer import EncoderLayer

    def run():
        layer = EncoderLayer(d_model, H, 2 * d_model).eval()
        x = torch.randn(1, T, d_model)
        mask = torch.tensor([[True] * (T - n_pad) + [False] * n_pad])
        nudged = x.clone()
        nudged[0, changed] += 0.1 * torch.randn(d_model)
        moved = (layer(nudged, mask)[0] - layer(x, mask)[0]).abs().amax(-1)[0]  # (T,)
        return int((moved > 1e-6).sum())

    return {"moved": _seeded(run)}


@computed
def embedding_scale(d_model: int, vocab: int) -> dict[str, Any]:
    """RMS of an entry of the package's ``Transformer`` embedding, without and with the factor
    sqrt(d_model), and of the sinusoidal encoding (chapter 7)."""
    from utils.positional import sinusoidal_encoding
    from utils.transformer import Transformer, TransformerConfig

    model = _seeded(lambda: Transformer(TransformerConfig(vocab, vocab, d_model=d_model, num_heads=1,
                                                          num_encoder_layers=1, num_decoder_layers=1,
                                                          d_ff=4)))
    rows = model.src_embed.weight.detach()[1:]  # row 0 is <pad>, kept at zero
    rms = float(rows.pow(2).mean().sqrt())
    return {"raw": rms, "scaled": rms * math.sqrt(d_model),
            "positions": float(sinusoidal_encoding(1000, d_model).pow(2).mean().sqrt())}


@computed
def feed_forward_shapes(B: int, T: int, d_model: int, d_ff: int) -> dict[str, Any]:
    """The hidden layer and output of the package's ``FeedForward`` (read with a forward hook)."""
    from utils.transformer import FeedForward

    def run():
        ffn = FeedForward(d_model, d_ff, dropout=0.0)
        seen = {}
        ffn.w_1.register_forward_hook(lambda m, i, o: seen.update(hidden=o.shape))
        out = ffn(torch.randn(B, T, d_model))
        return seen["hidden"], out.shape

    hidden, out = _seeded(run)
    return {"hidden": shape(hidden), "out": shape(out), "mixed": shape(B, T * d_ff), "square": shape(B, T, T)}


@computed
def gated_d_ff(d_model: int) -> dict[str, Any]:
    """The d_ff of a gated network (three bias-free d_model x d_ff matrices) whose parameter count
    matches the chapter's two matrices with d_ff = 4 d_model, biases left out (exercise 7.3)."""
    plain = 2 * nn.Linear(d_model, 4 * d_model, bias=False).weight.numel()
    per_unit = 3 * d_model  # W_G, W_1 and W_2 each add d_model numbers per hidden unit
    assert plain % per_unit == 0
    return {"d_ff": plain // per_unit, "plain": 4 * d_model}


# ---------------------------------------------------------------------------------------------------
# 8. The decoder and the full Transformer
# ---------------------------------------------------------------------------------------------------
@computed
def decoder_rows(N: int, steps: int) -> dict[str, Any]:
    """Rows that pass through the decoder blocks of an untrained package ``Transformer`` with N
    blocks when chapter 8's greedy loop (no cache) runs ``steps`` steps, counted with forward hooks."""
    from utils.transformer import Transformer, TransformerConfig

    def run():
        model = Transformer(TransformerConfig(12, 12, d_model=16, num_heads=2, num_encoder_layers=1,
                                              num_decoder_layers=N, d_ff=32, dropout=0.0)).eval()
        rows = [0]
        for layer in model.decoder.layers:
            layer.register_forward_hook(lambda m, i, o: rows.__setitem__(0, rows[0] + i[0].shape[1]))
        src = torch.tensor([[5, 6, 7, 8]])
        memory = model.encode(src)
        ys = torch.tensor([[model.config.bos_id]])
        for _ in range(steps):
            next_word = model.decode(ys, memory)[:, -1].argmax(-1, keepdim=True)
            ys = torch.cat([ys, next_word], dim=1)
        return rows[0]

    return {"rows": _seeded(run), "cached": N * steps, "one_block": steps * (steps + 1) // 2}


@computed
def label_smoothing_target(epsilon: float, V: int) -> dict[str, Any]:
    """The target distribution of ``F.cross_entropy(..., label_smoothing=epsilon)`` (what
    ``utils.translation.teacher_forcing_loss`` uses), read from its gradient: p - target."""
    logits = torch.zeros(1, V, dtype=torch.float64, requires_grad=True)
    F.cross_entropy(logits, torch.tensor([0]), label_smoothing=epsilon).backward()
    target = torch.softmax(logits.detach(), -1)[0] - logits.grad[0]
    return {"right": float(target[0]), "other": float(target[1]), "wrong_only": epsilon / (V - 1)}


def _length_penalty(length: int, alpha: float) -> float:
    """The penalty ``utils.translation.beam_search`` divides a finished hypothesis' score by."""
    return ((5 + torch.tensor(float(length))) / 6).pow(alpha).item()


@computed
def beam_choice(short_len: int, short_lp: float, long_len: int, long_lp: float,
                alpha: float) -> dict[str, Any]:
    """Which of two finished hypotheses beam search keeps, with the penalty and with alpha = 0."""
    short = short_lp / _length_penalty(short_len, alpha)
    long = long_lp / _length_penalty(long_len, alpha)
    return {"winner": "B" if long > short else "A", "winner_plain": "B" if long_lp > short_lp else "A",
            "short_score": short, "long_score": long, "penalty_long": _length_penalty(long_len, alpha)}


@computed
def cross_weights_shape(B: int, S: int, T: int, d_model: int, H: int, N: int) -> dict[str, Any]:
    """``Transformer.attention_weights(src, tgt_in)["cross"]`` of the package's model."""
    from utils.transformer import Transformer, TransformerConfig

    def run():
        model = Transformer(TransformerConfig(10, 10, d_model=d_model, num_heads=H, num_encoder_layers=N,
                                              num_decoder_layers=N, d_ff=2 * d_model)).eval()
        src, tgt = torch.randint(3, 10, (B, S)), torch.randint(3, 10, (B, T))
        return model.attention_weights(src, tgt)

    weights = _seeded(run)
    return {"cross": shape(weights["cross"].shape), "self": shape(weights["decoder_self"].shape),
            "transposed": shape(N, B, H, S, T), "one_layer": shape(B, H, T, S)}


@computed
def teacher_forcing_pair(short: Sequence[str], long: Sequence[str]) -> dict[str, Any]:
    """``utils.data.make_batch`` on two target sentences: ``tgt_in`` and ``tgt_out`` of the shorter one,
    as words, and what the named mistakes would make of them."""
    from utils.data import Pair, Vocab, make_batch

    vocab = Vocab(sorted(set(short) | set(long)))
    pairs = [Pair(tuple(short), tuple(short), tuple(range(len(short)))),
             Pair(tuple(long), tuple(long), tuple(range(len(long))))]
    batch = make_batch(pairs, vocab, vocab)

    def words(ids):
        return " ".join(vocab.itos[i] for i in ids.tolist())

    n, width = len(short), batch.tgt_out.shape[1]
    pad, eos = vocab.itos[vocab.pad_id], vocab.itos[vocab.eos_id]
    return {"tgt_in": words(batch.tgt_in[0]), "tgt_out": words(batch.tgt_out[0]),
            "eos_after_pad": " ".join(list(short) + [pad] * (width - n - 1) + [eos]),
            "eos_over_last": " ".join(list(short[:-1]) + [eos] + [pad] * (width - n))}


# ---------------------------------------------------------------------------------------------------
# 9. Where it goes next
# ---------------------------------------------------------------------------------------------------
@computed
def kv_cache_numbers(N: int, d_model: int, H: int, T: int) -> dict[str, Any]:
    """Numbers a ``utils.gpt.KVCache`` holds after ``forward_step`` has read T tokens of one sequence."""
    from utils.gpt import GPTConfig, TinyGPT, forward_step

    def run():
        model = TinyGPT(GPTConfig(vocab_size=16, d_model=d_model, num_heads=H, num_layers=N,
                                  d_ff=2 * d_model, max_len=T)).eval()
        _, cache = forward_step(model, torch.randint(3, 16, (1, T)))
        return sum(k.numel() + v.numel() for k, v in zip(cache.keys, cache.values, strict=True))

    return {"numbers": _seeded(run)}


@computed
def per_word_perplexity(token_ppl: float, tokens_per_word: float) -> dict[str, Any]:
    """Exercise 9.1: the loss per token times tokens per word is the loss per word; exponentiated."""
    loss_per_token = math.log(token_ppl)
    return {"per_word": math.exp(loss_per_token * tokens_per_word),
            "scaled": token_ppl * tokens_per_word}


@computed
def uniform_perplexity(V: int) -> dict[str, Any]:
    """The perplexity of uniform guessing: exp of ``F.cross_entropy`` on equal logits over V tokens."""
    logits = torch.zeros(7, V, dtype=torch.float64)
    return {"ppl": float(F.cross_entropy(logits, torch.arange(7) % V).exp())}


@computed
def nucleus_size(probs: Sequence[float], p: float) -> dict[str, Any]:
    """Tokens in the nucleus of ``probs`` for top-p (exercise 9.2): ranked from the most probable, a
    token is kept while the tokens above it hold less than p. The named mistake drops the one that
    reaches p."""
    ranked = torch.tensor(sorted(probs, reverse=True), dtype=torch.float64)
    above = ranked.cumsum(0) - ranked
    in_order = torch.tensor(probs, dtype=torch.float64)
    return {"kept": int((above < p).sum()), "dropped_reaching": int((ranked.cumsum(0) < p).sum()),
            "vocab_order": int(((in_order.cumsum(0) - in_order) < p).sum())}


@computed
def compressed_shapes(B: int, T_q: int, T_k: int, D: int, stride: int) -> dict[str, Any]:
    """Memory-compressed attention (exercise 9.3): keys averaged in groups of ``stride``, then the
    course's scaled dot-product attention; the weights' and outputs' shapes."""
    from utils.attention import scaled_dot_product_attention

    k = torch.zeros(B, T_k, D).view(B, T_k // stride, stride, D).mean(2)  # (B, T_k / stride, D)
    out, weights = scaled_dot_product_attention(torch.zeros(B, T_q, D), k, k)
    return {"weights": shape(weights.shape), "out": shape(out.shape), "full": shape(B, T_q, T_k),
            "queries_too": shape(B, T_q // stride, T_k // stride)}


@computed
def temperature_top1(scores: Sequence[float], tau: float) -> dict[str, Any]:
    """The probabilities top-1 filtering leaves at temperature tau (``utils.gpt.top_k_filter``)."""
    from utils.gpt import top_k_filter

    logits = torch.tensor([scores]) / tau
    probs = torch.softmax(top_k_filter(logits, 1), -1)[0]
    return {"p_best": float(probs.max()), "p_plain_best": float(torch.softmax(logits, -1).max())}


# ---------------------------------------------------------------------------------------------------
# 10. Lab: find the bug
# ---------------------------------------------------------------------------------------------------
@computed
def head_split_contents(T: int, d_model: int, H: int) -> dict[str, Any]:
    """What head 0 receives from ``torch.arange(T * d_model).view(1, T, d_model)``: the package's split
    (``MultiHeadAttention._split``) and the lab's named wrong splits."""
    from utils.attention import MultiHeadAttention

    d = d_model // H
    x = torch.arange(T * d_model).view(1, T, d_model)
    mha = _seeded(lambda: MultiHeadAttention(d_model, H))

    def show(t):
        return str(t.tolist())

    return {"right": show(mha._split(x)[0, 0]),
            "whole_tokens": show(x.view(1, H, T, d)[0, 0]),
            "in_turn": show(x.view(1, T, d, H).permute(0, 3, 1, 2)[0, 0]),
            "T": T, "C": d_model}


@computed
def unbiased_factor(d_model: int) -> dict[str, Any]:
    """The lab's layer norm with ``Tensor.var`` (divides by d_model - 1) against ``F.layer_norm``: the
    ratio of their outputs, the same for every token."""
    def run():
        x = torch.randn(64, d_model, dtype=torch.float64)
        centred = x - x.mean(-1, keepdim=True)
        buggy = centred / torch.sqrt(x.var(-1, keepdim=True) + 1e-12)
        right = F.layer_norm(x, (d_model,), eps=1e-12)
        return (buggy / right).mean()

    return {"factor": float(_seeded(run))}


@computed
def mask_after_softmax(scores: Sequence[float], hidden: int) -> dict[str, Any]:
    """Weights of ``scores`` with key ``hidden`` masked after the softmax (the lab's slip): the sum of
    the kept weights; masked before the softmax they sum to 1."""
    s = torch.tensor(scores, dtype=torch.float64)
    keep = torch.ones(len(s), dtype=torch.bool)
    keep[hidden] = False
    after = torch.softmax(s, -1) * keep
    before = _weights(s.masked_fill(~keep, float("-inf")).tolist())
    assert abs(float(before.sum()) - 1) < 1e-12
    return {"kept": float(after.sum()), "hidden_weight": float(torch.softmax(s, -1)[hidden])}


# ---------------------------------------------------------------------------------------------------
# 11. Lab: the ablation ladder
# ---------------------------------------------------------------------------------------------------
@computed
def mcnemar(gained: int, lost: int) -> dict[str, Any]:
    """Exercise 11.5: the exact two-sided McNemar (sign) test on the sentences two rungs disagree on."""
    n = gained + lost
    tail = sum(math.comb(n, i) for i in range(min(gained, lost) + 1)) / 2 ** n
    return {"p": min(1.0, 2 * tail), "one_sided": tail, "n": n}


@computed
def ladder_parameters(vocab: int, d_model: int, H: int, d_ff: int) -> dict[str, Any]:
    """``count_parameters`` of the package's ``Transformer`` with one and with two layers per stack."""
    from utils.train import count_parameters
    from utils.transformer import Transformer, TransformerConfig

    def size(n):
        return count_parameters(Transformer(TransformerConfig(vocab, vocab, d_model=d_model, num_heads=H,
                                                              num_encoder_layers=n, num_decoder_layers=n,
                                                              d_ff=d_ff)))

    one, two = _seeded(lambda: size(1)), _seeded(lambda: size(2))
    return {"one": one, "two": two, "added": two - one, "ratio": two / one}


# ---------------------------------------------------------------------------------------------------
# 12. BERT and the Vision Transformer
# ---------------------------------------------------------------------------------------------------
@computed
def masking_shares(rate: float, n_words: int) -> dict[str, Any]:
    """Exercise 12.1's two shares for ``utils.bert.mask_tokens`` at ``rate``: a chosen word becomes
    <mask> 80% of the time, a random word 10%, stays 10% (the function's fixed recipe, BERT's), checked
    against a large run of ``mask_tokens`` itself."""
    from utils.bert import BERTConfig, mask_tokens

    p_mask, p_random, p_keep = 0.8, 0.1, 0.1
    shown_mask = rate * p_mask
    original = p_keep + p_random / n_words
    config = BERTConfig(vocab_size=n_words + 3, cls_id=1, mask_id=2)
    words = torch.arange(3, n_words + 3)
    ids = words[torch.randint(n_words, (4000, 50), generator=torch.Generator().manual_seed(0))]
    inputs, targets = mask_tokens(ids, config, words, torch.Generator().manual_seed(1), rate)
    chosen = targets != -100
    assert abs(float((inputs == config.mask_id).float().mean()) - shown_mask) < 0.005
    assert abs(float((inputs[chosen] == ids[chosen]).float().mean()) - original) < 0.01
    return {"mask_share": shown_mask, "original_share": original, "keep_only": p_keep}


@computed
def vit_tokens(B: int, image_size: int, patch_size: int, channels: int, d_model: int) -> dict[str, Any]:
    """``VisionTransformer.tokens`` of the package: [CLS] and the patches, positions added."""
    from utils.vit import VisionTransformer, ViTConfig

    def run():
        model = VisionTransformer(ViTConfig(image_size=image_size, patch_size=patch_size, channels=channels,
                                            d_model=d_model, num_heads=2, num_layers=1, d_ff=8))
        return model.tokens(torch.randn(B, channels, image_size, image_size)).shape

    tokens = _seeded(run)
    r2 = (image_size // patch_size) ** 2
    return {"tokens": shape(tokens), "no_cls": shape(B, r2, d_model), "T": tokens[1],
            "pixels": shape(B, r2 + 1, channels * patch_size ** 2)}


@computed
def patch_shapes(B: int, channels: int, image_size: int, patch_size: int) -> dict[str, Any]:
    """``utils.vit.patchify`` and ``F.unfold``'s layout of the same patches."""
    from utils.vit import patchify

    images = torch.zeros(B, channels, image_size, image_size)
    return {"patches": shape(patchify(images, patch_size).shape),
            "unfold": shape(F.unfold(images, patch_size, stride=patch_size).shape),
            "no_channels": shape(B, (image_size // patch_size) ** 2, patch_size ** 2)}


@computed
def patch_embedding_parameters(channels: int, patch_size: int, d_model: int) -> dict[str, Any]:
    """``count_parameters`` of ``utils.vit.PatchEmbedding`` and of the equal convolution."""
    from utils.train import count_parameters
    from utils.vit import PatchEmbedding

    embedding = _seeded(lambda: PatchEmbedding(channels, patch_size, d_model))
    conv = embedding.as_conv()
    assert count_parameters(conv) == count_parameters(embedding)
    return {"params": count_parameters(embedding)}


@computed
def rollout(a0: Sequence[Sequence[float]], a1: Sequence[Sequence[float]], row: int,
            col: int) -> dict[str, Any]:
    """Attention rollout (exercise 12.4) of two layers whose head-averaged weights are a0, a1:
    R = (0.5 a1 + 0.5 I)(0.5 a0 + 0.5 I); and what the named mistakes give."""
    first, second = torch.tensor(a0, dtype=torch.float64), torch.tensor(a1, dtype=torch.float64)
    eye = torch.eye(len(first), dtype=torch.float64)
    hat0, hat1 = 0.5 * first + 0.5 * eye, 0.5 * second + 0.5 * eye
    r = hat1 @ hat0
    assert torch.allclose(r.sum(-1), torch.ones(len(r), dtype=torch.float64))
    return {"r": float(r[row, col]), "wrong_order": float((hat0 @ hat1)[row, col]),
            "no_identity": float((second @ first)[row, col])}


@computed
def mean_pool(values: Sequence[float], real: int) -> dict[str, Any]:
    """Exercise 12.3's mean over the real tokens of a one-feature sentence, and the named mistakes."""
    x = torch.tensor(values, dtype=torch.float64)
    return {"mean": float(x[:real].mean()), "with_padding": float(x.mean()),
            "sum_over_T": float(x[:real].sum() / len(x))}


# ---------------------------------------------------------------------------------------------------
# 13. A real translator: English to Chinese
# ---------------------------------------------------------------------------------------------------
def _bleu(output: str, references: Sequence[str]) -> Any:
    """sacrebleu's BLEU of one output against its references, as chapter 13 scores (``utils.bleu``:
    the ``zh`` tokenizer, one token per Chinese character and punctuation mark)."""
    from utils.bleu import corpus_bleu

    return corpus_bleu([output], [list(references)])


@computed
def half_output_bleu(reference: str) -> dict[str, Any]:
    """Exercise 13.1 on one sentence: the output is the first half of its only reference. BLEU's
    brevity penalty and unigram precision; the named mistake takes the penalty for the ratio c / r."""
    assert len(reference) % 2 == 0, "a reference of an even number of characters"
    output = reference[:len(reference) // 2]
    score = _bleu(output, [reference])
    return {"output": output, "bp": float(score.bp), "p1": score.precisions[0] / 100,
            "c": score.sys_len, "r": score.ref_len, "ratio": score.sys_len / score.ref_len}


@computed
def closest_reference_bp(c: int, lengths: Sequence[int]) -> dict[str, Any]:
    """The brevity penalty of an output of ``c`` characters against references of ``lengths``
    characters (sacrebleu takes the closest in length, the shorter on a tie), and what using the
    shortest or the longest reference alone would give."""
    text = "汤姆昨天买了一把伞" * (1 + max(c, *lengths) // 9)  # all Chinese: one token per character

    def score(lengths_used: Sequence[int]) -> Any:
        return _bleu(text[:c], [text[:n] for n in lengths_used])

    right = score(lengths)
    assert right.ref_len == min(lengths, key=lambda n: (abs(n - c), n))
    return {"bp": float(right.bp), "r": right.ref_len, "shortest": float(score([min(lengths)]).bp),
            "longest": float(score([max(lengths)]).bp)}


@computed
def clipped_unigrams(output: str, references: Sequence[str]) -> dict[str, Any]:
    """The output's characters BLEU counts as matched against several references (sacrebleu's clipped
    unigram count: each character at most its largest count in one reference), and what exercise
    13.3's named mistakes count: no clipping, the sum over the references, the first one only."""
    score = _bleu(output, references)
    have, counts = Counter(output), [Counter(r) for r in references]

    def matched(allowed: Callable[[str], int]) -> int:
        return sum(min(n, allowed(c)) for c, n in have.items())

    assert score.totals[0] == len(output)  # Chinese characters only: one token each
    assert score.counts[0] == matched(lambda c: max(r[c] for r in counts))
    return {"matched": int(score.counts[0]), "total": int(score.totals[0]),
            "unclipped": matched(lambda c: have[c] if any(r[c] for r in counts) else 0),
            "summed": matched(lambda c: sum(r[c] for r in counts)),
            "first_only": matched(lambda c: counts[0][c])}


@computed
def wu_length_penalty(n: int, alpha: float) -> dict[str, Any]:
    """Wu et al.'s lp(n) = ((5 + n) / 6) ** alpha, as ``utils.translation.beam_search`` divides by, and
    exercise 13.2's named mistakes: the length alone to the power alpha, (5 + n) / 5."""
    return {"lp": _length_penalty(n, alpha), "plain": float(n) ** alpha,
            "over_five": ((5 + n) / 5) ** alpha, "one_token": _length_penalty(1, alpha)}


@computed
def paired_bootstrap(n_sentences: int) -> dict[str, Any]:
    """``utils.bleu.bootstrap_bleu`` of two made-up translators on the same ``n_sentences`` references
    (random strings of Chinese characters): A replaces half of the characters at random, B is A with
    3% more replaced. Each score's interval, and the paired interval of A minus B; the separate
    intervals overlap, the paired one excludes 0."""
    from utils.bleu import bootstrap_bleu

    rng = random.Random(0)
    chars = [chr(0x4E00 + k) for k in range(300)]
    references = ["".join(rng.choice(chars) for _ in range(rng.randint(5, 14))) for _ in range(n_sentences)]

    def garble(text: str, share: float) -> str:
        return "".join(rng.choice(chars) if rng.random() < share else c for c in text)

    a = [garble(r, 0.5) for r in references]
    b = [garble(t, 0.03) for t in a]
    refs = [[r] for r in references]
    one, other = bootstrap_bleu(a, refs), bootstrap_bleu(b, refs)
    paired = bootstrap_bleu(a, refs, baseline=b)
    assert other.low < one.low <= other.high < one.high and paired.low > 0
    found: dict[str, Any] = {"confidence": one.confidence}
    for name, interval in (("a", one), ("b", other), ("diff", paired)):
        found |= {name: interval.estimate, f"{name}_low": interval.low, f"{name}_high": interval.high}
    return found
