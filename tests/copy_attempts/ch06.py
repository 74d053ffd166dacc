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
    # the encoding vectors built after all, from the package's table (it uses torch.sin)
    Copy("Exercise 6.2", "forbidden", '''
def encoding_similarity(offsets, d_model):
    start = int(offsets.abs().max())
    table = sinusoidal_encoding(2 * start + 1, d_model)
    return table[start + offsets] @ table[start]
'''),
    Copy("Exercise 6.2", "forbidden", '''
def encoding_similarity(offsets, d_model):
    angles = offsets.double()[:, None] + torch.arange(3)[None, :]        # (K, 3) positions
    w = frequencies(d_model)                                            # (C/2,)
    start = torch.arange(3).double()[:, None] * w                       # PE(p), p = 0, 1, 2
    shifted = angles[..., None] * w                                     # PE(p + k)
    dots = (start.sin() * shifted.sin() + start.cos() * shifted.cos()).sum(-1)
    return dots[:, 0].float()
'''),
    Copy("Exercise 6.2", "forbidden", '''
def encoding_similarity(offsets, d_model):
    values = []
    for k in offsets.tolist():
        total = 0.0
        for i in range(d_model // 2):
            w = 10000.0 ** (-2 * i / d_model)
            total += math.sin(0.0) * math.sin(k * w) + math.cos(0.0) * math.cos(k * w)
        values.append(total)
    return torch.tensor(values)
'''),
    Copy("Exercise 6.2", "package", '''
from utils.exercises.ch06 import _similarity_from_table as encoding_similarity
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
