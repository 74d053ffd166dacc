"""Tests for utils/attention.py against PyTorch: F.scaled_dot_product_attention, nn.MultiheadAttention.

Every function and every error message of the module is exercised. Tolerances are tight (float32,
atol 1e-6 on weights and 1e-5 on outputs); masks follow the course contract, True = may attend, and
PyTorch's nn.MultiheadAttention gets ``~mask`` because there True means masked out.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from utils.attention import (
    AdditiveScore,
    MultiHeadAttention,
    SelfAttention,
    SingleHeadAttention,
    causal_mask,
    check_mask_rows,
    copy_from_torch_mha,
    cosine_scores,
    dot_scores,
    scaled_dot_product_attention,
    scaled_dot_scores,
)

B, H, T_Q, T_K, D = 3, 2, 5, 7, 4


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def _key_mask(lengths: list[int], t: int) -> torch.Tensor:
    """(B, T) bool, True at the first lengths[b] positions of example b."""
    return torch.arange(t)[None, :] < torch.tensor(lengths)[:, None]


def _close(a: torch.Tensor, b: torch.Tensor, atol: float = 1e-5) -> None:
    torch.testing.assert_close(a, b, atol=atol, rtol=1e-5)


# ---------------------------------------------------------------------------------------------------
# causal_mask
# ---------------------------------------------------------------------------------------------------
def test_causal_mask_values():
    expected = torch.tensor([[1, 0, 0], [1, 1, 0], [1, 1, 1]], dtype=torch.bool)
    assert torch.equal(causal_mask(3), expected)
    assert causal_mask(1).dtype == torch.bool and causal_mask(1).item() is True
    assert causal_mask(4, device="meta").device.type == "meta"  # made where it is asked for


def test_causal_mask_error():
    with pytest.raises(ValueError, match="sequence length must be at least 1, got 0"):
        causal_mask(0)


# ---------------------------------------------------------------------------------------------------
# Score functions
# ---------------------------------------------------------------------------------------------------
def test_dot_and_scaled_dot_scores():
    q, k = torch.randn(B, T_Q, D), torch.randn(B, T_K, D)
    expected = torch.einsum("bqd,bkd->bqk", q, k)
    _close(dot_scores(q, k), expected)
    _close(scaled_dot_scores(q, k), expected / math.sqrt(D))
    assert dot_scores(q, k).shape == (B, T_Q, T_K)


def test_cosine_scores_match_torch_and_are_bounded():
    q, k = torch.randn(T_Q, D), torch.randn(T_K, D)
    expected = F.cosine_similarity(q[:, None, :], k[None, :, :], dim=-1)  # (T_q, T_k)
    _close(cosine_scores(q, k), expected)
    assert cosine_scores(q, k).abs().max() <= 1.0 + 1e-6
    assert cosine_scores(q, 3.0 * q).diagonal().sub(1).abs().max() < 1e-6  # scale does not matter
    assert torch.isfinite(cosine_scores(torch.zeros(2, D), k)).all()  # eps guards a zero vector


def test_cosine_scores_with_batch_dims():
    q, k = torch.randn(B, T_Q, D), torch.randn(B, T_K, D)  # norms over the features, not the tokens
    expected = F.cosine_similarity(q[:, :, None, :], k[:, None, :, :], dim=-1)  # (B, T_q, T_k)
    _close(cosine_scores(q, k), expected)


def test_additive_score_matches_its_formula():
    score = AdditiveScore(d_q=3, d_k=5, d_hidden=6)
    q, k = torch.randn(B, T_Q, 3), torch.randn(B, T_K, 5)
    out = score(q, k)
    assert out.shape == (B, T_Q, T_K)
    w_q, w_k, w = score.w_q.weight, score.w_k.weight, score.w.weight[0]  # (6, 3), (6, 5), (6,)
    for b in range(B):
        for i in range(T_Q):
            for j in range(T_K):
                expected = w @ torch.tanh(w_q @ q[b, i] + w_k @ k[b, j])
                _close(out[b, i, j], expected)
    assert all(layer.bias is None for layer in (score.w_q, score.w_k, score.w))  # no biases, as in the paper


@pytest.mark.parametrize("batch", [(), (B, H)])
def test_additive_score_takes_any_leading_dims(batch):
    score = AdditiveScore(d_q=3, d_k=5, d_hidden=6)
    q, k = torch.randn(*batch, T_Q, 3), torch.randn(*batch, T_K, 5)
    out = score(q, k)
    assert out.shape == (*batch, T_Q, T_K)
    flat = score(q.reshape(-1, T_Q, 3), k.reshape(-1, T_K, 5))  # the 3-D case checked above
    _close(out.reshape(-1, T_Q, T_K), flat)


# ---------------------------------------------------------------------------------------------------
# scaled_dot_product_attention against F.scaled_dot_product_attention
# ---------------------------------------------------------------------------------------------------
def test_sdpa_matches_torch_without_mask():
    q, k, v = torch.randn(B, H, T_Q, D), torch.randn(B, H, T_K, D), torch.randn(B, H, T_K, 6)
    out, weights = scaled_dot_product_attention(q, k, v)
    assert out.shape == (B, H, T_Q, 6) and weights.shape == (B, H, T_Q, T_K)
    _close(out, F.scaled_dot_product_attention(q, k, v))
    _close(weights.sum(-1), torch.ones(B, H, T_Q), atol=1e-6)
    _close(weights, torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(D), dim=-1), atol=1e-6)


@pytest.mark.parametrize("mask_shape", [(T_Q, T_K), (B, 1, T_Q, T_K), (B, H, T_Q, T_K), (B, 1, 1, T_K)])
def test_sdpa_matches_torch_with_bool_masks(mask_shape):
    q, k, v = torch.randn(B, H, T_Q, D), torch.randn(B, H, T_K, D), torch.randn(B, H, T_K, D)
    mask = torch.rand(mask_shape) > 0.4
    mask[..., 0] = True  # every query keeps at least one key
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    _close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask))
    assert torch.all(weights.masked_select(~mask.expand_as(weights)) == 0)


def test_sdpa_causal_matches_torch_is_causal():
    q, k, v = torch.randn(B, H, T_K, D), torch.randn(B, H, T_K, D), torch.randn(B, H, T_K, D)
    out, weights = scaled_dot_product_attention(q, k, v, causal_mask(T_K))
    _close(out, F.scaled_dot_product_attention(q, k, v, is_causal=True))
    assert torch.equal(weights.triu(1), torch.zeros_like(weights))


def test_sdpa_works_without_batch_dims_and_with_three_dims():
    q, k, v = torch.randn(T_Q, D), torch.randn(T_K, D), torch.randn(T_K, D)
    out, _ = scaled_dot_product_attention(q, k, v)
    _close(out, F.scaled_dot_product_attention(q[None], k[None], v[None])[0])
    out3, _ = scaled_dot_product_attention(q[None].expand(B, -1, -1), k[None].expand(B, -1, -1),
                                           v[None].expand(B, -1, -1))
    _close(out3, out.expand(B, -1, -1))


def test_sdpa_two_dim_mask_broadcasts_over_batch_and_heads():
    """A (T_q, T_k) mask must act on every example and every head alike (a bug peers shipped)."""
    q, k, v = torch.randn(B, H, T_Q, D), torch.randn(B, H, T_K, D), torch.randn(B, H, T_K, D)
    mask = torch.rand(T_Q, T_K) > 0.5
    mask[:, 2] = True
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    full_out, full_weights = scaled_dot_product_attention(q, k, v, mask.expand(B, H, T_Q, T_K))
    assert torch.equal(out, full_out) and torch.equal(weights, full_weights)
    for b in range(B):
        for h in range(H):
            one, _ = scaled_dot_product_attention(q[b, h], k[b, h], v[b, h], mask)
            _close(out[b, h], one)
            assert torch.equal(weights[b, h] > 0, mask)


def test_sdpa_key_mask_affects_only_its_own_example():
    q, k, v = torch.randn(B, H, T_Q, D), torch.randn(B, H, T_K, D), torch.randn(B, H, T_K, D)
    key_mask = _key_mask([T_K, 3, T_K], T_K)  # only example 1 has padding
    out, _ = scaled_dot_product_attention(q, k, v, key_mask[:, None, None, :])  # (B, 1, 1, T_k)
    free, _ = scaled_dot_product_attention(q, k, v)
    _close(out[0], free[0])
    _close(out[2], free[2])
    short, _ = scaled_dot_product_attention(q[1], k[1, :, :3], v[1, :, :3])  # padding cut off
    _close(out[1], short)


def test_sdpa_dropout_on_weights():
    q, k, v = torch.randn(2, 4, D), torch.randn(2, 6, D), torch.randn(2, 6, D)
    torch.manual_seed(1)
    _, dropped = scaled_dot_product_attention(q, k, v, dropout_p=0.5)
    _, weights = scaled_dot_product_attention(q, k, v)
    kept = dropped != 0
    assert (~kept).any()
    _close(dropped[kept], 2.0 * weights[kept])  # survivors are rescaled by 1 / (1 - p)
    torch.manual_seed(1)
    _, dropped = scaled_dot_product_attention(q, k, v, dropout_p=0.2)
    kept = dropped != 0
    _close(dropped[kept], weights[kept] / 0.8)  # p is the asked-for 0.2, not some default


def test_sdpa_errors():
    q, k, v = torch.randn(B, T_Q, D), torch.randn(B, T_K, D), torch.randn(B, T_K, D)
    with pytest.raises(ValueError, match=r"need at least 2 dims \(\.\.\., T, d\)"):
        scaled_dot_product_attention(torch.randn(D), k, v)
    with pytest.raises(ValueError, match=r"need at least 2 dims \(\.\.\., T, d\); got .*, \(4,\)$"):
        scaled_dot_product_attention(q, k, torch.randn(D))  # each of q, k, v is checked
    with pytest.raises(ValueError, match="same size d_k to be compared: q has 4, k has 3"):
        scaled_dot_product_attention(q, torch.randn(B, T_K, 3), v)
    with pytest.raises(ValueError, match="every key needs a value: k has T_k=7 rows, v has 6"):
        scaled_dot_product_attention(q, k, torch.randn(B, 6, D))
    with pytest.raises(TypeError, match="mask must be a torch.bool tensor, got list"):
        scaled_dot_product_attention(q, k, v, [[True] * T_K] * T_Q)
    with pytest.raises(TypeError, match=r"dtype torch.bool \(True = may attend\), got torch.float32; build "
                                        r"it with a comparison such as `ids != pad_id`$"):
        scaled_dot_product_attention(q, k, v, torch.zeros(T_Q, T_K))
    with pytest.raises(ValueError, match=r"shape \(3, 7\) does not broadcast to the attention scores "
                                         r"\(3, 5, 7\).*needs reshaping to \(B, 1, T_k\) or \(B, 1, 1, T_k\) "
                                         r"first$"):
        scaled_dot_product_attention(q, k, v, torch.ones(B, T_K, dtype=torch.bool))
    empty_row = torch.ones(T_Q, T_K, dtype=torch.bool)
    empty_row[2] = False
    with pytest.raises(ValueError, match=r"attend to no key at all \(a mask row is all False\)"):
        scaled_dot_product_attention(q, k, v, empty_row)


def test_check_mask_rows_names_the_first_empty_row():
    check_mask_rows(torch.tensor([[True, False], [False, True]]))  # every row attends somewhere
    mask = torch.ones(2, 3, 4, dtype=torch.bool)
    mask[1, 2] = False
    mask[1, 0] = False
    with pytest.raises(ValueError, match=r"^some query may attend to no key at all \(a mask row is all "
                                         r"False\), first at key_mask\[1, 0\]: its softmax would be 0/0; "
                                         r"check that padding is marked False only on the key side and that "
                                         r"every sequence has at least one real token$"):
        check_mask_rows(mask, "key_mask")
    with pytest.raises(ValueError, match=r"first at mask: .*at least one real token$"):
        check_mask_rows(torch.zeros(3, dtype=torch.bool))  # one row, no index to give


# ---------------------------------------------------------------------------------------------------
# SingleHeadAttention and SelfAttention
# ---------------------------------------------------------------------------------------------------
def test_single_head_attention_matches_torch():
    layer = SingleHeadAttention(d_model=6, d_k=4, d_v=5, d_kv=3)
    query, memory = torch.randn(B, T_Q, 6), torch.randn(B, T_K, 3)
    mask = _key_mask([7, 4, 2], T_K)[:, None, :]  # (B, 1, T_k)
    out, weights = layer(query, memory, mask)
    assert out.shape == (B, T_Q, 5) and weights.shape == (B, T_Q, T_K)
    q, k, v = query @ layer.w_q.weight.T, memory @ layer.w_k.weight.T, memory @ layer.w_v.weight.T
    _close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask))
    projections = (layer.w_q, layer.w_k, layer.w_v)
    assert [(p.in_features, p.out_features) for p in projections] == [(6, 4), (3, 4), (3, 5)]
    assert all(p.bias is None for p in projections)
    with_bias = SingleHeadAttention(4, bias=True)
    assert all(p.bias is not None for p in (with_bias.w_q, with_bias.w_k, with_bias.w_v))


def test_single_head_defaults_to_d_model():
    layer = SingleHeadAttention(8)
    assert (layer.d_k, layer.d_v, layer.w_k.in_features) == (8, 8, 8)


def test_self_attention_is_single_head_attention_on_itself():
    layer = SelfAttention(d_model=6, d_k=4)
    x = torch.randn(B, T_K, 6)
    out, weights = layer(x, causal_mask(T_K))
    q, k, v = layer.w_q(x), layer.w_k(x), layer.w_v(x)
    _close(out, F.scaled_dot_product_attention(q, k, v, is_causal=True))
    assert out.shape == (B, T_K, 6) and weights.shape == (B, T_K, T_K)
    base_out, _ = SingleHeadAttention.forward(layer, x, x, causal_mask(T_K))
    assert torch.equal(out, base_out)
    assert torch.allclose(weights.triu(1), torch.zeros(B, T_K, T_K))  # the mask reached the softmax


def test_self_attention_sizes_and_biases():
    layer = SelfAttention(d_model=6, d_k=4, d_v=5)
    projections = (layer.w_q, layer.w_k, layer.w_v)
    assert (layer.d_model, layer.d_k, layer.d_v) == (6, 4, 5)
    assert [(p.in_features, p.out_features) for p in projections] == [(6, 4), (6, 4), (6, 5)]
    assert all(p.bias is None for p in projections)
    biased = SelfAttention(6, bias=True)
    assert all(p.bias is not None for p in (biased.w_q, biased.w_k, biased.w_v))


def test_self_attention_is_permutation_equivariant():
    layer = SelfAttention(d_model=6)
    x = torch.randn(1, T_K, 6)
    perm = torch.randperm(T_K)
    out, weights = layer(x)
    out_p, weights_p = layer(x[:, perm])
    _close(out_p, out[:, perm])
    _close(weights_p, weights[:, perm][:, :, perm])


def test_single_head_input_errors():
    layer = SingleHeadAttention(d_model=6, d_kv=3)
    with pytest.raises(ValueError, match=r"query must be \(batch, seq_len, 6\), got \(5, 6\)"):
        layer(torch.randn(5, 6), torch.randn(1, 4, 3))
    with pytest.raises(ValueError, match=r"memory must have 3 features in its last dim, got 6"):
        layer(torch.randn(1, 5, 6), torch.randn(1, 4, 6))
    with pytest.raises(ValueError, match=r"query must be \(batch, seq_len, 6\), got list"):
        layer([[1.0]], torch.randn(1, 4, 3))
    with pytest.raises(ValueError, match=r"x must|query must"):
        SelfAttention(6)(torch.randn(2, 5, 4))


# ---------------------------------------------------------------------------------------------------
# MultiHeadAttention against nn.MultiheadAttention
# ---------------------------------------------------------------------------------------------------
def _pair(d_model: int = 8, num_heads: int = 2, bias: bool = True):
    theirs = nn.MultiheadAttention(d_model, num_heads, bias=bias, batch_first=True)
    if bias:  # PyTorch initialises the biases to zero; make them matter
        nn.init.normal_(theirs.in_proj_bias)
        nn.init.normal_(theirs.out_proj.bias)
    ours = MultiHeadAttention(d_model, num_heads, bias=bias)
    copy_from_torch_mha(ours, theirs)
    return ours.eval(), theirs.eval()


@pytest.mark.parametrize("bias", [True, False])
def test_mha_matches_torch_without_masks(bias):
    ours, theirs = _pair(bias=bias)
    query, memory = torch.randn(B, T_Q, 8), torch.randn(B, T_K, 8)
    out, weights = ours(query, memory, memory, need_weights=True)
    ref, ref_weights = theirs(query, memory, memory, need_weights=True, average_attn_weights=False)
    assert out.shape == (B, T_Q, 8) and weights.shape == (B, 2, T_Q, T_K)
    _close(out, ref)
    _close(weights, ref_weights, atol=1e-6)


def test_mha_matches_torch_with_key_padding_mask():
    ours, theirs = _pair(num_heads=4)
    query, memory = torch.randn(B, T_Q, 8), torch.randn(B, T_K, 8)
    key_mask = _key_mask([7, 3, 5], T_K)
    out, weights = ours(query, memory, memory, key_mask=key_mask, need_weights=True)
    ref, ref_weights = theirs(query, memory, memory, key_padding_mask=~key_mask,
                              average_attn_weights=False)
    _close(out, ref)
    _close(weights, ref_weights, atol=1e-6)


def test_mha_matches_torch_with_causal_and_key_padding_masks():
    ours, theirs = _pair()
    x = torch.randn(B, T_K, 8)
    key_mask = _key_mask([7, 4, 1], T_K)
    out, weights = ours(x, x, x, key_mask=key_mask, attn_mask=causal_mask(T_K), need_weights=True)
    ref, ref_weights = theirs(x, x, x, key_padding_mask=~key_mask, attn_mask=~causal_mask(T_K),
                              average_attn_weights=False)
    _close(out, ref)
    _close(weights, ref_weights, atol=1e-6)


def test_mha_matches_torch_with_a_per_example_attention_mask():
    ours, theirs = _pair(num_heads=2)
    query, memory = torch.randn(B, T_Q, 8), torch.randn(B, T_K, 8)
    mask = torch.rand(B, T_Q, T_K) > 0.5
    mask[..., 0] = True
    out, _ = ours(query, memory, memory, attn_mask=mask)
    # PyTorch wants a 3-D mask as (B * H, T_q, T_k), True = masked
    ref, _ = theirs(query, memory, memory, attn_mask=(~mask).repeat_interleave(2, dim=0))
    _close(out, ref)


def test_mha_two_dim_attn_mask_broadcasts_over_batch_and_heads():
    ours, _ = _pair(num_heads=2)
    query, memory = torch.randn(B, T_Q, 8), torch.randn(B, T_K, 8)
    mask = torch.rand(T_Q, T_K) > 0.5
    mask[:, 1] = True
    out, weights = ours(query, memory, memory, attn_mask=mask, need_weights=True)
    out_3d, weights_3d = ours(query, memory, memory, attn_mask=mask.expand(B, T_Q, T_K), need_weights=True)
    _close(out, out_3d, atol=1e-6)
    for b in range(B):
        alone, alone_weights = ours(query[b:b + 1], memory[b:b + 1], memory[b:b + 1], attn_mask=mask,
                                    need_weights=True)
        _close(out[b:b + 1], alone)
        for h in range(2):
            assert torch.equal(weights[b, h] > 0, mask)  # the same mask on every example and head
            _close(weights[b, h], alone_weights[0, h], atol=1e-6)


def test_mha_key_mask_affects_only_its_own_example():
    ours, _ = _pair()
    query, memory = torch.randn(B, T_Q, 8), torch.randn(B, T_K, 8)
    key_mask = _key_mask([T_K, 2, T_K], T_K)  # only example 1 is padded
    out, _ = ours(query, memory, memory, key_mask=key_mask)
    free, _ = ours(query, memory, memory)
    _close(out[[0, 2]], free[[0, 2]])
    assert not torch.allclose(out[1], free[1])
    short, _ = ours(query[1:2], memory[1:2, :2], memory[1:2, :2])  # the padding cut off
    _close(out[1:2], short)
    scrambled = memory.clone()
    scrambled[1, 2:] = 100.0 * torch.randn(T_K - 2, 8)  # what sits under the padding does not matter
    out_scrambled, _ = ours(query, scrambled, scrambled, key_mask=key_mask)
    _close(out_scrambled, out)


def test_mha_equals_separate_heads_concatenated():
    ours, _ = _pair(num_heads=2)
    x = torch.randn(B, T_K, 8)
    out, _ = ours(x, x, x)
    heads = []
    for h in range(2):
        cols = slice(4 * h, 4 * (h + 1))
        q = x @ ours.w_q.weight[cols].T + ours.w_q.bias[cols]
        k = x @ ours.w_k.weight[cols].T + ours.w_k.bias[cols]
        v = x @ ours.w_v.weight[cols].T + ours.w_v.bias[cols]
        heads.append(F.scaled_dot_product_attention(q, k, v))
    _close(out, ours.w_o(torch.cat(heads, dim=-1)))


def test_mha_need_weights_false_and_dropout():
    ours = MultiHeadAttention(8, 2, dropout=0.5)
    x = torch.randn(B, T_K, 8)
    ours.eval()
    out_a, none = ours(x, x, x)
    assert none is None
    out_b, _ = ours(x, x, x)
    assert torch.equal(out_a, out_b)  # no dropout in eval mode
    ours.train()
    out_c, weights = ours(x, x, x, need_weights=True)
    assert (weights == 0).any() and not torch.allclose(out_c, out_a)


def test_mha_with_one_head_is_single_head_attention_plus_w_o():
    mha = MultiHeadAttention(8, 1, bias=False)
    single = SingleHeadAttention(8)
    for name in ("w_q", "w_k", "w_v"):
        getattr(single, name).load_state_dict(getattr(mha, name).state_dict())
    x, y = torch.randn(B, T_Q, 8), torch.randn(B, T_K, 8)
    _close(mha(x, y, y)[0], mha.w_o(single(x, y)[0]))
    assert all(p.bias is None for p in (mha.w_q, mha.w_k, mha.w_v, mha.w_o))
    assert MultiHeadAttention(8, 2).dropout == 0.0  # no dropout unless asked for


def test_mha_errors():
    with pytest.raises(ValueError, match="divisible by num_heads.*d_model=10, num_heads=3"):
        MultiHeadAttention(10, 3)
    with pytest.raises(ValueError, match="d_model=8, num_heads=0"):
        MultiHeadAttention(8, 0)
    with pytest.raises(ValueError, match=r"^query must be \(batch, seq_len, 8\), got \(5, 8\)$"):
        MultiHeadAttention(8, 2)(torch.randn(T_Q, 8), torch.randn(B, T_K, 8), torch.randn(B, T_K, 8))
    mha = MultiHeadAttention(8, 2)
    x, y = torch.randn(B, T_Q, 8), torch.randn(B, T_K, 8)
    with pytest.raises(ValueError, match=r"key must be \(batch, seq_len, 8\)"):
        mha(x, torch.randn(T_K, 8), y)
    with pytest.raises(ValueError, match="value must have 8 features in its last dim, got 6"):
        mha(x, y, torch.randn(B, T_K, 6))
    with pytest.raises(ValueError, match="must share the batch size"):
        mha(x, y, torch.randn(B, T_K + 1, 8))
    with pytest.raises(ValueError, match="must share the batch size"):
        mha(x, torch.randn(B + 1, T_K, 8), torch.randn(B + 1, T_K, 8))
    with pytest.raises(ValueError, match=r"key_mask must be \(B, T_k\) = \(3, 7\), got \(7,\)"):
        mha(x, y, y, key_mask=torch.ones(T_K, dtype=torch.bool))
    with pytest.raises(ValueError, match="key_mask of shape .* does not broadcast"):
        mha(x, y, y, key_mask=torch.ones(B, T_Q, dtype=torch.bool))
    with pytest.raises(TypeError, match="key_mask must have dtype torch.bool"):
        mha(x, y, y, key_mask=torch.ones(B, T_K))
    with pytest.raises(ValueError, match=r"attn_mask must be \(T_q, T_k\) = \(5, 7\) or \(B, T_q, T_k\)"):
        mha(x, y, y, attn_mask=torch.ones(T_K, T_Q, dtype=torch.bool))
    with pytest.raises(ValueError, match="attn_mask must be"):
        mha(x, y, y, attn_mask=torch.ones(B, 2, T_Q, T_K, dtype=torch.bool))
    with pytest.raises(TypeError, match=r"attn_mask must have dtype torch.bool"):
        mha(x, y, y, attn_mask=torch.zeros(T_Q, T_K))  # an additive float mask is not the contract
    with pytest.raises(TypeError, match="attn_mask must be a torch.bool tensor, got list"):
        mha(x, y, y, attn_mask=[[True] * T_K] * T_Q)
    with pytest.raises(ValueError, match="3-D attn_mask must be"):
        mha(x, y, y, attn_mask=torch.ones(B + 1, T_Q, T_K, dtype=torch.bool))
    row = torch.ones(T_Q, T_K, dtype=torch.bool)
    row[0] = False
    with pytest.raises(ValueError, match="attend to no key at all"):
        mha(x, y, y, attn_mask=row)


# ---------------------------------------------------------------------------------------------------
# copy_from_torch_mha
# ---------------------------------------------------------------------------------------------------
def test_copy_from_torch_mha_copies_every_weight():
    ours, theirs = _pair()
    w = torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight])
    assert torch.equal(w, theirs.in_proj_weight)
    assert torch.equal(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]), theirs.in_proj_bias)
    assert torch.equal(ours.w_o.weight, theirs.out_proj.weight)
    assert torch.equal(ours.w_o.bias, theirs.out_proj.bias)


def test_copy_from_torch_mha_errors():
    with pytest.raises(ValueError, match="sizes differ: ours d_model=8, num_heads=2; theirs embed_dim=8, "
                                         "num_heads=4"):
        copy_from_torch_mha(MultiHeadAttention(8, 2), nn.MultiheadAttention(8, 4))
    with pytest.raises(ValueError, match="separate kdim/vdim is not supported"):
        copy_from_torch_mha(MultiHeadAttention(8, 2), nn.MultiheadAttention(8, 2, kdim=4, vdim=4))
    with pytest.raises(ValueError, match="one module has biases and the other has not"):
        copy_from_torch_mha(MultiHeadAttention(8, 2, bias=False), nn.MultiheadAttention(8, 2))


# ---------------------------------------------------------------------------------------------------
# Masks that would silently change the output's shape
# ---------------------------------------------------------------------------------------------------
def test_sdpa_refuses_a_mask_that_would_enlarge_the_scores():
    q, k, v = torch.randn(H, T_Q, D), torch.randn(H, T_K, D), torch.randn(H, T_K, D)  # no batch axis
    with pytest.raises(ValueError, match=r"^mask of shape \(3, 1, 5, 7\) would enlarge the scores "
                                         r"\(2, 5, 7\) \(it has more or longer leading dims\); give it at "
                                         r"most the scores' dims, e\.g\. \(B, 1, T_q, T_k\) for "
                                         r"\(B, H, T_q, T_k\) scores$"):
        scaled_dot_product_attention(q, k, v, torch.ones(B, 1, T_Q, T_K, dtype=torch.bool))
    with pytest.raises(ValueError, match="would enlarge the scores"):  # (B, 1) against (1, H): (B, H)
        scaled_dot_product_attention(q[None], k[None], v[None], torch.ones(B, 1, T_Q, T_K, dtype=torch.bool))


def test_mha_refuses_pytorchs_batch_times_heads_mask_layout():
    mha = MultiHeadAttention(8, 2)
    x = torch.randn(1, T_Q, 8)  # B = 1: a (B * H, T, T) mask would otherwise broadcast to (H, H, T, T)
    with pytest.raises(ValueError, match=r"3-D attn_mask must be \(B, T_q, T_k\) with B=1, got \(2, 5, 5\)"):
        mha(x, x, x, attn_mask=torch.ones(2, T_Q, T_Q, dtype=torch.bool))
    x3 = torch.randn(3, T_Q, 8)
    with pytest.raises(ValueError, match=r"with B=3, got \(6, 5, 5\); the \(B \* H, T_q, T_k\) layout of "
                                         r"nn\.MultiheadAttention is not used here$"):
        mha(x3, x3, x3, attn_mask=torch.ones(6, T_Q, T_Q, dtype=torch.bool))
    out, _ = mha(x3, x3, x3, attn_mask=torch.ones(1, T_Q, T_Q, dtype=torch.bool))  # a batch of 1 broadcasts
    assert out.shape == (3, T_Q, 8)
