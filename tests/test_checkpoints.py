"""Kept training runs for fast grading (utils.checkpoints, through utils.train.fit)."""

from __future__ import annotations

import torch
from torch import nn

from utils.runtime import seed_everything
from utils.train import fit


class Scaled(nn.Module):
    """A tiny regression model; ``scale`` stands for a learner's code that computes differently."""

    def __init__(self, scale: float = 1.0) -> None:
        super().__init__()
        self.linear, self.scale = nn.Linear(3, 1), scale

    def forward(self, x):
        return self.scale * self.linear(x)


def train(scale: float = 1.0, calls: list | None = None):
    seed_everything(0)
    model = Scaled(scale)
    data = [(torch.randn(8, 3), torch.randn(8, 1)) for _ in range(4)]

    def step(m, batch):
        if calls is not None:
            calls.append(1)
        x, y = batch
        return ((m(x) - y) ** 2).mean()

    history = fit(model, data, step, torch.optim.Adam(model.parameters(), lr=0.01), epochs=3,
                  desc="toy run", progress=False)
    return model, history, torch.rand(2)  # the draw after training: the generators' state


def test_without_the_setting_fit_trains_and_keeps_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("COURSE_CHECKPOINTS", raising=False)
    calls: list = []
    train(calls=calls)
    assert len(calls) == 12 and not list(tmp_path.iterdir())


def test_a_kept_run_is_loaded_as_the_reference_run_left_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("COURSE_CHECKPOINTS", str(tmp_path))
    monkeypatch.setenv("COURSE_CHECKPOINTS_WRITE", "1")
    reference, reference_history, reference_next = train()
    assert len(list(tmp_path.glob("toy-run-*.pt"))) == 1

    monkeypatch.delenv("COURSE_CHECKPOINTS_WRITE")
    calls: list = []
    graded, history, graded_next = train(calls=calls)
    assert len(calls) == 1, "grading trained again (only the key's one look at the first batch is allowed)"
    assert "loaded from toy-run-" in capsys.readouterr().out
    assert history.epoch_losses == reference_history.epoch_losses
    for a, b in zip(reference.parameters(), graded.parameters(), strict=True):
        assert torch.equal(a, b)
    assert torch.equal(reference_next, graded_next), "later cells would draw other random numbers"


def test_a_model_that_computes_differently_is_trained_not_loaded(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_CHECKPOINTS", str(tmp_path))
    monkeypatch.setenv("COURSE_CHECKPOINTS_WRITE", "1")
    train()
    monkeypatch.delenv("COURSE_CHECKPOINTS_WRITE")
    calls: list = []
    train(scale=0.5, calls=calls)  # a learner's buggy or different component: another first loss
    assert len(calls) == 1 + 12


def test_the_key_leaves_training_unchanged(tmp_path, monkeypatch):
    """Writing the reference run gives the same model as a plain run (the key's look is undone)."""
    monkeypatch.delenv("COURSE_CHECKPOINTS", raising=False)
    plain, _, plain_next = train()
    monkeypatch.setenv("COURSE_CHECKPOINTS", str(tmp_path))
    monkeypatch.setenv("COURSE_CHECKPOINTS_WRITE", "1")
    written, _, written_next = train()
    for a, b in zip(plain.parameters(), written.parameters(), strict=True):
        assert torch.equal(a, b)
    assert torch.equal(plain_next, written_next)


# --- kept evaluations and timings ------------------------------------------------------------------
def _tiny_translator_setup():
    from utils.data import load_synthetic
    from utils.transformer import Transformer, TransformerConfig

    data = load_synthetic(n_train=200, n_valid=20, n_test=30, seed=1)
    seed_everything(0)
    config = TransformerConfig(len(data.src_vocab), len(data.tgt_vocab), d_model=16, num_heads=2,
                               num_encoder_layers=1, num_decoder_layers=1, d_ff=32, dropout=0.0)
    return data, Transformer(config)


def _evaluate(data, model, beam_size=1):
    from utils.train import evaluate_translation
    from utils.translation import translator

    return evaluate_translation(translator(model, beam_size=beam_size), data.test, data.src_vocab,
                                data.tgt_vocab, batch_size=16)


def test_a_kept_evaluation_is_loaded_and_a_changed_model_is_evaluated_again(tmp_path, monkeypatch):
    import utils.translation

    data, model = _tiny_translator_setup()
    monkeypatch.setenv("COURSE_CHECKPOINTS", str(tmp_path))
    monkeypatch.setenv("COURSE_CHECKPOINTS_WRITE", "1")
    reference = _evaluate(data, model)
    assert len(list(tmp_path.glob("evaluation-beam-1*.pt"))) == 1

    monkeypatch.delenv("COURSE_CHECKPOINTS_WRITE")
    decoded = []
    real_decode = utils.translation.greedy_decode
    monkeypatch.setattr(utils.translation, "greedy_decode",
                        lambda *args: decoded.append(1) or real_decode(*args))
    model.train()
    graded = _evaluate(data, model)
    assert decoded == [] and graded == reference
    assert not model.training, "decoding leaves the model in evaluation mode; loading must too"
    _evaluate(data, model, beam_size=2)            # other settings: not kept, so decoded
    with torch.no_grad():
        model.output.bias[5] += 1.0                # other weights: evaluated again
    _evaluate(data, model)
    assert len(decoded) == 2                       # two batches of 16 for 30 sentences


def test_an_evaluation_of_the_learners_own_translate_is_never_kept(tmp_path, monkeypatch):
    from utils.train import evaluate_translation
    from utils.translation import greedy_decode

    data, model = _tiny_translator_setup()
    monkeypatch.setenv("COURSE_CHECKPOINTS", str(tmp_path))
    monkeypatch.setenv("COURSE_CHECKPOINTS_WRITE", "1")
    evaluate_translation(lambda batch: greedy_decode(model, batch.src), data.test, data.src_vocab,
                         data.tgt_vocab)
    assert not list(tmp_path.iterdir())


def test_time_call_times_once_in_a_grading_run(tmp_path, monkeypatch):
    from utils.efficient import time_call

    calls: list = []
    monkeypatch.delenv("COURSE_CHECKPOINTS", raising=False)
    time_call(lambda: calls.append(1), min_run_time=0.01)
    learner = len(calls)
    assert learner >= 2                            # the timer's warm-up and at least one block
    monkeypatch.setenv("COURSE_CHECKPOINTS", str(tmp_path))
    monkeypatch.setenv("COURSE_CHECKPOINTS_WRITE", "1")
    time_call(lambda: calls.append(1), min_run_time=0.01)  # the reference run times as a learner's
    assert len(calls) >= learner + 2
    monkeypatch.delenv("COURSE_CHECKPOINTS_WRITE")
    before = len(calls)
    time_call(lambda: calls.append(1), min_run_time=0.01)
    assert len(calls) == before + 1
