"""Tests for utils.gpt: the tiny decoder-only model, its loss, sampling, and the grammar checker."""

import random

import pytest
import torch

from utils.data import SOURCE_WORDS, Vocab, make_pairs
from utils.gpt import (
    GPTConfig,
    TinyGPT,
    generate,
    is_grammatical,
    lm_batches,
    lm_loss,
    sample_sentences,
    top_k_filter,
)
from utils.transformer import EncoderLayer

VOCAB = Vocab(SOURCE_WORDS)


def _model(seed=0, **kwargs):
    torch.manual_seed(seed)
    settings = dict(d_model=16, num_heads=2, num_layers=2, d_ff=32, dropout=0.0, max_len=40)
    settings.update(kwargs)
    return TinyGPT(GPTConfig(len(VOCAB), **settings)).eval()


def test_shapes_and_blocks_are_encoder_layers():
    model = _model()
    ids = torch.randint(3, len(VOCAB), (3, 9))
    assert model(ids).shape == (3, 9, len(VOCAB))
    assert model.attention_weights(ids).shape == (2, 3, 2, 9, 9)  # (L, B, H, T, T)
    assert all(isinstance(layer, EncoderLayer) for layer in model.layers)


def test_changing_a_future_token_leaves_past_logits_unchanged():
    model = _model()
    ids = torch.randint(3, len(VOCAB), (2, 10))
    changed = ids.clone()
    changed[:, 6] = (ids[:, 6] + 1 - 3) % (len(VOCAB) - 3) + 3  # another real word at position 6
    before, after = model(ids), model(changed)
    assert torch.allclose(before[:, :6], after[:, :6], atol=1e-6)
    assert not torch.allclose(before[:, 6:], after[:, 6:], atol=1e-3)


def test_attention_is_causal_and_rows_sum_to_one():
    weights = _model().attention_weights(torch.randint(3, len(VOCAB), (2, 7)))
    assert torch.all(weights.triu(diagonal=1) == 0)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 2, 2, 7))


def test_padding_does_not_change_real_positions():
    model = _model()
    ids = torch.tensor([VOCAB.encode("the cat sees my dog".split(), bos=True, eos=True)])
    padded = torch.cat([ids, torch.zeros(1, 4, dtype=torch.long)], dim=1)
    assert torch.allclose(model(ids), model(padded)[:, :ids.shape[1]], atol=1e-6)


def test_config_errors():
    with pytest.raises(ValueError, match="divisible by num_heads"):
        GPTConfig(10, d_model=10, num_heads=3)
    with pytest.raises(ValueError, match="vocab_size must be a positive int"):
        GPTConfig(0)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        GPTConfig(2)  # eos_id=2 needs at least three tokens
    with pytest.raises(ValueError, match="dropout"):
        GPTConfig(10, dropout=1.0)
    with pytest.raises(TypeError, match="GPTConfig"):
        TinyGPT({"vocab_size": 10})


def test_forward_errors():
    model = _model()
    with pytest.raises(ValueError, match="LongTensor"):
        model(torch.randn(2, 5))
    with pytest.raises(ValueError, match=r"ids must be .*got dtype torch\.float32 \(shape \(1, 2\)\)"):
        model(torch.tensor([[1., 2.]]))
    with pytest.raises(ValueError, match=r"got shape \(3,\)"):
        model(torch.tensor([1, 2, 3]))
    with pytest.raises(ValueError, match="max_len=40"):
        model(torch.ones(1, 41, dtype=torch.long))
    with pytest.raises(ValueError, match="token ids must lie in"):
        model(torch.full((1, 3), len(VOCAB)))


def test_lm_batches_wrap_sentences_and_pad():
    sentences = [("the", "cat", "sees", "my", "dog"), ("my", "dog", "likes", "the", "tree", "today")]
    (batch,) = list(lm_batches(sentences, VOCAB, batch_size=4, seed=0))
    assert batch.shape == (2, 8)
    assert torch.all(batch[:, 0] == VOCAB.bos_id)
    assert set(batch[:, -1].tolist()) == {VOCAB.eos_id, VOCAB.pad_id}
    with pytest.raises(ValueError, match="batch_size"):
        next(lm_batches(sentences, VOCAB, batch_size=0))
    with pytest.raises(ValueError, match="no sentences"):
        next(lm_batches([], VOCAB))


def test_a_few_training_steps_lower_the_loss():
    torch.manual_seed(0)
    model = _model().train()
    sentences = [p.src for p in make_pairs(64, seed=1)]
    batch = next(lm_batches(sentences, VOCAB, batch_size=64))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    first = lm_loss(model, batch).item()
    for _ in range(15):
        loss = lm_loss(model, batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert lm_loss(model, batch).item() < first - 0.5


def test_lm_loss_ignores_padding():
    model = _model()
    ids = torch.tensor([VOCAB.encode("the cat sees my dog".split(), bos=True, eos=True)])
    padded = torch.cat([ids, torch.zeros(1, 3, dtype=torch.long)], dim=1)
    assert torch.allclose(lm_loss(model, ids), lm_loss(model, padded), atol=1e-6)


def test_top_k_filter():
    logits = torch.tensor([[1.0, 4.0, 3.0, 2.0], [0.0, 0.0, 5.0, -1.0]])
    got = top_k_filter(logits, 2)
    inf = float("-inf")
    assert torch.equal(got, torch.tensor([[inf, 4.0, 3.0, inf], [0.0, 0.0, 5.0, inf]]))  # ties kept
    assert torch.equal(top_k_filter(logits, 10), logits)
    with pytest.raises(ValueError, match="positive int"):
        top_k_filter(logits, 0)


def test_generation_is_deterministic_for_a_seed():
    model = _model()
    prompt = torch.full((4, 1), VOCAB.bos_id)
    a = generate(model, prompt, 12, temperature=1.0, top_k=10, seed=3)
    b = generate(model, prompt, 12, temperature=1.0, top_k=10, seed=3)
    c = generate(model, prompt, 12, temperature=1.0, top_k=10, seed=4)
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert torch.equal(a[:, :1], prompt) and a.shape[1] <= 13


def test_greedy_generation_follows_the_argmax_and_pads_after_eos():
    model = _model()
    prompt = torch.full((2, 1), VOCAB.bos_id)
    ids = generate(model, prompt, 5, temperature=0.0)
    for t in range(1, ids.shape[1]):
        want = model(ids[:, :t])[:, -1].argmax(-1)
        finished = (ids[:, 1:t] == VOCAB.eos_id).any(dim=1)
        assert torch.equal(ids[~finished, t], want[~finished])
        assert torch.all(ids[finished, t] == VOCAB.pad_id)


def test_sample_sentences_returns_word_lists():
    sentences = sample_sentences(_model(), VOCAB, 3, seed=0)
    assert len(sentences) == 3 and all(isinstance(w, str) for s in sentences for w in s)
    assert "<bos>" not in sentences[0]


def test_generate_errors():
    model = _model()
    with pytest.raises(ValueError, match="prompt must be"):
        generate(model, torch.ones(3, dtype=torch.long), 4)
    with pytest.raises(ValueError, match="max_new_tokens"):
        generate(model, torch.ones(1, 1, dtype=torch.long), 0)
    with pytest.raises(ValueError, match="temperature"):
        generate(model, torch.ones(1, 1, dtype=torch.long), 4, temperature=-1.0)
    with pytest.raises(ValueError, match="exceeds max_len"):
        generate(model, torch.ones(1, 1, dtype=torch.long), 40)
    with pytest.raises(ValueError, match="n must be"):
        sample_sentences(model, VOCAB, 0)


def test_grammar_accepts_generated_sentences_and_rejects_scrambled_ones():
    sentences = [p.src for p in make_pairs(500, seed=7)]
    assert all(is_grammatical(s) for s in sentences)
    rng = random.Random(0)
    rejected = 0
    for s in sentences[:200]:
        scrambled = list(s)
        rng.shuffle(scrambled)
        rejected += not is_grammatical(scrambled) if scrambled != list(s) else 1
    assert rejected >= 195


def test_grammar_exact_cases():
    assert is_grammatical("the big red cat sees my dog near the river today".split())
    assert is_grammatical("my cat likes the dog and the dog likes my cat".split())
    assert not is_grammatical("the big big cat sees my dog".split())  # repeated adjective
    assert not is_grammatical("the big red old cat sees my dog".split())  # three adjectives
    assert not is_grammatical("the cat sees".split())  # no object
    assert not is_grammatical("the cat sees my dog and".split())
    assert not is_grammatical("the cat sees my robot".split())  # unknown word
    three = "my cat likes the dog and the dog likes my cat and the cat sees the tree".split()
    assert not is_grammatical(three) and is_grammatical(three, max_clauses=3)
    assert not is_grammatical([])


def test_grammar_errors():
    with pytest.raises(TypeError, match="list of words"):
        is_grammatical("the cat sees my dog")
    with pytest.raises(ValueError, match="max_clauses"):
        is_grammatical(["the"], max_clauses=0)
