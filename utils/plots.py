"""Figures the chapters draw: attention heatmaps with token labels, grids of heads, line plots.

Weights use ``viridis``, a colour map that is perceptually uniform and grows monotonically in
lightness, so every heatmap still reads in greyscale and for colour-blind readers. Lines differ by
marker and dash pattern as well as by colour.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch

WEIGHTS_CMAP = "viridis"


def _as_matrix(weights: torch.Tensor | np.ndarray, what: str = "weights") -> np.ndarray:
    if isinstance(weights, torch.Tensor):
        weights = weights.detach().float().cpu().numpy()
    weights = np.asarray(weights)
    if weights.ndim != 2:
        raise ValueError(
            f"{what} must be a 2-D matrix (queries, keys), got shape {weights.shape}; "
            "select one example and one head first, e.g. weights[0, h]"
        )
    return weights


def plot_attention(
    weights: torch.Tensor | np.ndarray,
    query_labels: Sequence[str] | None = None,
    key_labels: Sequence[str] | None = None,
    *,
    ax: plt.Axes | None = None,
    title: str | None = None,
    xlabel: str = "keys",
    ylabel: str = "queries",
    annotate: bool = False,
    colorbar: bool = True,
    vmin: float | None = 0.0,
    vmax: float | None = None,
) -> plt.Axes:
    """Draw a (T_q, T_k) attention matrix as a heatmap: one row per query, one column per key.

    Labels, when given, must match the matrix: ``len(query_labels) == T_q`` and
    ``len(key_labels) == T_k``.
    """
    matrix = _as_matrix(weights)
    t_q, t_k = matrix.shape
    if query_labels is not None and len(query_labels) != t_q:
        raise ValueError(f"got {len(query_labels)} query labels for a matrix with {t_q} rows")
    if key_labels is not None and len(key_labels) != t_k:
        raise ValueError(f"got {len(key_labels)} key labels for a matrix with {t_k} columns")
    if ax is None:
        _, ax = plt.subplots(figsize=(0.45 * t_k + 2.0, 0.45 * t_q + 1.2))
    image = ax.imshow(matrix, cmap=WEIGHTS_CMAP, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(range(t_k))
    ax.set_yticks(range(t_q))
    if key_labels is not None:
        ax.set_xticklabels(key_labels, rotation=60, ha="right")
    if query_labels is not None:
        ax.set_yticklabels(query_labels)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if annotate:
        top = matrix.max() if vmax is None else vmax
        for i in range(t_q):
            for j in range(t_k):
                dark = matrix[i, j] < 0.6 * top
                ax.text(j, i, f"{matrix[i, j]:.2f}", ha="center", va="center", fontsize=8,
                        color="white" if dark else "black")
    if colorbar:
        ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return ax


def plot_attention_grid(
    weights: torch.Tensor | np.ndarray,
    query_labels: Sequence[str] | None = None,
    key_labels: Sequence[str] | None = None,
    *,
    titles: Sequence[str] | None = None,
    ncols: int = 4,
    suptitle: str | None = None,
) -> plt.Figure:
    """Draw several (T_q, T_k) maps side by side, e.g. one per head: ``weights`` is (N, T_q, T_k)."""
    if isinstance(weights, torch.Tensor):
        weights = weights.detach().float().cpu().numpy()
    weights = np.asarray(weights)
    if weights.ndim != 3:
        raise ValueError(f"weights must be (N, T_q, T_k), e.g. (heads, queries, keys); got {weights.shape}")
    n = weights.shape[0]
    if titles is not None and len(titles) != n:
        raise ValueError(f"got {len(titles)} titles for {n} maps")
    ncols = max(1, min(ncols, n))
    nrows = (n + ncols - 1) // ncols
    t_q, t_k = weights.shape[1:]
    fig, axes = plt.subplots(nrows, ncols, squeeze=False,
                             figsize=(ncols * (0.32 * t_k + 1.6), nrows * (0.32 * t_q + 1.4)))
    for i, ax in enumerate(axes.flat):
        if i >= n:
            ax.axis("off")
            continue
        plot_attention(weights[i], query_labels, key_labels, ax=ax, colorbar=False, vmax=1.0,
                       title=titles[i] if titles else f"head {i}", xlabel="", ylabel="")
    if suptitle:
        fig.suptitle(suptitle)
    fig.tight_layout()
    return fig


def plot_lines(
    x: Sequence[float],
    series: dict[str, Sequence[float]],
    *,
    xlabel: str,
    ylabel: str,
    title: str | None = None,
    ax: plt.Axes | None = None,
    logy: bool = False,
) -> plt.Axes:
    """Plot one line per entry of ``series`` (label -> y values) against ``x``, with markers.

    Lines differ by marker and dash as well as colour, so they stay apart in greyscale.
    """
    if not series:
        raise ValueError("series is empty: pass a dict like {'RNN': [...], 'attention': [...]}")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.6))
    styles = ["o-", "s--", "^-.", "D:", "v-", "P--"]
    for i, (label, ys) in enumerate(series.items()):
        if len(ys) != len(x):
            raise ValueError(f"series {label!r} has {len(ys)} values for {len(x)} x positions")
        ax.plot(x, ys, styles[i % len(styles)], label=label, markersize=4)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if logy:
        ax.set_yscale("log")
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    return ax
