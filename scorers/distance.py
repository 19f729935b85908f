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
counted (it is in both trees, and some optimal edit script maps it to its counterpart at
zero cost).
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
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or value < 0
            ):
                raise ScorerInputError(f"cost {name} must be a finite number >= 0, got {value!r}")
            object.__setattr__(self, name, float(value))  # one kernel signature for all


#: Every operation costs 1.
UNIT_COSTS = TreeEditCosts()

#: Batches whose work (reference words times the words of all trees) is below this run
#: in the calling thread: about 50 pairs of 20-word trees, where starting the parallel
#: loop's threads costs more than they save (bench: ``brittle bench --stage
#: syntax_check``).
SERIAL_WORK = 20_000


# ------------------------------------------------------------------ input conversion
def _as_heads(heads: ArrayLike, name: str) -> NDArray[np.int64]:
    arr = np.asarray(heads)
    if arr.ndim != 1:
        raise ScorerInputError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        raise ScorerInputError(f"{name} must hold integers, got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.int64)


def _pack_heads(
    many: Sequence[ArrayLike] | NDArray[np.integer], name: str
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Concatenated HEAD arrays (int64) and offsets (m + 1,): tree t is flat[o[t]:o[t+1]]."""
    if isinstance(many, np.ndarray):
        if many.ndim != 2:
            raise ScorerInputError(f"{name} as an array must be 2-D (m, n), got {many.shape}")
        if many.size and many.dtype.kind not in "iu":
            raise ScorerInputError(f"{name} must hold integers, got dtype {many.dtype}")
        m, n = many.shape
        offsets = np.arange(m + 1, dtype=np.int64) * n
        return np.ascontiguousarray(many.reshape(-1), dtype=np.int64), offsets
    arrays: list[NDArray[np.integer]] = []
    for i, h in enumerate(many):
        if isinstance(h, np.ndarray) and h.ndim == 1 and h.dtype.kind in "iu":
            arrays.append(h)
        else:
            arrays.append(_as_heads(h, f"{name}[{i}]"))
    offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
    if not arrays:
        return np.zeros(0, dtype=np.int64), offsets
    np.cumsum(np.fromiter(map(len, arrays), dtype=np.int64, count=len(arrays)), out=offsets[1:])
    return np.ascontiguousarray(np.concatenate(arrays), dtype=np.int64), offsets


def _encode_labels(
    labels: Sequence[Labels], lengths: NDArray[np.int64]
) -> tuple[NDArray[np.int64], int]:
    """Integer ids of the labels of several trees, concatenated, and the root's label id.

    ``labels`` holds one entry per tree (all ``None`` for unlabelled trees); ``lengths``
    the trees' word counts. Integer arrays are used as they are; anything else goes
    through one shared dictionary, so equal labels get equal ids across trees. The root
    label differs from every word label.
    """
    total = int(lengths.sum())
    given = [lab is not None for lab in labels]
    if not any(given):
        return np.zeros(total, dtype=np.int64), -1
    if not all(given):
        raise ScorerInputError("give labels for every tree or for none")
    for t, lab in enumerate(labels):
        assert lab is not None
        if len(lab) != lengths[t]:
            raise LengthMismatchError(f"tree {t} has {lengths[t]} words but {len(lab)} labels")
    if all(isinstance(lab, np.ndarray) and lab.dtype.kind in "iu" for lab in labels):
        arrays = [np.asarray(lab).reshape(-1) for lab in labels]
        flat = np.ascontiguousarray(np.concatenate(arrays), dtype=np.int64)
        return flat, (int(flat.min()) - 1 if flat.size else -1)
    vocab: dict[Hashable, int] = {}
    setdefault = vocab.setdefault
    ids = np.fromiter(
        (setdefault(x, len(vocab)) for lab in labels if lab is not None for x in lab),
        dtype=np.int64,
        count=total,
    )
    return ids, -1


def _tree(flat: NDArray[np.int64], offsets: NDArray[np.int64], t: int) -> NDArray[np.int64]:
    return flat[offsets[t] : offsets[t + 1]]


def _raise_invalid(which: str, heads: NDArray[np.int64]) -> None:
    n = heads.shape[0]
    bad = np.flatnonzero((heads < 0) | (heads > n))
    if bad.size:
        i = int(bad[0])
        raise InvalidTreeError(f"{which}: word {i + 1} has HEAD {heads[i]} outside 0..{n}")
    raise InvalidTreeError(f"{which}: HEAD array has a cycle (some words never reach the root)")


def _is_tree(heads: NDArray[np.int64]) -> bool:
    from brittle.scorers import _ted_kernels  # deferred: loads Numba and the compiled kernels

    return bool(_ted_kernels.prepare(heads, np.zeros(heads.shape[0], np.int64), -1, False)[5])


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
    na = ha.shape[0]
    ids, root = _encode_labels([labels_a, labels_b], np.array([na, hb.shape[0]]))
    c = _check_costs(costs)
    from brittle.scorers import _ted_kernels  # deferred: loads Numba and the compiled kernels

    d = float(_ted_kernels.ted_pair(ha, ids[:na], hb, ids[na:], root, c.delete, c.insert, c.rename))
    if math.isnan(d):
        if not _is_tree(ha):
            _raise_invalid("heads_a", ha)
        _raise_invalid("heads_b", hb)
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
    flat, offsets = _pack_heads(many_heads, "many_heads")
    m = offsets.shape[0] - 1
    if (labels is None) != (many_labels is None):
        raise ScorerInputError("give labels for every tree or for none")
    if many_labels is not None and len(many_labels) != m:
        raise LengthMismatchError(f"{len(many_labels)} label sequences for {m} trees")
    n0 = h0.shape[0]
    lengths = np.concatenate([[n0], np.diff(offsets)])
    lab_list: list[Labels] = [labels, *(many_labels if many_labels is not None else [None] * m)]
    ids, root = _encode_labels(lab_list, lengths)
    c = _check_costs(costs)
    out = np.empty(m, dtype=np.float64)
    from brittle.scorers import _ted_kernels  # deferred: loads Numba and the compiled kernels

    if m:
        # Below SERIAL_WORK (node pairs of the quadratic tables), the threads of the
        # parallel loop cost more than they save.
        work = n0 * int(flat.shape[0])
        kernel = (
            _ted_kernels.ted_one_to_many_serial
            if work < SERIAL_WORK
            else _ted_kernels.ted_one_to_many
        )
        kernel(h0, ids[:n0], flat, ids[n0:], offsets, root, c.delete, c.insert, c.rename, out)
    if not _is_tree(h0):
        _raise_invalid("heads", h0)
    bad = np.flatnonzero(np.isnan(out))
    if bad.size:
        t = int(bad[0])
        _raise_invalid(f"many_heads[{t}]", _tree(flat, offsets, t))
    return out


def tree_edit_distance_pairs(
    heads_a: Sequence[ArrayLike] | NDArray[np.integer],
    heads_b: Sequence[ArrayLike] | NDArray[np.integer],
    labels_a: Sequence[Labels] | None = None,
    labels_b: Sequence[Labels] | None = None,
    *,
    costs: TreeEditCosts = UNIT_COSTS,
) -> NDArray[np.float64]:
    """Distance between ``heads_a[t]`` and ``heads_b[t]`` for every t, in parallel.

    Args:
        heads_a, heads_b: two lists of m HEAD arrays (any lengths), or int arrays (m, n).
        labels_a, labels_b: two lists of m label sequences, or both ``None``.

    Returns:
        float64 array (m,).
    """
    fa, oa = _pack_heads(heads_a, "heads_a")
    fb, ob = _pack_heads(heads_b, "heads_b")
    m = oa.shape[0] - 1
    if ob.shape[0] - 1 != m:
        raise LengthMismatchError(f"{m} trees against {ob.shape[0] - 1} trees")
    if (labels_a is None) != (labels_b is None):
        raise ScorerInputError("give labels for every tree or for none")
    lab: list[Labels] = [None] * (2 * m)
    if labels_a is not None and labels_b is not None:
        if len(labels_a) != m or len(labels_b) != m:
            raise LengthMismatchError("need one label sequence per tree")
        lab = [*labels_a, *labels_b]
    ids, root = _encode_labels(lab, np.concatenate([np.diff(oa), np.diff(ob)]))
    c = _check_costs(costs)
    split = int(oa[-1])
    out = np.empty(m, dtype=np.float64)
    from brittle.scorers import _ted_kernels  # deferred: loads Numba and the compiled kernels

    if m:
        _ted_kernels.ted_pairs(
            fa, ids[:split], oa, fb, ids[split:], ob, root, c.delete, c.insert, c.rename, out
        )
    bad = np.flatnonzero(np.isnan(out))
    if bad.size:
        t = int(bad[0])
        if not _is_tree(_tree(fa, oa, t)):
            _raise_invalid(f"heads_a[{t}]", _tree(fa, oa, t))
        _raise_invalid(f"heads_b[{t}]", _tree(fb, ob, t))
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
