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
def match_occurrences(
    sorted_codes: NDArray[np.int64],
    sorted_pos: NDArray[np.int64],
    perturbed: NDArray[np.int64],
    perms: NDArray[np.int64],
    bad: NDArray[np.bool_],
) -> None:  # pragma: no cover - jit
    """Recover the permutation of each perturbed row against one original.

    sorted_codes / sorted_pos: the original's unit codes sorted stably and their
    positions, both (k,). perturbed: (m, k) codes. For each row, the n-th occurrence of a
    code is matched to the n-th occurrence of that code in the original: ``perms[r, j]``
    receives its original position. ``bad[r]`` is set when the row is not a reordering.
    """
    m, k = perturbed.shape
    # used[s]: occurrences of the code starting at s consumed in row stamp[s]
    used = np.zeros(k, dtype=np.int64)
    stamp = np.full(k, -1, dtype=np.int64)
    for r in range(m):
        bad[r] = False
        for j in range(k):
            c = perturbed[r, j]
            start = np.searchsorted(sorted_codes, c)
            if start < k and stamp[start] != r:
                stamp[start] = r
                used[start] = 0
            slot = start + used[start] if start < k else k
            if slot >= k or sorted_codes[slot] != c:
                bad[r] = True
                break
            used[start] += 1
            perms[r, j] = sorted_pos[slot]
