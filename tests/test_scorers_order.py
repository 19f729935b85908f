"""DND, IDC and permutation recovery against plain transcriptions of the formulas."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scorers_reference import dnd_ref, examples, idc_ref, permutation_ref

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
    assert p.tolist() == permutation_ref(text, shuffled)
    assert "".join(text[i] for i in p) == shuffled
    assert order_scores(text, shuffled) == OrderScores(
        dnd=dnd_ref(p.tolist()), idc=idc_ref(p.tolist())
    )


@examples(100)
@given(texts, texts)
def test_char_permutation_rejects_non_permutations(a: str, b: str) -> None:
    ref = permutation_ref(a, b)
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
        assert row.tolist() == permutation_ref(tokens, t)
    assert token_permutation(tokens, batch[0]).tolist() == got[0].tolist()


def test_char_permutation_batch() -> None:
    got = char_permutation_batch("abca", ["abca", "aacb", "acba"])
    assert got.tolist() == [[0, 1, 2, 3], [0, 3, 2, 1], [0, 2, 1, 3]]
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
