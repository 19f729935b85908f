"""Word lists and vectors the vocabulary-based generators draw from.

GloVe's rows are ordered by corpus frequency, so its first ``top_n`` rows are the most
frequent words. :func:`frequent_words` keeps the plain ones among them: lowercase ASCII
letters only, at least two characters (no numbers, punctuation, URLs or names written
with capitals).

:func:`attested_form` inflects a lemma only into forms the vocabulary contains, so the
vocabulary-based generators never write a form nobody uses (``dialoged``, ``infirmed``:
``dialog`` and ``infirm`` are verbs in lemminflect's lexicon, but their verb forms are
not in GloVe's vocabulary).
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

from brittle.engine.core.resources import load_glove
from brittle.search.generators.inflection import inflect_lemma, is_lexicon_lemma

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["attested_form", "frequency_rank", "frequent_words", "glove", "is_plain_word"]


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


@cache
def _ranks() -> dict[str, int]:
    words, _ = glove()
    # built from the end, so a word listed twice keeps its first (most frequent) row;
    # in one C-level pass, a third faster than a loop over the 400,000 words
    return dict(zip(reversed(words), range(len(words) - 1, -1, -1), strict=True))


def frequency_rank(word: str) -> int | None:
    """0-based rank of ``word`` by corpus frequency (its row in GloVe's vocabulary, which
    is ordered by frequency; lowercase words only), ``None`` when GloVe lacks it."""
    return _ranks().get(word)


#: Verb forms whose presence in a vocabulary shows a lemma is used as a verb (``-s`` is
#: left out: ``books`` is a noun's plural as well).
_VERB_EVIDENCE = ("VBD", "VBN", "VBG")


def attested_form(
    lemma: str,
    upos: str,
    tag: str,
    known: Container[str],
    *,
    number: str | None = None,
    person: str | None = None,
) -> str | None:
    """``lemma`` inflected for ``tag`` when the result is a word of ``known``, else ``None``.

    ``lemma`` must be a lemma of ``upos`` in lemminflect's lexicon, and a verb must also
    have one of its past or ``-ing`` forms in ``known`` (evidence that it is used as a
    verb at all). ``number`` and ``person`` are passed to
    :func:`~brittle.search.generators.inflection.inflect_lemma` (agreement of ``be``).
    """
    if not is_lexicon_lemma(lemma, upos):
        return None
    form = inflect_lemma(lemma, tag, number=number, person=person)
    if form is None or form not in known:
        return None
    if upos == "VERB" and lemma != "be":
        evidence = (inflect_lemma(lemma, t) for t in _VERB_EVIDENCE)
        if not any(f is not None and f in known for f in evidence):
            return None
    return form
