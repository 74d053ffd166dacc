"""Copying submissions to chapter 11's exercises (see ``tests/copy_attempts/__init__.py``).

Exercises 11.1 and 11.4 are predictions: any prediction in the right form earns its points, so there
is nothing to copy.
"""

from tests.copy_attempts import Copy

COPIES = [
    # the combination read back from the attention layer that the lab lets combine the two masks
    Copy("Exercise 11.2", "forbidden", '''
def decoder_self_mask(tgt_in, pad_id):
    b, t = tgt_in.shape
    mha = MultiHeadAttention(4, 1)
    x = torch.randn(b, t, 4)
    _, weights = mha(x, x, x, key_mask=tgt_in != pad_id, attn_mask=causal_mask(t),
                     need_weights=True)
    return weights[:, 0] > 0                          # (B, T, T): where attention may go
'''),
    Copy("Exercise 11.2", "forbidden", '''
from utils.attention import scaled_dot_product_attention

def decoder_self_mask(tgt_in, pad_id):
    b, t = tgt_in.shape
    q = torch.randn(b, t, 4)
    mask = (tgt_in != pad_id)[:, None, :] & causal_mask(t)
    _, weights = scaled_dot_product_attention(q, q, q, mask)
    return weights > 0
'''),
    # pasted from LadderTranslator.decode: the causal part alone
    Copy("Exercise 11.2", "pasted", '''
def decoder_self_mask(tgt_in, pad_id):
    t = tgt_in.shape[1]
    future = causal_mask(t, tgt_in.device)
    return future[None].expand(tgt_in.shape[0], t, t)
'''),
    Copy("Exercise 11.2", "package", '''
from utils.exercises.ch11 import _decoder_mask as decoder_self_mask
'''),
    Copy("Exercise 11.2", "package", '''
from utils.exercises import ch11

def decoder_self_mask(tgt_in, pad_id):
    return ch11._decoder_mask(tgt_in, pad_id)
'''),
    # "Do not call layer(...) itself": the package's own pre-norm path
    Copy("Exercise 11.3", "forbidden", '''
def pre_norm_encoder_layer(x, key_mask, layer):
    layer.norm_first = True
    return layer(x, key_mask)[0]
'''),
    Copy("Exercise 11.3", "forbidden", '''
import copy

def pre_norm_encoder_layer(x, key_mask, layer):
    twin = copy.deepcopy(layer)
    twin.norm_first = True
    return twin.forward(x, key_mask)[0]
'''),
    # pasted from LadderTranslator._sublayer (Add & Norm, the ladder's post-norm)
    Copy("Exercise 11.3", "pasted", '''
def pre_norm_encoder_layer(x, key_mask, layer):
    x = layer.norm_1(x + layer.self_attn(x, x, x, key_mask=key_mask)[0])
    return layer.norm_2(x + layer.feed_forward(x))
'''),
    Copy("Exercise 11.3", "package", '''
import utils.exercises.ch11 as reference

def pre_norm_encoder_layer(x, key_mask, layer):
    return reference._pre_norm(x, key_mask, layer)
'''),
    # the notebook's own ladder read off (the Answer's rung 6), whatever ladder is given
    Copy("Exercise 11.5", "returned", '''
def biggest_step(ladder):
    return "6: + causal mask", 0.85
'''),
    Copy("Exercise 11.5", "package", '''
from utils.exercises import ch11

biggest_step = ch11._biggest
'''),
    Copy("Exercise 11.5", "package", '''
from utils.exercises import ch11

def biggest_step(ladder):
    return max(ch11._steps(ladder), key=lambda step: step[1])
'''),
]
