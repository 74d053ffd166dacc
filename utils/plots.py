"""Figures the chapters draw: attention heatmaps with token labels, grids of heads, line plots.

Weights use ``viridis``, a colour map that is perceptually uniform and grows monotonically in
lightness, so every heatmap still reads in greyscale and for colour-blind readers. Lines differ by
marker and dash pattern as well as by colour.

Readable on the page: the book's text column is ``COLUMN_PX`` (672) CSS pixels wide and a wider figure
is shrunk to fit it, so a figure's text shows at its drawn size times ``min(1, 672 / width)``. Importing
this module sets the course style (``COURSE_RC``: 100 dpi, text of 9 pt or more) and, in a Jupyter
kernel, writes the smallest text size of every inline figure into its PNG (``SMALLEST_TEXT_KEY``), so
the book's browser test can check that no label renders below ``MIN_TEXT_PX`` (9) CSS pixels.
``rendered_text_px(fig)`` predicts that size before the book is built. Rule of thumb: figures at most
``MAX_WIDTH_IN`` (8) inches wide, no text below 9 pt.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.figure import Figure

WEIGHTS_CMAP = "viridis"
COLUMN_PX = 672  # width of the book's text column in CSS pixels
MIN_TEXT_PX = 9  # the smallest text a figure may show in that column
MAX_WIDTH_IN = 8.0  # at 100 dpi and 9 pt text, a figure this wide still shows its text at 10.5 px
SMALLEST_TEXT_KEY = "Course-Smallest-Text-pt"  # PNG text chunk: the smallest font drawn, in points
COURSE_RC = {
    "figure.dpi": 100, "font.size": 10, "axes.titlesize": 11, "axes.labelsize": 10,
    "xtick.labelsize": 9.5, "ytick.labelsize": 9.5, "legend.fontsize": 9.5, "figure.titlesize": 12,
}
matplotlib.rcParams.update(COURSE_RC)


class _TextRecorder(RendererAgg):
    """An Agg renderer that notes the size in points of every non-empty text it draws."""

    def __init__(self, fig: Figure):
        super().__init__(max(1, int(fig.bbox.width)), max(1, int(fig.bbox.height)), fig.dpi)
        self.points: list[float] = []

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if str(s).strip():
            self.points.append(prop.get_size_in_points())
        super().draw_text(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)


def smallest_text_points(fig: Figure) -> float:
    """The smallest font size (points) among the texts ``fig`` draws; ``inf`` if it draws none."""
    recorder = _TextRecorder(fig)
    fig.draw(recorder)
    return min(recorder.points, default=math.inf)


def rendered_text_px(fig: Figure, column_px: int = COLUMN_PX) -> float:
    """CSS pixels of ``fig``'s smallest text once shown in the book's column (shrunk when wider)."""
    renderer = fig.canvas.get_renderer()
    width_px = fig.get_tightbbox(renderer).width * fig.dpi  # the inline backend crops tight
    scale = min(1.0, column_px / width_px) if width_px > 0 else 1.0
    return smallest_text_points(fig) * fig.dpi / 72 * scale


def _png_with_text_size(fig: Figure) -> str:
    """The inline backend's PNG of ``fig``, with its smallest text size written into the file."""
    from IPython.core.pylabtools import print_figure

    metadata = {SMALLEST_TEXT_KEY: f"{smallest_text_points(fig):.2f}"}
    return print_figure(fig, "png", base64=True, bbox_inches="tight", metadata=metadata)


def _register_png_formatter() -> None:
    """In a Jupyter kernel with the inline backend, display figures through _png_with_text_size."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    backend = matplotlib.get_backend(auto_select=False)
    if shell is None or not hasattr(shell, "kernel") or backend not in (
            "inline", "module://matplotlib_inline.backend_inline"):
        return
    import matplotlib_inline.backend_inline  # noqa: F401  (sets up its formatters first; ours follow)

    shell.display_formatter.formatters["image/png"].for_type(Figure, _png_with_text_size)


_register_png_formatter()


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


def _cell_inches(t: int, room: float, annotate: bool = False) -> float:
    """Side of one heatmap cell for ``t`` tokens: as large as fits ``room`` inches, 0.45 at most."""
    smallest = 0.42 if annotate else 0.1  # "0.37" at 9 pt needs about 0.4 in
    return max(smallest, min(0.45, room / max(t, 1)))


def _label_ticks(ax: plt.Axes, labels: Sequence[str] | None, n: int, cell: float, axis: str) -> None:
    """Tick every token, labelled when given; below 0.2 in a cell, label every k-th (9-pt text)."""
    step = max(1, math.ceil(0.2 / cell))
    ticks = list(range(0, n, step))
    if axis == "x":
        ax.set_xticks(ticks)
        if labels is not None:
            ax.set_xticklabels([labels[i] for i in ticks], rotation=60, ha="right",
                               rotation_mode="anchor")
    else:
        ax.set_yticks(ticks)
        if labels is not None:
            ax.set_yticklabels([labels[i] for i in ticks])


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
    colorbar_label: str = "attention weight",
    vmin: float | None = 0.0,
    vmax: float | None = None,
) -> plt.Axes:
    """Draw a (T_q, T_k) attention matrix as a heatmap: one row per query, one column per key.

    Labels, when given, must match the matrix: ``len(query_labels) == T_q`` and
    ``len(key_labels) == T_k``. A new figure is sized to stay readable in the book's column.
    """
    matrix = _as_matrix(weights)
    t_q, t_k = matrix.shape
    if query_labels is not None and len(query_labels) != t_q:
        raise ValueError(f"got {len(query_labels)} query labels for a matrix with {t_q} rows")
    if key_labels is not None and len(key_labels) != t_k:
        raise ValueError(f"got {len(key_labels)} key labels for a matrix with {t_k} columns")
    cell = _cell_inches(max(t_q, t_k), MAX_WIDTH_IN - 2.6, annotate)
    if ax is None:
        _, ax = plt.subplots(figsize=(cell * t_k + 2.4, cell * t_q + 1.4))
    image = ax.imshow(matrix, cmap=WEIGHTS_CMAP, vmin=vmin, vmax=vmax, aspect="auto")
    _label_ticks(ax, key_labels, t_k, cell, "x")
    _label_ticks(ax, query_labels, t_q, cell, "y")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if annotate:
        top = matrix.max() if vmax is None else vmax
        for i in range(t_q):
            for j in range(t_k):
                dark = matrix[i, j] < 0.6 * top
                ax.text(j, i, f"{matrix[i, j]:.2f}", ha="center", va="center", fontsize=9,
                        color="white" if dark else "black")
    if colorbar:
        bar = ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
        bar.set_label(colorbar_label)
    return ax


def plot_attention_grid(
    weights: torch.Tensor | np.ndarray,
    query_labels: Sequence[str] | None = None,
    key_labels: Sequence[str] | None = None,
    *,
    titles: Sequence[str] | None = None,
    ncols: int | None = None,
    suptitle: str | None = None,
    xlabel: str = "keys",
    ylabel: str = "queries",
    vmax: float = 1.0,
) -> plt.Figure:
    """Draw several (T_q, T_k) maps on one scale, e.g. one per head: ``weights`` is (N, T_q, T_k).

    All panels share the colour scale 0..``vmax`` and one labelled colour bar; token labels sit on the
    outer axes only. ``ncols`` defaults to as many panels as fit the book's column at a readable size.
    """
    if isinstance(weights, torch.Tensor):
        weights = weights.detach().float().cpu().numpy()
    weights = np.asarray(weights)
    if weights.ndim != 3:
        raise ValueError(f"weights must be (N, T_q, T_k), e.g. (heads, queries, keys); got {weights.shape}")
    n, t_q, t_k = weights.shape
    if titles is not None and len(titles) != n:
        raise ValueError(f"got {len(titles)} titles for {n} maps")
    for labels, size, what in ((query_labels, t_q, "query"), (key_labels, t_k, "key")):
        if labels is not None and len(labels) != size:
            raise ValueError(f"got {len(labels)} {what} labels for maps of shape ({t_q}, {t_k})")
    two_per_row = ((MAX_WIDTH_IN - 2.2) / 2 - 0.15) / max(t_q, t_k)
    cell = max(0.2, min(0.3, two_per_row)) if two_per_row >= 0.2 else _cell_inches(
        max(t_q, t_k), MAX_WIDTH_IN - 2.4)  # long sequences: one panel per row
    panel = cell * t_k + 0.15
    if ncols is None:
        ncols = int((MAX_WIDTH_IN - 2.2 + 1e-6) // panel)  # + 1e-6: two panels of exactly 2.9 in fit
    ncols = max(1, min(ncols, n))
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, squeeze=False, sharex=True, sharey=True,
                             layout="constrained",
                             figsize=(ncols * panel + 2.2, nrows * (cell * t_q + 0.45) + 1.2))
    image = None
    for i, ax in enumerate(axes.flat):
        if i >= n:
            ax.axis("off")
            continue
        image = ax.imshow(weights[i], cmap=WEIGHTS_CMAP, vmin=0.0, vmax=vmax, aspect="auto")
        ax.set_title(titles[i] if titles else f"head {i}", fontsize=10)
        row, col = divmod(i, ncols)
        ax.tick_params(labelbottom=row == nrows - 1 or i + ncols >= n, labelleft=col == 0)
    for ax in axes.flat:
        _label_ticks(ax, key_labels, t_k, cell, "x")
        _label_ticks(ax, query_labels, t_q, cell, "y")
    fig.supxlabel(xlabel, fontsize=10)
    fig.supylabel(ylabel, fontsize=10)
    bar = fig.colorbar(image, ax=axes, shrink=0.9 if nrows < 3 else 0.6, aspect=25)
    bar.set_label("attention weight (shared scale)")
    if suptitle:
        fig.suptitle(suptitle)
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
