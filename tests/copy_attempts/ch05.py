"""Copying submissions to chapter 5's exercises (see ``tests/copy_attempts/__init__.py``)."""

from tests.copy_attempts import Copy

COPIES = [
    Copy("Exercise 5.1", "package", '''
from utils.exercises import ch05

def head_contributions(heads, w_o):
    return ch05._contributions_by_loop(heads, w_o)
'''),
    # the chapter's own output projection, returned: the layer's output, not per-head terms
    Copy("Exercise 5.1", "returned", '''
def head_contributions(heads, w_o):
    concat = heads.transpose(1, 2).flatten(2)           # (B, T, H * D), as in the chapter
    return (concat @ w_o)[:, None].expand(-1, heads.shape[1], -1, -1)
'''),
    Copy("Exercise 5.2", "package", '''
from utils.exercises.ch05 import _overlap_by_distance as head_overlap
'''),
    Copy("Exercise 5.3", "forbidden", '''
def grouped_query_attention(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
'''),
    # the forbidden function held as it is, so that the refusal never sees it looked up
    Copy("Exercise 5.3", "forbidden", '''
import functools

grouped_query_attention = functools.partial(F.scaled_dot_product_attention,
                                            enable_gqa=True)
'''),
    Copy("Exercise 5.3", "package", '''
import utils.exercises.ch05 as reference

def grouped_query_attention(q, k, v):
    return reference._gqa_reference(q, k, v)
'''),
    Copy("Exercise 5.4", "package", '''
import utils.exercises.ch05 as reference

torch_mha_matrices = reference._matrices_via_copy
'''),
    Copy("Exercise 5.4", "package", '''
from utils.exercises.ch05 import _matrices_via_copy

def torch_mha_matrices(layer):
    return _matrices_via_copy(layer)
'''),
    # the colleague's code from the exercise text, pasted as it is
    Copy("Exercise 5.5", "pasted", '''
def multi_head_cross_attention(query, memory, w_q, w_k, w_v, w_o, num_heads):
    B, T_q, C = query.shape
    T_k = memory.shape[1]
    D = C // num_heads
    q = (query @ w_q).view(B, num_heads, T_q, D)          # (B, H, T_q, D)
    k = (memory @ w_k).view(B, num_heads, T_k, D)         # (B, H, T_k, D)
    v = (memory @ w_v).view(B, num_heads, T_k, D)         # (B, H, T_k, D)
    scores = q @ k.transpose(-2, -1) / math.sqrt(D)       # (B, H, T_q, T_k)
    out = torch.softmax(scores, dim=-1) @ v               # (B, H, T_q, D)
    return out.reshape(B, T_q, C) @ w_o                   # (B, T_q, C)
'''),
    Copy("Exercise 5.5", "package", '''
from utils.exercises import ch05

multi_head_cross_attention = ch05._cross_attention_made_like()
'''),
    Copy("Exercise 5.5", "package", '''
def multi_head_cross_attention(query, memory, w_q, w_k, w_v, w_o, num_heads):
    from utils.exercises.ch05 import _mha_reference
    return _mha_reference(query, memory, w_q, w_k, w_v, w_o, num_heads)
'''),
]
