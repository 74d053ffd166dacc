"""Copying submissions to chapter 1's exercises (see ``tests/copy_attempts/__init__.py``)."""

from tests.copy_attempts import Copy

COPIES = [
    # the chapter's h_S, taken for the context asked for
    Copy("Exercise 1.1", "pasted", '''
def mean_context(states, lengths):
    rows = torch.arange(states.shape[0])
    return states[rows, lengths - 1]
'''),
    # right values, with the loop over the batch the exercise forbids
    Copy("Exercise 1.1", "forbidden", '''
def mean_context(states, lengths):
    return torch.stack([states[b, :int(lengths[b])].mean(dim=0)
                        for b in range(states.shape[0])])
'''),
    Copy("Exercise 1.1", "forbidden", '''
def mean_context(states, lengths):
    out = torch.empty(states.shape[0], states.shape[2])
    for b, n in enumerate(lengths.tolist()):
        out[b] = states[b, :n].mean(dim=0)
    return out
'''),
    Copy("Exercise 1.1", "package", '''
from utils.exercises.ch01 import _mean_of_real as mean_context
'''),
    # the value the old check cell computed before calling the learner's function
    Copy("Exercise 1.2", "returned", '''
def predicted_weights():
    return measured
'''),
    # the classmate's code as given
    Copy("Exercise 1.3", "pasted", '''
def batch_attention(s, H, src_mask, W_Q, W_K, W_V):
    q, k, v = s @ W_Q, H @ W_K, H @ W_V                      # (B, T, d_k), (B, S, ...)
    scores = q @ k.transpose(1, 2)                           # (B, T, S)
    scores = scores.masked_fill(src_mask[:, None, :], float("-inf"))
    alpha = torch.softmax(scores, dim=1)
    return alpha @ v, alpha
'''),
    # the chapter's RNNAttention, whose source the chapter shows, with the given matrices
    Copy("Exercise 1.3", "pasted", '''
def batch_attention(s, H, src_mask, W_Q, W_K, W_V):
    module = RNNAttention(d_dec=s.shape[-1], d_enc=H.shape[-1], d_k=W_Q.shape[1],
                          d_v=W_V.shape[1])
    with torch.no_grad():
        module.w_q.weight.copy_(W_Q.T)
        module.w_k.weight.copy_(W_K.T)
        module.w_v.weight.copy_(W_V.T)
        return module(s, H, src_mask)
'''),
    Copy("Exercise 1.3", "package", '''
from utils.exercises import ch01

batch_attention = ch01._attention_made_like()
'''),
    # the chapter's alignment count, pasted: the most-weighted source word of each step
    Copy("Exercise 1.4", "pasted", '''
def coverage(weights, written):
    looked_at = weights.argmax(dim=-1)
    return torch.nn.functional.one_hot(looked_at, weights.shape[-1]).sum(dim=1).float()
'''),
    Copy("Exercise 1.4", "package", '''
from utils.exercises import ch01

def coverage(weights, written):
    return ch01._coverage_made_like()(weights, written)
'''),
    # the chapter's visible_window, which knows no strides
    Copy("Exercise 1.5", "pasted", '''
def strided_receptive_field(kernel_size, strides):
    return visible_window(len(strides), kernel_size)
'''),
    Copy("Exercise 1.5", "package", '''
from utils.exercises.ch01 import _field_by_gradients as strided_receptive_field
'''),
]
