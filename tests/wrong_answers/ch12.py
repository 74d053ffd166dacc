"""Wrong answers to chapter 12's exercises (see ``tests/wrong_answers/__init__.py``)."""

from tests.wrong_answers import Wrong

WRONG = [
    Wrong("Exercise 12.1", "the belief that every chosen word becomes <mask>", '''
def predicted_shares():
    return 0.15, 0.0                 # every chosen word hidden
'''),
    Wrong("Exercise 12.2", "the patches in column order", '''
def to_patches(images, patch_size):
    b, ch, height, width = images.shape
    p = patch_size
    x = images.reshape(b, ch, height // p, p, width // p, p)
    x = x.permute(0, 4, 2, 1, 3, 5)           # patch columns first
    return x.reshape(b, -1, ch * p * p)
'''),
    Wrong("Exercise 12.2", "the channel last inside each patch", '''
def to_patches(images, patch_size):
    b, ch, height, width = images.shape
    p = patch_size
    x = images.permute(0, 2, 3, 1)            # channels last, as in an image file
    x = x.reshape(b, height // p, p, width // p, p, ch).permute(0, 1, 3, 2, 4, 5)
    return x.reshape(b, -1, p * p * ch)
'''),
    Wrong("Exercise 12.2", "a reshape with no permute", '''
def to_patches(images, patch_size):
    b, ch, height, width = images.shape
    return images.reshape(b, -1, ch * patch_size * patch_size)
'''),
    Wrong("Exercise 12.3", "the padding counted as words", '''
def mean_pool(x, key_mask):
    return x.mean(dim=1)
'''),
    Wrong("Exercise 12.3", "the real tokens summed but divided by T", '''
def mean_pool(x, key_mask):
    return (x * key_mask[..., None]).sum(dim=1) / x.shape[1]
'''),
    Wrong("Exercise 12.4", "the layers multiplied in the wrong order", '''
def attention_rollout(weights):
    eye = torch.eye(weights.shape[-1])
    rollout = eye
    for layer in weights:
        rollout = rollout @ (0.5 * layer.mean(dim=1) + 0.5 * eye)   # new layer on the right
    return rollout
'''),
    Wrong("Exercise 12.4", "no identity for the residual connections", '''
def attention_rollout(weights):
    rollout = weights[0].mean(dim=1)
    for layer in weights[1:]:
        rollout = layer.mean(dim=1) @ rollout
    return rollout
'''),
    Wrong("Exercise 12.4", "the identity added but the rows not brought back to sums of 1", '''
def attention_rollout(weights):
    eye = torch.eye(weights.shape[-1])
    rollout = eye
    for layer in weights:
        rollout = (layer.mean(dim=1) + eye) @ rollout
    return rollout
'''),
]
