"""Efficient attention in practice: the fused kernel, and tools to time it and measure its memory (chapter 9).

Shape legend: B batch, H heads, T_q queries, T_k keys (= values), D head size (d_k, d_v).

``fused_attention`` computes exactly what ``utils.attention.scaled_dot_product_attention`` computes,
softmax(Q K^T / sqrt(d_k)) V, but through PyTorch's fused kernels
(``torch.nn.functional.scaled_dot_product_attention``). A fused kernel works through the keys in tiles
and keeps a running maximum and sum for the softmax, so it never stores the (T_q, T_k) weight matrix;
FlashAttention (Dao et al., 2022) is the best-known such kernel on a GPU, and PyTorch has a CPU version
too. The price: the weights are not returned, so use the from-scratch version to *look* at attention.

Mask contract (the whole course): a mask is ``torch.bool``, **True means "may attend"**, broadcastable
to (..., T_q, T_k). Pass ``is_causal=True`` rather than a causal mask where you can: the kernel then
skips the masked tiles and no (T_q, T_k) mask has to exist at all.

Measuring: ``time_call`` returns the median wall-clock time of a call, by PyTorch's benchmark timer;
``peak_memory_bytes`` returns the peak memory a call allocates (CUDA: the caching allocator's
statistics; CPU: the bytes of the tensors that PyTorch operations hand back, tracked while alive);
``attention_matrix_bytes`` is the size of one (B, H, T_q, T_k) weight matrix, the T^2 term.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from utils import checkpoints
from utils.attention import _check_mask, check_mask_rows


# ---------------------------------------------------------------------------------------------------
# The fused fast path
# ---------------------------------------------------------------------------------------------------
def fused_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    is_causal: bool = False,
    dropout_p: float = 0.0,
) -> torch.Tensor:
    """softmax(Q K^T / sqrt(d_k)) V (Vaswani et al. 2017, eq. 1) by a fused kernel; outputs only.

    q: (..., T_q, d_k), k: (..., T_k, d_k), v: (..., T_k, d_v) -> (..., T_q, d_v). mask: bool,
    True = may attend, broadcastable to (..., T_q, T_k); or ``is_causal=True`` (needs T_q == T_k).
    """
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"{name} must be a tensor (..., T, d), got {type(x).__name__}")
        if not x.is_floating_point():
            raise TypeError(f"{name} must be a floating-point tensor, got dtype {x.dtype}")
    if q.dim() < 2 or k.dim() < 2 or v.dim() < 2:
        raise ValueError(f"q, k, v need at least 2 dims (..., T, d); got {tuple(q.shape)}, "
                         f"{tuple(k.shape)}, {tuple(v.shape)}")
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(f"q, k and v must share one dtype, got {q.dtype}, {k.dtype}, {v.dtype}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"queries and keys must have the same size d_k to be compared: q has "
                         f"{q.shape[-1]}, k has {k.shape[-1]}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"every key needs a value: k has T_k={k.shape[-2]} rows, v has {v.shape[-2]}")
    try:
        batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])  # e.g. (B, H)
    except RuntimeError:
        raise ValueError(f"the leading (batch, head) dims of q, k, v must match or broadcast; got "
                         f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}") from None
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"dropout_p must be in [0, 1), got {dropout_p}")
    if is_causal:
        if mask is not None:
            raise ValueError("pass either mask or is_causal=True, not both; to combine a causal mask "
                             "with padding, pass mask=causal_mask(T) & key_mask[:, None, None, :]")
        if q.shape[-2] != k.shape[-2]:
            raise ValueError(f"is_causal=True needs as many queries as keys (T_q == T_k), got "
                             f"T_q={q.shape[-2]}, T_k={k.shape[-2]}; pass an explicit mask instead")
    if mask is not None:
        _check_mask(mask, torch.Size([*batch, q.shape[-2], k.shape[-2]]))  # (..., T_q, T_k)
        check_mask_rows(mask)
    # (..., T_q, d_k), (..., T_k, d_k), (..., T_k, d_v) -> (..., T_q, d_v); no (T_q, T_k) tensor kept
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p,
                                          is_causal=is_causal)


# ---------------------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------------------
def _synchronize() -> None:
    """Wait for queued GPU work: CUDA kernels run asynchronously, so a timer would stop too early."""
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def time_call(fn: Callable[[], Any], min_run_time: float = 0.2) -> float:
    """Median wall-clock seconds of ``fn()``, measured by PyTorch's benchmark timer
    (``torch.utils.benchmark.Timer.blocked_autorange``) with torch's current thread count: it calls
    ``fn`` once or more to size its blocks (which also warms up: kernel selection, caches, lazy
    initialisation), then times blocks of calls until ``min_run_time`` seconds have passed, and
    returns the median time per call. It waits for a GPU's queued work before reading the clock.

    In a grading run (``utils.checkpoints.grading()``) it times one call without a warm-up: nothing
    graded is a time, and grading should take seconds."""
    if not callable(fn):
        raise TypeError(f"fn must be a function of no arguments, e.g. lambda: f(q, k, v); "
                        f"got {type(fn).__name__}")
    if isinstance(min_run_time, bool) or not isinstance(min_run_time, (int, float)) \
            or not min_run_time > 0:
        raise ValueError(f"min_run_time must be a positive number of seconds, got {min_run_time!r}")
    if checkpoints.grading():
        _synchronize()
        start = time.perf_counter()
        fn()
        _synchronize()
        return time.perf_counter() - start
    from torch.utils import benchmark

    timer = benchmark.Timer(stmt="fn()", globals={"fn": fn}, num_threads=torch.get_num_threads())
    # the median ignores the odd slow block (another process, the garbage collector)
    return timer.blocked_autorange(min_run_time=float(min_run_time)).median


# ---------------------------------------------------------------------------------------------------
# Memory
# ---------------------------------------------------------------------------------------------------
def attention_matrix_bytes(batch: int, num_heads: int, t_q: int, t_k: int,
                           dtype: torch.dtype = torch.float32) -> int:
    """Bytes of one (B, H, T_q, T_k) score or weight matrix: B * H * T_q * T_k * bytes per element."""
    for name, n in (("batch", batch), ("num_heads", num_heads), ("t_q", t_q), ("t_k", t_k)):
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"{name} must be a positive int, got {n!r}")
    return batch * num_heads * t_q * t_k * torch.empty(0, dtype=dtype).element_size()


class _LiveTensorBytes(TorchDispatchMode):
    """Count the bytes of every new tensor an operation returns until it is freed; keep the peak."""

    def __init__(self) -> None:
        super().__init__()
        self.current = 0
        self.peak = 0

    def _release(self, nbytes: int) -> None:
        self.current -= nbytes

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # the protocol of TorchDispatchMode
        kwargs = kwargs or {}
        known = {t.untyped_storage().data_ptr() for t in tree_flatten((args, kwargs))[0]
                 if isinstance(t, torch.Tensor)}
        out = func(*args, **kwargs)
        for t in tree_flatten(out)[0]:
            if not isinstance(t, torch.Tensor):
                continue
            storage = t.untyped_storage()
            if storage.data_ptr() in known or storage.nbytes() == 0:  # a view of an input: no new memory
                continue
            known.add(storage.data_ptr())
            self.current += storage.nbytes()
            self.peak = max(self.peak, self.current)
            weakref.finalize(t, self._release, storage.nbytes())  # runs when the tensor is freed
        return out


def peak_memory_bytes(fn: Callable[[], Any], device: torch.device | str | None = None) -> int:
    """Peak bytes allocated while ``fn()`` runs, above what was allocated before (CUDA or CPU).

    CUDA: ``torch.cuda.max_memory_allocated``. CPU: the tensors PyTorch operations return, counted
    while they are alive (a kernel's small internal scratch buffers are not seen).
    """
    if not callable(fn):
        raise TypeError(f"fn must be a function of no arguments, e.g. lambda: f(q, k, v); "
                        f"got {type(fn).__name__}")
    device = torch.device(device) if device is not None else torch.device("cpu")
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError("device 'cuda' was asked for but no CUDA GPU is available here")
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats(device)
        before = torch.cuda.memory_allocated(device)
        fn()
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated(device) - before
    if device.type != "cpu":
        raise ValueError(f"peak_memory_bytes measures 'cpu' or 'cuda', got {device.type!r}")
    tracker = _LiveTensorBytes()
    with tracker:
        fn()
    return tracker.peak
