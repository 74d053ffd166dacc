"""Tests for utils/seq2seq.py: the attention-only translator of chapter 3 and shuffle_source."""

import dataclasses

import pytest
import torch
import torch.nn.functional as F

from utils.data import load_synthetic, make_batch
from utils.rnn import translation_loss
from utils.seq2seq import AttentionOnlyTranslator, shuffle_source


@pytest.fixture(scope="module")
def data():
    return load_synthetic(n_train=100, n_valid=10, n_test=10, seed=5)


@pytest.fixture(scope="module")
def batch(data):
    return make_batch(data.train[:5], data.src_vocab, data.tgt_vocab)


@pytest.fixture()
def model(data):
    torch.manual_seed(0)
    return AttentionOnlyTranslator(len(data.src_vocab), len(data.tgt_vocab), d_model=16)


def test_forward_equals_embeddings_through_pytorch_attention(model, batch, data):
    logits = model(batch)
    assert logits.shape == (*batch.tgt_in.shape, len(data.tgt_vocab))
    b, a = model.tgt_embed(batch.tgt_in), model.src_embed(batch.src)
    att = model.attention
    key_mask = batch.src_mask[:, None, :]  # (B, 1, S)
    o = F.scaled_dot_product_attention(att.w_q(b), att.w_k(a), att.w_v(a), attn_mask=key_mask)
    assert torch.allclose(logits, model.out(torch.cat([b, o], dim=-1)), atol=1e-5)
    assert translation_loss(model, batch).dim() == 0


def test_padding_gets_zero_weight_and_changes_nothing(model, data):
    short = min(data.train[:30], key=lambda p: len(p.src))
    long = max(data.train[:30], key=lambda p: len(p.src))
    alone = make_batch([short], data.src_vocab, data.tgt_vocab)
    padded = make_batch([short, long], data.src_vocab, data.tgt_vocab)
    _, w = model.step(padded.tgt_in, padded.src, padded.src_mask)
    assert torch.all(w[0, :, len(short.src):] == 0)
    t = alone.tgt_in.shape[1]
    assert torch.allclose(model(alone)[0], model(padded)[0, :t], atol=1e-5)


def test_shuffling_the_source_changes_nothing(model, batch):
    shuffled = shuffle_source(batch, seed=1)
    assert not torch.equal(shuffled.src, batch.src)
    assert torch.equal(shuffled.src.sort(dim=1).values, batch.src.sort(dim=1).values)  # same words
    assert torch.equal(shuffled.src == 0, batch.src == 0)  # padding stays at the end
    assert torch.allclose(model(shuffled), model(batch), atol=1e-5)
    assert torch.equal(model.translate(shuffled, max_len=6), model.translate(batch, max_len=6))
    assert torch.equal(shuffle_source(batch, seed=1).src, shuffled.src)  # deterministic
    assert not torch.equal(shuffle_source(batch, seed=2).src, shuffled.src)


def test_translate_shapes_and_eos(model, batch):
    ids, w = model.translate(batch, max_len=7, return_weights=True)
    assert ids.shape[0] == 5 and ids.shape[1] <= 7 and w.shape == (5, ids.shape[1], batch.src.shape[1])
    assert torch.allclose(w.sum(-1), torch.ones(5, ids.shape[1]))
    for row in ids.tolist():
        if model.eos_id in row:
            assert all(x == model.pad_id for x in row[row.index(model.eos_id) + 1:])
    # greedy: each output is the argmax given the previous output as the query
    fed = torch.cat([torch.full((5, 1), model.bos_id), ids[:, :-1]], dim=1)
    logits, _ = model.step(fed, batch.src, batch.src_mask)
    assert torch.equal(logits.argmax(-1)[:, 0], ids[:, 0])


def test_rejects_bad_batches(model, batch):
    with pytest.raises(ValueError, match="batch.src must be a \\(batch, seq_len\\) LongTensor"):
        model(dataclasses.replace(batch, src=batch.src.float()))
    with pytest.raises(ValueError, match=r"batch\.tgt_in must be .*got dtype torch\.float32.*"
                                         r"`batch\.tgt_in\.long\(\)`"):
        model(dataclasses.replace(batch, tgt_in=batch.tgt_in.float()))
    with pytest.raises(ValueError, match="batch.src_mask must be a bool mask"):
        model(dataclasses.replace(batch, src_mask=batch.src_mask.long()))
    with pytest.raises(ValueError, match="batch.tgt_in must be"):
        model.translate(dataclasses.replace(batch, tgt_in=batch.tgt_in[0]))
