"""Numba kernels for order-displacement metrics (DND, IDC) and permutation recovery.

Imported lazily by :mod:`brittle.scorers.order`; kernels compile on first call and are
cached on disk. A permutation ``p`` of length ``k`` maps position ``j`` of the perturbed
sequence to ``p[j]``, the position of the same unit in the original.

The kernels are single-threaded on purpose: they already handle millions of rows per
second, and serial kernels compile several times faster than parallel ones.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import NDArray


@njit(cache=True)
def order_scores(
    perms: NDArray[np.int64],
    lengths: NDArray[np.int64],
    check: bool,
    dnd: NDArray[np.float64],
    idc: NDArray[np.float64],
    bad: NDArray[np.bool_],
) -> None:  # pragma: no cover - jit
    """DND and IDC of every row ``perms[r, :lengths[r]]``.

    perms: (m, kmax); lengths: (m,); dnd, idc: (m,) outputs; bad: (m,) output, set where
    ``check`` is true and the row is not a permutation of ``0..k-1``.
    """
    m = perms.shape[0]
    seen = np.full(perms.shape[1], -1, dtype=np.int64)  # seen[v] == r: v already met in row r
    for r in range(m):
        k = lengths[r]
        bad[r] = False
        if check:
            for j in range(k):
                v = perms[r, j]
                if v < 0 or v >= k or seen[v] == r:
                    bad[r] = True
                    break
                seen[v] = r
        disp = 0
        breaks = 0
        prev = perms[r, 0] if k > 0 else 0
        for j in range(k):
            v = perms[r, j]
            disp += abs(v - j)
            if j > 0:
                if v - prev != 1:
                    breaks += 1
                prev = v
        idc[r] = disp / (k * k) if k > 0 else 0.0
        dnd[r] = breaks / (k - 1) if k > 1 else 0.0


@njit(cache=True)
def match_tiles(
    original: NDArray[np.int64],
    perturbed: NDArray[np.int64],
    perms: NDArray[np.int64],
    bad: NDArray[np.bool_],
) -> None:  # pragma: no cover - jit
    """Recover, for each perturbed row, a permutation that keeps moved runs whole.

    A repeated unit (a space, a ``the``) could come from any of its occurrences; the
    n-th-to-n-th rule cuts every moved phrase at each repeat and inflates DND. This is
    greedy string tiling: the longest common run of unmatched units is matched first
    (the earliest in the perturbed row, then in the original, on ties), then the
    longest of what is left, until every unit is matched. O(k^2) per tile; once only
    single units are left they are matched in one O(k^2) pass.

    original: (k,) codes; perturbed: (m, k) codes; perms: (m, k) output; bad: (m,)
    output, set where the row is not a reordering (a unit is left unmatched).
    """
    m, k = perturbed.shape
    used = np.zeros(k, dtype=np.bool_)
    done = np.zeros(k, dtype=np.bool_)
    prev = np.zeros(k + 1, dtype=np.int64)
    cur = np.zeros(k + 1, dtype=np.int64)
    for r in range(m):
        bad[r] = False
        used[:] = False
        done[:] = False
        left = k
        while left > 0:
            best = 0
            best_i = -1
            best_j = -1
            prev[:] = 0
            for j in range(k):
                cur[0] = 0
                for i in range(k):
                    if done[j] or used[i] or perturbed[r, j] != original[i]:
                        cur[i + 1] = 0
                    else:
                        cur[i + 1] = prev[i] + 1
                        length = cur[i + 1]
                        # a run ending at (i, j) starts at (i - length + 1, j - length + 1)
                        sj = j - length + 1
                        si = i - length + 1
                        if length > best or (
                            length == best and (sj < best_j or (sj == best_j and si < best_i))
                        ):
                            best = length
                            best_i = si
                            best_j = sj
                for i in range(k + 1):
                    prev[i] = cur[i]
            if best == 0:
                bad[r] = True
                break
            if best == 1:
                # Only single units are left, and none can continue a neighbour's run
                # (that would be a run of two): the earliest unused occurrence, in order,
                # is what tiling one unit at a time would choose. O(k^2) instead of
                # O(k^3) for a thoroughly shuffled row.
                for j in range(k):
                    if done[j]:
                        continue
                    found = -1
                    for i in range(k):
                        if not used[i] and original[i] == perturbed[r, j]:
                            found = i
                            break
                    if found < 0:
                        bad[r] = True
                        break
                    perms[r, j] = found
                    used[found] = True
                    done[j] = True
                break
            for t in range(best):
                perms[r, best_j + t] = best_i + t
                used[best_i + t] = True
                done[best_j + t] = True
            left -= best
