"""Copying submissions to chapter 13's exercises (see ``tests/copy_attempts/__init__.py``)."""

from tests.copy_attempts import Copy

COPIES = [
    # the chapter's own scoring code: the brevity penalty measured, not predicted
    Copy("Exercise 13.1", "forbidden", '''
from utils.bleu import corpus_bleu

def predicted_costs():
    score = corpus_bleu(["他去美国"], [["他去美国学医了。"]])
    return score.bp, score.precisions[0] / 100
'''),
    # the beam search's own line, read from the package
    Copy("Exercise 13.2", "package", '''
from utils.exercises.ch13 import _penalised_like

penalised_scores = _penalised_like()
'''),
    # sacrebleu's statistics do the clipping
    Copy("Exercise 13.3", "forbidden", '''
from utils.bleu import corpus_bleu

def clipped_matches(output, references, n):
    score = corpus_bleu([output], [references])
    return score.counts[n - 1], score.totals[n - 1]
''', featured=True),
    Copy("Exercise 13.3", "package", '''
from utils.exercises import ch13

clipped_matches = ch13._clipped_like()
'''),
    # the loader's split, through the package
    Copy("Exercise 13.4", "forbidden", '''
from utils.tatoeba import Entry, split_entries

def split_by_english(pairs, n_test, seed):
    english = list(dict.fromkeys(en for en, _ in pairs))
    entries = [Entry(en, (), ()) for en in english]
    _, _, test = split_entries(entries, 1, n_test, seed)
    chosen = {e.english for e in test}
    return [p for p in pairs if p[0] not in chosen], [p for p in pairs if p[0] in chosen]
'''),
    Copy("Exercise 13.4", "package", '''
from utils.exercises.ch13 import _split_like

split_by_english = _split_like()
'''),
]
