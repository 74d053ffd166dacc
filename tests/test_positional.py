"""Tests for utils/positional.py: exact values of the sinusoidal table, the modules, RoPE, errors."""

from __future__ import annotations

import math

import pytest
import torch

from utils.positional import (
    LearnedPositionalEncoding,
    SinusoidalPositionalEncoding,
    apply_rotary,
    frequencies,
    relative_shift_matrix,
    sinusoidal_encoding,
)


# ---------------------------------------------------------------------------------------------------
# sinusoidal_encoding and frequencies
# ---------------------------------------------------------------------------------------------------
def test_sinusoidal_matches_the_formula_entry_by_entry():
    max_len, d_model = 12, 6
    pe = sinusoidal_encoding(max_len, d_model)
    assert pe.shape == (max_len, d_model) and pe.dtype == torch.float32
    for pos in range(max_len):
        for i in range(d_model // 2):
            angle = pos / 10000 ** (2 * i / d_model)
            assert pe[pos, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-6)
            assert pe[pos, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-6)


def test_position_zero_is_zeros_and_ones_and_values_are_bounded():
    pe = sinusoidal_encoding(200, 32)
    assert torch.equal(pe[0, 0::2], torch.zeros(16))
    assert torch.equal(pe[0, 1::2], torch.ones(16))
    assert pe.abs().max() <= 1.0


def test_every_position_has_a_distinct_encoding():
    pe = sinusoidal_encoding(256, 16)
    dist = torch.cdist(pe, pe) + torch.eye(256) * 1e9
    assert dist.min() > 1e-2


def test_frequencies_decrease_geometrically_from_one():
    w = frequencies(8)
    assert w.shape == (4,)
    expected = torch.tensor([1.0, 10000 ** -0.25, 10000 ** -0.5, 10000 ** -0.75], dtype=torch.float64)
    torch.testing.assert_close(w, expected)


def test_custom_base():
    pe = sinusoidal_encoding(5, 4, base=100.0)
    assert pe[3, 2].item() == pytest.approx(math.sin(3 / 100 ** 0.5), abs=1e-6)


@pytest.mark.parametrize("d_model", [0, -2, 7])
def test_bad_d_model_is_refused(d_model):
    with pytest.raises(ValueError, match="d_model must be"):
        sinusoidal_encoding(10, d_model)


def test_odd_d_model_message_explains_the_pairs():
    with pytest.raises(ValueError, match=r"even: sin and cos fill the feature pairs.*d_model=5"):
        sinusoidal_encoding(10, 5)


@pytest.mark.parametrize("max_len", [0, -1, 2.5])
def test_bad_max_len_is_refused(max_len):
    with pytest.raises(ValueError, match="max_len must be a positive int"):
        sinusoidal_encoding(max_len, 8)


# ---------------------------------------------------------------------------------------------------
# relative_shift_matrix
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [0, 1, 5, -3])
def test_shift_matrix_moves_every_position_by_k(k):
    d_model, n = 16, 40
    pe = sinusoidal_encoding(n + 10, d_model)
    m_k = relative_shift_matrix(k, d_model)
    start = max(0, -k)
    shifted = pe[start:n] @ m_k  # (n - start, C) @ (C, C)
    torch.testing.assert_close(shifted, pe[start + k:n + k], atol=1e-5, rtol=0)


def test_shift_matrix_is_block_diagonal_orthogonal_and_composes():
    m2, m3, m5 = (relative_shift_matrix(k, 8) for k in (2, 3, 5))
    torch.testing.assert_close(m2 @ m2.T, torch.eye(8), atol=1e-6, rtol=0)
    torch.testing.assert_close(m2 @ m3, m5, atol=1e-6, rtol=0)
    off_block = m5.clone()
    for i in range(0, 8, 2):
        off_block[i:i + 2, i:i + 2] = 0
    assert torch.equal(off_block, torch.zeros(8, 8))
    torch.testing.assert_close(relative_shift_matrix(0, 8), torch.eye(8))


def test_shift_matrix_with_a_custom_base():
    pe = sinusoidal_encoding(20, 8, base=100.0)
    m_3 = relative_shift_matrix(3, 8, base=100.0)
    torch.testing.assert_close(pe[:17] @ m_3, pe[3:], atol=1e-5, rtol=0)


def test_shift_matrix_errors():
    with pytest.raises(ValueError, match="the offset k must be an int"):
        relative_shift_matrix(1.5, 8)
    with pytest.raises(ValueError, match="d_model must be even"):
        relative_shift_matrix(1, 9)


# ---------------------------------------------------------------------------------------------------
# SinusoidalPositionalEncoding
# ---------------------------------------------------------------------------------------------------
def test_sinusoidal_module_adds_the_table_to_every_example():
    torch.manual_seed(0)
    module = SinusoidalPositionalEncoding(8, max_len=20)
    x = torch.randn(3, 7, 8)
    out = module(x)
    assert out.shape == (3, 7, 8)
    torch.testing.assert_close(out, x + sinusoidal_encoding(7, 8)[None])


def test_sinusoidal_module_has_no_parameters_and_no_state():
    module = SinusoidalPositionalEncoding(8, max_len=20)
    assert list(module.parameters()) == []
    assert "pe" not in module.state_dict()
    assert module.pe.shape == (20, 8)


def test_sinusoidal_module_offset_and_extrapolation_past_max_len():
    module = SinusoidalPositionalEncoding(8, max_len=10)
    full = sinusoidal_encoding(30, 8)
    torch.testing.assert_close(module(torch.zeros(1, 4, 8), offset=3)[0], full[3:7])
    torch.testing.assert_close(module(torch.zeros(2, 25, 8))[1], full[:25])  # past max_len: formula
    torch.testing.assert_close(module(torch.zeros(1, 5, 8), offset=8)[0], full[8:13])


def test_sinusoidal_module_dropout_only_in_training():
    torch.manual_seed(0)
    module = SinusoidalPositionalEncoding(8, max_len=10, dropout=0.5)
    x = torch.randn(2, 5, 8)
    module.eval()
    torch.testing.assert_close(module(x), x + sinusoidal_encoding(5, 8))
    module.train()
    assert (module(x) == 0).any()


def test_sinusoidal_module_keeps_dtype():
    module = SinusoidalPositionalEncoding(8, max_len=10)
    assert module(torch.zeros(1, 3, 8, dtype=torch.float64)).dtype == torch.float64
    half = module(torch.zeros(1, 3, 8, dtype=torch.bfloat16))  # the table is cast, not the input promoted
    assert half.dtype == torch.bfloat16 and torch.equal(half[0], sinusoidal_encoding(3, 8).bfloat16())


def test_sinusoidal_module_takes_any_max_len():
    module = SinusoidalPositionalEncoding(8, max_len=5)  # odd is fine: only d_model must be even
    assert module.pe.shape == (5, 8) and torch.equal(module.encoding(5), sinusoidal_encoding(5, 8))
    assert torch.equal(module.encoding(2), module.pe[:2])  # from position 0 unless told otherwise
    assert SinusoidalPositionalEncoding(8).max_len == 5000


def test_learned_module_takes_the_smallest_sizes():
    assert LearnedPositionalEncoding(1, max_len=1)(torch.zeros(2, 1, 1)).shape == (2, 1, 1)


def test_sinusoidal_module_errors():
    with pytest.raises(ValueError, match="d_model must be even"):
        SinusoidalPositionalEncoding(7)
    module = SinusoidalPositionalEncoding(8, max_len=10)
    with pytest.raises(ValueError, match=r"embeddings must be \(batch, seq_len, 8\), got \(5, 8\)"):
        module(torch.zeros(5, 8))
    with pytest.raises(ValueError, match="^embeddings must have 8 features in its last dim, got 6"):
        module(torch.zeros(2, 5, 6))
    with pytest.raises(ValueError, match="offset .* must be a non-negative int"):
        module(torch.zeros(2, 5, 8), offset=-1)
    with pytest.raises(ValueError, match="embeddings must be"):
        module([[0.0] * 8])


# ---------------------------------------------------------------------------------------------------
# LearnedPositionalEncoding
# ---------------------------------------------------------------------------------------------------
def test_learned_module_adds_its_table_and_trains():
    torch.manual_seed(0)
    module = LearnedPositionalEncoding(6, max_len=10)
    x = torch.randn(2, 4, 6)
    out = module(x)
    assert out.shape == (2, 4, 6)
    torch.testing.assert_close(out, x + module.table.weight[:4][None])
    torch.testing.assert_close(module(x, offset=6), x + module.table.weight[6:10][None])
    out.sum().backward()
    assert module.table.weight.grad is not None
    assert module.table.weight.grad[:4].abs().sum() > 0 and module.table.weight.grad[4:].abs().sum() == 0


def test_learned_encoding_rows_start_at_position_zero_by_default():
    module = LearnedPositionalEncoding(6, max_len=10)
    assert torch.equal(module.encoding(3), module.table.weight[:3])
    assert torch.equal(module.encoding(3, offset=7), module.table.weight[7:])


def test_learned_table_starts_small():
    torch.manual_seed(0)
    std = LearnedPositionalEncoding(64, max_len=512).table.weight.std().item()
    assert 0.018 < std < 0.022  # N(0, 0.02^2), as in GPT-2: the word embeddings dominate at first


def test_learned_module_accepts_odd_d_model_and_max_len_exactly():
    module = LearnedPositionalEncoding(5, max_len=4)
    assert module(torch.zeros(1, 4, 5)).shape == (1, 4, 5)


def test_learned_module_refuses_positions_past_max_len():
    module = LearnedPositionalEncoding(6, max_len=10)
    with pytest.raises(ValueError, match=r"positions 0\.\.9 only \(max_len=10\); positions 0\.\.10 were "
                                         r"asked for\. Train with a larger max_len, cut the sequence, or use "
                                         r"a sinusoidal encoding$"):
        module(torch.zeros(1, 11, 6))
    with pytest.raises(ValueError, match="max_len=10"):
        module(torch.zeros(1, 3, 6), offset=8)


def test_learned_module_other_errors():
    with pytest.raises(ValueError, match="max_len must be a positive int"):
        LearnedPositionalEncoding(6, max_len=0)
    with pytest.raises(ValueError, match="d_model must be a positive int"):
        LearnedPositionalEncoding(0, max_len=5)
    module = LearnedPositionalEncoding(6, max_len=10)
    with pytest.raises(ValueError, match="^embeddings must have 6 features in its last dim, got 4"):
        module(torch.zeros(1, 3, 4))


# ---------------------------------------------------------------------------------------------------
# apply_rotary (RoPE)
# ---------------------------------------------------------------------------------------------------
def test_rotary_rotates_pairs_by_pos_times_frequency():
    x = torch.zeros(3, 4)
    x[:, 0::2] = 1.0  # every pair is (1, 0): its rotation by a is (cos a, sin a)
    out = apply_rotary(x)
    w = frequencies(4).float()
    for pos in range(3):
        torch.testing.assert_close(out[pos, 0::2], torch.cos(pos * w))
        torch.testing.assert_close(out[pos, 1::2], torch.sin(pos * w))


def test_rotary_angles_far_out_and_with_a_custom_base():
    x = torch.zeros(1, 4, dtype=torch.float64)
    x[:, 0::2] = 1.0  # pairs (1, 0): rotated to (cos a, sin a)
    cases = [(apply_rotary(x, offset=1000), frequencies(4)),  # the paper's base 10000
             (apply_rotary(x, offset=1000, base=100.0), frequencies(4, 100.0))]
    for out, w in cases:  # w = (1, base^-1/2); at position 1000 a small error in w would show
        torch.testing.assert_close(out[0, 0::2], torch.cos(1000 * w))
        torch.testing.assert_close(out[0, 1::2], torch.sin(1000 * w))


def test_rotary_keeps_everything_on_the_device_of_its_input():
    out = apply_rotary(torch.empty(2, 3, 8, device="meta"), offset=2)  # "meta": shapes only, any machine
    assert out.device.type == "meta" and out.shape == (2, 3, 8)


def test_rotary_keeps_norms_and_position_zero():
    torch.manual_seed(0)
    x = torch.randn(2, 3, 7, 8)
    out = apply_rotary(x)
    assert out.shape == x.shape
    torch.testing.assert_close(out.norm(dim=-1), x.norm(dim=-1))
    torch.testing.assert_close(out[..., 0, :], x[..., 0, :])


def test_rotary_scores_depend_only_on_the_offset():
    torch.manual_seed(0)
    q, k = torch.randn(16), torch.randn(16)
    t = 12
    scores = apply_rotary(q.expand(t, 16)) @ apply_rotary(k.expand(t, 16)).T  # (T, T)
    for delta in range(-t + 1, t):
        diagonal = torch.diagonal(scores, offset=-delta)  # entries with i - j = delta
        torch.testing.assert_close(diagonal, diagonal[:1].expand_as(diagonal), atol=1e-5, rtol=0)
    # the offset argument shifts positions: same scores when queries and keys shift together
    shifted = apply_rotary(q.expand(t, 16), offset=5) @ apply_rotary(k.expand(t, 16), offset=5).T
    torch.testing.assert_close(shifted, scores, atol=1e-5, rtol=0)


def test_rotary_errors():
    with pytest.raises(ValueError, match="head_dim must be even; got 5"):
        apply_rotary(torch.zeros(2, 3, 5))
    with pytest.raises(ValueError, match=r"shape \(\.\.\., seq_len, head_dim\), got \(4,\)"):
        apply_rotary(torch.zeros(4))
    with pytest.raises(ValueError, match=r"\(\.\.\., seq_len, head_dim\), got list$"):
        apply_rotary([[1.0, 2.0]])
    with pytest.raises(ValueError, match="offset"):
        apply_rotary(torch.zeros(3, 4), offset=-2)
