"""Wrong answers to chapter 6's exercises (see ``tests/wrong_answers/__init__.py``)."""

from tests.wrong_answers import Wrong
from utils.checks import MISTAKES

WRONG = [
    Wrong("Exercise 6.1", "the fastest pair used (w_0 = 1): it comes back to the same point every 2 "
          "pi positions", '''
def offset_between(a, b, base=10000.0):
    turn = math.atan2(float(b[0]), float(b[1])) - math.atan2(float(a[0]), float(a[1]))
    turn = (turn + math.pi) % (2 * math.pi) - math.pi
    return round(turn / 1.0)
'''),
    Wrong("Exercise 6.1", "the turn not brought into (-pi, pi] (an angle just past pi reads as one "
          "near -pi)", '''
def offset_between(a, b, base=10000.0):
    d = a.shape[-1]
    rate = base ** (-(d - 2) / d)
    turn = math.atan2(float(b[-2]), float(b[-1])) - math.atan2(float(a[-2]), float(a[-1]))
    return round(turn / rate)
'''),
    Wrong("Exercise 6.1", "sine and cosine swapped in atan2 (the angle is atan2(sin, cos)), which "
          "turns every offset around", '''
def offset_between(a, b, base=10000.0):
    d = a.shape[-1]
    rate = base ** (-(d - 2) / d)
    turn = math.atan2(float(b[-1]), float(b[-2])) - math.atan2(float(a[-1]), float(a[-2]))
    turn = (turn + math.pi) % (2 * math.pi) - math.pi
    return round(turn / rate)
'''),
    Wrong("Exercise 6.3",
          "neighbouring features paired (2i with 2i + 1) as in the chapter, not i with i + D/2", '''
def rope_rotate_halves(x):
    t, d = x.shape[-2], x.shape[-1]
    theta = torch.arange(t)[:, None] * frequencies(d).float()[None, :]     # (T, D/2)
    cos, sin = torch.cos(theta), torch.sin(theta)
    even, odd = x[..., 0::2], x[..., 1::2]            # the chapter's pairs, copied
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)
'''),
    Wrong("Exercise 6.4", MISTAKES["causal_off_by_one"], '''
def alibi_bias(t, num_heads):
    slopes = 2.0 ** (-8.0 * torch.arange(1, num_heads + 1) / num_heads)
    position = torch.arange(t, dtype=torch.float32)
    distance = position[:, None] - position[None, :]
    future = torch.ones(t, t, dtype=torch.bool).triu(diagonal=2)     # lets i see i + 1
    return (-slopes[:, None, None] * distance).masked_fill(future, float("-inf"))
'''),
    Wrong("Exercise 6.4", "a bonus for distance (+m (i - j)) where ALiBi subtracts a penalty", '''
def alibi_bias(t, num_heads):
    slopes = 2.0 ** (-8.0 * torch.arange(1, num_heads + 1) / num_heads)
    position = torch.arange(t, dtype=torch.float32)
    distance = position[:, None] - position[None, :]          # i - j
    bias = slopes[:, None, None] * distance                   # the sign forgotten
    return bias.masked_fill(distance < 0, float("-inf"))
'''),
    Wrong("Exercise 6.4", MISTAKES["mask_inverted"], '''
def alibi_bias(t, num_heads):
    slopes = 2.0 ** (-8.0 * torch.arange(1, num_heads + 1) / num_heads)
    position = torch.arange(t, dtype=torch.float32)
    distance = position[:, None] - position[None, :]
    bias = -slopes[:, None, None] * distance
    return bias.masked_fill(causal_mask(t), float("-inf"))    # True = may attend, filled
'''),
    Wrong("Exercise 6.2", "positions counted from 1 (a document's first token has position 0)", '''
def packed_positions(doc_ids):
    step = torch.arange(1, doc_ids.shape[1] + 1).expand_as(doc_ids)
    starts = torch.ones_like(doc_ids, dtype=torch.bool)
    starts[:, 1:] = doc_ids[:, 1:] != doc_ids[:, :-1]
    first = torch.where(starts, step, 0).cummax(dim=1).values
    return step - first + 1
'''),
    Wrong("Exercise 6.2", "the document's number within the row, not the token's position within "
          "its document", '''
def packed_positions(doc_ids):
    starts = torch.ones_like(doc_ids)
    starts[:, 1:] = (doc_ids[:, 1:] != doc_ids[:, :-1]).long()
    return starts.cumsum(dim=1) - 1
'''),
    Wrong("Exercise 6.5", "the belief that every dimension is a pair of its own (dimensions "
          "counted, not pairs: each pair is two dimensions)", '''
def full_turns_prediction():
    my_prediction = 20          # the stripes of dimensions 0 to 19
    return my_prediction
'''),
    Wrong("Exercise 6.5", "the belief that a pair's wavelength is 1 / w_i positions (a full turn "
          "is an angle of 2 pi, so the wavelength is 2 pi / w_i)", '''
def full_turns_prediction():
    my_prediction = 16          # 99 w_i >= 1
    return my_prediction
'''),
]
