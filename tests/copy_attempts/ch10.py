"""Copying submissions to the lab of chapter 10 (see ``tests/copy_attempts/__init__.py``).

In a lab the learner repairs the given code in place. The copies here skip the repair: they import the
check's reference from ``utils.exercises.ch10`` ("package"), or take a correct version of the component
from the course package (``utils.attention``, ``utils.efficient``) or from PyTorch, the references the
lab's text compares with ("forbidden": the lab asks for its own code repaired).
"""

from tests.copy_attempts import Copy

COPIES = [
    Copy("Exercise 10.1", "package", '''
from utils.exercises.ch10 import _causal_mask as subsequent_mask
'''),
    Copy("Exercise 10.1", "package", '''
from utils.exercises import ch10

def subsequent_mask(t, device=None):
    return ch10._causal_mask(t, device)
'''),
    # chapter 8's causal mask, from the course package, in place of the repair
    Copy("Exercise 10.1", "forbidden", '''
from utils.attention import causal_mask

def subsequent_mask(t, device=None):
    return causal_mask(t, device)
'''),
    Copy("Exercise 10.1", "forbidden", '''
from utils.attention import causal_mask as subsequent_mask
'''),
    Copy("Exercise 10.2", "package", '''
import utils.exercises.ch10 as reference

attend = reference._attention_made_like()
'''),
    Copy("Exercise 10.2", "package", '''
from utils.exercises.ch10 import _attention as attend
'''),
    # PyTorch's attention through the dispatcher's own name (issue 38: it scored before)
    Copy("Exercise 10.2", "forbidden", '''
def attend(q, k, v, mask=None):
    return torch.ops.aten.scaled_dot_product_attention(q, k, v, mask)
''', featured=True),
    # layer norm through the dispatcher
    Copy("Exercise 10.4", "forbidden", '''
def layer_norm(x, weight, bias, eps=1e-5):
    return torch.ops.aten.native_layer_norm(x, [x.shape[-1]], weight, bias, eps)[0]
'''),
    # the reference the exercise compares with, called instead of repairing the function
    Copy("Exercise 10.2", "forbidden", '''
def attend(q, k, v, mask=None):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
'''),
    Copy("Exercise 10.2", "forbidden", '''
attend = torch.nn.functional.scaled_dot_product_attention
'''),
    Copy("Exercise 10.2", "forbidden", '''
from utils.attention import scaled_dot_product_attention

def attend(q, k, v, mask=None):
    return scaled_dot_product_attention(q, k, v, mask)[0]
'''),
    Copy("Exercise 10.2", "forbidden", '''
from utils.efficient import fused_attention as attend
'''),
    Copy("Exercise 10.3", "package", '''
from utils.exercises import ch10

def split_heads(x, num_heads):
    return ch10._split_heads(x, num_heads)
'''),
    # the package's multi-head attention splits its heads correctly: borrow its method
    Copy("Exercise 10.3", "forbidden", '''
from utils.attention import MultiHeadAttention

def split_heads(x, num_heads):
    return MultiHeadAttention(x.shape[-1], num_heads)._split(x)
'''),
    Copy("Exercise 10.4", "package", '''
from utils.exercises.ch10 import _norm_made_like

layer_norm = _norm_made_like()
'''),
    Copy("Exercise 10.4", "forbidden", '''
def layer_norm(x, weight, bias, eps=1e-5):
    return F.layer_norm(x, x.shape[-1:], weight, bias, eps)
'''),
    Copy("Exercise 10.4", "forbidden", '''
def layer_norm(x, weight, bias, eps=1e-5):
    return weight * nn.LayerNorm(x.shape[-1], eps=eps, elementwise_affine=False)(x) + bias
'''),
    Copy("Exercise 10.4", "forbidden", '''
def layer_norm(x, weight, bias, eps=1e-5):
    return torch.layer_norm(x, x.shape[-1:], weight, bias, eps)
'''),
    Copy("Exercise 10.5", "package", '''
from utils.exercises.ch10 import _add_and_norm as sublayer_connection
'''),
    Copy("Exercise 10.5", "package", '''
import utils.exercises.ch10

def sublayer_connection(x, sublayer_output, norm):
    return utils.exercises.ch10._add_and_norm(x, sublayer_output, norm)
'''),
]
