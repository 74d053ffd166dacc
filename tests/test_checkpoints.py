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
