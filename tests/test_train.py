"""Tests for utils/train.py: the training loop, parameter count, warm-up schedule, translation scores."""

from __future__ import annotations

import math
import re
from collections import Counter

import pytest
import torch
from torch import nn

from utils.data import DICTIONARY, SOURCE_WORDS, Batch, Vocab, make_pairs
from utils.train import (
    History,
    TranslationScores,
    count_parameters,
    evaluate_translation,
    fit,
    plain_progress,
    warmup_schedule,
)


# ---------------------------------------------------------------------------------------------------
# A tiny regression problem: y = x @ w + b, learnt by a Linear layer
# ---------------------------------------------------------------------------------------------------
def _regression_batches(n_batches: int = 4, batch_size: int = 16, seed: int = 0) -> list[tuple]:
    g = torch.Generator().manual_seed(seed)
    w, b = torch.tensor([[1.0], [-2.0], [0.5]]), torch.tensor([0.3])
    out = []
    for _ in range(n_batches):
        x = torch.randn(batch_size, 3, generator=g)
        out.append((x, x @ w + b))  # (batch, 3) @ (3, 1) -> (batch, 1)
    return out


def _mse_step(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, y = batch
    return nn.functional.mse_loss(model(x), y)


def _model_and_optimizer(lr: float = 0.1, seed: int = 0) -> tuple[nn.Module, torch.optim.Optimizer]:
    torch.manual_seed(seed)
    model = nn.Linear(3, 1)
    return model, torch.optim.SGD(model.parameters(), lr=lr)


def test_fit_makes_the_loss_fall_and_records_history():
    model, opt = _model_and_optimizer()
    data = _regression_batches()
    history = fit(model, data, _mse_step, opt, epochs=25, progress=False)
    assert isinstance(history, History)
    assert len(history.step_losses) == 25 * 4
    assert len(history.epoch_losses) == 25
    assert history.epoch_metrics == []
    assert history.epoch_losses[-1] < 0.01 * history.epoch_losses[0]
    assert history.final_loss == history.epoch_losses[-1]
    for epoch in range(25):  # each epoch's loss is the mean of its steps' losses
        steps = history.step_losses[4 * epoch: 4 * epoch + 4]
        assert history.epoch_losses[epoch] == pytest.approx(sum(steps) / 4)
    assert history.seconds > 0
    assert torch.allclose(model.weight, torch.tensor([[1.0, -2.0, 0.5]]), atol=0.05)


def test_fit_is_deterministic():
    runs = []
    for _ in range(2):
        model, opt = _model_and_optimizer()
        runs.append(fit(model, _regression_batches(), _mse_step, opt, epochs=3, progress=False).step_losses)
    assert runs[0] == runs[1]


def test_fit_calls_a_batches_function_once_per_epoch():
    seen: list[int] = []

    def batches(epoch: int) -> list[tuple]:
        seen.append(epoch)
        return _regression_batches(n_batches=2, seed=epoch)  # a reshuffle with a per-epoch seed

    model, opt = _model_and_optimizer()
    history = fit(model, batches, _mse_step, opt, epochs=3, progress=False)
    assert seen == [0, 1, 2]
    assert len(history.step_losses) == 6


def test_fit_reports_on_epoch_end_metrics_in_eval_mode():
    model, opt = _model_and_optimizer()
    modes: list[bool] = []

    def on_epoch_end(epoch: int) -> dict[str, float] | None:
        modes.append(model.training)
        return {"val": float(epoch)} if epoch != 1 else None

    history = fit(model, _regression_batches(), _mse_step, opt, epochs=3, on_epoch_end=on_epoch_end,
                  progress=False)
    assert history.epoch_metrics == [{"val": 0.0}, {}, {"val": 2.0}]
    assert modes == [False, False, False]
    assert model.training is False  # left in eval mode after the last callback


def test_fit_trains_in_train_mode():
    model, opt = _model_and_optimizer()
    modes: list[bool] = []

    def step(m: nn.Module, batch: tuple) -> torch.Tensor:
        modes.append(m.training)
        return _mse_step(m, batch)

    model.eval()
    fit(model, _regression_batches(n_batches=2), step, opt, epochs=2, on_epoch_end=lambda e: None,
        progress=False)
    assert modes == [True] * 4


def test_fit_clips_gradients():
    model, opt = _model_and_optimizer(lr=1.0)
    before = [p.detach().clone() for p in model.parameters()]
    fit(model, _regression_batches(n_batches=1), _mse_step, opt, grad_clip=0.01, progress=False)
    change = torch.cat([(p.detach() - b).flatten() for p, b in zip(model.parameters(), before, strict=True)])
    assert change.norm() <= 0.01 + 1e-6  # lr 1 times a gradient of norm at most 0.01
    model, opt = _model_and_optimizer(lr=1.0)
    fit(model, _regression_batches(n_batches=1), _mse_step, opt, grad_clip=None, progress=False)
    change = torch.cat([(p.detach() - b).flatten() for p, b in zip(model.parameters(), before, strict=True)])
    assert change.norm() > 0.1  # no clipping: a full step


def test_fit_steps_the_scheduler_once_per_batch():
    model, opt = _model_and_optimizer(lr=1.0)
    scheduler = warmup_schedule(opt, warmup_steps=10, total_steps=20)
    fit(model, _regression_batches(n_batches=3), _mse_step, opt, epochs=2, scheduler=scheduler,
        progress=False)
    assert scheduler.last_epoch == 6
    assert opt.param_groups[0]["lr"] == pytest.approx(7 / 10)


def test_fit_shows_a_progress_bar(capsys, monkeypatch):
    monkeypatch.delenv("COURSE_PLAIN_PROGRESS", raising=False)
    model, opt = _model_and_optimizer()
    fit(model, _regression_batches(n_batches=1), _mse_step, opt, epochs=2, desc="tiny run")
    captured = capsys.readouterr()
    assert "tiny run" in captured.err and "2/2" in captured.err and "loss=" in captured.err
    assert captured.out == ""


def test_fit_prints_one_line_in_plain_progress_mode(capsys, monkeypatch):
    monkeypatch.setenv("COURSE_PLAIN_PROGRESS", "1")  # what the book build sets
    assert plain_progress()
    model, opt = _model_and_optimizer()
    fit(model, _regression_batches(n_batches=1), _mse_step, opt, epochs=2, desc="tiny run",
        on_epoch_end=lambda epoch: {"val": 0.5})
    captured = capsys.readouterr()
    assert re.fullmatch(r"tiny run: 2 epochs in \d+\.\d s \(loss \S+, val 0\.5\)\n", captured.out)
    assert "2/2" not in captured.err  # no live bar
    fit(model, _regression_batches(n_batches=1), _mse_step, opt, progress=False)
    assert capsys.readouterr().out == ""  # progress=False silences the line too


@pytest.mark.parametrize(("value", "plain"), [("", False), ("0", False), ("1", True), ("yes", True)])
def test_plain_progress_reads_the_environment(monkeypatch, value, plain):
    monkeypatch.setenv("COURSE_PLAIN_PROGRESS", value)
    assert plain_progress() is plain


@pytest.mark.parametrize("epochs", [0, -3])
def test_fit_rejects_fewer_than_one_epoch(epochs):
    model, opt = _model_and_optimizer()
    with pytest.raises(ValueError, match=rf"epochs must be at least 1, got {epochs}"):
        fit(model, _regression_batches(), _mse_step, opt, epochs=epochs, progress=False)


@pytest.mark.parametrize("grad_clip", [0, 0.0, -1.0])
def test_fit_rejects_a_non_positive_grad_clip(grad_clip):
    model, opt = _model_and_optimizer()
    with pytest.raises(ValueError, match=r"grad_clip must be positive or None, got"):
        fit(model, _regression_batches(), _mse_step, opt, grad_clip=grad_clip, progress=False)


@pytest.mark.parametrize("bad_loss", [
    lambda m, b: 0.5,
    lambda m, b: nn.functional.mse_loss(m(b[0]), b[1], reduction="none"),
])
def test_fit_wants_a_scalar_loss_tensor(bad_loss):
    model, opt = _model_and_optimizer()
    with pytest.raises(TypeError, match=r"step must return a scalar loss tensor, got"):
        fit(model, _regression_batches(), bad_loss, opt, progress=False)


def test_fit_stops_on_a_nan_loss():
    model, opt = _model_and_optimizer()
    calls = []

    def step(m: nn.Module, batch: tuple) -> torch.Tensor:
        calls.append(1)
        loss = _mse_step(m, batch)
        return loss * float("nan") if len(calls) == 6 else loss  # the 2nd batch of epoch 1

    with pytest.raises(FloatingPointError, match=r"the loss became nan at epoch 1; try a smaller learning"):
        fit(model, _regression_batches(), step, opt, epochs=3, progress=False)


def test_fit_rejects_an_empty_epoch():
    model, opt = _model_and_optimizer()
    with pytest.raises(ValueError, match=r"epoch 0 had no batches: is the data empty\?"):
        fit(model, [], _mse_step, opt, progress=False)
    one_shot = iter(_regression_batches())  # an exhausted iterator gives an empty second epoch
    with pytest.raises(ValueError, match=r"epoch 1 had no batches"):
        fit(model, one_shot, _mse_step, opt, epochs=2, progress=False)


def test_history_final_loss_needs_a_finished_epoch():
    with pytest.raises(ValueError, match=r"no epoch has finished yet"):
        History().final_loss  # noqa: B018


# ---------------------------------------------------------------------------------------------------
# count_parameters and warmup_schedule
# ---------------------------------------------------------------------------------------------------
def test_count_parameters_counts_only_trainable_ones():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    assert count_parameters(model) == (3 * 4 + 4) + (4 * 2 + 2)
    model[2].bias.requires_grad_(False)
    assert count_parameters(model) == (3 * 4 + 4) + 4 * 2
    assert count_parameters(nn.ReLU()) == 0


def _lrs(warmup: int, total: int, steps: int) -> list[float]:
    opt = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=1.0)
    scheduler = warmup_schedule(opt, warmup, total)
    lrs = []
    for _ in range(steps):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        scheduler.step()
    return lrs


def test_warmup_schedule_rises_linearly_then_decays_to_a_tenth():
    lrs = _lrs(4, 12, 15)
    assert lrs[:4] == pytest.approx([0.25, 0.5, 0.75, 1.0])
    assert lrs[4] == pytest.approx(1.0)  # the peak, at the end of the warm-up
    decay = lrs[4:13]
    assert all(a > b for a, b in zip(decay, decay[1:], strict=False))
    assert lrs[8] == pytest.approx(0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * 0.5)))  # half-way: 0.55
    assert lrs[12:] == pytest.approx([0.1] * 3)  # stays at 10% after total_steps


def test_warmup_schedule_without_warmup_starts_at_the_peak():
    assert _lrs(0, 5, 1) == pytest.approx([1.0])


@pytest.mark.parametrize(("warmup", "total"), [(10, 10), (11, 10), (-1, 10), (0, 0)])
def test_warmup_schedule_rejects_impossible_step_counts(warmup, total):
    opt = torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=1.0)
    with pytest.raises(ValueError, match=rf"need 0 <= warmup_steps < total_steps, got "
                                         rf"warmup_steps={warmup}, total_steps={total}"):
        warmup_schedule(opt, warmup, total)


# ---------------------------------------------------------------------------------------------------
# evaluate_translation and TranslationScores.binned
# ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pairs_and_vocabs():
    return make_pairs(40, seed=3), Vocab(SOURCE_WORDS), Vocab(DICTIONARY.values())


def _perfect(batch: Batch) -> torch.Tensor:
    return batch.tgt_out  # the reference ids, ending in <eos> and padding


def test_a_perfect_translator_scores_one(pairs_and_vocabs):
    pairs, src_vocab, tgt_vocab = pairs_and_vocabs
    scores = evaluate_translation(_perfect, pairs, src_vocab, tgt_vocab, batch_size=7)
    assert scores.exact_match == 1.0
    assert scores.token_accuracy == 1.0
    assert scores.predictions == [list(p.tgt) for p in pairs]
    assert scores.counts == dict(sorted(Counter(len(p.src) for p in pairs).items()))
    assert sum(scores.counts.values()) == len(pairs)
    assert list(scores.by_length) == sorted(scores.counts)
    assert set(scores.by_length.values()) == {1.0}


def test_scores_by_length_for_a_translator_that_fails_on_long_sentences(pairs_and_vocabs):
    pairs, src_vocab, tgt_vocab = pairs_and_vocabs
    long_from = sorted(len(p.src) for p in pairs)[len(pairs) // 2]

    def short_only(batch: Batch) -> torch.Tensor:
        ids = batch.tgt_out.clone()
        long = batch.src_lengths >= long_from
        first_word = ids[long, 0]
        ids[long, 0] = 4 + (first_word - 4 + 1) % (len(tgt_vocab) - 4)  # another real word
        return ids

    scores = evaluate_translation(short_only, pairs, src_vocab, tgt_vocab, batch_size=16)
    n_long = sum(len(p.src) >= long_from for p in pairs)
    n_tokens = sum(len(p.tgt) for p in pairs)
    assert scores.exact_match == pytest.approx(1 - n_long / len(pairs))
    assert scores.token_accuracy == pytest.approx(1 - n_long / n_tokens)
    assert scores.by_length == {n: float(n < long_from) for n in scores.counts}

    labels, rates = scores.binned([0, long_from, 100])
    assert labels == [f"0-{long_from - 1}", f"{long_from}-99"]
    assert rates == pytest.approx([1.0, 0.0])
    labels, rates = scores.binned([0, 1, long_from, 200, 300])  # empty bins are left out
    assert labels == [f"1-{long_from - 1}", f"{long_from}-199"]


def test_an_empty_translation_scores_zero(pairs_and_vocabs):
    pairs, src_vocab, tgt_vocab = pairs_and_vocabs

    def silent(batch: Batch) -> torch.Tensor:
        return torch.full((len(batch), 3), tgt_vocab.eos_id)

    scores = evaluate_translation(silent, pairs[:5], src_vocab, tgt_vocab)
    assert (scores.exact_match, scores.token_accuracy) == (0.0, 0.0)
    assert scores.predictions == [[]] * 5


def test_binned_mixes_lengths_by_their_counts():
    scores = TranslationScores(exact_match=0.5, token_accuracy=0.5, by_length={3: 1.0, 4: 0.0, 9: 0.5},
                               counts={3: 1, 4: 3, 9: 2}, predictions=[])
    assert scores.binned([3, 5, 10]) == (["3-4", "5-9"], [0.25, 0.5])


def test_evaluate_translation_checks_the_output_shape(pairs_and_vocabs):
    pairs, src_vocab, tgt_vocab = pairs_and_vocabs
    with pytest.raises(ValueError, match=r"translate must return \(batch, out_len\) ids for 7 sentences, "
                                         r"got shape \(7,\)"):
        evaluate_translation(lambda b: b.tgt_out[:, 0], pairs, src_vocab, tgt_vocab, batch_size=7)
    with pytest.raises(ValueError, match=r"for 7 sentences, got shape \(6, \d+\)"):
        evaluate_translation(lambda b: b.tgt_out[:6], pairs, src_vocab, tgt_vocab, batch_size=7)


def test_evaluate_translation_needs_pairs(pairs_and_vocabs):
    _, src_vocab, tgt_vocab = pairs_and_vocabs
    with pytest.raises(ValueError, match=r"evaluate_translation got no pairs"):
        evaluate_translation(_perfect, [], src_vocab, tgt_vocab)


# ---------------------------------------------------------------------------------------------------
# The progress bar as a notebook saves it
# ---------------------------------------------------------------------------------------------------
_FIT_IN_A_NOTEBOOK = """
import torch
from torch import nn
from utils.train import fit

torch.manual_seed(0)
model = nn.Linear(2, 1)
data = [(torch.randn(8, 2), torch.randn(8, 1))]
opt = torch.optim.SGD(model.parameters(), lr=0.1)

def step(model, batch):
    x, y = batch
    return nn.functional.mse_loss(model(x), y)
"""


def _saved_outputs(code: str, monkeypatch) -> list[dict]:
    """Execute ``code`` after _FIT_IN_A_NOTEBOOK in a Jupyter kernel; the outputs as a file stores them."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipywidgets")
    monkeypatch.delenv("COURSE_PLAIN_PROGRESS", raising=False)  # the live bar, as a student sees it
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(_FIT_IN_A_NOTEBOOK), nbformat.v4.new_code_cell(code)]
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True).execute()
    return nb.cells[1].outputs


def _plain_texts(outputs: list[dict]) -> list[str]:
    return [o.get("data", {}).get("text/plain", "") for o in outputs] + [o.get("text", "") for o in outputs]


def test_a_saved_progress_bar_shows_the_finished_run_not_zero(monkeypatch):
    outputs = _saved_outputs('fit(model, data, step, opt, epochs=3, desc="tiny run")', monkeypatch)
    bars = [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert len(bars) == 1, f"expected one live widget bar, got outputs {outputs}"
    text = bars[0]["data"]["text/plain"]  # what GitHub, nbviewer and a reopened notebook show
    assert "tiny run" in text and "100%" in text and "3/3" in text and "loss=" in text, text
    assert not any(re.search(r"\b0%", t) for t in _plain_texts(outputs)), outputs


def test_a_saved_progress_bar_shows_where_an_error_stopped_it(monkeypatch):
    code = ("def bad_step(model, batch):\n"
            "    return step(model, batch) * float('nan')\n"
            "fit(model, data, bad_step, opt, epochs=3, desc='diverging run')")
    outputs = _saved_outputs(code, monkeypatch)
    bars = [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert len(bars) == 1
    assert "0/3" in bars[0]["data"]["text/plain"]  # stopped in the first epoch, and says so
    assert any(o.get("ename") == "FloatingPointError" for o in outputs)
