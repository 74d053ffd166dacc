"""Wrong answers to chapter 8's exercises (see ``tests/wrong_answers/__init__.py``)."""

from tests.wrong_answers import Wrong
from utils.checks import MISTAKES

WRONG = [
    Wrong("Exercise 8.1", "epsilon spread over the V - 1 wrong words only", '''
def smoothed_cross_entropy(logits, targets, epsilon, pad_id):
    log_probs = logits.log_softmax(dim=-1)
    right = -log_probs.gather(-1, targets[:, None])[:, 0]
    others = -(log_probs.sum(dim=-1) + right) / (logits.shape[-1] - 1)   # the wrong words
    per_position = (1 - epsilon) * right + epsilon * others
    return per_position[targets != pad_id].mean()
'''),
    Wrong("Exercise 8.2", "<eos> put after the padding", '''
def teacher_forcing_pair(ids, bos_id, eos_id, pad_id):
    bos = torch.full((ids.shape[0], 1), bos_id, dtype=ids.dtype)
    eos = torch.full((ids.shape[0], 1), eos_id, dtype=ids.dtype)
    return torch.cat([bos, ids], dim=1), torch.cat([ids, eos], dim=1)
'''),
    Wrong("Exercise 8.3", MISTAKES["causal_off_by_one"], '''
def decoder_self_attention_weights(scores, tgt_mask):
    t = scores.shape[-1]
    future = torch.ones(t, t, dtype=torch.bool).triu(diagonal=2)    # lets i see i + 1
    allowed = ~future & tgt_mask[:, None, :]
    return torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
'''),
    Wrong("Exercise 8.3", MISTAKES["mask_after_softmax"], '''
def decoder_self_attention_weights(scores, tgt_mask):
    t = scores.shape[-1]
    allowed = torch.ones(t, t, dtype=torch.bool).tril() & tgt_mask[:, None, :]
    weights = torch.softmax(scores, dim=-1)
    return weights.masked_fill(~allowed, 0.0)
'''),
    Wrong("Exercise 8.3", "the padding mask applied to the queries instead of the keys", '''
def decoder_self_attention_weights(scores, tgt_mask):
    t = scores.shape[-1]
    allowed = torch.ones(t, t, dtype=torch.bool).tril() & tgt_mask[:, :, None]
    return torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
'''),
    Wrong("Exercise 8.4", "padding entries counted in the sum", '''
def best_hypothesis(token_log_probs, lengths, alpha):
    total = token_log_probs.sum(dim=-1)                  # every column, padding included
    penalty = ((5 + lengths.float()) / 6) ** alpha
    return int((total / penalty).argmax())
'''),
    Wrong("Exercise 8.5", "one row per step and block", '''
def predicted_decoder_rows():
    return 2 * 11          # 11 steps, 2 blocks, one new token each time
'''),
]
