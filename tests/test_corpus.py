"""Tests for utils/corpus.py on a small fixture zip written by the test; the network is never used."""

import hashlib
import urllib.error
import zipfile
from pathlib import Path

import pytest

import utils.corpus as corpus
from utils.corpus import (
    CACHE_ENV,
    CORPUS_SHA1,
    CORPUS_URL,
    CorpusUnavailable,
    cache_dir,
    download,
    load_fra_eng,
    read_pairs,
    safe_extract,
    sha1_of,
    tokenize,
)
from utils.data import Pair, Vocab, make_batch

LINES = [
    "Go.\tVa !\tCC-BY 2.0 (France) Attribution: tatoeba.org",
    "Hi.\tSalut !",
    "I'm tired.\tJe suis fatigu\u00e9\u202f!",
    "Tom likes apples.\tTom aime les pommes.",
    "Where is the cat?\tO\u00f9 est le chat\u00a0?",
    "malformed line without a tab",
    "",
] + [f"I see {n} birds.\tJe vois {n} oiseaux." for n in range(40)] + [
    "This sentence is much too long to be kept by a small max_len.\tCette phrase est bien trop longue ici.",
]


def _write_zip(path: Path, members: dict[str, str]) -> str:
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in members.items():
            zf.writestr(name, text)
    return hashlib.sha1(path.read_bytes()).hexdigest()


@pytest.fixture()
def fixture_zip(tmp_path):
    """A tiny fra-eng.zip laid out like the real one (fra-eng/fra.txt) and its SHA-1."""
    path = tmp_path / "source" / "fra-eng.zip"
    path.parent.mkdir()
    return path, _write_zip(path, {"fra-eng/": "", "fra-eng/fra.txt": "\n".join(LINES) + "\n"})


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Any attempt to open a non-file URL fails loudly: these tests must never touch the network."""
    real_open = corpus._open_url

    def guarded(url, timeout):
        if not url.startswith("file:"):
            raise AssertionError(f"test tried to open {url}")
        return real_open(url, timeout)

    monkeypatch.setattr(corpus, "_open_url", guarded)


def test_the_published_url_and_checksum():
    assert CORPUS_URL.endswith("/fra-eng.zip") and len(CORPUS_SHA1) == 40
    int(CORPUS_SHA1, 16)


def test_tokenize():
    assert tokenize("Go.") == ("go", ".")
    assert tokenize("I'm tired.") == ("i'm", "tired", ".")
    assert tokenize("Je suis fatigu\u00e9\u202f!") == ("je", "suis", "fatigu\u00e9", "!")
    assert tokenize("O\u00f9 est le chat\u00a0?") == ("o\u00f9", "est", "le", "chat", "?")
    assert tokenize("J'aime l'\u00e9t\u00e9, non ?") == ("j'aime", "l'\u00e9t\u00e9", ",", "non", "?")
    assert tokenize("  ") == ()


def test_cache_dir_env_override(monkeypatch, tmp_path):
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"
    monkeypatch.delenv(CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "attention-course"


def test_download_checks_the_checksum_and_caches(fixture_zip, tmp_path):
    src, sha1 = fixture_zip
    dest = tmp_path / "cache" / "fra-eng.zip"
    assert download(src.as_uri(), dest, sha1=sha1) == dest
    assert sha1_of(dest) == sha1
    # cached: a second call does not open the URL at all (this one does not exist)
    assert download((tmp_path / "gone.zip").as_uri(), dest, sha1=sha1) == dest


def test_bad_checksum_of_a_download_is_an_error_and_leaves_nothing(fixture_zip, tmp_path):
    src, _ = fixture_zip
    dest = tmp_path / "cache" / "fra-eng.zip"
    with pytest.raises(CorpusUnavailable, match="has SHA-1 .* expected 0{40}; it was deleted") as err:
        download(src.as_uri(), dest, sha1="0" * 40)
    assert f"put it at {dest}" in str(err.value)
    assert list(dest.parent.iterdir()) == []


def test_bad_checksum_of_a_cached_file_says_what_to_do(fixture_zip, tmp_path):
    src, _ = fixture_zip
    with pytest.raises(CorpusUnavailable, match="exists but its SHA-1 is .* Delete it .* sha1=None"):
        download(src.as_uri(), src, sha1="0" * 40)
    assert download(src.as_uri(), src, sha1=None) == src  # checking can be switched off


def test_offline_error_on_a_closed_port(tmp_path, monkeypatch):
    """Port 9 (discard) on the local machine is closed: the connection is refused at once."""
    def open_directly(url, timeout):
        return corpus.urllib.request.urlopen(url, timeout=2)

    monkeypatch.setattr(corpus, "_open_url", open_directly)
    dest = tmp_path / "fra-eng.zip"
    closed = "http://127.0.0.1:9/fra-eng.zip"
    with pytest.raises(CorpusUnavailable, match=f"could not download {closed} .*offline") as e:
        download(closed, dest, sha1=CORPUS_SHA1)
    assert f"put it at {dest}" in str(e.value) and CACHE_ENV in str(e.value)
    assert not dest.exists() and list(tmp_path.iterdir()) == []


def test_offline_error_with_a_failing_opener(tmp_path, monkeypatch):
    def offline(url, timeout):
        raise urllib.error.URLError("Temporary failure in name resolution")

    monkeypatch.setattr(corpus, "_open_url", offline)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    with pytest.raises(CorpusUnavailable, match="name resolution.*Download .* by hand"):
        load_fra_eng()
    assert list(tmp_path.iterdir()) == []


def test_safe_extract_refuses_zip_slip(tmp_path):
    for bad in ("../evil.txt", "fra-eng/../../evil.txt", "/etc/evil.txt", "C:/evil.txt"):
        archive = tmp_path / "bad.zip"
        _write_zip(archive, {"fra-eng/fra.txt": "Go.\tVa !\n", bad: "gotcha"})
        with pytest.raises(ValueError, match="refusing to extract .* \\(absolute path or '\\.\\.'\\)"):
            safe_extract(archive, tmp_path / "out")
        assert not (tmp_path / "out").exists() and not (tmp_path / "evil.txt").exists()


def test_safe_extract_extracts_normal_members(fixture_zip, tmp_path):
    src, _ = fixture_zip
    paths = safe_extract(src, tmp_path / "out")
    assert paths == [tmp_path / "out" / "fra-eng" / "fra.txt"]
    assert paths[0].read_text(encoding="utf-8").startswith("Go.\tVa !")


def test_read_pairs(tmp_path):
    path = tmp_path / "fra.txt"
    path.write_text("\n".join(LINES), encoding="utf-8")
    pairs = read_pairs(path, max_len=6)
    assert pairs[0] == Pair(src=("go", "."), tgt=("va", "!"), alignment=())
    assert len(pairs) == 5 + 40  # the malformed, empty and long lines are skipped
    assert len(read_pairs(path)) == 46
    with pytest.raises(ValueError, match="max_len must be at least 1 or None, got 0"):
        read_pairs(path, max_len=0)


def test_load_fra_eng_on_the_fixture(fixture_zip, tmp_path, monkeypatch):
    src, sha1 = fixture_zip
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    data = load_fra_eng(n_valid=5, n_test=5, max_len=8, url=src.as_uri(), sha1=sha1)
    assert (len(data.valid), len(data.test), len(data.train)) == (5, 5, 45 - 10)
    assert (tmp_path / "cache" / "fra-eng.zip").exists()
    assert all(p.alignment == () for p in data.train + data.valid + data.test)
    train_sources = {p.src for p in data.train}
    assert not train_sources & {p.src for p in data.valid + data.test}
    assert isinstance(data.src_vocab, Vocab) and data.src_vocab.itos[:4] == list(Vocab.SPECIALS)
    assert "oiseaux" in data.tgt_vocab.stoi and "birds" in data.src_vocab.stoi
    batch = make_batch(data.test, data.src_vocab, data.tgt_vocab)
    assert batch.src.shape[0] == 5 and batch.src_mask.dtype == batch.src_mask.dtype
    # the same seed gives the same splits, from the cache (the URL is not opened again)
    again = load_fra_eng(n_valid=5, n_test=5, max_len=8, url="http://127.0.0.1:9/x.zip", sha1=sha1)
    assert again.test == data.test and again.train == data.train
    other = load_fra_eng(n_valid=5, n_test=5, max_len=8, url=src.as_uri(), sha1=sha1, seed=1)
    assert other.test != data.test
    small = load_fra_eng(n_train=3, n_valid=2, n_test=2, max_len=8, min_freq=2, url=src.as_uri(), sha1=sha1,
                         cache=tmp_path / "cache")
    assert len(small.train) == 3 and len(small.src_vocab) < len(data.src_vocab)


def test_load_fra_eng_error_messages(fixture_zip, tmp_path):
    src, sha1 = fixture_zip
    kwargs = {"url": src.as_uri(), "sha1": sha1, "cache": tmp_path / "c"}
    with pytest.raises(ValueError, match="need n_train >= 1 \\(or None\\)"):
        load_fra_eng(n_train=0, **kwargs)
    with pytest.raises(ValueError, match="min_freq=0"):
        load_fra_eng(min_freq=0, **kwargs)
    with pytest.raises(ValueError, match="too few pairs of at most 8 tokens .* lower n_valid/n_test"):
        load_fra_eng(n_valid=100, n_test=100, max_len=8, **kwargs)
    empty = tmp_path / "empty.zip"
    empty_sha1 = _write_zip(empty, {"readme.txt": "nothing here"})
    with pytest.raises(CorpusUnavailable, match="holds no fra.txt"):
        load_fra_eng(url=empty.as_uri(), sha1=empty_sha1, cache=tmp_path / "e")
