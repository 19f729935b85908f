"""Numba kernels over HEAD arrays, shared by the tree utilities and the metric kernels.

``heads`` is int64 (n,), ``heads[i]`` the 1-based head of word ``i + 1`` and 0 for the
root. The kernels assume a valid tree (callers validate through
:mod:`brittle.engine.core.tree`); other kernels (``scorers._metric_kernels``) call them
from inside compiled code, which is why they are module-level and take arrays only.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import NDArray

__all__ = ["bfs_order", "tree_depths", "tree_distances"]


@njit(cache=True)
def bfs_order(heads: NDArray[np.int64]) -> NDArray[np.int64]:  # pragma: no cover - jit
    """Nodes 1..n in breadth-first order from the root (parents before children)."""
    n = heads.shape[0]
    counts = np.zeros(n + 2, dtype=np.int64)
    for i in range(n):
        counts[heads[i] + 1] += 1
    starts = np.cumsum(counts)  # children of node h at kids[starts[h]:starts[h+1]]
    fill = starts.copy()
    kids = np.empty(n, dtype=np.int64)
    for i in range(n):
        h = heads[i]
        kids[fill[h]] = i + 1
        fill[h] += 1
    order = np.empty(n, dtype=np.int64)
    head_ptr = 0
    tail = 0
    for k in range(starts[0], starts[1]):
        order[tail] = kids[k]
        tail += 1
    while head_ptr < tail:
        node = order[head_ptr]
        head_ptr += 1
        for k in range(starts[node], starts[node + 1]):
            order[tail] = kids[k]
            tail += 1
    return order[:tail]


@njit(cache=True)
def tree_distances(heads: NDArray[np.int64]) -> NDArray[np.int32]:  # pragma: no cover - jit
    """Path lengths in edges between all pairs of words, int32 (n, n)."""
    # Nodes in BFS order: for a node c with parent p, every node placed before c is
    # outside c's subtree, so its path to c passes through p: d(c, x) = d(p, x) + 1.
    n = heads.shape[0]
    order = bfs_order(heads)
    dist = np.zeros((n, n), dtype=np.int32)
    for k in range(order.shape[0]):
        c = order[k] - 1
        p = heads[c] - 1
        if p < 0:
            continue
        for m in range(k):
            x = order[m] - 1
            d = dist[p, x] + 1
            dist[c, x] = d
            dist[x, c] = d
    return dist


@njit(cache=True)
def tree_depths(heads: NDArray[np.int64]) -> NDArray[np.int32]:  # pragma: no cover - jit
    """Depth in edges of every word below the root word (0), int32 (n,)."""
    n = heads.shape[0]
    order = bfs_order(heads)
    depth = np.zeros(n, dtype=np.int32)
    for k in range(order.shape[0]):
        c = order[k] - 1
        p = heads[c] - 1
        if p >= 0:
            depth[c] = depth[p] + 1
    return depth
