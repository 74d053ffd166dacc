"""Wrong answers to chapter 3's exercises (see ``tests/wrong_answers/__init__.py``)."""

from tests.wrong_answers import Wrong
from utils.checks import MISTAKES

WRONG = [
    Wrong("Exercise 3.1", MISTAKES["mask_inverted"], '''
def length_masked_attention(q, k, v, lengths):
    scores = q @ k.transpose(1, 2) / q.shape[-1] ** 0.5
    pad = torch.arange(k.shape[1])[None, :] < lengths[:, None]     # True at the real words
    scores = scores.masked_fill(pad[:, None, :], float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
'''),
    Wrong("Exercise 3.1", MISTAKES["mask_transposed"], '''
def length_masked_attention(q, k, v, lengths):
    scores = q @ k.transpose(1, 2) / q.shape[-1] ** 0.5
    real = torch.arange(k.shape[1])[None, :] < lengths[:, None]
    scores = scores.masked_fill(~real[:, :, None], float("-inf"))   # hides query rows
    return torch.softmax(scores, dim=-1) @ v
'''),
    Wrong("Exercise 3.1", MISTAKES["mask_after_softmax"], '''
def length_masked_attention(q, k, v, lengths):
    weights = torch.softmax(q @ k.transpose(1, 2) / q.shape[-1] ** 0.5, dim=-1)
    real = torch.arange(k.shape[1])[None, :] < lengths[:, None]
    weights = weights * real[:, None, :]                            # zero the pads afterwards
    return weights @ v
'''),
    Wrong("Exercise 3.1", "a length mask off by one that lets the first padded key through", '''
def length_masked_attention(q, k, v, lengths):
    scores = q @ k.transpose(1, 2) / q.shape[-1] ** 0.5
    real = torch.arange(k.shape[1])[None, :] <= lengths[:, None]    # one too many
    scores = scores.masked_fill(~real[:, None, :], float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
'''),
    Wrong("Exercise 3.1", "a length mask off by one that hides the last real key", '''
def length_masked_attention(q, k, v, lengths):
    scores = q @ k.transpose(1, 2) / q.shape[-1] ** 0.5
    real = torch.arange(k.shape[1])[None, :] < lengths[:, None] - 1   # one too few
    scores = scores.masked_fill(~real[:, None, :], -1e9)
    return torch.softmax(scores, dim=-1) @ v
'''),
    Wrong("Exercise 3.1", "padded scores set to 0, not to minus infinity", '''
def length_masked_attention(q, k, v, lengths):
    real = torch.arange(k.shape[1])[None, :] < lengths[:, None]
    scores = q @ k.transpose(1, 2) / q.shape[-1] ** 0.5 * real[:, None, :]   # pads score 0
    return torch.softmax(scores, dim=-1) @ v
'''),
    Wrong("Exercise 3.1", "a mask applied after the softmax and the weights renormalised", '''
def length_masked_attention(q, k, v, lengths):
    weights = torch.softmax(q @ k.transpose(1, 2) / q.shape[-1] ** 0.5, dim=-1)
    real = torch.arange(k.shape[1])[None, :] < lengths[:, None]
    weights = weights * real[:, None, :]
    return weights / weights.sum(dim=-1, keepdim=True) @ v        # sum to 1 again
'''),
    Wrong("Exercise 3.2", "the belief that a pad scoring 0 gets no weight", '''
def pad_weight_prediction():
    my_prediction = 0.0
    return my_prediction
'''),
    Wrong("Exercise 3.2", "the weight of one pad, 1/6, not of the two pads together", '''
def pad_weight_prediction():
    my_prediction = 1 / 6
    return my_prediction
'''),
    Wrong("Exercise 3.3", "one-hot vectors of the sentence's length S, not of max_len", '''
def with_position_features(a, max_len):
    batch, length, _ = a.shape
    one_hot = torch.eye(length, dtype=a.dtype).expand(batch, -1, -1)    # (B, S, S)
    return torch.cat([a, one_hot], dim=-1)
'''),
    Wrong("Exercise 3.3", "positions counted from 1", '''
def with_position_features(a, max_len):
    batch, length, _ = a.shape
    one_hot = torch.eye(max_len, dtype=a.dtype)[1:length + 1]      # the first word at 1
    return torch.cat([a, one_hot.expand(batch, -1, -1)], dim=-1)
'''),
    Wrong("Exercise 3.4", "the matches divided by the length of the prediction", '''
def bag_of_words_recall(prediction, reference):
    pool, hits = list(prediction), 0
    for word in reference:
        if word in pool:
            pool.remove(word)
            hits += 1
    return hits / max(len(prediction), 1)
'''),
    Wrong("Exercise 3.4", "the words compared as sets", '''
def bag_of_words_recall(prediction, reference):
    return len(set(prediction) & set(reference)) / len(set(reference))
'''),
]
