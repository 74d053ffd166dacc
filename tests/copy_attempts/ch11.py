"""Copying submissions to chapter 11's exercises (see ``tests/copy_attempts/__init__.py``).

Exercises 11.1 and 11.4 are predictions: any prediction in the right form earns its points, so there
is nothing to copy.
"""

from tests.copy_attempts import Copy

COPIES = [
    # the lab's "random later inputs" cell, pasted: every input after i replaced at once, accuracy
    Copy("Exercise 11.2", "pasted", '''
from dataclasses import replace

def influence(model, batch, i, word):
    step = torch.arange(batch.tgt_in.shape[1])
    out = []
    with torch.no_grad():
        for j in range(batch.tgt_in.shape[1]):
            tgt_in = torch.where(step > j, torch.full_like(batch.tgt_in, word), batch.tgt_in)
            guess = model(replace(batch, tgt_in=tgt_in)).argmax(-1)[:, i]
            out.append((guess == batch.tgt_out[:, i]).float().mean())
    return torch.stack(out)
'''),
    Copy("Exercise 11.2", "package", '''
from utils.exercises.ch11 import _influence_made_like

influence = _influence_made_like()
'''),
    Copy("Exercise 11.2", "package", '''
from utils.exercises import ch11

def influence(model, batch, i, word):
    return ch11._influence_made_like()(model, batch, i, word)
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
