"""Copying submissions to chapter 11's exercises (see ``tests/copy_attempts/__init__.py``).

Exercises 11.1 and 11.4 are predictions: any prediction in the right form earns its points, so there
is nothing to copy.
"""

from tests.copy_attempts import Copy

COPIES = [
    # the lab's "random later inputs" cell, pasted: every input after i replaced at once, accuracy
    Copy("Exercise 11.2", "pasted", '''
from dataclasses import replace

def influence(model, batch, i, word):
    step = torch.arange(batch.tgt_in.shape[1])
    out = []
    with torch.no_grad():
        for j in range(batch.tgt_in.shape[1]):
            tgt_in = torch.where(step > j, torch.full_like(batch.tgt_in, word), batch.tgt_in)
            guess = model(replace(batch, tgt_in=tgt_in)).argmax(-1)[:, i]
            out.append((guess == batch.tgt_out[:, i]).float().mean())
    return torch.stack(out)
'''),
    Copy("Exercise 11.2", "package", '''
from utils.exercises.ch11 import _influence_made_like

influence = _influence_made_like()
'''),
    Copy("Exercise 11.2", "package", '''
from utils.exercises import ch11

def influence(model, batch, i, word):
    return ch11._influence_made_like()(model, batch, i, word)
'''),
    # the lab's model run as it is: its decode hands back logits, not the heads' weights
    Copy("Exercise 11.3", "pasted", '''
def next_word_weight(model, batch):
    with torch.no_grad():
        logits = model(batch)
    return logits.softmax(-1).mean(dim=(0, 1))[:4]
'''),
    Copy("Exercise 11.3", "package", '''
from utils.exercises.ch11 import _next_word_made_like

next_word_weight = _next_word_made_like()
'''),
    # a statistics library's ready-made test, which the exercise refuses (where scipy is installed; where
    # it is not, the import fails, and the check refuses that too)
    Copy("Exercise 11.5", "forbidden", '''
def paired_step(right_below, right_above):
    from scipy.stats import binomtest
    gained = int((right_above & ~right_below).sum())
    lost = int((right_below & ~right_above).sum())
    if gained + lost == 0:
        return gained, lost, 1.0
    return gained, lost, binomtest(gained, gained + lost, 0.5).pvalue
'''),
    # the lab's exact-match rates returned: a difference of rates, no p-value computed
    Copy("Exercise 11.5", "pasted", '''
def paired_step(right_below, right_above):
    gained = int((right_above & ~right_below).sum())
    lost = int((right_below & ~right_above).sum())
    return gained, lost, abs(right_above.float().mean() - right_below.float().mean()).item()
'''),
    Copy("Exercise 11.5", "package", '''
from utils.exercises import ch11

paired_step = ch11._paired_made_like()
'''),
    Copy("Exercise 11.5", "package", '''
from utils.exercises import ch11

def paired_step(right_below, right_above):
    gained, lost = ch11._discordant(right_below, right_above)
    n = gained + lost
    return gained, lost, 1.0 if n == 0 else min(1.0, 2 * ch11._at_most(n, min(gained, lost)))
'''),
]
