"""Spanning trees of dense distance matrices (Prim's algorithm, O(n**2)).

The minimum spanning tree turns a probe's predicted word-to-word distances into a tree
(Hewitt & Manning); the maximum spanning tree of edge counts gives the Majority baseline
(Hall Maudslay & Cotterell). Trees come back as a parent array rooted at word 0
(``parent[0] = -1``), which :func:`parent_to_heads` turns into a HEAD array and
:func:`tree_edges` into a sorted undirected edge list.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from brittle.scorers.errors import ScorerInputError

__all__ = [
    "maximum_spanning_tree",
    "minimum_spanning_tree",
    "parent_to_heads",
    "spanning_tree_weight",
    "tree_edges",
]


def _as_weights(weights: ArrayLike) -> NDArray[np.float64]:
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ScorerInputError(f"weights must be a square (n, n) matrix, got shape {w.shape}")
    if not np.isfinite(w).all():
        raise ScorerInputError("weights must be finite (no NaN or infinity)")
    # (w + w.T) / 2 leaves a symmetric matrix exactly as it is
    return np.ascontiguousarray(0.5 * (w + w.T))


def _prim(w: NDArray[np.float64]) -> NDArray[np.int64]:
    from brittle.scorers import _mst_kernels  # deferred: loads Numba and the compiled kernels

    parent = np.empty(w.shape[0], dtype=np.int64)
    _mst_kernels.prim(w, parent)
    return parent


def minimum_spanning_tree(weights: ArrayLike) -> NDArray[np.int64]:
    """Minimum spanning tree of a dense weight matrix.

    Args:
        weights: float (n, n). An asymmetric matrix is symmetrised as ``(w + w.T) / 2``;
            the diagonal is ignored.

    Returns:
        int64 parent array (n,): ``parent[0] = -1``, ``parent[v]`` the neighbour of ``v``
        towards vertex 0. Among equal-weight trees, ties go to lower vertex indices.
    """
    return _prim(_as_weights(weights))


def maximum_spanning_tree(weights: ArrayLike) -> NDArray[np.int64]:
    """Maximum spanning tree of a dense weight matrix (same conventions as the minimum)."""
    return _prim(-_as_weights(weights))


def tree_edges(parent: ArrayLike) -> NDArray[np.int64]:
    """Undirected edges ``(i, j)`` with ``i < j`` of a parent array, shape (n - 1, 2), sorted."""
    p = np.asarray(parent, dtype=np.int64).reshape(-1)
    child = np.flatnonzero(p >= 0)
    edges = np.stack([np.minimum(child, p[child]), np.maximum(child, p[child])], axis=1)
    order = np.lexsort((edges[:, 1], edges[:, 0]))
    return np.ascontiguousarray(edges[order])


def parent_to_heads(parent: ArrayLike) -> NDArray[np.int64]:
    """HEAD array (1-based, 0 for the root) of a 0-based parent array (-1 for the root)."""
    p = np.asarray(parent, dtype=np.int64).reshape(-1)
    return p + 1


def spanning_tree_weight(weights: ArrayLike, parent: ArrayLike) -> float:
    """Total weight of the tree ``parent`` under the symmetrised ``weights``."""
    w = _as_weights(weights)
    p = np.asarray(parent, dtype=np.int64).reshape(-1)
    child = np.flatnonzero(p >= 0)
    return float(w[child, p[child]].sum())
