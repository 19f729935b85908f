"""``word-similarity``: every changed word must still be read as it was meant, in context.

The value is the least, over the candidate's changed words, of the cosine between the
encoder's vector of the word in the original sentence and that of its replacement (or,
for a reordering, of the moved word itself) in the candidate: the last layer of the
bundled all-MiniLM-L6-v2, the mean of the word's unit-length piece vectors
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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from brittle.search.constraints.base import CONSTRAINTS, CandidateBatch, changed_words
from brittle.search.constraints.similarity import EncoderCosineConstraint
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
class WordSimilarityConstraint(EncoderCosineConstraint):
    """Least cosine of a changed word's contextual vectors at least ``min_similarity``
    (attributes: :class:`~brittle.search.constraints.similarity.EncoderCosineConstraint`)."""

    min_similarity: float = DEFAULT_MIN_WORD_SIMILARITY

    default_bound: ClassVar[float] = DEFAULT_MIN_WORD_SIMILARITY
    spec_value: ClassVar[str] = (
        f"least cosine of a changed word in context, in [-1, 1] (default "
        f"{DEFAULT_MIN_WORD_SIMILARITY})"
    )

    def describe(self) -> dict[str, object]:
        return {**super().describe(), "layer": "last, mean of the word's unit piece vectors"}

    def measure(self, batches: Sequence[CandidateBatch]) -> list[NDArray[np.float64]]:
        """Per batch, each candidate's least cosine over its changed words, float64 (m,)."""
        return word_similarity(batches, path=self.path, device=self.device, dtype=self.dtype)
