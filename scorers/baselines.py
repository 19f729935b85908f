"""Tree baselines of Hall Maudslay & Cotterell: Path and Majority.

- ``path``: the chain linking each word to the next.
- ``majority``: for each sentence length seen in training (up to 40 words), the maximum
  spanning tree of the undirected edge counts of the training trees of that length;
  longer or unseen lengths fall back to the chain (as in the paper).

Both trees are undirected in the paper. To also score root and depth metrics, each
tree is rooted at the most frequent root position of training sentences of that length
(the first word for lengths never seen). The random-representation control is a
representation backend (``random``, :mod:`brittle.scorers.static_backend`), not a tree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from brittle.engine.core import tree
from brittle.scorers.metrics import (
    DepthScores,
    DistanceScores,
    aggregate_depth,
    aggregate_distance,
    score_depths,
    score_distances,
)
from brittle.scorers.mst import maximum_spanning_tree
from brittle.scorers.probe_gold import Gold

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "MajorityTrees",
    "baseline_metrics",
    "path_heads",
    "rooted_heads",
]

#: Sentences longer than this get the Path tree under the Majority baseline.
MAJORITY_MAX_LENGTH = 40


def path_heads(n: int, *, root: int = 0) -> NDArray[np.int64]:
    """HEAD array (n,) of the chain over ``n`` words rooted at word index ``root``."""
    idx = np.arange(n, dtype=np.int64)
    heads = np.where(idx < root, idx + 2, idx)  # left of root: next word; right: previous
    if n:
        heads[root] = 0
    return heads


def rooted_heads(parent: NDArray[np.int64], root: int) -> NDArray[np.int64]:
    """HEAD array of the undirected tree given as a parent array, re-rooted at ``root``."""
    n = int(parent.shape[0])
    neighbours: list[list[int]] = [[] for _ in range(n)]
    for v in range(n):
        p = int(parent[v])
        if p >= 0:
            neighbours[v].append(p)
            neighbours[p].append(v)
    heads = np.zeros(n, dtype=np.int64)
    seen = np.zeros(n, dtype=bool)
    seen[root] = True
    stack = [root]
    while stack:
        u = stack.pop()
        for v in neighbours[u]:
            if not seen[v]:
                seen[v] = True
                heads[v] = u + 1
                stack.append(v)
    return heads


@dataclass
class MajorityTrees:
    """Edge counts and root positions per sentence length, learnt from training trees.

    Attributes:
        counts: length -> undirected edge counts (n, n), symmetric.
        roots: length -> how often each position (n,) was the root.
        max_length: lengths above this get the Path tree.
    """

    counts: dict[int, NDArray[np.int64]] = field(default_factory=dict)
    roots: dict[int, NDArray[np.int64]] = field(default_factory=dict)
    max_length: int = MAJORITY_MAX_LENGTH
    _cache: dict[int, NDArray[np.int64]] = field(default_factory=dict, repr=False)

    @classmethod
    def fit(cls, golds: Sequence[Gold], *, max_length: int = MAJORITY_MAX_LENGTH) -> MajorityTrees:
        """Count the edges and roots of ``golds`` by length."""
        out = cls(max_length=max_length)
        for g in golds:
            n = len(g)
            if n == 0:
                continue
            counts = out.counts.setdefault(n, np.zeros((n, n), dtype=np.int64))
            roots = out.roots.setdefault(n, np.zeros(n, dtype=np.int64))
            child = np.flatnonzero(g.heads > 0)
            head = g.heads[child] - 1
            counts[child, head] += 1
            counts[head, child] += 1
            roots[g.root] += 1
        return out

    def root_position(self, n: int) -> int:
        """Most frequent root position of training sentences of length ``n`` (0 if unseen)."""
        roots = self.roots.get(n)
        return int(np.argmax(roots)) if roots is not None else 0

    def heads(self, n: int) -> NDArray[np.int64]:
        """The Majority tree (HEAD array) for a sentence of ``n`` words."""
        cached = self._cache.get(n)
        if cached is not None:
            return cached

        root = self.root_position(n)
        counts = self.counts.get(n)
        if n > self.max_length or counts is None or n < 2:
            heads = path_heads(n, root=root)
        else:
            heads = rooted_heads(maximum_spanning_tree(counts.astype(np.float64)), root)
        heads.setflags(write=False)
        self._cache[n] = heads
        return heads

    def path(self, n: int) -> NDArray[np.int64]:
        """The Path tree rooted at the majority root position."""
        return path_heads(n, root=self.root_position(n))


def baseline_metrics(
    golds: Sequence[Gold], tree_for_length: Callable[[int], NDArray[np.int64]]
) -> dict[str, float]:
    """Distance, root and depth metrics of a baseline that guesses a tree per length.

    The guessed tree's path lengths are the predicted distances and its depths the
    predicted depths, scored like a probe's (UUAS without punctuation).
    """
    dist_scores: list[DistanceScores] = []
    depth_scores: list[DepthScores] = []
    for g in golds:
        heads = tree_for_length(len(g))
        dist = tree.distance_matrix(heads).astype(np.float64)
        dist_scores.append(score_distances(dist, g.heads, punct=g.punct))
        depth_scores.append(
            score_depths(tree.depths(heads).astype(np.float64), g.heads, punct=g.punct)
        )
    return {**aggregate_distance(dist_scores), **aggregate_depth(depth_scores)}
