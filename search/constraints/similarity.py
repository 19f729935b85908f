"""``similarity``: a candidate must mean nearly what the original means.

The value is the cosine similarity of the sentence embeddings of original and
candidate, from the bundled all-MiniLM-L6-v2 used as it was trained for sentence
embeddings (mean of the last layer over the real tokens, L2 normalised; see
:mod:`brittle.search.sentence_models`). A candidate is kept when the cosine is at least
the bound (``similarity:S``; default :data:`DEFAULT_MIN_SIMILARITY`, chosen by
measurement: docs/constraints.md). It applies alike to substitutions and reorderings.

The encoder loads at the first check, once per process and device.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Self

import numpy as np

from brittle.engine.core.errors import ConfigError
from brittle.search.constraints.base import (
    CONSTRAINTS,
    CandidateBatch,
    Constraint,
    ConstraintContext,
    ConstraintResult,
    empty_result,
    spec_number,
)
from brittle.search.sentence_models import pair_texts, sentence_encoder

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "DEFAULT_MIN_SIMILARITY",
    "EncoderCosineConstraint",
    "SimilarityConstraint",
    "sentence_similarity",
]

#: Least cosine similarity of the MiniLM sentence embeddings (see docs/constraints.md).
DEFAULT_MIN_SIMILARITY = 0.8


def sentence_similarity(
    batches: Sequence[CandidateBatch],
    *,
    path: str | None = None,
    device: str | None = None,
    dtype: str | None = None,
) -> list[NDArray[np.float64]]:
    """Per batch, each candidate's cosine similarity to the original, float64 (m,).

    One encoder call for every text of every batch (texts already embedded come from
    the encoder's cache).
    """
    encoder = sentence_encoder(path, device=device, dtype=dtype)
    first: list[str] = []
    second: list[str] = []
    for b in batches:
        for sentence, p in zip(b.sentences, b.perturbations, strict=True):
            a, c = pair_texts(b.original, sentence, p)
            first.append(a)
            second.append(c)
    cosine = encoder.similarity(first, second)
    out = []
    start = 0
    for b in batches:
        out.append(cosine[start : start + len(b)].copy())
        start += len(b)
    return out


@dataclass(frozen=True)
class EncoderCosineConstraint(Constraint):
    """A cosine measured with the sentence encoder, kept when at least ``min_similarity``
    (the shared body of ``similarity`` and ``word-similarity``; subclasses say what
    they measure in :meth:`measure` and register themselves).

    Attributes:
        min_similarity: the least cosine kept, in [-1, 1] (``-1``: only measure).
        path: the encoder directory (``None``: the bundled all-MiniLM-L6-v2).
        device: torch device (``None``: ``cuda`` when available, else ``cpu``).
        dtype: precision of the encoder (``None``: the checkpoint's own).
    """

    min_similarity: float = DEFAULT_MIN_SIMILARITY
    path: str | None = None
    device: str | None = None
    dtype: str | None = None

    #: The bound of a spec given without a value.
    default_bound: ClassVar[float] = DEFAULT_MIN_SIMILARITY

    @classmethod
    def from_spec(cls, value: str | None, context: ConstraintContext) -> Self:
        cls.check_spec(value)
        bound = spec_number(value, cls.name, cls.default_bound)
        return cls(min_similarity=bound, device=context.device, dtype=context.dtype)

    @classmethod
    def check_spec(cls, value: str | None) -> None:
        _check_bound(cls.name, spec_number(value, cls.name, cls.default_bound))

    def __post_init__(self) -> None:
        _check_bound(self.name, self.min_similarity)

    def describe(self) -> dict[str, object]:
        return {
            "name": self.name,
            "min_similarity": self.min_similarity,
            "model": self.path or "all-MiniLM-L6-v2",
        }

    @abstractmethod
    def measure(self, batches: Sequence[CandidateBatch]) -> list[NDArray[np.float64]]:
        """Per batch, each candidate's cosine, float64 (m,), in [-1, 1]."""

    def check(self, batch: CandidateBatch) -> ConstraintResult:
        """Values: the cosine, float64 (m,); mask: >= the bound."""
        return self.check_many([batch])[0]

    def check_many(self, batches: Sequence[CandidateBatch]) -> list[ConstraintResult]:
        """:meth:`check` of several sentences' batches with one encoder call."""
        return [
            ConstraintResult(self.name, values >= self.min_similarity, values)
            if len(values)
            else empty_result(self.name)
            for values in self.measure(batches)
        ]


@CONSTRAINTS.register(
    "similarity",
    help="cosine of the MiniLM sentence embeddings of original and candidate is at least S "
    f"(similarity:S; default {DEFAULT_MIN_SIMILARITY})",
)
@dataclass(frozen=True)
class SimilarityConstraint(EncoderCosineConstraint):
    """Cosine similarity of the sentence embeddings at least ``min_similarity``
    (attributes: :class:`EncoderCosineConstraint`)."""

    spec_value: ClassVar[str] = (
        f"least cosine similarity, in [-1, 1] (default {DEFAULT_MIN_SIMILARITY})"
    )

    def measure(self, batches: Sequence[CandidateBatch]) -> list[NDArray[np.float64]]:
        """Per batch, the cosine of each candidate's sentence embedding with the
        original's, float64 (m,)."""
        return sentence_similarity(batches, path=self.path, device=self.device, dtype=self.dtype)


def _check_bound(name: str, bound: float) -> None:
    if math.isnan(bound) or not -1.0 <= bound <= 1.0:
        raise ConfigError(f"{name}: the least cosine must lie in [-1, 1], got {bound}")
