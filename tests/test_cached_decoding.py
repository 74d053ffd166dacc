"""utils.cached_decoding: the key-value cache decodes what recomputing the whole prefix decodes."""

import pytest
import torch

from utils.cached_decoding import Cached, beam_search_cached, greedy_decode_cached
from utils.transformer import Transformer, TransformerConfig
from utils.translation import Recomputed, beam_search, greedy_decode


def _model(norm_first: bool) -> Transformer:
    torch.manual_seed(0)
    config = TransformerConfig(src_vocab_size=19, tgt_vocab_size=23, d_model=32, num_heads=4,
                               num_encoder_layers=2, num_decoder_layers=2, d_ff=64, dropout=0.1,
                               max_len=40, norm_first=norm_first)
    return Transformer(config).eval()


def _sources() -> torch.Tensor:
    src = torch.randint(3, 19, (5, 7), generator=torch.Generator().manual_seed(1))
    src[1, 4:] = 0  # padded sources: their padding must stay out of cross-attention
    src[3, 2:] = 0
    return src


@pytest.mark.parametrize("norm_first", [False, True])
def test_cached_logits_equal_recomputed_ones(norm_first: bool) -> None:
    model = _model(norm_first)
    src = _sources()
    src_mask = src != 0
    memory = model.encode(src, src_mask)
    plain, cached = Recomputed(model, memory, src_mask), Cached(model, memory, src_mask)
    ys = torch.ones(5, 1, dtype=torch.long)
    with torch.no_grad():
        for step in range(9):
            torch.testing.assert_close(cached.next_logits(ys), plain.next_logits(ys), rtol=1e-5,
                                       atol=1e-5)
            new = torch.randint(3, 23, (5, 1), generator=torch.Generator().manual_seed(step))
            ys = torch.cat([ys, new], 1)


@pytest.mark.parametrize("norm_first", [False, True])
def test_cached_decoders_write_the_same_tokens(norm_first: bool) -> None:
    model = _model(norm_first)
    src = _sources()
    assert torch.equal(greedy_decode_cached(model, src, 12), greedy_decode(model, src, 12))
    for k, alpha in ((1, 0.6), (3, 0.6), (4, 1.0)):
        assert torch.equal(beam_search_cached(model, src, k, 12, alpha),
                           beam_search(model, src, k, 12, alpha))


def test_the_cache_refuses_what_it_cannot_do() -> None:
    model = _model(False)
    src = _sources()
    memory = model.encode(src, src != 0)
    cached = Cached(model, memory, src != 0)
    with pytest.raises(ValueError, match="the cache holds 0 tokens, so ys must hold 1"):
        cached.next_logits(torch.ones(5, 2, dtype=torch.long))
    model.train()
    with pytest.raises(RuntimeError, match="call model.eval"):
        Cached(model, memory, src != 0)
