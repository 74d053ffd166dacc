"""Tests for utils/data.py: the synthetic language pair, vocabularies, batches and padding masks."""

import random
import time

import pytest
import torch

import utils.data as data_module
from utils.data import (
    ADVERBS,
    CONJUNCTION,
    DICTIONARY,
    SOURCE_WORDS,
    VERBS,
    Batch,
    Pair,
    Vocab,
    batches,
    check_token_ids,
    load_synthetic,
    make_batch,
    make_pairs,
    pad_sequences,
    padding_mask,
    sample_pair,
)


@pytest.fixture(scope="module")
def pairs():
    return make_pairs(2000, seed=0)


@pytest.fixture(scope="module")
def small():
    return load_synthetic(n_train=500, n_valid=100, n_test=100, seed=1)


# --- the language pair -------------------------------------------------------------------------------
def test_same_seed_same_pairs_and_different_seeds_differ():
    assert make_pairs(300, seed=7) == make_pairs(300, seed=7)
    assert make_pairs(300, seed=7) != make_pairs(300, seed=8)
    assert load_synthetic(200, 20, 20, seed=3).test == load_synthetic(200, 20, 20, seed=3).test


def test_the_dictionary_is_fixed_and_one_to_one():
    assert len(set(DICTIONARY.values())) == len(DICTIONARY) == len(SOURCE_WORDS)
    assert set(DICTIONARY) == set(SOURCE_WORDS)
    assert not set(DICTIONARY.values()) & set(SOURCE_WORDS)
    assert all(w.isalpha() and w.islower() for w in DICTIONARY.values())


def test_lengths_span_a_wide_range(pairs):
    lengths = [len(p.src) for p in pairs]
    assert min(lengths) <= 6 and max(lengths) >= 22
    assert len(set(lengths)) >= 15
    one_clause = make_pairs(500, seed=0, max_clauses=1)
    assert max(len(p.src) for p in one_clause) <= 15  # det adj adj noun verb (x2), a PP of 4, an adverb
    assert CONJUNCTION not in {w for p in one_clause for w in p.src}


def test_alignment_is_a_permutation_and_translates_word_by_word(pairs):
    for p in pairs:
        assert isinstance(p, Pair) and len(p.src) == len(p.tgt) == len(p.alignment)
        assert sorted(p.alignment) == list(range(len(p.src)))
        for j, i in enumerate(p.alignment):
            assert p.tgt[j] == DICTIONARY[p.src[i]]


def test_the_word_order_differs(pairs):
    reordered = sum(p.alignment != tuple(range(len(p.src))) for p in pairs)
    assert reordered / len(pairs) > 0.9
    for p in make_pairs(200, seed=2, max_clauses=1):  # the verb closes a one-clause sentence
        verb_pos = next(i for i, w in enumerate(p.src) if w in VERBS)
        assert p.alignment[-1] == verb_pos
        assert p.src[0] not in VERBS + ADVERBS


def test_every_source_word_occurs(pairs):
    assert {w for p in pairs for w in p.src} == set(SOURCE_WORDS)


def test_generating_20k_pairs_takes_seconds_not_a_notebooks_minute():
    # About a second of CPU time on a quiet machine; CPU time still grows on a busy one (1.4 s seen
    # beside another pytest worker), so the bound leaves room: what matters is that generating the
    # data is a small part of a chapter's one-minute budget.
    start = time.process_time()
    data = load_synthetic(n_train=20_000, n_valid=1000, n_test=1000)
    assert time.process_time() - start < 4.0
    assert len(data.train) == 20_000


# --- splits ------------------------------------------------------------------------------------------
def test_splits_have_the_asked_sizes_and_never_repeat_a_training_source(small):
    assert (len(small.train), len(small.valid), len(small.test)) == (500, 100, 100)
    train_sources = {p.src for p in small.train}
    held_out = [p.src for p in small.valid + small.test]
    assert not train_sources & set(held_out)
    assert len(set(held_out)) == len(held_out)  # validation and test do not overlap either


def test_not_enough_unseen_sentences_is_an_error(monkeypatch):
    same = sample_pair(random.Random(0))
    monkeypatch.setattr(data_module, "make_pairs", lambda n, seed=0, max_clauses=2: [same] * n)
    with pytest.raises(RuntimeError, match="could not find enough unseen sentences"):
        load_synthetic(n_train=10, n_valid=5, n_test=5)


# --- vocabularies ------------------------------------------------------------------------------------
def test_special_token_ids(small):
    for vocab in (small.src_vocab, small.tgt_vocab):
        assert vocab.itos[:4] == ["<pad>", "<bos>", "<eos>", "<unk>"]
        assert (vocab.pad_id, vocab.bos_id, vocab.eos_id, vocab.unk_id) == (0, 1, 2, 3)
        assert [vocab.stoi[t] for t in Vocab.SPECIALS] == [0, 1, 2, 3]
    assert len(small.src_vocab) == len(SOURCE_WORDS) + 4 and len(small.tgt_vocab) == len(DICTIONARY) + 4
    assert "45 tokens" in repr(small.src_vocab)


def test_vocab_is_sorted_and_deduplicated():
    vocab = Vocab.from_sentences([["b", "a"], ["a", "<pad>", "c"]])
    assert vocab.itos == ["<pad>", "<bos>", "<eos>", "<unk>", "a", "b", "c"]


def test_encode_decode_round_trip(pairs, small):
    for p in pairs[:200]:
        ids = small.src_vocab.encode(p.src)
        assert small.src_vocab.decode(ids) == list(p.src)
        wrapped = small.tgt_vocab.encode(p.tgt, bos=True, eos=True)
        assert wrapped[0] == 1 and wrapped[-1] == 2
        assert small.tgt_vocab.decode(wrapped) == list(p.tgt)
        assert small.tgt_vocab.decode(torch.tensor(wrapped + [0, 0])) == list(p.tgt)
    vocab = small.src_vocab
    assert vocab.encode(["the", "zebra"]) == [vocab.stoi["the"], vocab.unk_id]
    assert vocab.decode([1, 5, 2, 6]) == [vocab.itos[5]]  # stops at <eos>
    assert vocab.decode([1, 5, 2, 0], strip=False) == ["<bos>", vocab.itos[5], "<eos>", "<pad>"]


def test_vocab_error_messages(small):
    vocab = small.src_vocab
    with pytest.raises(TypeError, match="encode expects a list of words, got a string"):
        vocab.encode("the cat")
    with pytest.raises(ValueError, match="decode expects a 1-D sequence of ids, got shape \\(2, 2\\)"):
        vocab.decode(torch.zeros(2, 2, dtype=torch.long))
    with pytest.raises(ValueError, match="id 99 is outside this vocabulary of 45 tokens"):
        vocab.decode([4, 99])
    with pytest.raises(ValueError, match="id -1 is outside"):
        vocab.decode([-1])


# --- batches and masks -------------------------------------------------------------------------------
def test_pad_sequences_and_padding_mask():
    ids = pad_sequences([[5, 6, 7], [8], [9, 10]], pad_id=0)
    assert torch.equal(ids, torch.tensor([[5, 6, 7], [8, 0, 0], [9, 10, 0]]))
    mask = padding_mask(ids)
    assert mask.dtype == torch.bool
    assert torch.equal(mask, torch.tensor([[True, True, True], [True, False, False], [True, True, False]]))
    assert torch.equal(pad_sequences([[1, 2], [3]], pad_id=-1), torch.tensor([[1, 2], [3, -1]]))


def test_check_token_ids_names_what_was_expected_and_what_was_given():
    check_token_ids(torch.tensor([[1, 2]]))  # a (batch, seq_len) LongTensor passes
    with pytest.raises(ValueError, match=r"^src must be a \(batch, seq_len\) LongTensor of token ids "
                                         r"\(dtype torch\.long\), got dtype torch\.float32 "
                                         r"\(shape \(1, 2\)\);.*convert with `src\.long\(\)`$"):
        check_token_ids(torch.tensor([[1., 2.]]), "src")
    with pytest.raises(ValueError, match=r"got dtype torch\.int32 \(shape \(2, 1\)\)"):
        check_token_ids(torch.tensor([[1], [2]], dtype=torch.int32))
    with pytest.raises(ValueError, match=r"^ids must be .*\(dtype torch\.long\), got shape \(3,\)$"):
        check_token_ids(torch.tensor([1, 2, 3]))
    with pytest.raises(ValueError, match=r"^tgt must be .*, got a list; build it with torch\.tensor"):
        check_token_ids([[1, 2]], "tgt")


def test_make_batch_shifts_the_target_and_masks_real_tokens(small):
    chunk = small.train[:7]
    batch = make_batch(chunk, small.src_vocab, small.tgt_vocab)
    assert isinstance(batch, Batch) and len(batch) == 7
    longest_src, longest_tgt = max(len(p.src) for p in chunk), max(len(p.tgt) for p in chunk)
    assert batch.src.shape == (7, longest_src)
    assert batch.tgt_in.shape == batch.tgt_out.shape == (7, longest_tgt + 1)
    assert torch.equal(batch.src_lengths, torch.tensor([len(p.src) for p in chunk]))
    assert torch.equal(batch.src_mask.sum(1), batch.src_lengths)
    assert torch.equal((batch.tgt_out != 0).sum(1), batch.src_lengths + 1)  # n words + <eos> to predict
    for k, p in enumerate(chunk):
        n = len(p.tgt)
        assert batch.tgt_in[k, 0] == small.tgt_vocab.bos_id and batch.tgt_out[k, n] == small.tgt_vocab.eos_id
        assert torch.equal(batch.tgt_in[k, 1:n + 1], batch.tgt_out[k, :n])  # shifted by one
        assert batch.tgt_mask[k, :n + 1].all()  # <bos> y_1 .. y_n are real decoder inputs
        assert small.src_vocab.decode(batch.src[k]) == list(p.src)
        assert torch.all(batch.src[k, len(p.src):] == 0) and torch.all(batch.tgt_out[k, n + 1:] == 0)
    assert torch.equal(batch.src_mask, batch.src != 0) and torch.equal(batch.tgt_mask, batch.tgt_in != 0)
    # the decoder never reads <eos>, and the mask marks exactly the positions that carry a label
    assert not (batch.tgt_in == small.tgt_vocab.eos_id).any()
    assert torch.equal(batch.tgt_mask, batch.tgt_out != 0)
    moved = batch.to("cpu")
    assert torch.equal(moved.src, batch.src) and moved.src_mask.dtype == torch.bool


def test_batches_cover_every_pair_once_and_shuffle_by_seed(small):
    def sources(bs):
        return [tuple(small.src_vocab.decode(row)) for b in bs for row in b.src]

    plain = list(batches(small.train, small.src_vocab, small.tgt_vocab, batch_size=64, shuffle=False))
    assert [len(b) for b in plain] == [64] * 7 + [500 - 7 * 64]
    assert sources(plain) == [p.src for p in small.train]
    shuffled = sources(batches(small.train, small.src_vocab, small.tgt_vocab, 64, seed=1))
    assert shuffled != sources(plain) and sorted(shuffled) == sorted(p.src for p in small.train)
    assert shuffled == sources(batches(small.train, small.src_vocab, small.tgt_vocab, 64, seed=1))
    assert shuffled != sources(batches(small.train, small.src_vocab, small.tgt_vocab, 64, seed=2))


def test_data_error_messages(small):
    with pytest.raises(ValueError, match="max_clauses must be at least 1, got 0"):
        sample_pair(random.Random(0), max_clauses=0)
    with pytest.raises(ValueError, match="n must be non-negative, got -1"):
        make_pairs(-1)
    with pytest.raises(ValueError, match="pad_sequences got no sequences"):
        pad_sequences([])
    with pytest.raises(ValueError, match="ids must be \\(batch, seq_len\\), got shape \\(3,\\)"):
        padding_mask(torch.tensor([1, 2, 0]))
    with pytest.raises(ValueError, match="batch_size must be at least 1, got 0"):
        next(batches(small.train, small.src_vocab, small.tgt_vocab, batch_size=0))
