"""DND, IDC and permutation recovery against plain transcriptions of the formulas."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scorers_reference import dnd_ref, examples, idc_ref, tile_permutation_ref

from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.errors import BrittleError
from brittle.scorers.errors import NotAPermutationError, ScorerInputError
from brittle.scorers.order import (
    OrderScores,
    char_permutation,
    char_permutation_batch,
    dnd,
    dnd_batch,
    idc,
    idc_batch,
    order_scores,
    order_scores_batch,
    pad_permutations,
    token_permutation,
    token_permutation_batch,
)

perms = st.integers(0, 30).flatmap(lambda k: st.permutations(list(range(k))))


@examples(200)
@given(perms)
def test_single_matches_formulas(p: list[int]) -> None:
    assert idc(p) == pytest.approx(idc_ref(p), abs=1e-15)
    assert dnd(p) == pytest.approx(dnd_ref(p), abs=1e-15)
    assert 0.0 <= idc(p) <= 0.5
    assert 0.0 <= dnd(p) <= 1.0


@examples(60)
@given(st.lists(perms, min_size=0, max_size=10))
def test_batches_match_formulas(ps: list[list[int]]) -> None:
    padded, lengths = pad_permutations(ps)
    d, i = order_scores_batch(padded, lengths)
    np.testing.assert_allclose(d, [dnd_ref(p) for p in ps], atol=1e-15)
    np.testing.assert_allclose(i, [idc_ref(p) for p in ps], atol=1e-15)
    # a ragged list is padded on the way in
    if ps:
        np.testing.assert_allclose(idc_batch(ps), i)
        np.testing.assert_allclose(dnd_batch(ps), d)


@examples(40)
@given(
    st.integers(0, 12).flatmap(
        lambda k: st.lists(st.permutations(list(range(k))), min_size=1, max_size=6)
    )
)
def test_rectangular_batch(ps: list[list[int]]) -> None:
    arr = np.array(ps, dtype=np.int32)
    np.testing.assert_allclose(idc_batch(arr), [idc_ref(p) for p in ps], atol=1e-15)
    np.testing.assert_allclose(dnd_batch(arr), [dnd_ref(p) for p in ps], atol=1e-15)


@pytest.mark.parametrize("k", range(0, 9))
def test_identity_and_reversal(k: int) -> None:
    ident = list(range(k))
    rev = ident[::-1]
    assert idc(ident) == 0.0
    assert dnd(ident) == 0.0
    assert dnd(rev) == (1.0 if k > 1 else 0.0)
    expected = 0.5 if k % 2 == 0 else 0.5 - 1 / (2 * k * k)
    assert idc(rev) == pytest.approx(expected if k else 0.0)


texts = st.text(alphabet="ab c.Zé", max_size=40)


@examples(150)
@given(texts, st.randoms(use_true_random=False))
def test_char_permutation_recovers_shuffles(text: str, rnd) -> None:
    chars = list(text)
    rnd.shuffle(chars)
    shuffled = "".join(chars)
    p = char_permutation(text, shuffled)
    assert p.tolist() == tile_permutation_ref(text, shuffled)
    assert "".join(text[i] for i in p) == shuffled
    assert order_scores(text, shuffled) == OrderScores(
        dnd=dnd_ref(p.tolist()), idc=idc_ref(p.tolist())
    )


@examples(100)
@given(texts, texts)
def test_char_permutation_rejects_non_permutations(a: str, b: str) -> None:
    ref = tile_permutation_ref(a, b)
    if ref is None:
        with pytest.raises(NotAPermutationError):
            char_permutation(a, b)
    else:
        assert char_permutation(a, b).tolist() == ref


@examples(60)
@given(
    st.lists(st.sampled_from(["a", "b", "the", "."]), max_size=12),
    st.randoms(use_true_random=False),
)
def test_token_permutation(tokens: list[str], rnd) -> None:
    batch = []
    for _ in range(3):
        t = list(tokens)
        rnd.shuffle(t)
        batch.append(t)
    got = token_permutation_batch(tokens, batch)
    assert got.shape == (3, len(tokens))
    for row, t in zip(got, batch, strict=True):
        assert row.tolist() == tile_permutation_ref(tokens, t)
    assert token_permutation(tokens, batch[0]).tolist() == got[0].tolist()


def test_char_permutation_batch() -> None:
    texts = ["abca", "aacb", "acba"]
    got = char_permutation_batch("abca", texts)
    assert got.tolist() == [tile_permutation_ref("abca", t) for t in texts]
    assert got[0].tolist() == [0, 1, 2, 3]
    with pytest.raises(NotAPermutationError, match="item 1"):
        char_permutation_batch("abca", ["abca", "abcb"])
    with pytest.raises(NotAPermutationError, match="3 characters"):
        char_permutation_batch("abca", ["abc"])


def test_errors_are_brittle_and_value_errors() -> None:
    with pytest.raises(NotAPermutationError) as info:
        char_permutation("abc", "abd")
    assert isinstance(info.value, BrittleError)
    assert isinstance(info.value, ValueError)
    with pytest.raises(NotAPermutationError, match="different lengths"):
        char_permutation("abc", "ab")
    for bad in ([0, 0], [1, 2], [-1, 0]):
        with pytest.raises(NotAPermutationError):
            idc(bad)
    with pytest.raises(NotAPermutationError):
        token_permutation(["a", "b"], ["a", "c"])
    with pytest.raises(ScorerInputError):
        order_scores("ab", ["a", "b"])
    with pytest.raises(ScorerInputError, match="2-D"):
        idc_batch(np.zeros((2, 2, 2), dtype=np.int64))
    with pytest.raises(ScorerInputError, match="lengths"):
        idc_batch([[0, 1]], [3])
    with pytest.raises(ScorerInputError, match="ragged"):
        idc_batch([[0, 1], [0]], [2, 1])
    # unchecked rows are scored as they are
    assert idc_batch([[1, 1]], check=False).tolist() == [0.25]


def test_token_level_order_scores() -> None:
    s = order_scores(["I", "saw", "her"], ["her", "saw", "I"])
    assert s.dnd == 1.0
    assert s.idc == pytest.approx(4 / 9)


def test_text_scores_keep_moved_phrases_together() -> None:
    """Repeated characters no longer split a moved phrase: the text-based scores of a
    phrase swap equal the exact ones of the permutation that made it."""
    scores = order_scores("the cat sat on the mat", "on the mat the cat sat")
    words = order_scores(
        ["the", "cat", "sat", "on", "the", "mat"], ["on", "the", "mat", "the", "cat", "sat"]
    )
    assert words == OrderScores(dnd=dnd_ref([3, 4, 5, 0, 1, 2]), idc=idc_ref([3, 4, 5, 0, 1, 2]))
    exact = [*range(12, 22), 11, *range(11)]  # "on the mat" + the space before "on" + the rest
    assert scores == OrderScores(dnd=dnd_ref(exact), idc=idc_ref(exact))
    assert round(scores.dnd, 3) == 0.095  # two cuts in 21 gaps, not n-th-to-n-th's 0.714


@examples(60)
@given(
    st.lists(st.sampled_from(["the", "cat", "sat", "on", "mat", "a"]), min_size=2, max_size=14),
    st.randoms(use_true_random=False),
)
def test_text_scores_of_phrase_swaps_are_exact_or_lower(words: list[str], rnd) -> None:
    """Swapping two spans of words: the recovered permutation is the reference's, a
    valid reordering, and the swap itself when no word repeats."""
    k = len(words)
    a, b = sorted(rnd.sample(range(k + 1), 2))
    c = rnd.randint(b, k)
    exact = list(range(a)) + list(range(b, c)) + list(range(a, b)) + list(range(c, k))
    moved = [words[i] for i in exact]
    p = token_permutation(words, moved)
    assert p.tolist() == tile_permutation_ref(words, moved)
    assert [words[i] for i in p] == moved and sorted(p.tolist()) == list(range(k))
    if len(set(words)) == k:
        assert p.tolist() == exact


def test_text_scores_of_real_phrase_swaps_count_only_the_cuts() -> None:
    """On the built-in treebank, a swap of two spans of words, compared as texts (every
    repeated letter and space an ambiguity), costs a handful of cuts, as it should."""
    rng = random.Random(0)
    treebank = Path(__file__).resolve().parents[1] / "data" / "default.conllu"
    for sentence in read_conllu(treebank):
        words = list(sentence.forms)
        k = len(words)
        if k < 3:
            continue
        a, b = sorted(rng.sample(range(k + 1), 2))
        c = rng.randint(b, k)
        moved = [words[i] for i in [*range(a), *range(b, c), *range(a, b), *range(c, k)]]
        original, perturbed = " ".join(words), " ".join(moved)
        cuts = order_scores(original, perturbed).dnd * (len(original) - 1)
        assert round(cuts) <= 6, (original, perturbed, cuts)
