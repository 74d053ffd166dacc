"""utils.real_translation: length-grouped batches, decoding to text, the learning curve, one sentence."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from utils import seed_everything
from utils.real_translation import (
    _Clock,
    bleu_of,
    decode_texts,
    token_batches,
    train_with_curve,
    translate_sentence,
)
from utils.rnn import AttentionSeq2SeqGRU
from utils.tatoeba import TatoebaData, load_cmn
from utils.transformer import Transformer, TransformerConfig


@pytest.fixture(scope="module")
def data() -> TatoebaData:
    full = load_cmn()
    # a small copy: the first 300 training pairs, 40 validation and 40 test sentences
    return dataclasses.replace(full, train=full.train[:300], valid=full.valid[:40], test=full.test[:40],
                               valid_entries=full.valid_entries[:40], test_entries=full.test_entries[:40])


def tiny_transformer(data: TatoebaData) -> Transformer:
    seed_everything(0)
    return Transformer(TransformerConfig(len(data.src_vocab), len(data.tgt_vocab), d_model=16, num_heads=2,
                                         num_encoder_layers=1, num_decoder_layers=1, d_ff=32, dropout=0.0))


def test_token_batches_hold_every_pair_once_within_the_token_budget(data):
    batches = token_batches(data.train, data.src_vocab, data.tgt_vocab, max_tokens=400, seed=3)
    assert sum(b.src.shape[0] for b in batches) == len(data.train)
    for b in batches:
        longest = max(b.src.shape[1], b.tgt_in.shape[1] - 1) + 2  # as counted: <bos> and <eos> added
        assert b.src.shape[0] * longest <= 400
    sources = sorted(tuple(row[row != 0].tolist()) for b in batches for row in b.src)
    expected = sorted(tuple(data.src_vocab.encode(p.src)) for p in data.train)
    assert sources == expected


def test_token_batches_are_fixed_by_the_seed(data):
    first = token_batches(data.train, data.src_vocab, data.tgt_vocab, 400, seed=1)
    again = token_batches(data.train, data.src_vocab, data.tgt_vocab, 400, seed=1)
    other = token_batches(data.train, data.src_vocab, data.tgt_vocab, 400, seed=2)
    assert all(torch.equal(a.src, b.src) for a, b in zip(first, again, strict=True))
    assert [b.src.shape for b in first] != [b.src.shape for b in other]


def test_token_batches_refuse_a_pair_longer_than_the_budget(data):
    with pytest.raises(ValueError, match="max_tokens"):
        token_batches(data.train, data.src_vocab, data.tgt_vocab, max_tokens=5)


def test_decoding_in_sorted_batches_gives_what_one_sentence_at_a_time_gives(data):
    model = tiny_transformer(data)
    together = decode_texts(model, data.test[:12], data, batch_size=5, max_new_tokens=12)
    alone = [decode_texts(model, [pair], data, batch_size=1, max_new_tokens=12)[0]
             for pair in data.test[:12]]
    assert together == alone
    assert all(isinstance(t, str) and " " not in t for t in together)


def test_the_gru_decodes_too_and_refuses_beam_search(data):
    seed_everything(0)
    gru = AttentionSeq2SeqGRU(len(data.src_vocab), len(data.tgt_vocab), d_emb=8, d_model=8)
    assert len(decode_texts(gru, data.test[:5], data)) == 5
    with pytest.raises(ValueError, match="beam search"):
        decode_texts(gru, data.test[:5], data, beam_size=4)


def test_the_learning_curve_records_seconds_and_bleu_each_epoch(data):
    model = tiny_transformer(data)
    history = train_with_curve(model, data, epochs=2, max_tokens=600, n_curve=10, progress=False)
    assert len(history.epoch_metrics) == 2
    seconds = [m["seconds"] for m in history.epoch_metrics]
    assert 0 < seconds[0] < seconds[1] <= history.seconds
    assert all(0 <= m["valid_bleu"] <= 100 for m in history.epoch_metrics)
    assert 0 <= bleu_of(model, data, "test", 10) <= 100


def test_parts_of_an_epoch_cover_its_batches_once_each(data):
    model = tiny_transformer(data)
    history = train_with_curve(model, data, epochs=2, max_tokens=600, n_curve=0, parts_per_epoch=3,
                               progress=False)
    assert [m["epochs"] for m in history.epoch_metrics] == pytest.approx([1 / 3, 2 / 3, 1, 4 / 3, 5 / 3, 2])
    per_epoch = len(token_batches(data.train, data.src_vocab, data.tgt_vocab, 600, 0))
    assert len(history.step_losses) == 2 * per_epoch  # every batch of both epochs, once
    with pytest.raises(ValueError, match="parts_per_epoch"):
        train_with_curve(model, data, epochs=1, max_tokens=600, parts_per_epoch=10_000, progress=False)


def test_the_view_writes_chinese_without_spaces(data):
    from utils.views import transformer_view

    model = tiny_transformer(data)
    view = transformer_view(model, data.test[:2], data.src_vocab, data.tgt_vocab, sep="", max_new_tokens=6)
    notes = [ex.note for ex in view.examples]
    assert all(note.startswith("→ ") and " " not in note[2:].split("   ≠ ")[0] for note in notes)


def test_the_clock_leaves_evaluation_out():
    clock = _Clock()
    ticks = iter([10.0, 12.0, 15.0, 20.0])
    clock._now = lambda: next(ticks)
    clock.start = 0.0
    assert clock.training_seconds() == 10.0
    clock.evaluated()  # evaluated from 10 to 12
    assert clock.training_seconds() == 13.0  # 15 s, less the 2 s of evaluation


def test_a_sentence_of_your_own_reports_what_it_cannot_read(data):
    model = tiny_transformer(data)
    out = translate_sentence(model, data, "Tom likes the ħat.", beam_size=2)
    assert out.english == "tom likes the ħat."
    assert out.unknown == ("ħat",)
    assert isinstance(out.chinese, str)
    assert translate_sentence(model, data, "Tom is here.", beam_size=1).unknown == ()
    with pytest.raises(ValueError, match="non-empty string"):
        translate_sentence(model, data, "   ")
