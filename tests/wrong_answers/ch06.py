"""Wrong answers to chapter 6's exercises (see ``tests/wrong_answers/__init__.py``)."""

from tests.wrong_answers import Wrong
from utils.checks import MISTAKES

WRONG = [
    Wrong("Exercise 6.1",
          "a frequency with i in the exponent where the formula has 2i (base^(-i / d_model))", '''
def half_split_table(max_len, d_model, base):
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    rates = base ** (-torch.arange(d_model // 2, dtype=torch.float64) / d_model)   # i, not 2i
    angles = position * rates
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1).float()
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
    Wrong("Exercise 6.2", "one frequency per feature (d_model terms), where the encoding has one "
          "per pair (d_model / 2 terms)", '''
def encoding_similarity(offsets, d_model):
    rates = 10000.0 ** (-torch.arange(d_model, dtype=torch.float64) / d_model)
    return torch.cos(offsets.double()[:, None] * rates).sum(dim=-1).float()
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
