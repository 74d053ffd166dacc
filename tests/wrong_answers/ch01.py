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
    Wrong("Exercise 1.1", "the last real state h_S (the context of the model without "
          "attention), not the mean", '''
def mean_context(states, lengths):
    return states[torch.arange(states.shape[0]), lengths - 1]   # as the chapter's h_S
'''),
    Wrong("Exercise 1.1", "one padding state counted as real (positions i <= n instead of "
          "i < n)", '''
def mean_context(states, lengths):
    real = torch.arange(states.shape[1])[None, :] <= lengths[:, None]  # (B, S)
    return (states * real[:, :, None]).sum(dim=1) / lengths[:, None]
'''),
    Wrong("Exercise 1.2", "the belief that a padded position gets some weight (its score is "
          "-inf before the softmax, so its weight is exactly 0)", '''
def predicted_weights():
    return [1 / 8] * 8
'''),
    Wrong("Exercise 1.2", "the belief that a real word gets a weight other than 1/5 (its score "
          "q_i . 0 = 0 is the same for all five words, and equal scores share a total weight of "
          "1)", '''
def predicted_weights():
    return [1.0] * 5 + [0.0] * 3
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
    Wrong("Exercise 1.3", MISTAKES["mask_transposed"], '''
def batch_attention(s, H, src_mask, W_Q, W_K, W_V):
    q, k, v = s @ W_Q, H @ W_K, H @ W_V
    scores = q @ k.transpose(1, 2)
    scores = scores.masked_fill(~src_mask[:, :, None], float("-inf"))   # (B, S, 1)
    alpha = torch.softmax(scores, dim=-1)
    return alpha @ v, alpha
'''),
    Wrong("Exercise 1.3", "the classmate's code unchanged (both bugs still in)", '''
def batch_attention(s, H, src_mask, W_Q, W_K, W_V):
    q, k, v = s @ W_Q, H @ W_K, H @ W_V                      # (B, T, d_k), (B, S, ...)
    scores = q @ k.transpose(1, 2)                           # (B, T, S)
    scores = scores.masked_fill(src_mask[:, None, :], float("-inf"))
    alpha = torch.softmax(scores, dim=1)
    return alpha @ v, alpha
'''),
    Wrong("Exercise 1.3", "scores divided by sqrt(d_k) (this exercise's scores are unscaled, "
          "as in the chapter)", '''
def batch_attention(s, H, src_mask, W_Q, W_K, W_V):
    q, k, v = s @ W_Q, H @ W_K, H @ W_V
    scores = q @ k.transpose(1, 2) / q.shape[-1] ** 0.5                 # habit from chapter 0
    scores = scores.masked_fill(~src_mask[:, None, :], float("-inf"))
    alpha = torch.softmax(scores, dim=-1)
    return alpha @ v, alpha
'''),
    Wrong("Exercise 1.4", "every decoder step counted, also those after the sentence's last word", '''
def coverage(weights, written):
    return weights.sum(dim=1)
'''),
    Wrong("Exercise 1.4", "one step too many counted (the step that wrote <eos> as well)", '''
def coverage(weights, written):
    steps = torch.arange(weights.shape[1])
    wrote = steps[None, :] <= written[:, None]
    return (weights * wrote[:, :, None]).sum(dim=1)
'''),
    Wrong("Exercise 1.4", "the weights summed over the source words (axis -1): each step's "
          "weights sum to 1", '''
def coverage(weights, written):
    steps = torch.arange(weights.shape[1])
    wrote = steps[None, :] < written[:, None]
    return (weights * wrote[:, :, None]).sum(dim=-1)
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
