"""A real parallel corpus for readers who are online: Tatoeba English-French sentence pairs.

The file is the tab-separated ``fra.txt`` inside ``fra-eng.zip`` (one pair per line, English first),
sentences from the Tatoeba project (https://tatoeba.org, CC-BY 2.0) as packaged by manythings.org and
mirrored by the d2l.ai book, whose copy and SHA-1 checksum we use. Nothing in the course needs it: every
chapter runs on the synthetic pair of ``utils.data``; this loader lets you try the same models on real
sentences.

    from utils.corpus import load_fra_eng
    data = load_fra_eng(n_train=20_000, max_len=8)     # downloads about 6 MB once, then uses the cache
    data.train[0].src, data.train[0].tgt               # ('go', '.'), ('va', '!')

It returns the same ``TranslationData`` / ``Pair`` / ``Vocab`` types as ``utils.data.load_synthetic``,
so ``make_batch``, ``batches``, ``evaluate_translation`` and ``train_rnn_translator`` work unchanged.
The true word alignment of real sentences is unknown: **``pair.alignment`` is the empty tuple ``()``**.

Where files go: ``$ATTENTION_COURSE_DATA`` if set, else ``$XDG_CACHE_HOME/attention-course`` (default
``~/.cache/attention-course``). Offline, or when the checksum does not match, the loader raises
``CorpusUnavailable`` saying where to put a copy downloaded by hand.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import shutil
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections import Counter
from pathlib import Path, PurePosixPath
from typing import Any

from utils.data import Pair, TranslationData, Vocab

CORPUS_URL = "http://d2l-data.s3-accelerate.amazonaws.com/fra-eng.zip"
CORPUS_SHA1 = "94646ad1522d915e7b0f9296181140edcf86a4f5"  # the checksum d2l.ai publishes for this file
CORPUS_FILE = "fra-eng.zip"
CACHE_ENV = "ATTENTION_COURSE_DATA"


class CorpusUnavailable(RuntimeError):
    """The corpus could not be downloaded or verified; the message says what to do instead."""


def cache_dir() -> Path:
    """The folder for downloaded data: $ATTENTION_COURSE_DATA, else $XDG_CACHE_HOME/attention-course."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "attention-course"


def sha1_of(path: Path) -> str:
    """SHA-1 hex digest of a file, read in chunks."""
    digest = hashlib.sha1()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _open_url(url: str, timeout: float) -> Any:  # a seam for tests: they replace it to simulate being offline
    return urllib.request.urlopen(url, timeout=timeout)


def download(url: str, dest: Path, sha1: str | None = None, timeout: float = 30.0) -> Path:
    """Download ``url`` to ``dest`` unless it is already there, and check its SHA-1 (None skips it)."""
    dest = Path(dest)
    by_hand = (f"Download {url} by hand (any machine with internet) and put it at {dest}, or set "
               f"{CACHE_ENV} to the folder that holds {dest.name}.")
    if dest.exists():
        if sha1 is not None and sha1_of(dest) != sha1:
            raise CorpusUnavailable(
                f"{dest} exists but its SHA-1 is {sha1_of(dest)}, not the expected {sha1}: the file is "
                f"damaged or a different version. Delete it to download it again. {by_hand} If you "
                "deliberately use another version of the file, pass sha1=None.")
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=dest.parent, delete=False, suffix=".part") as tmp:
        partial = Path(tmp.name)
        try:
            with _open_url(url, timeout) as response:
                shutil.copyfileobj(response, tmp)
        except (urllib.error.URLError, OSError, ValueError) as err:
            tmp.close()
            partial.unlink(missing_ok=True)
            reason = getattr(err, "reason", err)
            raise CorpusUnavailable(
                f"could not download {url} ({reason}); are you offline? {by_hand}") from err
    got = sha1_of(partial)
    if sha1 is not None and got != sha1:
        partial.unlink()
        raise CorpusUnavailable(
            f"the file downloaded from {url} has SHA-1 {got}, expected {sha1}; it was deleted. The download "
            f"was probably cut short or changed on the server: try again. {by_hand}")
    partial.replace(dest)
    return dest


def safe_extract(archive: Path, dest_dir: Path) -> list[Path]:
    """Extract a zip file into ``dest_dir``, refusing members with absolute paths or '..' (zip slip)."""
    dest_dir = Path(dest_dir)
    with zipfile.ZipFile(archive) as zf:
        for name in zf.namelist():
            parts = PurePosixPath(name.replace("\\", "/")).parts
            if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name) or ".." in parts:
                raise ValueError(f"refusing to extract {archive}: member {name!r} would be written outside "
                                 f"{dest_dir} (absolute path or '..')")
        zf.extractall(dest_dir)
        return [dest_dir / name for name in zf.namelist() if not name.endswith("/")]


def tokenize(sentence: str) -> tuple[str, ...]:
    """Lower-case words (apostrophes kept inside them) and punctuation marks as separate tokens."""
    text = sentence.replace("\u202f", " ").replace("\xa0", " ").lower()
    return tuple(re.findall(r"\w+(?:['’]\w+)*|[^\w\s]", text))


def read_pairs(path: Path, max_len: int | None = None) -> list[Pair]:
    """Read tab-separated 'English<TAB>French[<TAB>...]' lines into Pairs (alignment ``()``: unknown).

    Pairs with more than ``max_len`` tokens on either side are skipped; so are malformed lines.
    """
    if max_len is not None and max_len < 1:
        raise ValueError(f"max_len must be at least 1 or None, got {max_len}")
    pairs = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 2:
                continue
            src, tgt = tokenize(fields[0]), tokenize(fields[1])
            if not src or not tgt or (max_len is not None and max(len(src), len(tgt)) > max_len):
                continue
            pairs.append(Pair(src=src, tgt=tgt, alignment=()))
    return pairs


def load_fra_eng(n_train: int | None = None, n_valid: int = 1000, n_test: int = 1000, *, max_len: int = 10,
                 min_freq: int = 1, seed: int = 0, url: str = CORPUS_URL, sha1: str | None = CORPUS_SHA1,
                 cache: str | Path | None = None) -> TranslationData:
    """English -> French splits of the Tatoeba pairs (downloaded once), with vocabularies of the training set.

    Validation and test never repeat a training source sentence. ``n_train=None`` keeps every remaining
    pair. Words seen fewer than ``min_freq`` times in training become ``<unk>``. ``url`` may be a
    ``file://`` URL; ``cache`` overrides the cache folder.
    """
    if n_valid < 0 or n_test < 0 or (n_train is not None and n_train < 1) or min_freq < 1:
        raise ValueError(f"need n_train >= 1 (or None), n_valid >= 0, n_test >= 0 and min_freq >= 1; got "
                         f"n_train={n_train}, n_valid={n_valid}, n_test={n_test}, min_freq={min_freq}")
    folder = Path(cache) if cache is not None else cache_dir()
    archive = download(url, folder / CORPUS_FILE, sha1=sha1)
    unpacked = folder / "fra-eng-unpacked"
    text_file = next(unpacked.rglob("fra.txt"), None)
    if text_file is None:
        text_file = next((p for p in safe_extract(archive, unpacked) if p.name == "fra.txt"), None)
        if text_file is None:
            raise CorpusUnavailable(f"{archive} holds no fra.txt; delete it and download it again")
    pairs = read_pairs(text_file, max_len=max_len)
    random.Random(seed).shuffle(pairs)
    held_out: list[Pair] = []
    held_sources: set[tuple[str, ...]] = set()
    for p in pairs:
        if len(held_out) == n_valid + n_test:
            break
        if p.src not in held_sources:
            held_out.append(p)
            held_sources.add(p.src)
    train = [p for p in pairs if p.src not in held_sources][:n_train]
    if len(held_out) < n_valid + n_test or not train:
        raise ValueError(f"{text_file} has too few pairs of at most {max_len} tokens for {n_valid} "
                         f"validation, {n_test} test and some training pairs; raise max_len or lower "
                         "n_valid/n_test")
    counts = Counter(w for p in train for w in p.src)
    tgt_counts = Counter(w for p in train for w in p.tgt)
    src_vocab = Vocab(w for w, c in counts.items() if c >= min_freq)
    tgt_vocab = Vocab(w for w, c in tgt_counts.items() if c >= min_freq)
    return TranslationData(train, held_out[:n_valid], held_out[n_valid:], src_vocab, tgt_vocab)
