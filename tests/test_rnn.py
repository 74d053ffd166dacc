"""Tests for utils/rnn.py: the GRU encoder-decoders of chapter 1 and their one-call training."""

import copy
import dataclasses
import math
from types import SimpleNamespace

import pytest
import torch
import torch.nn.functional as F

import utils.rnn as rnn_module
from utils.attention import scaled_dot_product_attention
from utils.data import batches, load_synthetic, make_batch
from utils.rnn import (
    AttentionSeq2SeqGRU,
    GRUEncoder,
    RNNAttention,
    Seq2SeqGRU,
    TrainedTranslator,
    train_rnn_translator,
    translation_loss,
)
from utils.train import History, evaluate_translation


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Tiny GRUs run fastest on one thread, and much faster on a busy machine; restored afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def data():
    return load_synthetic(n_train=200, n_valid=20, n_test=20, seed=3)


@pytest.fixture(scope="module")
def batch(data):
    return make_batch(data.train[:6], data.src_vocab, data.tgt_vocab)


def _models(data):
    torch.manual_seed(0)
    sizes = (len(data.src_vocab), len(data.tgt_vocab))
    return [Seq2SeqGRU(*sizes, d_emb=8, d_model=16), AttentionSeq2SeqGRU(*sizes, d_emb=8, d_model=16)]


# --- encoder -----------------------------------------------------------------------------------------
def test_encoder_last_state_ignores_padding(data, batch):
    torch.manual_seed(0)
    enc = GRUEncoder(len(data.src_vocab), 8, 16)
    states, last = enc(batch.src, batch.src_lengths)
    assert states.shape == (*batch.src.shape, 16) and last.shape == (6, 16)
    for i in range(6):  # each sentence alone, unpadded, gives the same h_m
        n = int(batch.src_lengths[i])
        alone, _ = enc.gru(enc.embed(batch.src[i:i + 1, :n]))
        assert torch.allclose(last[i], alone[0, -1], atol=1e-6)


def test_encoder_embeds_padding_as_zeros_and_accepts_one_word_sentences():
    assert GRUEncoder(10, 4, 6).embed.padding_idx == 0  # utils.data.Vocab's <pad>
    enc = GRUEncoder(10, 4, 6, pad_id=3)
    assert enc.embed.padding_idx == 3 and torch.all(enc.embed.weight[3] == 0)
    states, last = enc(torch.tensor([[5, 3, 3], [5, 6, 7]]), torch.tensor([1, 3]))  # lengths 1 and 3
    assert torch.equal(last[0], states[0, 0]) and torch.equal(last[1], states[1, 2])


def test_encoder_rejects_bad_input(data, batch):
    enc = GRUEncoder(len(data.src_vocab), 8, 16)
    with pytest.raises(ValueError, match="src must be a \\(batch, seq_len\\) LongTensor"):
        enc(batch.src[0], batch.src_lengths)
    with pytest.raises(ValueError, match="src_lengths must be"):
        enc(batch.src, batch.src_lengths + 100)
    with pytest.raises(ValueError, match="src_lengths must be"):
        enc(batch.src, batch.src_lengths[:2])


# --- attention inside the RNN -------------------------------------------------------------------------
def test_rnn_attention_equals_the_four_steps_per_decoder_step():
    torch.manual_seed(0)
    att = RNNAttention(d_dec=5, d_enc=7, d_k=4, d_v=3)
    s, h = torch.randn(2, 3, 5), torch.randn(2, 6, 7)
    mask = torch.ones(2, 6, dtype=torch.bool)
    mask[1, 4:] = False
    c, alpha = att(s, h, mask)
    assert c.shape == (2, 3, 3) and alpha.shape == (2, 3, 6)
    w_q, w_k, w_v = att.w_q.weight.T, att.w_k.weight.T, att.w_v.weight.T  # row-vector matrices
    for b in range(2):
        m = int(mask[b].sum())
        hb = h[b, :m]  # 1. gather the real encoder states
        for j in range(3):
            q = s[b, j] @ w_q
            scores = torch.stack([q @ (hb[i] @ w_k) for i in range(m)])  # 2. m scores
            a = torch.softmax(scores, dim=0)  # 3. softmax
            ctx = sum(a[i] * (hb[i] @ w_v) for i in range(m))  # 4. weighted sum
            assert torch.allclose(alpha[b, j, :m], a, atol=1e-6)
            assert torch.allclose(c[b, j], ctx, atol=1e-6)
    assert torch.all(alpha[1, :, 4:] == 0)
    assert torch.allclose(alpha.sum(-1), torch.ones(2, 3))


def test_rnn_attention_matches_scaled_dot_product_attention_without_the_scale():
    torch.manual_seed(1)
    att = RNNAttention(d_dec=8, d_enc=8, d_k=16, d_v=8)
    s, h = torch.randn(3, 4, 8), torch.randn(3, 5, 8)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 0, 0, 0, 0]], dtype=torch.bool)
    c, alpha = att(s, h, mask)
    q = att.w_q(s) * math.sqrt(16)  # undo the 1/sqrt(d_k) of the reference
    ref_c, ref_alpha = scaled_dot_product_attention(q, att.w_k(h), att.w_v(h), mask[:, None, :])
    assert torch.allclose(c, ref_c, atol=1e-5) and torch.allclose(alpha, ref_alpha, atol=1e-6)


def test_rnn_attention_rejects_bad_mask():
    att = RNNAttention(4, 4, 4, 4)
    s, h = torch.randn(1, 2, 4), torch.randn(1, 3, 4)
    with pytest.raises(ValueError, match=r"^src_mask must be a bool \(B, S\) = \(1, 3\) mask, True at real "
                                         r"tokens; got torch\.float32 \(1, 3\)$"):
        att(s, h, torch.ones(1, 3))
    with pytest.raises(ValueError, match="src_mask must be a bool"):
        att(s, h, torch.ones(1, 4, dtype=torch.bool))


def test_rnn_attention_projections_have_no_bias():
    att = RNNAttention(d_dec=5, d_enc=7, d_k=4, d_v=3)
    assert [(w.in_features, w.out_features) for w in (att.w_q, att.w_k, att.w_v)] == [(5, 4), (7, 4), (7, 3)]
    assert all(w.bias is None for w in (att.w_q, att.w_k, att.w_v))  # the plain matrices of the prose


def test_rnn_attention_refuses_a_sentence_with_no_real_token():
    """An all-False src_mask row would give softmax 0/0 = NaN: the same clear error as every attention."""
    att = RNNAttention(4, 4, 4, 4)
    s, h = torch.randn(2, 2, 4), torch.randn(2, 3, 4)
    mask = torch.tensor([[True, True, False], [False, False, False]])
    with pytest.raises(ValueError, match=r"attend to no key at all \(a mask row is all False\), first at "
                                         r"src_mask\[1\]"):
        att(s, h, mask)
    c, alpha = att(s[:1], h[:1], mask[:1])  # the sentence with real tokens alone is fine
    assert torch.isfinite(c).all() and torch.allclose(alpha.sum(-1), torch.ones(1, 2))


def test_float_token_ids_get_a_message_naming_the_dtype(data, batch):
    enc, model = GRUEncoder(len(data.src_vocab), 8, 16), _models(data)[1]
    with pytest.raises(ValueError, match=r"src must be .*got dtype torch\.float32 \(shape \(1, 2\)\)"):
        enc(torch.tensor([[1., 2.]]), torch.tensor([2]))
    with pytest.raises(ValueError, match=r"batch\.tgt_in must be .*got dtype torch\.float32"):
        model(dataclasses.replace(batch, tgt_in=batch.tgt_in.float()))


# --- the two encoder-decoders ----------------------------------------------------------------------
def test_forward_shapes_and_loss(data, batch):
    for model in _models(data):
        logits = model(batch)
        assert logits.shape == (*batch.tgt_in.shape, len(data.tgt_vocab))
        loss = translation_loss(model, batch)
        assert loss.dim() == 0 and abs(loss.item() - math.log(len(data.tgt_vocab))) < 1.0


def test_translation_loss_is_the_mean_over_real_target_tokens(data, batch):
    model = _models(data)[1]
    real = batch.tgt_out != model.pad_id
    assert not real.all()  # the batch has padding, which must not count
    logits = model(batch)
    want = F.cross_entropy(logits[real], batch.tgt_out[real])
    torch.testing.assert_close(translation_loss(model, batch), want)


@pytest.mark.parametrize("cls", [Seq2SeqGRU, AttentionSeq2SeqGRU])
def test_models_keep_their_sizes_and_special_ids(cls):
    default = cls(10, 12)  # chapter 1's sizes and utils.data.Vocab's special ids
    assert (default.pad_id, default.bos_id, default.eos_id) == (0, 1, 2)
    assert (default.embed.embedding_dim, default.gru.hidden_size, default.out.out_features) == (32, 64, 12)
    model = cls(10, 12, d_emb=4, d_model=6, pad_id=3, bos_id=4, eos_id=5)
    assert (model.pad_id, model.bos_id, model.eos_id) == (3, 4, 5)
    assert (model.encoder.embed.num_embeddings, model.encoder.gru.hidden_size) == (10, 6)
    for embed in (model.embed, model.encoder.embed):  # <pad> embeds as zeros and gets no gradient
        assert embed.padding_idx == 3 and torch.all(embed.weight[3] == 0) and embed.embedding_dim == 4


def test_teacher_forcing_equals_step_by_step_decoding(data, batch):
    """Running the decoder over the whole target at once gives the same logits as one step at a time."""
    for model in _models(data):
        model.eval()
        full = model(batch)
        memory = model.encode(batch)
        state, steps = memory.last[None], []
        for j in range(batch.tgt_in.shape[1]):
            logits, state, _ = model.decode(batch.tgt_in[:, j:j + 1], state, memory)
            steps.append(logits)
        assert torch.allclose(full, torch.cat(steps, dim=1), atol=1e-5)


def test_padding_does_not_change_the_attention_model(data):
    torch.manual_seed(0)
    model = _models(data)[1].eval()
    short = min(data.train[:40], key=lambda p: len(p.src))
    long = max(data.train[:40], key=lambda p: len(p.src))
    alone = make_batch([short], data.src_vocab, data.tgt_vocab)
    padded = make_batch([short, long], data.src_vocab, data.tgt_vocab)
    t = alone.tgt_in.shape[1]
    assert torch.allclose(model(alone)[0], model(padded)[0, :t], atol=1e-5)
    _, w = model.translate(padded, max_len=4, return_weights=True)
    assert torch.all(w[0, :, len(short.src):] == 0)


def test_translate_shapes_eos_and_weights(data, batch):
    no_att, att = _models(data)
    ids = no_att.translate(batch, max_len=7)
    assert ids.dtype == torch.long and ids.shape[0] == 6 and ids.shape[1] <= 7
    ids, w = att.translate(batch, max_len=7, return_weights=True)
    assert w.shape == (6, ids.shape[1], batch.src.shape[1])
    assert torch.allclose(w.sum(-1), torch.ones(6, ids.shape[1]))
    for row in ids.tolist():  # nothing but <pad> after an <eos>
        if att.eos_id in row:
            assert all(x == att.pad_id for x in row[row.index(att.eos_id) + 1:])
    with pytest.raises(ValueError, match="has no attention weights"):
        no_att.translate(batch, return_weights=True)
    assert att.training  # translate restores the training mode


def test_decoding_feeds_outputs_back(data, batch):
    """The greedy ids are the argmax of teacher forcing on the model's own outputs."""
    _, model = _models(data)
    model.eval()
    ids = model.translate(batch, max_len=5)
    fed = torch.cat([torch.full((6, 1), model.bos_id), ids[:, :-1]], dim=1)
    memory = model.encode(batch)
    logits, _, _ = model.decode(fed, memory.last[None], memory)
    first = logits.argmax(-1)
    for b in range(6):
        n = ids.shape[1] if model.eos_id not in ids[b] else ids[b].tolist().index(model.eos_id) + 1
        assert torch.equal(first[b, :n], ids[b, :n])


# --- training in one call ----------------------------------------------------------------------------
def test_train_rnn_translator_is_deterministic_and_learns(data):
    runs = [train_rnn_translator(data, attention=True, epochs=3, d_emb=8, d_model=16, progress=False)
            for _ in range(2)]
    assert isinstance(runs[0], TrainedTranslator)
    model, history, seconds = runs[0]
    assert isinstance(model, AttentionSeq2SeqGRU) and seconds > 0
    assert history.epoch_losses == runs[1].history.epoch_losses
    assert history.epoch_losses[-1] < history.epoch_losses[0]
    scores = evaluate_translation(model.translate, data.test, data.src_vocab, data.tgt_vocab)
    assert 0.0 <= scores.token_accuracy <= 1.0 and len(scores.predictions) == len(data.test)
    plain = train_rnn_translator(data, attention=False, epochs=1, d_emb=8, d_model=16, progress=False)
    assert type(plain.model) is Seq2SeqGRU


def test_train_rnn_translator_builds_the_model_and_training_it_describes(data, monkeypatch):
    """What goes into the model and into utils.train.fit (stubbed here: nothing is trained)."""
    seen, clock = {}, SimpleNamespace(now=100.0)

    def fake_fit(model, batches_of, step, optimizer, **kwargs):
        seen.update(model=model, batches_of=batches_of, step=step, lr=optimizer.param_groups[0]["lr"],
                    **kwargs)
        clock.now += 7.0  # "training" takes 7 s
        return History()

    monkeypatch.setattr(rnn_module, "fit", fake_fit)
    monkeypatch.setattr(rnn_module, "time", SimpleNamespace(perf_counter=lambda: clock.now))
    tgt_vocab = copy.copy(data.tgt_vocab)
    tgt_vocab.pad_id, tgt_vocab.bos_id, tgt_vocab.eos_id = 5, 6, 7  # a vocabulary with other special ids
    custom = dataclasses.replace(data, tgt_vocab=tgt_vocab)
    run = train_rnn_translator(custom, attention=False, epochs=2, d_emb=6, d_model=10, batch_size=16,
                               lr=0.01, seed=3, progress=False)
    model = run.model
    assert type(model) is Seq2SeqGRU and (model.pad_id, model.bos_id, model.eos_id) == (5, 6, 7)
    assert (model.embed.embedding_dim, model.gru.hidden_size) == (6, 10)
    assert seen["step"] is translation_loss and seen["lr"] == 0.01
    assert (seen["epochs"], seen["progress"], seen["desc"]) == (2, False, "Seq2SeqGRU (no attention)")
    for epoch in (0, 1):  # reshuffled every epoch, with seed + epoch
        got = list(seen["batches_of"](epoch))
        want = list(batches(custom.train, custom.src_vocab, tgt_vocab, 16, seed=3 + epoch))
        assert len(got) == len(want) == math.ceil(len(data.train) / 16)
        for g, w in zip(got, want, strict=True):
            assert torch.equal(g.src, w.src) and torch.equal(g.tgt_in, w.tgt_in)
    assert run.seconds == 7.0
    # the defaults are chapter 1's settings
    run = train_rnn_translator(data)
    assert type(run.model) is AttentionSeq2SeqGRU
    assert (run.model.embed.embedding_dim, run.model.gru.hidden_size) == (32, 64)
    assert (seen["epochs"], seen["progress"], seen["lr"]) == (8, True, 6e-3)
    assert seen["desc"] == "AttentionSeq2SeqGRU (with attention)"
    first = next(iter(seen["batches_of"](0)))
    assert torch.equal(first.src, next(batches(data.train, data.src_vocab, data.tgt_vocab, 64, seed=0)).src)
    assert len(list(seen["batches_of"](0))) == math.ceil(len(data.train) / 64)
    train_rnn_translator(data, batch_size=1)  # one sentence per step is allowed


def test_train_rnn_translator_rejects_bad_settings(data):
    with pytest.raises(ValueError, match="need epochs >= 1"):
        train_rnn_translator(data, epochs=0, progress=False)
    with pytest.raises(ValueError, match="need epochs >= 1"):
        train_rnn_translator(data, lr=0.0, progress=False)
    empty = load_synthetic(n_train=0, n_valid=5, n_test=5)
    with pytest.raises(ValueError, match="need epochs >= 1, batch_size >= 1 and lr > 0; got epochs=8, "
                                         "batch_size=0, lr=0.006"):
        train_rnn_translator(data, batch_size=0, progress=False)
    with pytest.raises(ValueError, match="^data.train is empty: nothing to train on$"):
        train_rnn_translator(empty, progress=False)
