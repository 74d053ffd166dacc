"""Wrong answers to chapter 5's exercises (see ``tests/wrong_answers/__init__.py``)."""

from tests.wrong_answers import Wrong
from utils.checks import MISTAKES

WRONG = [
    Wrong("Exercise 5.5", MISTAKES["heads_order"], '''
def multi_head_cross_attention(query, memory, w_q, w_k, w_v, w_o, num_heads):
    B, T_q, C = query.shape
    T_k = memory.shape[1]
    D = C // num_heads
    q = (query @ w_q).reshape(B, num_heads, T_q, D)    # "fixed" view -> reshape: same bug
    k = (memory @ w_k).reshape(B, num_heads, T_k, D)
    v = (memory @ w_v).reshape(B, num_heads, T_k, D)
    scores = q @ k.transpose(-2, -1) / math.sqrt(D)
    out = torch.softmax(scores, dim=-1) @ v
    return out.reshape(B, T_q, C) @ w_o
'''),
    Wrong("Exercise 5.5", "heads split in the right order but merged in the wrong one", '''
def multi_head_cross_attention(query, memory, w_q, w_k, w_v, w_o, num_heads):
    B, T_q, C = query.shape
    T_k = memory.shape[1]
    D = C // num_heads
    q = (query @ w_q).view(B, T_q, num_heads, D).transpose(1, 2)
    k = (memory @ w_k).view(B, T_k, num_heads, D).transpose(1, 2)
    v = (memory @ w_v).view(B, T_k, num_heads, D).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(D)
    out = torch.softmax(scores, dim=-1) @ v
    return out.reshape(B, T_q, C) @ w_o                # heads not moved back after T
'''),
    Wrong("Exercise 5.5", "scores scaled by sqrt(d_model), not by sqrt(D)", '''
def multi_head_cross_attention(query, memory, w_q, w_k, w_v, w_o, num_heads):
    B, T_q, C = query.shape
    T_k = memory.shape[1]
    D = C // num_heads
    q = (query @ w_q).view(B, T_q, num_heads, D).transpose(1, 2)
    k = (memory @ w_k).view(B, T_k, num_heads, D).transpose(1, 2)
    v = (memory @ w_v).view(B, T_k, num_heads, D).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(C)
    out = torch.softmax(scores, dim=-1) @ v
    return out.transpose(1, 2).reshape(B, T_q, C) @ w_o
'''),
    Wrong("Exercise 5.3", "the key and value heads tiled", '''
def grouped_query_attention(q, k, v):
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat(1, group, 1, 1), v.repeat(1, group, 1, 1)
    out, _ = scaled_dot_product_attention(q, k, v)
    return out
'''),
    Wrong("Exercise 5.4", "PyTorch's (out_features, in_features) matrices returned as stored", '''
def torch_mha_matrices(layer):
    w_q, w_k, w_v = layer.in_proj_weight.detach().chunk(3)
    return w_q, w_k, w_v, layer.out_proj.weight.detach()
'''),
    Wrong("Exercise 5.1", "W_O's rows dealt out to the heads in turn (row h, h + H, ...), not "
          "in blocks of D consecutive rows", '''
def head_contributions(heads, w_o):
    num_heads, d = heads.shape[1], heads.shape[-1]
    blocks = w_o.view(d, num_heads, w_o.shape[-1]).transpose(0, 1)   # (D, H, C) -> (H, D, C)
    return heads @ blocks
'''),
    Wrong("Exercise 5.2", "the product of the two weights, not the smaller of them", '''
def head_overlap(weights):
    shared = weights[:, :, None] * weights[:, None]         # (B, H, H, T_q, T_k)
    return shared.sum(dim=-1).mean(dim=(0, 3))
'''),
    Wrong("Exercise 5.3", MISTAKES["unscaled"], '''
def grouped_query_attention(q, k, v):
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    return torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ v
'''),
    Wrong("Exercise 5.5", MISTAKES["softmax_axis"], '''
def multi_head_cross_attention(query, memory, w_q, w_k, w_v, w_o, num_heads):
    B, T_q, C = query.shape
    T_k = memory.shape[1]
    D = C // num_heads
    q = (query @ w_q).view(B, T_q, num_heads, D).transpose(1, 2)
    k = (memory @ w_k).view(B, T_k, num_heads, D).transpose(1, 2)
    v = (memory @ w_v).view(B, T_k, num_heads, D).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(D)
    out = torch.softmax(scores, dim=-2) @ v                # over the queries
    return out.transpose(1, 2).reshape(B, T_q, C) @ w_o
'''),
]
