"""The GPU paths the notebooks take when CUDA is present, and the one knob that picks the device.

The notebooks pick ``device = get_device()`` once and train on it (chapters 1, 3, 5, 6, 8, 9, labs).
These tests run the same package calls on CUDA wherever CUDA exists (skipped elsewhere): each trainer
runs on the GPU, its model and outputs stay there, and its results match a CPU run of the same seed
up to the rounding differences between the two devices' kernels.
"""

from __future__ import annotations

import pytest
import torch

from utils import get_device
from utils.data import load_synthetic
from utils.gpt import GPTConfig, TinyGPT, generate, generate_cached, lm_batches, lm_loss
from utils.rnn import train_rnn_translator
from utils.train import evaluate_translation, fit

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def test_course_device_picks_the_device(monkeypatch):
    monkeypatch.setenv("COURSE_DEVICE", "cpu")
    assert get_device(verbose=False).type == "cpu"
    monkeypatch.setenv("COURSE_DEVICE", "tpu")
    with pytest.raises(ValueError, match="prefer must be"):
        get_device(verbose=False)
    monkeypatch.delenv("COURSE_DEVICE")
    expected = "cuda" if torch.cuda.is_available() else None
    if expected:
        assert get_device(verbose=False).type == expected


@pytest.fixture(scope="module")
def small_data():
    return load_synthetic(n_train=400, n_valid=50, n_test=50, seed=0)


@needs_cuda
def test_rnn_translator_trains_and_translates_on_cuda(small_data):
    run = train_rnn_translator(small_data, attention=True, epochs=1, seed=0, device="cuda",
                               progress=False)
    assert next(run.model.parameters()).is_cuda
    scores = evaluate_translation(run.model.translate, small_data.test, small_data.src_vocab,
                                  small_data.tgt_vocab, device="cuda")
    cpu = train_rnn_translator(small_data, attention=True, epochs=1, seed=0, device="cpu",
                               progress=False)
    cpu_scores = evaluate_translation(cpu.model.translate, small_data.test, small_data.src_vocab,
                                      small_data.tgt_vocab)
    assert abs(run.history.final_loss - cpu.history.final_loss) < 0.05
    assert abs(scores.token_accuracy - cpu_scores.token_accuracy) < 0.1


@needs_cuda
def test_transformer_trains_and_decodes_on_cuda(small_data):
    from utils.transformer import Transformer, TransformerConfig
    from utils.translation import train_translation

    config = TransformerConfig(len(small_data.src_vocab), len(small_data.tgt_vocab), d_model=32,
                               num_heads=4, num_encoder_layers=1, num_decoder_layers=1, d_ff=64,
                               dropout=0.0, max_len=64)
    torch.manual_seed(0)
    model = Transformer(config).to("cuda")
    history = train_translation(model, small_data, epochs=1, n_eval=20, device="cuda",
                                progress=False)
    assert next(model.parameters()).is_cuda and history.epoch_losses[0] > 0
    from utils.data import make_batch
    from utils.translation import greedy_decode

    src = make_batch(small_data.test[:8], small_data.src_vocab, small_data.tgt_vocab).src.to("cuda")
    ids = greedy_decode(model.eval(), src)
    assert ids.is_cuda and ids.shape[0] == 8


@needs_cuda
def test_tiny_gpt_trains_and_generates_on_cuda_with_and_without_cache(small_data):
    sentences = [p.src for p in small_data.train]
    from utils.data import SOURCE_WORDS, Vocab

    vocab = Vocab(SOURCE_WORDS)
    torch.manual_seed(0)
    gpt = TinyGPT(GPTConfig(vocab_size=len(vocab), d_model=32, num_heads=2, num_layers=1, d_ff=64,
                            dropout=0.0, max_len=40)).to("cuda")
    optimizer = torch.optim.AdamW(gpt.parameters(), lr=1e-2)
    fit(gpt, lambda epoch: (b.to("cuda") for b in lm_batches(sentences, vocab, 64, seed=epoch)),
        lm_loss, optimizer, epochs=1, progress=False)
    gpt.eval()
    prompt = torch.full((4, 1), vocab.bos_id, device="cuda")
    plain = generate(gpt, prompt, 20, temperature=0)
    cached = generate_cached(gpt, prompt, 20, temperature=0)
    assert plain.is_cuda and torch.equal(plain, cached)
