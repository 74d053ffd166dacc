"""utils.views: the interactive attention views embed the model's own weights and nothing external."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch

from utils.data import load_synthetic
from utils.gpt import GPTConfig, TinyGPT
from utils.transformer import Transformer, TransformerConfig
from utils.views import MAX_BYTES, attention_maps, attention_view, causal_lm_view, transformer_view


@pytest.fixture(scope="module")
def data():
    return load_synthetic(n_train=60, n_valid=10, n_test=10)


@pytest.fixture(scope="module")
def model(data):
    torch.manual_seed(0)
    config = TransformerConfig(len(data.src_vocab), len(data.tgt_vocab), d_model=32, num_heads=4,
                               num_encoder_layers=2, num_decoder_layers=2, d_ff=64, max_len=64)
    return Transformer(config).eval()


def embedded(view) -> dict:
    match = re.search(r'<script type="application/json" class="course-attn-data">(.*?)</script>', view.html,
                      re.S)
    return json.loads(match.group(1))


def test_transformer_view_embeds_the_models_weights(model, data):
    pairs = data.test[:3]
    view = transformer_view(model, pairs, data.src_vocab, data.tgt_vocab, max_new_tokens=10)
    payload = embedded(view)
    assert len(payload["examples"]) == 3
    for n, pair in enumerate(pairs):
        example = payload["examples"][n]
        assert [m["kind"] for m in example["maps"]] == ["encoder", "decoder_self", "cross"]
        encoder, decoder_self, cross = example["maps"]
        assert encoder["queries"] == encoder["keys"] == list(pair.src)
        assert decoder_self["causal"] and not cross["causal"]
        reads = decoder_self["queries"]
        assert reads[0] == "<bos>"
        src = torch.tensor([data.src_vocab.encode(pair.src)])
        tgt_in = torch.tensor([data.tgt_vocab.encode(reads[1:], bos=True)])
        want = model.attention_weights(src, tgt_in)
        for kind, maps in (("encoder", encoder), ("decoder_self", decoder_self), ("cross", cross)):
            shown = np.array(maps["weights"]) / 1000
            assert shown.shape == tuple(want[kind][:, 0].shape)
            assert np.abs(shown - want[kind][:, 0].numpy()).max() <= 5e-4 + 1e-7, kind
            assert np.allclose(view.shown_weights(n, kind), shown)
        # a cross-attention row is labelled with the word its position writes
        logits = model(src, tgt_in)[0]
        assert cross["queries"] == [data.tgt_vocab.itos[i] for i in logits.argmax(-1).tolist()]
        assert view.examples[n].correct == (reads[1:] == list(pair.tgt))


def test_a_view_is_self_contained(model, data):
    view = transformer_view(model, data.test[:2], data.src_vocab, data.tgt_vocab, max_new_tokens=8)
    page = view.html.replace('"http://www.w3.org/2000/svg"', "SVG_NAMESPACE")  # a name, not a request
    assert len(page.encode()) <= MAX_BYTES
    assert not re.search(r"""(src|href)\s*=|https?://|@import|url\((?!#)|fetch\(|XMLHttpRequest""", page), \
        "a view may make no request of any kind"
    assert page.count("<script>") == 1 and "course-attn-data" in page
    assert "</script" not in embedded_text(page), "the JSON may not close its script element"
    assert "AttentionView: 2 example(s)" in repr(view)
    assert 'class="course-attn-fallback"' in page  # what an untrusted notebook or a printout shows


def embedded_text(page: str) -> str:
    start = page.index('class="course-attn-data">') + len('class="course-attn-data">')
    return page[start:page.index("</script>", start)]


def test_tokens_cannot_break_out_of_the_page():
    weights = torch.eye(2)
    view = attention_view(weights, ["</script><b>", "&amp;"])
    assert "</script><b>" not in view.html and "\\u003c/script\\u003e" in view.html


def test_causal_lm_view_is_causal():
    torch.manual_seed(0)
    vocab_words = ["a", "b", "c"]
    from utils.data import Vocab

    vocab = Vocab(vocab_words)
    gpt = TinyGPT(GPTConfig(len(vocab), d_model=16, num_heads=2, num_layers=2, d_ff=32, max_len=16)).eval()
    view = causal_lm_view(gpt, [["a", "b", "c"], ["c", "a"]], vocab)
    payload = embedded(view)
    maps = payload["examples"][0]["maps"][0]
    assert maps["kind"] == "causal" and maps["causal"] and maps["queries"] == ["<bos>", "a", "b", "c"]
    weights = np.array(maps["weights"])  # (L, H, T, T)
    assert weights.shape == (2, 2, 4, 4) and (np.triu(weights, 1) == 0).all()


@pytest.mark.parametrize(("weights", "queries", "keys", "kind", "message"), [
    (torch.ones(3, 2) / 2, ["a", "b"], ["x", "y"], "self", r"2 query tokens and 2 key tokens"),
    (torch.ones(2, 2), ["a", "b"], None, "self", r"sums to 1"),
    (torch.full((2, 2), -0.5), ["a", "b"], None, "self", r"lie in \[0, 1\]"),
    (torch.ones(2, 2) / 2, ["a", "b"], None, "causal", r"above the diagonal"),
    (torch.ones(2, 2) / 2, ["a", "b"], None, "sideways", r"kind must be one of"),
    (torch.ones(1, 1, 1, 2, 2) / 2, ["a", "b"], None, "self", r"expected weights of shape"),
])
def test_wrong_weights_are_refused_with_a_clear_message(weights, queries, keys, kind, message):
    with pytest.raises(ValueError, match=message):
        attention_maps(weights, queries, keys, kind)


def test_the_budget_is_checked():
    t = 200
    weights = torch.softmax(torch.randn(4, 8, t, t), dim=-1)  # 1.3 M weights
    with pytest.raises(ValueError, match=r"over its budget of 300 KB"):
        attention_view(weights, [f"w{i}" for i in range(t)])


@pytest.mark.parametrize("language", ["en", "zh_CN", "zh_TW"])
def test_the_view_speaks_the_notebooks_language(language, monkeypatch):
    monkeypatch.setenv("COURSE_LANGUAGE", language)
    view = attention_view(torch.eye(2), ["a", "b"])
    assert f'data-lang="{language}"' in view.html
    assert language in view.html.split("<script>")[1]  # the script carries the three languages' labels


def test_softmax_scale_explorable_draws_the_softmax_of_the_scores():
    from utils.views import softmax_scale_explorable

    explorable = softmax_scale_explorable(d_ks=(1, 16, 1024), n_keys=6, seed=3)
    generator = torch.Generator().manual_seed(3)
    q, k = torch.randn(1, 1024, generator=generator), torch.randn(6, 1024, generator=generator)
    for d in (1, 16, 1024):
        raw = (k[:, :d] @ q[0, :d])
        assert np.allclose(explorable.frame("unscaled", d), torch.softmax(raw, -1).numpy(), atol=6e-4)
        scaled = torch.softmax(raw / d ** 0.5, -1).numpy()
        assert np.allclose(explorable.frame("scaled", d), scaled, atol=6e-4)
    assert 'class="course-attn course-explore"' in explorable.html
    assert "softmax_scale" in repr(explorable) or "Explorable softmax_scale" in repr(explorable)


def test_pe_offset_explorable_depends_on_the_offset_only():
    from utils.positional import sinusoidal_encoding
    from utils.views import pe_offset_explorable

    explorable = pe_offset_explorable(d_model=32, positions=(0, 7, 60), max_offset=20)
    table = sinusoidal_encoding(100, 32)
    start = explorable.frame("dot", 0)
    assert start[:20] == [None] * 20  # no position behind 0
    assert abs(start[20] - (table[0] @ table[0]).item()) < 0.01  # k = 0: d_model / 2
    for p in (7, 60):
        curve = explorable.frame("dot", p)
        for index, k in enumerate(range(-20, 21)):
            if p + k >= 0:
                assert abs(curve[index] - (table[p] @ table[p + k]).item()) < 0.01
        assert np.allclose(curve[20:], start[20:], atol=0.02)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: __import__("utils.views").views.softmax_scale_explorable(d_ks=(0, 4)), "positive sizes"),
    (lambda: __import__("utils.views").views.pe_offset_explorable(positions=(-1,)), r"must be >= 0"),
])
def test_explorables_refuse_bad_sizes(call, message):
    with pytest.raises(ValueError, match=message):
        call()
