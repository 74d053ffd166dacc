"""utils.bert and utils.vit (chapter 12): masking, the loss on chosen positions, the grammar task,
patches against nn.Conv2d, the encoder against nn.TransformerEncoder, and clear errors."""

from __future__ import annotations

import random

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from utils import bert, vit
from utils.data import make_pairs
from utils.gpt import is_grammatical
from utils.transformer import copy_from_torch_transformer

SENTENCES = [p.src for p in make_pairs(300, seed=0, max_clauses=1)]


@pytest.fixture(scope="module")
def vocab():
    return bert.bert_vocab(SENTENCES)


def test_mask_tokens_rates_and_targets(vocab):
    config = bert.BERTConfig.for_vocab(vocab)
    ids = bert.encode_sentences(SENTENCES * 20, vocab)
    words = bert.word_ids(vocab)
    inputs, targets = bert.mask_tokens(ids, config, words, torch.Generator().manual_seed(0))
    real = (ids != config.pad_id) & (ids != config.cls_id)
    chosen = targets != bert.IGNORE
    assert not (chosen & ~real).any(), "only real words are chosen"
    assert torch.equal(targets[chosen], ids[chosen])
    assert torch.equal(inputs[~chosen], ids[~chosen]), "what is not chosen is never changed"
    rate = chosen.sum() / real.sum()
    assert 0.14 < rate < 0.16
    to_mask = (inputs[chosen] == config.mask_id).float().mean()
    kept = (inputs[chosen] == ids[chosen]).float().mean()
    assert 0.78 < to_mask < 0.82 and 0.08 < kept < 0.13  # a random draw can also hit the same word
    assert set(inputs[chosen & (inputs != config.mask_id)].tolist()) <= set(words.tolist())


def test_mlm_loss_scores_the_chosen_positions_only():
    logits = torch.randn(2, 5, 7)
    targets = torch.full((2, 5), bert.IGNORE)
    targets[0, 1], targets[1, 3] = 4, 0
    want = (F.cross_entropy(logits[0, 1][None], torch.tensor([4]))
            + F.cross_entropy(logits[1, 3][None], torch.tensor([0]))) / 2
    assert torch.allclose(bert.mlm_loss(logits, targets), want)
    with pytest.raises(ValueError, match="nothing to score"):
        bert.mlm_loss(logits, torch.full((2, 5), bert.IGNORE))
    with pytest.raises(ValueError, match="disagree"):
        bert.mlm_loss(logits, targets[:, :4])


def test_tinybert_encoder_equals_pytorch(vocab):
    torch.manual_seed(0)
    config = bert.BERTConfig.for_vocab(vocab, dropout=0.0)
    model = bert.TinyBERT(config).eval()
    theirs = nn.TransformerEncoder(nn.TransformerEncoderLayer(
        config.d_model, config.num_heads, config.d_ff, 0.0, batch_first=True), config.num_layers,
        enable_nested_tensor=False).eval()
    theirs.norm = None
    copy_from_torch_transformer(model.encoder, theirs)
    ids = bert.encode_sentences(SENTENCES[:8], vocab)
    x = model.norm(model.positional(model.embed(ids)))
    want = theirs(x, src_key_padding_mask=ids == config.pad_id)
    got = model(ids)
    real = ids != config.pad_id
    assert torch.allclose(got[real], want[real], atol=1e-5)


def test_tinybert_errors(vocab):
    config = bert.BERTConfig.for_vocab(vocab)
    with pytest.raises(ValueError, match="divisible"):
        bert.BERTConfig.for_vocab(vocab, d_model=30, num_heads=4)
    with pytest.raises(ValueError, match="max_len"):
        bert.TinyBERT(config)(torch.ones(1, 40, dtype=torch.long))
    with pytest.raises(ValueError, match="bert_vocab"):
        bert.encode_sentences(SENTENCES[:2], bert.Vocab(["a"]))
    clf = bert.CLSClassifier(bert.TinyBERT(config), 2)
    with pytest.raises(ValueError, match="<cls>"):
        clf(torch.ones(2, 4, dtype=torch.long))


def test_grammar_task_labels_are_true():
    sentences, labels = bert.grammar_task(SENTENCES, seed=3)
    assert [int(is_grammatical(s)) for s in sentences] == labels.tolist()
    assert 0.4 < labels.float().mean() < 0.65
    swapped = bert.swap_neighbours(("a", "b", "b"), random.Random(0))
    assert swapped == ("b", "a", "b")


def test_patchify_matches_conv2d():
    torch.manual_seed(0)
    images = torch.randn(3, 2, 8, 8)
    embedding = vit.PatchEmbedding(2, 4, 6)
    conv = embedding.as_conv()
    want = conv(images).flatten(2).transpose(1, 2)  # (B, C, 2, 2) -> (B, 4, C)
    assert torch.allclose(embedding(images), want, atol=1e-6)
    patches = vit.patchify(images, 4)
    assert patches.shape == (3, 4, 32)
    assert torch.equal(patches[1, 1], images[1, :, 0:4, 4:8].reshape(-1))  # top-right patch
    assert torch.equal(patches[1, 2], images[1, :, 4:8, 0:4].reshape(-1))  # bottom-left patch
    with pytest.raises(ValueError, match="multiples of 3"):
        vit.patchify(images, 3)
    with pytest.raises(ValueError, match="channels, height, width"):
        vit.patchify(images[0], 4)


def test_vit_shapes_encoder_and_maps():
    torch.manual_seed(0)
    config = vit.ViTConfig()
    model = vit.VisionTransformer(config).eval()
    images, labels, corners = vit.make_images(8, seed=0)
    assert images.shape == (8, 1, 16, 16) and labels.tolist() == [0, 1, 2, 3] * 2
    assert model(images).shape == (8, 4)
    theirs = nn.TransformerEncoder(nn.TransformerEncoderLayer(
        config.d_model, config.num_heads, config.d_ff, 0.0, batch_first=True, norm_first=True),
        config.num_layers, norm=nn.LayerNorm(config.d_model), enable_nested_tensor=False).eval()
    copy_from_torch_transformer(model.encoder, theirs)
    tokens = model.tokens(images)
    assert torch.allclose(model.encoder(tokens)[0], theirs(tokens), atol=1e-5)
    weights = model.attention_weights(images)
    assert weights.shape == (2, 8, 4, 17, 17)
    grid = vit.cls_attention_map(weights, config)
    assert grid.shape == (2, 8, 4, 4)
    assert torch.allclose(grid.sum((-1, -2)) + weights[:, :, :, 0, 0].mean(2), torch.ones(2, 8))
    inside = vit.glyph_patches(torch.tensor([[0, 0], [3, 11]]), config)
    assert inside[0].sum() == 4 and inside[0, :2, :2].all()
    assert inside[1].sum() == 4 and inside[1, :2, 2:].all()
    with pytest.raises(ValueError, match=r"images must be \(batch, 1, 16, 16\)"):
        model(torch.zeros(2, 1, 12, 12))
    with pytest.raises(ValueError, match="multiple of patch_size"):
        vit.ViTConfig(image_size=10)
