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
    Wrong("Exercise 10.1", "a causal mask that also hides the diagonal (token i may see itself: "
          "j <= i, not j < i)", '''
def subsequent_mask(t, device=None):
    return torch.ones(t, t, dtype=torch.bool, device=device).tril(diagonal=-1)
'''),
    Wrong("Exercise 10.1", MISTAKES["mask_inverted"], '''
def subsequent_mask(t, device=None):
    return ~torch.ones(t, t, dtype=torch.bool, device=device).tril()   # True = hidden
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
    Wrong("Exercise 10.2", "hidden keys given the score 0 rather than -inf (exp(0) = 1: they "
          "still get weight)", '''
def attend(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, 0.0)
    return torch.softmax(scores, dim=-1) @ v
'''),
    Wrong("Exercise 10.2", MISTAKES["mask_inverted"], '''
def attend(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
'''),
    Wrong("Exercise 10.3", MISTAKES["heads_order"], '''
def split_heads(x, num_heads):
    b, t, c = x.shape
    return x.view(b, num_heads, t, c // num_heads)
'''),
    Wrong("Exercise 10.3", "the head axis left after the token axis, (B, T, H, D)", '''
def split_heads(x, num_heads):
    b, t, c = x.shape
    return x.view(b, t, num_heads, c // num_heads)   # forgot to move the heads forward
'''),
    Wrong("Exercise 10.3", "features dealt out to the heads in turn (head h gets features h, "
          "h + H, ...; it must get the block h*D to (h+1)*D - 1)", '''
def split_heads(x, num_heads):
    b, t, c = x.shape
    return x.view(b, t, c // num_heads, num_heads).permute(0, 3, 1, 2)
'''),
    Wrong("Exercise 10.4", MISTAKES["unbiased_variance"], '''
def layer_norm(x, weight, bias, eps=1e-5):
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True)
    return weight * (x - mean) / torch.sqrt(var + eps) + bias
'''),
    Wrong("Exercise 10.4", "eps added outside the square root, sqrt(var) + eps", '''
def layer_norm(x, weight, bias, eps=1e-5):
    mean = x.mean(dim=-1, keepdim=True)
    std = x.std(dim=-1, keepdim=True, unbiased=False)
    return weight * (x - mean) / (std + eps) + bias
'''),
    Wrong("Exercise 10.5", MISTAKES["missing_residual"], '''
def sublayer_connection(x, sublayer_output, norm):
    return norm(sublayer_output)
'''),
    Wrong("Exercise 10.5", "the norm applied to the sublayer's output only, x + "
          "LayerNorm(Sublayer(x)) (post-norm normalises the sum)", '''
def sublayer_connection(x, sublayer_output, norm):
    return x + norm(sublayer_output)
'''),
]
