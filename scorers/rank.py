"""Rank statistics: average ranks with ties and Spearman's rank correlation.

Both work along the last axis of an array, so a whole (n, n) distance matrix is scored
row by row in one vectorised call.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from brittle.scorers.errors import LengthMismatchError

__all__ = ["rank_correlation_rows", "rankdata", "spearman", "spearman_rows"]


def rankdata(x: ArrayLike) -> NDArray[np.float64]:
    """Ranks along the last axis, 1-based, ties sharing the average of their ranks.

    Args:
        x: numeric array of any shape (..., k).

    Returns:
        float64 array of the same shape (as ``scipy.stats.rankdata(x, axis=-1)``).
    """
    a = np.asarray(x, dtype=np.float64)
    if a.ndim == 0:
        raise LengthMismatchError("rankdata needs at least one dimension")
    k = a.shape[-1]
    flat = a.reshape(int(np.prod(a.shape[:-1])), k)
    order = np.argsort(flat, axis=-1, kind="stable")
    s = np.take_along_axis(flat, order, axis=-1)
    idx = np.broadcast_to(np.arange(k), s.shape)
    if k:
        change = s[:, 1:] != s[:, :-1]
        first = np.concatenate([np.ones((s.shape[0], 1), bool), change], axis=1)
        last = np.concatenate([change, np.ones((s.shape[0], 1), bool)], axis=1)
        start = np.maximum.accumulate(np.where(first, idx, 0), axis=-1)
        end = np.minimum.accumulate(np.where(last, idx, k - 1)[:, ::-1], axis=-1)[:, ::-1]
        sorted_ranks = (start + end) / 2.0 + 1.0
    else:
        sorted_ranks = np.zeros(s.shape)
    ranks = np.empty_like(sorted_ranks)
    np.put_along_axis(ranks, order, sorted_ranks, axis=-1)
    return ranks.reshape(a.shape)


def rank_correlation_rows(ranks_a: ArrayLike, ranks_b: ArrayLike) -> NDArray[np.float64]:
    """Pearson correlation along the last axis of two rank arrays (see :func:`rankdata`).

    Lets a caller rank an array once and correlate it with several others. NaN where a
    row has fewer than 2 values or is constant.
    """
    rx = np.array(ranks_a, dtype=np.float64)
    ry = np.array(ranks_b, dtype=np.float64)
    if rx.shape != ry.shape:
        raise LengthMismatchError(f"shapes differ: {rx.shape} and {ry.shape}")
    if rx.ndim == 0:
        raise LengthMismatchError("correlation needs at least one dimension")
    if rx.shape[-1]:
        rx -= rx.mean(axis=-1, keepdims=True)
        ry -= ry.mean(axis=-1, keepdims=True)
    num = (rx * ry).sum(axis=-1)
    den = np.sqrt((rx * rx).sum(axis=-1) * (ry * ry).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return np.clip(rho, -1.0, 1.0)


def spearman_rows(a: ArrayLike, b: ArrayLike) -> NDArray[np.float64]:
    """Spearman correlation between ``a`` and ``b`` along the last axis.

    Args:
        a, b: arrays of the same shape (..., k).

    Returns:
        float64 array (...,). NaN where a row has fewer than 2 values or is constant in
        ``a`` or ``b`` (the correlation is undefined there).
    """
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.shape != y.shape:
        raise LengthMismatchError(f"shapes differ: {x.shape} and {y.shape}")
    return rank_correlation_rows(rankdata(x), rankdata(y))


def spearman(a: ArrayLike, b: ArrayLike) -> float:
    """Spearman correlation of two 1-D sequences of equal length; NaN when undefined."""
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.ndim != 1 or y.ndim != 1:
        raise LengthMismatchError(f"spearman needs 1-D inputs, got {x.shape} and {y.shape}")
    return float(spearman_rows(x, y))
