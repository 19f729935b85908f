"""Hamming distance kernels against a plain Python loop."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scorers_reference import examples, hamming_ref

from brittle.scorers.errors import LengthMismatchError, ScorerInputError
from brittle.scorers.hamming import (
    encode_against,
    hamming,
    hamming_batch,
    hamming_batch_ids,
    hamming_rows_ids,
)

WORDS = st.sampled_from(["the", "cat", "sat", "on", "mat", "The", "", "ça"])


@st.composite
def original_and_candidates(draw: st.DrawFn) -> tuple[list[str], list[list[str]]]:
    k = draw(st.integers(0, 15))
    original = draw(st.lists(WORDS, min_size=k, max_size=k))
    cands = draw(st.lists(st.lists(WORDS, min_size=k, max_size=k), max_size=8))
    return original, cands


@examples(150)
@given(original_and_candidates())
def test_batch_matches_loop(data: tuple[list[str], list[list[str]]]) -> None:
    original, cands = data
    expected = [hamming_ref(original, c) for c in cands]
    got = hamming_batch(original, cands)
    assert got.dtype == np.int64
    assert got.shape == (len(cands),)
    assert got.tolist() == expected
    assert [hamming(original, c) for c in cands] == expected


@examples(100)
@given(st.data())
def test_ids_paths_match_loop(data: st.DataObject) -> None:
    m = data.draw(st.integers(0, 6))
    k = data.draw(st.integers(0, 12))
    ints = st.integers(-3, 3)
    a = np.array(
        data.draw(st.lists(st.lists(ints, min_size=k, max_size=k), min_size=m, max_size=m)),
        dtype=np.int64,
    ).reshape(m, k)
    b = np.array(
        data.draw(st.lists(st.lists(ints, min_size=k, max_size=k), min_size=m, max_size=m)),
        dtype=np.int64,
    ).reshape(m, k)
    assert hamming_rows_ids(a, b).tolist() == [
        hamming_ref(x.tolist(), y.tolist()) for x, y in zip(a, b, strict=True)
    ]
    if m:
        assert hamming_batch_ids(a[0], b).tolist() == [
            hamming_ref(a[0].tolist(), y.tolist()) for y in b
        ]


def test_unknown_tokens_always_differ() -> None:
    orig, cands = encode_against(["a", "b", "a"], [["a", "x", "y"]])
    assert orig.tolist() == [0, 1, 0]
    assert cands.tolist() == [[0, -1, -1]]
    assert hamming_batch(["a", "b", "a"], [["a", "x", "y"]]).tolist() == [2]


def test_small_cases() -> None:
    assert hamming([], []) == 0
    assert hamming(("a", "b"), ("a", "b")) == 0
    assert hamming(("a", "b"), ("b", "a")) == 2
    assert hamming_batch(["a"], []).shape == (0,)
    assert hamming_batch([], [[], []]).tolist() == [0, 0]


def test_errors() -> None:
    with pytest.raises(LengthMismatchError):
        hamming(["a"], ["a", "b"])
    with pytest.raises(LengthMismatchError, match="candidate 1"):
        hamming_batch(["a", "b"], [["a", "b"], ["a"]])
    with pytest.raises(LengthMismatchError):
        hamming_batch_ids([1, 2], [[1, 2, 3]])
    with pytest.raises(ScorerInputError, match="integer"):
        hamming_batch_ids([1.5], [[1.5]])
    with pytest.raises(ValueError, match="2-dimensional"):
        hamming_rows_ids([1], [1])
