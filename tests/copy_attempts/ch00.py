"""Copying submissions to chapter 0's exercises (see ``tests/copy_attempts/__init__.py``)."""

from tests.copy_attempts import Copy

COPIES = [
    # the chapter's own softmax call, which the exercise forbids in words
    Copy("Exercise 0.1", "pasted", '''
def row_softmax(scores):
    return torch.softmax(scores, dim=-1)      # as in the chapter's cell
'''),
    Copy("Exercise 0.1", "forbidden", '''
from torch.nn.functional import softmax

def row_softmax(scores):
    return softmax(scores, dim=-1)
'''),
    Copy("Exercise 0.1", "forbidden", '''
def row_softmax(scores):
    return torch.log_softmax(scores, dim=-1).exp()   # PyTorch's softmax in log space
'''),
    Copy("Exercise 0.1", "forbidden", '''
def row_softmax(scores):
    return torch.nn.Softmax(dim=-1)(scores)
'''),
    Copy("Exercise 0.1", "package", '''
from utils.exercises.ch00 import _softmax_last as row_softmax
'''),
    Copy("Exercise 0.1", "package", '''
from utils.exercises import ch00

def row_softmax(scores):
    return ch00._softmax_shifted_by(lambda s: s.max(dim=-1, keepdim=True).values)(scores)
'''),
    # the chapter's self-attention cell, with its d_model
    Copy("Exercise 0.2", "pasted", '''
def cross_weights(x, y):
    scores = x @ x.transpose(-2, -1) / d_model**0.5
    return torch.softmax(scores, dim=-1)
'''),
    # right values, with the Python loops the exercise forbids
    Copy("Exercise 0.2", "forbidden", '''
def cross_weights(x, y):
    rows = []
    for b in range(x.shape[0]):
        rows.append(torch.stack([torch.softmax(y[b] @ x[b, i] / x.shape[-1] ** 0.5, dim=0)
                                 for i in range(x.shape[1])]))
    return torch.stack(rows)
'''),
    Copy("Exercise 0.2", "forbidden", '''
def cross_weights(x, y):
    one = lambda pair: torch.softmax(pair[0] @ pair[1].T / x.shape[-1] ** 0.5, dim=-1)
    return torch.stack(list(map(one, zip(x, y))))
'''),
    Copy("Exercise 0.2", "package", '''
import utils.exercises.ch00 as checks_module

cross_weights = checks_module._cross_made_like()
'''),
    # right counts, with the Python loops the exercise forbids
    # the value the old check cell computed before calling the learner's function
    Copy("Exercise 0.3", "returned", '''
def my_predictions():
    return measured
'''),
    Copy("Exercise 0.4", "forbidden", '''
def count_crossings(alignment):
    T = len(alignment)
    return sum(alignment[i] > alignment[k] for i in range(T) for k in range(i + 1, T))
'''),
    Copy("Exercise 0.4", "forbidden", '''
def count_crossings(alignment):
    count, i = 0, 0
    while i < len(alignment):
        count += int((torch.tensor(alignment[i + 1:]) < alignment[i]).sum())
        i += 1
    return count
'''),
    Copy("Exercise 0.4", "forbidden", '''
def count_crossings(alignment):
    if len(alignment) < 2:
        return 0
    first = torch.tensor(alignment[1:]) < alignment[0]
    return int(first.sum()) + count_crossings(alignment[1:])
'''),
    Copy("Exercise 0.4", "package", '''
from utils.exercises import ch00

def count_crossings(alignment):
    return ch00._crossings_made_like()(alignment)
'''),
]
