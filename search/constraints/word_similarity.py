"""``word-similarity``: every changed word must still be read as it was meant, in context.

The value is the least, over the candidate's changed words, of the cosine between the
encoder's vector of the word in the original sentence and that of its replacement (or,
for a reordering, of the moved word itself) in the candidate: the last layer of the
bundled all-MiniLM-L6-v2, the mean of the word's pieces
(:meth:`~brittle.search.sentence_models.SentenceEncoder.word_vectors`). A candidate is
kept when it is at least the bound (``word-similarity:W``; default
:data:`DEFAULT_MIN_WORD_SIMILARITY`, chosen by measurement: docs/constraints.md).

Why beside ``similarity``: one word of another sense barely moves the embedding of a
long sentence ("stops working at clips" keeps 0.87 of "at times"), and a causal LM
finds many wrong-sense synonyms as likely as the right ones; the word's own vector in
context moves far (0.17 for *clips* against *times*, 0.92 for *film* against
*movie*). A word the encoder cannot see (no piece, or beyond its 512 tokens) is not
judged.

The encoder loads at the first check, once per process and device.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from brittle.engine.core.errors import ConfigError
from brittle.search.constraints.base import (
    CONSTRAINTS,
    CandidateBatch,
    Constraint,
    ConstraintContext,
    ConstraintResult,
    changed_words,
    empty_result,
    spec_number,
)
from brittle.search.sentence_models import sentence_encoder

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["DEFAULT_MIN_WORD_SIMILARITY", "WordSimilarityConstraint", "word_similarity"]

#: Least cosine of a changed word's contextual vectors (see docs/constraints.md).
DEFAULT_MIN_WORD_SIMILARITY = 0.6


def word_similarity(
    batches: Sequence[CandidateBatch],
    *,
    path: str | None = None,
    device: str | None = None,
    dtype: str | None = None,
) -> list[NDArray[np.float64]]:
    """Per batch, each candidate's least cosine over its changed words, float64 (m,), in
    [-1, 1] (1.0 when no changed word can be judged).

    One encoder call for every sentence of every batch (sentences already read come
    from the encoder's cache).
    """
    encoder = sentence_encoder(path, device=device, dtype=dtype)
    texts: list[tuple[str, ...]] = []
    for b in batches:
        texts.append(b.original.forms)
        texts.extend(s.forms for s in b.sentences)
    vectors = encoder.word_vectors(texts)
    out: list[NDArray[np.float64]] = []
    row = 0
    for b in batches:
        original = vectors[row].astype(np.float64)
        values = np.ones(len(b), dtype=np.float64)
        for k, p in enumerate(b.perturbations):
            candidate = vectors[row + 1 + k].astype(np.float64)
            at, was = changed_words(p)
            if at:
                cosine = np.einsum("ij,ij->i", candidate[list(at)], original[list(was)])
                cosine = cosine[~np.isnan(cosine)]
                if len(cosine):
                    values[k] = float(np.clip(cosine.min(), -1.0, 1.0))
        out.append(values)
        row += 1 + len(b)
    return out


@CONSTRAINTS.register(
    "word-similarity",
    help="every changed word's MiniLM vector in context keeps a cosine of at least W with "
    f"the original word's (word-similarity:W; default {DEFAULT_MIN_WORD_SIMILARITY})",
)
@dataclass(frozen=True)
class WordSimilarityConstraint(Constraint):
    """Least cosine of a changed word's contextual vectors at least ``min_similarity``.

    Attributes:
        min_similarity: the least cosine kept, in [-1, 1] (``-1``: only measure).
        path: the encoder directory (``None``: the bundled all-MiniLM-L6-v2).
        device: torch device (``None``: ``cuda`` when available, else ``cpu``).
        dtype: precision of the encoder (``None``: the checkpoint's own).
    """

    min_similarity: float = DEFAULT_MIN_WORD_SIMILARITY
    path: str | None = None
    device: str | None = None
    dtype: str | None = None

    name: ClassVar[str] = "word-similarity"
    spec_value: ClassVar[str] = (
        f"least cosine of a changed word in context, in [-1, 1] (default "
        f"{DEFAULT_MIN_WORD_SIMILARITY})"
    )

    @classmethod
    def from_spec(cls, value: str | None, context: ConstraintContext) -> WordSimilarityConstraint:
        cls.check_spec(value)
        bound = spec_number(value, cls.name, DEFAULT_MIN_WORD_SIMILARITY)
        return cls(min_similarity=bound, device=context.device, dtype=context.dtype)

    @classmethod
    def check_spec(cls, value: str | None) -> None:
        _check_bound(spec_number(value, cls.name, DEFAULT_MIN_WORD_SIMILARITY))

    def __post_init__(self) -> None:
        _check_bound(self.min_similarity)

    def describe(self) -> dict[str, object]:
        return {
            "name": self.name,
            "min_similarity": self.min_similarity,
            "model": self.path or "all-MiniLM-L6-v2",
            "layer": "last, mean of the word's pieces",
        }

    def check(self, batch: CandidateBatch) -> ConstraintResult:
        """Values: least cosine over the changed words, float64 (m,); mask: >= bound."""
        return self.check_many([batch])[0]

    def check_many(self, batches: Sequence[CandidateBatch]) -> list[ConstraintResult]:
        """:meth:`check` of several sentences' batches with one encoder call."""
        found = word_similarity(batches, path=self.path, device=self.device, dtype=self.dtype)
        return [
            ConstraintResult(self.name, values >= self.min_similarity, values)
            if len(values)
            else empty_result(self.name)
            for values in found
        ]


def _check_bound(bound: float) -> None:
    if math.isnan(bound) or not -1.0 <= bound <= 1.0:
        raise ConfigError(f"word-similarity: the least cosine must lie in [-1, 1], got {bound}")
