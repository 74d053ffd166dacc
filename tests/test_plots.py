"""Tests for utils/plots.py: what the heatmaps and line plots draw, and their error messages (Agg backend)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from utils.plots import (
    MAX_WIDTH_IN,
    MIN_TEXT_PX,
    WEIGHTS_CMAP,
    plot_attention,
    plot_attention_grid,
    plot_lines,
    rendered_text_px,
    smallest_text_points,
)


def _weights(t_q: int = 3, t_k: int = 4, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(t_q, t_k, generator=g).softmax(dim=-1)  # rows sum to 1, like attention


# ---------------------------------------------------------------------------------------------------
# plot_attention
# ---------------------------------------------------------------------------------------------------
def test_plot_attention_draws_the_matrix_with_labels():
    w = _weights()
    ax = plot_attention(w, ["a", "b", "c"], ["w", "x", "y", "z"], title="demo")
    image = ax.get_images()[0]
    assert np.allclose(image.get_array(), w.numpy())
    assert image.get_cmap().name == WEIGHTS_CMAP
    assert [t.get_text() for t in ax.get_xticklabels()] == ["w", "x", "y", "z"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "c"]
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("keys", "queries", "demo")
    assert len(ax.figure.axes) == 2  # the heatmap and its colour bar


def test_plot_attention_accepts_numpy_and_grad_tensors_and_an_existing_axes():
    fig, ax = plt.subplots()
    w = _weights().requires_grad_()
    assert plot_attention(w, ax=ax, colorbar=False) is ax
    assert len(fig.axes) == 1
    ax2 = plot_attention(w.detach().numpy(), colorbar=False)
    assert ax2.get_images()[0].get_array().shape == (3, 4)


def test_plot_attention_annotates_every_cell():
    ax = plot_attention(_weights(2, 3), annotate=True, colorbar=False)
    texts = [t.get_text() for t in ax.texts]
    assert len(texts) == 6
    assert all(len(t) == 4 and t[1] == "." for t in texts)  # "0.37"


@pytest.mark.parametrize("shape", [(4,), (2, 3, 4), (1, 2, 3, 4)])
def test_plot_attention_wants_a_matrix(shape):
    with pytest.raises(ValueError, match=r"weights must be a 2-D matrix \(queries, keys\), got shape .*"
                                         r"select one example and one head first"):
        plot_attention(torch.rand(shape))


def test_plot_attention_checks_the_number_of_labels():
    with pytest.raises(ValueError, match=r"got 2 query labels for a matrix with 3 rows"):
        plot_attention(_weights(), query_labels=["a", "b"])
    with pytest.raises(ValueError, match=r"got 5 key labels for a matrix with 4 columns"):
        plot_attention(_weights(), key_labels=list("abcde"))


# ---------------------------------------------------------------------------------------------------
# plot_attention_grid
# ---------------------------------------------------------------------------------------------------
def test_plot_attention_grid_draws_one_panel_per_map_and_hides_the_rest():
    maps = torch.stack([_weights(seed=s) for s in range(5)])  # (N, T_q, T_k)
    fig = plot_attention_grid(maps, list("abc"), list("wxyz"), ncols=3, suptitle="heads")
    assert len(fig.axes) == 7  # 2 rows x 3 columns, and one colour bar
    drawn = [ax for ax in fig.axes[:6] if ax.get_images()]
    assert len(drawn) == 5
    assert [ax.get_title() for ax in drawn] == [f"head {i}" for i in range(5)]
    assert not fig.axes[5].axison
    for i, ax in enumerate(drawn):
        assert np.allclose(ax.get_images()[0].get_array(), maps[i].numpy())
    assert fig._suptitle.get_text() == "heads"


def test_plot_attention_grid_shares_one_labelled_scale_and_labels_the_outer_axes():
    maps = torch.stack([_weights(seed=s) for s in range(5)])
    fig = plot_attention_grid(maps, list("abc"), list("wxyz"), ncols=3)
    panels = [ax for ax in fig.axes if ax.get_images()]
    assert {ax.get_images()[0].get_clim() for ax in panels} == {(0.0, 1.0)}  # one scale for all
    colour_bars = [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]
    assert len(colour_bars) == 1 and "attention weight" in colour_bars[0].get_ylabel()
    fig.canvas.draw()
    shown = [ax.xaxis.get_tick_params()["labelbottom"] for ax in panels]
    assert shown == [False, False, True, True, True]  # bottom row, and head 2 above the empty slot
    assert [ax.yaxis.get_tick_params()["labelleft"] for ax in panels] == [True, False, False, True, False]


def test_plot_attention_grid_uses_titles_and_at_most_n_columns():
    fig = plot_attention_grid(np.random.default_rng(0).random((2, 3, 3)), titles=["one", "two"], ncols=8)
    panels = [ax for ax in fig.axes if ax.get_images()]
    assert len(panels) == 2
    assert [ax.get_title() for ax in panels] == ["one", "two"]


def test_plot_attention_grid_errors():
    with pytest.raises(ValueError, match=r"weights must be \(N, T_q, T_k\).*got \(3, 4\)"):
        plot_attention_grid(_weights())
    with pytest.raises(ValueError, match=r"got 1 titles for 2 maps"):
        plot_attention_grid(torch.rand(2, 3, 3), titles=["only one"])
    with pytest.raises(ValueError, match=r"got 2 key labels for maps of shape \(3, 3\)"):
        plot_attention_grid(torch.rand(2, 3, 3), key_labels=["a", "b"])


# ---------------------------------------------------------------------------------------------------
# plot_lines
# ---------------------------------------------------------------------------------------------------
def test_plot_lines_draws_distinguishable_lines():
    x = [1, 2, 3]
    ax = plot_lines(x, {"RNN": [0.9, 0.5, 0.2], "attention": [0.9, 0.8, 0.8]},
                    xlabel="length", ylabel="accuracy", title="t")
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["RNN", "attention"]
    assert list(lines[1].get_ydata()) == [0.9, 0.8, 0.8]
    assert lines[0].get_marker() != lines[1].get_marker()
    assert lines[0].get_linestyle() != lines[1].get_linestyle()
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("length", "accuracy", "t")
    assert ax.get_legend() is not None


def test_plot_lines_log_scale_and_existing_axes():
    fig, ax = plt.subplots()
    assert plot_lines([1, 2], {"loss": [1.0, 0.1]}, xlabel="step", ylabel="loss", ax=ax, logy=True) is ax
    assert ax.get_yscale() == "log"


def test_plot_lines_errors():
    with pytest.raises(ValueError, match=r"series is empty"):
        plot_lines([1, 2], {}, xlabel="x", ylabel="y")
    with pytest.raises(ValueError, match=r"series 'b' has 1 values for 2 x positions"):
        plot_lines([1, 2], {"a": [1, 2], "b": [1]}, xlabel="x", ylabel="y")


# ---------------------------------------------------------------------------------------------------
# readable in the book's column
# ---------------------------------------------------------------------------------------------------
def test_smallest_text_points_sees_every_drawn_text():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    ax.text(0.5, 0.5, "tiny", fontsize=6)
    ax.text(0.5, 0.2, "hidden", fontsize=4, visible=False)
    assert smallest_text_points(fig) == 6
    ax.texts[0].remove()
    assert smallest_text_points(fig) == plt.rcParams["xtick.labelsize"]


def test_a_wide_figure_is_shrunk_and_its_text_with_it():
    fig, ax = plt.subplots(figsize=(16, 3))
    ax.plot([0, 1], [0, 1])
    points = smallest_text_points(fig)
    width_px = fig.get_tightbbox(fig.canvas.get_renderer()).width * fig.dpi
    assert rendered_text_px(fig) == pytest.approx(points * fig.dpi / 72 * 672 / width_px)
    assert rendered_text_px(fig) < MIN_TEXT_PX


@pytest.mark.parametrize("t", [3, 8, 20, 40])
def test_heatmaps_stay_readable_at_column_width(t):
    labels = [f"w{i}" for i in range(t)]
    ax = plot_attention(torch.rand(t, t).softmax(-1), labels, labels, annotate=t <= 8)
    assert rendered_text_px(ax.figure) >= MIN_TEXT_PX
    grid = plot_attention_grid(torch.rand(8, t, t).softmax(-1), labels, labels)
    assert rendered_text_px(grid) >= MIN_TEXT_PX
    assert grid.get_tightbbox(grid.canvas.get_renderer()).width <= MAX_WIDTH_IN + 0.3
    plt.close("all")


def test_line_plots_stay_readable_at_column_width():
    ax = plot_lines([1, 2, 3], {"a": [1, 2, 3], "b": [3, 2, 1]}, xlabel="x", ylabel="y", title="t")
    assert rendered_text_px(ax.figure) >= MIN_TEXT_PX
