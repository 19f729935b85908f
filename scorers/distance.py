"""Ordered tree edit distance between dependency trees given as HEAD arrays.

Tree model. A sentence of ``n`` words with HEAD array ``heads`` (int, shape (n,),
``heads[i]`` the 1-based head of word ``i + 1``, 0 for the root word) becomes an ordered
tree of ``n + 1`` nodes: an artificial root node on top, whose child is the root word,
and below every node its dependents in word order. Several words with HEAD 0 are
accepted and become siblings under the artificial root; a HEAD outside ``0..n`` or a
cycle raises :class:`~brittle.scorers.errors.InvalidTreeError`. ``n = 0`` gives the
tree that holds only the artificial root.

Labels. Without labels every word carries the same label, so only the shape counts.
With labels (any per-word sequence: FORM, UPOS, DEPREL, or integer ids) two nodes match
when their labels are equal. The artificial root carries a label of its own, different
from every word label.

Costs. :class:`TreeEditCosts` holds the cost of deleting a node, inserting a node and
renaming a node to a different label (renaming to an equal label is free). The
algorithm (Zhang–Shasha, run by Numba kernels on postorder arrays) is independent of the
cost model.

Sizes. The normalised distances divide by word counts: the artificial root is *not*
counted (it is present in both trees and always maps to its counterpart at zero cost).
With unit costs ``by="sum"`` lies in ``[0, 1]``; ``by="max"`` can exceed 1 when the
shapes differ (a chain of 3 words against a flat tree of 3 words has distance 4).
Two empty trees have normalised distance 0.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from brittle.scorers.errors import InvalidTreeError, LengthMismatchError, ScorerInputError

__all__ = [
    "UNIT_COSTS",
    "Normalization",
    "TreeEditCosts",
    "normalized_tree_edit_distance",
    "normalized_tree_edit_distance_batch",
    "tree_edit_distance",
    "tree_edit_distance_batch",
    "tree_edit_distance_pairs",
]

Normalization = Literal["max", "sum"]
Labels = Sequence[Hashable] | NDArray[np.integer] | None


@dataclass(frozen=True, slots=True)
class TreeEditCosts:
    """Costs of the three edit operations; finite and non-negative.

    Attributes:
        delete: removing a node (its children move up to its parent, in place).
        insert: adding a node.
        rename: changing a node's label to a different one.
    """

    delete: float = 1.0
    insert: float = 1.0
    rename: float = 1.0

    def __post_init__(self) -> None:
        for name in ("delete", "insert", "rename"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
                raise ScorerInputError(f"cost {name} must be a finite number >= 0, got {value!r}")


#: Every operation costs 1.
UNIT_COSTS = TreeEditCosts()


# ------------------------------------------------------------------ input conversion
def _as_heads(heads: ArrayLike, name: str) -> NDArray[np.int64]:
    arr = np.asarray(heads)
    if arr.ndim != 1:
        raise ScorerInputError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ScorerInputError(f"{name} must hold integers, got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.int64)


def _heads_list(
    many: Sequence[ArrayLike] | NDArray[np.integer], name: str
) -> list[NDArray[np.int64]]:
    if isinstance(many, np.ndarray):
        if many.ndim != 2:
            raise ScorerInputError(f"{name} as an array must be 2-D (m, n), got {many.shape}")
        return [_as_heads(row, f"{name}[{i}]") for i, row in enumerate(many)]
    return [_as_heads(h, f"{name}[{i}]") for i, h in enumerate(many)]


def _encode_labels(
    heads: Sequence[NDArray[np.int64]], labels: Sequence[Labels]
) -> tuple[list[NDArray[np.int64]], int]:
    """Integer label arrays for every tree, and a root label different from all of them.

    ``labels`` holds one entry per tree; ``None`` entries (all of them or none) mean
    "unlabelled". Integer arrays are used as they are; anything else goes through one
    shared dictionary so equal labels get equal ids across trees.
    """
    given = [lab is not None for lab in labels]
    if not any(given):
        return [np.zeros(h.shape[0], dtype=np.int64) for h in heads], -1
    if not all(given):
        raise ScorerInputError("give labels for every tree or for none")
    out: list[NDArray[np.int64]] = []
    integer = all(
        isinstance(lab, np.ndarray) and np.issubdtype(lab.dtype, np.integer) for lab in labels
    )
    vocab: dict[Hashable, int] = {}
    for t, (h, lab) in enumerate(zip(heads, labels, strict=True)):
        assert lab is not None
        if len(lab) != h.shape[0]:
            raise LengthMismatchError(f"tree {t} has {h.shape[0]} words but {len(lab)} labels")
        if integer:
            out.append(np.ascontiguousarray(lab, dtype=np.int64))
        else:
            ids = [vocab.setdefault(x, len(vocab)) for x in lab]
            out.append(np.asarray(ids, dtype=np.int64).reshape(-1))
    if integer:
        low = min((int(a.min()) for a in out if a.size), default=0)
        return out, low - 1
    return out, -1


def _pack(arrays: Sequence[NDArray[np.int64]]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
    if arrays:
        np.cumsum([a.shape[0] for a in arrays], out=offsets[1:])
        flat = np.ascontiguousarray(np.concatenate(arrays), dtype=np.int64)
    else:
        flat = np.zeros(0, dtype=np.int64)
    return flat, offsets


def _raise_invalid(which: str, heads: NDArray[np.int64]) -> None:
    n = heads.shape[0]
    bad = np.flatnonzero((heads < 0) | (heads > n))
    if bad.size:
        i = int(bad[0])
        raise InvalidTreeError(f"{which}: word {i + 1} has HEAD {heads[i]} outside 0..{n}")
    raise InvalidTreeError(f"{which}: HEAD array has a cycle (some words never reach the root)")


def _check_costs(costs: TreeEditCosts) -> TreeEditCosts:
    if not isinstance(costs, TreeEditCosts):
        raise ScorerInputError(f"costs must be a TreeEditCosts, got {type(costs).__name__}")
    return costs


# ------------------------------------------------------------------ public API
def tree_edit_distance(
    heads_a: ArrayLike,
    heads_b: ArrayLike,
    labels_a: Labels = None,
    labels_b: Labels = None,
    *,
    costs: TreeEditCosts = UNIT_COSTS,
) -> float:
    """Ordered tree edit distance between two dependency trees.

    Args:
        heads_a, heads_b: int arrays (n_a,), (n_b,) of 1-based heads (0 = root).
        labels_a, labels_b: per-word labels of the same lengths, or both ``None``.
        costs: edit operation costs.

    Returns:
        The minimum total cost of edits turning tree A into tree B (float).

    Raises:
        InvalidTreeError: a HEAD array is not a tree.
        ScorerInputError: mismatched shapes or only one tree labelled.
    """
    ha = _as_heads(heads_a, "heads_a")
    hb = _as_heads(heads_b, "heads_b")
    (la, lb), root = _encode_labels([ha, hb], [labels_a, labels_b])
    c = _check_costs(costs)
    from brittle.scorers import _ted_kernels

    d = float(_ted_kernels.ted_pair(ha, la, hb, lb, root, c.delete, c.insert, c.rename))
    if math.isnan(d):
        pa = _ted_kernels.prepare(ha, la, root)[3]
        _raise_invalid("heads_b" if pa else "heads_a", hb if pa else ha)
    return d


def tree_edit_distance_batch(
    heads: ArrayLike,
    many_heads: Sequence[ArrayLike] | NDArray[np.integer],
    labels: Labels = None,
    many_labels: Sequence[Labels] | None = None,
    *,
    costs: TreeEditCosts = UNIT_COSTS,
) -> NDArray[np.float64]:
    """Distance from one tree to each of many trees, computed in parallel.

    Args:
        heads: int array (n,) of the reference tree.
        many_heads: m HEAD arrays of any lengths (a list), or an int array (m, n').
        labels: per-word labels of the reference tree, or ``None``.
        many_labels: per-word labels of each of the m trees, or ``None``.
        costs: edit operation costs.

    Returns:
        float64 array (m,).

    Raises:
        InvalidTreeError: naming the first tree that is not a tree.
    """
    h0 = _as_heads(heads, "heads")
    hs = _heads_list(many_heads, "many_heads")
    if many_labels is not None and len(many_labels) != len(hs):
        raise LengthMismatchError(f"{len(many_labels)} label sequences for {len(hs)} trees")
    lab_list: list[Labels] = [
        labels,
        *(many_labels if many_labels is not None else [None] * len(hs)),
    ]
    if (labels is None) != (many_labels is None):
        raise ScorerInputError("give labels for every tree or for none")
    encoded, root = _encode_labels([h0, *hs], lab_list)
    c = _check_costs(costs)
    flat_h, offsets = _pack(hs)
    flat_l, _ = _pack(encoded[1:])
    out = np.empty(len(hs), dtype=np.float64)
    from brittle.scorers import _ted_kernels

    if hs:
        _ted_kernels.ted_one_to_many(
            h0, encoded[0], flat_h, flat_l, offsets, root, c.delete, c.insert, c.rename, out
        )
    if not _ted_kernels.prepare(h0, encoded[0], root)[3]:
        _raise_invalid("heads", h0)
    bad = np.flatnonzero(np.isnan(out))
    if bad.size:
        t = int(bad[0])
        _raise_invalid(f"many_heads[{t}]", hs[t])
    return out


def tree_edit_distance_pairs(
    heads_a: Sequence[ArrayLike],
    heads_b: Sequence[ArrayLike],
    labels_a: Sequence[Labels] | None = None,
    labels_b: Sequence[Labels] | None = None,
    *,
    costs: TreeEditCosts = UNIT_COSTS,
) -> NDArray[np.float64]:
    """Distance between ``heads_a[t]`` and ``heads_b[t]`` for every t, in parallel.

    Args:
        heads_a, heads_b: two lists of m HEAD arrays (any lengths).
        labels_a, labels_b: two lists of m label sequences, or both ``None``.

    Returns:
        float64 array (m,).
    """
    ha = _heads_list(heads_a, "heads_a")
    hb = _heads_list(heads_b, "heads_b")
    m = len(ha)
    if len(hb) != m:
        raise LengthMismatchError(f"{m} trees against {len(hb)} trees")
    if (labels_a is None) != (labels_b is None):
        raise ScorerInputError("give labels for every tree or for none")
    lab: list[Labels] = [None] * (2 * m)
    if labels_a is not None and labels_b is not None:
        if len(labels_a) != m or len(labels_b) != m:
            raise LengthMismatchError("need one label sequence per tree")
        lab = [*labels_a, *labels_b]
    encoded, root = _encode_labels([*ha, *hb], lab)
    c = _check_costs(costs)
    fha, oa = _pack(ha)
    fla, _ = _pack(encoded[:m])
    fhb, ob = _pack(hb)
    flb, _ = _pack(encoded[m:])
    out = np.empty(m, dtype=np.float64)
    from brittle.scorers import _ted_kernels

    if m:
        _ted_kernels.ted_pairs(fha, fla, oa, fhb, flb, ob, root, c.delete, c.insert, c.rename, out)
    bad = np.flatnonzero(np.isnan(out))
    if bad.size:
        t = int(bad[0])
        if not _ted_kernels.prepare(ha[t], encoded[t], root)[3]:
            _raise_invalid(f"heads_a[{t}]", ha[t])
        _raise_invalid(f"heads_b[{t}]", hb[t])
    return out


def _normalizer(
    n_a: NDArray[np.int64] | int, n_b: NDArray[np.int64] | int, by: str
) -> NDArray[np.float64]:
    a = np.asarray(n_a, dtype=np.float64)
    b = np.asarray(n_b, dtype=np.float64)
    if by == "max":
        return np.maximum(a, b)
    if by == "sum":
        return a + b
    raise ScorerInputError(f'by must be "max" or "sum", got {by!r}')


def normalized_tree_edit_distance(
    heads_a: ArrayLike,
    heads_b: ArrayLike,
    labels_a: Labels = None,
    labels_b: Labels = None,
    *,
    by: Normalization = "max",
    costs: TreeEditCosts = UNIT_COSTS,
) -> float:
    """Tree edit distance divided by word counts (artificial root not counted).

    ``by="max"`` divides by ``max(n_a, n_b)``, ``by="sum"`` by ``n_a + n_b``; 0.0 when
    both trees are empty.
    """
    norm = float(_normalizer(np.size(heads_a), np.size(heads_b), by))
    d = tree_edit_distance(heads_a, heads_b, labels_a, labels_b, costs=costs)
    return d / norm if norm > 0 else 0.0


def normalized_tree_edit_distance_batch(
    heads: ArrayLike,
    many_heads: Sequence[ArrayLike] | NDArray[np.integer],
    labels: Labels = None,
    many_labels: Sequence[Labels] | None = None,
    *,
    by: Normalization = "max",
    costs: TreeEditCosts = UNIT_COSTS,
) -> NDArray[np.float64]:
    """:func:`tree_edit_distance_batch` divided by word counts, float64 (m,)."""
    sizes = np.fromiter((np.size(h) for h in many_heads), dtype=np.int64, count=len(many_heads))
    norm = _normalizer(np.size(heads), sizes, by)
    d = tree_edit_distance_batch(heads, many_heads, labels, many_labels, costs=costs)
    return np.divide(d, norm, out=np.zeros_like(d), where=norm > 0)
