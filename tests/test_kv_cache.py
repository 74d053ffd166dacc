"""The KV cache of utils.gpt returns exactly what recomputation returns."""

import pytest
import torch

from utils.gpt import GPTConfig, TinyGPT, forward_step, generate, generate_cached


def _model(norm_first: bool = True) -> TinyGPT:
    torch.manual_seed(0)
    config = GPTConfig(vocab_size=23, d_model=32, num_heads=4, num_layers=2, d_ff=64,
                       dropout=0.1, max_len=40, norm_first=norm_first)
    return TinyGPT(config).eval()


@pytest.mark.parametrize("norm_first", [True, False])
def test_cached_greedy_equals_recomputation(norm_first: bool) -> None:
    model = _model(norm_first)
    prompt = torch.tensor([[1, 5, 7], [1, 9, 4]])
    plain = generate(model, prompt, 30, temperature=0)
    cached, logits = generate_cached(model, prompt, 30, temperature=0, return_logits=True)
    assert torch.equal(plain, cached)
    full = model(cached[:, :-1])[:, prompt.shape[1] - 1:]  # (B, n, V)
    torch.testing.assert_close(logits, full, rtol=1e-5, atol=1e-5)


def test_cached_sampling_equals_recomputation() -> None:
    model = _model()
    prompt = torch.ones(4, 1, dtype=torch.long)
    plain = generate(model, prompt, 25, temperature=1.0, top_k=5, seed=3)
    assert torch.equal(plain, generate_cached(model, prompt, 25, temperature=1.0, top_k=5, seed=3))


def test_forward_step_matches_forward_in_pieces() -> None:
    model = _model()
    ids = torch.randint(3, 23, (2, 12))
    first, cache = forward_step(model, ids[:, :5])
    second, cache = forward_step(model, ids[:, 5:], cache)
    assert cache.length == 12 and cache.keys[0].shape == (2, 4, 12, 8)
    torch.testing.assert_close(torch.cat([first, second], 1), model(ids), rtol=1e-5, atol=1e-5)


def test_forward_step_errors() -> None:
    model = _model()
    _, cache = forward_step(model, torch.ones(2, 39, dtype=torch.long))
    with pytest.raises(ValueError, match="max_len"):
        forward_step(model, torch.ones(2, 2, dtype=torch.long), cache)
    with pytest.raises(ValueError, match="sequences"):
        forward_step(model, torch.ones(3, 1, dtype=torch.long), cache)
    with pytest.raises(ValueError, match="batch, new_tokens"):
        forward_step(model, torch.ones(3, dtype=torch.long))
    with pytest.raises(RuntimeError, match="eval"):
        forward_step(model.train(), torch.ones(1, 1, dtype=torch.long))
