"""Copying submissions to chapter 4's exercises (see ``tests/copy_attempts/__init__.py``)."""

from tests.copy_attempts import Copy

COPIES = [
    Copy("Exercise 4.1", "package", '''
from utils.exercises import ch04

def attention_entropy(x, w_q, w_k):
    return ch04._entropy_reference(x, w_q, w_k)
'''),
    # the check's scores, then a hand-made entropy
    Copy("Exercise 4.1", "package", '''
from utils.exercises.ch04 import _scores

def attention_entropy(x, w_q, w_k):
    log_weights = torch.log_softmax(_scores(x, w_q, w_k), dim=-1)
    return -(log_weights.exp() * log_weights).sum(dim=-1)
'''),
    Copy("Exercise 4.2", "forbidden", '''
def causal_self_attention(x, w_q, w_k, w_v):
    return F.scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v, is_causal=True)
'''),
    Copy("Exercise 4.2", "forbidden", '''
def causal_self_attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    allowed = utils.attention.causal_mask(x.shape[1])
    return torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1) @ v
'''),
    # the chapter's check against PyTorch, `scaled_dot_product_attention(Qr, Kr, Vr, causal_mask(9))`
    Copy("Exercise 4.2", "pasted", '''
def causal_self_attention(x, w_q, w_k, w_v):
    t = x.shape[1]
    ours, _ = scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v,
                                           torch.ones(t, t, dtype=torch.bool).tril())
    return ours
'''),
    # the chapter's SelfAttention loaded with the given matrices, as for the four tokens
    Copy("Exercise 4.2", "pasted", '''
def causal_self_attention(x, w_q, w_k, w_v):
    layer = SelfAttention(d_model=w_q.shape[0], d_k=w_q.shape[1], d_v=w_v.shape[1])
    with torch.no_grad():
        layer.w_q.weight.copy_(w_q.T)
        layer.w_k.weight.copy_(w_k.T)
        layer.w_v.weight.copy_(w_v.T)
    t = x.shape[1]
    return layer(x, torch.ones(t, t, dtype=torch.bool).tril())[0]
'''),
    Copy("Exercise 4.2", "package", '''
from utils.exercises.ch04 import _causal_reference as causal_self_attention
'''),
    # the reference captured before the check, then called through a name of one's own
    Copy("Exercise 4.2", "package", '''
import utils.exercises.ch04

reference = utils.exercises.ch04._causal_reference

def causal_self_attention(x, w_q, w_k, w_v):
    return reference(x, w_q, w_k, w_v)
'''),
    Copy("Exercise 4.3", "package", '''
from utils.exercises import ch04

def longest_sequence(memory_bytes, batch_size, num_heads, dtype):
    return ch04._longest_by_search(memory_bytes, batch_size, num_heads, dtype)
'''),
    Copy("Exercise 4.4", "package", '''
from utils.exercises.ch04 import _factors_made_like

factor_general_score = _factors_made_like()
'''),
    # the chapter's own projections: any W_Q, W_K of the right shape, whatever w_a is
    Copy("Exercise 4.4", "pasted", '''
def factor_general_score(w_a, d_k):
    torch.manual_seed(0)
    d_model = w_a.shape[0]
    return torch.randn(d_model, d_k, dtype=w_a.dtype), torch.randn(d_model, d_k, dtype=w_a.dtype)
'''),
    # the references kept in default arguments, where no renaming reaches them
    Copy("Exercise 4.3", "package", '''
from utils.exercises import ch04

def longest_sequence(memory_bytes, batch_size, num_heads, dtype, _search=ch04._longest_by_search):
    return _search(memory_bytes, batch_size, num_heads, dtype)
'''),
    Copy("Exercise 4.4", "package", '''
from utils.exercises import ch04

def factor_general_score(w_a, d_k, _factor=ch04._factors_made_like()):
    return _factor(w_a, d_k)
'''),
    # the check's own mask builder, made before the check runs
    Copy("Exercise 4.2", "package", '''
from utils.exercises import ch04

future = ch04._above(1)

def causal_self_attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    return torch.softmax(scores.masked_fill(future(x.shape[1]), float("-inf")), dim=-1) @ v
'''),
]
