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

WRONG += [
    Wrong("Exercise 4.1", MISTAKES["softmax_axis"], '''
def attention_entropy(x, w_q, w_k):
    q, k = x @ w_q, x @ w_k
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    log_weights = torch.log_softmax(scores, dim=1)          # over the queries
    return -(log_weights.exp() * log_weights).sum(dim=-1)
'''),
    Wrong("Exercise 4.1", MISTAKES["unscaled"], '''
def attention_entropy(x, w_q, w_k):
    weights = torch.softmax((x @ w_q) @ (x @ w_k).transpose(-2, -1), dim=-1)
    return -(weights * torch.log(weights + 1e-30)).sum(dim=-1)
'''),
    Wrong("Exercise 4.2", MISTAKES["mask_after_softmax"], '''
def causal_self_attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    t = x.shape[1]
    weights = weights * torch.ones(t, t).tril()              # hide the future afterwards
    return weights @ v
'''),
    Wrong("Exercise 4.3", "the heads left out", '''
def longest_sequence(memory_bytes, batch_size, num_heads, dtype):
    bytes_per_entry = torch.tensor([], dtype=dtype).element_size()
    return math.isqrt(memory_bytes // (batch_size * bytes_per_entry))
'''),
    Wrong("Exercise 4.4", "the singular values left out", '''
def factor_general_score(w_a, d_k):
    u, s, vh = torch.linalg.svd(w_a)
    return u[:, :d_k], vh[:d_k].T                  # directions only
'''),
]

WRONG += [
    # the naive entropy the hint warns against: a weight of exactly 0 gives 0 * log 0 = NaN
    Wrong("Exercise 4.1", "the logarithm taken after the softmax", '''
def attention_entropy(x, w_q, w_k):
    A = torch.softmax((x @ w_q) @ (x @ w_k).transpose(-2, -1) / math.sqrt(w_q.shape[1]), dim=-1)
    return -(A * A.log()).sum(dim=-1)
'''),
    Wrong("Exercise 4.1", "the minus sign left out", '''
def attention_entropy(x, w_q, w_k):
    scores = (x @ w_q) @ (x @ w_k).transpose(-2, -1) / math.sqrt(w_q.shape[1])
    log_weights = torch.log_softmax(scores, dim=-1)
    return (log_weights.exp() * log_weights).sum(dim=-1)
'''),
    Wrong("Exercise 4.2", MISTAKES["mask_inverted"], '''
def causal_self_attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    t = x.shape[1]
    allowed = torch.ones(t, t, dtype=torch.bool).tril()          # True = may attend ...
    return torch.softmax(scores.masked_fill(allowed, float("-inf")), dim=-1) @ v   # ... hidden
'''),
    Wrong("Exercise 4.2", "a causal mask that hides each token from itself too", '''
def causal_self_attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    t = x.shape[1]
    hidden = torch.ones(t, t, dtype=torch.bool).triu()           # the diagonal too
    return torch.softmax(scores.masked_fill(hidden, float("-inf")), dim=-1) @ v
'''),
    Wrong("Exercise 4.2", MISTAKES["softmax_axis"], '''
def causal_self_attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    t = x.shape[1]
    future = torch.ones(t, t, dtype=torch.bool).triu(diagonal=1)
    return torch.softmax(scores.masked_fill(future, float("-inf")), dim=1) @ v
'''),
    Wrong("Exercise 4.2", "a causal mask applied after the softmax and the weights renormalised", '''
def causal_self_attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1).tril()
    return weights / weights.sum(dim=-1, keepdim=True) @ v     # rows sum to 1 again
'''),
    Wrong("Exercise 4.3", "a floating-point square root", '''
def longest_sequence(memory_bytes, batch_size, num_heads, dtype):
    bytes_per_entry = torch.tensor([], dtype=dtype).element_size()
    return int(math.sqrt(memory_bytes / (batch_size * num_heads * bytes_per_entry)))
'''),
    Wrong("Exercise 4.4", "the singular values given to both factors", '''
def factor_general_score(w_a, d_k):
    u, s, vh = torch.linalg.svd(w_a)
    return u[:, :d_k] * s[:d_k], vh[:d_k].T * s[:d_k]
'''),
    Wrong("Exercise 4.4", "the queries' and the keys' factors swapped", '''
def factor_general_score(w_a, d_k):
    u, s, vh = torch.linalg.svd(w_a)
    root = s[:d_k].sqrt()
    return vh[:d_k].T * root, u[:, :d_k] * root     # keys' side first
'''),
]
