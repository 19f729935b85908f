"""Hamming distance between token sequences of equal length.

The distance counts the positions whose token (usually the FORM) differs. Batched
scoring encodes tokens as integers once (ids taken from the original; a token that the
original does not contain gets ``-1`` and so always differs) and runs a Numba
kernel over the integer matrix.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from brittle.scorers.errors import LengthMismatchError, ScorerInputError

__all__ = [
    "encode_against",
    "hamming",
    "hamming_batch",
    "hamming_batch_ids",
    "hamming_rows_ids",
]


def hamming(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Number of positions where ``a`` and ``b`` differ.

    Raises:
        LengthMismatchError: when the sequences have different lengths.
    """
    if len(a) != len(b):
        raise LengthMismatchError(
            f"Hamming distance needs equal lengths, got {len(a)} and {len(b)}"
        )
    return sum(1 for x, y in zip(a, b, strict=True) if x != y)


def encode_against(
    original: Sequence[Hashable], candidates: Sequence[Sequence[Hashable]]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Integer-encode ``original`` and every candidate with the original's vocabulary.

    Returns:
        ``(original_ids, candidate_ids)``: int64 arrays of shapes (k,) and (m, k). Equal
        tokens get equal ids; a candidate token absent from the original gets ``-1``.

    Raises:
        LengthMismatchError: when a candidate's length differs from the original's.
    """
    k = len(original)
    vocab: dict[Hashable, int] = {}
    for tok in original:
        vocab.setdefault(tok, len(vocab))
    original_ids = np.fromiter((vocab[t] for t in original), dtype=np.int64, count=k)
    out = np.empty((len(candidates), k), dtype=np.int64)
    get = vocab.get
    for r, cand in enumerate(candidates):
        if len(cand) != k:
            raise LengthMismatchError(f"candidate {r} has {len(cand)} tokens, the original has {k}")
        out[r] = [get(t, -1) for t in cand]
    return original_ids, out


def _as_ids(x: ArrayLike, ndim: int, name: str) -> NDArray[np.int64]:
    arr = np.asarray(x)
    if arr.ndim != ndim:
        raise ScorerInputError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ScorerInputError(f"{name} must hold integer ids, got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.int64)


def hamming_batch_ids(original_ids: ArrayLike, candidate_ids: ArrayLike) -> NDArray[np.int64]:
    """Hamming distance of every candidate row to the original, on integer ids.

    Args:
        original_ids: int array (k,).
        candidate_ids: int array (m, k).

    Returns:
        int64 array (m,).
    """
    orig = _as_ids(original_ids, 1, "original_ids")
    cands = _as_ids(candidate_ids, 2, "candidate_ids")
    if cands.shape[1] != orig.shape[0]:
        raise LengthMismatchError(
            f"candidates have {cands.shape[1]} positions, the original has {orig.shape[0]}"
        )
    from brittle.scorers import _hamming_kernels  # deferred: loads Numba and the compiled kernels

    out = np.empty(cands.shape[0], dtype=np.int64)
    if cands.shape[0]:
        _hamming_kernels.hamming_one_to_many(orig, cands, out)
    return out


def hamming_rows_ids(a: ArrayLike, b: ArrayLike) -> NDArray[np.int64]:
    """Row-wise Hamming distance between two int arrays of the same shape (m, k) -> (m,)."""
    aa = _as_ids(a, 2, "a")
    bb = _as_ids(b, 2, "b")
    if aa.shape != bb.shape:
        raise LengthMismatchError(f"shapes differ: {aa.shape} and {bb.shape}")
    from brittle.scorers import _hamming_kernels  # deferred: loads Numba and the compiled kernels

    out = np.empty(aa.shape[0], dtype=np.int64)
    if aa.shape[0]:
        _hamming_kernels.hamming_rows(aa, bb, out)
    return out


def hamming_batch(
    original: Sequence[Hashable], candidates: Sequence[Sequence[Hashable]]
) -> NDArray[np.int64]:
    """Hamming distance of every candidate token sequence to ``original``.

    Args:
        original: k tokens (e.g. ``sentence.forms``).
        candidates: m sequences of k tokens each.

    Returns:
        int64 array (m,).

    Raises:
        LengthMismatchError: when a candidate's length differs from the original's.
    """
    orig, cands = encode_against(original, candidates)
    return hamming_batch_ids(orig, cands)
