"""Wrong answers to chapter 11's exercises (see ``tests/wrong_answers/__init__.py``)."""

from tests.wrong_answers import Wrong

WRONG = [
    # predictions: written in the right form, so they pass; the comparison names the misconception
    Wrong("Exercise 11.1", "the belief that adding a piece can only help (without its mask the "
          "decoder's self-attention learns to read part of its predictions off the next input word, "
          "which at test time does not exist)", '''
def my_predictions():
    return {"0: chapter 3": 0.0, "1: + positions": 0.2, "2: + 4 heads": 0.35,
            "3: + feed-forward": 0.4, "4: + Add & Norm": 0.45,
            "5: + self-attention": 0.6,    # one more piece, one more step up
            "6: + causal mask": 0.95, "7: + second layer": 0.97}
'''),
    Wrong("Exercise 11.1", "the belief that positions add little (without them the "
          "cross-attention can prefer a word of the right kind, never a word at the right place)", '''
def my_predictions():
    return {"0: chapter 3": 0.0, "1: + positions": 0.05, "2: + 4 heads": 0.1,
            "3: + feed-forward": 0.15, "4: + Add & Norm": 0.2,
            "5: + self-attention": 0.1, "6: + causal mask": 0.9, "7: + second layer": 0.95}
'''),
    Wrong("Exercise 11.2", "the signed change averaged (a rise in one sentence cancels a fall in "
          "another)", '''
from dataclasses import replace

def influence(model, batch, i, word):
    due = batch.tgt_out[:, i] != model.pad_id
    def log_prob(tgt_in):
        scores = model(replace(batch, tgt_in=tgt_in))[:, i].log_softmax(-1)
        return scores.gather(-1, batch.tgt_out[:, i, None])[:, 0]
    with torch.no_grad():
        true = log_prob(batch.tgt_in)
        out = []
        for j in range(batch.tgt_in.shape[1]):
            changed = batch.tgt_in.clone()
            changed[:, j] = word
            out.append((log_prob(changed) - true)[due].mean())
    return torch.stack(out)
'''),
    Wrong("Exercise 11.2", "the replacements pile up (the changed inputs were not reset before the "
          "next j)", '''
from dataclasses import replace

def influence(model, batch, i, word):
    due = batch.tgt_out[:, i] != model.pad_id
    def log_prob(tgt_in):
        scores = model(replace(batch, tgt_in=tgt_in))[:, i].log_softmax(-1)
        return scores.gather(-1, batch.tgt_out[:, i, None])[:, 0]
    with torch.no_grad():
        true = log_prob(batch.tgt_in)
        changed = batch.tgt_in.clone()          # once, outside the loop
        out = []
        for j in range(batch.tgt_in.shape[1]):
            changed[:, j] = word
            out.append((log_prob(changed) - true).abs()[due].mean())
    return torch.stack(out)
'''),
    Wrong("Exercise 11.2", "sentences with no word due at position i counted in the average", '''
from dataclasses import replace

def influence(model, batch, i, word):
    def log_prob(tgt_in):
        scores = model(replace(batch, tgt_in=tgt_in))[:, i].log_softmax(-1)
        return scores.gather(-1, batch.tgt_out[:, i, None])[:, 0]
    with torch.no_grad():
        true = log_prob(batch.tgt_in)
        out = []
        for j in range(batch.tgt_in.shape[1]):
            changed = batch.tgt_in.clone()
            changed[:, j] = word
            out.append((log_prob(changed) - true).abs().mean())
    return torch.stack(out)
'''),
    Wrong("Exercise 11.3", "the weight on the previous word (key i - 1), not on the next one (key "
          "i + 1)", '''
def next_word_weight(model, batch):
    tokens = batch.tgt_in
    real = tokens != model.pad_id
    h = model._embed(tokens, model.tgt_embed)
    t = tokens.shape[1]
    future = causal_mask(t) if model.causal else None
    with torch.no_grad():
        _, weights = model.decoder_attn(h, h, h, key_mask=real, attn_mask=future,
                                        need_weights=True)
    i = torch.arange(1, t)
    both = real[:, i] & real[:, i - 1]
    return (weights[:, :, i, i - 1] * both[:, None, :]).sum(dim=(0, 2)) / both.sum()
'''),
    Wrong("Exercise 11.3", "the heads averaged into one number (the exercise asks for one per "
          "head)", '''
def next_word_weight(model, batch):
    tokens = batch.tgt_in
    real = tokens != model.pad_id
    h = model._embed(tokens, model.tgt_embed)
    t = tokens.shape[1]
    future = causal_mask(t) if model.causal else None
    with torch.no_grad():
        _, weights = model.decoder_attn(h, h, h, key_mask=real, attn_mask=future,
                                        need_weights=True)
    i = torch.arange(t - 1)
    both = real[:, i] & real[:, i + 1]
    return ((weights[:, :, i, i + 1] * both[:, None, :]).sum(dim=(0, 2)) / both.sum()).mean()
'''),
    Wrong("Exercise 11.4", "the belief that self-attention by itself sees the word order (without "
          "positions it only permutes its outputs along with its inputs)", '''
def order_blind():
    return {"rung 0": True, "rung 3 without positions": True,
            "rung 6 without positions": False, "rung 1": False, "rung 6": False}
'''),
    Wrong("Exercise 11.4", "the belief that positions change nothing when the words are shuffled "
          "(a shuffled word gets the encoding of its new place, so its vector changes)", '''
def order_blind():
    return {"rung 0": True, "rung 3 without positions": True,
            "rung 6 without positions": True, "rung 1": True, "rung 6": False}
'''),
    Wrong("Exercise 11.5", "an unpaired test (a two-proportion z-test on the two exact-match "
          "rates)", '''
def paired_step(right_below, right_above):
    gained = int((right_above & ~right_below).sum())
    lost = int((right_below & ~right_above).sum())
    n = len(right_below)
    a, b = right_below.float().mean().item(), right_above.float().mean().item()
    pooled = (a + b) / 2
    if pooled in (0.0, 1.0):
        return gained, lost, 1.0
    z = (b - a) / math.sqrt(pooled * (1 - pooled) * 2 / n)
    return gained, lost, math.erfc(abs(z) / math.sqrt(2))
'''),
    Wrong("Exercise 11.5", "a one-sided p-value (the factor 2 forgotten)", '''
def paired_step(right_below, right_above):
    gained = int((right_above & ~right_below).sum())
    lost = int((right_below & ~right_above).sum())
    n = gained + lost
    if n == 0:
        return gained, lost, 1.0
    return gained, lost, sum(math.comb(n, k) for k in range(min(gained, lost) + 1)) / 2**n
'''),
    Wrong("Exercise 11.5", "n counted as all test sentences, not only those where the rungs "
          "disagree", '''
def paired_step(right_below, right_above):
    gained = int((right_above & ~right_below).sum())
    lost = int((right_below & ~right_above).sum())
    n = len(right_below)                      # every test sentence
    tail = sum(math.comb(n, k) for k in range(min(gained, lost) + 1)) / 2**n
    return gained, lost, min(1.0, 2 * tail)
'''),
    Wrong("Exercise 11.5", "McNemar's chi-square (normal) approximation instead of the exact "
          "test", '''
def paired_step(right_below, right_above):
    gained = int((right_above & ~right_below).sum())
    lost = int((right_below & ~right_above).sum())
    if gained + lost == 0:
        return gained, lost, 1.0
    z = (gained - lost) / math.sqrt(gained + lost)
    return gained, lost, math.erfc(abs(z) / math.sqrt(2))
'''),
    Wrong("Exercise 11.5", "a p-value above 1 (the cap at 1, or the case n = 0, forgotten)", '''
def paired_step(right_below, right_above):
    gained = int((right_above & ~right_below).sum())
    lost = int((right_below & ~right_above).sum())
    n = gained + lost
    probs = torch.distributions.Binomial(n, torch.tensor(0.5)).log_prob(
        torch.arange(min(gained, lost) + 1).float()).exp()
    return gained, lost, 2 * probs.sum().item()
'''),
    Wrong("Exercise 11.5", "gained and lost swapped", '''
def paired_step(right_below, right_above):
    gained = int((right_below & ~right_above).sum())     # the lower rung's wins
    lost = int((right_above & ~right_below).sum())
    n = gained + lost
    if n == 0:
        return gained, lost, 1.0
    tail = sum(math.comb(n, k) for k in range(min(gained, lost) + 1)) / 2**n
    return gained, lost, min(1.0, 2 * tail)
'''),
]
