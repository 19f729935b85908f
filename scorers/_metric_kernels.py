"""Numba kernels for the per-sentence probe metrics, many sentences per call.

Imported lazily by :mod:`brittle.scorers.metrics`; kernels compile on first call and are
cached on disk. They compute what :func:`~brittle.scorers.metrics.score_distances` and
:func:`~brittle.scorers.metrics.score_depths` compute, equal to the last bit:

- the spanning trees are :func:`~brittle.scorers._mst_kernels.prim` on the same
  symmetrised weights ``0.5 * (p + p.T)``, so they are the same trees;
- ranks are averages of 1-based positions, multiples of 0.5, so centring them and the
  sums of their products are exact whatever the order of summation; the square root,
  the division and the clipping that follow are the same single operations;
- the mean over the rows of a sentence repeats numpy's pairwise summation.

Sentences are packed into flat arrays. A batch has ``g`` distinct gold trees, laid one
after the other in ``heads`` and ``punct`` (tree ``t`` at ``gold_start[t]`` to
``gold_start[t + 1]``, so ``n_t = gold_start[t + 1] - gold_start[t]`` words), and ``m``
predictions: prediction ``r`` is scored against tree ``gold_of[r]`` and is stored
row-major in ``values`` from ``value_start[r]`` (``n * n`` values for distances, ``n``
for depths).

The kernels are single-threaded on purpose: serial kernels compile several times faster
than parallel ones, and a sentence takes microseconds.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import NDArray

from brittle.engine.core._tree_kernels import tree_depths, tree_distances
from brittle.scorers._mst_kernels import prim


@njit(cache=True)
def is_tree(heads: NDArray[np.int64]) -> bool:  # pragma: no cover - jit
    """Whether a HEAD array (n,) is one rooted tree (as ``engine.tree.tree_problems``).

    At least one word, every HEAD in ``0..n``, no word its own head, exactly one root and
    no cycle. Only says yes or no; the wrapper asks ``engine.tree`` for the problems.
    """
    n = heads.shape[0]
    if n == 0:
        return False
    roots = 0
    for i in range(n):
        h = heads[i]
        if h < 0 or h > n or h == i + 1:
            return False
        if h == 0:
            roots += 1
    if roots != 1:
        return False
    state = np.zeros(n + 1, dtype=np.int8)  # 0 new, 1 on the current path, 2 reaches root
    state[0] = 2
    for start in range(1, n + 1):
        node = start
        while state[node] == 0:
            state[node] = 1
            node = heads[node - 1]
        if state[node] == 1:
            return False
        node = start
        while state[node] == 1:
            state[node] = 2
            node = heads[node - 1]
    return True


@njit(cache=True)
def _block_sum(a: NDArray[np.float64], lo: int, n: int) -> float:  # pragma: no cover - jit
    """Sum of ``a[lo:lo + n]``, ``n <= 128``, in numpy's order (eight running sums)."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0 = a[lo]
    r1 = a[lo + 1]
    r2 = a[lo + 2]
    r3 = a[lo + 3]
    r4 = a[lo + 4]
    r5 = a[lo + 5]
    r6 = a[lo + 6]
    r7 = a[lo + 7]
    i = 8
    stop = n - n % 8
    while i < stop:
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit(cache=True)
def pairwise_sum(a: NDArray[np.float64]) -> float:  # pragma: no cover - jit
    """Sum of a 1-D array in numpy's pairwise order (as ``np.add.reduce``).

    numpy halves a run longer than 128 values (the first half a multiple of 8) and adds
    the two halves' sums; shorter runs are summed by :func:`_block_sum`. The halving is
    done with explicit stacks, not recursion: a recursive kernel crashed when loaded back
    from the disk cache.
    """
    n = a.shape[0]
    if n <= 128:
        return _block_sum(a, 0, n)
    # tasks: (lo, n, 0) sums a run, (0, 0, 1) adds the last two sums
    depth = 3 * 64
    task_lo = np.empty(depth, dtype=np.int64)
    task_n = np.empty(depth, dtype=np.int64)
    task_kind = np.empty(depth, dtype=np.int64)
    sums = np.empty(depth)
    nt = 1
    ns = 0
    task_lo[0] = 0
    task_n[0] = n
    task_kind[0] = 0
    while nt:
        nt -= 1
        lo = task_lo[nt]
        k = task_n[nt]
        if task_kind[nt] == 1:
            ns -= 1
            sums[ns - 1] = sums[ns - 1] + sums[ns]
        elif k <= 128:
            sums[ns] = _block_sum(a, lo, k)
            ns += 1
        else:
            half = k // 2
            half -= half % 8
            task_lo[nt] = 0
            task_n[nt] = 0
            task_kind[nt] = 1
            task_lo[nt + 1] = lo + half
            task_n[nt + 1] = k - half
            task_kind[nt + 1] = 0
            task_lo[nt + 2] = lo
            task_n[nt + 2] = half
            task_kind[nt + 2] = 0
            nt += 3
    return sums[0]


#: Rows up to this length are ranked by counting (O(k**2) but branch-free: faster than
#: sorting at sentence lengths); longer ones by heap sort (O(k log k)).
_COUNTING = 384


@njit(cache=True)
def _sift_down(
    x: NDArray[np.float64], order: NDArray[np.int64], root: int, end: int
) -> None:  # pragma: no cover - jit
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and x[order[child + 1]] > x[order[child]]:
            child += 1
        if not x[order[child]] > x[order[root]]:
            return
        order[root], order[child] = order[child], order[root]
        root = child


@njit(cache=True)
def heap_argsort(
    x: NDArray[np.float64], order: NDArray[np.int64]
) -> None:  # pragma: no cover - jit
    """Indices that sort ``x`` (k,) ascending into ``order`` (k,); ties in any order."""
    k = x.shape[0]
    for i in range(k):
        order[i] = i
    for root in range(k // 2 - 1, -1, -1):
        _sift_down(x, order, root, k)
    for end in range(k - 1, 0, -1):
        order[0], order[end] = order[end], order[0]
        _sift_down(x, order, 0, end)


@njit(cache=True)
def centred_ranks(
    x: NDArray[np.float64], out: NDArray[np.float64]
) -> None:  # pragma: no cover - jit
    """Average ranks of a 1-D array ``x`` (k,), minus their mean ``(k + 1) / 2``, into ``out``.

    Ranks are 1-based and tied values share the average of their ranks, as
    :func:`brittle.scorers.rank.rankdata`: the values tied with ``x[i]`` take the
    sorted positions ``less .. less + equal - 1``, whose mean rank is
    ``(2 * less + equal - 1) / 2 + 1``.
    """
    k = x.shape[0]
    mean = (k + 1) / 2.0
    if k <= _COUNTING:
        for i in range(k):
            v = x[i]
            c = 0  # 2 * less + equal
            for j in range(k):
                xj = x[j]
                c += int(xj < v) + int(xj <= v)
            out[i] = (c - 1) / 2.0 + 1.0 - mean
        return
    order = np.empty(k, dtype=np.int64)
    heap_argsort(x, order)
    i = 0
    while i < k:
        v = x[order[i]]
        j = i
        while j + 1 < k and x[order[j + 1]] == v:
            j += 1
        r = (i + j) / 2.0 + 1.0 - mean
        for t in range(i, j + 1):
            out[order[t]] = r
        i = j + 1


@njit(cache=True)
def centred_ranks_small(
    x: NDArray[np.int32], out: NDArray[np.float64], count: NDArray[np.int64]
) -> None:  # pragma: no cover - jit
    """:func:`centred_ranks` of integers in ``0..k-1`` (tree distances), by counting.

    x: (k,); out: (k,) output; count: scratch of at least k + 1 values.
    """
    k = x.shape[0]
    for v in range(k + 1):
        count[v] = 0
    for i in range(k):
        count[x[i] + 1] += 1
    # count[v + 1] words at value v; turn count[v] into the number of words below v
    for v in range(1, k + 1):
        count[v] += count[v - 1]
    mean = (k + 1) / 2.0
    for i in range(k):
        v = x[i]
        below = count[v]
        last = count[v + 1] - 1
        out[i] = (below + last) / 2.0 + 1.0 - mean


@njit(cache=True)
def _sum_squares(c: NDArray[np.float64]) -> float:  # pragma: no cover - jit
    s = 0.0
    for i in range(c.shape[0]):
        s += c[i] * c[i]
    return s


@njit(cache=True)
def _correlation(
    cx: NDArray[np.float64], cy: NDArray[np.float64], syy: float, n: int
) -> float:  # pragma: no cover - jit
    """Pearson correlation of centred ranks ``cx[:n]`` and ``cy[:n]`` (``syy = sum(cy**2)``).

    0 where it is undefined (a constant side), clipped to [-1, 1].
    """
    num = 0.0
    sxx = 0.0
    for j in range(n):
        num += cx[j] * cy[j]
        sxx += cx[j] * cx[j]
    den = np.sqrt(sxx * syy)
    if not den > 0.0:
        return 0.0
    rho = num / den
    if rho > 1.0:
        return 1.0
    if rho < -1.0:
        return -1.0
    return rho


@njit(cache=True)
def _mean_row_correlation(
    x: NDArray[np.float64],
    gold_c: NDArray[np.float64],
    gold_ss: NDArray[np.float64],
    ranks: NDArray[np.float64],
    rho: NDArray[np.float64],
) -> float:  # pragma: no cover - jit
    """Mean over rows ``i`` of the rank correlation of ``x[i]`` and the gold row ``i``.

    x: (n * n,) a matrix row-major; gold_c: (n * n,) centred gold ranks, row-major;
    gold_ss: (n,) their row sums of squares; ranks, rho: (n,) scratch.
    """
    n = gold_ss.shape[0]
    for i in range(n):
        centred_ranks(x[i * n : (i + 1) * n], ranks)
        rho[i] = _correlation(ranks, gold_c[i * n : (i + 1) * n], gold_ss[i], n)
    return pairwise_sum(rho) / n


@njit(cache=True)
def _mean_row_correlation_tree(
    x: NDArray[np.int32],
    gold_c: NDArray[np.float64],
    gold_ss: NDArray[np.float64],
    ranks: NDArray[np.float64],
    rho: NDArray[np.float64],
    count: NDArray[np.int64],
) -> float:  # pragma: no cover - jit
    """:func:`_mean_row_correlation` of tree distances ``x`` (n, n), integers in ``0..n-1``.

    count: (n + 1,) scratch.
    """
    n = x.shape[0]
    for i in range(n):
        centred_ranks_small(x[i], ranks, count)
        rho[i] = _correlation(ranks, gold_c[i * n : (i + 1) * n], gold_ss[i], n)
    return pairwise_sum(rho) / n


@njit(cache=True)
def _uuas(
    w: NDArray[np.float64],
    heads: NDArray[np.int64],
    punct: NDArray[np.bool_],
    parent: NDArray[np.int64],
) -> tuple[int, int]:  # pragma: no cover - jit
    """Correct and gold undirected edges without punctuation.

    w: (n, n) symmetrised predicted distances; heads, punct: (n,); parent: (n,) the
    minimum spanning tree of ``w``.
    """
    n = heads.shape[0]
    total = 0
    keep = np.empty(n, dtype=np.int64)
    k = 0
    for i in range(n):
        h = heads[i] - 1
        if h >= 0 and not punct[i] and not punct[h]:
            total += 1
        if not punct[i]:
            keep[k] = i
            k += 1
    if k < 2:
        return 0, total
    sub_parent = parent
    if k < n:
        sub = np.empty((k, k))
        for a in range(k):
            for b in range(k):
                sub[a, b] = w[keep[a], keep[b]]
        sub_parent = np.empty(k, dtype=np.int64)
        prim(sub, sub_parent)
    correct = 0
    for c in range(k):
        pc = sub_parent[c]
        if pc < 0:
            continue
        a = keep[c]
        b = keep[pc]
        if heads[a] == b + 1 or heads[b] == a + 1:
            correct += 1
    return correct, total


@njit(cache=True)
def _gold_distance_tables(
    heads: NDArray[np.int64], gold_start: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Gold distances, their centred ranks and row sums of squares, once per tree.

    Tree ``t`` (n words) gets its (n, n) distance matrix row-major from ``start[t]`` in
    ``gold`` (as floats) and ``centred``, and the sum of squares of row ``i`` at
    ``gold_start[t] + i`` in ``ss``. Returns ``(start, gold, centred, ss)``.
    """
    g = gold_start.shape[0] - 1
    start = np.zeros(g + 1, dtype=np.int64)
    for t in range(g):
        n = gold_start[t + 1] - gold_start[t]
        start[t + 1] = start[t] + n * n
    gold = np.empty(start[g])
    centred = np.empty(start[g])
    ss = np.empty(gold_start[g])
    for t in range(g):
        s = gold_start[t]
        n = gold_start[t + 1] - s
        d = tree_distances(heads[s : s + n])
        o = start[t]
        for i in range(n):
            for j in range(n):
                gold[o + i * n + j] = d[i, j]
            centred_ranks(gold[o + i * n : o + (i + 1) * n], centred[o + i * n : o + (i + 1) * n])
            ss[s + i] = _sum_squares(centred[o + i * n : o + (i + 1) * n])
    return start, gold, centred, ss


@njit(cache=True)
def score_distances_packed(
    values: NDArray[np.float64],
    value_start: NDArray[np.int64],
    gold_of: NDArray[np.int64],
    heads: NDArray[np.int64],
    punct: NDArray[np.bool_],
    gold_start: NDArray[np.int64],
    counts: NDArray[np.int64],
    rows: NDArray[np.float64],
) -> None:  # pragma: no cover - jit
    """Distance-probe scores of ``m`` predictions (layout in the module docstring).

    counts: (m, 4) output: uuas_correct, uuas_total, sdr_equal, sdr_total.
    rows: (m, 2) output: dspr, dspr_prim.
    """
    mat_start, gold_d, gold_c, gold_ss = _gold_distance_tables(heads, gold_start)
    k = 1
    for t in range(gold_start.shape[0] - 1):
        k = max(k, gold_start[t + 1] - gold_start[t] + 1)
    ranks = np.empty(k)
    rho = np.empty(k)
    count = np.empty(k, dtype=np.int64)
    for r in range(gold_of.shape[0]):
        t = gold_of[r]
        s = gold_start[t]
        n = gold_start[t + 1] - s
        o = mat_start[t]
        v = value_start[r]
        # the spanning tree is that of the symmetrised matrix (w + w.T) / 2
        w = np.empty((n, n))
        for i in range(n):
            for j in range(n):
                w[i, j] = 0.5 * (values[v + i * n + j] + values[v + j * n + i])
        parent = np.empty(n, dtype=np.int64)
        prim(w, parent)
        correct, total = _uuas(w, heads[s : s + n], punct[s : s + n], parent)
        equal = 0
        for i in range(n):
            for j in range(i + 1, n):
                if np.rint(values[v + i * n + j]) == gold_d[o + i * n + j]:
                    equal += 1
        counts[r, 0] = correct
        counts[r, 1] = total
        counts[r, 2] = equal
        counts[r, 3] = n * (n - 1) // 2
        if n:
            cv = gold_c[o : o + n * n]
            ss = gold_ss[s : s + n]
            rows[r, 0] = _mean_row_correlation(values[v : v + n * n], cv, ss, ranks[:n], rho[:n])
            tree_d = tree_distances(parent + 1)
            rows[r, 1] = _mean_row_correlation_tree(tree_d, cv, ss, ranks[:n], rho[:n], count)
        else:
            rows[r, 0] = 0.0
            rows[r, 1] = 0.0


@njit(cache=True)
def score_depths_packed(
    values: NDArray[np.float64],
    value_start: NDArray[np.int64],
    gold_of: NDArray[np.int64],
    heads: NDArray[np.int64],
    punct: NDArray[np.bool_],
    gold_start: NDArray[np.int64],
    counts: NDArray[np.int64],
    rho: NDArray[np.float64],
) -> None:  # pragma: no cover - jit
    """Depth-probe scores of ``m`` predictions (layout in the module docstring).

    counts: (m, 3) output: root_correct (0 or 1), depth_correct, depth_total.
    rho: (m,) output: Spearman of predicted and gold depths, 0 when undefined.
    """
    g = gold_start.shape[0] - 1
    # gold depths (as floats), their centred ranks and sum of squares, root, per tree
    gold_depth = np.empty(gold_start[g])
    gold_c = np.empty(gold_start[g])
    gold_ss = np.empty(g)
    root = np.full(g, -1, dtype=np.int64)
    k = 1
    for t in range(g):
        s = gold_start[t]
        n = gold_start[t + 1] - s
        k = max(k, n + 1)
        d = tree_depths(heads[s : s + n])
        for i in range(n):
            gold_depth[s + i] = d[i]
            if heads[s + i] == 0 and root[t] < 0:
                root[t] = i
        centred_ranks(gold_depth[s : s + n], gold_c[s : s + n])
        gold_ss[t] = _sum_squares(gold_c[s : s + n])
    ranks = np.empty(k)
    for r in range(gold_of.shape[0]):
        t = gold_of[r]
        s = gold_start[t]
        n = gold_start[t + 1] - s
        v = value_start[r]
        # the shallowest non-punctuation word (any word when all are punctuation)
        all_masked = True
        for i in range(n):
            if not punct[s + i]:
                all_masked = False
                break
        best = -1
        for i in range(n):
            if (all_masked or not punct[s + i]) and (best < 0 or values[v + i] < values[v + best]):
                best = i
        counts[r, 0] = 1 if n > 0 and best == root[t] else 0
        correct = 0
        for i in range(n):
            if np.rint(values[v + i]) == gold_depth[s + i]:
                correct += 1
        counts[r, 1] = correct
        counts[r, 2] = n
        if n:
            centred_ranks(values[v : v + n], ranks[:n])
            rho[r] = _correlation(ranks, gold_c[s : s + n], gold_ss[t], n)
        else:
            rho[r] = 0.0
