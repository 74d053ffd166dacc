"""Chapter 13's exercises (a real translator, English to Chinese): their checks, references and named
mistakes.

Shapes: B sentences, K beams (finished outputs per sentence).
"""

from __future__ import annotations

import random
import re
from collections import Counter
from functools import cache

import torch

import utils.bleu
import utils.tatoeba
from utils.checks import also_forbidden, verify_function, verify_prediction
from utils.exercises import Question, exercise
from utils.runtime import seed_everything


# ---------------------------------------------------------------------------------------------------
# 13.1 What a short output costs
# ---------------------------------------------------------------------------------------------------
@cache
def _entries() -> tuple[utils.tatoeba.Entry, ...]:
    """The shipped corpus grouped by English sentence, read once for every check that needs it."""
    return tuple(utils.tatoeba.group_by_english(utils.tatoeba.parse_cmn(utils.tatoeba.read_cmn_text())))


@cache
def _han_references() -> tuple[str, ...]:
    """The first translation of every English sentence of the corpus that is all Chinese characters
    and Chinese punctuation, with an even number of characters (sacrebleu's zh tokens, one each)."""
    entries = _entries()
    han = re.compile(r"[\u4e00-\u9fff\u3000-\u303f\uff01-\uff0f\uff1a-\uff1f]+")
    return tuple(e.chinese[0] for e in entries
                 if han.fullmatch(e.chinese[0]) and len(e.chinese[0]) % 2 == 0)


def _half_outputs(seed: int) -> tuple[float, float]:
    """Measured on 2,000 references: each output the first half of its (only) reference; returns
    BLEU's brevity penalty and its unigram precision (a share, not a percentage)."""
    references = list(random.Random(seed).sample(_han_references(), 2_000))
    outputs = [r[:len(r) // 2] for r in references]
    score = utils.bleu.corpus_bleu(outputs, [[r] for r in references])
    return float(score.bp), float(score.precisions[0]) / 100


@exercise("13.1", "What a short output costs", "Easy", 10, kind="prediction",
          hint="a prefix of the reference contains only characters the reference has, so think "
               "about what precision asks. For the penalty, the outputs are half as long as the "
               "references: put that ratio into BP = exp(1 - reference length / output length)",
          questions=[Question(
              "BLEU measures precision: how much of the output is in a reference. Why does it "
              "need a brevity penalty, and why does it not measure recall instead?",
              ("without the penalty, an output of a few sure characters would score a high "
               "precision: saying little would pay",
               "with several references, recall is ill defined: no output should contain all the "
               "translations; the penalty on total length stands in for recall"), 2)])
def _predict_half(answer, hidden=False):
    with also_forbidden([(utils.bleu, "corpus_bleu"), (utils.bleu, "bootstrap_bleu"),
                         (utils.bleu, "corpus_chrf")],
                        reason="write the prediction before the experiment runs"):
        verify_prediction(
            answer, name="Exercise 13.1", form=(float, float),
            measure=lambda: _half_outputs(113 if hidden else 13),
            labels=("BLEU's brevity penalty BP",
                    "unigram precision p_1 (share of the output's characters matched)"),
            hint=_predict_half.exercise.hint, atol=0.01,
            misconceptions={
                0: lambda said: ("the belief that the penalty is the ratio of the lengths (it is "
                                 "exp(1 - reference length / output length), which falls faster)"
                                 if abs(said - 0.5) < 0.01 else None),
                1: lambda said: ("the belief that precision counts what the output leaves out "
                                 "(that is recall: precision asks only whether each output "
                                 "character is in the reference)" if abs(said - 0.5) < 0.01
                                 else None),
            })


# ---------------------------------------------------------------------------------------------------
# 13.2 The length penalty
# ---------------------------------------------------------------------------------------------------
def _penalised_like(form="wu"):
    """The reference (Wu et al., 2016) or a model answer with one mistake."""
    def penalised_scores(log_probs, lengths, strength):
        m = lengths.to(log_probs.dtype)
        if form == "wu":
            return log_probs / ((5 + m) / 6) ** strength
        if form == "plain length":
            return log_probs / m ** strength
        if form == "multiplied":
            return log_probs * ((5 + m) / 6) ** strength
        return log_probs / ((5 + m) / 5) ** strength  # "over five"
    return penalised_scores


def _beam_inputs(hidden: bool) -> list[tuple[torch.Tensor, torch.Tensor, float]]:
    seed_everything(113 if hidden else 13)
    cases = []
    for b, k, strength in ([(2, 4, 0.6), (3, 2, 1.0), (1, 5, 0.3)] if not hidden
                           else [(4, 3, 0.6), (1, 1, 2.0), (2, 6, 0.8)]):
        lengths = torch.randint(2, 30, (b, k))
        cases.append((-torch.rand(b, k) * lengths, lengths, strength))   # about -0.5 per token
    return cases


@exercise("13.2", "The length penalty", "Easy", 10,
          hint="divide each finished output's log-probability by ((5 + m) / 6) ** strength, where m "
               "is its length in tokens; log-probabilities are negative, so dividing by a number "
               "above 1 raises the score of a long output",
          questions=[Question(
              "Why does beam search without a length penalty prefer short outputs, and why does "
              "greedy decoding not need a penalty at all?",
              ("every token adds a log-probability below zero, so a longer output's sum is lower "
               "even when each of its tokens is likely; beam search compares outputs of different "
               "lengths and so favours the short ones",
               "greedy decoding never compares whole outputs: it takes the best token at each step "
               "and stops at the first <eos>"), 2)])
def _penalty(answer, hidden=False):
    verify_function(
        answer, reference=_penalised_like(), inputs=_beam_inputs(hidden), name="Exercise 13.2",
        hint=_penalty.exercise.hint,
        mistakes={
            "the length alone to the power of the strength (no 5 and 6)":
                (_penalised_like("plain length"),
                 "Wu et al.'s penalty is ((5 + m) / 6) ** strength: the 5 keeps very short outputs "
                 "from being rescued too much, and the 6 makes the penalty 1 for a single token"),
            "the score multiplied by the penalty":
                (_penalised_like("multiplied"),
                 "log-probabilities are negative: multiplying by a number above 1 lowers a long "
                 "output's score further; divide instead"),
            "(5 + m) / 5 in place of (5 + m) / 6":
                (_penalised_like("over five"),
                 "the denominator is 6, so that an output of one token keeps its score"),
        })


# ---------------------------------------------------------------------------------------------------
# 13.3 Clipped matches with several references
# ---------------------------------------------------------------------------------------------------
def _grams(text: str, n: int) -> Counter[str]:
    return Counter(text[i:i + n] for i in range(len(text) - n + 1))


def _clipped_like(clip="largest"):
    """The reference or a model answer with one mistake: no clipping, clipping by the sum over the
    references, or by the first reference only."""
    def clipped_matches(output, references, n):
        counts = _grams(output, n)
        by_reference = [_grams(r, n) for r in references]
        matched = 0
        for gram, count in counts.items():
            if clip == "largest":
                allowed = max(c[gram] for c in by_reference)
            elif clip == "sum":
                allowed = sum(c[gram] for c in by_reference)
            elif clip == "first":
                allowed = by_reference[0][gram]
            else:  # not clipped: every occurrence counts if any reference has the n-gram
                allowed = count if any(c[gram] for c in by_reference) else 0
            matched += min(count, allowed)
        return matched, sum(counts.values())
    return clipped_matches


def _clip_inputs(hidden: bool) -> list[tuple[str, list[str], int]]:
    if hidden:
        return [("我我我爱你", ["我爱你", "我真爱你"], 1),
                ("汤姆汤姆来了", ["汤姆来了", "汤姆汤姆来了吗"], 2),
                ("好好好", ["你好", "好的"], 1), ("他很高", ["我很高兴"], 3),
                ("谢谢你谢谢", ["谢谢你", "多谢"], 2)]
    return [("的的的的", ["我的书", "他的的确确"], 1), ("他去了学校", ["他去学校了", "他到学校去了"], 2),
            ("好好学习", ["好好学习", "要好好学习"], 1), ("我不知道", ["我不知道。"], 3),
            ("你你好", ["你好", "你好吗"], 1)]


_BLEU_CODE = [(utils.bleu, "corpus_bleu"), (utils.bleu, "bootstrap_bleu"),
              (utils.bleu, "reference_streams")]


@exercise("13.3", "Clipped matches with several references", "Medium", 20,
          hint="count the output's n-grams with a Counter; for each n-gram, the most it may match is "
               "its largest count in any one reference; sum min(count, that largest count). The "
               "total is the number of n-grams in the output",
          questions=[Question(
              "Why is the clip the largest count in one reference, not the sum over all of them?",
              ("each reference is one acceptable translation; an n-gram is justified as often as "
               "one translation uses it",
               "summing would let an output repeat a word as often as all the references together "
               "use it, which no single translation would"), 2)])
def _clipped(answer, hidden=False):
    verify_function(
        answer, reference=_clipped_like(), inputs=_clip_inputs(hidden), name="Exercise 13.3",
        hint=_clipped.exercise.hint, forbidden=_BLEU_CODE,
        mistakes={
            "no clipping (every occurrence counted if a reference has the n-gram)":
                (_clipped_like("none"),
                 "an n-gram may match only as often as a reference has it: repeating a right "
                 "character must not earn more"),
            "clipped by the sum of the counts over the references":
                (_clipped_like("sum"),
                 "clip by the largest count in any one reference, not by their sum"),
            "clipped by the first reference only":
                (_clipped_like("first"),
                 "every reference counts: take the largest count over all of them"),
        })


# ---------------------------------------------------------------------------------------------------
# 13.4 A split that cannot leak
# ---------------------------------------------------------------------------------------------------
def _split_like(unit="sentence"):
    """The reference, or a split of the pairs one by one (an English sentence can land in both)."""
    def split_by_english(pairs, n_test, seed):
        if unit == "pair":
            order = list(range(len(pairs)))
            random.Random(seed).shuffle(order)
            test = set(order[:n_test])
        else:
            english = list(dict.fromkeys(en for en, _ in pairs))   # first appearance order
            random.Random(seed).shuffle(english)
            chosen = set(english[:n_test])
            test = {i for i, (en, _) in enumerate(pairs) if en in chosen}
        return ([p for i, p in enumerate(pairs) if i not in test],
                [p for i, p in enumerate(pairs) if i in test])
    return split_by_english


def _split_inputs(hidden: bool) -> list[tuple[list[tuple[str, str]], int, int]]:
    entries = list(_entries())
    several = [e for e in entries if len(e.chinese) > 1]
    cases = []
    for k, (n_entries, n_test) in enumerate([(30, 5), (12, 3), (50, 10)] if not hidden
                                            else [(25, 7), (8, 2), (40, 13)]):
        rng = random.Random((113 if hidden else 13) + k)
        chosen = rng.sample(entries, n_entries - 4) + rng.sample(several, 4)
        pairs = [(e.english, zh) for e in chosen for zh in e.chinese]
        rng.shuffle(pairs)                      # translations of one sentence apart from each other
        cases.append((pairs, n_test, k))
    return cases


@exercise("13.4", "A split that cannot leak", "Medium", 15,
          hint="collect the distinct English sentences in order of first appearance "
               "(dict.fromkeys keeps that order), shuffle that list with random.Random(seed), and put "
               "every pair whose English is among the first n_test into the test set",
          questions=[Question(
              "Tatoeba often has several translations of one English sentence. What goes wrong if "
              "the pairs are split one by one, and what would the test score then measure?",
              ("an English sentence can have one translation in training and another in test, so "
               "the model is tested on sources it was trained on",
               "the score then partly measures memory of training sentences, not translation of "
               "new ones, and overstates how the model does on unseen text"), 2)])
def _split(answer, hidden=False):
    verify_function(
        answer, reference=_split_like(), inputs=_split_inputs(hidden), name="Exercise 13.4",
        hint=_split.exercise.hint,
        forbidden=[(utils.tatoeba, "split_entries"), (utils.tatoeba, "group_by_english"),
                   (utils.tatoeba, "load_cmn")],
        mistakes={
            "the pairs split one by one (an English sentence can be in both sets)":
                (_split_like("pair"),
                 "split the English sentences, not the pairs: all translations of one sentence "
                 "go to the same side"),
        })
