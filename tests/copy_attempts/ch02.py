"""Copying submissions to chapter 2's exercises (see ``tests/copy_attempts/__init__.py``)."""

from tests.copy_attempts import Copy

COPIES = [
    Copy("Exercise 2.2", "forbidden", '''
def lookup_jacobian(query, keys, values):
    return torch.autograd.functional.jacobian(
        lambda q: torch.softmax(keys @ q, dim=0) @ values, query)
'''),
    Copy("Exercise 2.2", "package", '''
from utils.exercises import ch02

def lookup_jacobian(query, keys, values):
    return ch02._autograd_jacobian(query, keys, values)
'''),
    # the chapter's visible column-convention cell, with the projections bolted on in rows
    Copy("Exercise 2.3", "pasted", '''
def column_projected_attention(Xc, Mc, W_Q, W_K, W_V):
    O_rows, A_rows = scaled_dot_product_attention(Xc.T @ W_Q, Mc.T @ W_K, Mc.T @ W_V)
    return torch.nn.functional.scaled_dot_product_attention(
        (Xc.T @ W_Q)[None], (Mc.T @ W_K)[None], (Mc.T @ W_V)[None])[0].T
'''),
    Copy("Exercise 2.3", "package", '''
from utils.exercises.ch02 import _rows_reference as column_projected_attention
'''),
    # the explicit concatenation the exercise forbids in words
    Copy("Exercise 2.4", "forbidden", '''
def concat_additive_scores(Q, K, W, w):
    pairs = torch.cat([Q[:, None, :].expand(-1, K.shape[0], -1),
                       K[None, :, :].expand(Q.shape[0], -1, -1)], dim=-1)
    return torch.tanh(pairs @ W) @ w
'''),
    Copy("Exercise 2.4", "package", '''
import utils.exercises.ch02 as reference

concat_additive_scores = reference._concat_made_like()
'''),
    # a reference captured before the check runs, then called from the learner's own function
    Copy("Exercise 2.4", "package", '''
from utils.exercises.ch02 import _concat_made_like

_captured = _concat_made_like()


def concat_additive_scores(Q, K, W, w):
    return _captured(Q, K, W, w)
'''),
]
