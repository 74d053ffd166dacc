"""Wrong answers to chapter 9's exercises (see ``tests/wrong_answers/__init__.py``)."""

from tests.wrong_answers import Wrong
from utils.checks import MISTAKES

WRONG = [
    Wrong("Exercise 9.1", "a window one too wide", '''
def sliding_window_mask(t, window):
    i = torch.arange(t)[:, None]
    j = torch.arange(t)[None, :]
    return (j <= i) & (j >= i - window)        # counts the window from the query's left
'''),
    Wrong("Exercise 9.1", MISTAKES["mask_transposed"], '''
def sliding_window_mask(t, window):
    i = torch.arange(t)[None, :]               # queries along the columns
    j = torch.arange(t)[:, None]
    return (j <= i) & (j > i - window)
'''),
    Wrong("Exercise 9.2", "the token that reaches p dropped", '''
def keep_top_p(logits, p):
    probs, order = logits.softmax(dim=-1).sort(dim=-1, descending=True)
    keep_ranked = probs.cumsum(dim=-1) < p      # stops one token short of p
    keep = torch.zeros_like(keep_ranked).scatter(-1, order, keep_ranked)
    return logits.masked_fill(~keep, float("-inf"))
'''),
    Wrong("Exercise 9.3", "keys T_k / stride apart averaged together", '''
def memory_compressed_attention(q, k, v, stride):
    b, t_k, d = k.shape
    k_c = k.view(b, stride, t_k // stride, d).mean(dim=1)
    v_c = v.view(b, stride, t_k // stride, d).mean(dim=1)
    return scaled_dot_product_attention(q, k_c, v_c)[0]
'''),
    Wrong("Exercise 9.4", "the shares computed from e^lse itself", '''
def merge_attention(out_a, lse_a, out_b, lse_b):
    sum_a, sum_b = lse_a.exp(), lse_b.exp()     # each part's sum of exponentials
    return (sum_a * out_a + sum_b * out_b) / (sum_a + sum_b)
'''),
    Wrong("Exercise 9.5", "a temperature that changes which word is the most likely", '''
def predicted_distinct_sentences():
    return 20                  # temperature 2 flattens the distribution: all differ
'''),
]
