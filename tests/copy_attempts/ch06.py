"""Copying submissions to chapter 6's exercises (see ``tests/copy_attempts/__init__.py``)."""

from tests.copy_attempts import Copy

COPIES = [
    # the chapter's R_k, pasted into a search over the offsets
    Copy("Exercise 6.1", "forbidden", '''
from utils.positional import relative_shift_matrix

def offset_between(a, b, base=10000.0):
    for k in range(-200, 201):
        if torch.allclose(a @ relative_shift_matrix(k, a.shape[-1], base), b, atol=1e-4):
            return k
    return 0
'''),
    # the chapter's table, searched for the two positions
    Copy("Exercise 6.1", "forbidden", '''
from utils.positional import sinusoidal_encoding

def offset_between(a, b, base=10000.0):
    table = sinusoidal_encoding(50_000, a.shape[-1], base)
    p = int((table - a).abs().sum(dim=-1).argmin())
    q = int((table - b).abs().sum(dim=-1).argmin())
    return q - p
'''),
    Copy("Exercise 6.1", "package", '''
from utils.exercises.ch06 import _offset_made_like

offset_between = _offset_made_like()
'''),
    # the chapter's positions, pasted: one row, 0 to T - 1, whatever the documents
    Copy("Exercise 6.2", "pasted", '''
def packed_positions(doc_ids):
    return torch.arange(doc_ids.shape[1]).expand_as(doc_ids)
'''),
    # right values, with the Python loops the exercise forbids
    Copy("Exercise 6.2", "forbidden", '''
def packed_positions(doc_ids):
    out = torch.zeros_like(doc_ids)
    for b in range(doc_ids.shape[0]):
        for t in range(1, doc_ids.shape[1]):
            if doc_ids[b, t] == doc_ids[b, t - 1]:
                out[b, t] = out[b, t - 1] + 1
    return out
'''),
    Copy("Exercise 6.2", "package", '''
from utils.exercises.ch06 import _packed_made_like

packed_positions = _packed_made_like()
'''),
    # the chapter's rotation cell, adapted: its pairs are neighbours, not i and i + D/2
    Copy("Exercise 6.3", "pasted", '''
def rope_rotate_halves(x):
    T, D = x.shape[-2], x.shape[-1]
    theta = torch.arange(T)[:, None] * frequencies(D).float()[None, :]
    cos, sin = torch.cos(theta).to(x.dtype), torch.sin(theta).to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    rotated = torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1)
    return rotated.flatten(-2)
'''),
    Copy("Exercise 6.3", "package", '''
import utils.exercises.ch06 as reference

def rope_rotate_halves(x):
    return reference._rope_by_interleaving(x)
'''),
    Copy("Exercise 6.4", "package", '''
from utils.exercises.ch06 import _alibi_model

def alibi_bias(t, num_heads):
    return _alibi_model(t, num_heads)
'''),
    Copy("Exercise 6.4", "package", '''
from utils.exercises import ch06

alibi_bias = ch06._alibi_model
'''),
]
