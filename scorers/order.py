"""Order-displacement metrics of Clouatre et al.: IDC (global) and DND (local).

A reordering of ``k`` units (characters or tokens) is described by a permutation ``p``:
``p[j]`` is the 0-based position in the original text of the unit standing at position
``j`` of the perturbed text. The identity means "unchanged".

- **IDC** (index displacement count) ``= (1/k**2) * sum_j |p[j] - j|``. The largest
  possible sum is ``floor(k**2 / 2)`` (reached by the reversal), so IDC lies in
  ``[0, 0.5]``. For the reversal ``p[j] = k - 1 - j`` it is exactly ``0.5`` when ``k``
  is even and ``0.5 - 1 / (2 * k**2)`` when ``k`` is odd (e.g. ``4/9`` for ``k = 3``).
- **DND** (direct neighbour displacement) ``= (1/(k-1)) * sum_{j<k-1} [p[j+1] - p[j] != 1]``:
  the share of adjacent pairs of the perturbed text that were not adjacent, in the same
  order, in the original. It lies in ``[0, 1]``; the reversal gives 1.

Edge cases: for ``k = 0`` both are 0.0; for ``k = 1`` both are 0.0 (no pair to break,
no unit can move).

Permutations are recovered from texts that were only reordered. A repeated unit (a
space, a letter, ``the``) could come from any of its occurrences, and matching the n-th
occurrence with the n-th cuts a moved phrase at every repeat: "the cat sat on the mat"
-> "on the mat the cat sat" would score DND 0.714 over characters although two cuts made
it. Runs are therefore kept whole by greedy string tiling (the longest common run of
unmatched units first; see ``_order_kernels.match_tiles``), which gives that example its
exact 2/21. When the permutation is known (brittle's reorder generators record it), use
it directly: the scores are then exact by construction.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from brittle.scorers.errors import NotAPermutationError, ScorerInputError

__all__ = [
    "OrderScores",
    "char_permutation",
    "char_permutation_batch",
    "dnd",
    "dnd_batch",
    "idc",
    "idc_batch",
    "order_scores",
    "order_scores_batch",
    "pad_permutations",
    "permutation_scores",
    "token_permutation",
    "token_permutation_batch",
]


@dataclass(frozen=True, slots=True)
class OrderScores:
    """DND and IDC of one reordering (both floats; see the module docstring)."""

    dnd: float
    idc: float


# ------------------------------------------------------------------ permutations
def _codes_of_text(text: str) -> NDArray[np.int64]:
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)


def _match(original: NDArray[np.int64], perturbed: NDArray[np.int64]) -> NDArray[np.int64]:
    """Permutations for (m, k) perturbed code rows against (k,) original codes."""
    from brittle.scorers import _order_kernels  # deferred: loads Numba and the compiled kernels

    perms = np.empty(perturbed.shape, dtype=np.int64)
    bad = np.zeros(perturbed.shape[0], dtype=np.bool_)
    if perturbed.shape[0] and perturbed.shape[1]:
        _order_kernels.match_tiles(
            np.ascontiguousarray(original, dtype=np.int64),
            np.ascontiguousarray(perturbed, dtype=np.int64),
            perms,
            bad,
        )
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise NotAPermutationError(
            f"perturbed item {r} is not a reordering of the original "
            "(the multisets of units differ)"
        )
    return perms


def char_permutation(original: str, perturbed: str) -> NDArray[np.int64]:
    """Character permutation turning ``original`` into ``perturbed``.

    Returns:
        int64 array (k,) with ``perturbed[j] == original[p[j]]`` for every ``j``.

    Raises:
        NotAPermutationError: when the texts are not reorderings of each other.
    """
    if len(original) != len(perturbed):
        raise NotAPermutationError(
            f"texts have different lengths ({len(original)} and {len(perturbed)} characters)"
        )
    return _match(_codes_of_text(original), _codes_of_text(perturbed)[None, :])[0]


def char_permutation_batch(original: str, perturbed: Sequence[str]) -> NDArray[np.int64]:
    """Character permutations of many reorderings of one text, shape (m, k), int64."""
    k = len(original)
    for r, text in enumerate(perturbed):
        if len(text) != k:
            raise NotAPermutationError(
                f"perturbed text {r} has {len(text)} characters, the original has {k}"
            )
    rows = _codes_of_text("".join(perturbed)).reshape(len(perturbed), k)
    return _match(_codes_of_text(original), rows)


def _encode_tokens(
    original: Sequence[Hashable], perturbed: Sequence[Sequence[Hashable]]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    k = len(original)
    vocab: dict[Hashable, int] = {}
    for tok in original:
        vocab.setdefault(tok, len(vocab))
    orig = np.fromiter((vocab[t] for t in original), dtype=np.int64, count=k)
    rows = np.empty((len(perturbed), k), dtype=np.int64)
    for r, seq in enumerate(perturbed):
        if len(seq) != k:
            raise NotAPermutationError(
                f"perturbed sequence {r} has {len(seq)} tokens, the original has {k}"
            )
        rows[r] = [vocab.get(t, -1) for t in seq]
    return orig, rows


def token_permutation(
    original: Sequence[Hashable], perturbed: Sequence[Hashable]
) -> NDArray[np.int64]:
    """Token permutation turning ``original`` into ``perturbed`` (equal tokens compare equal).

    Returns:
        int64 array (k,) with ``perturbed[j] == original[p[j]]``.

    Raises:
        NotAPermutationError: when the sequences are not reorderings of each other.
    """
    return token_permutation_batch(original, [perturbed])[0]


def token_permutation_batch(
    original: Sequence[Hashable], perturbed: Sequence[Sequence[Hashable]]
) -> NDArray[np.int64]:
    """Token permutations of many reorderings of one sequence, shape (m, k), int64."""
    orig, rows = _encode_tokens(original, perturbed)
    return _match(orig, rows)


# ------------------------------------------------------------------ metrics
def pad_permutations(
    perms: Sequence[ArrayLike],
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Pack permutations of different lengths into a padded (m, kmax) array and lengths (m,).

    Padding cells hold -1 and are never read.
    """
    rows = [np.asarray(p, dtype=np.int64).reshape(-1) for p in perms]
    lengths = np.fromiter((r.shape[0] for r in rows), dtype=np.int64, count=len(rows))
    kmax = int(lengths.max()) if rows else 0
    out = np.full((len(rows), kmax), -1, dtype=np.int64)
    for i, r in enumerate(rows):
        out[i, : r.shape[0]] = r
    return out, lengths


def _as_batch(
    perms: ArrayLike | Sequence[ArrayLike], lengths: ArrayLike | None
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    arr: NDArray[np.generic]
    if isinstance(perms, np.ndarray):
        arr = perms
    elif isinstance(perms, Sequence) and len(perms) and not np.isscalar(perms[0]):
        if len({np.shape(p) for p in perms}) > 1:  # ragged list of permutations
            if lengths is not None:
                raise ScorerInputError("give lengths with a padded array, not a ragged list")
            return pad_permutations(perms)
        arr = np.asarray(perms)
    else:
        arr = np.asarray(perms)
    if arr.ndim == 1 and arr.size == 0:
        arr = arr.reshape(0, 0)
    if arr.ndim != 2:
        raise ScorerInputError(f"permutations must be a 2-D array, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ScorerInputError(f"permutations must be integers, got dtype {arr.dtype}")
    out = np.ascontiguousarray(arr, dtype=np.int64)
    if lengths is None:
        lens = np.full(out.shape[0], out.shape[1], dtype=np.int64)
    else:
        lens = np.ascontiguousarray(np.asarray(lengths), dtype=np.int64).reshape(-1)
        if lens.shape[0] != out.shape[0]:
            raise ScorerInputError(f"{lens.shape[0]} lengths for {out.shape[0]} permutations")
        if lens.size and (lens.min() < 0 or lens.max() > out.shape[1]):
            raise ScorerInputError(f"lengths must lie in 0..{out.shape[1]}")
    return out, lens


def order_scores_batch(
    perms: ArrayLike | Sequence[ArrayLike],
    lengths: ArrayLike | None = None,
    *,
    check: bool = True,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """DND and IDC of many permutations in one pass (a single-threaded Numba loop).

    Args:
        perms: int array (m, k); or a padded int array (m, kmax) with ``lengths``; or a
            list of 1-D permutations of any lengths.
        lengths: int array (m,): row ``r`` is ``perms[r, :lengths[r]]``.
        check: verify that every row is a permutation of ``0..k-1``.

    Returns:
        ``(dnd, idc)``, two float64 arrays (m,).

    Raises:
        NotAPermutationError: when ``check`` is on and a row is not a permutation.
    """
    arr, lens = _as_batch(perms, lengths)
    m = arr.shape[0]
    dnd_out = np.zeros(m, dtype=np.float64)
    idc_out = np.zeros(m, dtype=np.float64)
    bad = np.zeros(m, dtype=np.bool_)
    if m and arr.shape[1]:
        from brittle.scorers import _order_kernels  # deferred: loads Numba and the compiled kernels

        _order_kernels.order_scores(arr, lens, check, dnd_out, idc_out, bad)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise NotAPermutationError(
            f"row {r} is not a permutation of 0..{int(lens[r]) - 1}: {arr[r, : lens[r]].tolist()}"
        )
    return dnd_out, idc_out


def dnd_batch(
    perms: ArrayLike | Sequence[ArrayLike], lengths: ArrayLike | None = None, *, check: bool = True
) -> NDArray[np.float64]:
    """DND of many permutations, float64 (m,) (see :func:`order_scores_batch`)."""
    return order_scores_batch(perms, lengths, check=check)[0]


def idc_batch(
    perms: ArrayLike | Sequence[ArrayLike], lengths: ArrayLike | None = None, *, check: bool = True
) -> NDArray[np.float64]:
    """IDC of many permutations, float64 (m,) (see :func:`order_scores_batch`)."""
    return order_scores_batch(perms, lengths, check=check)[1]


def permutation_scores(perm: ArrayLike) -> OrderScores:
    """DND and IDC of one permutation (1-D; ``perm[j]`` is the original index of the
    unit now at position ``j``)."""
    arr = np.asarray(perm)
    if arr.ndim != 1:
        raise ScorerInputError(f"a permutation must be 1-D, got shape {arr.shape}")
    d, i = order_scores_batch(arr.reshape(1, -1))
    return OrderScores(dnd=float(d[0]), idc=float(i[0]))


def idc(perm: ArrayLike) -> float:
    """Index displacement count of one permutation (int array (k,)); 0.0 for k <= 1."""
    return permutation_scores(perm).idc


def dnd(perm: ArrayLike) -> float:
    """Direct neighbour displacement of one permutation (int array (k,)); 0.0 for k <= 1."""
    return permutation_scores(perm).dnd


def order_scores(
    original: str | Sequence[Hashable], perturbed: str | Sequence[Hashable]
) -> OrderScores:
    """DND and IDC of a reordering: over characters for two ``str``, else over tokens.

    Raises:
        NotAPermutationError: when ``perturbed`` is not a reordering of ``original``.
    """
    if isinstance(original, str) and isinstance(perturbed, str):
        return permutation_scores(char_permutation(original, perturbed))
    if isinstance(original, str) or isinstance(perturbed, str):
        raise ScorerInputError("compare two texts or two token sequences, not one of each")
    return permutation_scores(token_permutation(original, perturbed))
