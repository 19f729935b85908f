"""Probe architectures and batch padding (torch; imported only when a probe is used).

Every probe maps each word vector ``h`` (dim,) to an output (out,) with one of two
architectures:

- ``linear``: ``B h`` (no bias for the distance/depth probes, whose B is the rank-r
  matrix of Hewitt & Manning; with a bias for the classifiers);
- ``mlp``: three hidden layers of ``hidden`` units, each followed by ReLU, then a linear
  output layer (La Malfa et al.'s MLP probe).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch
from numpy.typing import NDArray
from torch import nn

from brittle.engine.core.errors import ConfigError

if TYPE_CHECKING:
    from brittle.scorers.representations import FlatVectors

__all__ = ["ARCHITECTURES", "PaddedBatch", "make_net", "pad_flat"]

#: Architecture names.
ARCHITECTURES: tuple[str, ...] = ("linear", "mlp")


def make_net(arch: str, dim: int, out: int, *, hidden: int, bias: bool) -> nn.Module:
    """The word-level network of a probe: (..., dim) -> (..., out).

    Args:
        arch: ``linear`` or ``mlp``.
        dim: input size.
        out: output size (the rank, the number of classes, or 1).
        hidden: width of the MLP's hidden layers.
        bias: whether the (last) linear layer has a bias.
    """
    if arch == "linear":
        return nn.Linear(dim, out, bias=bias)
    if arch == "mlp":
        return nn.Sequential(
            nn.Linear(dim, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, out, bias=bias),
        )
    raise ConfigError(f"unknown probe architecture {arch!r} (known: {', '.join(ARCHITECTURES)})")


@dataclass(frozen=True)
class PaddedBatch:
    """Word vectors of a batch of sentences, padded.

    Attributes:
        x: shape (b, n_max, dim), float32; padding positions are zero.
        mask: shape (b, n_max), bool; True on real words.
        lengths: shape (b,), int64, words per sentence.
    """

    x: torch.Tensor
    mask: torch.Tensor
    lengths: torch.Tensor

    def __len__(self) -> int:
        return int(self.x.shape[0])

    def to(self, device: str) -> PaddedBatch:
        """The batch on ``device``."""
        return PaddedBatch(self.x.to(device), self.mask.to(device), self.lengths.to(device))


def pad_flat(
    words: FlatVectors,
    index: Sequence[int] | NDArray[np.int64] | None = None,
) -> PaddedBatch:
    """Pad sentences stored flat (all words in one array) without a per-sentence loop.

    Args:
        words: vectors (total_words, dim) float32 (a memory map is fine) and word
            offsets (n_sentences + 1,) int64.
        index: which sentences, in which order (all by default).

    Returns:
        The batch: x (b, n_max, dim), mask (b, n_max), lengths (b,).
    """
    offs = np.asarray(words.offsets, dtype=np.int64)
    sel = np.arange(offs.shape[0] - 1) if index is None else np.asarray(index, dtype=np.int64)
    starts = offs[sel]
    lengths = offs[sel + 1] - starts
    width = int(lengths.max()) if lengths.size else 0
    pos = np.arange(width, dtype=np.int64)
    valid = pos[None, :] < lengths[:, None]
    rows = np.where(valid, starts[:, None] + pos[None, :], 0)
    x = np.asarray(words.vectors[rows.reshape(-1)], dtype=np.float32).reshape(len(sel), width, -1)
    x[~valid] = 0.0
    return PaddedBatch(
        torch.from_numpy(x), torch.from_numpy(valid), torch.from_numpy(lengths.copy())
    )
