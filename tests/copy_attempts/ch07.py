"""Copying submissions to chapter 7's exercises (see ``tests/copy_attempts/__init__.py``)."""

from tests.copy_attempts import Copy

COPIES = [
    Copy("Exercise 7.1", "forbidden", '''
import torch.nn.functional as F

def layer_norm_channels_first(x, gamma, beta, eps):
    tokens = x.transpose(1, 2)                               # (B, S, C)
    return F.layer_norm(tokens, (x.shape[1],), gamma, beta, eps).transpose(1, 2)
'''),
    Copy("Exercise 7.1", "forbidden", '''
def layer_norm_channels_first(x, gamma, beta, eps):
    norm = nn.LayerNorm(x.shape[1], eps=eps)
    with torch.no_grad():
        norm.weight.copy_(gamma)
        norm.bias.copy_(beta)
    return norm(x.transpose(1, 2)).transpose(1, 2)
'''),
    # the chapter's layer-norm cell, pasted: its tokens are rows, so it reduces the last axis
    Copy("Exercise 7.1", "pasted", '''
def layer_norm_channels_first(x, gamma, beta, eps):
    mu = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True, unbiased=False)
    return gamma[:, None] * (x - mu) / torch.sqrt(var + eps) + beta[:, None]
'''),
    Copy("Exercise 7.1", "package", '''
from utils.exercises import ch07

layer_norm_channels_first = ch07._norm_made_like()
'''),
    # the chapter's "one encoder block, step by step" cell: the post-norm block
    Copy("Exercise 7.2", "pasted", '''
def parallel_block(x, key_mask, layer):
    a, _ = layer.self_attn(x, x, x, key_mask=key_mask)
    z1 = layer.norm_1(x + a)
    return layer.norm_2(z1 + layer.feed_forward(z1))
'''),
    Copy("Exercise 7.2", "package", '''
from utils.exercises.ch07 import _parallel_parts

def parallel_block(x, key_mask, layer):
    h, attended, fed = _parallel_parts(x, key_mask, layer)
    return x + attended + fed
'''),
    # the chapter's count of its own block, times the number of blocks
    Copy("Exercise 7.3", "pasted", '''
def gated_encoder_parameters(d_model, d_ff, num_layers):
    per_block = (4 * (d_model**2 + d_model) + 2 * d_model * d_ff + d_ff + d_model
                 + 4 * d_model)
    return num_layers * per_block + 2 * d_model
'''),
    # the chapter's printed count for its six blocks (d_model 32, d_ff 128), returned
    Copy("Exercise 7.3", "returned", '''
def gated_encoder_parameters(d_model, d_ff, num_layers):
    return 6 * 12_704
'''),
    Copy("Exercise 7.3", "package", '''
import utils.exercises.ch07 as reference

def gated_encoder_parameters(d_model, d_ff, num_layers):
    return reference._gated_count(d_model, d_ff, num_layers)
'''),
    Copy("Exercise 7.5", "package", '''
from utils.exercises.ch07 import _collapse_made_like

collapse_curve = _collapse_made_like()
'''),
    Copy("Exercise 7.5", "package", '''
from utils.exercises import ch07

def collapse_curve(x, layers, residual):
    out = [ch07._row_spread(x).mean()]
    h = x
    for layer in layers:
        h = h + layer(h, h, h)[0] if residual else layer(h, h, h)[0]
        out.append(ch07._row_spread(h).mean())
    return torch.stack(out)
'''),
    # the chapter's gradient experiment, pasted: x + f(x) or f(x) down a stack, no measure of the rows
    Copy("Exercise 7.5", "pasted", '''
def collapse_curve(x, layers, residual):
    norms = []
    h = x
    for f in layers:
        h = h + f(h, h, h)[0] if residual else f(h, h, h)[0]
        norms.append(h.norm())
    return torch.stack(norms)
'''),
]
