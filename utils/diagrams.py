"""The visual vocabulary of the course's architecture diagrams, and the primitives that draw it.

One vocabulary for every drawing in ``utils.architectures`` (chapters 1, 3-5, 7, 8):

- Queries, keys and values keep one colour each, from the colour-blind-safe palette of Okabe & Ito
  (Q blue, K orange, V green), and always carry their letter too, so colour is never the only cue
  (the three also differ in lightness, so they stay apart in greyscale).
- A layer is a rounded box with a light fill and a dark edge, one fill per kind (``FILLS``).
- An arrow is a tensor; its label is the tensor's shape in the course's letters (B batch, S source
  length, T target length, C = d_model, H heads, D head size, F = d_ff, V vocabulary), with the real
  sizes substituted: ``shape("B", "T", "C=64")`` -> "(B, T, C=64)".
- A residual connection is an arrow that bypasses its sublayer into an add node (+).

Coordinates are inches: ``new_diagram(w, h)`` spans the figure with one axes whose data units are
inches, so a box 1.2 wide is 1.2 inches on the page. The book's text column is 672 px and figures are
drawn at 100 dpi: ``readability_problems`` checks that a figure is at most 8 inches wide and that every
text is at least 9 points and overlaps no other text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import NamedTuple

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch, Rectangle
from matplotlib.text import Text

from utils.plots import MAX_WIDTH_IN  # importing utils.plots also sets the course's figure style

# ---------------------------------------------------------------------------------------------------
# The vocabulary
# ---------------------------------------------------------------------------------------------------
ROLE_COLORS = {"Q": "#0072B2", "K": "#E69F00", "V": "#009E73"}  # Okabe-Ito blue, orange, green
ROLE_TINTS = {"Q": "#D4E6F3", "K": "#FBEACC", "V": "#CCEDE3"}  # the same, light, for projection boxes
FILLS = {  # one light fill per kind of layer (tints of Okabe-Ito purple, sky blue, yellow, vermilion)
    "attention": "#F5DFEC",
    "feed-forward": "#DDF0FB",
    "norm": "#FBF6C8",
    "embedding": "#F8DDCC",
    "linear": "#EBEBEB",
    "recurrent": "#E4E0F0",
    "tensor": "#FFFFFF",
}
EDGE = "#303030"
INK = "#1A1A1A"  # text
MUTED = "#505050"  # shape labels, notes
HIDDEN = "#3A3A3A"  # masked-out cells
TITLE_SIZE, TEXT_SIZE, SHAPE_SIZE = 12, 10, 9  # points; nothing smaller than 9
MIN_FONTSIZE = 9.0  # points: with MAX_WIDTH_IN, text shows at 10.5 px or more in the 672-px column


def shape(*dims: object) -> str:
    """A tensor shape in the course's letters: shape("B", "T", "C=64") -> '(B, T, C=64)'."""
    return "(" + ", ".join(str(d) for d in dims) + ")"


# ---------------------------------------------------------------------------------------------------
# Primitives
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Box:
    """A drawn box: centre (x, y) and size (w, h) in inches, with its edge midpoints for arrows."""

    x: float
    y: float
    w: float
    h: float

    def top(self, dx: float = 0.0) -> tuple[float, float]:
        """Point on the top edge, ``dx`` right of the centre."""
        return self.x + dx, self.y + self.h / 2

    def bottom(self, dx: float = 0.0) -> tuple[float, float]:
        """Point on the bottom edge, ``dx`` right of the centre."""
        return self.x + dx, self.y - self.h / 2

    def left(self, dy: float = 0.0) -> tuple[float, float]:
        """Point on the left edge, ``dy`` above the centre."""
        return self.x - self.w / 2, self.y + dy

    def right(self, dy: float = 0.0) -> tuple[float, float]:
        """Point on the right edge, ``dy`` above the centre."""
        return self.x + self.w / 2, self.y + dy


def new_diagram(width: float, height: float, title: str | None = None) -> tuple[Figure, Axes]:
    """A white figure of ``width`` x ``height`` inches with one axes-off canvas in inch coordinates."""
    fig = plt.figure(figsize=(width, height), facecolor="white")
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.text(0.05, height - 0.08, title, fontsize=TITLE_SIZE, fontweight="bold", color=INK,
                ha="left", va="top")
    return fig, ax


def fit_height(fig: Figure, ax: Axes, y_min: float) -> Figure:
    """Crop the canvas of ``new_diagram`` to start at ``y_min`` (inches), keeping one unit one inch."""
    _, top = ax.get_ylim()
    fig.set_size_inches(fig.get_figwidth(), top - y_min)
    ax.set_ylim(y_min, top)
    return fig


def draw_text(ax: Axes, x: float, y: float, text: str, *, size: float = TEXT_SIZE, color: str = INK,
              ha: str = "center", va: str = "center", **kwargs: object) -> Text:
    """Plain text at (x, y); every call names its font size, never below 9 points."""
    return ax.text(x, y, text, fontsize=size, color=color, ha=ha, va=va, **kwargs)


def draw_box(ax: Axes, x: float, y: float, w: float, h: float, text: str, kind: str = "linear", *,
             role: str | None = None, dashed: bool = False, size: float = TEXT_SIZE) -> Box:
    """A layer: rounded box centred at (x, y), filled by ``kind`` (or by Q/K/V ``role``), with its name."""
    if kind not in FILLS:
        raise ValueError(f"kind must be one of {sorted(FILLS)}, got {kind!r}")
    fill = ROLE_TINTS[role] if role else FILLS[kind]
    edge = ROLE_COLORS[role] if role else EDGE
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0,rounding_size=0.06",
                                facecolor=fill, edgecolor=edge, linewidth=1.8 if role else 1.2,
                                linestyle="--" if dashed else "-", zorder=2))
    draw_text(ax, x, y, text, size=size, zorder=3)
    return Box(x, y, w, h)


def draw_add(ax: Axes, x: float, y: float, r: float = 0.12) -> Box:
    """The add node of a residual connection: a circle with a plus."""
    ax.add_patch(Circle((x, y), r, facecolor="white", edgecolor=EDGE, linewidth=1.2, zorder=2))
    draw_text(ax, x, y + 0.01, "+", size=TEXT_SIZE + 1, fontweight="bold", zorder=3)
    return Box(x, y, 2 * r, 2 * r)


def draw_dot(ax: Axes, x: float, y: float) -> None:
    """A junction where one tensor goes two ways (a residual branch, Q, K and V from one input)."""
    ax.add_patch(Circle((x, y), 0.035, facecolor=EDGE, edgecolor=EDGE, zorder=4))


def draw_badge(ax: Axes, x: float, y: float, role: str, ha: str = "center") -> Text:
    """The letter Q, K or V on a patch of its colour: the cue that survives greyscale."""
    return draw_text(ax, x, y, role, size=TEXT_SIZE, ha=ha, fontweight="bold", zorder=5,
                     color="white" if role == "Q" else INK,  # the better contrast on each colour
                     bbox={"boxstyle": "round,pad=0.15", "facecolor": ROLE_COLORS[role], "edgecolor": "none"})


def draw_arrow(ax: Axes, points: Sequence[tuple[float, float]], *, role: str | None = None,
               label: str | None = None, side: str = "right", segment: int = 0, at: float = 0.5,
               head: bool = True) -> None:
    """A tensor flowing along ``points`` (a polyline), arrowhead at the end, its shape label beside
    segment ``segment`` (``side`` right/left/above/below), preceded by a Q/K/V badge when ``role``."""
    color = ROLE_COLORS[role] if role else EDGE
    width = 1.7 if role else 1.2
    for (x0, y0), (x1, y1) in zip(points[:-2], points[1:-1], strict=True):
        ax.plot([x0, x1], [y0, y1], color=color, linewidth=width, solid_capstyle="butt", zorder=1)
    ax.add_patch(FancyArrowPatch(points[-2], points[-1], arrowstyle="-|>" if head else "-",
                                 mutation_scale=11, color=color, linewidth=width, shrinkA=0, shrinkB=0,
                                 zorder=1))
    if label is None and role is None:
        return
    (x0, y0), (x1, y1) = points[segment], points[segment + 1]
    mx, my = x0 + at * (x1 - x0), y0 + at * (y1 - y0)
    gap = 0.08
    if side in ("right", "left"):
        sign, ha = (1, "left") if side == "right" else (-1, "right")
        if role:  # the badge first, then the shape beyond it
            draw_badge(ax, mx + sign * gap, my, role, ha=ha)
            gap += 0.27
        if label:
            draw_text(ax, mx + sign * gap, my, label, size=SHAPE_SIZE, color=MUTED, ha=ha, zorder=5)
        return
    sign = 1 if side == "above" else -1
    if role:  # badge on one side of a horizontal arrow, the shape on the other
        draw_badge(ax, mx, my + sign * (gap + 0.08), role)
        sign = -sign
    if label:
        draw_text(ax, mx, my + sign * gap, label, size=SHAPE_SIZE, color=MUTED,
                  va="bottom" if sign > 0 else "top", zorder=5)


def draw_frame(ax: Axes, x0: float, y0: float, x1: float, y1: float, label: str, *,
               label_at: str = "left") -> None:
    """A dashed frame around a stack of identical layers, labelled on its top edge (e.g. 'N = 6 x')."""
    ax.add_patch(FancyBboxPatch((x0, y0), x1 - x0, y1 - y0, boxstyle="round,pad=0,rounding_size=0.12",
                                facecolor="#F7F7F7", edgecolor=MUTED, linewidth=1.0, linestyle="--",
                                zorder=0))
    x = x0 + 0.12 if label_at == "left" else x1 - 0.12
    draw_text(ax, x, y1, label, size=TEXT_SIZE, ha=label_at, fontweight="bold", zorder=5,
              bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": MUTED})


def draw_mask_grid(ax: Axes, x0: float, y0: float, size: float, n: int) -> None:
    """An n x n causal mask with its lower-left corner at (x0, y0): hidden cells (key j > query i)
    dark and hatched, visible cells white; query i is row i from the top, key j is column j."""
    cell = size / n
    for i in range(n):
        for j in range(n):
            hidden = j > i
            ax.add_patch(Rectangle((x0 + j * cell, y0 + size - (i + 1) * cell), cell, cell,
                                   facecolor=HIDDEN if hidden else "white", edgecolor="#9A9A9A",
                                   hatch="///" if hidden else None, linewidth=0.6, zorder=2))
    ax.add_patch(Rectangle((x0, y0), size, size, fill=False, edgecolor=EDGE, linewidth=1.0, zorder=3))


# ---------------------------------------------------------------------------------------------------
# Residual connections (chapters 7-8)
# ---------------------------------------------------------------------------------------------------
class Sublayer(NamedTuple):
    """One sublayer of a Transformer layer: its label, its kind of box, where its Q, K, V come from."""

    text: str
    kind: str  # "attention" or "feed-forward"
    inputs: str = ""  # "self": Q, K, V from the stream; "cross": Q from the stream, K and V from memory


class Column(NamedTuple):
    """What ``residual_column`` drew: where the stream leaves, the sublayer boxes, the memory entry."""

    bottom: float  # y where the stream leaves the column
    boxes: list[Box]  # the sublayers, top to bottom
    memory_in: tuple[float, float] | None  # where the encoder output joins a cross-attention


def draw_norm(ax: Axes, x: float, y: float) -> Box:
    """A LayerNorm box just below (x, y), with the arrow into it."""
    norm = draw_box(ax, x, y - 0.36, 1.3, 0.32, "LayerNorm", "norm")
    draw_arrow(ax, [(x, y), norm.top()])
    return norm


def residual_column(ax: Axes, x: float, y: float, sublayers: list[Sublayer], norm_first: bool, *,
                     width: float = 1.9, side: int = 1, label_residual: bool = False) -> Column:
    """Sublayers top to bottom from (x, y), each bypassed by a residual arrow into an add node (+),
    LayerNorm after the add (post-norm) or first thing inside the branch (pre-norm)."""
    boxes, memory_in, d = [], None, 0.3 * width
    x_res = x + side * (width / 2 + 0.3)  # the residual lines run down here
    for i, sub in enumerate(sublayers):
        split = y
        draw_dot(ax, x, split)
        if norm_first:
            y = draw_norm(ax, x, y).bottom()[1]
        box = draw_box(ax, x, y - (0.85 if sub.inputs else 0.45), width, 0.5, sub.text, sub.kind)
        if sub.inputs == "self":  # one tensor, three roles
            draw_arrow(ax, [(x, y), (x, y - 0.22)], head=False)
            draw_arrow(ax, [(x - d, y - 0.22), (x + d, y - 0.22)], head=False)
            for role, dx in zip("QKV", (-d, 0, d), strict=True):
                draw_arrow(ax, [(x + dx, y - 0.22), box.top(dx)], role=role)
        elif sub.inputs == "cross":  # queries from this stream, keys and values from the encoder
            draw_arrow(ax, [(x, y), (x, y - 0.12), (x + d, y - 0.12), box.top(d)], role="Q", segment=2)
            memory_in = (x - d, y - 0.3)
            draw_arrow(ax, [memory_in, (x, y - 0.3)], head=False)
            draw_arrow(ax, [memory_in, box.top(-d)], role="K")
            draw_arrow(ax, [(x, y - 0.3), box.top()], role="V")
        else:
            draw_arrow(ax, [(x, y), box.top()])
        add = draw_add(ax, x, box.bottom()[1] - 0.32)
        draw_arrow(ax, [box.bottom(), add.top()])
        draw_arrow(ax, [(x, split), (x_res, split), (x_res, add.y), add.right() if side > 0 else add.left()])
        if label_residual:
            draw_text(ax, x_res + side * 0.1, (split + add.y) / 2, "residual", size=SHAPE_SIZE,
                      color=MUTED, rotation=90)
        y = add.bottom()[1] if norm_first else draw_norm(ax, x, add.bottom()[1]).bottom()[1]
        if i < len(sublayers) - 1:
            draw_arrow(ax, [(x, y), (x, y - 0.25)], head=False)
            y -= 0.25
        boxes.append(box)
    return Column(y, boxes, memory_in)


# ---------------------------------------------------------------------------------------------------
# The readability check (tests and the book)
# ---------------------------------------------------------------------------------------------------
def readability_problems(fig: Figure, max_width_in: float = MAX_WIDTH_IN,
                         min_fontsize: float = MIN_FONTSIZE) -> list[str]:
    """What keeps ``fig`` from reading well in the book: too wide, too small a font, texts overlapping."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    problems = []
    width = fig.get_tightbbox(renderer).width  # inches, as savefig(bbox_inches="tight") crops
    if width > max_width_in:
        problems.append(f"figure is {width:.2f} in wide after tight cropping, more than {max_width_in} in")
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    for t in texts:
        if t.get_fontsize() < min_fontsize:
            problems.append(f"text {t.get_text()!r} is {t.get_fontsize()} pt, less than {min_fontsize} pt")
    extents = [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
    for (a, box_a), (b, box_b) in combinations(extents, 2):
        if box_a.overlaps(box_b):
            problems.append(f"texts {a!r} and {b!r} overlap")
    return problems
