"""Wrong answers to chapter 1's exercises (see ``tests/wrong_answers/__init__.py``)."""

from tests.wrong_answers import Wrong
from utils.checks import MISTAKES

WRONG = [
    Wrong("Exercise 1.1", "the mean over all S positions, padding included", '''
def mean_context(states, lengths):
    return states.mean(dim=1)
'''),
    Wrong("Exercise 1.1", "the sum of the real states, not divided by the length", '''
def mean_context(states, lengths):
    real = torch.arange(states.shape[1])[None, :] < lengths[:, None]   # (B, S)
    return (states * real[:, :, None]).sum(dim=1)
'''),
    Wrong("Exercise 1.1", "the state of the last time step, padding included", '''
def mean_context(states, lengths):
    return states[:, -1]                     # what the GRU returns last
'''),
    Wrong("Exercise 1.2", "weights spread over the padding too (a padded position's score is "
          "-inf, so its weight is exactly 0)", '''
def predicted_weights():
    return [1 / 8] * 8
'''),
    Wrong("Exercise 1.3", MISTAKES["softmax_axis"], '''
def batch_attention(s, H, src_mask, W_Q, W_K, W_V):
    q, k, v = s @ W_Q, H @ W_K, H @ W_V
    scores = q @ k.transpose(1, 2)
    scores = scores.masked_fill(~src_mask[:, None, :], float("-inf"))   # mask fixed
    alpha = torch.softmax(scores, dim=1)                                # axis not
    return alpha @ v, alpha
'''),
    Wrong("Exercise 1.3", MISTAKES["mask_inverted"], '''
def batch_attention(s, H, src_mask, W_Q, W_K, W_V):
    q, k, v = s @ W_Q, H @ W_K, H @ W_V
    scores = q @ k.transpose(1, 2)
    scores = scores.masked_fill(src_mask[:, None, :], float("-inf"))    # mask not fixed
    alpha = torch.softmax(scores, dim=-1)                               # axis fixed
    return alpha @ v, alpha
'''),
    Wrong("Exercise 1.3", MISTAKES["mask_after_softmax"], '''
def batch_attention(s, H, src_mask, W_Q, W_K, W_V):
    q, k, v = s @ W_Q, H @ W_K, H @ W_V
    alpha = torch.softmax(q @ k.transpose(1, 2), dim=-1)
    alpha = alpha * src_mask[:, None, :]                                # zero the padding
    return alpha @ v, alpha
'''),
    Wrong("Exercise 1.4", MISTAKES["mask_after_softmax"], '''
def window_attention_step(s_i, H, W_Q, W_K, W_V, center, radius):
    alpha = torch.softmax((H @ W_K) @ (s_i @ W_Q), dim=0)
    inside = (torch.arange(H.shape[0]) - center).abs() <= radius
    alpha = alpha * inside
    return alpha @ (H @ W_V), alpha
'''),
    Wrong("Exercise 1.4", "a window one position too narrow on each side (|j - p_i| < r "
          "instead of <= r)", '''
def window_attention_step(s_i, H, W_Q, W_K, W_V, center, radius):
    scores = (H @ W_K) @ (s_i @ W_Q)
    inside = (torch.arange(H.shape[0]) - center).abs() < radius
    alpha = torch.softmax(scores.masked_fill(~inside, float("-inf")), dim=0)
    return alpha @ (H @ W_V), alpha
'''),
    Wrong("Exercise 1.5", "the strides ignored: every layer widening the window by "
          "kernel_size - 1", '''
def strided_receptive_field(kernel_size, strides):
    return 1 + len(strides) * (kernel_size - 1)
'''),
    Wrong("Exercise 1.5", "a layer's own stride spreading its taps (only the strides of the "
          "layers below it do)", '''
def strided_receptive_field(kernel_size, strides):
    field, step = 1, 1
    for stride in strides:
        step *= stride
        field += (kernel_size - 1) * step
    return field
'''),
]
