"""``word-similarity``: a changed word keeps its reading in context (MiniLM word vectors)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brittle.engine.core.errors import ConfigError
from brittle.engine.core.perturbation import Perturbation
from brittle.engine.core.sentence import Sentence, Token
from brittle.scorers.parsers import Parser
from brittle.search.constraints import (
    DEFAULT_MIN_WORD_SIMILARITY,
    CandidateBatch,
    ConstraintContext,
    WordSimilarityConstraint,
    build_constraints,
    word_similarity,
)
from brittle.search.sentence_models import _pool_words, sentence_encoder

from support import missing_sentence_models

MISSING = missing_sentence_models()
needs_models = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))


def sentence(sent_id: str, text: str) -> Sentence:
    """A sentence of the space-separated words of ``text``, each word headed by the one
    before it (the other columns blank)."""
    tokens = tuple(
        Token(str(k + 1), w, head=str(k), deprel="root" if k == 0 else "dep")
        for k, w in enumerate(text.split())
    )
    return Sentence(sent_id, (f"# sent_id = {sent_id}",), tokens)


def swap(s: Sentence, changes: dict[str, str]) -> Perturbation:
    """Replace words of ``s`` by form (each word given occurs once)."""
    positions = tuple(sorted(s.forms.index(w) for w in changes))
    return Perturbation(
        s.sent_id, "copos", positions, tuple(changes[s.forms[i]] for i in positions)
    )


def context() -> ConstraintContext:
    def no_parser() -> Parser:
        raise AssertionError("word-similarity needs no parser")

    return ConstraintContext(tau=2, parser=no_parser)


# ------------------------------------------------------------------ pooling
def _slow_pool(hidden: np.ndarray, word_ids: list[int | None], n: int) -> np.ndarray:
    out = np.full((n, hidden.shape[1]), np.nan)
    for w in range(n):
        rows = [hidden[k] for k, x in enumerate(word_ids) if x == w]
        if rows:
            mean = np.mean(rows, axis=0)
            out[w] = mean / np.linalg.norm(mean)
    return out


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 8).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(st.one_of(st.none(), st.integers(0, n - 1)), min_size=1, max_size=20),
        )
    ),
    st.integers(0, 2**31 - 1),
)
def test_pooling_is_the_normalised_mean_of_each_words_pieces(
    shape: tuple[int, list[int | None]], seed: int
) -> None:
    n, word_ids = shape
    hidden = np.random.default_rng(seed).normal(size=(len(word_ids), 5)).astype(np.float32)
    fast = _pool_words(hidden, word_ids, n)
    slow = _slow_pool(hidden.astype(np.float64), word_ids, n)
    assert fast.shape == (n, 5) and fast.dtype == np.float32
    assert np.array_equal(np.isnan(fast), np.isnan(slow))
    assert np.allclose(np.nan_to_num(fast), np.nan_to_num(slow), atol=1e-5)


# ------------------------------------------------------------------ specs
def test_spec_and_bounds() -> None:
    [bare] = build_constraints(["word-similarity"], context())
    assert isinstance(bare, WordSimilarityConstraint)
    assert bare.min_similarity == DEFAULT_MIN_WORD_SIMILARITY
    [tight] = build_constraints(["word-similarity:0.75"], context())
    assert isinstance(tight, WordSimilarityConstraint) and tight.min_similarity == 0.75
    assert bare.describe()["name"] == "word-similarity"
    for bad in ("word-similarity:1.5", "word-similarity:nan", "word-similarity:x"):
        with pytest.raises(ConfigError, match="word-similarity"):
            build_constraints([bad], context())


# ------------------------------------------------------------------ the model
CAMERA = sentence(
    "camera",
    "My canon t2i stops working at times as in the power bottom is switched to on but "
    "the camera does not respond to any function .",
)
STAFF = sentence(
    "staff",
    "They treat there employees with respect and concern and expect that they will "
    "extend the same politeness to there customers .",
)
MOVIE = sentence("movie", "The longer movie was less interesting than the short documentary .")
PHOTOS = sentence("photos", "Those old photographs remind me of my childhood in the countryside .")
RECIPE = sentence("recipe", "The recipe needs only three ingredients : flour , water , and salt .")


@needs_models
def test_word_vectors_are_unit_rows_per_word_and_cached() -> None:
    encoder = sentence_encoder()
    [a, b] = encoder.word_vectors([MOVIE.forms, PHOTOS.forms])
    assert a.shape == (len(MOVIE), 384) and b.shape == (len(PHOTOS), 384)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    [again] = encoder.word_vectors([MOVIE.forms])
    assert again is a  # from the cache


@needs_models
def test_wrong_sense_swaps_are_rejected_and_synonyms_kept() -> None:
    """Real swaps coPOS made on EWT sentences and on the demo's: a wrong sense moves the
    word's own vector far, a synonym in its sense does not."""
    bad = [
        (CAMERA, {"times": "clips"}),
        (CAMERA, {"switched": "thrown"}),
        (STAFF, {"expect": "ask"}),
    ]
    good = [
        (MOVIE, {"movie": "film"}),
        (PHOTOS, {"photographs": "photos"}),
        (RECIPE, {"needs": "requires"}),
        (STAFF, {"customers": "clients"}),
    ]
    constraint = WordSimilarityConstraint()
    batches = [CandidateBatch.build(s, [swap(s, c)]) for s, c in [*bad, *good]]
    results = constraint.check_many(batches)
    kept = [bool(r.mask[0]) for r in results]
    assert kept == [False] * len(bad) + [True] * len(good)
    # the value of a two-word swap is its worse word
    both = CandidateBatch.build(STAFF, [swap(STAFF, {"expect": "ask", "customers": "clients"})])
    [pair] = word_similarity([both])
    original, changed = sentence_encoder().word_vectors([STAFF.forms, both.sentences[0].forms])
    cosines = [float(original[i] @ changed[i]) for i in both.perturbations[0].positions]
    assert pair[0] == pytest.approx(min(cosines), abs=1e-5) and len(cosines) == 2


@needs_models
def test_reorderings_compare_each_moved_word_with_itself() -> None:
    order = (1, 0, *range(2, len(MOVIE)))
    moved = Perturbation(MOVIE.sent_id, "neighbour-flip", order=order)
    unchanged = Perturbation(MOVIE.sent_id, "neighbour-flip", order=tuple(range(len(MOVIE))))
    [values] = word_similarity([CandidateBatch.build(MOVIE, [moved, unchanged])])
    assert -1.0 <= values[0] < 1.0
    assert values[1] == 1.0  # nothing changed: nothing to judge
