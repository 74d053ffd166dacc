"""Wrong answers to chapter 7's exercises (see ``tests/wrong_answers/__init__.py``)."""

from tests.wrong_answers import Wrong
from utils.checks import MISTAKES

WRONG = [
    Wrong("Exercise 7.1", MISTAKES["unbiased_variance"], '''
def layer_norm_channels_first(x, gamma, beta, eps):
    mu = x.mean(dim=1, keepdim=True)
    var = x.var(dim=1, keepdim=True)               # torch's default: divides by C - 1
    return gamma[:, None] * (x - mu) / torch.sqrt(var + eps) + beta[:, None]
'''),
    Wrong("Exercise 7.1", "statistics over the positions (the last axis), where each token needs "
          "its own over the features (axis 1)", '''
def layer_norm_channels_first(x, gamma, beta, eps):
    mu = x.mean(dim=-1, keepdim=True)              # the chapter's dim=-1, copied
    var = x.var(dim=-1, keepdim=True, unbiased=False)
    return gamma[:, None] * (x - mu) / torch.sqrt(var + eps) + beta[:, None]
'''),
    Wrong("Exercise 7.2", MISTAKES["missing_residual"], '''
def parallel_block(x, key_mask, layer):
    h = layer.norm_1(x)
    attended, _ = layer.self_attn(h, h, h, key_mask=key_mask)
    return attended + layer.feed_forward(h)
'''),
    Wrong("Exercise 7.2",
          "the sub-layers one after the other (the pre-norm block), not side by side", '''
def parallel_block(x, key_mask, layer):
    h = layer.norm_1(x)
    x = x + layer.self_attn(h, h, h, key_mask=key_mask)[0]
    return x + layer.feed_forward(layer.norm_2(x))
'''),
    Wrong("Exercise 7.3", "the final layer norm of the pre-norm stack left out", '''
def gated_encoder_parameters(d_model, d_ff, num_layers):
    attention = 4 * (d_model * d_model + d_model)
    gated = 3 * d_model * d_ff
    norms = 4 * d_model
    return num_layers * (attention + gated + norms)
'''),
    Wrong("Exercise 7.3", "biases counted in the gated network (it has none)", '''
def gated_encoder_parameters(d_model, d_ff, num_layers):
    attention = 4 * (d_model * d_model + d_model)
    gated = 3 * d_model * d_ff + 2 * d_ff + d_model       # biases, as in the chapter's FFN
    return num_layers * (attention + gated + 4 * d_model) + 2 * d_model
'''),
    Wrong("Exercise 7.4", "the belief that the padding queries are hidden too (the key mask "
          "hides keys, not queries: the padding queries read the real key 1 as well)", '''
def padding_prediction():
    my_prediction = (4, 1)      # "padding is masked", so only the real tokens react
    return my_prediction
'''),
    Wrong("Exercise 7.4", "the belief that a masked position reaches no output at all (its own "
          "output still moves, through the residual path and the feed-forward network)", '''
def padding_prediction():
    my_prediction = (6, 0)      # "masked means gone"
    return my_prediction
'''),
    Wrong("Exercise 7.1", "eps added after the square root (sigma + eps, not sqrt(sigma^2 + eps))",
          '''
def layer_norm_channels_first(x, gamma, beta, eps):
    mu = x.mean(dim=1, keepdim=True)
    sigma = ((x - mu) ** 2).mean(dim=1, keepdim=True).sqrt()
    return gamma[:, None] * (x - mu) / (sigma + eps) + beta[:, None]
'''),
    Wrong("Exercise 7.2", "two layer norms (norm_2 before the feed-forward network), where the "
          "parallel block has one", '''
def parallel_block(x, key_mask, layer):
    h = layer.norm_1(x)
    attended, _ = layer.self_attn(h, h, h, key_mask=key_mask)
    return x + attended + layer.feed_forward(layer.norm_2(x))
'''),
    Wrong("Exercise 7.5", "the mean taken over the features (axis -1), not over the positions", '''
def collapse_curve(x, layers, residual):
    def spread(h):
        rest = h - h.mean(dim=-1, keepdim=True)
        return rest.flatten(1).norm(dim=1) / h.flatten(1).norm(dim=1)
    h, curve = x, [spread(x).mean()]
    with torch.no_grad():
        for layer in layers:
            a = layer(h, h, h)[0]
            h = h + a if residual else a
            curve.append(spread(h).mean())
    return torch.stack(curve)
'''),
    Wrong("Exercise 7.5", "the input left out (the curve starts after the first layer)", '''
def collapse_curve(x, layers, residual):
    def spread(h):
        rest = h - h.mean(dim=1, keepdim=True)
        return rest.flatten(1).norm(dim=1) / h.flatten(1).norm(dim=1)
    h, curve = x, []
    with torch.no_grad():
        for layer in layers:
            h = h + layer(h, h, h)[0] if residual else layer(h, h, h)[0]
            curve.append(spread(h).mean())
    return torch.stack(curve)
'''),
]
