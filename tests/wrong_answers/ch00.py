"""Wrong answers to chapter 0's exercises (see ``tests/wrong_answers/__init__.py``)."""

from tests.wrong_answers import Wrong
from utils.checks import MISTAKES

WRONG = [
    Wrong("Exercise 0.1", "exponentials of the raw scores: exp(1000) overflows to inf, and "
          "inf / inf is NaN", '''
def row_softmax(scores):
    exps = scores.exp()                        # no shift: large scores overflow
    return exps / exps.sum(dim=-1, keepdim=True)
'''),
    Wrong("Exercise 0.1", MISTAKES["softmax_axis"], '''
def row_softmax(scores):
    shifted = scores - scores.max(dim=0, keepdim=True).values
    exps = shifted.exp()
    return exps / exps.sum(dim=0, keepdim=True)   # normalises down the first axis
'''),
    Wrong("Exercise 0.1", "one normalisation for the whole tensor (each row must sum to 1 on "
          "its own)", '''
def row_softmax(scores):
    exps = (scores - scores.max()).exp()
    return exps / exps.sum()                   # one sum over every entry
'''),
    Wrong("Exercise 0.1", "the largest score of the whole tensor subtracted, not each row's (a "
          "row far below it underflows to 0 / 0)", '''
def row_softmax(scores):
    exps = (scores - scores.max()).exp()       # one shift for every row
    return exps / exps.sum(dim=-1, keepdim=True)
'''),
    Wrong("Exercise 0.2", "the largest weight of each column (dim=-2), not of each row", '''
def top_match_is_self(x):
    weights = torch.softmax(x @ x.transpose(-2, -1) / x.shape[-1] ** 0.5, dim=-1)
    return weights.argmax(dim=1) == torch.arange(x.shape[1])
'''),
    Wrong("Exercise 0.2", "True where the weight on itself is above 1/2 (the largest weight need "
          "not be a majority)", '''
def top_match_is_self(x):
    weights = torch.softmax(x @ x.transpose(-2, -1) / x.shape[-1] ** 0.5, dim=-1)
    return torch.diagonal(weights, dim1=-2, dim2=-1) > 0.5
'''),
    Wrong("Exercise 0.3", "the belief that dim=0 normalises along the row in expression 2 "
          "(dim=0 runs down the columns, and each column of a one-row matrix holds a single "
          "score)", '''
def my_predictions():
    return [0.25, 0.25, 0.25, 0.25], [[0.0, 1.0, 0.0]], [0.5, 1.5]
'''),
    Wrong("Exercise 0.3", "the belief that the columns sum to 1 in expression 3 (dim=-1 makes "
          "every row sum to 1, the columns need not)", '''
def my_predictions():
    return [0.25, 0.25, 0.25, 0.25], [[1.0, 1.0, 1.0]], [1.0, 1.0]
'''),
    Wrong("Exercise 0.3", "the belief that the value of equal scores matters (only the "
          "differences between scores do: four equal scores share the weight equally, 0.25 "
          "each)", '''
def my_predictions():
    return [1.0, 0.0, 0.0, 0.0], [[1.0, 1.0, 1.0]], [0.5, 1.5]
'''),
    Wrong("Exercise 0.4", "every pair of target positions compared in both orders (count "
          "only i < i')", '''
def count_crossings(alignment):
    a = torch.tensor(alignment)
    return int((a[:, None] > a[None, :]).sum())
'''),
    Wrong("Exercise 0.4", "only neighbouring target words (i, i + 1) compared", '''
def count_crossings(alignment):
    a = torch.tensor(alignment)
    return int((a[:-1] > a[1:]).sum())
'''),
    Wrong("Exercise 0.4", "the words that left their position counted (alignment[i] != i), "
          "not the pairs that swapped", '''
def count_crossings(alignment):
    a = torch.tensor(alignment)
    return int((a != torch.arange(len(a))).sum())
'''),
    Wrong("Exercise 0.4", "the pairs that keep their order counted (alignment[i] < "
          "alignment[i'])", '''
def count_crossings(alignment):
    a = torch.tensor(alignment)
    return int((a[:, None] < a[None, :]).triu(diagonal=1).sum())
'''),
]
