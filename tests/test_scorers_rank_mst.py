"""Spearman against scipy, Prim's spanning trees against networkx."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.stats
from hypothesis import given
from hypothesis import strategies as st
from scorers_reference import examples, networkx_tree_weight

from brittle.scorers.errors import LengthMismatchError, ScorerInputError
from brittle.scorers.mst import (
    maximum_spanning_tree,
    minimum_spanning_tree,
    parent_to_heads,
    spanning_tree_weight,
    tree_edges,
)
from brittle.scorers.rank import rankdata, spearman, spearman_rows

seeds = st.integers(0, 2**32 - 1)


def _scipy_spearman(a: np.ndarray, b: np.ndarray) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(scipy.stats.spearmanr(a, b).statistic)


@examples(120)
@given(seeds, st.integers(1, 5), st.integers(0, 12), st.sampled_from([3, 10, 1000]))
def test_rankdata_and_spearman_match_scipy(seed: int, rows: int, k: int, spread: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, spread, size=(rows, k)).astype(float)  # small spreads give ties
    b = rng.integers(0, spread, size=(rows, k)) + rng.random((rows, k)) * (spread > 100)
    np.testing.assert_array_equal(rankdata(a), scipy.stats.rankdata(a, axis=-1))
    got = spearman_rows(a, b)
    assert got.shape == (rows,)
    for r in range(rows):
        expected = _scipy_spearman(a[r], b[r]) if k >= 2 else float("nan")
        if np.isnan(expected):
            assert np.isnan(got[r])
        else:
            assert got[r] == pytest.approx(expected, abs=1e-12)
            assert spearman(a[r], b[r]) == pytest.approx(expected, abs=1e-12)


def test_spearman_cases() -> None:
    assert spearman([1, 2, 3], [10, 20, 30]) == pytest.approx(1.0)
    assert spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert np.isnan(spearman([1, 1, 1], [1, 2, 3]))
    assert np.isnan(spearman([1], [1]))
    assert spearman_rows(np.zeros((2, 3, 4)), np.zeros((2, 3, 4))).shape == (2, 3)
    with pytest.raises(LengthMismatchError):
        spearman([1, 2], [1, 2, 3])
    with pytest.raises(LengthMismatchError):
        spearman([[1, 2]], [[1, 2]])


@examples(120)
@given(seeds, st.integers(1, 14), st.booleans())
def test_spanning_trees_match_networkx(seed: int, n: int, ties: bool) -> None:
    rng = np.random.default_rng(seed)
    w = rng.integers(0, 4, size=(n, n)).astype(float) if ties else rng.random((n, n))
    w = w + w.T
    for maximum, fn in ((False, minimum_spanning_tree), (True, maximum_spanning_tree)):
        parent = fn(w)
        assert parent.dtype == np.int64
        assert parent[0] == -1
        assert (parent[1:] >= 0).all()
        edges = tree_edges(parent)
        assert edges.shape == (n - 1, 2)
        assert (edges[:, 0] < edges[:, 1]).all()
        # a spanning tree: the heads form one tree rooted at word 1
        from brittle.engine.core.tree import tree_problems

        assert tree_problems(parent_to_heads(parent)) == []
        expected = networkx_tree_weight(w, maximum=maximum)
        assert spanning_tree_weight(w, parent) == pytest.approx(expected, abs=1e-9)


def test_asymmetric_matrix_is_symmetrised() -> None:
    w = np.array([[0.0, 1.0, 9.0], [3.0, 0.0, 1.0], [1.0, 9.0, 0.0]])
    parent = minimum_spanning_tree(w)
    assert spanning_tree_weight(w, parent) == pytest.approx(networkx_tree_weight((w + w.T) / 2))


def test_spanning_tree_errors_and_edges() -> None:
    assert minimum_spanning_tree(np.zeros((0, 0))).shape == (0,)
    assert minimum_spanning_tree([[0.0]]).tolist() == [-1]
    with pytest.raises(ScorerInputError, match="square"):
        minimum_spanning_tree(np.zeros((2, 3)))
    with pytest.raises(ScorerInputError, match="finite"):
        minimum_spanning_tree([[0.0, np.nan], [np.nan, 0.0]])
    assert tree_edges([-1, 0, 0, 2]).tolist() == [[0, 1], [0, 2], [2, 3]]
    assert parent_to_heads([-1, 0, 1]).tolist() == [0, 1, 2]
