"""Wrong answers to chapter 4's exercises (see ``tests/wrong_answers/__init__.py``)."""

from tests.wrong_answers import Wrong
from utils.checks import MISTAKES

WRONG = [
    Wrong("Exercise 4.2", MISTAKES["causal_off_by_one"], '''
def causal_self_attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    t = x.shape[1]
    future = torch.ones(t, t, dtype=torch.bool).triu(diagonal=2)   # lets i see i + 1
    return torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1) @ v
'''),
    Wrong("Exercise 4.2", MISTAKES["mask_transposed"], '''
def causal_self_attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    t = x.shape[1]
    future = torch.ones(t, t, dtype=torch.bool).triu(diagonal=1).T    # hides the past instead
    return torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1) @ v
'''),
    Wrong("Exercise 4.2", MISTAKES["unscaled"], '''
def causal_self_attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = q @ k.transpose(-2, -1)
    t = x.shape[1]
    future = torch.ones(t, t, dtype=torch.bool).triu(diagonal=1)
    return torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1) @ v
'''),
]
