"""Tree utilities over HEAD arrays.

A tree is given by ``heads``: int array of shape (n,), ``heads[i]`` the 1-based head of
word ``i + 1`` and 0 for the root. Kernels are module-level Numba functions that
compile on first call (cached on disk) and live in
:mod:`brittle.engine.core._tree_kernels`; the functions here validate and convert.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray


def _as_heads(heads: ArrayLike) -> NDArray[np.int64]:
    arr = np.ascontiguousarray(np.asarray(heads), dtype=np.int64)
    if arr.ndim != 1:
        raise ValueError(f"heads must be one-dimensional, got shape {arr.shape}")
    return arr


def tree_problems(heads: ArrayLike) -> list[str]:
    """Everything that keeps ``heads`` from being a rooted tree; empty when valid.

    Checks: HEAD in 0..n, no word is its own head, exactly one root, no cycle.
    """
    arr = _as_heads(heads)
    n = arr.shape[0]
    problems: list[str] = []
    if n == 0:
        return ["sentence has no words"]
    bad = np.flatnonzero((arr < 0) | (arr > n))
    for i in bad:
        problems.append(f"word {i + 1} has HEAD {arr[i]} out of range 0..{n}")
    own = np.flatnonzero(arr == np.arange(1, n + 1))
    for i in own:
        problems.append(f"word {i + 1} is its own head")
    roots = np.flatnonzero(arr == 0) + 1
    if roots.size == 0:
        problems.append("no root (no word has HEAD 0)")
    elif roots.size > 1:
        problems.append(f"several roots: words {', '.join(map(str, roots))} have HEAD 0")
    if problems:
        return problems
    cycle = _find_cycle(arr)
    if cycle:
        problems.append(f"cycle through words {' -> '.join(map(str, cycle))}")
    return problems


def _find_cycle(heads: NDArray[np.int64]) -> list[int]:
    """A cycle (1-based word ids) not reaching the root, or [] when there is none."""
    n = heads.shape[0]
    state = np.zeros(n + 1, dtype=np.int8)  # 0 new, 1 on current path, 2 done
    state[0] = 2
    for start in range(1, n + 1):
        path: list[int] = []
        node = start
        while state[node] == 0:
            state[node] = 1
            path.append(node)
            node = int(heads[node - 1])
        if state[node] == 1:
            return [*path[path.index(node) :], node]
        for p in path:
            state[p] = 2
    return []


def validate_heads(heads: ArrayLike) -> NDArray[np.int64]:
    """``heads`` as int64 if it is a valid tree, else ``ValueError`` naming the problems."""
    problems = tree_problems(heads)
    if problems:
        raise ValueError("; ".join(problems))
    return _as_heads(heads)


def children(heads: ArrayLike) -> tuple[tuple[int, ...], ...]:
    """Children of every node 0..n (0 is the artificial root), each in word order (1-based)."""
    arr = _as_heads(heads)
    out: list[list[int]] = [[] for _ in range(arr.shape[0] + 1)]
    for i, h in enumerate(arr.tolist()):
        out[h].append(i + 1)
    return tuple(tuple(c) for c in out)


def root_index(heads: ArrayLike) -> int:
    """0-based index of the root word (the first word with HEAD 0)."""
    arr = _as_heads(heads)
    roots = np.flatnonzero(arr == 0)
    if roots.size == 0:
        raise ValueError("no root (no word has HEAD 0)")
    return int(roots[0])


def distance_matrix(heads: ArrayLike) -> NDArray[np.int32]:
    """All-pairs tree path lengths between words, shape (n, n), int32, in edges.

    Raises ``ValueError`` when ``heads`` is not a tree.
    """
    # Deferred: importing the kernels loads Numba (about half a second), which reading
    # and writing CoNLL-U never needs.
    from brittle.engine.core._tree_kernels import tree_distances

    return tree_distances(validate_heads(heads))


def depths(heads: ArrayLike) -> NDArray[np.int32]:
    """Depth of each word in edges from the root word (root word 0), shape (n,), int32."""
    from brittle.engine.core._tree_kernels import tree_depths  # deferred: loads Numba

    return tree_depths(validate_heads(heads))


def max_depth(heads: ArrayLike) -> int:
    """Largest word depth; 0 for a one-word tree."""
    d = depths(heads)
    return int(d.max()) if d.size else 0


def is_projective(heads: ArrayLike) -> bool:
    """Whether no two arcs cross (the artificial root arc included)."""
    arr = validate_heads(heads)
    n = arr.shape[0]
    lo = np.minimum(np.arange(1, n + 1), arr)
    hi = np.maximum(np.arange(1, n + 1), arr)
    # Two arcs (a, b) and (c, d) with a < b, c < d cross when a < c < b < d.
    a = lo[:, None]
    b = hi[:, None]
    c = lo[None, :]
    d = hi[None, :]
    crossing = (a < c) & (c < b) & (b < d)
    return not bool(crossing.any())
