"""Wrong answers to chapter 11's exercises (see ``tests/wrong_answers/__init__.py``)."""

from tests.wrong_answers import Wrong
from utils.checks import MISTAKES

WRONG = [
    Wrong("Exercise 11.1", "percentages instead of fractions (write 0.4 for 40%)", '''
def my_predictions():
    return {"0: chapter 3": 0, "1: + positions": 20, "2: + 4 heads": 35,
            "3: + feed-forward": 40, "4: + Add & Norm": 45, "5: + self-attention": 60,
            "6: + causal mask": 95}
'''),
    Wrong("Exercise 11.1", "a missing or misspelt rung (one prediction per name in RUNGS)", '''
def my_predictions():
    return {"0: chapter 3": 0.0, "1: + positions": 0.2, "2: + heads": 0.35,
            "3: + feed-forward": 0.4, "4: + Add & Norm": 0.45, "6: + causal mask": 0.95}
'''),
    Wrong("Exercise 11.2", MISTAKES["causal_off_by_one"], '''
def decoder_self_mask(tgt_in, pad_id):
    t = tgt_in.shape[1]
    allowed = torch.ones(t, t, dtype=torch.bool).tril(diagonal=1)   # lets i see i + 1
    return allowed[None] & (tgt_in != pad_id)[:, None, :]
'''),
    Wrong("Exercise 11.2", "the target's padding left unmasked (the keys at <pad> must be False)",
          '''
def decoder_self_mask(tgt_in, pad_id):
    t = tgt_in.shape[1]
    return torch.ones(t, t, dtype=torch.bool).tril().expand(tgt_in.shape[0], t, t)
'''),
    Wrong("Exercise 11.3", "post-norm, the paper's order (LayerNorm after the residual sum)", '''
def pre_norm_encoder_layer(x, key_mask, layer):
    x = layer.norm_1(x + layer.self_attn(x, x, x, key_mask=key_mask)[0])
    return layer.norm_2(x + layer.feed_forward(x))
'''),
    Wrong("Exercise 11.3", MISTAKES["missing_residual"], '''
def pre_norm_encoder_layer(x, key_mask, layer):
    h = layer.norm_1(x)
    x = layer.self_attn(h, h, h, key_mask=key_mask)[0]
    return layer.feed_forward(layer.norm_2(x))
'''),
    Wrong("Exercise 11.4", "thinking that self-attention by itself sees the word order (without "
          "positions it only permutes its outputs along with its inputs)", '''
def order_blind():
    return {"rung 0": True, "rung 3 without positions": True,
            "rung 6 without positions": False, "rung 1": False, "rung 6": False}
'''),
    Wrong("Exercise 11.5", "gains measured from the first rung instead of the rung just below", '''
def biggest_step(ladder):
    names, values = list(ladder), list(ladder.values())
    best = max(range(1, len(names)), key=lambda i: values[i] - values[0])
    return names[best], values[best] - values[0]
'''),
]
