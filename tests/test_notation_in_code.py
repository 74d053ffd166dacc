"""Code comments and docstrings use the preface's notation table for indices.

The table (book/preface.md) gives the query side the index i and the key side the index j: s_i, y_i,
u_i, c_i, q_i for the decoder state, the target word, the previous word's embedding, the context and
the query; h_j, k_j, v_j for the encoder state, the key and the value; alpha_ij and e_ij with the query
first. Readers found comments that swapped them ("alpha_{j,:} sums to 1", "[y_{j-1}; C]", "# u_j");
this test reads every comment and docstring of the package, the teachers' tooling and the notebooks'
code cells, and fails on such a swap.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]
QUERY_SIDE, KEY_SIDE = "syucq", "hkv"
SWAPS = [
    (re.compile(r"(?<![A-Za-z0-9_\\])[" + QUERY_SIDE + r"]_\{?j(?![a-z])"),
     "a query-side symbol (s, y, u, c, q) indexed by j; the table indexes it by i"),
    (re.compile(r"(?<![A-Za-z0-9_\\])[" + KEY_SIDE + r"]_\{?i(?![a-z])"),
     "a key-side symbol (h, k, v) indexed by i; the table indexes it by j"),
    (re.compile(r"\b(?:alpha|e)_\{?j,? ?[i:]"),
     "weights or scores indexed (j, i); the table puts the query first, alpha_ij"),
]


def _comments(source: str) -> list[tuple[int, str]]:
    """(line, text) of every comment and docstring-like string of Python ``source``."""
    found = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT or (
                    token.type == tokenize.STRING
                    and token.string.lstrip("rbuRBUfF").startswith(('"""', "'''"))):
                found.append((token.start[0], token.string))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return found


def _swaps(where: str, source: str) -> list[str]:
    return [f"{where}, line {line}: {why}: {text.strip()[:100]!r}"
            for line, text in _comments(source) for pattern, why in SWAPS if pattern.search(text)]


def _sources() -> list[tuple[str, str]]:
    files = [(str(p.relative_to(REPO)), p.read_text(encoding="utf-8"))
             for folder in ("utils", "classroom", "scripts") for p in sorted((REPO / folder).rglob("*.py"))]
    for path in sorted((REPO / "chapters").glob("[0-9][0-9]_*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for k, cell in enumerate(nb.cells):
            if cell.cell_type == "code":
                code = "\n".join(line for line in cell.source.splitlines()
                                 if not line.lstrip().startswith(("%", "!")))
                files.append((f"{path.name}, cell {k}", code))
    return files


def test_the_swap_patterns_catch_the_slips_readers_found():
    for slip in ("# alpha_{j,:} sums to 1", "# [y_{j-1}; C]", "# u_j", "# this step's k_i",
                 '"""h_i is the encoder state"""'):
        assert _swaps("example", slip), slip
    for fine in ("# alpha_{ij}", "# [y_{i-1}; c_i]", "# u_i attends to h_j", "# k_j, v_j",
                 "# heads h_in", "# s_init", "# the q_i row"):
        assert not _swaps("example", fine), fine


def test_comments_index_the_query_by_i_and_the_key_by_j():
    found = [swap for where, source in _sources() for swap in _swaps(where, source)]
    assert not found, "\n".join(found)
