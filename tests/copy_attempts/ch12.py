"""Copying submissions to chapter 12's exercises (see ``tests/copy_attempts/__init__.py``)."""

from tests.copy_attempts import Copy

COPIES = [
    # the chapter's own patch code: F.unfold, the convolution, the package's patchify
    Copy("Exercise 12.2", "forbidden", '''
def to_patches(images, patch_size):
    columns = F.unfold(images, kernel_size=patch_size, stride=patch_size)
    return columns.transpose(1, 2)
'''),
    Copy("Exercise 12.2", "forbidden", '''
from utils.vit import patchify

def to_patches(images, patch_size):
    return patchify(images, patch_size)
'''),
    Copy("Exercise 12.2", "forbidden", '''
def to_patches(images, patch_size):
    ch = images.shape[1]
    conv = nn.Conv2d(ch, ch * patch_size ** 2, patch_size, stride=patch_size, bias=False)
    with torch.no_grad():
        conv.weight.copy_(torch.eye(ch * patch_size ** 2).reshape(-1, ch, patch_size, patch_size))
    return conv(images).flatten(2).transpose(1, 2)
'''),
    Copy("Exercise 12.2", "package", '''
from utils.exercises.ch12 import _patches_made_like

to_patches = _patches_made_like()
'''),
    # the classifier's <cls> row, as CLSClassifier reads it, in place of the mean
    Copy("Exercise 12.3", "pasted", '''
def mean_pool(x, key_mask):
    return x[:, 0]
'''),
    Copy("Exercise 12.3", "package", '''
from utils.exercises import ch12

def mean_pool(x, key_mask):
    return ch12._mean_pooled(x, key_mask)
'''),
    # the chapter's [CLS] map: the last layer's head average, no rollout
    Copy("Exercise 12.4", "pasted", '''
def attention_rollout(weights):
    return weights[-1].mean(dim=1)
'''),
    Copy("Exercise 12.4", "package", '''
import utils.exercises.ch12 as reference

attention_rollout = reference._rollout_made_like()
'''),
]
