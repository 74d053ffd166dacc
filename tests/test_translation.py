"""Tests for utils/translation.py: greedy and beam-search decoding, training on a translation task."""

import dataclasses
import math
from types import SimpleNamespace

import pytest
import torch
import torch.nn.functional as F

import utils.translation as translation_module
from utils.data import batches, load_synthetic, make_batch
from utils.train import History, warmup_schedule
from utils.transformer import Transformer, TransformerConfig
from utils.translation import beam_search, greedy_decode, teacher_forcing_loss, train_translation, translator

C, H, F_, L = 16, 4, 32, 2


def tiny_config(**overrides) -> TransformerConfig:
    args = dict(src_vocab_size=12, tgt_vocab_size=11, d_model=C, num_heads=H, num_encoder_layers=L,
                num_decoder_layers=L, d_ff=F_, dropout=0.0, max_len=40)
    return TransformerConfig(**(args | overrides))


PAD, BOS, EOS = 0, 1, 2
V = 6  # <pad> <bos> <eos> and three words 3, 4, 5


def _dist(**probs: float) -> torch.Tensor:
    """(V,) next-token log-probabilities: the given ones (keys t3 .. t5, eos, pad), the rest tiny."""
    ids = {"pad": PAD, "eos": EOS, "t3": 3, "t4": 4, "t5": 5}
    p = torch.full((V,), 1e-6)
    for key, value in probs.items():
        p[ids[key]] = value
    return (p / p.sum()).log()


# Greedy trap: 3 is the likelier first word, but every continuation of 3 is poor.
#   greedy: 3 3 <eos> with probability 0.6 * 0.4 = 0.24;  best: 4 5 <eos> with 0.4 * 0.9 = 0.36.
TRAP = {(): _dist(t3=0.6, t4=0.4), (3,): _dist(t3=0.4, t4=0.3, t5=0.3), (4,): _dist(t5=0.9, eos=0.1)}
# Early end: 3 <eos> (0.5 * 0.9 = 0.45) beats 4 5 5 <eos> (0.5 * 0.8^3 = 0.256) even after the length
# penalty; after <eos> the model itself would rather say 3 than <pad>, as an untrained model does.
EARLY = {(): _dist(t3=0.5, t4=0.5), (3,): _dist(eos=0.9, t5=0.1), (4,): _dist(t5=0.8, eos=0.2),
         (4, 5): _dist(t5=0.8, eos=0.2), (4, 5, 5): _dist(eos=0.8, t3=0.2)}
AFTER_EOS = _dist(t3=0.97, pad=0.01, t4=0.01, t5=0.01)


class TableModel:
    """A hand-made stand-in for a Transformer: next-token log-probabilities read from a table.

    The table is chosen per sentence by its first source id (7: TRAP, 8: EARLY, 9: always the word 3,
    never <eos>); a prefix that is not in the table ends the sentence (<eos> almost surely), and any
    prefix holding <eos> gets AFTER_EOS.
    ``calls`` records every decoder input (the live prefixes) of the last decoding.
    """

    def __init__(self, max_len: int = 12):
        self.config = SimpleNamespace(max_len=max_len, pad_id=PAD, bos_id=BOS, eos_id=EOS)
        self.calls: list[torch.Tensor] = []

    def eval(self) -> "TableModel":
        return self

    def encode(self, src: torch.Tensor, src_mask: torch.Tensor) -> torch.Tensor:
        return src[:, :, None].float()  # (B, S, 1): the "memory" only tells the sentences apart

    def decode(self, ys: torch.Tensor, memory: torch.Tensor, src_mask: torch.Tensor) -> torch.Tensor:
        self.calls.append(ys.clone())
        rows = []
        for y, m in zip(ys.tolist(), memory[:, 0, 0].tolist(), strict=True):
            prefix = tuple(y[1:])
            if int(m) == 9:  # a model that never ends a sentence
                rows.append(_dist(t3=1.0))
                continue
            table = {7: TRAP, 8: EARLY}[int(m)]
            rows.append(AFTER_EOS if EOS in prefix else table.get(prefix, _dist(eos=1.0)))
        return torch.stack(rows)[:, None, :].expand(-1, ys.shape[1], -1)  # (N, T, V), same every position


def penalised(logp: float, length: int, alpha: float = 0.6) -> float:
    """The score beam search ranks finished hypotheses by: log p / ((5 + |y|) / 6)^alpha."""
    return logp / ((5 + length) / 6) ** alpha


# ---------------------------------------------------------------------------------------------------
# Decoding with a hand-made model: exact outputs
# ---------------------------------------------------------------------------------------------------
def test_beam_search_escapes_the_greedy_trap():
    model, src = TableModel(), torch.tensor([[7, 7]])
    greedy = greedy_decode(model, src)
    assert greedy.tolist() == [[3, 3, EOS]]  # greedy commits to the likelier first word
    for k in (2, 3, 4):
        beam = beam_search(model, src, beam_size=k)
        assert beam.tolist() == [[4, 5, EOS]], f"beam_size={k}"  # p = 0.36 > 0.24
        assert not torch.equal(beam, greedy)
    assert beam_search(model, src, beam_size=1).tolist() == greedy.tolist()
    # the start: one live beam, so the first step keeps the two *different* words 3 and 4
    model.calls.clear()
    beam_search(model, src, beam_size=2)
    assert sorted(model.calls[1][:, 1].tolist()) == [3, 4]


def test_beam_search_keeps_a_finished_hypothesis_frozen():
    model, src = TableModel(), torch.tensor([[8, 8, 8]])
    assert penalised(math.log(0.5 * 0.9), 2) > penalised(math.log(0.5 * 0.8 ** 3), 4)  # 3 <eos> wins
    out = beam_search(model, src, beam_size=2)
    assert out.tolist() == [[3, EOS, PAD, PAD]]  # the words, <eos>, then only padding
    # While 4 5 5 .. is still decoding, the finished beam grows only <pad> and keeps its score:
    # had its score dropped by even log(0.97) per step, 4 5 5 <eos> would have won instead.
    live = [{tuple(row) for row in ys.tolist()} for ys in model.calls]
    assert (BOS, 3, EOS) in live[2] and (BOS, 3, EOS, PAD) in live[3]
    assert not any(EOS in row[:-1] and row[-1] != PAD for step in live for row in step)
    greedy = greedy_decode(model, src)
    assert greedy.tolist() == [[3, EOS]]


def test_beam_search_decodes_each_sentence_of_a_batch_with_its_own_beams():
    model = TableModel()
    src = torch.tensor([[8, 8], [7, 7], [8, 0]])  # different tables; padding in the last source
    out = beam_search(model, src, beam_size=3)
    assert out.tolist() == [[3, EOS, PAD, PAD], [4, 5, EOS, PAD], [3, EOS, PAD, PAD]]
    assert greedy_decode(model, src).tolist() == [[3, EOS, PAD], [3, 3, EOS], [3, EOS, PAD]]


def test_translator_decodes_greedily_or_with_beams():
    model, batch = TableModel(), SimpleNamespace(src=torch.tensor([[7, 7]]))
    assert translator(model)(batch).tolist() == [[3, 3, EOS]]  # beam_size 1: greedy
    assert translator(model, beam_size=2)(batch).tolist() == [[4, 5, EOS]]
    assert translator(model, max_new_tokens=1)(batch).tolist() == [[3]]
    assert translator(model, beam_size=2, max_new_tokens=2)(batch).tolist() == [[4, 5]]


def test_decoding_length_defaults_to_twice_the_source_plus_ten_within_max_len():
    model = TableModel(max_len=40)  # source id 9: a model that never says <eos>
    for decode in (greedy_decode, beam_search):
        assert decode(model, torch.tensor([[9, 9, 9]])).shape == (1, 2 * 3 + 10)
        assert decode(TableModel(max_len=10), torch.tensor([[9, 9, 9]])).shape == (1, 10 - 1)


def test_beam_search_stops_at_max_new_tokens_and_max_len():
    model, src = TableModel(), torch.tensor([[7, 7]])  # the greedy trap, cut short
    assert beam_search(model, src, beam_size=2, max_new_tokens=1).tolist() == [[3]]  # 0.6 > 0.4
    assert beam_search(model, src, beam_size=2, max_new_tokens=2).tolist() == [[4, 5]]  # 0.36 > 0.24
    assert beam_search(TableModel(max_len=3), src, beam_size=2).tolist() == [[4, 5]]  # max_len - 1 steps
    assert greedy_decode(model, src, max_new_tokens=2).tolist() == [[3, 3]]
    assert greedy_decode(TableModel(max_len=2), src).tolist() == [[3]]


# ---------------------------------------------------------------------------------------------------
# Decoding and training with a real (tiny) Transformer
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
    assert beam4.shape[0] == 4 and beam4.shape[1] <= 8
    for row in beam4.tolist():  # the words, then <eos> and only padding, or max_new_tokens words
        if EOS in row:
            assert all(t == PAD for t in row[row.index(EOS) + 1:])
        else:
            assert len(row) == 8
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
    assert torch.equal(out, beam_search(model, batch.src, 2, 3))
    assert torch.equal(translator(model, max_new_tokens=3)(batch), greedy_decode(model, batch.src, 3))


def test_beam_search_with_enough_beams_is_exact_search():
    """With V * V beams and two steps no hypothesis is ever dropped, so beam search must return the
    argmax of the length-penalised log-probability over all of them, computed here by brute force."""
    torch.manual_seed(0)
    model = Transformer(tiny_config()).eval()
    v = model.config.tgt_vocab_size
    src = torch.randint(3, 12, (2, 6))
    got = beam_search(model, src, beam_size=v * v, max_new_tokens=2)
    assert got.shape == (2, 2)
    for b in range(2):
        memory = model.encode(src[b:b + 1])

        def logp(prefix: list[int], memory: torch.Tensor = memory) -> torch.Tensor:
            return model.decode(torch.tensor([[BOS, *prefix]]), memory)[0, -1].log_softmax(-1)  # (V,)

        first = logp([])
        hypotheses = {(EOS, PAD): first[EOS].item()}  # ended at once: only padding follows
        for x1 in set(range(v)) - {EOS}:
            second = logp([x1])
            hypotheses |= {(x1, x2): (first[x1] + second[x2]).item() for x2 in range(v)}
        best = max(hypotheses, key=lambda y: penalised(hypotheses[y], sum(t != PAD for t in y)))
        assert tuple(got[b].tolist()) == best


def test_teacher_forcing_loss_is_cross_entropy_over_real_target_tokens():
    torch.manual_seed(0)
    data = load_synthetic(n_train=8, n_valid=2, n_test=2, max_clauses=1)
    model = Transformer(tiny_config(src_vocab_size=len(data.src_vocab), tgt_vocab_size=len(data.tgt_vocab)))
    batch = make_batch(data.train[:4], data.src_vocab, data.tgt_vocab)
    real = batch.tgt_out != PAD
    assert not real.all()  # the batch has padding, which must not count
    logits = model.eval()(batch.src, batch.tgt_in)
    for smoothing in (0.0, 0.1):
        want = F.cross_entropy(logits[real], batch.tgt_out[real], label_smoothing=smoothing)
        torch.testing.assert_close(teacher_forcing_loss(model, batch, label_smoothing=smoothing), want)
    # the batch's own masks reach the model (here unusual ones, hiding a real token on each side)
    src_mask, tgt_mask = batch.src_mask.clone(), batch.tgt_mask.clone()
    src_mask[:, 1] = tgt_mask[:, 1] = False
    logits = model(batch.src, batch.tgt_in, src_mask, tgt_mask)
    masked = dataclasses.replace(batch, src_mask=src_mask, tgt_mask=tgt_mask)
    want = F.cross_entropy(logits[real], batch.tgt_out[real])
    torch.testing.assert_close(teacher_forcing_loss(model, masked), want)


def test_train_translation_sets_up_adam_warmup_and_batches_as_described(monkeypatch):
    """What goes into utils.train.fit (stubbed here: nothing is trained): Adam as in section 5.3, the
    warm-up, the loss with label smoothing, a reshuffle every epoch, the evaluation; then the defaults."""
    seen = {}

    def fake_fit(model, batches_of, step, optimizer, **kwargs):
        seen.update(batches_of=batches_of, step=step, optimizer=optimizer, **kwargs)
        return History()

    def factors(scheduler, steps: int) -> list[float]:
        return [scheduler.lr_lambdas[0](s) for s in range(steps)]

    def expected_factors(warmup: int, steps: int) -> list[float]:
        return factors(warmup_schedule(torch.optim.SGD([torch.zeros(1, requires_grad=True)]), warmup, steps),
                       steps)

    monkeypatch.setattr(translation_module, "fit", fake_fit)
    torch.manual_seed(0)
    data = load_synthetic(n_train=40, n_valid=4, n_test=2, max_clauses=1)
    model = Transformer(tiny_config(src_vocab_size=len(data.src_vocab), tgt_vocab_size=len(data.tgt_vocab)))
    train_translation(model, data, epochs=3, batch_size=16, lr=0.01, warmup_steps=4, label_smoothing=0.2,
                      n_eval=2, seed=5, progress=False)
    optimizer = seen["optimizer"]
    assert isinstance(optimizer, torch.optim.Adam)
    group = optimizer.param_groups[0]
    assert (group["initial_lr"], group["betas"], group["eps"]) == (0.01, (0.9, 0.98), 1e-9)
    assert factors(seen["scheduler"], 9) == expected_factors(4, 9)  # 3 epochs of ceil(40 / 16) = 3 steps
    assert (seen["epochs"], seen["progress"], seen["desc"]) == (3, False, "Transformer")
    assert len(list(seen["batches_of"](0))) == 3
    batch = next(iter(seen["batches_of"](1)))  # epoch 1 is shuffled with seed 5 + 1
    assert torch.equal(batch.src, next(batches(data.train, data.src_vocab, data.tgt_vocab, 16, seed=6)).src)
    model.eval()
    torch.testing.assert_close(seen["step"](model, batch), teacher_forcing_loss(model, batch, 0.2))
    metrics = seen["on_epoch_end"](0)
    assert set(metrics) == {"valid_exact", "seconds"} and 0.0 <= metrics["valid_exact"] <= 1.0
    # the defaults: lr 1e-3, 100 warm-up steps, no label smoothing, no evaluation, seed 0, progress bar
    train_translation(model, data, epochs=3, batch_size=1)
    assert seen["optimizer"].param_groups[0]["initial_lr"] == 1e-3 and seen["progress"] is True
    assert factors(seen["scheduler"], 120) == expected_factors(100, 120)
    torch.testing.assert_close(seen["step"](model, batch), teacher_forcing_loss(model, batch))
    assert set(seen["on_epoch_end"](0)) == {"seconds"}
    first = next(iter(seen["batches_of"](0)))
    assert torch.equal(first.src, next(batches(data.train, data.src_vocab, data.tgt_vocab, 1, seed=0)).src)
    train_translation(model, dataclasses.replace(data, train=data.train * 2), epochs=1)
    assert [len(b) for b in seen["batches_of"](0)] == [64, 16]  # batch_size 64
    assert factors(seen["scheduler"], 2) == expected_factors(1, 2)  # two steps: a one-step warm-up
    train_translation(model, data, epochs=1)
    assert factors(seen["scheduler"], 1) == expected_factors(0, 1)  # one step: no room for a warm-up
    bad_settings = [{"epochs": 0}, {"batch_size": 0}, {"lr": 0.0}, {"n_eval": -1}]  # one at a time
    for bad in bad_settings:
        (name, value), = bad.items()
        with pytest.raises(ValueError, match=f"need epochs >= 1, batch_size >= 1, lr > 0 and n_eval >= 0; "
                                             f".*{name}={value}"):
            train_translation(model, data, **({"epochs": 1} | bad))


def test_train_translation_records_training_seconds_without_the_evaluation(monkeypatch):
    seen, clock = {}, SimpleNamespace(now=100.0)  # a fake clock, so the seconds are exact
    real_evaluate = translation_module.evaluate_translation

    def slow_evaluate(*args, **kwargs):
        clock.now += 2.0  # every evaluation takes 2 s
        return real_evaluate(*args, **kwargs)

    def fake_fit(model, batches_of, step, optimizer, **kwargs):
        seen.update(kwargs)
        return History()

    monkeypatch.setattr(translation_module, "time", SimpleNamespace(perf_counter=lambda: clock.now))
    monkeypatch.setattr(translation_module, "evaluate_translation", slow_evaluate)
    monkeypatch.setattr(translation_module, "fit", fake_fit)
    torch.manual_seed(0)
    data = load_synthetic(n_train=8, n_valid=2, n_test=2, max_clauses=1)
    model = Transformer(tiny_config(src_vocab_size=len(data.src_vocab), tgt_vocab_size=len(data.tgt_vocab)))
    train_translation(model, data, epochs=2, n_eval=2, progress=False)  # starts at 100 s
    clock.now = 103.0  # epoch 0 trained for 3 s
    assert seen["on_epoch_end"](0)["seconds"] == 3.0
    clock.now = 110.0  # the evaluation took 103..105, then epoch 1 trained for 5 s
    assert seen["on_epoch_end"](1)["seconds"] == 8.0


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
