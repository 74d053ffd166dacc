"""Architecture diagrams drawn from the model's own configuration (chapters 1, 3-5, 7, 8).

Every size on a drawing is read from the module or config passed in (``nn.Linear.out_features``,
``gru.hidden_size``, ``TransformerConfig.d_ff``, ...), so a figure cannot drift from the code. The visual
vocabulary (Q/K/V colours, box fills, shape labels) is ``utils.diagrams``. Data flows top to bottom.

- ``draw_rnn_attention(model)``: chapter 1's GRU encoder-decoder with attention, one decoder step, in
  the spirit of Bahdanau et al. (2015), written with queries, keys and values.
- ``draw_attention_block(module)``: single-head attention, softmax(Q K^T / sqrt(d_k)) V (chapters 3-4).
- ``draw_multi_head(mha, seq_len)``: multi-head attention, Vaswani et al. (2017), Figure 2 (chapter 5).
- ``draw_encoder_layer(config_or_layer)`` and ``draw_encoder_layers_post_vs_pre(config)``: one encoder
  layer with its residual connections, post-norm (the paper) or pre-norm (Xiong et al., 2020) (chapter 7).
- ``draw_transformer(config, src_len, tgt_len)``: the encoder-decoder of Vaswani et al. (2017), Figure 1,
  with the causal mask of the decoder's self-attention drawn beside it (chapter 8).
- ``draw_bert_and_vit(bert, vit, seq_len)``: the two encoder-only models of chapter 12 side by side, a
  tiny BERT (Devlin et al., 2019) and a Vision Transformer (Dosovitskiy et al., 2021).

Each returns a ``matplotlib.figure.Figure`` made through pyplot (like ``utils.plots``): in a notebook end
the line with ``;`` or assign the figure, else Jupyter shows it twice.
"""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from utils.attention import MultiHeadAttention, SelfAttention, SingleHeadAttention
from utils.bert import BERTConfig
from utils.diagrams import (
    MUTED,
    SHAPE_SIZE,
    Column,
    Sublayer,
    draw_arrow,
    draw_box,
    draw_dot,
    draw_frame,
    draw_mask_grid,
    draw_norm,
    draw_text,
    fit_height,
    new_diagram,
    residual_column,
    shape,
)
from utils.rnn import AttentionSeq2SeqGRU
from utils.transformer import EncoderLayer, Transformer, TransformerConfig
from utils.vit import ViTConfig


def _expect(obj: object, types: tuple[type, ...], where: str, hint: str) -> None:
    if not isinstance(obj, types):
        names = " or ".join(f"{t.__module__}.{t.__name__}" for t in types)
        raise TypeError(f"{where} expects a {names}, got {type(obj).__name__}; {hint}")


def _positive(value: object, name: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive int (a sequence length), got {value!r}")


# ---------------------------------------------------------------------------------------------------
# Chapter 1: the GRU encoder-decoder with attention
# ---------------------------------------------------------------------------------------------------
def draw_rnn_attention(model: AttentionSeq2SeqGRU) -> Figure:
    """One decoder step i of ``AttentionSeq2SeqGRU``: q_i from s_i, keys and values from h_1..h_S, c_i."""
    _expect(model, (AttentionSeq2SeqGRU,), "draw_rnn_attention",
            "build one with utils.rnn.train_rnn_translator(data, attention=True) and pass run.model")
    e, c = model.encoder.embed.embedding_dim, model.encoder.gru.hidden_size
    d_k, d_v = model.attention.w_q.out_features, model.attention.w_v.out_features
    v_src, v_tgt = model.encoder.embed.num_embeddings, model.out.out_features
    fig, ax = new_diagram(7.6, 7.3, "GRU encoder-decoder with attention: decoder step i")
    # encoder: tokens -> GRU cells -> states h_1 .. h_S
    xs = [2.9, 4.05, 5.2, 6.7]
    draw_text(ax, 0.15, 6.35, f"source ids {shape('B', 'S')}\nembedded: d_emb={e}\n(vocabulary {v_src})",
              size=SHAPE_SIZE, color=MUTED, ha="left")
    draw_text(ax, 0.15, 5.5, f"encoder GRU\nhidden size C={c}", ha="left")
    cells = []
    for i, x in enumerate(xs):
        name = "S" if i == len(xs) - 1 else str(i + 1)
        draw_text(ax, x, 6.55, f"$x_{{{name}}}$")
        cells.append(draw_box(ax, x, 5.55, 0.75, 0.4, "GRU", "recurrent"))
        draw_arrow(ax, [(x, 6.4), cells[-1].top()])
        draw_arrow(ax, [cells[-1].bottom(), (x, 4.8)], label=f"$h_{{{name}}}$", side="right")
    for a, b in zip(cells[:-1], cells[1:], strict=True):  # the recurrence h_{j-1} -> h_j
        draw_arrow(ax, [a.right(), b.left()])
    draw_text(ax, (xs[2] + xs[3]) / 2, 5.75, "...")
    states = draw_box(ax, 4.8, 4.6, 4.4, 0.4,
                      f"encoder states $h_1, \\ldots, h_S$: {shape('B', 'S', f'C={c}')}", "tensor")
    w_k = draw_box(ax, 4.05, 3.7, 1.5, 0.45, f"$W_K$  {c}×{d_k}", role="K")
    w_v = draw_box(ax, 6.5, 3.7, 1.5, 0.45, f"$W_V$  {c}×{d_v}", role="V")
    draw_arrow(ax, [(w_k.x, states.bottom()[1]), w_k.top()])
    draw_arrow(ax, [(w_v.x, states.bottom()[1]), w_v.top()])
    # decoder: y_{i-1} and s_{i-1} -> s_i -> q_i
    draw_text(ax, 1.1, 4.6, f"$y_{{i-1}}$ embedded, d_emb={model.embed.embedding_dim}", size=SHAPE_SIZE,
              color=MUTED)
    dec = draw_box(ax, 1.1, 3.7, 1.7, 0.5, "decoder GRU\n$s_i$ from $y_{i-1}$, $s_{i-1}$", "recurrent")
    draw_arrow(ax, [(1.1, 4.45), dec.top()])
    w_q = draw_box(ax, 1.1, 2.55, 1.5, 0.45, f"$W_Q$  {c}×{d_k}", role="Q")
    draw_arrow(ax, [dec.bottom(), w_q.top()], label=f"$s_i$ {shape('B', 'T', f'C={c}')}", at=0.35)
    # attention: scores, softmax over the source, weighted sum of the values
    scores = draw_box(ax, w_k.x, 2.55, 1.8, 0.5, "scores $q_i \\cdot k_j$\nfor j = 1..S", "attention")
    draw_arrow(ax, [w_q.right(), scores.left()], role="Q", label=shape("B", "T", f"d_k={d_k}"),
               side="above")
    draw_arrow(ax, [w_k.bottom(), scores.top()], role="K", label=shape("B", "S", f"d_k={d_k}"))
    soft = draw_box(ax, w_k.x, 1.6, 2.5, 0.5, "softmax over the source\n(padding set to −inf)",
                    "attention")
    draw_arrow(ax, [scores.bottom(), soft.top()], label=shape("B", "T", "S"))
    total = draw_box(ax, w_k.x, 0.7, 2.5, 0.45, "$c_i = \\sum_j \\alpha_{ij} v_j$", "attention")
    draw_arrow(ax, [soft.bottom(), total.top()], label=f"$\\alpha_i$ {shape('B', 'T', 'S')}")
    draw_arrow(ax, [w_v.bottom(), (w_v.x, total.y), total.right()], role="V",
               label=shape("B", "S", f"d_v={d_v}"), at=0.4)
    # output layer: logits for y_i from [s_i; c_i]
    out = draw_box(ax, 1.1, -0.35, 2.0, 0.5, f"output layer\n$[s_i; c_i]$ → vocab={v_tgt}", "linear")
    draw_dot(ax, 1.1, 2.95)
    draw_arrow(ax, [(1.1, 2.95), (0.15, 2.95), (0.15, -0.35), out.left()])
    draw_arrow(ax, [total.bottom(), (total.x, out.y), out.right()], segment=1, side="below",
               label=f"$c_i$ {shape('B', 'T', f'd_v={d_v}')}")
    logits = shape("B", "T", f"vocab={v_tgt}")
    draw_arrow(ax, [out.bottom(), (1.1, -1.05)], label=f"logits for $y_i$: {logits}")
    return fit_height(fig, ax, -1.2)


# ---------------------------------------------------------------------------------------------------
# Chapters 3-4: single-head attention
# ---------------------------------------------------------------------------------------------------
def draw_attention_block(module: SingleHeadAttention) -> Figure:
    """softmax(Q K^T / sqrt(d_k)) V with W_Q, W_K, W_V of a ``SingleHeadAttention`` or ``SelfAttention``."""
    _expect(module, (SingleHeadAttention,), "draw_attention_block",
            "for MultiHeadAttention use draw_multi_head(mha, seq_len)")
    d_in, d_kv = module.w_q.in_features, module.w_k.in_features
    d_k, d_v = module.w_q.out_features, module.w_v.out_features
    is_self = isinstance(module, SelfAttention)
    t_q, t_k = ("T", "T") if is_self else ("T_q", "T_k")
    title = "Self-attention: Q, K and V from one sequence" if is_self else "Attention: one head"
    fig, ax = new_diagram(7.4, 7.2, title)
    xq, xk, xv, y_in, y_bar = 1.3, 3.5, 5.7, 6.45, 5.75
    if is_self:
        x_in = draw_box(ax, xk, y_in, 1.0, 0.42, "X", "tensor")
        draw_arrow(ax, [x_in.bottom(), (xk, y_bar)], label=shape("B", "T", f"C={d_in}"), head=False)
        draw_arrow(ax, [(xq, y_bar), (xv, y_bar)], head=False)
        draw_dot(ax, xk, y_bar)
        sources = {"Q": (xq, y_bar), "K": (xk, y_bar), "V": (xv, y_bar)}
    else:
        x_q = draw_box(ax, xq, y_in, 2.2, 0.42, "$X_q$  (queries side)", "tensor")
        x_kv = draw_box(ax, (xk + xv) / 2, y_in, 2.6, 0.42, "$X_{kv}$  (keys/values side)", "tensor")
        draw_arrow(ax, [x_kv.bottom(), (x_kv.x, y_bar)], label=shape("B", t_k, f"d_kv={d_kv}"), head=False)
        draw_arrow(ax, [(xk, y_bar), (xv, y_bar)], head=False)
        draw_dot(ax, x_kv.x, y_bar)
        sources = {"Q": x_q.bottom(), "K": (xk, y_bar), "V": (xv, y_bar)}
    proj = {}
    for role, x, d_out in (("Q", xq, d_k), ("K", xk, d_k), ("V", xv, d_v)):
        d = d_in if role == "Q" else d_kv
        proj[role] = draw_box(ax, x, 5.2, 1.5, 0.45, f"$W_{role}$  {d}×{d_out}", role=role)
        label = shape("B", t_q, f"C={d_in}") if role == "Q" and not is_self else None
        draw_arrow(ax, [sources[role], proj[role].top()], label=label)
    scores = draw_box(ax, 2.4, 4.0, 1.5, 0.55, "$QK^\\top / \\sqrt{d_k}$", "attention")
    draw_arrow(ax, [proj["Q"].bottom(), (xq, scores.y), scores.left()], role="Q",
               label=shape("B", t_q, f"d_k={d_k}"), side="left")
    draw_arrow(ax, [proj["K"].bottom(), (xk, scores.y), scores.right()], role="K",
               label=shape("B", t_k, f"d_k={d_k}"))
    mask = draw_box(ax, 2.4, 3.0, 2.7, 0.5, "mask (optional): scores\nof hidden keys set to −inf",
                    "attention", dashed=True)
    draw_arrow(ax, [scores.bottom(), mask.top()], label=f"scores {shape('B', t_q, t_k)}")
    soft = draw_box(ax, 2.4, 2.0, 2.7, 0.5, "softmax over the keys\n(each row sums to 1)", "attention")
    draw_arrow(ax, [mask.bottom(), soft.top()])
    mix = draw_box(ax, 2.4, 1.0, 1.6, 0.45, "weights @ V", "attention")
    draw_arrow(ax, [soft.bottom(), mix.top()], label=f"weights {shape('B', t_q, t_k)}")
    draw_arrow(ax, [proj["V"].bottom(), (xv, mix.y), mix.right()], role="V",
               label=shape("B", t_k, f"d_v={d_v}"), at=0.45)
    draw_arrow(ax, [mix.bottom(), (2.4, 0.25)], label=f"output {shape('B', t_q, f'd_v={d_v}')}")
    return fit_height(fig, ax, 0.1)


# ---------------------------------------------------------------------------------------------------
# Chapter 5: multi-head attention
# ---------------------------------------------------------------------------------------------------
def draw_multi_head(mha: MultiHeadAttention, seq_len: int) -> Figure:
    """Multi-head self-attention on (B, T, C): W_Q, W_K, W_V, split into H heads of D, concat, W_O."""
    _expect(mha, (MultiHeadAttention,), "draw_multi_head",
            "build one with MultiHeadAttention(d_model, num_heads); for a whole model use draw_transformer")
    _positive(seq_len, "seq_len")
    c, h, d, t = mha.d_model, mha.num_heads, mha.d_head, f"T={seq_len}"
    fig, ax = new_diagram(7.4, 8.6, f"Multi-head attention: H={h} heads of D={d}")
    xs = {"Q": 1.5, "K": 3.7, "V": 5.9}
    x_in = draw_box(ax, 3.7, 7.95, 1.0, 0.42, "X", "tensor")
    draw_arrow(ax, [x_in.bottom(), (3.7, 7.35)], label=shape("B", t, f"C={c}"), head=False)
    draw_arrow(ax, [(xs["Q"], 7.35), (xs["V"], 7.35)], head=False)
    draw_dot(ax, 3.7, 7.35)
    split = draw_box(ax, 3.7, 5.45, 6.4, 0.6, f"split into H={h} heads of D={d}: view, then transpose\n"
                     f"{shape('B', 'T', 'C')} → {shape('B', 'T', 'H', 'D')} → {shape('B', 'H', 'T', 'D')}",
                     "tensor", dashed=True)
    for role, x in xs.items():
        w = draw_box(ax, x, 6.9, 1.5, 0.45, f"$W_{role}$  {c}×{c}", role=role)
        draw_arrow(ax, [(x, 7.35), w.top()])
        draw_arrow(ax, [w.bottom(), split.top(x - 3.7)], role=role, label=shape("B", t, f"C={c}"))
    shown = min(h, 4)  # a stack of boxes, one per head, at most four drawn, the back ones peeking out
    for i in reversed(range(shown)):
        heads = draw_box(ax, 3.7 + 0.1 * i, 3.75 - 0.1 * i, 5.2, 0.75, (
            f"H={h} heads in parallel, each:\nsoftmax($Q_h K_h^\\top / \\sqrt{{D}}$) $V_h$"
            if i == 0 else ""), "attention")
    for role, x in xs.items():
        draw_arrow(ax, [split.bottom(x - 3.7), heads.top(x - 3.7)], role=role,
                   label=shape("B", f"H={h}", t, f"D={d}"))
    stack_bottom = heads.bottom()[1] - 0.1 * (shown - 1)
    concat = draw_box(ax, 3.7, 2.45, 6.4, 0.6, "concatenate the heads: transpose, then reshape\n"
                      f"{shape('B', 'H', 'T', 'D')} → {shape('B', 'T', 'H', 'D')} → {shape('B', 'T', 'C')}",
                      "tensor", dashed=True)
    draw_arrow(ax, [(3.7, stack_bottom), concat.top()], label=shape("B", f"H={h}", t, f"D={d}"))
    w_o = draw_box(ax, 3.7, 1.35, 1.5, 0.45, f"$W_O$  {c}×{c}", "linear")
    draw_arrow(ax, [concat.bottom(), w_o.top()], label=shape("B", t, f"C={c}"))
    draw_arrow(ax, [w_o.bottom(), (3.7, 0.55)], label=f"output {shape('B', t, f'C={c}')}")
    return fit_height(fig, ax, 0.4)


# ---------------------------------------------------------------------------------------------------
# Chapters 7-8: sublayers with residual connections, the encoder layer, the whole Transformer
# ---------------------------------------------------------------------------------------------------
def _layer_sizes(config_or_layer: TransformerConfig | EncoderLayer, where: str) -> tuple[int, int, int, bool]:
    _expect(config_or_layer, (TransformerConfig, EncoderLayer), where,
            "pass the model's config, or one EncoderLayer(d_model, num_heads, d_ff)")
    if isinstance(config_or_layer, TransformerConfig):
        c = config_or_layer
        return c.d_model, c.num_heads, c.d_ff, c.norm_first
    layer = config_or_layer
    return (layer.self_attn.d_model, layer.self_attn.num_heads, layer.feed_forward.w_1.out_features,
            layer.norm_first)


def _encoder_layer(ax: Axes, x: float, y: float, c: int, h: int, f: int, norm_first: bool) -> float:
    """One encoder layer from (x, y) down, titled, with input and output shapes; returns the lowest y."""
    name, cite, rule = (("pre-norm", "Xiong et al., 2020", "x + Sublayer(LayerNorm(x))") if norm_first
                        else ("post-norm", "Vaswani et al., 2017", "LayerNorm(x + Sublayer(x))"))
    draw_text(ax, x + 0.2, y, f"{name} ({cite})", size=11, fontweight="bold")
    draw_text(ax, x + 0.2, y - 0.3, rule, size=SHAPE_SIZE, color=MUTED)
    draw_arrow(ax, [(x, y - 0.5), (x, y - 0.95)], label=shape("B", "S", f"C={c}"), side="left", head=False)
    column = residual_column(ax, x, y - 0.95, [
        Sublayer(f"multi-head\nself-attention, H={h}", "attention", "self"),
        Sublayer(f"feed-forward\nC={c} → d_ff={f} → C", "feed-forward")], norm_first, label_residual=True)
    draw_arrow(ax, [(x, column.bottom), (x, column.bottom - 0.45)], label=shape("B", "S", f"C={c}"),
               side="left")
    if norm_first:
        draw_text(ax, x + 0.2, column.bottom - 0.8, "a pre-norm stack ends\nwith one more LayerNorm",
                  size=SHAPE_SIZE, color=MUTED)
    return column.bottom - (1.1 if norm_first else 0.6)


def draw_encoder_layer(config_or_layer: TransformerConfig | EncoderLayer,
                       norm_first: bool | None = None) -> Figure:
    """One encoder layer (section 3.1): self-attention and feed-forward, each with residual and LayerNorm;
    ``norm_first`` defaults to the config's (or layer's) own."""
    c, h, f, own = _layer_sizes(config_or_layer, "draw_encoder_layer")
    fig, ax = new_diagram(3.9, 7.0)
    bottom = _encoder_layer(ax, 1.2, 6.8, c, h, f, own if norm_first is None else norm_first)
    return fit_height(fig, ax, bottom)


def _residual_unit(ax: Axes, x: float, y: float, c: int, norm_first: bool) -> float:
    """One sub-layer with its residual connection and its LayerNorm, titled by the order; the lowest y."""
    name, cite, rule = (("pre-norm", "Xiong et al., 2020", "x + Sublayer(LayerNorm(x))") if norm_first
                        else ("post-norm", "Vaswani et al., 2017", "LayerNorm(x + Sublayer(x))"))
    draw_text(ax, x + 0.2, y, f"{name} ({cite})", size=11, fontweight="bold")
    draw_text(ax, x + 0.2, y - 0.3, rule, size=SHAPE_SIZE, color=MUTED)
    draw_arrow(ax, [(x, y - 0.5), (x, y - 0.95)], label=f"x {shape('B', 'S', f'C={c}')}", side="left",
               head=False)
    column = residual_column(ax, x, y - 0.95, [Sublayer("Sublayer\n(self-attention\nor feed-forward)",
                                                        "linear")], norm_first, label_residual=True)
    draw_arrow(ax, [(x, column.bottom), (x, column.bottom - 0.45)], label=shape("B", "S", f"C={c}"),
               side="left")
    what = ("normalised: the next sub-layer,\nthe next residual line and the\nblock's output all get it"
            if not norm_first else "never normalised: a pre-norm\nstack ends with one more LayerNorm")
    draw_text(ax, x + 0.2, column.bottom - 0.9, what, size=SHAPE_SIZE, color=MUTED)
    return column.bottom - 1.3


def draw_encoder_layers_post_vs_pre(config_or_layer: TransformerConfig | EncoderLayer) -> Figure:
    """Where the LayerNorm sits, post-norm (the paper) against pre-norm (Xiong et al., 2020): one
    sub-layer with its residual connection in each order, at the layer's width. The whole block is
    ``draw_encoder_layer``; this figure shows only what differs."""
    c, _, _, _ = _layer_sizes(config_or_layer, "draw_encoder_layers_post_vs_pre")
    fig, ax = new_diagram(7.6, 5.0)
    bottom = min(_residual_unit(ax, 1.3, 4.8, c, norm_first=False),
                 _residual_unit(ax, 5.1, 4.8, c, norm_first=True))
    return fit_height(fig, ax, bottom)


def _stack(ax: Axes, x: float, y: float, tokens: str, length: str, sublayers: list[Sublayer], n: int,
           norm_first: bool, side: int, c: int) -> tuple[Column, float]:
    """Token ids, embedding + positions, then N layers in a dashed frame; returns column and exit y."""
    draw_text(ax, x, y, tokens, size=SHAPE_SIZE, color=MUTED)
    emb = draw_box(ax, x, y - 0.75, 1.9, 0.55, f"embedding × √C\n+ positions, C={c}", "embedding")
    draw_arrow(ax, [(x, y - 0.15), emb.top()])
    draw_arrow(ax, [emb.bottom(), (x, emb.bottom()[1] - 0.55)], head=False,
               label=shape("B", length, f"C={c}"), side="right" if side < 0 else "left")
    top = emb.bottom()[1] - 0.55
    column = residual_column(ax, x, top, sublayers, norm_first, side=side)
    x0, x1 = (x - 1.35, x + 1.1) if side < 0 else (x - 1.1, x + 1.35)
    draw_frame(ax, x0, column.bottom - 0.15, x1, top + 0.15, f"N={n} ×",
               label_at="left" if side < 0 else "right")
    y = column.bottom
    if norm_first:  # a pre-norm stack ends with a LayerNorm of its own
        draw_arrow(ax, [(x, y), (x, y - 0.3)], head=False)
        y = draw_norm(ax, x, y - 0.3).bottom()[1]
    return column, y


def draw_transformer(config: TransformerConfig | Transformer, src_len: int, tgt_len: int) -> Figure:
    """The encoder-decoder Transformer (Vaswani et al., 2017, Figure 1) with the sizes of ``config``,
    and the causal mask of the decoder's self-attention for ``tgt_len`` target positions."""
    if isinstance(config, Transformer):
        config = config.config
    _expect(config, (TransformerConfig,), "draw_transformer",
            "build one with TransformerConfig(src_vocab_size, tgt_vocab_size, d_model=..., ...)")
    _positive(src_len, "src_len")
    _positive(tgt_len, "tgt_len")
    c, h, f = config.d_model, config.num_heads, config.d_ff
    fig, ax = new_diagram(7.6, 11.0, "The Transformer: encoder (left), decoder (right)")
    xe, xd, y = 1.55, 4.55, 10.45
    attention = f"multi-head\nself-attention, H={h}"
    ffn = Sublayer(f"feed-forward\nC={c} → d_ff={f} → C", "feed-forward")
    enc, enc_out = _stack(ax, xe, y, f"source ids (B, S={src_len})", f"S={src_len}",
                          [Sublayer(attention, "attention", "self"), ffn], config.num_encoder_layers,
                          config.norm_first, -1, c)
    dec, dec_out = _stack(ax, xd, y, f"target ids, shifted right (B, T={tgt_len})", f"T={tgt_len}",
                          [Sublayer(f"masked multi-head\nself-attention, H={h}", "attention", "self"),
                           Sublayer(f"multi-head\ncross-attention, H={h}", "attention", "cross"), ffn],
                          config.num_decoder_layers, config.norm_first, 1, c)
    # the encoder output is the memory every decoder layer reads: keys and values of cross-attention
    x_mid = (xe + xd) / 2 + 0.05
    draw_arrow(ax, [(xe, enc_out), (xe, enc_out - 0.35), (x_mid, enc_out - 0.35), (x_mid, dec.memory_in[1]),
                    dec.memory_in], head=False, label=f"memory {shape('B', f'S={src_len}', f'C={c}')}",
               segment=1, side="below")
    draw_text(ax, 0.2, enc_out - 0.85, "padding mask: <pad> source\nkeys are hidden from encoder\n"
              "self-attention and from\ncross-attention", size=SHAPE_SIZE, color=MUTED, ha="left", va="top")
    # the causal mask beside the masked self-attention
    shown = min(tgt_len, 12)
    masked = dec.boxes[0]
    draw_mask_grid(ax, 6.25, masked.y - 0.5, 1.0, shown)
    draw_text(ax, 6.75, masked.y + 0.68, f"causal mask, T={tgt_len}" + ("" if shown == tgt_len else
              f"\n(first {shown} shown)"), size=SHAPE_SIZE, color=MUTED, va="bottom")
    draw_text(ax, 6.75, masked.y - 0.6, "dark = hidden:\nfuture positions\n(rows: queries,\ncolumns: keys)",
              size=SHAPE_SIZE, color=MUTED, va="top")
    # output: a linear layer to target-vocabulary logits
    vocab = config.tgt_vocab_size
    out = draw_box(ax, xd, dec_out - 0.75, 1.9, 0.5, f"linear C={c} → vocab={vocab}", "linear")
    draw_arrow(ax, [(xd, dec_out), out.top()], label=shape("B", f"T={tgt_len}", f"C={c}"), side="left")
    draw_arrow(ax, [out.bottom(), (xd, out.bottom()[1] - 0.45)], side="left",
               label=f"logits {shape('B', f'T={tgt_len}', f'vocab={vocab}')}")
    return fit_height(fig, ax, out.bottom()[1] - 0.6)


# ---------------------------------------------------------------------------------------------------
# Chapter 12: two encoder-only models
# ---------------------------------------------------------------------------------------------------
def _encoder_only(ax: Axes, x: float, y: float, title: str, inputs: list[tuple[str, str]], length: str,
                  c: int, h: int, f: int, n: int, norm_first: bool, heads: list[str]) -> float:
    """A titled encoder-only column: input steps (box text, the shape it passes on), N layers, then
    one output head, or two side by side (alternatives, not one after the other)."""
    draw_text(ax, x, y, title, size=11, fontweight="bold")
    y -= 0.15
    for k, (text, _) in enumerate(inputs):
        box = draw_box(ax, x, y - 0.55, 2.3, 0.55, text, "embedding" if k else "tensor")
        if k:
            draw_arrow(ax, [(x, y), box.top()], label=inputs[k - 1][1], side="left")
        y = box.bottom()[1]
    draw_arrow(ax, [(x, y), (x, y - 0.75)], head=False, label=inputs[-1][1], side="left", at=0.35)
    top = y - 0.75
    column = residual_column(ax, x, top, [Sublayer(f"multi-head\nself-attention, H={h}", "attention", "self"),
                                          Sublayer(f"feed-forward\nC={c} → d_ff={f} → C", "feed-forward")],
                             norm_first, side=1)
    draw_frame(ax, x - 1.25, column.bottom - 0.15, x + 1.4, top + 0.15, f"N={n} ×")
    y = column.bottom
    if norm_first:
        draw_arrow(ax, [(x, y), (x, y - 0.3)], head=False)
        y = draw_norm(ax, x, y - 0.3).bottom()[1]
    draw_arrow(ax, [(x, y), (x, y - 0.55)], head=False, label=shape("B", length, f"C={c}"), side="left",
               at=0.6)
    y -= 0.55
    if len(heads) == 1:
        box = draw_box(ax, x, y - 0.5, 2.3, 0.6, heads[0], "linear")
        draw_arrow(ax, [(x, y), box.top()])
        return box.bottom()[1]
    lowest = y
    for dx, text in zip((-0.85, 0.95), heads, strict=True):
        box = draw_box(ax, x + dx, y - 0.75, 1.7, 0.8, text, "linear")
        draw_arrow(ax, [(x, y), (x + dx, y - 0.2), box.top()])
        lowest = min(lowest, box.bottom()[1])
    return lowest


def draw_bert_and_vit(bert: BERTConfig, vit: ViTConfig, seq_len: int) -> Figure:
    """BERT (left) and the Vision Transformer (right) with the sizes of their configs: the same encoder
    stack, different inputs and outputs. ``seq_len`` counts BERT's tokens, ``<cls>`` included."""
    _expect(bert, (BERTConfig,), "draw_bert_and_vit", "pass utils.bert.BERTConfig.for_vocab(vocab)")
    _expect(vit, (ViTConfig,), "draw_bert_and_vit", "pass utils.vit.ViTConfig()")
    _positive(seq_len, "seq_len")
    fig, ax = new_diagram(7.6, 10.0)
    t, n, p, ch, side = f"T={seq_len}", vit.num_patches, vit.patch_size, vit.channels, vit.image_size
    r = side // p
    bottom_left = _encoder_only(
        ax, 1.75, 9.8, "BERT (post-norm)",
        [("token ids\n<cls> w_1 ... w_n", shape("B", t)),
         ("embedding + learned\npositions, LayerNorm", shape("B", t, f"C={bert.d_model}"))],
        t, bert.d_model, bert.num_heads, bert.d_ff, bert.num_layers, False,
        [f"pre-training:\nevery position,\nC → |V|={bert.vocab_size}",
         "fine-tuning:\nthe <cls> row,\nC → K classes"])
    bottom_right = _encoder_only(
        ax, 5.6, 9.8, "Vision Transformer (pre-norm)",
        [(f"image (B, Ch={ch}, I={side}, I)\ncut into R²={r}²={n} patches",
          shape("B", f"R²={n}", f"Ch·P·P={ch * p * p}")),
         ("linear Ch·P·P → C,\n[CLS] in front, positions", shape("B", f"T={n + 1}", f"C={vit.d_model}"))],
        f"T={n + 1}", vit.d_model, vit.num_heads, vit.d_ff, vit.num_layers, True,
        [f"the [CLS] row:\nlinear C → K={vit.num_classes} classes"])
    return fit_height(fig, ax, min(bottom_left, bottom_right) - 0.1)
