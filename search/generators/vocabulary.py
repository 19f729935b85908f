"""Word lists and vectors the vocabulary-based generators draw from.

GloVe's rows are ordered by corpus frequency, so its first ``top_n`` rows are the most
frequent words. :func:`frequent_words` keeps the plain ones among them: lowercase ASCII
letters only, at least two characters (no numbers, punctuation, URLs or names written
with capitals).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

from brittle.engine.core.resources import load_glove

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["frequent_words", "glove", "is_plain_word"]


def is_plain_word(word: str, *, min_length: int = 2) -> bool:
    """Lowercase ASCII letters only, at least ``min_length`` characters."""
    return len(word) >= min_length and word.isascii() and word.isalpha() and word.islower()


def frequent_words(
    words: Sequence[str], top_n: int | None, *, min_length: int = 2
) -> tuple[tuple[str, ...], NDArray[np.int64]]:
    """Plain words among the first ``top_n`` entries of ``words`` (all when ``None``).

    Returns:
        ``(kept words, their row indices in words)``; rows are int64 (m,), ascending.
    """
    limit = len(words) if top_n is None else min(top_n, len(words))
    rows = [i for i in range(limit) if is_plain_word(words[i], min_length=min_length)]
    return tuple(words[i] for i in rows), np.asarray(rows, dtype=np.int64)


@cache
def glove() -> tuple[Sequence[str], NDArray[np.float32]]:
    """GloVe 6B 50d ``(words, vectors (400000, 50) float32)`` from the offline resources.

    Loaded once per process (the vectors stay memory-mapped).
    """
    words, vectors = load_glove()
    return tuple(words), vectors
