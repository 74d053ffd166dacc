"""Wrong answers to chapter 8's exercises (see ``tests/wrong_answers/__init__.py``)."""

from tests.wrong_answers import Wrong

WRONG = [
    Wrong("Exercise 8.1", "epsilon spread over the |V| - 1 wrong words only", '''
def smoothed_cross_entropy(logits, targets, epsilon, pad_id):
    log_probs = logits.log_softmax(dim=-1)
    right = -log_probs.gather(-1, targets[:, None])[:, 0]
    others = -(log_probs.sum(dim=-1) + right) / (logits.shape[-1] - 1)   # the wrong words
    per_position = (1 - epsilon) * right + epsilon * others
    return per_position[targets != pad_id].mean()
'''),
    Wrong("Exercise 8.1", "padding positions counted in the mean", '''
def smoothed_cross_entropy(logits, targets, epsilon, pad_id):
    log_probs = logits.log_softmax(dim=-1)
    right = -log_probs.gather(-1, targets[:, None])[:, 0]
    per_position = (1 - epsilon) * right - epsilon * log_probs.mean(dim=-1)
    return per_position.mean()                              # every position, padding too
'''),
    Wrong("Exercise 8.1", "epsilon put on every word instead of epsilon / |V|", '''
def smoothed_cross_entropy(logits, targets, epsilon, pad_id):
    log_probs = logits.log_softmax(dim=-1)
    target = torch.full_like(log_probs, epsilon)            # epsilon on each word
    target[torch.arange(len(targets)), targets] += 1 - epsilon
    per_position = -(target * log_probs).sum(dim=-1)
    return per_position[targets != pad_id].mean()
'''),
    Wrong("Exercise 8.2", "<eos> put after the padding", '''
def teacher_forcing_pair(ids, bos_id, eos_id, pad_id):
    bos = torch.full((ids.shape[0], 1), bos_id, dtype=ids.dtype)
    eos = torch.full((ids.shape[0], 1), eos_id, dtype=ids.dtype)
    return torch.cat([bos, ids], dim=1), torch.cat([ids, eos], dim=1)
'''),
    Wrong("Exercise 8.2", "<eos> written over the last word", '''
def teacher_forcing_pair(ids, bos_id, eos_id, pad_id):
    b = ids.shape[0]
    lengths = (ids != pad_id).sum(dim=1)
    tgt_in = torch.cat([torch.full((b, 1), bos_id, dtype=ids.dtype), ids], dim=1)
    tgt_out = torch.cat([ids, torch.full((b, 1), pad_id, dtype=ids.dtype)], dim=1)
    tgt_out[torch.arange(b), lengths - 1] = eos_id          # the last word's place
    return tgt_in, tgt_out
'''),
    Wrong("Exercise 8.2", "tgt_in and tgt_out swapped", '''
def teacher_forcing_pair(ids, bos_id, eos_id, pad_id):
    b = ids.shape[0]
    lengths = (ids != pad_id).sum(dim=1)
    tgt_in = torch.cat([torch.full((b, 1), bos_id, dtype=ids.dtype), ids], dim=1)
    tgt_out = torch.cat([ids, torch.full((b, 1), pad_id, dtype=ids.dtype)], dim=1)
    tgt_out[torch.arange(b), lengths] = eos_id
    return tgt_out, tgt_in
'''),
    Wrong("Exercise 8.3", "the two kinds of error swapped", '''
def error_kinds(lp_output, lp_reference, correct):
    kinds = torch.where(lp_reference > lp_output, 2, 1)     # the reference preferred: the model's fault?
    return torch.where(correct, 0, kinds)
'''),
    Wrong("Exercise 8.3", "correct outputs labelled as errors", '''
def error_kinds(lp_output, lp_reference, correct):
    return torch.where(lp_reference > lp_output, 1, 2)
'''),
    Wrong("Exercise 8.3", "a tie counted as a search error", '''
def error_kinds(lp_output, lp_reference, correct):
    kinds = torch.where(lp_reference >= lp_output, 1, 2)
    return torch.where(correct, 0, kinds)
'''),
    Wrong("Exercise 8.4", "padding entries counted in the sum", '''
def best_hypothesis(token_log_probs, lengths, alpha):
    total = token_log_probs.sum(dim=-1)                  # every column, padding included
    penalty = ((5 + lengths.float()) / 6) ** alpha
    return int((total / penalty).argmax())
'''),
    Wrong("Exercise 8.4", "the length penalty multiplied instead of divided", '''
def best_hypothesis(token_log_probs, lengths, alpha):
    real = torch.arange(token_log_probs.shape[1])[None, :] < lengths[:, None]
    total = token_log_probs.masked_fill(~real, 0.0).sum(dim=-1)
    return int((total * ((5 + lengths.float()) / 6) ** alpha).argmax())
'''),
    Wrong("Exercise 8.4", "the length penalty computed from the padded width", '''
def best_hypothesis(token_log_probs, lengths, alpha):
    n_hyp, t = token_log_probs.shape
    real = torch.arange(t)[None, :] < lengths[:, None]
    total = token_log_probs.masked_fill(~real, 0.0).sum(dim=-1)
    return int((total / ((5 + t) / 6) ** alpha).argmax())     # T: the width of the tensor
'''),
    # 8.5 is a prediction: a wrong one passes, and the comparison names the belief behind it
    Wrong("Exercise 8.5", "the belief that each step feeds only the newest token", '''
def predicted_decoder_rows():
    return 2 * 11          # 11 steps, 2 blocks, one new token each time
'''),
    Wrong("Exercise 8.5", "the belief that the prefix passes through one block only", '''
def predicted_decoder_rows():
    return 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 10 + 11
'''),
    Wrong("Exercise 8.5", "the belief that every step is as long as the final prefix", '''
def predicted_decoder_rows():
    return 2 * 11 * 11
'''),
]
