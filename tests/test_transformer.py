"""Tests for utils/transformer.py: shapes, errors, equality with nn.Transformer."""

import math
import warnings

import pytest
import torch
from torch import nn

from utils.positional import sinusoidal_encoding
from utils.transformer import (
    Decoder,
    DecoderLayer,
    Encoder,
    EncoderLayer,
    FeedForward,
    Transformer,
    TransformerConfig,
    copy_from_torch_transformer,
)

C, H, F_, L = 16, 4, 32, 2


def tiny_config(**overrides) -> TransformerConfig:
    args = dict(src_vocab_size=12, tgt_vocab_size=11, d_model=C, num_heads=H, num_encoder_layers=L,
                num_decoder_layers=L, d_ff=F_, dropout=0.0, max_len=40)
    return TransformerConfig(**(args | overrides))


def torch_transformer(norm_first: bool) -> nn.Transformer:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nn.Transformer warns about nested tensors with norm_first
        theirs = nn.Transformer(C, H, L, L, F_, dropout=0.0, batch_first=True, norm_first=norm_first)
    for p in theirs.parameters():  # random biases and norm gains, so a wrong copy cannot hide
        if p.dim() == 1:
            nn.init.normal_(p, std=0.5)
    theirs.encoder.use_nested_tensor = False  # keep padded positions, so every position compares
    if not norm_first:
        theirs.encoder.norm = theirs.decoder.norm = None  # the paper's post-norm has no final norm
    return theirs.eval()


def masks() -> tuple[torch.Tensor, torch.Tensor]:
    src_mask = torch.ones(3, 7, dtype=torch.bool)
    src_mask[1, 5:] = False
    src_mask[2, 3:] = False
    tgt_mask = torch.ones(3, 5, dtype=torch.bool)
    tgt_mask[1, 4:] = False
    tgt_mask[2, 2:] = False
    return src_mask, tgt_mask


# ---------------------------------------------------------------------------------------------------
# Config and shapes
# ---------------------------------------------------------------------------------------------------
def test_config_defaults_are_the_paper_base_model():
    c = TransformerConfig(100, 100)
    assert (c.d_model, c.num_heads, c.num_encoder_layers, c.num_decoder_layers, c.d_ff, c.dropout) == (
        512, 8, 6, 6, 2048, 0.1)
    assert c.norm_first is False
    with pytest.raises(AttributeError):
        c.d_model = 64  # frozen


@pytest.mark.parametrize(("overrides", "match"), [
    ({"d_model": 18, "num_heads": 4}, "divisible by num_heads"),
    ({"d_model": 15, "num_heads": 5}, "even"),
    ({"num_heads": 0}, "num_heads must be a positive int"),
    ({"num_encoder_layers": 0}, "num_encoder_layers must be a positive int"),
    ({"d_ff": 2.5}, "d_ff must be a positive int"),
    ({"dropout": 1.0}, r"dropout must be in \[0, 1\)"),
    ({"pad_id": 11}, "pad_id=11 is outside the vocabularies"),
])
def test_config_errors(overrides, match):
    with pytest.raises(ValueError, match=match):
        tiny_config(**overrides)


def test_transformer_needs_a_config():
    with pytest.raises(TypeError, match="^Transformer takes a TransformerConfig, got dict$"):
        Transformer({"d_model": 16})


def test_model_parts_follow_the_config():
    torch.manual_seed(0)
    config = tiny_config(pad_id=3, dropout=0.2)
    model = Transformer(config)
    assert model.positional.dropout.p == 0.2 and model.positional.max_len == 40
    for embed in (model.src_embed, model.tgt_embed):  # <pad> embeds as zeros and is never trained
        assert embed.padding_idx == 3 and torch.all(embed.weight[3] == 0)
    # Glorot (Xavier) uniform initialisation of every matrix, as in nn.Transformer: U(-a, a) with
    # a = sqrt(6 / (fan_in + fan_out))
    for name, p in model.named_parameters():
        if p.dim() > 1 and "embed" not in name:
            bound = math.sqrt(6 / sum(p.shape))
            assert p.abs().max() <= bound and p.abs().max() > 0.9 * bound, name


def test_feed_forward_acts_on_each_position_alone():
    torch.manual_seed(0)
    ffn = FeedForward(C, F_, dropout=0.0)
    x = torch.randn(2, 5, C)
    out = ffn(x)
    assert out.shape == (2, 5, C)
    x2 = x.clone()
    x2[:, 3] += 1.0  # change one position: only that position's output changes
    changed = (ffn(x2) - out).abs().sum(-1) > 0
    assert changed[:, 3].all() and changed.sum() == 2
    assert torch.allclose(out, torch.relu(x @ ffn.w_1.weight.T + ffn.w_1.bias) @ ffn.w_2.weight.T
                          + ffn.w_2.bias, atol=1e-6)


@pytest.mark.parametrize("norm_first", [False, True])
def test_layer_and_stack_shapes(norm_first):
    torch.manual_seed(0)
    x, y = torch.randn(2, 6, C), torch.randn(2, 4, C)
    out, w = EncoderLayer(C, H, F_, norm_first=norm_first)(x, need_weights=True)
    assert out.shape == (2, 6, C) and w.shape == (2, H, 6, 6)
    out, self_w, cross_w = DecoderLayer(C, H, F_, norm_first=norm_first)(y, x, need_weights=True)
    assert out.shape == (2, 4, C) and self_w.shape == (2, H, 4, 4) and cross_w.shape == (2, H, 4, 6)
    assert torch.all(self_w.triu(1) == 0)  # causal: no weight on future positions
    enc, dec = Encoder(3, C, H, F_, norm_first=norm_first), Decoder(3, C, H, F_, norm_first=norm_first)
    assert (enc.norm is not None) == norm_first and (dec.norm is not None) == norm_first
    memory, ws = enc(x, need_weights=True)
    assert memory.shape == (2, 6, C) and len(ws) == 3
    assert enc(x)[1] is None
    out, self_ws, cross_ws = dec(y, memory, need_weights=True)
    assert out.shape == (2, 4, C) and len(self_ws) == len(cross_ws) == 3
    assert all(w is None for w in dec(y, memory)[1:])  # weights only when asked for
    assert all(w is None for w in DecoderLayer(C, H, F_, norm_first=norm_first)(y, x)[1:])
    assert EncoderLayer(C, H, F_, norm_first=norm_first)(x)[1] is None


def test_layers_pass_dropout_on_and_default_to_the_paper():
    """Dropout 0.1 and post-norm by default (section 5.4); a layer's dropout reaches every sub-layer."""
    assert FeedForward(C, F_).dropout.p == 0.1
    enc, dec = EncoderLayer(C, H, F_, dropout=0.3), DecoderLayer(C, H, F_, dropout=0.3)
    for layer in (enc, dec):
        assert layer.self_attn.dropout == layer.feed_forward.dropout.p == layer.dropout.p == 0.3
    assert dec.cross_attn.dropout == 0.3
    layers = (EncoderLayer(C, H, F_), DecoderLayer(C, H, F_), Encoder(1, C, H, F_).layers[0],
              Decoder(1, C, H, F_).layers[0])
    assert [layer.norm_first for layer in layers] == [False] * 4
    assert [layer.dropout.p for layer in layers] == [0.1] * 4


def test_encoder_layer_with_causal_mask_is_a_gpt_block():
    torch.manual_seed(0)
    layer = EncoderLayer(C, H, F_, dropout=0.0).eval()
    x = torch.randn(1, 6, C)
    causal = torch.ones(6, 6, dtype=torch.bool).tril()
    full, _ = layer(x, attn_mask=causal)
    prefix, _ = layer(x[:, :4], attn_mask=causal[:4, :4])
    assert torch.allclose(full[:, :4], prefix, atol=1e-6)  # the future does not change the past


def test_post_norm_output_is_normalised_and_residual_is_identity_plus_change():
    torch.manual_seed(0)
    x = torch.randn(2, 5, C)
    out, _ = EncoderLayer(C, H, F_, dropout=0.0)(x)
    assert torch.allclose(out.mean(-1), torch.zeros(2, 5), atol=1e-5)
    pre = EncoderLayer(C, H, F_, dropout=0.0, norm_first=True)
    for sub in (pre.self_attn.w_o, pre.feed_forward.w_2):  # zero the sub-layers' last matrices
        nn.init.zeros_(sub.weight)
        nn.init.zeros_(sub.bias)
    assert torch.allclose(pre(x)[0], x)  # pre-norm block with no learned change is the identity


def test_model_forward_and_errors():
    torch.manual_seed(0)
    model = Transformer(tiny_config())
    src, tgt = torch.randint(3, 12, (2, 7)), torch.randint(3, 11, (2, 5))
    logits = model(src, tgt)
    assert logits.shape == (2, 5, 11)
    assert model.encode(src).shape == (2, 7, C)
    maps = model.attention_weights(src, tgt)
    assert maps["encoder"].shape == (L, 2, H, 7, 7)
    assert maps["decoder_self"].shape == (L, 2, H, 5, 5)
    assert maps["cross"].shape == (L, 2, H, 5, 7)
    with pytest.raises(ValueError, match=r"src must be a \(batch, seq_len\) LongTensor"):
        model(src.float(), tgt)
    with pytest.raises(ValueError, match=r"tgt_in must be a \(batch, seq_len\) LongTensor"):
        model(src, tgt[0])
    with pytest.raises(ValueError, match="^src and tgt must have the same batch size, got 2 and 1$"):
        model(src, tgt[:1])
    with pytest.raises(ValueError, match="^src has 41 tokens, more than max_len=40$"):
        model(torch.randint(3, 12, (1, 41)), tgt[:1])
    assert model(torch.randint(3, 12, (1, 40)), tgt[:1]).shape == (1, 5, 11)  # max_len tokens are fine
    with pytest.raises(TypeError, match="key_mask must have dtype torch.bool"):
        model(src, tgt, src_mask=torch.ones(2, 7))


def test_embedding_step_is_table_row_times_sqrt_d_model_plus_position():
    torch.manual_seed(0)
    model = Transformer(tiny_config()).eval()
    ids = torch.tensor([[3, 5, 7, 0], [1, 4, 0, 0]])  # (B, T) with padding
    pe = sinusoidal_encoding(4, C)  # (T, C), the paper's table
    for embed, name in ((model.src_embed, "src"), (model.tgt_embed, "tgt_in")):
        want = embed.weight[ids] * math.sqrt(C) + pe  # (B, T, C): x_t = E[id_t] * sqrt(d_model) + PE[t]
        assert torch.allclose(model._embed(ids, embed, name), want, atol=1e-6)
    # the public methods run the stacks on exactly that input: encoder on src, decoder on tgt_in
    src_mask = ids != 0
    memory = model.encoder(model.src_embed.weight[ids] * math.sqrt(C) + pe, src_mask)[0]
    assert torch.allclose(model.encode(ids), memory, atol=1e-5)
    tgt = torch.tensor([[1, 6, 9], [1, 2, 0]])
    y = model.decoder(model.tgt_embed.weight[tgt] * math.sqrt(C) + pe[:3], memory, None, src_mask)[0]
    assert torch.allclose(model.decode(tgt, memory, src_mask), model.output(y), atol=1e-5)
    assert torch.allclose(model(ids, tgt), model.output(y), atol=1e-5)


def test_masks_reach_the_stacks():
    """encode, decode and forward pass their masks on; src_mask defaults to src != pad_id."""
    torch.manual_seed(0)
    model = Transformer(tiny_config()).eval()
    src = torch.tensor([[3, 5, 7, 0, 0], [4, 6, 8, 9, 10]])  # padding at the end of the first sentence
    alone = model.encode(src[:1, :3])
    torch.testing.assert_close(model.encode(src)[:1, :3], alone, atol=1e-5, rtol=0)  # padding is unseen
    src_mask = torch.tensor([[True, False, True, False, False], [True] * 5])  # an unusual mask
    tgt_mask = torch.tensor([[True, True, False, True], [True, False, True, True]])
    tgt = torch.tensor([[1, 5, 6, 7], [1, 8, 9, 4]])
    embed = model._embed(src, model.src_embed, "src")
    memory = model.encoder(embed, src_mask)[0]
    torch.testing.assert_close(model.encode(src, src_mask), memory)
    y = model.decoder(model._embed(tgt, model.tgt_embed, "tgt_in"), memory, tgt_mask, src_mask)[0]
    torch.testing.assert_close(model.decode(tgt, memory, src_mask, tgt_mask), model.output(y))
    torch.testing.assert_close(model(src, tgt, src_mask, tgt_mask), model.output(y))
    torch.testing.assert_close(model(src, tgt), model(src, tgt, src != 0))  # the default source mask
    for wrong in (model(src, tgt), model(src, tgt, src_mask), model(src, tgt, tgt_mask=tgt_mask)):
        assert not torch.allclose(wrong, model.output(y), atol=1e-4)  # every mask changes the result


def test_float_token_ids_get_a_message_naming_the_dtype():
    model = Transformer(tiny_config())
    src, tgt = torch.tensor([[1., 2.]]), torch.tensor([[1, 3]])
    for call in (lambda: model.encode(src), lambda: model(src, tgt)):
        with pytest.raises(ValueError, match=r"src must be .*LongTensor.*dtype torch\.long.*got dtype "
                                             r"torch\.float32 \(shape \(1, 2\)\).*src\.long\(\)"):
            call()
    with pytest.raises(ValueError, match=r"tgt_in must be .*got dtype torch\.int32"):
        model(tgt, tgt.int())


def test_embeddings_are_scaled_and_padding_is_zero():
    torch.manual_seed(0)
    model = Transformer(tiny_config(d_model=64, num_heads=4))
    assert torch.all(model.src_embed.weight[0] == 0) and torch.all(model.tgt_embed.weight[0] == 0)
    scaled_std = (model.src_embed.weight[1:] * 64 ** 0.5).std().item()
    assert 0.8 < scaled_std < 1.2  # unit scale after * sqrt(d_model), like the encoding's entries


# ---------------------------------------------------------------------------------------------------
# Equality with nn.Transformer (weights copied across)
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("norm_first", [False, True])
def test_stacks_equal_nn_transformer(norm_first):
    torch.manual_seed(0)
    theirs = torch_transformer(norm_first)
    ours = Transformer(tiny_config(norm_first=norm_first)).eval()
    copy_from_torch_transformer(ours, theirs)
    x, y = torch.randn(3, 7, C), torch.randn(3, 5, C)
    src_mask, tgt_mask = masks()
    causal = torch.ones(5, 5, dtype=torch.bool).tril()
    with torch.no_grad():
        want = theirs(x, y, tgt_mask=~causal, src_key_padding_mask=~src_mask,
                      tgt_key_padding_mask=~tgt_mask, memory_key_padding_mask=~src_mask)
        memory, _ = ours.encoder(x, src_mask)
        got, _, _ = ours.decoder(y, memory, tgt_mask, src_mask)
        want_memory = theirs.encoder(x, src_key_padding_mask=~src_mask)
    assert torch.allclose(memory, want_memory, atol=1e-5)
    assert torch.allclose(got, want, atol=1e-5)


def test_copy_errors():
    theirs = torch_transformer(norm_first=False)
    pre_norm = torch_transformer(norm_first=True)
    pre_norm.decoder.norm = None  # same final norm as ours, so the check reaches the layers
    with pytest.raises(ValueError, match="norm_first differs"):
        copy_from_torch_transformer(Decoder(L, C, H, F_, norm_first=False), pre_norm.decoder)
    with pytest.raises(ValueError, match="final LayerNorm differs"):
        copy_from_torch_transformer(Encoder(L, C, H, F_), torch_transformer(norm_first=True).encoder)
    with pytest.raises(ValueError, match="ours has 3 layers, theirs 2"):
        copy_from_torch_transformer(Encoder(3, C, H, F_), theirs.encoder)
    with pytest.raises(TypeError, match="copy an Encoder from nn.TransformerEncoder"):
        copy_from_torch_transformer(Encoder(L, C, H, F_), theirs.decoder)
    with pytest.raises(TypeError, match="copies from nn.Transformer"):
        copy_from_torch_transformer(Transformer(tiny_config()), theirs.encoder)
