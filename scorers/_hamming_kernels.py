"""Numba kernels for Hamming distances over integer-encoded token sequences.

Imported lazily by :mod:`brittle.scorers.hamming`; every kernel compiles on its first
call and is cached on disk.

The kernels are single-threaded on purpose: they already handle millions of rows per
second, and serial kernels compile several times faster than parallel ones.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import NDArray


@njit(cache=True)
def hamming_one_to_many(
    original: NDArray[np.int64], candidates: NDArray[np.int64], out: NDArray[np.int64]
) -> None:  # pragma: no cover - jit
    """``out[r]`` = number of positions ``j`` with ``candidates[r, j] != original[j]``.

    original: (k,); candidates: (m, k); out: (m,).
    """
    m, k = candidates.shape
    for r in range(m):
        d = 0
        for j in range(k):
            if candidates[r, j] != original[j]:
                d += 1
        out[r] = d


@njit(cache=True)
def hamming_rows(
    a: NDArray[np.int64], b: NDArray[np.int64], out: NDArray[np.int64]
) -> None:  # pragma: no cover - jit
    """``out[r]`` = Hamming distance between rows ``a[r]`` and ``b[r]``; a, b: (m, k)."""
    m, k = a.shape
    for r in range(m):
        d = 0
        for j in range(k):
            if a[r, j] != b[r, j]:
                d += 1
        out[r] = d
