"""A tiny Vision Transformer on images the course draws itself (chapter 12).

Shape legend: B batch, Ch image channels, I image side (pixels), P patch side, R = I / P patches a
side, R^2 patches, T = 1 + R^2 tokens ([CLS] and the patches), C = d_model, L layers, H heads, K classes.

The Vision Transformer (Dosovitskiy et al., 2021) reads an image as a sentence of patches: cut it into
P x P squares, flatten each square and project it with one linear layer (the *patch embedding*, the
same as a convolution whose kernel and stride are P), put a learned ``[CLS]`` vector in front, add
learned positions, and run the encoder of chapter 7 (pre-norm, as in the paper). A linear layer on the
final ``[CLS]`` vector classifies the image.

The images: a small glyph (a plus, a cross, a ring or a corner) drawn at a random place on a noisy
I x I canvas. The class is the glyph; where it sits is random, so the model has to find it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from utils.positional import LearnedPositionalEncoding
from utils.transformer import Encoder, check_sizes

GLYPHS: dict[str, tuple[str, ...]] = {  # 5 x 5 pictures, '#' = ink
    "plus": ("..#..", "..#..", "#####", "..#..", "..#.."),
    "cross": ("#...#", ".#.#.", "..#..", ".#.#.", "#...#"),
    "ring": ("#####", "#...#", "#...#", "#...#", "#####"),
    "corner": ("#....", "#....", "#....", "#....", "#####"),
}
CLASSES: tuple[str, ...] = tuple(GLYPHS)


def _glyph(name: str) -> torch.Tensor:
    return torch.tensor([[float(c == "#") for c in row] for row in GLYPHS[name]])  # (5, 5)


def make_images(n: int, seed: int = 0, size: int = 16, noise: float = 0.3
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Draw n images (n, 1, I, I) with their labels (n,) and the glyph's top-left corner (n, 2).

    Each image is Gaussian noise of standard deviation ``noise`` plus one glyph of ink 1, whose class
    cycles through ``CLASSES`` and whose place is uniform over the canvas.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if size < 5:
        raise ValueError(f"the canvas must be at least 5 pixels wide to hold a glyph, got {size}")
    generator = torch.Generator().manual_seed(seed)
    images = noise * torch.randn(n, 1, size, size, generator=generator)
    labels = torch.arange(n) % len(CLASSES)
    corners = torch.randint(size - 4, (n, 2), generator=generator)  # row, column of the glyph
    glyphs = torch.stack([_glyph(name) for name in CLASSES])  # (K, 5, 5)
    for k in range(n):
        r, c = corners[k].tolist()
        images[k, 0, r:r + 5, c:c + 5] += glyphs[labels[k]]
    return images, labels, corners


def check_images(images: torch.Tensor, patch_size: int) -> None:
    """Raise a clear ValueError unless images is (B, Ch, I, I) with I a multiple of ``patch_size``."""
    if not isinstance(images, torch.Tensor) or images.dim() != 4:
        shape = tuple(images.shape) if isinstance(images, torch.Tensor) else type(images).__name__
        raise ValueError(f"images must be (batch, channels, height, width), got {shape}")
    height, width = images.shape[-2:]
    if height % patch_size or width % patch_size:
        raise ValueError(f"an image of {height} x {width} pixels does not split into {patch_size} x "
                         f"{patch_size} patches: both sides must be multiples of {patch_size}")


def patchify(images: torch.Tensor, patch_size: int) -> torch.Tensor:
    """(B, Ch, I, I) -> (B, R^2, Ch * P * P): patches in reading order (row by row), each flattened
    channel, then row, then column, the order of a convolution's weight (C, Ch, P, P)."""
    check_images(images, patch_size)
    b, ch, height, width = images.shape
    p = patch_size
    x = images.reshape(b, ch, height // p, p, width // p, p)  # (B, Ch, rows, P, cols, P)
    x = x.permute(0, 2, 4, 1, 3, 5)  # (B, rows, cols, Ch, P, P)
    return x.reshape(b, (height // p) * (width // p), ch * p * p)  # (B, R^2, Ch * P * P)


class PatchEmbedding(nn.Module):
    """Flattened patches times one matrix: (B, Ch, I, I) -> (B, R^2, C)."""

    def __init__(self, channels: int, patch_size: int, d_model: int):
        super().__init__()
        self.patch_size = patch_size
        self.proj = nn.Linear(channels * patch_size * patch_size, d_model)  # (Ch P P, C)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.proj(patchify(images, self.patch_size))  # (B, R^2, Ch P P) -> (B, R^2, C)

    def as_conv(self) -> nn.Conv2d:
        """The same map as ``nn.Conv2d`` with kernel and stride P, its weights copied from ours."""
        c_out, c_in = self.proj.out_features, self.proj.in_features // self.patch_size ** 2
        conv = nn.Conv2d(c_in, c_out, self.patch_size, stride=self.patch_size)
        with torch.no_grad():
            conv.weight.copy_(self.proj.weight.reshape(c_out, c_in, self.patch_size, self.patch_size))
            conv.bias.copy_(self.proj.bias)
        return conv


@dataclass(frozen=True)
class ViTConfig:
    """Sizes of the tiny Vision Transformer."""

    image_size: int = 16
    patch_size: int = 4
    channels: int = 1
    num_classes: int = len(CLASSES)
    d_model: int = 64
    num_heads: int = 4
    num_layers: int = 2
    d_ff: int = 128
    dropout: float = 0.0

    def __post_init__(self) -> None:
        check_sizes(self, ("image_size", "patch_size", "channels", "num_classes", "d_model",
                           "num_heads", "num_layers", "d_ff"))
        if self.image_size % self.patch_size:
            raise ValueError(f"image_size={self.image_size} is not a multiple of "
                             f"patch_size={self.patch_size}")

    @property
    def num_patches(self) -> int:
        return (self.image_size // self.patch_size) ** 2


class VisionTransformer(nn.Module):
    """Patch embedding, a learned [CLS] vector in front, learned positions, an L-layer pre-norm
    ``Encoder``, a linear classifier on the final [CLS] vector: (B, Ch, I, I) -> logits (B, K)."""

    def __init__(self, config: ViTConfig):
        super().__init__()
        if not isinstance(config, ViTConfig):
            raise TypeError(f"VisionTransformer takes a ViTConfig, got {type(config).__name__}")
        c = self.config = config
        self.patches = PatchEmbedding(c.channels, c.patch_size, c.d_model)
        self.cls = nn.Parameter(torch.zeros(1, 1, c.d_model))  # (1, 1, C), learned
        self.positional = LearnedPositionalEncoding(c.d_model, c.num_patches + 1, c.dropout)
        self.encoder = Encoder(c.num_layers, c.d_model, c.num_heads, c.d_ff, c.dropout, norm_first=True)
        self.head = nn.Linear(c.d_model, c.num_classes)

    def tokens(self, images: torch.Tensor) -> torch.Tensor:
        """(B, Ch, I, I) -> (B, T, C), T = 1 + R^2: [CLS] then the patches, positions added."""
        c = self.config
        if images.dim() != 4 or tuple(images.shape[1:]) != (c.channels, c.image_size, c.image_size):
            raise ValueError(f"images must be (batch, {c.channels}, {c.image_size}, {c.image_size}), "
                             f"got {tuple(images.shape)}")
        x = self.patches(images)  # (B, R^2, C)
        x = torch.cat([self.cls.expand(len(x), -1, -1), x], dim=1)  # (B, T, C)
        return self.positional(x)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        x, _ = self.encoder(self.tokens(images))  # (B, T, C)
        return self.head(x[:, 0])  # the [CLS] row: (B, C) -> (B, K)

    @torch.no_grad()
    def attention_weights(self, images: torch.Tensor) -> torch.Tensor:
        """Self-attention weights of every layer and head: (L, B, H, T, T); token 0 is [CLS]."""
        _, weights = self.encoder(self.tokens(images), need_weights=True)
        return torch.stack(weights)


def cls_attention_map(weights: torch.Tensor, config: ViTConfig) -> torch.Tensor:
    """What [CLS] attends to, averaged over heads, as a patch grid: (L, B, H, T, T) -> (L, B, R, R)
    (the weight on [CLS] itself is left out)."""
    side = config.image_size // config.patch_size
    row = weights[:, :, :, 0, 1:].mean(2)  # (L, B, R^2)
    return row.reshape(*row.shape[:2], side, side)


def glyph_patches(corners: Sequence[Sequence[int]] | torch.Tensor, config: ViTConfig) -> torch.Tensor:
    """(B, R, R) bool: the patches that the glyph's 5 x 5 square overlaps, from its top-left corner."""
    side, p = config.image_size // config.patch_size, config.patch_size
    out = torch.zeros(len(corners), side, side, dtype=torch.bool)
    for k, (r, c) in enumerate(torch.as_tensor(corners).tolist()):
        out[k, r // p:(r + 4) // p + 1, c // p:(c + 4) // p + 1] = True
    return out
