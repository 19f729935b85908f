"""Slow, obviously-right references and input strategies for the scorer tests.

Every kernel in ``brittle.scorers`` is compared against one of these on many random
inputs. The references ``brittle bench`` also uses live in
:mod:`brittle.scorers.reference` (the tree edit distance one is the ``apted`` package).
"""

from __future__ import annotations

import os
from collections.abc import Hashable, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from brittle.scorers.reference import (  # re-exported for the tests
    Heads,
    apted_distance,
    apted_tree,
    dnd_ref,
    hamming_ref,
    idc_ref,
    random_heads,
)

if TYPE_CHECKING:
    from brittle.engine.core.sentence import Sentence

UD_ROOT = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "ud"
EWT_TEST = UD_ROOT / "UD_English-EWT" / "en_ewt-ud-test.conllu"

_SCALE = float(os.environ.get("BRITTLE_TEST_SCALE", "1"))

__all__ = [
    "EWT_TEST",
    "Heads",
    "apted_distance",
    "apted_tree",
    "dnd_ref",
    "ewt_test_sentences",
    "examples",
    "hamming_ref",
    "heads_arrays",
    "idc_ref",
    "networkx_tree_weight",
    "permutation_ref",
    "random_heads",
    "spanning_tree_weight",
    "tile_permutation_ref",
    "tree_distances_ref",
]


def examples(n: int) -> settings:
    """Hypothesis settings with ``n`` examples (scaled by ``BRITTLE_TEST_SCALE``), no deadline."""
    return settings(
        max_examples=max(1, int(n * _SCALE)),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )


# ------------------------------------------------------------------ strategies
@st.composite
def heads_arrays(
    draw: st.DrawFn, min_words: int = 0, max_words: int = 12, forest: bool = False
) -> np.ndarray:
    """A random HEAD array, int64 (n,): one tree, or with ``forest`` maybe several roots."""
    n = draw(st.integers(min_words, max_words))
    order = draw(st.permutations(range(1, n + 1)))
    heads = np.zeros(n, dtype=np.int64)
    for pos, word in enumerate(order):
        if pos == 0:
            continue
        if forest and draw(st.integers(0, 4)) == 0:
            heads[word - 1] = 0
        else:
            heads[word - 1] = order[draw(st.integers(0, pos - 1))]
    return heads


def permutation_ref(
    original: Sequence[Hashable], perturbed: Sequence[Hashable]
) -> list[int] | None:
    """Original position of each unit of ``perturbed`` (n-th occurrence to n-th), or None."""
    if len(original) != len(perturbed):
        return None
    used = [False] * len(original)
    out = []
    for unit in perturbed:
        for i, o in enumerate(original):
            if not used[i] and o == unit:
                used[i] = True
                out.append(i)
                break
        else:
            return None
    return out


def tile_permutation_ref(
    original: Sequence[Hashable], perturbed: Sequence[Hashable]
) -> list[int] | None:
    """Greedy string tiling, plainly: match the longest common run of unmatched units
    (earliest in ``perturbed``, then in ``original``), repeat; None if a unit is left."""
    k = len(original)
    if len(perturbed) != k:
        return None
    used = [False] * k
    out: list[int | None] = [None] * k
    while None in out:
        best = (0, -1, -1)
        for j in range(k):
            for i in range(k):
                length = 0
                while (
                    j + length < k
                    and i + length < k
                    and out[j + length] is None
                    and not used[i + length]
                    and perturbed[j + length] == original[i + length]
                ):
                    length += 1
                if length > best[0]:
                    best = (length, i, j)
        length, i, j = best
        if length == 0:
            return None
        for t in range(length):
            out[j + t] = i + t
            used[i + t] = True
    return [int(x) for x in out if x is not None]


# ------------------------------------------------------------------ spanning trees, trees
def spanning_tree_weight(weights: np.ndarray, parent: np.ndarray) -> float:
    return float(sum(weights[i, parent[i]] for i in range(len(parent)) if parent[i] >= 0))


def networkx_tree_weight(weights: np.ndarray, maximum: bool = False) -> float:
    import networkx as nx

    n = weights.shape[0]
    g = nx.Graph()
    g.add_nodes_from(range(n))
    for i in range(n):
        for j in range(i + 1, n):
            g.add_edge(i, j, weight=float(weights[i, j]))
    tree = nx.maximum_spanning_tree(g) if maximum else nx.minimum_spanning_tree(g)
    return float(sum(d["weight"] for _, _, d in tree.edges(data=True)))


def tree_distances_ref(heads: Heads) -> np.ndarray:
    """All-pairs path lengths by breadth-first search from every word."""
    n = len(heads)
    adj: list[list[int]] = [[] for _ in range(n)]
    for i, h in enumerate(heads):
        if h > 0:
            adj[i].append(int(h) - 1)
            adj[int(h) - 1].append(i)
    out = np.zeros((n, n), dtype=np.int64)
    for s in range(n):
        dist = {s: 0}
        frontier = [s]
        while frontier:
            nxt = []
            for u in frontier:
                for v in adj[u]:
                    if v not in dist:
                        dist[v] = dist[u] + 1
                        nxt.append(v)
            frontier = nxt
        for v, d in dist.items():
            out[s, v] = d
    return out


# ------------------------------------------------------------------ treebank
@cache
def ewt_test_sentences() -> tuple[Sentence, ...]:
    """Sentences of the EWT test file (raises FileNotFoundError when absent)."""
    if not EWT_TEST.exists():
        raise FileNotFoundError(EWT_TEST)
    from brittle.engine.core.conllu import read_conllu

    return tuple(read_conllu(EWT_TEST))
