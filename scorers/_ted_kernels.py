"""Numba kernels for the Zhang–Shasha ordered tree edit distance.

Imported lazily by :mod:`brittle.scorers.distance`; kernels compile on first call and
are cached on disk. Trees cross into the kernels as arrays:

- ``heads``: int64 (n,), 1-based HEAD of each word, 0 for a child of the artificial root.
- ``labels``: int64 (n,), label id of each word; the artificial root gets ``root_label``.

:func:`prepare` turns these into the postorder arrays the algorithm runs on (node 0 of
the tree is the artificial root, node ``w`` is word ``w``; children in word order, or
right to left for the mirror image):

- ``post_labels``: int64 (N,), label of the i-th node in postorder (N = n + 1);
- ``lml``: int64 (N,), postorder index of the leftmost leaf descendant of node i;
- ``keyroots``: int64 (K,), increasing postorder indices of the LR-keyroots.

Zhang–Shasha's work for two trees is the product of their *decomposition costs* (the sum
of the keyroot subtree sizes). Mirroring both trees does not change their distance, so
each pair is solved in whichever orientation, left-to-right or mirrored, costs less.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba
import numpy as np
from numba import njit, prange
from numpy.typing import NDArray

# The parallel loop below is brittle's only one. Numba's OpenMP threading layer leaves
# its worker threads competing with torch's own OpenMP pool once the loop has run:
# coCO's language model then ran 20 times slower in the same process (`brittle bench`'s
# generator.coco after tree_edit_distance: 0.10 sentences/s against 2.1). The workqueue
# layer parks its threads between loops. A layer the user chose
# (NUMBA_THREADING_LAYER) is kept.
# (numba.config sets its attributes from the environment at run time: no stubs)
if numba.config.THREADING_LAYER == "default":  # type: ignore[attr-defined]
    numba.config.THREADING_LAYER = "workqueue"  # type: ignore[attr-defined]

F = TypeVar("F", bound=Callable[..., Any])

Prepared = tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], int, int, bool]


@njit(cache=True)
def prepare(
    heads: NDArray[np.int64], labels: NDArray[np.int64], root_label: int, mirror: bool
) -> Prepared:  # pragma: no cover - jit
    """Postorder arrays of one tree (see the module docstring).

    Returns:
        ``(post_labels, lml, keyroots, cost, mirror_cost, ok)``: ``cost`` is this
        orientation's decomposition cost, ``mirror_cost`` the other orientation's; ``ok``
        is False when ``heads`` is not a tree (a HEAD outside 0..n, or a cycle that never
        reaches the artificial root); the other values are then meaningless.
    """
    n = heads.shape[0]
    big_n = n + 1
    # two allocations: the three outputs share one buffer, the scratch arrays another
    out = np.empty(3 * big_n, dtype=np.int64)
    post_labels = out[:big_n]
    lml = out[big_n : 2 * big_n]
    scratch = np.zeros(5 * big_n + 1, dtype=np.int64)
    start = scratch[: big_n + 1]  # children of v (0..n) in word order: kids[start[v]:start[v+1]]
    fill = scratch[big_n + 1 : 2 * big_n + 1]
    kids = scratch[2 * big_n + 1 : 3 * big_n + 1]
    cursor = scratch[3 * big_n + 1 : 4 * big_n + 1]
    post_of = scratch[4 * big_n + 1 :]
    for i in range(n):
        h = heads[i]
        if h < 0 or h > n:
            return post_labels, lml, lml[:0], 0, 0, False
        start[h + 1] += 1
    for v in range(big_n):
        start[v + 1] += start[v]
        fill[v] = start[v]
    for i in range(n):
        h = heads[i]
        kids[fill[h]] = i + 1
        fill[h] += 1
    # Iterative depth-first traversal from the artificial root, numbering in postorder.
    # cursor[v] counts the children of v visited so far; with ``mirror`` the k-th visited
    # child is the k-th from the right.
    stack = fill  # reused: at most big_n nodes are ever on the stack
    top = 0
    stack[0] = 0
    count = 0
    mirror_cost = big_n  # the root is a keyroot in both orientations
    while top >= 0:
        v = stack[top]
        c = cursor[v]
        first = start[v]
        degree = start[v + 1] - first
        if c < degree:
            cursor[v] = c + 1
            top += 1
            if top >= big_n:  # cannot happen for a tree; guards against runaway input
                return post_labels, lml, lml[:0], 0, 0, False
            stack[top] = kids[first + degree - 1 - c] if mirror else kids[first + c]
        else:
            top -= 1
            post_of[v] = count
            post_labels[count] = root_label if v == 0 else labels[v - 1]
            if degree > 0:
                leftmost = kids[first + degree - 1] if mirror else kids[first]
                lml[count] = lml[post_of[leftmost]]
            else:
                lml[count] = count
            if v != 0:
                p = heads[v - 1]
                # v has a sibling still to come: a keyroot of the mirrored orientation
                if cursor[p] < start[p + 1] - start[p]:
                    mirror_cost += count - lml[count] + 1
            count += 1
    if count != big_n:
        return post_labels, lml, lml[:0], 0, 0, False
    # keyroots: the highest node of every leftmost-leaf class, in increasing order
    seen = cursor  # reused as flags
    seen[:] = 0
    keyroots_buf = out[2 * big_n :]
    nk = 0
    cost = 0
    for i in range(big_n - 1, -1, -1):
        if seen[lml[i]] == 0:
            seen[lml[i]] = 1
            keyroots_buf[nk] = i
            nk += 1
            cost += i - lml[i] + 1
    keyroots = keyroots_buf[:nk]
    for t in range(nk // 2):
        keyroots[t], keyroots[nk - 1 - t] = keyroots[nk - 1 - t], keyroots[t]
    return post_labels, lml, keyroots, cost, mirror_cost, True


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
    """Tree edit distance between two prepared trees of the same orientation.

    The tables are flat arrays indexed with unsigned integers in the inner loops, which
    spares Numba's negative-index checks (about a fifth of the run time).
    """
    na = labels_a.shape[0]
    nb = labels_b.shape[0]
    if na == nb:  # identical trees (same shape and labels) are at distance 0
        same = True
        for t in range(na):
            if labels_a[t] != labels_b[t] or lml_a[t] != lml_b[t]:
                same = False
                break
        if same:
            return 0.0
    one = np.uint64(1)
    width = nb + 1
    # td[i * nb + j]: distance between the subtrees of i and j, filled keyroot by keyroot
    td = np.empty(na * nb, dtype=np.float64)
    # fd[x * width + y]: forest distances of one keyroot pair, indexed from the pair's
    # leftmost leaves. Row 0 and column 0 (inserting or deleting a whole prefix) are the
    # same for every pair, so they are filled once.
    fd = np.empty((na + 1) * width, dtype=np.float64)
    fd[0] = 0.0
    for x in range(1, na + 1):
        fd[x * width] = fd[(x - 1) * width] + cost_delete
    for y in range(1, nb + 1):
        fd[y] = fd[y - 1] + cost_insert
    for ia in range(keyroots_a.shape[0]):
        i = keyroots_a[ia]
        li = lml_a[i]
        rows = i - li + 1
        for jb in range(keyroots_b.shape[0]):
            j = keyroots_b[jb]
            lj = lml_b[j]
            cols = j - lj + 1
            if rows == 1 and cols == 1:  # two leaves
                ren = 0.0 if labels_a[i] == labels_b[j] else cost_rename
                td[i * nb + j] = min(ren, cost_delete + cost_insert)
                continue
            x = 1
            while x <= rows:
                i1 = li + x - 1
                p = lml_a[i1] - li  # forest row just before the subtree of i1
                row = np.uint64(x * width)
                prev = np.uint64((x - 1) * width)
                td_row = np.uint64(i1 * nb)
                left = fd[row]
                # Terms that do not depend on ``left`` are combined first, keeping the
                # loop-carried dependency to one addition and one minimum.
                if p == 0:  # i1 is on the left path of keyroot i
                    lab = labels_a[i1]
                    for y in range(1, cols + 1):
                        uy = np.uint64(y)
                        j1 = np.uint64(lj + y - 1)
                        q = lml_b[j1] - lj
                        up = fd[prev + uy] + cost_delete
                        if q == 0:  # both prefixes are whole subtrees: match or rename
                            ren = 0.0 if lab == labels_b[j1] else cost_rename
                            other = min(up, fd[prev + uy - one] + ren)
                            left = min(other, left + cost_insert)
                            td[td_row + j1] = left
                        else:
                            other = min(up, fd[np.uint64(q)] + td[td_row + j1])
                            left = min(other, left + cost_insert)
                        fd[row + uy] = left
                    x += 1
                    continue
                p_row = np.uint64(p * width - lj)
                p2 = lml_a[i1 + 1] - li if x < rows else 0
                if p2 == 0:
                    for y in range(1, cols + 1):
                        uy = np.uint64(y)
                        j1 = np.uint64(lj + y - 1)
                        up = fd[prev + uy] + cost_delete
                        other = min(up, fd[p_row + np.uint64(lml_b[j1])] + td[td_row + j1])
                        left = min(other, left + cost_insert)
                        fd[row + uy] = left
                    x += 1
                    continue
                # Two forest rows in one sweep: their two dependency chains overlap.
                row2 = np.uint64((x + 1) * width)
                td_row2 = np.uint64((i1 + 1) * nb)
                p_row2 = np.uint64(p2 * width - lj)
                left2 = fd[row2]
                for y in range(1, cols + 1):
                    uy = np.uint64(y)
                    j1 = np.uint64(lj + y - 1)
                    lb = np.uint64(lml_b[j1])
                    up = fd[prev + uy] + cost_delete
                    other = min(up, fd[p_row + lb] + td[td_row + j1])
                    left = min(other, left + cost_insert)
                    fd[row + uy] = left
                    other2 = min(left + cost_delete, fd[p_row2 + lb] + td[td_row2 + j1])
                    left2 = min(other2, left2 + cost_insert)
                    fd[row2 + uy] = left2
                x += 2
    return td[na * nb - 1]


@njit(cache=True)
def ted_prepared(
    left_a: Prepared,
    right_a: Prepared,
    heads_b: NDArray[np.int64],
    labels_b: NDArray[np.int64],
    root_label: int,
    cost_delete: float,
    cost_insert: float,
    cost_rename: float,
) -> float:  # pragma: no cover - jit
    """Distance from tree A (prepared in both orientations) to a HEAD array; NaN if invalid."""
    pb, lb, kb, cost_b, mirror_cost_b, ok_b = prepare(heads_b, labels_b, root_label, False)
    if not (left_a[5] and ok_b):
        return np.nan
    if right_a[3] * mirror_cost_b < left_a[3] * cost_b:
        rpb, rlb, rkb, _, _, _ = prepare(heads_b, labels_b, root_label, True)
        return zhang_shasha(
            right_a[0], right_a[1], right_a[2], rpb, rlb, rkb, cost_delete, cost_insert, cost_rename
        )
    return zhang_shasha(
        left_a[0], left_a[1], left_a[2], pb, lb, kb, cost_delete, cost_insert, cost_rename
    )


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
    left_a = prepare(heads_a, labels_a, root_label, False)
    right_a = prepare(heads_a, labels_a, root_label, True)
    return ted_prepared(
        left_a, right_a, heads_b, labels_b, root_label, cost_delete, cost_insert, cost_rename
    )


def _one_to_many(
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
    """Body of :func:`ted_one_to_many` and :func:`ted_one_to_many_serial` (see them).

    ``prange`` is a parallel loop under ``parallel=True`` and ``range`` otherwise.
    """
    left_a = prepare(heads_a, labels_a, root_label, False)
    right_a = prepare(heads_a, labels_a, root_label, True)
    m = offsets.shape[0] - 1
    for t in prange(m):
        s = offsets[t]
        e = offsets[t + 1]
        out[t] = ted_prepared(
            left_a,
            right_a,
            flat_heads[s:e],
            flat_labels[s:e],
            root_label,
            cost_delete,
            cost_insert,
            cost_rename,
        )


def _named(body: F, name: str, doc: str) -> F:
    """A copy of the function ``body`` called ``name``, with the docstring ``doc``.

    Each compiled twin of one body is compiled from its own copy. Numba files a kernel's
    disk cache under the function's qualified name, and its cache key leaves out the
    compile options: two dispatchers of the very same function, one of them
    ``parallel=True``, would load each other's machine code from the cache.
    """
    code = body.__code__
    fn = types.FunctionType(code, body.__globals__, name, body.__defaults__, body.__closure__)
    fn.__qualname__ = name
    fn.__doc__ = doc
    fn.__annotations__ = dict(body.__annotations__)
    return cast(F, fn)


ted_one_to_many = njit(cache=True, parallel=True)(
    _named(
        _one_to_many,
        "ted_one_to_many",
        """``out[t]`` = distance from tree A to tree t of the packed batch (NaN if invalid).

    Tree t is ``flat_heads[offsets[t]:offsets[t + 1]]`` with the labels at the same slice.
    """,
    )
)

ted_one_to_many_serial = njit(cache=True)(
    _named(
        _one_to_many,
        "ted_one_to_many_serial",
        """:func:`ted_one_to_many` in the calling thread, for small batches.

    Starting and joining the parallel loop's threads costs about a millisecond, far
    more than a few 20-word distances (about 15 us each); the syntax constraint asks for
    a handful per sentence.
    """,
    )
)


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
        out[t] = ted_pair(
            flat_heads_a[sa:ea],
            flat_labels_a[sa:ea],
            flat_heads_b[sb:eb],
            flat_labels_b[sb:eb],
            root_label,
            cost_delete,
            cost_insert,
            cost_rename,
        )
