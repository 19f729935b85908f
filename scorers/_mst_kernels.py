"""Numba kernel for Prim's spanning tree over a dense weight matrix.

Imported lazily by :mod:`brittle.scorers.mst`; compiles on first call, cached on disk.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import NDArray


@njit(cache=True)
def prim(weights: NDArray[np.float64], parent: NDArray[np.int64]) -> None:  # pragma: no cover
    """Minimum spanning tree of the complete graph on ``n`` vertices, grown from vertex 0.

    weights: (n, n), symmetric, finite. parent: (n,) output; ``parent[0] = -1`` and
    ``parent[v]`` is the vertex that ``v`` was attached to. Ties go to the lowest index.
    """
    n = weights.shape[0]
    in_tree = np.zeros(n, dtype=np.bool_)
    best = np.full(n, np.inf)
    for v in range(n):
        parent[v] = -1
    if n == 0:
        return
    best[0] = 0.0
    for _ in range(n):
        u = -1
        bu = np.inf
        for v in range(n):
            if not in_tree[v] and (u < 0 or best[v] < bu):
                u = v
                bu = best[v]
        in_tree[u] = True
        for v in range(n):
            if not in_tree[v]:
                w = weights[u, v]
                if w < best[v]:
                    best[v] = w
                    parent[v] = u
