"""Numba kernels for the Zhang–Shasha ordered tree edit distance.

Imported lazily by :mod:`brittle.scorers.distance`; kernels compile on first call and
are cached on disk. Trees cross into the kernels as arrays:

- ``heads``: int64 (n,), 1-based HEAD of each word, 0 for a child of the artificial root.
- ``labels``: int64 (n,), label id of each word; the artificial root gets ``root_label``.

:func:`prepare` turns these into the postorder arrays the algorithm runs on (node 0 of
the tree is the artificial root, node ``w`` is word ``w``; children in word order):

- ``post_labels``: int64 (N,), label of the i-th node in postorder (N = n + 1);
- ``lml``: int64 (N,), postorder index of the leftmost leaf descendant of node i;
- ``keyroots``: int64 (K,), increasing postorder indices of the LR-keyroots.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange
from numpy.typing import NDArray


@njit(cache=True)
def prepare(
    heads: NDArray[np.int64], labels: NDArray[np.int64], root_label: int
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], bool]:  # pragma: no cover
    """Postorder labels, leftmost-leaf indices and keyroots; the flag is False if not a tree.

    A HEAD outside 0..n, or a cycle (words not reachable from the artificial root), makes
    the flag False (the arrays are then meaningless).
    """
    n = heads.shape[0]
    big_n = n + 1
    post_labels = np.empty(big_n, dtype=np.int64)
    lml = np.empty(big_n, dtype=np.int64)
    # children of node v (0..n) in word order: kids[start[v]:start[v + 1]]
    start = np.zeros(big_n + 1, dtype=np.int64)
    for i in range(n):
        h = heads[i]
        if h < 0 or h > n:
            return post_labels, lml, lml[:0], False
        start[h + 1] += 1
    for v in range(big_n):
        start[v + 1] += start[v]
    fill = start[:big_n].copy()
    kids = np.empty(max(n, 1), dtype=np.int64)
    for i in range(n):
        h = heads[i]
        kids[fill[h]] = i + 1
        fill[h] += 1
    # iterative depth-first traversal from the artificial root, numbering in postorder
    stack = np.empty(big_n, dtype=np.int64)
    cursor = np.empty(big_n, dtype=np.int64)  # next child slot of each node on the stack
    post_of = np.empty(big_n, dtype=np.int64)
    top = 0
    stack[0] = 0
    cursor[0] = start[0]
    count = 0
    while top >= 0:
        v = stack[top]
        c = cursor[v]
        if c < start[v + 1]:
            cursor[v] = c + 1
            child = kids[c]
            top += 1
            if top >= big_n:  # cannot happen for a tree; guards against runaway input
                return post_labels, lml, lml[:0], False
            stack[top] = child
            cursor[child] = start[child]
        else:
            top -= 1
            post_of[v] = count
            post_labels[count] = root_label if v == 0 else labels[v - 1]
            if start[v + 1] > start[v]:
                lml[count] = lml[post_of[kids[start[v]]]]
            else:
                lml[count] = count
            count += 1
    if count != big_n:
        return post_labels, lml, lml[:0], False
    # keyroots: the highest node of every leftmost-leaf class, in increasing order
    seen = np.zeros(big_n, dtype=np.bool_)
    rev = np.empty(big_n, dtype=np.int64)
    nk = 0
    for i in range(big_n - 1, -1, -1):
        if not seen[lml[i]]:
            seen[lml[i]] = True
            rev[nk] = i
            nk += 1
    keyroots = np.empty(nk, dtype=np.int64)
    for t in range(nk):
        keyroots[t] = rev[nk - 1 - t]
    return post_labels, lml, keyroots, True


@njit(cache=True)
def zhang_shasha(
    labels_a: NDArray[np.int64],
    lml_a: NDArray[np.int64],
    keyroots_a: NDArray[np.int64],
    labels_b: NDArray[np.int64],
    lml_b: NDArray[np.int64],
    keyroots_b: NDArray[np.int64],
    cost_delete: float,
    cost_insert: float,
    cost_rename: float,
) -> float:  # pragma: no cover - jit
    """Tree edit distance between two prepared trees (see :func:`prepare`)."""
    na = labels_a.shape[0]
    nb = labels_b.shape[0]
    td = np.empty((na, nb), dtype=np.float64)
    fd = np.empty((na + 1, nb + 1), dtype=np.float64)
    for ia in range(keyroots_a.shape[0]):
        i = keyroots_a[ia]
        li = lml_a[i]
        rows = i - li + 1
        for jb in range(keyroots_b.shape[0]):
            j = keyroots_b[jb]
            lj = lml_b[j]
            cols = j - lj + 1
            fd[0, 0] = 0.0
            for x in range(1, rows + 1):
                fd[x, 0] = fd[x - 1, 0] + cost_delete
            for y in range(1, cols + 1):
                fd[0, y] = fd[0, y - 1] + cost_insert
            for x in range(1, rows + 1):
                i1 = li + x - 1
                lx = lml_a[i1]
                lab = labels_a[i1]
                whole_a = lx == li
                for y in range(1, cols + 1):
                    j1 = lj + y - 1
                    ly = lml_b[j1]
                    best = fd[x - 1, y] + cost_delete
                    alt = fd[x, y - 1] + cost_insert
                    if alt < best:
                        best = alt
                    if whole_a and ly == lj:
                        alt = fd[x - 1, y - 1] + (0.0 if lab == labels_b[j1] else cost_rename)
                        if alt < best:
                            best = alt
                        fd[x, y] = best
                        td[i1, j1] = best
                    else:
                        alt = fd[lx - li, ly - lj] + td[i1, j1]
                        if alt < best:
                            best = alt
                        fd[x, y] = best
    return td[na - 1, nb - 1]


@njit(cache=True)
def ted_pair(
    heads_a: NDArray[np.int64],
    labels_a: NDArray[np.int64],
    heads_b: NDArray[np.int64],
    labels_b: NDArray[np.int64],
    root_label: int,
    cost_delete: float,
    cost_insert: float,
    cost_rename: float,
) -> float:  # pragma: no cover - jit
    """Tree edit distance of two HEAD arrays; NaN when either is not a tree."""
    pa, la, ka, ok_a = prepare(heads_a, labels_a, root_label)
    pb, lb, kb, ok_b = prepare(heads_b, labels_b, root_label)
    if not (ok_a and ok_b):
        return np.nan
    return zhang_shasha(pa, la, ka, pb, lb, kb, cost_delete, cost_insert, cost_rename)


@njit(cache=True, parallel=True)
def ted_one_to_many(
    heads_a: NDArray[np.int64],
    labels_a: NDArray[np.int64],
    flat_heads: NDArray[np.int64],
    flat_labels: NDArray[np.int64],
    offsets: NDArray[np.int64],
    root_label: int,
    cost_delete: float,
    cost_insert: float,
    cost_rename: float,
    out: NDArray[np.float64],
) -> None:  # pragma: no cover - jit
    """``out[t]`` = distance from tree A to tree t of the packed batch (NaN if invalid).

    Tree t is ``flat_heads[offsets[t]:offsets[t + 1]]`` with the labels at the same slice.
    """
    pa, la, ka, ok_a = prepare(heads_a, labels_a, root_label)
    m = offsets.shape[0] - 1
    for t in prange(m):
        s = offsets[t]
        e = offsets[t + 1]
        pb, lb, kb, ok_b = prepare(flat_heads[s:e], flat_labels[s:e], root_label)
        if ok_a and ok_b:
            out[t] = zhang_shasha(pa, la, ka, pb, lb, kb, cost_delete, cost_insert, cost_rename)
        else:
            out[t] = np.nan


@njit(cache=True, parallel=True)
def ted_pairs(
    flat_heads_a: NDArray[np.int64],
    flat_labels_a: NDArray[np.int64],
    offsets_a: NDArray[np.int64],
    flat_heads_b: NDArray[np.int64],
    flat_labels_b: NDArray[np.int64],
    offsets_b: NDArray[np.int64],
    root_label: int,
    cost_delete: float,
    cost_insert: float,
    cost_rename: float,
    out: NDArray[np.float64],
) -> None:  # pragma: no cover - jit
    """``out[t]`` = distance between tree t of batch A and tree t of batch B (NaN if invalid)."""
    m = offsets_a.shape[0] - 1
    for t in prange(m):
        sa = offsets_a[t]
        ea = offsets_a[t + 1]
        sb = offsets_b[t]
        eb = offsets_b[t + 1]
        pa, la, ka, ok_a = prepare(flat_heads_a[sa:ea], flat_labels_a[sa:ea], root_label)
        pb, lb, kb, ok_b = prepare(flat_heads_b[sb:eb], flat_labels_b[sb:eb], root_label)
        if ok_a and ok_b:
            out[t] = zhang_shasha(pa, la, ka, pb, lb, kb, cost_delete, cost_insert, cost_rename)
        else:
            out[t] = np.nan
