"""Per-dimension standardisation of word vectors, for probes on badly scaled features.

Decoder language models put a few "massive activation" dimensions thousands of times
larger than the rest into their hidden states (SmolLM2-135M's middle layers among
them). A probe trained on such vectors sees a loss dominated by those dimensions and
diverges or crawls. :class:`Standardizer` subtracts each dimension's mean and divides
by its standard deviation, both measured on the training split; a probe trained with
``train-probe --standardize`` keeps them in its ``probe.json`` (plain numbers, no
pickle) and applies them to every vector it reads.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from brittle.engine.core.errors import ConfigError

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from brittle.scorers.representations import FlatVectors

__all__ = ["MIN_STD", "Standardizer"]

#: Standard deviations below this count as a constant dimension, which is centred but
#: not scaled (scale 1), so a dimension that never varies on the training data cannot
#: blow up on other data.
MIN_STD = 1e-6

V = TypeVar("V", bound="FlatVectors")


@dataclass(frozen=True, eq=False)
class Standardizer:
    """``(x - mean) / std`` per dimension, in float32.

    Attributes:
        mean: (dim,) float32 mean of each dimension on the training vectors.
        std: (dim,) float32 standard deviation (``1`` for constant dimensions).
    """

    mean: NDArray[np.float32]
    std: NDArray[np.float32]

    def __post_init__(self) -> None:
        mean = np.asarray(self.mean, dtype=np.float32)
        std = np.asarray(self.std, dtype=np.float32)
        if mean.ndim != 1 or mean.shape != std.shape:
            raise ConfigError(
                f"standardisation needs a mean and a std of one shape (dim,), "
                f"got {mean.shape} and {std.shape}"
            )
        if not (np.isfinite(mean).all() and np.isfinite(std).all() and (std > 0).all()):
            raise ConfigError("standardisation: every mean must be finite and every std positive")
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "std", std)

    @property
    def dim(self) -> int:
        """Vector size."""
        return int(self.mean.shape[0])

    @classmethod
    def fit(cls, vectors: NDArray[np.float32], *, chunk: int = 65536) -> Standardizer:
        """Mean and standard deviation of each column of ``vectors`` (words, dim).

        Accumulated in float64 over row chunks, so a memory-mapped split is read once
        and never copied whole.
        """
        if vectors.ndim != 2 or vectors.shape[0] == 0:
            raise ConfigError(f"cannot standardise vectors of shape {vectors.shape}")
        n, dim = vectors.shape
        total = np.zeros(dim, dtype=np.float64)
        for start in range(0, n, chunk):
            total += np.asarray(vectors[start : start + chunk], dtype=np.float64).sum(axis=0)
        mean = total / n
        squares = np.zeros(dim, dtype=np.float64)
        for start in range(0, n, chunk):
            part = np.asarray(vectors[start : start + chunk], dtype=np.float64) - mean
            squares += (part * part).sum(axis=0)
        std = np.sqrt(squares / n)
        std[~(std >= MIN_STD)] = 1.0
        return cls(mean.astype(np.float32), std.astype(np.float32))

    def apply(self, words: V) -> V:
        """``words`` with standardised vectors (a new float32 array; the rest shared)."""
        if words.vectors.ndim != 2 or words.vectors.shape[1] != self.dim:
            raise ConfigError(
                f"word vectors of shape {words.vectors.shape} do not fit a standardisation "
                f"of {self.dim} dimensions"
            )
        scaled = (np.asarray(words.vectors, dtype=np.float32) - self.mean) / self.std
        return dataclasses.replace(words, vectors=scaled.astype(np.float32, copy=False))

    def to_dict(self) -> dict[str, list[float]]:
        """JSON-ready form (float32 values written exactly)."""
        return {"mean": self.mean.tolist(), "std": self.std.tolist()}

    @classmethod
    def from_dict(cls, data: object, *, dim: int) -> Standardizer:
        """The standardisation ``to_dict`` wrote, checked against the probe's ``dim``.

        Raises:
            ConfigError: not a mapping of two lists of ``dim`` finite numbers.
        """
        if not isinstance(data, Mapping):
            raise ConfigError("standardize: not a mapping with a mean and a std")
        arrays = []
        for name in ("mean", "std"):
            values = data.get(name)
            if not isinstance(values, list) or not all(
                isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
                for v in values
            ):
                raise ConfigError(f"standardize: {name} is not a list of finite numbers")
            if len(values) != dim:
                raise ConfigError(
                    f"standardize: {name} has {len(values)} values for {dim} dimensions"
                )
            arrays.append(np.asarray(values, dtype=np.float32))
        return cls(arrays[0], arrays[1])
