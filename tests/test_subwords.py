"""utils.subwords: byte-pair encoding learned on the course's sentences (chapter 9)."""

from __future__ import annotations

import pytest

from utils.data import make_pairs
from utils.subwords import END, UNK, learn_bpe

# The example of Sennrich et al. (2016): word counts low 5, lower 2, newest 6, widest 3.
TOY = [["low"]] * 5 + [["lower"]] * 2 + [["newest"]] * 6 + [["widest"]] * 3


def test_the_first_merges_follow_the_pair_counts_by_hand():
    # pairs: (e, s) and (s, t</w>) 9 each, tie broken by string order; then (es, t</w>) 9; (l, o) 7
    bpe = learn_bpe(TOY, num_merges=3)
    assert bpe.merges == (("e", "s"), ("es", "t" + END), ("l", "o"))
    assert bpe.encode(["newest"]) == ["n", "e", "w", "est" + END]
    assert bpe.encode(["low"]) == ["lo", "w" + END]


def test_the_same_text_gives_the_same_merges():
    sentences = [list(p.src) for p in make_pairs(300, seed=4)]
    assert learn_bpe(sentences, 50) == learn_bpe(sentences, 50)


@pytest.mark.parametrize("num_merges", [0, 10, 40, 200])
def test_decode_undoes_encode(num_merges):
    train = [list(p.src) for p in make_pairs(500, seed=1)]
    bpe = learn_bpe(train, num_merges)
    for pair in make_pairs(50, seed=2):
        assert bpe.decode(bpe.encode(list(pair.src))) == list(pair.src)


def test_more_merges_never_lengthen_a_sentence_and_enough_give_one_symbol_per_word():
    train = [list(p.src) for p in make_pairs(500, seed=1)]
    held_out = [list(p.src) for p in make_pairs(100, seed=2)]
    lengths = [sum(len(learn_bpe(train, k).encode(s)) for s in held_out) for k in (0, 20, 80, 400)]
    assert lengths == sorted(lengths, reverse=True) and lengths[0] > lengths[-1]
    whole = learn_bpe(train, 10_000)                        # stops when nothing is left to merge
    assert all(len(whole.encode_word(w)) == 1 for s in train for w in s)
    assert len(whole.merges) < 10_000


def test_a_new_word_is_written_with_known_pieces_and_an_unknown_character_as_unk():
    bpe = learn_bpe(TOY, num_merges=10)
    pieces = bpe.encode_word("lowest")                      # never seen, all characters known
    assert UNK not in "".join(pieces) and "".join(pieces) == "lowest" + END
    assert bpe.encode_word("lowz") == ["lo", "w", UNK + END]
    assert bpe.decode(bpe.encode_word("zz")) == [UNK + UNK]
    assert set(bpe.encode(["lowest", "newer"])) <= set(bpe.symbols)


def test_clear_errors():
    with pytest.raises(TypeError, match="list of words"):
        learn_bpe(["the cat sat"], 5)
    with pytest.raises(ValueError, match="non-negative int"):
        learn_bpe(TOY, -1)
    with pytest.raises(ValueError, match="no words"):
        learn_bpe([], 3)
    with pytest.raises(ValueError, match="without spaces"):
        learn_bpe([["the cat"]], 3)
    bpe = learn_bpe(TOY, 3)
    with pytest.raises(ValueError, match="end a word"):
        bpe.decode(["lo", "w"])
    with pytest.raises(TypeError, match="list of words"):
        bpe.encode("low")
