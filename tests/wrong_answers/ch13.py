"""Wrong answers to chapter 13's exercises (see ``tests/wrong_answers/__init__.py``)."""

from tests.wrong_answers import Wrong

WRONG = [
    Wrong("Exercise 13.1", "the belief that the penalty is the ratio of the lengths", '''
def predicted_costs():
    return 0.5, 1.0                  # half as long, so half the score
'''),
    Wrong("Exercise 13.1", "the belief that precision counts what the output leaves out", '''
def predicted_costs():
    return 0.37, 0.5                 # half of each reference is missing
'''),
    Wrong("Exercise 13.2", "the length alone to the power of the strength", '''
def penalised_scores(log_probs, lengths, strength):
    return log_probs / lengths.float() ** strength
'''),
    Wrong("Exercise 13.2", "the score multiplied by the penalty", '''
def penalised_scores(log_probs, lengths, strength):
    return log_probs * ((5 + lengths) / 6) ** strength
'''),
    Wrong("Exercise 13.2", "(5 + m) / 5 in place of (5 + m) / 6", '''
def penalised_scores(log_probs, lengths, strength):
    return log_probs / ((5 + lengths) / 5) ** strength
'''),
    Wrong("Exercise 13.3", "no clipping", '''
def clipped_matches(output, references, n):
    grams = [output[i:i + n] for i in range(len(output) - n + 1)]
    matched = sum(any(g in r for r in references) for g in grams)
    return matched, len(grams)
'''),
    Wrong("Exercise 13.3", "clipped by the sum of the counts over the references", '''
from collections import Counter

def clipped_matches(output, references, n):
    def grams(text):
        return Counter(text[i:i + n] for i in range(len(text) - n + 1))
    counts, allowed = grams(output), Counter()
    for r in references:
        allowed += grams(r)                          # + adds the counts up
    return sum(min(c, allowed[g]) for g, c in counts.items()), sum(counts.values())
'''),
    Wrong("Exercise 13.3", "clipped by the first reference only", '''
from collections import Counter

def clipped_matches(output, references, n):
    def grams(text):
        return Counter(text[i:i + n] for i in range(len(text) - n + 1))
    counts, allowed = grams(output), grams(references[0])
    return sum(min(c, allowed[g]) for g, c in counts.items()), sum(counts.values())
'''),
    Wrong("Exercise 13.4", "the pairs split one by one", '''
import random

def split_by_english(pairs, n_test, seed):
    order = list(range(len(pairs)))
    random.Random(seed).shuffle(order)
    test = set(order[:n_test])
    return ([p for i, p in enumerate(pairs) if i not in test],
            [p for i, p in enumerate(pairs) if i in test])
'''),
]
