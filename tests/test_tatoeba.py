"""utils.tatoeba (the shipped Tatoeba English-Mandarin corpus) and utils.bleu (BLEU, chrF, bootstrap).

The corpus is loaded once for the module (a few seconds); nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import lzma
import random
from collections import Counter

import pytest

from utils.bleu import BleuInterval, bootstrap_bleu, corpus_bleu, corpus_chrf, reference_streams
from utils.corpus import CorpusUnavailable
from utils.data import make_batch
from utils.subwords import BPE
from utils.tatoeba import (
    CMN_BYTES,
    CMN_PATH,
    CMN_SHA256,
    EnglishTokenizer,
    TatoebaData,
    detokenize_zh,
    group_by_english,
    load_cmn,
    normalize_en,
    normalize_zh,
    parse_cmn,
    read_cmn_text,
    split_entries,
    tokenize_zh,
    vocabulary_report,
)
from utils.train import evaluate_translation

ATTRIBUTION = "CC-BY 2.0 (France) Attribution: tatoeba.org #538123 (CM) & #891077 (Martha)"


@pytest.fixture(scope="module")
def rows() -> list[tuple[str, str, str]]:
    return parse_cmn(read_cmn_text())


@pytest.fixture(scope="module")
def data() -> TatoebaData:
    return load_cmn()


# ---------------------------------------------------------------------------------------------------
# The file: checksum, clear errors, parsing
# ---------------------------------------------------------------------------------------------------
def test_the_shipped_file_has_the_published_checksum():
    raw = lzma.decompress(CMN_PATH.read_bytes())
    assert len(raw) == CMN_BYTES and hashlib.sha256(raw).hexdigest() == CMN_SHA256
    assert read_cmn_text() == raw.decode("utf-8")


def test_a_damaged_copy_is_refused_with_what_was_expected_found_and_how_to_restore(tmp_path):
    damaged = tmp_path / "cmn.txt.xz"
    damaged.write_bytes(lzma.compress(f"\ufeffHi.\t嗨。\t{ATTRIBUTION}\n".encode()))
    with pytest.raises(CorpusUnavailable) as err:
        load_cmn(path=damaged)
    found = hashlib.sha256(lzma.decompress(damaged.read_bytes())).hexdigest()
    for part in (CMN_SHA256, found, "git checkout utils/corpora/cmn.txt.xz"):
        assert part in str(err.value)
    damaged.write_bytes(CMN_PATH.read_bytes()[:1000])  # cut short: no longer a valid xz stream
    with pytest.raises(CorpusUnavailable, match=r"not a readable xz file.*git checkout utils/corpora"):
        load_cmn(path=damaged)


def test_a_missing_file_says_how_to_restore_it(tmp_path):
    with pytest.raises(CorpusUnavailable, match=r"does not exist.*git checkout utils/corpora/cmn.txt.xz"):
        load_cmn(path=tmp_path / "nowhere.xz")


def test_parsing_drops_the_bom_keeps_attributions_and_names_a_malformed_line():
    assert parse_cmn(f"\ufeffHi.\t嗨。\t{ATTRIBUTION}\n\n") == [("Hi.", "嗨。", ATTRIBUTION)]
    with pytest.raises(ValueError, match="line 2 "):
        parse_cmn(f"Hi.\t嗨。\t{ATTRIBUTION}\nRun!\t跑！\n")
    with pytest.raises(ValueError, match="line 1 "):
        parse_cmn(f"Hi.\t嗨。\t{ATTRIBUTION}\tone field too many\n")


def test_every_line_of_the_corpus_is_read(rows):
    assert len(rows) == 29_155  # the file's 29,156th line is blank
    assert all(a.startswith("CC-BY 2.0 (France) Attribution: tatoeba.org #") for _, _, a in rows)
    assert rows[0] == ("Hi.", "嗨。", ATTRIBUTION)


# ---------------------------------------------------------------------------------------------------
# The split: sizes, no leak, complete references
# ---------------------------------------------------------------------------------------------------
def test_split_sizes(data, rows):
    sizes = (len(data.train_entries), len(data.valid_entries), len(data.test_entries))
    assert sizes == (25_161, 1_000, 1_500)
    assert len(data.valid) == 1_000 and len(data.test) == 1_500
    assert len(data.train) == sum(len(e.chinese) for e in data.train_entries) == 26_536
    lines = sum(len(e.chinese) for split in ("train", "valid", "test") for e in data.entries(split))
    assert lines == len(rows)


def test_no_english_sentence_is_in_two_splits(data):
    english = {s: {e.english for e in data.entries(s)} for s in ("train", "valid", "test")}
    assert not english["train"] & english["valid"] and not english["train"] & english["test"]
    assert not english["valid"] & english["test"]
    train_normalized = {normalize_en(s) for s in english["train"]}
    assert not {normalize_en(s) for s in english["test"]} & train_normalized  # not even up to case
    train_sources = {p.src for p in data.train}
    assert not any(p.src in train_sources for p in data.test)


def test_the_split_is_fixed_by_the_seed(rows):
    entries = group_by_english(rows)
    assert split_entries(entries, seed=0) == split_entries(entries, seed=0)
    assert split_entries(entries, seed=0)[2] != split_entries(entries, seed=1)[2]
    with pytest.raises(ValueError, match="n_valid"):
        split_entries(entries, n_valid=0)


def test_references_hold_every_translation_of_a_held_out_sentence(data, rows):
    translations: dict[str, list[str]] = {}
    for english, chinese, _ in rows:
        translations.setdefault(english, []).append(chinese)
    for split, pairs in (("valid", data.valid), ("test", data.test)):
        references = data.references(split)
        assert len(references) == len(pairs)
        for entry, refs, pair in zip(data.entries(split), references, pairs, strict=True):
            assert refs == [normalize_zh(c) for c in translations[entry.english]]
            assert pair.tgt == tokenize_zh(refs[0]) and pair.src == data.english.tokenize(entry.english)
    assert max(len(r) for r in data.references("test")) > 1


# ---------------------------------------------------------------------------------------------------
# Tokenisation and vocabularies
# ---------------------------------------------------------------------------------------------------
def test_english_round_trip_through_the_vocabulary_for_every_training_sentence(data):
    vocab, english = data.src_vocab, data.english
    for entry in data.train_entries:
        ids = vocab.encode(english.tokenize(entry.english))
        assert english.detokenize(vocab.decode(ids)) == normalize_en(entry.english), entry.english


def test_chinese_round_trip_for_every_training_sentence_of_known_characters(data):
    vocab, checked = data.tgt_vocab, 0
    for pair in data.train:
        if all(c in vocab.stoi for c in pair.tgt):
            assert detokenize_zh(vocab.decode(vocab.encode(pair.tgt))) == "".join(pair.tgt)
            checked += 1
    assert checked > 0.98 * len(data.train)
    assert normalize_zh("他是一个 DJ 。\u200b") == "他是一个DJ。"
    assert detokenize_zh(tokenize_zh("他是一个 DJ 。")) == "他是一个DJ。"
    assert detokenize_zh(["<bos>", "我", "<unk>", "<eos>"]) == "我□"


def test_english_words_keep_numbers_contractions_and_quotes_whole(data):
    sentence = 'I\'d pay 10,000 yen at 7:30 p.m. for "Waltz No.3", it\'s twenty-one boys\' C++.'
    assert data.english.detokenize(data.english.tokenize(sentence)) == normalize_en(sentence)


def test_the_fast_word_encoder_is_exactly_bpe_encode_word(data):
    words = sorted({w for e in data.test_entries for w in e.english.lower().split()})[:300]
    assert all(data.english.encode_word(w) == tuple(data.english.bpe.encode_word(w)) for w in words)
    rng = random.Random(0)
    for _ in range(200):  # random merge lists over a tiny alphabet, repeated pairs included
        symbols, merges = ["a", "b", "a</w>", "b</w>"], []
        for _ in range(rng.randint(0, 12)):
            pair = (rng.choice([s for s in symbols if not s.endswith("</w>")]), rng.choice(symbols))
            merges.append(pair)
            symbols.append(pair[0] + pair[1])
        bpe = BPE(frozenset("ab"), tuple(merges))
        fast = EnglishTokenizer(bpe)
        for _ in range(10):
            word = "".join(rng.choice("ab") for _ in range(rng.randint(1, 8)))
            assert fast.encode_word(word) == tuple(bpe.encode_word(word)), (merges, word)


def test_vocabularies_come_from_the_training_split_only(data):
    assert set(data.src_vocab.itos[4:]) == {s for p in data.train for s in p.src}
    counts = Counter(c for p in data.train for c in p.tgt)
    assert set(data.tgt_vocab.itos[4:]) == {c for c, n in counts.items() if n >= 2}
    held_out = {c for refs in data.references("test") for r in refs for c in r}
    assert held_out - set(counts), "some test character never appears in training"
    assert not (held_out - set(counts)) & set(data.tgt_vocab.itos)


def test_vocabulary_report(data, capsys):
    report = vocabulary_report(data)
    assert report["english vocabulary"] == len(data.src_vocab)
    assert report["chinese vocabulary"] == len(data.tgt_vocab)
    assert all(0 < report[f"{side} unknown rate, {split}"] < 0.01
               for side in ("english", "chinese") for split in ("valid", "test"))
    assert "chinese unknown rate, test" in capsys.readouterr().out


def test_batches_and_evaluation_take_the_data_unchanged(data):
    batch = make_batch(data.train[:4], data.src_vocab, data.tgt_vocab)
    assert batch.src.shape[0] == 4 and batch.tgt_out.shape == batch.tgt_in.shape
    known = [p for p in data.valid if all(c in data.tgt_vocab.stoi for c in p.tgt)][:20]
    scores = evaluate_translation(lambda b: b.tgt_out, known, data.src_vocab, data.tgt_vocab)
    assert scores.exact_match == 1.0  # an oracle that returns the reference


# ---------------------------------------------------------------------------------------------------
# BLEU, chrF and the bootstrap (utils.bleu)
# ---------------------------------------------------------------------------------------------------
HYPOTHESES = ["我喜欢猫。", "他明天去北京。", "今天很冷", "汤姆在哪里？"]
REFERENCES = [["我喜欢猫。", "我爱猫。"], ["他明天要去北京。", "明天他去北京。"],
              ["今天很冷。", "今天好冷。"], ["汤姆在哪儿？", "汤姆在哪里？"]]


def test_bleu_and_chrf_equal_sacrebleu_with_two_references():
    sacrebleu = pytest.importorskip("sacrebleu")
    streams = [[refs[0] for refs in REFERENCES], [refs[1] for refs in REFERENCES]]
    expected = sacrebleu.corpus_bleu(HYPOTHESES, streams, tokenize="zh").score
    assert corpus_bleu(HYPOTHESES, REFERENCES).score == expected and 0 < expected < 100
    assert corpus_chrf(HYPOTHESES, REFERENCES).score == sacrebleu.corpus_chrf(HYPOTHESES, streams).score


def test_a_variable_number_of_references_is_padded_with_none():
    sacrebleu = pytest.importorskip("sacrebleu")
    refs = [REFERENCES[0], REFERENCES[1][:1], REFERENCES[2], REFERENCES[3][:1]]
    streams = reference_streams(HYPOTHESES, refs)
    assert streams[1] == ["我爱猫。", None, "今天好冷。", None]
    expected = sacrebleu.corpus_bleu(HYPOTHESES, streams, tokenize="zh").score
    assert corpus_bleu(HYPOTHESES, refs).score == expected
    with pytest.raises(TypeError, match=r"references\[0\]"):
        corpus_bleu(HYPOTHESES[:1], ["我喜欢猫。"])
    with pytest.raises(ValueError, match="4 hypotheses and 3"):
        corpus_bleu(HYPOTHESES, REFERENCES[:3])


def _noisy(references: list[list[str]], keep: float, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(c for c in refs[0] if rng.random() < keep) or "。" for refs in references]


def test_the_bootstrap_interval_holds_the_estimate_and_repeats_for_a_seed(data):
    pytest.importorskip("sacrebleu")
    refs = data.references("test")[:300]
    hypotheses = _noisy(refs, 0.8, seed=1)
    interval = bootstrap_bleu(hypotheses, refs, n_resamples=300, seed=0)
    assert isinstance(interval, BleuInterval)
    assert interval.estimate == pytest.approx(corpus_bleu(hypotheses, refs).score)
    assert interval.low < interval.estimate < interval.high
    assert bootstrap_bleu(hypotheses, refs, n_resamples=300, seed=0) == interval
    assert bootstrap_bleu(hypotheses, refs, n_resamples=300, seed=1) != interval


def test_the_paired_bootstrap_scores_the_difference_on_the_same_resamples(data):
    pytest.importorskip("sacrebleu")
    refs = data.references("test")[:300]
    better, worse = _noisy(refs, 0.85, seed=2), _noisy(refs, 0.6, seed=3)
    diff = bootstrap_bleu(better, refs, baseline=worse, n_resamples=300, seed=0)
    expected = corpus_bleu(better, refs).score - corpus_bleu(worse, refs).score
    assert diff.estimate == pytest.approx(expected) and 0 < diff.low < diff.estimate < diff.high
    same = bootstrap_bleu(better, refs, baseline=better, n_resamples=50)
    assert same.estimate == same.low == same.high == 0.0
