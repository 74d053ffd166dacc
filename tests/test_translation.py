"""Tests for utils/translation.py: greedy and beam-search decoding, training on a translation task."""

import pytest
import torch

from utils.data import load_synthetic, make_batch
from utils.transformer import Transformer, TransformerConfig
from utils.translation import beam_search, greedy_decode, teacher_forcing_loss, train_translation, translator

C, H, F_, L = 16, 4, 32, 2


def tiny_config(**overrides) -> TransformerConfig:
    args = dict(src_vocab_size=12, tgt_vocab_size=11, d_model=C, num_heads=H, num_encoder_layers=L,
                num_decoder_layers=L, d_ff=F_, dropout=0.0, max_len=40)
    return TransformerConfig(**(args | overrides))


# ---------------------------------------------------------------------------------------------------
# Decoding and training
# ---------------------------------------------------------------------------------------------------
def test_greedy_decode_matches_step_by_step_argmax():
    torch.manual_seed(0)
    model = Transformer(tiny_config()).eval()
    src = torch.randint(3, 12, (2, 6))
    out = greedy_decode(model, src, max_new_tokens=4)
    assert out.shape[0] == 2 and out.shape[1] <= 4
    ys = torch.full((2, 1), 1)
    for _ in range(out.shape[1]):
        ys = torch.cat([ys, model(src, ys)[:, -1].argmax(-1, keepdim=True)], dim=1)
    done = torch.zeros(2, dtype=torch.bool)
    for t in range(out.shape[1]):  # after <eos> greedy_decode writes padding
        expect = ys[:, t + 1].masked_fill(done, 0)
        assert torch.equal(out[:, t], expect)
        done |= ys[:, t + 1] == 2


def test_beam_size_one_equals_greedy_and_beams_score_at_least_as_well():
    torch.manual_seed(0)
    model = Transformer(tiny_config()).eval()
    src = torch.randint(3, 12, (4, 6))
    greedy = greedy_decode(model, src, max_new_tokens=8)
    beam1 = beam_search(model, src, beam_size=1, max_new_tokens=8)
    assert torch.equal(beam1[:, :greedy.shape[1]], greedy)
    assert torch.all(beam1[:, greedy.shape[1]:] == 0)
    beam4 = beam_search(model, src, beam_size=4, max_new_tokens=8)
    assert beam4.shape[0] == 4
    with pytest.raises(ValueError, match="beam_size must be at least 1"):
        beam_search(model, src, beam_size=0)
    with pytest.raises(ValueError, match="max_new_tokens must be at least 1"):
        greedy_decode(model, src, max_new_tokens=0)
    data = load_synthetic(n_train=8, n_valid=2, n_test=2, max_clauses=1)
    config = tiny_config(src_vocab_size=len(data.src_vocab), tgt_vocab_size=len(data.tgt_vocab))
    batch = make_batch(data.train[:3], data.src_vocab, data.tgt_vocab)
    model = Transformer(config).eval()
    out = translator(model, beam_size=2, max_new_tokens=3)(batch)
    assert out.shape[0] == 3 and out.shape[1] <= 3


def test_short_training_lowers_the_loss():
    torch.manual_seed(0)
    data = load_synthetic(n_train=256, n_valid=16, n_test=16, max_clauses=1)
    config = TransformerConfig(len(data.src_vocab), len(data.tgt_vocab), d_model=32, num_heads=4,
                               num_encoder_layers=1, num_decoder_layers=1, d_ff=64, dropout=0.0)
    model = Transformer(config)
    batch = make_batch(data.train[:64], data.src_vocab, data.tgt_vocab)
    before = teacher_forcing_loss(model, batch).item()
    history = train_translation(model, data, epochs=3, batch_size=32, lr=3e-3, warmup_steps=5,
                                label_smoothing=0.1, n_eval=8, progress=False)
    assert history.epoch_losses[-1] < history.epoch_losses[0]
    assert teacher_forcing_loss(model, batch).item() < 0.8 * before
    assert 0.0 <= history.epoch_metrics[-1]["valid_exact"] <= 1.0
    assert history.epoch_metrics[-1]["seconds"] > 0
    ids = translator(model)(batch)
    assert ids.dim() == 2 and ids.shape[0] == 64
    with pytest.raises(ValueError, match="need epochs >= 1"):
        train_translation(model, data, epochs=0)
