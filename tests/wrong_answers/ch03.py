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
    Wrong("Exercise 3.2", "a pad scoring 0 taken to get no weight", '''
def pad_weight_prediction():
    my_prediction = 0.0
    return my_prediction
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
]
