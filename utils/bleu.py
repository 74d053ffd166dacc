"""BLEU and chrF of Chinese translations with every reference, and a bootstrap interval for BLEU.

The scores are sacrebleu's (Post, 2018): BLEU (Papineni et al., 2002) with its ``zh`` tokenizer, which
puts each Chinese character in a token of its own (runs of Latin letters and digits stay whole), so
BLEU counts character n-grams up to 4; chrF (Popovic, 2015) with its defaults (character n-grams up to
6, beta 2, white space ignored). Both take all references of a sentence: an n-gram counts as matched
if any reference has it (clipped by the largest count in one reference).

Here ``references`` is given per sentence, as in ``utils.tatoeba.TatoebaData.references``:
``references[i]`` lists every reference of ``hypotheses[i]`` (one or more). sacrebleu wants the
transpose, one "stream" per reference slot, padded with ``None`` where a sentence has fewer.

    from utils.bleu import corpus_bleu, corpus_chrf, bootstrap_bleu
    corpus_bleu(hypotheses, data.references("test")).score
    bootstrap_bleu(hypotheses, data.references("test"))              # BLEU and its 95% interval
    bootstrap_bleu(hypotheses, refs, baseline=other_hypotheses)       # the difference, paired

Bootstrap (Koehn, 2004): draw the test sentences with replacement, ``n_resamples`` times (1,000 by
default, numpy's generator seeded with ``seed``, 0 by default), recompute corpus BLEU on each draw and
report the central ``confidence`` share of those scores (percentiles). BLEU is not an average of
sentence scores, but its sufficient statistics (hypothesis and reference lengths, matched and total
n-grams per order) are sums over sentences, so each draw only re-weights one table of per-sentence
statistics. With ``baseline``, both systems are scored on the same draws and the interval is that of
their difference: "paired" resampling, which cancels the luck of which sentences were drawn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


def _sacrebleu() -> Any:
    try:
        import sacrebleu
    except ImportError as err:
        raise ImportError("utils.bleu needs sacrebleu: pip install sacrebleu (or pip install "
                          "'attention-course-utils[bleu]')") from err
    return sacrebleu


def reference_streams(hypotheses: Sequence[str],
                      references: Sequence[Sequence[str]]) -> list[list[str | None]]:
    """Per-sentence reference lists -> sacrebleu's reference streams, padded with None; checks inputs."""
    if isinstance(hypotheses, str) or not all(isinstance(h, str) for h in hypotheses):
        raise TypeError("hypotheses must be a list of strings, one translation per sentence (detokenized: "
                        "use utils.tatoeba.detokenize_zh on a list of characters)")
    if len(references) != len(hypotheses) or not hypotheses:
        raise ValueError(f"need one list of references per hypothesis and at least one sentence; got "
                         f"{len(hypotheses)} hypotheses and {len(references)} reference lists")
    for i, refs in enumerate(references):
        if isinstance(refs, str) or not refs or not all(isinstance(r, str) for r in refs):
            raise TypeError(f"references[{i}] must be a non-empty list of reference strings, got {refs!r}; "
                            "a single reference is written [reference]")
    width = max(len(refs) for refs in references)
    return [[refs[k] if k < len(refs) else None for refs in references] for k in range(width)]


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str]], tokenize: str = "zh") -> Any:
    """sacrebleu's corpus BLEU (``.score`` in 0..100) against every reference of each sentence."""
    metric = _sacrebleu().BLEU(tokenize=tokenize)
    return metric.corpus_score(list(hypotheses), reference_streams(hypotheses, references))


def corpus_chrf(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> Any:
    """sacrebleu's corpus chrF (``.score`` in 0..100, defaults) against every reference."""
    metric = _sacrebleu().CHRF()
    return metric.corpus_score(list(hypotheses), reference_streams(hypotheses, references))


@dataclass(frozen=True)
class BleuInterval:
    """A BLEU score (or a difference of two) and its bootstrap interval."""

    estimate: float
    low: float
    high: float
    confidence: float
    n_resamples: int
    seed: int

    def __str__(self) -> str:
        return f"{self.estimate:.1f} ({self.confidence:.0%} interval {self.low:.1f} to {self.high:.1f})"


def bootstrap_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str]], *,
                   baseline: Sequence[str] | None = None, n_resamples: int = 1_000, seed: int = 0,
                   confidence: float = 0.95, tokenize: str = "zh") -> BleuInterval:
    """Corpus BLEU with a percentile bootstrap interval over resampled sentences (Koehn, 2004); with
    ``baseline``, BLEU(hypotheses) - BLEU(baseline) on the same resamples (paired)."""
    if n_resamples < 1 or not 0 < confidence < 1:
        raise ValueError(f"need n_resamples >= 1 and 0 < confidence < 1; got {n_resamples}, {confidence}")
    streams = reference_streams(hypotheses, references)
    systems = [list(hypotheses)]
    if baseline is not None:
        reference_streams(baseline, references)  # the same checks for the baseline
        systems.append(list(baseline))
    metric = _sacrebleu().BLEU(tokenize=tokenize)
    # Two private methods of sacrebleu (2.x; its own significance module uses them): the statistics of
    # each sentence, (N, 2 + 2 * 4): lengths, then matched and total n-grams of orders 1-4; and the
    # score of their sum.
    stats = [np.asarray(metric._extract_corpus_statistics(h, streams), dtype=np.int64) for h in systems]
    n = len(hypotheses)
    weights = np.random.default_rng(seed).multinomial(n, np.full(n, 1 / n), size=n_resamples)  # (R, N)

    def bleu_of(summed: np.ndarray) -> float:
        return float(metric._compute_score_from_stats(summed.tolist()).score)

    def scores(s: np.ndarray) -> np.ndarray:  # (R,) BLEU of each resample
        return np.array([bleu_of(row) for row in weights @ s])  # (R, N) @ (N, 10) -> (R, 10)

    estimate = bleu_of(stats[0].sum(0)) - (bleu_of(stats[1].sum(0)) if baseline is not None else 0.0)
    resampled = scores(stats[0]) - (scores(stats[1]) if baseline is not None else 0.0)
    tail = 100 * (1 - confidence) / 2
    low, high = np.percentile(resampled, [tail, 100 - tail])
    return BleuInterval(estimate, float(low), float(high), confidence, n_resamples, seed)
