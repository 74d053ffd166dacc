"""Interactive attention views: the course's own trained models, explored in the page.

Shape legend: L layers, H heads, T_q queries, T_k keys (S source tokens, T target tokens).

A view is one HTML output, self-contained: the weights it shows are embedded in it as JSON (in
thousandths, so a shown weight is the model's to within 5e-4), and the script that draws it
(``utils/views.js``, vanilla JavaScript and SVG) travels inside it. It makes no request of any kind, so
it works offline, in the rendered book, JupyterLab, Colab and VS Code alike. What it shows:

- a **head view**: the queries in a column on the left, the keys on the right, a line from query i to
  key j for every weight a_ij, as thick and as dark as the weight, one colour per head. Hover, click
  or focus a token (Tab; the arrow keys move between tokens) to see its own lines and weights, also as
  text for screen readers. Masked keys (a decoder's future) are marked "masked", not drawn;
- a **model view**: every layer x head as a small heatmap; click one to choose that layer and head;
- a sentence picker when the view holds several examples, and for an encoder-decoder the three kinds
  of attention: encoder self-attention, masked decoder self-attention, cross-attention.

A view's labels follow the notebook's language (``utils.language``), and on the Chinese pages of the
book the page's. It never replaces a static figure: print and readers without JavaScript see the
heatmaps the chapter draws with ``utils.plots``.

    view = transformer_view(model, pairs, src_vocab, tgt_vocab)   # chapter 8's trained Transformer
    view                                                            # the cell's output shows it
    attention_view(weights, tokens, kind="causal")                  # weights (L, H, T, T) of any model
    examples_view([(label, weights, queries, keys), ...], kind="rnn")  # a picker over examples
"""

from __future__ import annotations

import hashlib
import html
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from utils import language as course_language

if TYPE_CHECKING:
    from utils.data import Pair, Vocab
    from utils.gpt import TinyGPT
    from utils.transformer import Transformer

MAX_BYTES = 300_000  # the budget of one view, script and weights included
KINDS = ("encoder", "decoder_self", "cross", "self", "causal", "rnn")
CAUSAL_KINDS = ("decoder_self", "causal")


@cache
def _script() -> str:
    return (Path(__file__).with_name("views.js")).read_text(encoding="utf-8")


_STYLE = """<style>
.course-attn{font:14px/1.4 system-ui,sans-serif;margin:.5em 0;max-width:100%}
.course-attn-controls{display:flex;flex-wrap:wrap;gap:.4em 1em;align-items:center;margin-bottom:.4em}
.course-attn-control{display:inline-flex;align-items:center;gap:.3em;max-width:100%}
.course-attn select{font:inherit;min-width:0;max-width:100%;flex:1 1 auto}
.course-attn-head{font:inherit;min-width:2em;min-height:2em;margin:0 .15em;border:2px solid;
 border-radius:4px;cursor:pointer}
.course-attn-tab{font:inherit;border:1px solid currentColor;background:transparent;color:inherit;
 padding:.2em .8em;margin-right:.3em;border-radius:4px 4px 0 0;cursor:pointer}
.course-attn-tab[aria-selected=true]{font-weight:bold;border-bottom-width:3px}
.course-attn-body{overflow-x:auto}
.course-attn-body svg{max-width:none;height:auto;color:inherit}
.course-attn-hint,.course-attn-note,.course-attn-status{margin:.3em 0}
.course-attn-status{min-height:2.8em}
.course-attn-word{font-size:13px;fill:currentColor}
.course-attn-w{font-size:11px;fill:currentColor}
.course-attn-axis,.course-attn-small{font-size:11px;fill:currentColor}
.course-attn-body svg.course-attn-fit{max-width:100%}
.course-attn-box{fill:transparent;stroke:transparent}
.course-attn-token{cursor:pointer;outline:none}
.course-attn-token:focus .course-attn-box{stroke:currentColor;stroke-width:2}
.course-attn-active .course-attn-box{fill:rgba(127,127,127,.2)}
.course-attn-masked .course-attn-word{fill-opacity:.45;text-decoration:line-through}
.course-attn-grid{display:grid;gap:4px;justify-content:start;margin-bottom:.6em}
.course-attn-thumb{padding:1px;border:1px solid transparent;background:transparent;cursor:pointer;
 color:inherit}
.course-attn-thumb:hover,.course-attn-thumb:focus,.course-attn-thumb[aria-pressed=true]{border-color:currentColor}
.course-attn-thumb[aria-pressed=true]{border-width:2px}
@media print{.course-attn{display:none}}
</style>"""

# Shown until the view's script runs, and where it never runs: a printout, an untrusted notebook (Jupyter
# strips the scripts of outputs it did not run itself), a browser without JavaScript.
_FALLBACK = {"en": "The interactive view appears here when its script runs (run the cell, or read the "
                   "book online with JavaScript on); the static figures show the same weights.",
             "zh_CN": "交互视图要等它的脚本运行后才会出现在这里（运行这个单元格，"
                      "或在启用 JavaScript 的浏览器里在线阅读本书）；静态图展示的是同样的权重。",
             "zh_TW": "互動檢視要等它的腳本執行後才會出現在這裡（執行這個儲存格，"
                      "或在啟用 JavaScript 的瀏覽器裡線上閱讀本書）；靜態圖呈現的是同樣的權重。"}


def _output(data: dict, classes: str, language: str) -> str:
    """The HTML of one view: its style, the data as JSON (escaped so that no token can end the script
    element), the script, inside one div whose id is a hash of the data."""
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    payload = payload.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    uid = "course-attn-" + hashlib.sha1(payload.encode()).hexdigest()[:10]
    examples = data.get("examples", [])
    notes = "".join(f'<p class="course-attn-note" data-example="{i}"{"" if i == 0 else " hidden"}>'
                    f"{html.escape(e['note'])}</p>" for i, e in enumerate(examples) if e["note"])
    return (f'<div class="{classes}" id="{uid}" data-lang="{language}">{_STYLE}'
            f'<p class="course-attn-fallback">{_FALLBACK[language]}</p>{notes}'
            f'<script type="application/json" class="course-attn-data">{payload}</script>'
            f"<script>{_script()}</script></div>")


def _check_budget(page: str, what: str) -> None:
    size = len(page.encode())
    if size > MAX_BYTES:
        raise ValueError(f"the {what} takes {size / 1000:.0f} KB, over its budget of {MAX_BYTES / 1000:.0f} "
                         "KB: show fewer examples, layers or tokens")


@dataclass
class AttentionMaps:
    """One kind of attention for one example: weights (L, H, T_q, T_k), rows summing to 1."""

    kind: str
    queries: list[str]
    keys: list[str]
    weights: np.ndarray
    layer_names: list[str] | None = None

    @property
    def causal(self) -> bool:
        return self.kind in CAUSAL_KINDS


@dataclass
class Example:
    """A sentence of the picker: its label, a line under it (for example the model's output), its maps."""

    label: str
    maps: list[AttentionMaps]
    note: str = ""
    correct: bool | None = None  # for a translation: is the model's output the reference?


def _as_array(weights: torch.Tensor | np.ndarray, what: str) -> np.ndarray:
    if isinstance(weights, torch.Tensor):
        weights = weights.detach().float().cpu().numpy()
    array = np.asarray(weights, dtype=np.float64)
    if array.ndim == 2:
        array = array[None, None]
    elif array.ndim == 3:
        array = array[None]
    if array.ndim != 4:
        raise ValueError(f"{what}: expected weights of shape (T_q, T_k), (H, T_q, T_k) or (L, H, T_q, T_k), "
                         f"got {tuple(np.shape(weights))}")
    return array


def attention_maps(weights: torch.Tensor | np.ndarray, queries: Sequence[str],
                   keys: Sequence[str] | None = None, kind: str = "self",
                   layer_names: Sequence[str] | None = None) -> AttentionMaps:
    """Check and wrap one kind of attention: weights (T_q, T_k), (H, T_q, T_k) or (L, H, T_q, T_k)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    keys = list(queries if keys is None else keys)
    queries = list(queries)
    array = _as_array(weights, kind)
    if array.shape[2:] != (len(queries), len(keys)):
        raise ValueError(f"{kind}: weights end in {array.shape[2:]} (T_q, T_k), but there are {len(queries)} "
                         f"query tokens and {len(keys)} key tokens")
    if not np.isfinite(array).all() or array.min() < -1e-6 or array.max() > 1 + 1e-6:
        raise ValueError(f"{kind}: attention weights lie in [0, 1]; got values from {array.min():.3g} to "
                         f"{array.max():.3g} (scores before the softmax?)")
    sums = array.sum(-1)
    if np.abs(sums - 1).max() > 1e-3:
        raise ValueError(f"{kind}: every row of attention weights sums to 1; a row sums to "
                         f"{sums.flat[np.abs(sums - 1).argmax()]:.4f} (a padded query row, or weights over "
                         "the wrong axis?)")
    if kind in CAUSAL_KINDS and np.triu(array, k=1).max() > 1e-6:
        raise ValueError(f"{kind}: a causal map has no weight above the diagonal (query i sees keys "
                         f"j <= i); the largest there is {np.triu(array, k=1).max():.3g}")
    if layer_names is not None and len(layer_names) != array.shape[0]:
        raise ValueError(f"{kind}: {len(layer_names)} layer names for {array.shape[0]} layers")
    return AttentionMaps(kind, queries, keys, array, list(layer_names) if layer_names else None)


@dataclass
class AttentionView:
    """A self-contained interactive view of one or more examples; shown as a notebook cell's output."""

    examples: list[Example]
    language: str = field(default_factory=course_language.current)

    def __post_init__(self):
        if not self.examples:
            raise ValueError("an attention view needs at least one example")
        if self.language not in course_language.LANGUAGES:
            raise ValueError(f"language must be one of {', '.join(course_language.LANGUAGES)}, "
                             f"got {self.language!r}")
        self.html = _output(self.data(), "course-attn", self.language)
        _check_budget(self.html, "view")

    def data(self) -> dict:
        """What the page's script reads: weights in thousandths (integers)."""
        return {"examples": [
            {"label": e.label, "note": e.note,
             "maps": [{"kind": m.kind, "queries": m.queries, "keys": m.keys, "causal": m.causal,
                       "layerNames": m.layer_names,
                       "weights": np.rint(m.weights * 1000).astype(int).tolist()} for m in e.maps]}
            for e in self.examples]}

    def shown_weights(self, example: int, kind: str) -> np.ndarray:
        """The weights the view shows for one example and kind, (L, H, T_q, T_k), as embedded."""
        for maps in self.examples[example].maps:
            if maps.kind == kind:
                return np.rint(maps.weights * 1000) / 1000
        raise KeyError(f"example {example} has no {kind!r} attention; it has "
                       f"{[m.kind for m in self.examples[example].maps]}")

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        first = self.examples[0].maps[0].weights.shape
        kinds = ", ".join(m.kind for m in self.examples[0].maps)
        return (f"AttentionView: {len(self.examples)} example(s), {kinds}; {first[0]} layer(s) x "
                f"{first[1]} head(s); {len(self.html.encode()) / 1000:.0f} KB")

    def save(self, path: str | Path) -> Path:
        """Write the view as a page of its own (open it in any browser, offline)."""
        path = Path(path)
        path.write_text(f'<!DOCTYPE html><html lang="{self.language.replace("_", "-")}"><head>'
                        '<meta charset="utf-8"><title>Attention</title></head><body>'
                        f"{self.html}</body></html>", encoding="utf-8")
        return path


def attention_view(weights: torch.Tensor | np.ndarray, queries: Sequence[str],
                   keys: Sequence[str] | None = None, *, kind: str = "self",
                   layer_names: Sequence[str] | None = None, label: str = "",
                   language: str | None = None) -> AttentionView:
    """A view of one map: weights (T_q, T_k), (H, T_q, T_k) or (L, H, T_q, T_k) between the tokens."""
    maps = attention_maps(weights, queries, keys, kind, layer_names)
    return AttentionView([Example(label, [maps])], language or course_language.current())


def examples_view(examples: Sequence[tuple], *, kind: str = "self",
                  layer_names: Sequence[str] | None = None, language: str | None = None) -> AttentionView:
    """A view with a picker over several examples of one kind of attention: each example is
    ``(label, weights, queries, keys)`` with weights (T_q, T_k), (H, T_q, T_k) or (L, H, T_q, T_k)."""
    chosen = []
    for example in examples:
        if len(example) != 4:
            raise ValueError(f"each example is (label, weights, queries, keys), got {len(example)} items")
        label, weights, queries, keys = example
        chosen.append(Example(label, [attention_maps(weights, queries, keys, kind, layer_names)]))
    return AttentionView(chosen, language or course_language.current())


@torch.no_grad()
def transformer_view(model: Transformer, pairs: Sequence[Pair], src_vocab: Vocab, tgt_vocab: Vocab, *,
                     labels: Sequence[str] | None = None, max_new_tokens: int | None = None,
                     sep: str = " ", language: str | None = None) -> AttentionView:
    """Chapter 8's encoder-decoder on its own greedy translations of ``pairs``: encoder, masked decoder
    and cross-attention of every layer and head.

    The decoder reads ``<bos>`` and the words it wrote: decoder self-attention's queries and keys are
    those inputs; a cross-attention query is labelled with the word its position writes (the argmax of
    its logits), so that the row of "chat" shows where the model looked to write "chat". ``sep`` joins
    the written tokens in each example's note ("" for Chinese characters)."""
    from utils.data import make_batch
    from utils.translation import greedy_decode

    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    examples = []
    try:
        for n, pair in enumerate(pairs):
            batch = make_batch([pair], src_vocab, tgt_vocab).to(device)
            out = greedy_decode(model, batch.src, max_new_tokens)[0].tolist()  # ids after <bos>
            written = tgt_vocab.decode(out)                                  # up to <eos>
            tgt_in = torch.tensor([[tgt_vocab.bos_id, *tgt_vocab.encode(written)]], device=device)
            weights = model.attention_weights(batch.src, tgt_in)   # each (L, 1, H, T_q, T_k)
            writes = [tgt_vocab.itos[i] for i in model(batch.src, tgt_in)[0].argmax(-1).tolist()]
            reads = ["<bos>", *written]
            src = list(pair.src)
            maps = [attention_maps(weights["encoder"][:, 0], src, src, "encoder"),
                    attention_maps(weights["decoder_self"][:, 0], reads, reads, "decoder_self"),
                    attention_maps(weights["cross"][:, 0], writes, src, "cross")]
            right = list(written) == list(pair.tgt)
            note = f"→ {sep.join(written)}" + ("" if right else f"   ≠ {sep.join(pair.tgt)}")
            label = labels[n] if labels else f"{'✓' if right else '✗'} {' '.join(src)}"
            examples.append(Example(label, maps, note, right))
    finally:
        model.train(was_training)
    return AttentionView(examples, language or course_language.current())


@torch.no_grad()
def causal_lm_view(model: TinyGPT, sentences: Sequence[Sequence[str]], vocab: Vocab, *,
                   layer_names: Sequence[str] | None = None, language: str | None = None) -> AttentionView:
    """Chapter 9's GPT: causal self-attention of every layer and head over ``<bos>`` and each sentence."""
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    examples = []
    try:
        for sentence in sentences:
            ids = torch.tensor([vocab.encode(sentence, bos=True)], device=device)
            tokens = ["<bos>", *sentence]
            maps = attention_maps(model.attention_weights(ids)[:, 0], tokens, tokens, "causal", layer_names)
            examples.append(Example(" ".join(sentence), [maps]))
    finally:
        model.train(was_training)
    return AttentionView(examples, language or course_language.current())


# ---------------------------------------------------------------------------------------------------
# Explorables: a slider over precomputed frames of a small chart, no kernel needed
# ---------------------------------------------------------------------------------------------------
@dataclass
class Explorable:
    """A chart whose slider steps through frames computed in advance (chapters 2 and 6)."""

    name: str
    data: dict
    language: str = field(default_factory=course_language.current)

    def __post_init__(self):
        self.html = _output({"explorable": self.name, **self.data}, "course-attn course-explore",
                            self.language)
        _check_budget(self.html, "explorable")

    def frame(self, series: str, value: int) -> list:
        """The numbers the chart draws for one series at one slider value."""
        index = self.data["values"].index(value)
        return next(s["frames"][index] for s in self.data["series"] if s["key"] == series)

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return (f"Explorable {self.name}: {len(self.data['values'])} slider values "
                f"{self.data['values']}; {len(self.html.encode()) / 1000:.0f} KB")


def softmax_scale_explorable(d_ks: Sequence[int] = (1, 4, 16, 64, 256, 1024), n_keys: int = 10,
                             seed: int = 0, language: str | None = None) -> Explorable:
    """Chapter 2: the weights of one query over ``n_keys`` keys, with and without the 1/sqrt(d_k), as
    d_k grows. Query and keys are standard normal; the scores for d_k use their first d_k entries, so
    that the slider adds dimensions to the same vectors."""
    from utils.attention import dot_scores, scaled_dot_scores

    d_ks = [int(d) for d in d_ks]
    if not d_ks or min(d_ks) < 1:
        raise ValueError(f"d_ks must be positive sizes, got {d_ks}")
    generator = torch.Generator().manual_seed(seed)
    q = torch.randn(1, max(d_ks), generator=generator)        # (1, d)
    k = torch.randn(n_keys, max(d_ks), generator=generator)   # (T_k, d)
    frames = {"unscaled": [], "scaled": []}
    for d in d_ks:
        for name, score in (("unscaled", dot_scores), ("scaled", scaled_dot_scores)):
            weights = torch.softmax(score(q[:, :d], k[:, :d])[0], dim=-1)   # (T_k,)
            frames[name].append([round(w, 3) for w in weights.tolist()])
    data = {"values": d_ks, "start": 0, "x": list(range(n_keys)), "xTicks": list(range(n_keys)),
            "yMin": 0, "yMax": 1, "yTicks": [0, 0.5, 1], "bars": True, "digits": 2,
            "series": [{"key": name, "frames": frames[name]} for name in ("unscaled", "scaled")]}
    return Explorable("softmax_scale", data, language or course_language.current())


def pe_offset_explorable(d_model: int = 64, positions: Sequence[int] = (0, 10, 25, 50, 100, 200),
                         max_offset: int = 50, language: str | None = None) -> Explorable:
    """Chapter 6: PE(p) . PE(p + k) against the offset k, -max_offset..max_offset, for each start p
    (offsets that would reach a position below 0 are left out)."""
    from utils.positional import sinusoidal_encoding

    positions = [int(p) for p in positions]
    if not positions or min(positions) < 0:
        raise ValueError(f"positions must be >= 0, got {positions}")
    table = sinusoidal_encoding(max(positions) + max_offset + 1, d_model)   # (P, C)
    offsets = list(range(-max_offset, max_offset + 1))
    frames = [[round((table[p] @ table[p + k]).item(), 2) if p + k >= 0 else None for k in offsets]
              for p in positions]
    step = max(1, max_offset // 2)
    lowest = min(v for frame in frames for v in frame if v is not None)
    ticks = [d_model * t // 8 for t in range(-4, 5) if d_model * t / 8 >= min(lowest, 0)]
    data = {"values": positions, "start": 0, "x": offsets,
            "xTicks": [i for i, k in enumerate(offsets) if k % step == 0],
            "yMin": ticks[0], "yMax": d_model // 2, "yTicks": ticks, "bars": False, "digits": 1,
            "series": [{"key": "dot", "frames": frames}]}
    return Explorable("pe_offset", data, language or course_language.current())
