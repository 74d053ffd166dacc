"""Copying submissions to chapter 8's exercises (see ``tests/copy_attempts/__init__.py``)."""

from tests.copy_attempts import Copy

COPIES = [
    # PyTorch's loss reached through the dispatcher's own name (issue 38: it scored before)
    Copy("Exercise 8.1", "forbidden", '''
def smoothed_cross_entropy(logits, targets, epsilon, pad_id):
    return torch.ops.aten.cross_entropy_loss(logits, targets, None, 1, pad_id, epsilon)
''', featured=True),
    Copy("Exercise 8.1", "forbidden", '''
import torch.nn.functional as F

_loss = F.cross_entropy


def smoothed_cross_entropy(logits, targets, epsilon, pad_id, loss=_loss):
    return loss(logits, targets, ignore_index=pad_id, label_smoothing=epsilon)
'''),

    # the library's label smoothing, which the text forbids
    Copy("Exercise 8.1", "forbidden", '''
import torch.nn.functional as F

def smoothed_cross_entropy(logits, targets, epsilon, pad_id):
    return F.cross_entropy(logits, targets, ignore_index=pad_id, label_smoothing=epsilon)
'''),
    Copy("Exercise 8.1", "forbidden", '''
def smoothed_cross_entropy(logits, targets, epsilon, pad_id):
    loss = torch.nn.modules.loss.CrossEntropyLoss(ignore_index=pad_id, label_smoothing=epsilon)
    return loss(logits, targets)
'''),
    # what F.cross_entropy calls underneath
    Copy("Exercise 8.1", "forbidden", '''
def smoothed_cross_entropy(logits, targets, epsilon, pad_id):
    return torch._C._nn.cross_entropy_loss(logits, targets, None, 1, pad_id, epsilon)
'''),
    # the chapter's teacher_forcing_loss (shown with show_source), adapted to a batch of logits
    Copy("Exercise 8.1", "pasted", '''
import torch.nn.functional as F

def smoothed_cross_entropy(logits, targets, epsilon, pad_id):
    return F.cross_entropy(logits.flatten(0, -2), targets.flatten(),
                           ignore_index=pad_id, label_smoothing=epsilon)
'''),
    Copy("Exercise 8.1", "package", '''
from utils.exercises import ch08

def smoothed_cross_entropy(logits, targets, epsilon, pad_id):
    return ch08._smoothed_reference(logits, targets, epsilon, pad_id)
'''),
    # the chapter's make_batch, which the text asks to replace, fed with the ids as words
    Copy("Exercise 8.2", "forbidden", '''
from utils.data import Pair, Vocab, make_batch

def teacher_forcing_pair(ids, bos_id, eos_id, pad_id):
    sentences = [tuple(str(w) for w in row if w != pad_id) for row in ids.tolist()]
    vocab = Vocab(w for s in sentences for w in s)
    batch = make_batch([Pair(s, s, ()) for s in sentences], vocab, vocab)
    back = [pad_id, bos_id, eos_id, pad_id] + [int(w) for w in vocab.itos[4:]]
    back = torch.tensor(back, dtype=ids.dtype)             # vocabulary id -> the caller's id
    tgt_in = torch.full((len(ids), ids.shape[1] + 1), pad_id, dtype=ids.dtype)
    tgt_out, width = tgt_in.clone(), batch.tgt_in.shape[1]
    tgt_in[:, :width], tgt_out[:, :width] = back[batch.tgt_in], back[batch.tgt_out]
    return tgt_in, tgt_out
'''),
    Copy("Exercise 8.2", "package", '''
import utils.exercises.ch08 as reference

def teacher_forcing_pair(ids, bos_id, eos_id, pad_id):
    return reference._pair_by_lists(ids, bos_id, eos_id, pad_id)
'''),
    # the chapter's comparison of beam and greedy log-probabilities, pasted
    Copy("Exercise 8.3", "pasted", '''
def error_kinds(lp_output, lp_reference, correct):
    return (lp_reference > lp_output).long()
'''),
    Copy("Exercise 8.3", "returned", '''
def error_kinds(lp_output, lp_reference, correct):
    return torch.zeros(len(correct), dtype=torch.long)      # "everything is correct"
'''),
    Copy("Exercise 8.3", "package", '''
from utils.exercises.ch08 import _kinds_made_like

error_kinds = _kinds_made_like()
'''),
    Copy("Exercise 8.4", "package", '''
from utils.exercises import ch08

best_hypothesis = ch08._best_by(ch08._normalised)
'''),
    Copy("Exercise 8.4", "package", '''
import utils.exercises.ch08

def best_hypothesis(token_log_probs, lengths, alpha):
    return max(range(len(lengths)), key=lambda r: utils.exercises.ch08._normalised(
        token_log_probs[r], int(lengths[r]), alpha))
'''),
]
