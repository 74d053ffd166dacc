"""Wrong answers to the lab of chapter 10 (see ``tests/wrong_answers/__init__.py``).

Most are the planted bugs themselves, as a student who has not found them yet would leave the
component; the others are plausible wrong fixes.
"""

from tests.wrong_answers import Wrong
from utils.checks import MISTAKES

WRONG = [
    Wrong("Exercise 10.1", MISTAKES["causal_off_by_one"], '''
def subsequent_mask(t, device=None):
    return torch.ones(t, t, dtype=torch.bool, device=device).tril(diagonal=1)
'''),
    Wrong("Exercise 10.1", MISTAKES["mask_transposed"], '''
def subsequent_mask(t, device=None):
    return torch.ones(t, t, dtype=torch.bool, device=device).triu()   # hides the past
'''),
    Wrong("Exercise 10.2", MISTAKES["mask_after_softmax"], '''
def attend(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v
'''),
    Wrong("Exercise 10.2", MISTAKES["unscaled"], '''
def attend(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
'''),
    Wrong("Exercise 10.3", MISTAKES["heads_order"], '''
def split_heads(x, num_heads):
    b, t, c = x.shape
    return x.view(b, num_heads, t, c // num_heads)
'''),
    Wrong("Exercise 10.4", MISTAKES["unbiased_variance"], '''
def layer_norm(x, weight, bias, eps=1e-5):
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True)
    return weight * (x - mean) / torch.sqrt(var + eps) + bias
'''),
    Wrong("Exercise 10.5", MISTAKES["missing_residual"], '''
def sublayer_connection(x, sublayer_output, norm):
    return norm(sublayer_output)
'''),
]
