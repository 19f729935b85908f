"""Tree utilities against networkx, on random trees and on every shared treebank."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from brittle.engine.core import tree
from brittle.engine.core.conllu import read_conllu

from support import shared_treebanks


@st.composite
def random_heads(draw: st.DrawFn, max_size: int = 40) -> np.ndarray:
    """A random rooted tree over words 1..n as a HEAD array."""
    n = draw(st.integers(1, max_size))
    order = draw(st.permutations(list(range(1, n + 1))))
    heads = np.zeros(n, dtype=np.int64)
    for k in range(1, n):
        parent = order[draw(st.integers(0, k - 1))]
        heads[order[k] - 1] = parent
    return heads


def _graph(heads: np.ndarray) -> nx.Graph:
    g = nx.Graph()
    g.add_nodes_from(range(1, len(heads) + 1))
    g.add_edges_from((i + 1, int(h)) for i, h in enumerate(heads) if h != 0)
    return g


def _reference_distances(heads: np.ndarray) -> np.ndarray:
    n = len(heads)
    lengths = dict(nx.all_pairs_shortest_path_length(_graph(heads)))
    return np.array([[lengths[i][j] for j in range(1, n + 1)] for i in range(1, n + 1)])


def _reference_depths(heads: np.ndarray) -> np.ndarray:
    root = int(np.flatnonzero(heads == 0)[0]) + 1
    lengths = nx.single_source_shortest_path_length(_graph(heads), root)
    return np.array([lengths[i] for i in range(1, len(heads) + 1)])


def _reference_projective(heads: np.ndarray) -> bool:
    arcs = [(min(i + 1, int(h)), max(i + 1, int(h))) for i, h in enumerate(heads)]
    for a, b in arcs:
        for c, d in arcs:
            if a < c < b < d:
                return False
    return True


@given(random_heads())
def test_distances_depths_projectivity_match_references(heads: np.ndarray) -> None:
    np.testing.assert_array_equal(tree.distance_matrix(heads), _reference_distances(heads))
    np.testing.assert_array_equal(tree.depths(heads), _reference_depths(heads))
    assert tree.is_projective(heads) == _reference_projective(heads)
    assert tree.tree_problems(heads) == []
    kids = tree.children(heads)
    assert sorted(c for cs in kids for c in cs) == list(range(1, len(heads) + 1))
    for parent, cs in enumerate(kids):
        assert list(cs) == sorted(cs)
        assert all(heads[c - 1] == parent for c in cs)


@pytest.mark.parametrize("path", shared_treebanks(), ids=lambda p: p.name)
def test_tree_utilities_on_shared_treebank(path) -> None:
    sentences = read_conllu(path)
    rng = np.random.default_rng(0)
    # networkx is slow: check a fixed random sample of 150 sentences per file in full,
    # and every sentence for the cheap invariants.
    sample = set(rng.choice(len(sentences), size=min(150, len(sentences)), replace=False))
    for k, s in enumerate(sentences):
        heads = s.heads.astype(np.int64)
        dist = s.distance_matrix()
        depth = s.depths()
        assert s.problems() == []
        assert depth[s.root_index()] == 0
        assert s.max_depth() == depth.max()
        np.testing.assert_array_equal(np.diag(dist), 0)
        np.testing.assert_array_equal(dist, dist.T)
        if k in sample:
            np.testing.assert_array_equal(dist, _reference_distances(heads))
            np.testing.assert_array_equal(depth, _reference_depths(heads))
            assert s.is_projective() == _reference_projective(heads)


@pytest.mark.parametrize(
    ("heads", "message"),
    [
        ([0, 0], "several roots"),
        ([2, 1], "no root"),
        ([2, 3, 2, 0], "cycle"),
        ([0, 5], "out of range"),
        ([0, 2], "its own head"),
        ([], "no words"),
    ],
)
def test_tree_problems_are_named(heads: list[int], message: str) -> None:
    problems = tree.tree_problems(heads)
    assert any(message in p for p in problems)
    if heads:
        with pytest.raises(ValueError, match=message):
            tree.distance_matrix(heads)
