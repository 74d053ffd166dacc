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
    # the chapter's self-attention cell, pasted: the weights, not where each row's largest lies
    Copy("Exercise 0.2", "pasted", '''
def top_match_is_self(x):
    scores = x @ x.transpose(-2, -1) / d_model**0.5
    return torch.softmax(scores, dim=-1)
'''),
    # right values, with the Python loops the exercise forbids
    Copy("Exercise 0.2", "forbidden", '''
def top_match_is_self(x):
    weights = torch.softmax(x @ x.transpose(-2, -1) / x.shape[-1] ** 0.5, dim=-1)
    return torch.tensor([[int(weights[b, i].argmax()) == i for i in range(x.shape[1])]
                         for b in range(x.shape[0])])
'''),
    Copy("Exercise 0.2", "package", '''
import utils.exercises.ch00 as checks_module

top_match_is_self = checks_module._best_match_made_like()
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
