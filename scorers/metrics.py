"""Probe metrics per sentence and over a corpus.

Structural-distance probes predict a word-to-word distance matrix; depth probes predict a
depth per word; POS and root probes predict labels. Gold trees are HEAD arrays (int, (n,),
1-based heads, 0 for the root). Distances and depths are path lengths in edges.

Metric definitions (names are the keys of the result dictionaries):

- ``uuas``: the minimum spanning tree of the predicted distances (Prim) is compared with
  the gold tree as sets of undirected word-word edges. With a punctuation mask the
  punctuation words are dropped before the spanning tree and gold edges touching them are
  dropped too (as Hewitt & Manning do; the edge to the artificial root never counts).
  Corpus value = total correct edges / total gold edges.
- ``sdr`` (same-distance ratio, La Malfa et al.): the share of word pairs ``i < j`` whose
  predicted distance rounded to the nearest integer (``numpy.rint``, ties to even)
  equals the gold distance. Corpus value = total equal pairs / total pairs.
- ``dspr``: Spearman correlation between each row of the predicted matrix and the gold
  row (the diagonal included), averaged over the rows of a sentence; sentences are then
  averaged within each length from ``min_length`` to ``max_length`` (5..50 by default)
  and the per-length means averaged (Hewitt & Manning).
- ``dspr_prim``: the same after replacing the prediction by the path lengths in its own
  minimum spanning tree (Hall Maudslay et al., "A tale of a probe and a parser").
- ``root_acc``: share of sentences whose shallowest predicted non-punctuation word (or
  predicted root index, for root probes) is the gold root.
- ``depth_spearman``: Spearman between predicted and gold depths per sentence, averaged
  by length like ``dspr``.
- ``depth_acc``: share of words whose rounded predicted depth equals the gold depth.
- ``pos_acc``: share of words whose predicted tag equals the gold tag.

A Spearman correlation that is undefined (a constant row) counts as 0. A corpus metric
with nothing to average is NaN.

:func:`score_distances` and :func:`score_depths` score one sentence with numpy and are the
reference; :func:`score_distances_many` and :func:`score_depths_many` give the same
numbers, to the bit, for many sentences in one compiled pass (Numba kernels in
``_metric_kernels``), handling each distinct gold sentence once. Scoring the candidates
of an attack, or a corpus, goes through them; :func:`aggregate_distance` and
:func:`aggregate_depth` turn per-sentence scores into corpus metrics.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from brittle.engine.core import tree
from brittle.scorers.errors import InvalidTreeError, LengthMismatchError, ScorerInputError
from brittle.scorers.mst import minimum_spanning_tree, parent_to_heads
from brittle.scorers.rank import rank_correlation_rows, rankdata, spearman_rows

__all__ = [
    "DepthScores",
    "DistanceScores",
    "PosMetrics",
    "PosScores",
    "RootMetrics",
    "aggregate_depth",
    "aggregate_distance",
    "dspr",
    "dspr_prim",
    "length_binned_mean",
    "punct_mask",
    "score_depths",
    "score_depths_many",
    "score_distances",
    "score_distances_many",
    "score_pos",
    "sdr_counts",
    "uuas_counts",
]

MIN_LENGTH = 5
MAX_LENGTH = 50


# ------------------------------------------------------------------ input checks
def _gold_heads(heads: ArrayLike) -> NDArray[np.int64]:
    try:
        return tree.validate_heads(heads)
    except ValueError as exc:
        raise InvalidTreeError(f"gold tree: {exc}") from None


def _gold_heads_fast(heads: ArrayLike) -> NDArray[np.int64]:
    """:func:`_gold_heads` with the check in compiled code (the same errors)."""
    # deferred: loads numba
    from brittle.scorers import _metric_kernels

    try:
        arr = np.ascontiguousarray(np.asarray(heads), dtype=np.int64)
    except (TypeError, ValueError):
        return _gold_heads(heads)
    if arr.ndim != 1 or not _metric_kernels.is_tree(arr):
        return _gold_heads(heads)  # raises InvalidTreeError naming the problems
    return arr


def _gold_distances(heads: NDArray[np.int64]) -> NDArray[np.int32]:
    return tree.distance_matrix(heads)


def _square(predicted: ArrayLike, n: int) -> NDArray[np.float64]:
    p = np.asarray(predicted, dtype=np.float64)
    if p.shape != (n, n):
        raise LengthMismatchError(f"predicted distances have shape {p.shape}, expected ({n}, {n})")
    if not np.isfinite(p).all():
        raise ScorerInputError("predicted distances must be finite")
    return p


def _vector(values: ArrayLike, n: int, what: str) -> NDArray[np.float64]:
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    if v.shape != (n,):
        raise LengthMismatchError(f"{what} has shape {v.shape}, expected ({n},)")
    if not np.isfinite(v).all():
        raise ScorerInputError(f"{what} must be finite")
    return v


def _mask(punct: ArrayLike | None, n: int) -> NDArray[np.bool_]:
    if punct is None:
        return np.zeros(n, dtype=np.bool_)
    m = np.asarray(punct, dtype=np.bool_).reshape(-1)
    if m.shape != (n,):
        raise LengthMismatchError(f"punctuation mask has shape {m.shape}, expected ({n},)")
    return m


def punct_mask(upos: Sequence[str]) -> NDArray[np.bool_]:
    """Boolean mask (n,) of the words whose UPOS is ``PUNCT``."""
    return np.fromiter((u == "PUNCT" for u in upos), dtype=np.bool_, count=len(upos))


@dataclass(frozen=True, slots=True)
class _Packed:
    """A batch of predictions laid out for the kernels of ``_metric_kernels``.

    Attributes:
        values: float64, every prediction flattened row-major, one after the other.
        value_start: int64 (m,), where prediction ``r`` starts in ``values``.
        gold_of: int64 (m,), the distinct gold tree prediction ``r`` is scored against.
        heads, punct: int64 and bool, the distinct gold trees and masks one after the other.
        gold_start: int64 (g + 1,), tree ``t`` is ``heads[gold_start[t]:gold_start[t + 1]]``.
        lengths: words of each prediction's sentence.
    """

    values: NDArray[np.float64]
    value_start: NDArray[np.int64]
    gold_of: NDArray[np.int64]
    heads: NDArray[np.int64]
    punct: NDArray[np.bool_]
    gold_start: NDArray[np.int64]
    lengths: list[int]


def _pack(
    predicted: Sequence[ArrayLike],
    heads: Sequence[ArrayLike],
    punct: Sequence[ArrayLike | None] | None,
    *,
    matrix: bool,
) -> _Packed:
    """Validate a batch and pack it; each distinct gold tree is validated once.

    Golds are told apart by the identity of their ``heads`` and ``punct`` objects, so a
    batch that scores many predictions against one sentence passes the same arrays.
    ``matrix`` selects (n, n) distance predictions rather than (n,) depth predictions.
    """
    hs = list(heads)
    ms: list[ArrayLike | None] = list(punct) if punct is not None else [None] * len(hs)
    preds = list(predicted)
    if not len(preds) == len(hs) == len(ms):
        raise LengthMismatchError("need one prediction, tree and mask per sentence")
    index: dict[tuple[int, int], int] = {}
    trees: list[NDArray[np.int64]] = []
    masks: list[NDArray[np.bool_]] = []
    gold_of: list[int] = []
    lengths: list[int] = []
    arrays: list[NDArray[np.generic]] = []
    for p, h, m in zip(preds, hs, ms, strict=True):
        # hs and ms hold every object until the end of the call, so ids are not reused
        key = (id(h), id(m))
        t = index.get(key)
        if t is None:
            gold = _gold_heads_fast(h)
            masks.append(_mask(m, gold.shape[0]))
            t = index[key] = len(trees)
            trees.append(gold)
        n = int(trees[t].shape[0])
        a = np.asarray(p)
        if matrix:
            if a.shape != (n, n):
                raise LengthMismatchError(
                    f"predicted distances have shape {a.shape}, expected ({n}, {n})"
                )
        else:
            a = a.reshape(-1)
            if a.shape != (n,):
                raise LengthMismatchError(f"predicted depths has shape {a.shape}, expected ({n},)")
        gold_of.append(t)
        lengths.append(n)
        arrays.append(a)
    sizes = [n * n if matrix else n for n in lengths]
    starts = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=starts[1:])
    values = np.empty(int(starts[-1]), dtype=np.float64)
    for a, lo, hi in zip(arrays, starts[:-1].tolist(), starts[1:].tolist(), strict=True):
        values[lo:hi].reshape(a.shape)[...] = a
    if not np.isfinite(values).all():
        what = "predicted distances" if matrix else "predicted depths"
        raise ScorerInputError(f"{what} must be finite")
    gold_start = np.zeros(len(trees) + 1, dtype=np.int64)
    np.cumsum([t.shape[0] for t in trees], out=gold_start[1:])
    return _Packed(
        values=values,
        value_start=starts[:-1],
        gold_of=np.asarray(gold_of, dtype=np.int64),
        heads=np.concatenate(trees) if trees else np.zeros(0, dtype=np.int64),
        punct=np.concatenate(masks) if masks else np.zeros(0, dtype=np.bool_),
        gold_start=gold_start,
        lengths=lengths,
    )


def _mean_rows(rho: NDArray[np.float64]) -> float:
    if rho.size == 0:
        return 0.0
    return float(np.nan_to_num(rho, nan=0.0).mean())


# ------------------------------------------------------------------ distance metrics
def _uuas(
    p: NDArray[np.float64],
    gold: NDArray[np.int64],
    mask: NDArray[np.bool_],
    full_parent: NDArray[np.int64] | None = None,
) -> tuple[int, int]:
    """UUAS counts on validated input; ``full_parent`` is the MST of ``p`` if known."""
    n = gold.shape[0]
    keep = np.flatnonzero(~mask)
    child = np.flatnonzero(gold > 0)
    head = gold[child] - 1
    use = ~mask[child] & ~mask[head]
    gold_keys = np.minimum(child[use], head[use]) * n + np.maximum(child[use], head[use])
    if keep.shape[0] < 2:
        return 0, int(gold_keys.shape[0])
    if full_parent is not None and keep.shape[0] == n:
        parent = full_parent
    else:
        parent = minimum_spanning_tree(p[np.ix_(keep, keep)])
    c = np.flatnonzero(parent >= 0)
    a = keep[c]
    b = keep[parent[c]]
    pred_keys = np.minimum(a, b) * n + np.maximum(a, b)
    correct = np.intersect1d(gold_keys, pred_keys, assume_unique=True).shape[0]
    return int(correct), int(gold_keys.shape[0])


def uuas_counts(
    predicted: ArrayLike, heads: ArrayLike, *, punct: ArrayLike | None = None
) -> tuple[int, int]:
    """Correct and gold undirected edges of the predicted spanning tree (see module doc).

    Args:
        predicted: float (n, n) predicted distances.
        heads: int (n,) gold HEAD array.
        punct: bool (n,) punctuation mask, or ``None`` to keep every word.
    """
    gold = _gold_heads(heads)
    n = gold.shape[0]
    return _uuas(_square(predicted, n), gold, _mask(punct, n))


def sdr_counts(predicted: ArrayLike, heads: ArrayLike) -> tuple[int, int]:
    """Word pairs ``i < j`` whose rounded predicted distance equals the gold one, and all pairs."""
    gold = _gold_heads(heads)
    n = gold.shape[0]
    p = _square(predicted, n)
    iu = np.triu_indices(n, 1)
    equal = np.rint(p[iu]) == _gold_distances(gold)[iu]
    return int(equal.sum()), int(equal.shape[0])


def dspr(predicted: ArrayLike, heads: ArrayLike) -> float:
    """Mean row Spearman correlation between predicted and gold distances of one sentence."""
    gold = _gold_heads(heads)
    p = _square(predicted, gold.shape[0])
    return _mean_rows(spearman_rows(p, _gold_distances(gold)))


def _tree_distances(parent: NDArray[np.int64]) -> NDArray[np.int32]:
    return _gold_distances(parent_to_heads(parent))


def dspr_prim(predicted: ArrayLike, heads: ArrayLike) -> float:
    """:func:`dspr` after replacing the prediction by path lengths in its spanning tree."""
    gold = _gold_heads(heads)
    p = _square(predicted, gold.shape[0])
    if gold.shape[0] == 0:
        return 0.0
    tree_d = _tree_distances(minimum_spanning_tree(p))
    return _mean_rows(spearman_rows(tree_d, _gold_distances(gold)))


@dataclass(frozen=True, slots=True)
class DistanceScores:
    """Distance-probe scores of one sentence.

    Attributes:
        length: number of words.
        uuas_correct, uuas_total: correct and gold undirected edges.
        sdr_equal, sdr_total: pairs with equal rounded distance, and all pairs.
        dspr, dspr_prim: mean row Spearman, before and after the spanning tree.
    """

    length: int
    uuas_correct: int
    uuas_total: int
    sdr_equal: int
    sdr_total: int
    dspr: float
    dspr_prim: float

    @property
    def uuas(self) -> float:
        """Sentence UUAS; NaN when there is no gold edge."""
        return self.uuas_correct / self.uuas_total if self.uuas_total else float("nan")

    @property
    def sdr(self) -> float:
        """Sentence same-distance ratio; NaN when there is no pair."""
        return self.sdr_equal / self.sdr_total if self.sdr_total else float("nan")


def score_distances(
    predicted: ArrayLike, heads: ArrayLike, *, punct: ArrayLike | None = None
) -> DistanceScores:
    """All distance-probe scores of one sentence (punctuation mask used by UUAS only).

    Args:
        predicted: float (n, n) predicted distances.
        heads: int (n,) gold HEAD array.
        punct: bool (n,) punctuation mask, or ``None``.
    """
    gold = _gold_heads(heads)
    n = gold.shape[0]
    p = _square(predicted, n)
    mask = _mask(punct, n)
    gold_d = _gold_distances(gold)
    parent = minimum_spanning_tree(p)
    correct, total = _uuas(p, gold, mask, parent)
    iu = np.triu_indices(n, 1)
    equal = np.rint(p[iu]) == gold_d[iu]
    gold_ranks = rankdata(gold_d)
    rows = _mean_rows(rank_correlation_rows(rankdata(p), gold_ranks))
    if n:
        prim_ranks = rankdata(_tree_distances(parent))
        rows_prim = _mean_rows(rank_correlation_rows(prim_ranks, gold_ranks))
    else:
        rows_prim = 0.0
    return DistanceScores(
        length=n,
        uuas_correct=correct,
        uuas_total=total,
        sdr_equal=int(equal.sum()),
        sdr_total=int(equal.shape[0]),
        dspr=rows,
        dspr_prim=rows_prim,
    )


def score_distances_many(
    predicted: Sequence[ArrayLike],
    heads: Sequence[ArrayLike],
    *,
    punct: Sequence[ArrayLike | None] | None = None,
) -> list[DistanceScores]:
    """:func:`score_distances` of many sentences in one compiled pass, equal to the bit.

    Each distinct gold (told apart by the identity of its ``heads`` and ``punct``
    objects) is validated, and its distances and ranks computed, once: scoring many
    candidates against one sentence should pass the same arrays each time.

    Args:
        predicted: m float arrays (n_r, n_r), predicted distances.
        heads: m int arrays (n_r,), gold HEAD arrays.
        punct: m bool masks (n_r,) or ``None`` each, or ``None`` for no mask at all.
    """
    # deferred: loads numba
    from brittle.scorers import _metric_kernels

    b = _pack(predicted, heads, punct, matrix=True)
    m = len(b.lengths)
    counts = np.zeros((m, 4), dtype=np.int64)
    rows = np.zeros((m, 2), dtype=np.float64)
    if m:
        _metric_kernels.score_distances_packed(
            b.values, b.value_start, b.gold_of, b.heads, b.punct, b.gold_start, counts, rows
        )
    return [
        DistanceScores(
            length=n,
            uuas_correct=c[0],
            uuas_total=c[1],
            sdr_equal=c[2],
            sdr_total=c[3],
            dspr=f[0],
            dspr_prim=f[1],
        )
        for n, c, f in zip(b.lengths, counts.tolist(), rows.tolist(), strict=True)
    ]


def length_binned_mean(
    values: ArrayLike,
    lengths: ArrayLike,
    *,
    min_length: int = MIN_LENGTH,
    max_length: int = MAX_LENGTH,
) -> float:
    """Mean over lengths in ``[min_length, max_length]`` of the mean value at that length.

    Args:
        values: float (m,), one value per sentence.
        lengths: int (m,), the sentences' lengths.

    Returns:
        The macro-average over the lengths present; NaN when no sentence is in range.
    """
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    ln = np.asarray(lengths, dtype=np.int64).reshape(-1)
    if v.shape != ln.shape:
        raise LengthMismatchError(f"{v.shape[0]} values for {ln.shape[0]} lengths")
    inside = (ln >= min_length) & (ln <= max_length)
    if not inside.any():
        return float("nan")
    v = v[inside]
    ln = ln[inside] - min_length
    sums = np.bincount(ln, weights=v)
    counts = np.bincount(ln)
    present = counts > 0
    return float((sums[present] / counts[present]).mean())


def _ratio(num: int, den: int) -> float:
    return num / den if den else float("nan")


def aggregate_distance(
    scores: Iterable[DistanceScores],
    *,
    min_length: int = MIN_LENGTH,
    max_length: int = MAX_LENGTH,
) -> dict[str, float]:
    """Corpus ``uuas``, ``sdr``, ``dspr`` and ``dspr_prim`` of per-sentence scores."""
    s = list(scores)
    lengths = [x.length for x in s]
    bins = {"min_length": min_length, "max_length": max_length}
    return {
        "uuas": _ratio(sum(x.uuas_correct for x in s), sum(x.uuas_total for x in s)),
        "sdr": _ratio(sum(x.sdr_equal for x in s), sum(x.sdr_total for x in s)),
        "dspr": length_binned_mean([x.dspr for x in s], lengths, **bins),
        "dspr_prim": length_binned_mean([x.dspr_prim for x in s], lengths, **bins),
    }


# ------------------------------------------------------------------ depth metrics
@dataclass(frozen=True, slots=True)
class DepthScores:
    """Depth-probe scores of one sentence.

    Attributes:
        length: number of words.
        root_correct: the shallowest predicted non-punctuation word is the gold root.
        depth_spearman: Spearman of predicted against gold depths (0 when undefined).
        depth_correct, depth_total: words with equal rounded depth, and all words.
    """

    length: int
    root_correct: bool
    depth_spearman: float
    depth_correct: int
    depth_total: int


def score_depths(
    predicted: ArrayLike, heads: ArrayLike, *, punct: ArrayLike | None = None
) -> DepthScores:
    """Depth-probe scores of one sentence.

    Args:
        predicted: float (n,) predicted depths.
        heads: int (n,) gold HEAD array.
        punct: bool (n,) mask of words that cannot be the predicted root; ignored when
            every word is masked.
    """
    gold = _gold_heads(heads)
    n = gold.shape[0]
    p = _vector(predicted, n, "predicted depths")
    gold_depth = tree.depths(gold)
    mask = _mask(punct, n)
    candidates = np.flatnonzero(~mask) if not mask.all() else np.arange(n)
    root_ok = bool(n) and int(candidates[np.argmin(p[candidates])]) == tree.root_index(gold)
    rho = float(spearman_rows(p, gold_depth)) if n else float("nan")
    return DepthScores(
        length=n,
        root_correct=root_ok,
        depth_spearman=0.0 if np.isnan(rho) else rho,
        depth_correct=int((np.rint(p) == gold_depth).sum()),
        depth_total=n,
    )


def score_depths_many(
    predicted: Sequence[ArrayLike],
    heads: Sequence[ArrayLike],
    *,
    punct: Sequence[ArrayLike | None] | None = None,
) -> list[DepthScores]:
    """:func:`score_depths` of many sentences in one compiled pass, equal to the bit.

    Distinct golds are told apart as in :func:`score_distances_many`.

    Args:
        predicted: m float arrays (n_r,), predicted depths.
        heads: m int arrays (n_r,), gold HEAD arrays.
        punct: m bool masks (n_r,) or ``None`` each, or ``None`` for no mask at all.
    """
    # deferred: loads numba
    from brittle.scorers import _metric_kernels

    b = _pack(predicted, heads, punct, matrix=False)
    m = len(b.lengths)
    counts = np.zeros((m, 3), dtype=np.int64)
    rho = np.zeros(m, dtype=np.float64)
    if m:
        _metric_kernels.score_depths_packed(
            b.values, b.value_start, b.gold_of, b.heads, b.punct, b.gold_start, counts, rho
        )
    return [
        DepthScores(
            length=n,
            root_correct=bool(c[0]),
            depth_spearman=r,
            depth_correct=c[1],
            depth_total=c[2],
        )
        for n, c, r in zip(b.lengths, counts.tolist(), rho.tolist(), strict=True)
    ]


def aggregate_depth(
    scores: Iterable[DepthScores],
    *,
    min_length: int = MIN_LENGTH,
    max_length: int = MAX_LENGTH,
) -> dict[str, float]:
    """Corpus ``root_acc``, ``depth_spearman`` and ``depth_acc`` of per-sentence scores."""
    s = list(scores)
    return {
        "root_acc": _ratio(sum(x.root_correct for x in s), len(s)),
        "depth_spearman": length_binned_mean(
            [x.depth_spearman for x in s],
            [x.length for x in s],
            min_length=min_length,
            max_length=max_length,
        ),
        "depth_acc": _ratio(sum(x.depth_correct for x in s), sum(x.depth_total for x in s)),
    }


class RootMetrics:
    """Root accuracy of a probe that predicts the root word's index directly."""

    def __init__(self) -> None:
        self.correct = 0
        self.total = 0

    def add(self, predicted_root: int, heads: ArrayLike) -> bool:
        """Count one sentence; ``predicted_root`` is a 0-based word index."""
        ok = int(predicted_root) == tree.root_index(_gold_heads(heads))
        self.correct += ok
        self.total += 1
        return ok

    def add_batch(self, predicted: Sequence[int], heads: Sequence[ArrayLike]) -> list[bool]:
        """Count many sentences."""
        if len(predicted) != len(heads):
            raise LengthMismatchError("need one predicted root per tree")
        return [self.add(p, h) for p, h in zip(predicted, heads, strict=True)]

    def result(self) -> dict[str, float]:
        """``{"root_acc": correct sentences / sentences}``."""
        return {"root_acc": _ratio(self.correct, self.total)}


# ------------------------------------------------------------------ POS
@dataclass(frozen=True, slots=True)
class PosScores:
    """Correctly tagged words and all words of one sentence."""

    correct: int
    total: int

    @property
    def accuracy(self) -> float:
        """Share of correctly tagged words; NaN for an empty sentence."""
        return _ratio(self.correct, self.total)


def score_pos(predicted: Sequence[Hashable], gold: Sequence[Hashable]) -> PosScores:
    """Count the words whose predicted tag equals the gold tag (tags or integer ids)."""
    if len(predicted) != len(gold):
        raise LengthMismatchError(f"{len(predicted)} predicted tags for {len(gold)} words")
    correct = sum(1 for p, g in zip(predicted, gold, strict=True) if p == g)
    return PosScores(correct=correct, total=len(gold))


class PosMetrics:
    """Accumulates POS predictions; ``correct`` is the count of correctly tagged words."""

    def __init__(self) -> None:
        self.correct = 0
        self.total = 0

    def add(self, predicted: Sequence[Hashable], gold: Sequence[Hashable]) -> PosScores:
        """Count one sentence."""
        s = score_pos(predicted, gold)
        self.correct += s.correct
        self.total += s.total
        return s

    def add_batch(
        self, predicted: Sequence[Sequence[Hashable]], gold: Sequence[Sequence[Hashable]]
    ) -> list[PosScores]:
        """Count many sentences."""
        if len(predicted) != len(gold):
            raise LengthMismatchError("need one predicted tag sequence per sentence")
        return [self.add(p, g) for p, g in zip(predicted, gold, strict=True)]

    def result(self) -> dict[str, float]:
        """``{"pos_acc": correct words / words}``."""
        return {"pos_acc": _ratio(self.correct, self.total)}
