"""Cutting rows of different lengths into padded forward batches.

A padded batch costs its rows times its longest row in tokens: every pad token goes
through every linear layer like a real one. Fixed-size batches of length-sorted rows
still pad each short row to the longest of its batch (on EWT candidates, 1.64 padded
tokens per real token in batches of 64). :func:`padded_batches` instead cuts the
sorted rows where the padded tokens plus a fixed cost per forward call are least.
Probes batch sentences by a simpler rule, :func:`length_batches`: their calls are cheap
and the distance probes' cost grows with the square of the longest sentence.

Measured on the bundled MiniLM on 2 CPU cores, a forward costs about 45 microseconds
per padded token above a few hundred tokens and about 2 ms per call (the cost of some
45 tokens), hence :data:`CALL_COST`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from brittle.engine.core.errors import ConfigError

__all__ = ["CALL_COST", "MIN_FILL", "batch_cost", "length_batches", "padded_batches"]

#: The default cost of one forward call, in padded tokens.
CALL_COST = 48


def batch_cost(lengths: NDArray[np.int64], batches: list[list[int]], call_cost: int) -> int:
    """Padded tokens of ``batches`` (indices into ``lengths``) plus ``call_cost`` each."""
    return sum(int(lengths[b].max()) * len(b) + call_cost for b in batches)


def padded_batches(
    lengths: NDArray[np.int64],
    *,
    max_rows: int,
    max_tokens: int,
    call_cost: int = CALL_COST,
) -> list[list[int]]:
    """Row indices grouped into forward batches, longest rows first.

    Args:
        lengths: tokens of each row, shape (n,).
        max_rows: most rows per batch.
        max_tokens: most padded tokens (rows x longest row) per batch; a single row
            longer than this still gets a batch of its own.
        call_cost: what one forward call costs, in padded tokens.

    Returns:
        Batches of indices into ``lengths``: every row exactly once, each batch a run of
        the rows sorted by decreasing length (ties in input order), the batches in that
        order. Among all such cuts within the bounds, one of least
        :func:`batch_cost`.

    Hand-written: an exact dynamic programme over the sorted rows (a batch is best
    made of neighbours in length order, so only the cut points are chosen), O(n x
    ``max_rows``), a few milliseconds for thousands of rows.
    """
    if max_rows < 1 or max_tokens < 1 or call_cost < 0:
        raise ConfigError("max_rows and max_tokens must be positive, call_cost not negative")
    n = int(lengths.shape[0])
    if n == 0:
        return []
    order = np.argsort(-lengths, kind="stable")
    longest = lengths[order].astype(np.int64)
    best = np.zeros(n + 1, dtype=np.int64)  # best[i]: least cost of the first i rows
    cut = np.zeros(n + 1, dtype=np.int64)  # where the last batch of that cut starts
    for i in range(1, n + 1):
        starts = np.arange(max(0, i - max_rows), i)
        padded = longest[starts] * (i - starts)  # batch starts..i-1, padded to its first
        allowed = padded <= max_tokens
        allowed[-1] = True  # a row alone always fits
        total = np.where(allowed, best[starts] + padded + call_cost, np.iinfo(np.int64).max)
        k = int(np.argmin(total))  # ties: the earliest start, the fewest calls
        best[i] = total[k]
        cut[i] = starts[k]
    out: list[list[int]] = []
    end = n
    while end > 0:
        start = int(cut[end])
        out.append(order[start:end].tolist())
        end = start
    out.reverse()
    return out


#: A batch ends before the first sentence shorter than this share of its longest.
MIN_FILL = 0.75


def length_batches(
    lengths: NDArray[np.int64], max_rows: int, min_fill: float = MIN_FILL
) -> list[NDArray[np.int64]]:
    """Sentence indices in probe batches (:meth:`~brittle.scorers.probe.Probe.predict`):
    longest first (ties in input order), a batch
    cut after ``max_rows`` sentences or before the first one shorter than ``min_fill``
    times its longest.

    A padded batch costs its rows times its longest sentence (the linear map) or its
    square (the distance probes' (b, n, n) matrices): one batch of a whole round's
    candidates padded every short sentence to the longest, several times the work of
    the real words on EWT. Hand-written: a single pass over the sorted lengths.

    Args:
        lengths: words of each sentence, shape (n,).
        max_rows: most sentences per batch (at least 1).
        min_fill: in (0, 1].

    Returns:
        Arrays of indices into ``lengths``; every index exactly once.
    """
    sizes = np.asarray(lengths, dtype=np.int64)
    order = np.argsort(-sizes, kind="stable")
    ordered = sizes[order]
    out: list[NDArray[np.int64]] = []
    start, n = 0, int(order.shape[0])
    while start < n:
        floor = min_fill * float(ordered[start])
        stop = min(start + max(1, max_rows), n)
        short = np.flatnonzero(ordered[start + 1 : stop] < floor)
        if short.size:
            stop = start + 1 + int(short[0])
        out.append(order[start:stop])
        start = stop
    return out
