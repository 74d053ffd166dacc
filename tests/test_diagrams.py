"""Tests for utils/diagrams.py and utils/architectures.py: every drawing is readable at the book's width,
takes its sizes from the model it is given, and refuses the wrong object with a clear message."""

from __future__ import annotations

from collections.abc import Callable

import matplotlib.pyplot as plt
import pytest
import torch
from matplotlib.figure import Figure
from matplotlib.text import Text

from utils.architectures import (
    draw_attention_block,
    draw_bert_and_vit,
    draw_encoder_layer,
    draw_encoder_layers_post_vs_pre,
    draw_multi_head,
    draw_rnn_attention,
    draw_transformer,
)
from utils.attention import MultiHeadAttention, SelfAttention, SingleHeadAttention
from utils.bert import BERTConfig
from utils.diagrams import FILLS, ROLE_COLORS, new_diagram, readability_problems, shape
from utils.rnn import AttentionSeq2SeqGRU, Seq2SeqGRU
from utils.transformer import EncoderLayer, Transformer, TransformerConfig
from utils.vit import ViTConfig

ODD = TransformerConfig(23, 29, d_model=48, num_heads=3, num_encoder_layers=5, num_decoder_layers=4, d_ff=96)
OTHER = TransformerConfig(23, 29, d_model=64, num_heads=8, num_encoder_layers=2, num_decoder_layers=2,
                          d_ff=200, norm_first=True)


def _texts(fig: Figure) -> list[str]:
    """Every visible, non-empty text of the figure."""
    return [t.get_text() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


def _joined(fig: Figure) -> str:
    return "\n".join(_texts(fig))


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# one drawing per chapter, each with sizes no default would give
DRAWINGS: dict[str, Callable[[], Figure]] = {
    "rnn_attention": lambda: draw_rnn_attention(AttentionSeq2SeqGRU(17, 19, d_emb=20, d_model=36)),
    "single_head": lambda: draw_attention_block(SingleHeadAttention(24, d_k=10, d_v=14, d_kv=18)),
    "self_attention": lambda: draw_attention_block(SelfAttention(24, d_k=10, d_v=14)),
    "multi_head": lambda: draw_multi_head(MultiHeadAttention(48, 3), seq_len=7),
    "multi_head_many": lambda: draw_multi_head(MultiHeadAttention(64, 16), seq_len=30),
    "encoder_post": lambda: draw_encoder_layer(ODD),
    "encoder_pre": lambda: draw_encoder_layer(ODD, norm_first=True),
    "encoder_both": lambda: draw_encoder_layers_post_vs_pre(ODD),
    "transformer": lambda: draw_transformer(ODD, src_len=9, tgt_len=6),
    "transformer_pre_long": lambda: draw_transformer(OTHER, src_len=40, tgt_len=30),
    "bert_and_vit": lambda: draw_bert_and_vit(BERTConfig(51, 4, 5, d_model=48, num_heads=3, num_layers=5,
                                                         d_ff=96),
                                              ViTConfig(image_size=24, patch_size=6, channels=3,
                                                        num_classes=7, d_model=40, num_heads=5,
                                                        num_layers=3, d_ff=72), seq_len=13),
}


def test_bert_and_vit_sizes_come_from_the_configs():
    text = _joined(DRAWINGS["bert_and_vit"]())
    for piece in ("|V|=51", "N=5 ×", "N=3 ×", "d_ff=96", "d_ff=72", "R²=4²=16", "Ch·P·P=108", "T=17",
                  "K=7", "T=13", "H=3", "H=5"):
        assert piece in text, piece
    with pytest.raises(TypeError, match="BERTConfig"):
        draw_bert_and_vit(ODD, ViTConfig(), 5)


# ---------------------------------------------------------------------------------------------------
# Readable in the book: at most 8 inches wide, nothing under 9 pt, no text on top of another
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(DRAWINGS))
def test_every_drawing_fits_the_column_with_legible_text(name):
    fig = DRAWINGS[name]()
    assert isinstance(fig, Figure)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    assert len(texts) > 10, f"{name}: too few labels drawn ({len(texts)})"
    small = [(t.get_text(), t.get_fontsize()) for t in texts if t.get_fontsize() < 9]
    assert not small, f"{name}: texts under 9 pt: {small}"
    width = fig.get_tightbbox(renderer).width
    assert width <= 8.0, f"{name}: {width:.2f} in wide after tight cropping, the book allows 8 in"
    assert readability_problems(fig) == []  # the same checks, plus no overlapping texts
    assert not fig.axes[0].axison  # axes off, no grid
    assert fig.get_facecolor()[:3] == (1.0, 1.0, 1.0)


def test_readability_problems_reports_small_wide_and_overlapping_text():
    fig, ax = new_diagram(9.0, 2.0)
    ax.text(0.5, 1.0, "tiny", fontsize=7)
    ax.text(3.0, 1.0, "same place", fontsize=10)
    ax.text(3.0, 1.0, "same place again", fontsize=10)
    problems = "\n".join(readability_problems(fig))
    assert "wide" in problems and "'tiny' is 7" in problems and "overlap" in problems


# ---------------------------------------------------------------------------------------------------
# Sizes come from the model, so the drawing cannot drift from the code
# ---------------------------------------------------------------------------------------------------
def test_rnn_drawing_reads_the_sizes_of_the_model():
    text = _joined(draw_rnn_attention(AttentionSeq2SeqGRU(17, 19, d_emb=20, d_model=36)))
    for expected in ("d_emb=20", "C=36", "d_k=36", "d_v=36", "vocab=19", "vocabulary 17", "$W_Q$  36×36"):
        assert expected in text, f"{expected!r} missing from the chapter 1 drawing"
    other = _joined(draw_rnn_attention(AttentionSeq2SeqGRU(17, 19, d_emb=8, d_model=12)))
    assert "C=12" in other and "C=36" not in other and "d_emb=8" in other


def test_attention_block_reads_the_projections():
    text = _joined(draw_attention_block(SingleHeadAttention(24, d_k=10, d_v=14, d_kv=18)))
    for expected in ("$W_Q$  24×10", "$W_K$  18×10", "$W_V$  18×14", "d_k=10", "d_v=14", "d_kv=18",
                     "T_q", "T_k", "$X_q$", "softmax over the keys", "mask (optional)"):
        assert expected in text, f"{expected!r} missing from the attention drawing"
    self_text = _joined(draw_attention_block(SelfAttention(24, d_k=10, d_v=14)))
    assert "Self-attention" in self_text and "T_q" not in self_text and "C=24" in self_text


def test_multi_head_drawing_shows_heads_and_the_split():
    text = _joined(draw_multi_head(MultiHeadAttention(48, 3), seq_len=7))
    for expected in ("C=48", "H=3", "D=16", "T=7", "(B, H=3, T=7, D=16)", "$W_O$  48×48", "view",
                     "transpose"):
        assert expected in text, f"{expected!r} missing from the multi-head drawing"
    other = _joined(draw_multi_head(MultiHeadAttention(48, 4), seq_len=7))
    assert "H=4" in other and "D=12" in other and "D=16" not in other


def test_encoder_layer_drawing_reads_the_config_and_places_the_norm():
    post, pre = _texts(draw_encoder_layer(ODD)), _texts(draw_encoder_layer(ODD, norm_first=True))
    for texts in (post, pre):
        text = "\n".join(texts)
        assert "C=48" in text and "H=3" in text and "d_ff=96" in text and "residual" in text
        assert texts.count("LayerNorm") == 2 and texts.count("+") == 2
    assert "LayerNorm(x + Sublayer(x))" in post and "x + Sublayer(LayerNorm(x))" in pre
    # from a layer: its own sizes and its own norm placement
    layer_text = _texts(draw_encoder_layer(EncoderLayer(40, 5, 72, norm_first=True)))
    assert "x + Sublayer(LayerNorm(x))" in layer_text and "d_ff=72" in "\n".join(layer_text)
    both = _texts(draw_encoder_layers_post_vs_pre(OTHER))  # one sub-layer in each order, not the block
    joined = "\n".join(both)
    assert "post-norm" in joined and "pre-norm" in joined and "C=64" in joined and "H=8" not in joined
    assert "LayerNorm(x + Sublayer(x))" in both and "x + Sublayer(LayerNorm(x))" in both
    assert both.count("LayerNorm") == 2 and both.count("+") == 2


def test_encoder_layer_post_norm_puts_the_norm_after_the_add():
    def order(fig: Figure) -> list[str]:  # the stream's labels from top to bottom
        ax = fig.axes[0]
        texts = [t for t in ax.texts
                 if t.get_text() in ("LayerNorm", "+") and abs(t.get_position()[0] - 1.2) < 0.01]
        return [t.get_text() for t in sorted(texts, key=lambda t: -t.get_position()[1])]

    assert order(draw_encoder_layer(ODD, norm_first=False)) == ["+", "LayerNorm", "+", "LayerNorm"]
    assert order(draw_encoder_layer(ODD, norm_first=True)) == ["LayerNorm", "+", "LayerNorm", "+"]


def test_transformer_drawing_reads_the_config_and_draws_the_causal_mask():
    fig = draw_transformer(ODD, src_len=9, tgt_len=6)
    text = _joined(fig)
    for expected in ("N=5 ×", "N=4 ×", "C=48", "H=3", "d_ff=96", "S=9", "T=6", "vocab=29",
                     "masked multi-head", "cross-attention", "hidden:\nfuture positions", "padding mask",
                     "memory"):
        assert expected in text, f"{expected!r} missing from the Transformer drawing"
    ax = fig.axes[0]
    cells = [p for p in ax.patches if p.get_hatch() == "///"]
    assert len(cells) == 6 * 5 // 2  # the strictly upper triangle of the 6 x 6 causal mask is hidden
    assert draw_transformer(Transformer(ODD), 9, 6) is not None  # a model works as well as its config
    other = _joined(draw_transformer(OTHER, src_len=40, tgt_len=30))
    assert "N=2 ×" in other and "d_ff=200" in other and "first 12 shown" in other and "N=5 ×" not in other


def test_qkv_keep_their_colours_everywhere():
    """Q, K and V are drawn in the same three colours, each beside its letter, in every drawing."""
    for name, draw in DRAWINGS.items():
        badges = [t for t in draw().findobj(Text) if t.get_text() in ROLE_COLORS and t.get_bbox_patch()]
        # the post- against pre-norm figure draws a generic sub-layer: no attention, no Q, K, V
        assert {t.get_text() for t in badges} == (set() if name == "encoder_both" else set(ROLE_COLORS)), name
        for t in badges:
            face = t.get_bbox_patch().get_facecolor()
            assert torch.allclose(torch.tensor(face[:3]), torch.tensor(_rgb(ROLE_COLORS[t.get_text()]))), name
    assert len(set(FILLS.values())) == len(FILLS)  # one fill per kind of layer


def _rgb(hex_color: str) -> tuple[float, float, float]:
    return tuple(int(hex_color[i:i + 2], 16) / 255 for i in (1, 3, 5))


def test_shape_writes_the_course_letters():
    assert shape("B", "T", "C=64") == "(B, T, C=64)"


# ---------------------------------------------------------------------------------------------------
# Clear errors for the wrong object
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("call, expected", [
    (lambda: draw_multi_head(ODD, 5), "MultiHeadAttention, got TransformerConfig"),
    (lambda: draw_multi_head(MultiHeadAttention(8, 2), 0), "seq_len must be a positive int"),
    (lambda: draw_attention_block(MultiHeadAttention(8, 2)), "use draw_multi_head"),
    (lambda: draw_rnn_attention(Seq2SeqGRU(10, 10)), "AttentionSeq2SeqGRU, got Seq2SeqGRU"),
    (lambda: draw_encoder_layer(MultiHeadAttention(8, 2)), "TransformerConfig or"),
    (lambda: draw_encoder_layers_post_vs_pre({"d_model": 64}), "got dict"),
    (lambda: draw_transformer(EncoderLayer(8, 2, 16), 5, 5), "TransformerConfig, got EncoderLayer"),
    (lambda: draw_transformer(ODD, 5, 2.5), "tgt_len must be a positive int"),
])
def test_wrong_inputs_say_what_was_expected_and_what_was_given(call, expected):
    with pytest.raises((TypeError, ValueError), match=expected):
        call()
