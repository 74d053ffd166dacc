"""Chapter 12's exercises (BERT and the Vision Transformer): their checks, references and named mistakes.

Shapes: B batch, T tokens, C = d_model, L layers, H heads, Ch channels, I image side, P patch side.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

import utils.bert
import utils.vit
from utils.checks import also_forbidden, verify_function, verify_prediction
from utils.data import make_pairs
from utils.exercises import Question, exercise
from utils.runtime import seed_everything


# ---------------------------------------------------------------------------------------------------
# 12.1 What the model sees at a chosen position
# ---------------------------------------------------------------------------------------------------
def _shares(seed: int) -> tuple[float, float]:
    """Measured on 4,000 sentences: the share of real words shown as <mask>, and the share of chosen
    positions whose input still shows the original word."""
    sentences = [p.src for p in make_pairs(4000, seed=seed, max_clauses=1)]
    vocab = utils.bert.bert_vocab(sentences)
    config = utils.bert.BERTConfig.for_vocab(vocab)
    ids = utils.bert.encode_sentences(sentences, vocab)
    inputs, targets = utils.bert.mask_tokens(ids, config, utils.bert.word_ids(vocab),
                                             torch.Generator().manual_seed(seed))
    real = (ids != config.pad_id) & (ids != config.cls_id)
    chosen = targets != utils.bert.IGNORE
    shown_as_mask = float((inputs[real] == config.mask_id).float().mean())
    still_true = float((inputs[chosen] == ids[chosen]).float().mean())
    return shown_as_mask, still_true


@exercise("12.1", "What the model sees at a chosen position", "Easy", 10, kind="prediction",
          hint="multiply the probabilities along the way: a word is chosen, then replaced by <mask>. "
               "For the second number, count both ways a chosen position can still show its word: "
               "kept on purpose, or replaced by a random word that happens to be the same one",
          questions=[Question(
              "Why does BERT leave some chosen words unchanged and replace others by random words, "
              "instead of showing `<mask>` at every chosen position?",
              ("`<mask>` never occurs when the model is fine-tuned or used, so a model trained only on "
               "`<mask>` positions would learn to predict only where it sees `<mask>`",
               "with unchanged and random words, any position may be one the loss scores, so the model "
               "must keep a good vector for every word, including the ones it sees",
               "random replacements also teach it not to trust the word it sees blindly"), 2)])
def _predict_shares(answer, hidden=False):
    with also_forbidden([(utils.bert, "mask_tokens"), (utils.bert, "mlm_batches")],
                        reason="write the prediction before the experiment runs"):
        verify_prediction(
            answer, name="Exercise 12.1", form=(float, float),
            measure=lambda: _shares(112 if hidden else 12),
            labels=("share of all real words that the input shows as <mask>",
                    "share of the chosen positions whose input still shows the original word"),
            hint=_predict_shares.exercise.hint, atol=0.01,
            misconceptions={
                0: lambda said: ("the belief that every chosen word becomes <mask> (only 80% of "
                                 "them do: 0.15 x 0.8)" if abs(said - 0.15) < 0.01 else None),
                1: lambda said: ("the belief that a chosen word is always hidden (10% are kept, and "
                                 "a random replacement is now and then the same word)"
                                 if abs(said) < 0.01 else None),
            })


# ---------------------------------------------------------------------------------------------------
# 12.2 Patches by reshaping
# ---------------------------------------------------------------------------------------------------
def _patches_made_like(patch_order="rows", pixel_order="channel first", permute=True):
    """The reference (the defaults) or a model answer with one mistake: the patches in column-major
    order, the pixels of a patch with the channel last, or a reshape with no permute."""
    def to_patches(images, patch_size):
        b, ch, height, width = images.shape
        p = patch_size
        if not permute:
            return images.reshape(b, (height // p) * (width // p), ch * p * p)
        x = images.reshape(b, ch, height // p, p, width // p, p)        # (B, Ch, rows, P, cols, P)
        grid = (2, 4) if patch_order == "rows" else (4, 2)
        inside = (1, 3, 5) if pixel_order == "channel first" else (3, 5, 1)
        x = x.permute(0, *grid, *inside)
        return x.reshape(b, (height // p) * (width // p), ch * p * p)
    return to_patches


def _patch_inputs(hidden: bool) -> list[tuple[torch.Tensor, int]]:
    seed_everything(112 if hidden else 12)
    if hidden:  # three channels, a rectangle, a patch as large as the image
        return [(torch.randn(2, 3, 8, 12), 4), (torch.randn(1, 2, 6, 6), 6), (torch.randn(3, 1, 10, 10), 5)]
    return [(torch.randn(2, 1, 8, 8), 4), (torch.randn(1, 3, 6, 6), 2), (torch.randn(2, 2, 12, 12), 3)]


_UNFOLDS = [(F, "unfold"), (nn, "Unfold"), (torch.Tensor, "unfold"), (F, "conv2d"), (nn, "Conv2d"),
            (utils.vit, "patchify"), (utils.vit.PatchEmbedding, "forward"),
            (utils.vit.PatchEmbedding, "as_conv")]


@exercise("12.2", "Patches by reshaping", "Medium", 20,
          hint="split each side of the image into (number of patches, P), move the two patch-grid axes "
               "in front of the channel and the two pixel axes, then flatten: the grid axes into one "
               "patch axis, row by row, and the channel and pixel axes into one feature axis",
          questions=[Question(
              "The Vision Transformer's first layer is a linear map of each flattened patch. Why is "
              "it the same as a convolution whose kernel and stride are both P?",
              ("a convolution with stride P applies its kernel to non-overlapping P x P windows, "
               "exactly the patches",
               "at each window it takes the dot product of the kernel with the window's pixels, one "
               "output channel per kernel: a linear map of the flattened patch, with the kernels as "
               "the rows of the weight matrix"), 2)])
def _to_patches(answer, hidden=False):
    verify_function(
        answer, reference=_patches_made_like(), inputs=_patch_inputs(hidden), name="Exercise 12.2",
        hint=_to_patches.exercise.hint, forbidden=_UNFOLDS, atol=0.0, rtol=0.0,
        mistakes={
            "the patches in column order (down the first column, then the next)":
                (_patches_made_like(patch_order="columns"),
                 "patches are numbered as text is read: along the first row of patches, then the "
                 "next; put the patch-row axis before the patch-column axis"),
            "the channel last inside each patch":
                (_patches_made_like(pixel_order="channel last"),
                 "a convolution's weight is (C, Ch, P, P): inside a patch the channel comes first, "
                 "then the pixel row, then the pixel column"),
            "a reshape with no permute (the numbers regrouped in memory order)":
                (_patches_made_like(permute=False),
                 "a reshape never moves numbers: the pixels of one patch are not next to each other "
                 "in memory, so the axes need a permute before the last reshape"),
        })


# ---------------------------------------------------------------------------------------------------
# 12.3 A sentence vector without the class token
# ---------------------------------------------------------------------------------------------------
def _mean_pooled(x, key_mask):
    """The reference: the mean of the real tokens' vectors, (B, T, C) and (B, T) -> (B, C)."""
    weights = key_mask.to(x.dtype)  # (B, T): 1 at real tokens
    return (weights[..., None] * x).sum(1) / weights.sum(1, keepdim=True)


def _pool_inputs(hidden: bool) -> list[tuple[torch.Tensor, torch.Tensor]]:
    seed_everything(112 if hidden else 12)
    cases = []
    for b, t, c, lengths in ([(2, 5, 3, [5, 2]), (3, 4, 6, [1, 4, 3]), (1, 6, 2, [6])] if not hidden
                             else [(4, 7, 5, [7, 1, 3, 6]), (2, 3, 8, [2, 2]), (1, 1, 4, [1])]):
        key_mask = torch.arange(t)[None, :] < torch.tensor(lengths)[:, None]   # (B, T)
        cases.append((torch.randn(b, t, c), key_mask))
    return cases


@exercise("12.3", "A sentence vector without the class token", "Easy", 10,
          hint="multiply each vector by 1 (real token) or 0 (padding), add them up along the tokens, "
               "and divide by the number of real tokens of that sentence, not by T",
          questions=[Question(
              "The `<cls>` token is a word like any other at the input. Why does its final vector "
              "come to describe the whole sentence?",
              ("in every layer its query attends to all the words of the sentence, so its vector "
               "is built from theirs",
               "fine-tuning sends the classifier's gradient through that one vector only, so "
               "training shapes what it collects, whereas the mean gives every word the same weight"),
              2)])
def _mean_pool(answer, hidden=False):
    verify_function(
        answer, reference=_mean_pooled, inputs=_pool_inputs(hidden), name="Exercise 12.3",
        hint=_mean_pool.exercise.hint,
        mistakes={
            "the padding counted as words (the mean over all T positions)":
                (lambda x, key_mask: x.mean(1),
                 "padding vectors are not words: leave them out of the sum and the count"),
            "the real tokens summed but divided by T":
                (lambda x, key_mask: (key_mask[..., None] * x).sum(1) / x.shape[1],
                 "divide by the number of real tokens of each sentence: key_mask.sum(1)"),
        })


# ---------------------------------------------------------------------------------------------------
# 12.4 Attention rollout
# ---------------------------------------------------------------------------------------------------
def _rollout_made_like(order="first layer first", residual=0.5, renormalise=True):
    """The reference (the defaults) or a model answer with one mistake."""
    def rollout(weights):
        layers, _, _, t, _ = weights.shape
        eye = torch.eye(t, dtype=weights.dtype)
        out = None
        for k in range(layers):
            layer = k if order == "first layer first" else layers - 1 - k
            a = residual * eye + (1 - residual) * weights[layer].mean(1)     # (B, T, T)
            if not renormalise:
                a = weights[layer].mean(1) + eye
            out = a if out is None else a @ out
        return out
    return rollout


def _rollout_inputs(hidden: bool) -> list[tuple[torch.Tensor]]:
    seed_everything(112 if hidden else 12)
    shapes = [(3, 2, 4, 5), (1, 1, 2, 3), (2, 3, 1, 6)] if hidden else [(2, 1, 4, 5), (3, 2, 2, 4),
                                                                        (1, 2, 3, 3)]
    return [(torch.randn(n, b, h, t, t).softmax(-1),) for n, b, h, t in shapes]


@exercise("12.4", "Attention rollout", "Hard", 25,
          hint="per layer: average the heads, then mix in the identity half and half, so each row "
               "still sums to 1. Then chain the layers: the first layer acts first, so its matrix "
               "sits on the right of the product, R = A_(L-1) ... A_1 A_0",
          questions=[Question(
              "Why does rollout add the identity before it multiplies the layers?",
              ("each layer adds the attention's output to its input through a residual connection, "
               "so a token's own vector also flows straight on to the next layer",
               "the attention weights alone leave out that path; half identity and half attention "
               "is the simplest model of the sum, and keeps every row a distribution"), 2)])
def _rollout(answer, hidden=False):
    verify_function(
        answer, reference=_rollout_made_like(), inputs=_rollout_inputs(hidden), name="Exercise 12.4",
        hint=_rollout.exercise.hint,
        mistakes={
            "the layers multiplied in the wrong order (the last layer's matrix on the right)":
                (_rollout_made_like(order="last layer first"),
                 "the first layer's mixing happens first: R = A_(L-1) ... A_0, with A_0 on the right, "
                 "so each new layer multiplies from the left"),
            "no identity for the residual connections (the plain product of the head averages)":
                (_rollout_made_like(residual=0.0),
                 "each layer also passes its input on unchanged: mix half of the identity into each "
                 "layer's averaged weights"),
            "the identity added but the rows not brought back to sums of 1":
                (_rollout_made_like(renormalise=False),
                 "A + I has rows summing to 2: use 0.5 A + 0.5 I, so that every row stays a "
                 "distribution"),
        })
