"""Copying submissions to chapter 3's exercises (see ``tests/copy_attempts/__init__.py``)."""

from tests.copy_attempts import Copy

COPIES = [
    # PyTorch's fused attention, given the mask the exercise asks to build
    Copy("Exercise 3.1", "forbidden", '''
def length_masked_attention(q, k, v, lengths):
    real = torch.arange(k.shape[1])[None, :] < lengths[:, None]
    return F.scaled_dot_product_attention(q, k, v, attn_mask=real[:, None, :])
'''),
    Copy("Exercise 3.1", "forbidden", '''
from utils.attention import scaled_dot_product_attention

def length_masked_attention(q, k, v, lengths):
    real = torch.arange(k.shape[1])[None, :] < lengths[:, None]
    return scaled_dot_product_attention(q, k, v, real[:, None, :])[0]
'''),
    # the chapter's `layer(queries, memory, mask=key_mask)`, with projections that pick q, k and v
    Copy("Exercise 3.1", "pasted", '''
from utils.attention import SingleHeadAttention

def length_masked_attention(q, k, v, lengths):
    d_k, d_v = q.shape[-1], v.shape[-1]
    layer = SingleHeadAttention(d_k, d_v=d_v, d_kv=d_k + d_v)
    with torch.no_grad():
        layer.w_q.weight.copy_(torch.eye(d_k))
        layer.w_k.weight.copy_(torch.cat([torch.eye(d_k), torch.zeros(d_k, d_v)], dim=1))
        layer.w_v.weight.copy_(torch.cat([torch.zeros(d_v, d_k), torch.eye(d_v)], dim=1))
    key_mask = (torch.arange(k.shape[1])[None, :] < lengths[:, None])[:, None, :]
    return layer(q, torch.cat([k, v], dim=-1), mask=key_mask)[0]
'''),
    Copy("Exercise 3.1", "package", '''
from utils.exercises import ch03

def length_masked_attention(q, k, v, lengths):
    return ch03._length_reference(q, k, v, lengths)
'''),
    # the check's own mask, which the old check cell showed (`real_keys`), with a hand-made softmax
    Copy("Exercise 3.1", "package", '''
import utils.exercises.ch03 as check_code

def length_masked_attention(q, k, v, lengths):
    scores = q @ k.transpose(1, 2) / q.shape[-1] ** 0.5
    real = check_code._keys_before(k, lengths)
    return torch.softmax(scores.masked_fill(~real[:, None, :], float("-inf")), dim=-1) @ v
'''),
    Copy("Exercise 3.3", "package", '''
from utils.exercises.ch03 import _with_positions as with_position_features
'''),
    Copy("Exercise 3.3", "package", '''
from utils.exercises import ch03

def with_position_features(a, max_len):
    return ch03._positions_appended(a, max_len)
'''),
    Copy("Exercise 3.4", "package", '''
from utils.exercises.ch03 import _recall_by_removal

def bag_of_words_recall(prediction, reference):
    return _recall_by_removal(prediction, reference)
'''),
    # the reference kept in a default argument, where no renaming reaches it
    Copy("Exercise 3.4", "package", '''
import utils.exercises.ch03

def bag_of_words_recall(prediction, reference, _recall=utils.exercises.ch03._recall_by_removal):
    return _recall(prediction, reference)
'''),
]
