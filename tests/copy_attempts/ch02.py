"""Copying submissions to chapter 2's exercises (see ``tests/copy_attempts/__init__.py``)."""

from tests.copy_attempts import Copy

COPIES = [
    Copy("Exercise 2.2", "forbidden", '''
def lookup_jacobian(query, keys, values):
    return torch.autograd.functional.jacobian(
        lambda q: torch.softmax(keys @ q, dim=0) @ values, query)
'''),
    # forward-mode autograd, reached by its own names (issue 38: it scored before)
    Copy("Exercise 2.2", "forbidden", '''
import torch.autograd.forward_ad as fwAD


def lookup_jacobian(query, keys, values):
    columns = []
    for i in range(len(query)):
        with fwAD.dual_level():
            q = fwAD.make_dual(query, torch.eye(len(query))[i])
            out = torch.softmax(keys @ q, dim=0) @ values
            columns.append(fwAD.unpack_dual(out).tangent)
    return torch.stack(columns, dim=1)
''', featured=True),
    Copy("Exercise 2.2", "forbidden", '''
def lookup_jacobian(query, keys, values):
    return torch.func.jacfwd(lambda q: torch.softmax(keys @ q, dim=0) @ values)(query)
'''),
    # central finite differences (issue 38: they scored before)
    Copy("Exercise 2.2", "forbidden", '''
def lookup_jacobian(query, keys, values):
    q = query.double()
    lookup = lambda x: torch.softmax(keys.double() @ x, dim=0) @ values.double()
    h = 1e-6
    columns = [(lookup(q + h * e) - lookup(q - h * e)) / (2 * h) for e in torch.eye(len(q)).double()]
    return torch.stack(columns, dim=1).float()
'''),
    # finite differences in one batch: every shifted query at once
    Copy("Exercise 2.2", "forbidden", '''
def lookup_jacobian(query, keys, values):
    q, h = query.double(), 1e-6
    shifted = torch.cat([q[None], q[None] + h * torch.eye(len(q)).double()])   # (1 + d_k, d_k)
    outputs = torch.softmax(shifted @ keys.double().T, dim=1) @ values.double()
    return ((outputs[1:] - outputs[0]) / h).T.float()
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
    # the course's own attention on transposed inputs (issue 38: it scored before)
    Copy("Exercise 2.3", "pasted", '''
def column_projected_attention(Xc, Mc, W_Q, W_K, W_V):
    return scaled_dot_product_attention(Xc.T @ W_Q, Mc.T @ W_K, Mc.T @ W_V)[0].T
''', featured=True),
    Copy("Exercise 2.3", "pasted", '''
import utils.attention

_attend = utils.attention.scaled_dot_product_attention


def column_projected_attention(Xc, Mc, W_Q, W_K, W_V, attend=_attend):
    return attend(Xc.T @ W_Q, Mc.T @ W_K, Mc.T @ W_V)[0].T
'''),
    Copy("Exercise 2.3", "forbidden", '''
def column_projected_attention(Xc, Mc, W_Q, W_K, W_V):
    q, k, v = (Xc.T @ W_Q)[None], (Mc.T @ W_K)[None], (Mc.T @ W_V)[None]
    return torch.ops.aten.scaled_dot_product_attention(q, k, v)[0].T
'''),
    Copy("Exercise 2.3", "package", '''
from utils.exercises.ch02 import _rows_reference as column_projected_attention
'''),
    # the chapter's additive cell pasted: the weights of some queries and keys, not the ceiling
    Copy("Exercise 2.4", "pasted", '''
from utils.attention import AdditiveScore


def additive_ceiling(w, T_k):
    d_k = 16
    Q, K = torch.randn(5, d_k), torch.randn(T_k, d_k)
    additive_module = AdditiveScore(d_q=d_k, d_k=d_k, d_hidden=len(w))
    W_q, W_k = additive_module.w_q.weight.T, additive_module.w_k.weight.T
    hidden = torch.tanh((Q @ W_q)[:, None, :] + (K @ W_k)[None, :, :])
    additive = hidden @ w
    return torch.softmax(additive, dim=-1).max().item()
'''),
    # the search the exercise forbids in words: Adam saturates every tanh to +-1 in float32, so
    # without the refusal it would return the ceiling without any derivation
    Copy("Exercise 2.4", "forbidden", '''
def additive_ceiling(w, T_k):
    pre = torch.zeros(T_k, len(w), requires_grad=True)   # q_i W_q + k_j W_k, key by key
    optimiser = torch.optim.Adam([pre], lr=1.0)
    for _ in range(300):
        loss = -torch.softmax(torch.tanh(pre) @ w, dim=0)[0]
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    return torch.softmax(torch.tanh(pre) @ w, dim=0)[0].item()
'''),
    Copy("Exercise 2.4", "package", '''
from utils.exercises.ch02 import _additive_ceiling as additive_ceiling
'''),
    # a reference captured before the check runs, then called from the learner's own function
    Copy("Exercise 2.4", "package", '''
import utils.exercises.ch02 as reference

_captured = reference._ceiling_made_like()


def additive_ceiling(w, T_k):
    return _captured(w, T_k)
'''),
]
