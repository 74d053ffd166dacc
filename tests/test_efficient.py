"""Tests for utils.efficient: the fused fast path equals the from-scratch attention; the measuring tools."""

import pytest
import torch
import torch.nn.functional as F

from utils.attention import causal_mask, scaled_dot_product_attention
from utils.efficient import attention_matrix_bytes, fused_attention, peak_memory_bytes, time_call

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def _qkv(b=2, h=3, t_q=7, t_k=7, d=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(b, h, t_q, d, generator=g), torch.randn(b, h, t_k, d, generator=g),
            torch.randn(b, h, t_k, d, generator=g))


def test_equals_from_scratch_without_mask():
    q, k, v = _qkv(t_q=5, t_k=9)
    want, _ = scaled_dot_product_attention(q, k, v)
    got = fused_attention(q, k, v)
    assert got.shape == (2, 3, 5, 8)
    assert torch.allclose(got, want, atol=1e-6)


def test_equals_from_scratch_with_causal_flag_and_causal_mask():
    q, k, v = _qkv()
    want, _ = scaled_dot_product_attention(q, k, v, causal_mask(7))
    assert torch.allclose(fused_attention(q, k, v, is_causal=True), want, atol=1e-6)
    assert torch.allclose(fused_attention(q, k, v, causal_mask(7)), want, atol=1e-6)


def test_equals_from_scratch_with_key_padding_mask():
    q, k, v = _qkv()
    key_mask = torch.ones(2, 7, dtype=torch.bool)
    key_mask[0, 4:] = False
    mask = key_mask[:, None, None, :] & causal_mask(7)  # (B, 1, 1, T_k) & (T, T) -> (B, 1, T, T)
    want, weights = scaled_dot_product_attention(q, k, v, mask)
    assert torch.allclose(fused_attention(q, k, v, mask), want, atol=1e-6)
    assert torch.all(weights[0, :, :, 4:] == 0)


def test_equals_pytorch_for_three_dim_inputs():
    q, k, v = (x[:, 0] for x in _qkv())  # (B, T, D)
    want = F.scaled_dot_product_attention(q, k, v)
    assert torch.allclose(fused_attention(q, k, v), want)


def test_mask_and_causal_together_raise():
    q, k, v = _qkv()
    with pytest.raises(ValueError, match="either mask or is_causal"):
        fused_attention(q, k, v, causal_mask(7), is_causal=True)


def test_causal_needs_square():
    q, k, v = _qkv(t_q=3, t_k=7)
    with pytest.raises(ValueError, match="T_q == T_k"):
        fused_attention(q, k, v, is_causal=True)


def test_shape_and_dtype_errors():
    q, k, v = _qkv()
    with pytest.raises(ValueError, match="same size d_k"):
        fused_attention(q, k[..., :4], v)
    with pytest.raises(ValueError, match="every key needs a value"):
        fused_attention(q, k, v[:, :, :5])
    with pytest.raises(ValueError, match="must match or broadcast"):
        fused_attention(q, k[:1, :2], v[:1, :2])
    with pytest.raises(ValueError, match="at least 2 dims"):
        fused_attention(torch.randn(4), k, v)
    with pytest.raises(TypeError, match="share one dtype"):
        fused_attention(q.double(), k, v)
    with pytest.raises(TypeError, match="floating-point"):
        fused_attention(q.long(), k, v)
    with pytest.raises(TypeError, match="must be a tensor"):
        fused_attention([1.0], k, v)
    with pytest.raises(ValueError, match="dropout_p"):
        fused_attention(q, k, v, dropout_p=1.5)


def test_mask_errors():
    q, k, v = _qkv()
    with pytest.raises(TypeError, match="torch.bool"):
        fused_attention(q, k, v, causal_mask(7).float())
    with pytest.raises(ValueError, match="does not broadcast"):
        fused_attention(q, k, v, torch.ones(2, 7, dtype=torch.bool))
    empty_row = causal_mask(7).clone()
    empty_row[3] = False
    with pytest.raises(ValueError, match="all False"):
        fused_attention(q, k, v, empty_row)


def test_time_call_returns_a_sane_median():
    seconds = time_call(lambda: sum(range(1000)), min_run_time=0.05)
    assert 0.0 < seconds < 0.1
    calls = []
    time_call(lambda: calls.append(1), min_run_time=0.01)
    assert len(calls) >= 2                     # at least the block sizing (a warm-up) and one block


def test_time_call_keeps_the_thread_count():
    before = torch.get_num_threads()
    seen = []
    time_call(lambda: seen.append(torch.get_num_threads()), min_run_time=0.01)
    assert set(seen) == {before} and torch.get_num_threads() == before


def test_time_call_errors():
    with pytest.raises(TypeError, match="function of no arguments"):
        time_call(3)
    with pytest.raises(ValueError, match="min_run_time"):
        time_call(lambda: None, min_run_time=0)
    with pytest.raises(ValueError, match="min_run_time"):
        time_call(lambda: None, min_run_time="1")


def test_attention_matrix_bytes():
    assert attention_matrix_bytes(2, 4, 16, 8) == 2 * 4 * 16 * 8 * 4
    assert attention_matrix_bytes(1, 1, 10, 10, torch.bfloat16) == 200
    with pytest.raises(ValueError, match="t_q must be a positive int"):
        attention_matrix_bytes(1, 1, 0, 4)


def test_peak_memory_counts_a_new_tensor_and_not_views():
    x = torch.zeros(1000)  # 4000 bytes, allocated before the measurement
    assert peak_memory_bytes(lambda: x.view(10, 100).transpose(0, 1)) == 0
    assert peak_memory_bytes(lambda: x + 1) == 4000
    assert peak_memory_bytes(lambda: (x + 1) * 2) == 8000  # both temporaries alive at once


def test_from_scratch_memory_grows_quadratically_fused_does_not():
    sizes = {}
    for t in (64, 256):
        q, k, v = _qkv(b=1, h=2, t_q=t, t_k=t, d=16)
        sizes[t] = (peak_memory_bytes(lambda q=q, k=k, v=v: scaled_dot_product_attention(q, k, v)),
                    peak_memory_bytes(lambda q=q, k=k, v=v: fused_attention(q, k, v, is_causal=True)))
        assert sizes[t][0] >= attention_matrix_bytes(1, 2, t, t)  # the weights are materialised
        assert sizes[t][1] < attention_matrix_bytes(1, 2, t, t)
    assert sizes[256][0] / sizes[64][0] > 12  # 16x in theory (T^2), plus the small output
    assert sizes[256][1] / sizes[64][1] < 5  # about 4x: the output grows like T


def test_peak_memory_errors():
    with pytest.raises(TypeError, match="function of no arguments"):
        peak_memory_bytes(None)
    with pytest.raises(ValueError, match="'cpu' or 'cuda'"):
        peak_memory_bytes(lambda: None, device="meta")


@needs_cuda
def test_fused_equals_from_scratch_on_cuda_in_half_precision():
    q, k, v = (x.cuda().half() for x in _qkv(t_q=64, t_k=64, d=32))
    want, _ = scaled_dot_product_attention(q.float(), k.float(), v.float(), causal_mask(64, "cuda"))
    got = fused_attention(q, k, v, is_causal=True)
    assert torch.allclose(got.float(), want, atol=2e-3)


@needs_cuda
def test_peak_memory_on_cuda():
    x = torch.zeros(1 << 20, device="cuda")
    assert peak_memory_bytes(lambda: x * 2, device="cuda") >= 4 * (1 << 20)
