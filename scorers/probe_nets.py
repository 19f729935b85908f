"""Probe architectures and batch padding (torch; imported only when a probe is used).

Every probe maps the word vectors of a sentence (n, dim) to one output per word
(n, out), with one of three architectures:

- ``linear``: ``B h`` for each word vector ``h`` on its own (no bias for the
  distance/depth probes, whose B is the rank-r matrix of Hewitt & Manning; with a bias
  for the classifiers);
- ``mlp``: for each word on its own, three hidden layers of ``hidden`` units, each
  followed by ReLU, then a linear output layer;
- ``sentence``: La Malfa et al.'s probe, the same fully connected layers over the whole
  sentence at once: its word vectors cut or zero-padded to ``words`` and concatenated
  (``words * dim`` inputs), ``words * out`` outputs read back as one per word. It sees
  only the first ``words`` words; cut longer sentences first (``brittle cut``).
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

__all__ = ["PaddedBatch", "SentenceNet", "make_net", "pad_flat"]


def _layers(inputs: int, out: int, *, hidden: int, bias: bool) -> nn.Sequential:
    """Three hidden layers of ``hidden`` units with ReLU, then a linear output layer."""
    return nn.Sequential(
        nn.Linear(inputs, hidden),
        nn.ReLU(),
        nn.Linear(hidden, hidden),
        nn.ReLU(),
        nn.Linear(hidden, hidden),
        nn.ReLU(),
        nn.Linear(hidden, out, bias=bias),
    )


class SentenceNet(nn.Module):
    """One fully connected network over a whole sentence: (b, n, dim) -> (b, n, out).

    The first ``words`` word vectors of each sentence, zero-padded to ``words``, are
    concatenated into one input of ``words * dim``; the output, ``words * out``, is
    read back as ``out`` values per word. Words past ``words`` are not seen: their
    outputs are zeros. A batch's padding positions must be zeros (as
    :class:`PaddedBatch` guarantees), so a sentence's outputs do not depend on the
    sentences it is batched with.
    """

    def __init__(self, dim: int, out: int, *, words: int, hidden: int, bias: bool) -> None:
        super().__init__()
        self.words = words
        self.out = out
        self.layers = _layers(words * dim, words * out, hidden=hidden, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, dim = x.shape
        w = self.words
        seen = min(n, w)
        padded = x.new_zeros((b, w, dim))
        padded[:, :seen] = x[:, :seen]
        y = self.layers(padded.reshape(b, w * dim)).reshape(b, w, self.out)
        if n <= w:
            return y[:, :n]
        return torch.cat([y, y.new_zeros((b, n - w, self.out))], dim=1)


def make_net(arch: str, dim: int, out: int, *, hidden: int, bias: bool, words: int) -> nn.Module:
    """The network of a probe: (b, n, dim) -> (b, n, out) (the word-level ones also
    take (..., dim) -> (..., out)).

    Args:
        arch: ``linear``, ``mlp`` or ``sentence`` (see the module docstring).
        dim: size of a word vector.
        out: output size per word (the rank, the number of classes, or 1).
        hidden: width of the hidden layers (``mlp``, ``sentence``).
        bias: whether the (last) linear layer has a bias.
        words: words per sentence the ``sentence`` network reads.
    """
    if arch == "linear":
        return nn.Linear(dim, out, bias=bias)
    if arch == "mlp":
        return _layers(dim, out, hidden=hidden, bias=bias)
    if arch == "sentence":
        return SentenceNet(dim, out, words=words, hidden=hidden, bias=bias)
    # ProbeSpec lists the known ones (probe_tasks.PROBE_ARCHITECTURES)
    raise ConfigError(f"unknown probe architecture {arch!r}")


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
