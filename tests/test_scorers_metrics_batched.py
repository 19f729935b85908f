"""The batched metric kernels against the per-sentence numpy implementation.

``score_distances_many`` and ``score_depths_many`` must give exactly what
``score_distances`` and ``score_depths`` give (which ``test_scorers_metrics`` checks
against scipy and networkx), on ties, punctuation masks and any sentence length.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scorers_reference import examples, heads_arrays, random_heads, tree_distances_ref

from brittle.engine.core.tree import tree_problems
from brittle.scorers import _metric_kernels
from brittle.scorers.errors import InvalidTreeError, LengthMismatchError, ScorerInputError
from brittle.scorers.metrics import (
    DepthScores,
    DistanceScores,
    score_depths,
    score_depths_many,
    score_distances,
    score_distances_many,
)
from brittle.scorers.probe_gold import Gold
from brittle.scorers.probe_tasks import ProbeSpec, task_for
from brittle.scorers.rank import rankdata

if TYPE_CHECKING:
    from brittle.scorers.probe_tasks import Prediction

PRED_KINDS = ("noisy", "asymmetric", "integers", "halves", "normal", "constant", "gold")


def _prediction(rng: np.random.Generator, heads: np.ndarray, kind: str) -> np.ndarray:
    """A (n, n) prediction; integer and half-integer kinds have many ties."""
    n = len(heads)
    gold = tree_distances_ref(heads).astype(np.float64)
    if kind == "noisy":
        noise = rng.normal(0.0, rng.choice([0.2, 0.6, 3.0]), (n, n))
        pred = np.abs(gold + (noise + noise.T) / 2)
        np.fill_diagonal(pred, 0.0)
        return pred
    if kind == "asymmetric":
        return gold + rng.normal(0.0, 1.0, (n, n))
    if kind == "integers":
        return rng.integers(0, 4, (n, n)).astype(np.float64)
    if kind == "halves":  # rint ties to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2
        return rng.integers(-2, 9, (n, n)) / 2.0
    if kind == "normal":
        return rng.normal(0.0, 1.0, (n, n))
    if kind == "constant":
        return np.full((n, n), float(rng.integers(0, 3)))
    return gold


def _mask(rng: np.random.Generator, n: int, kind: str) -> np.ndarray | None:
    if kind == "none":
        return None
    if kind == "all":
        return np.ones(n, dtype=bool)
    return rng.random(n) < {"some": 0.2, "half": 0.5}[kind]


@st.composite
def batches(draw: st.DrawFn, max_words: int = 30):
    """Predictions against a few golds; several predictions share one gold object."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    golds = []
    for _ in range(draw(st.integers(1, 3))):
        n = draw(st.integers(1, max_words))
        heads = random_heads(rng, n)
        golds.append((heads, _mask(rng, n, draw(st.sampled_from(["none", "some", "half", "all"])))))
    items = []
    for _ in range(draw(st.integers(1, 6))):
        heads, mask = golds[draw(st.integers(0, len(golds) - 1))]
        kind = draw(st.sampled_from(PRED_KINDS))
        pred = _prediction(rng, heads, kind)
        if draw(st.booleans()):
            pred = pred.astype(np.float32)
        items.append((pred, heads, mask))
    return items


def _same_floats(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


# ------------------------------------------------------------------ distances
@examples(300)
@given(batches())
def test_distance_batch_equals_per_sentence(items) -> None:
    preds = [p for p, _, _ in items]
    heads = [h for _, h, _ in items]
    masks = [m for _, _, m in items]
    got = score_distances_many(preds, heads, punct=masks)
    expected = [score_distances(p, h, punct=m) for p, h, m in items]
    assert got == expected  # integers equal, floats equal to the last bit (==)
    for g in got:
        assert isinstance(g, DistanceScores)
        assert type(g.uuas_correct) is int and type(g.dspr) is float


@examples(100)
@given(batches(max_words=12))
def test_distance_batch_without_masks(items) -> None:
    preds = [p for p, _, _ in items]
    heads = [h for _, h, _ in items]
    assert score_distances_many(preds, heads) == [
        score_distances(p, h) for p, h in zip(preds, heads, strict=True)
    ]


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("mask_kind", ["none", "some", "half", "all"])
def test_distance_small_sentences(n: int, mask_kind: str) -> None:
    rng = np.random.default_rng(n)
    for _ in range(20):
        heads = random_heads(rng, n)
        mask = _mask(rng, n, mask_kind)
        preds = [_prediction(rng, heads, kind) for kind in PRED_KINDS]
        got = score_distances_many(preds, [heads] * len(preds), punct=[mask] * len(preds))
        assert got == [score_distances(p, heads, punct=mask) for p in preds]


def test_distance_edge_cases() -> None:
    one = score_distances_many([np.zeros((1, 1))], [[0]])[0]
    assert one == score_distances(np.zeros((1, 1)), [0])
    assert (one.uuas_total, one.sdr_total, one.dspr, one.dspr_prim) == (0, 0, 0.0, 0.0)
    # all punctuation: no gold edge, no correct edge; the other scores are unaffected
    heads = np.array([2, 0, 2, 2])
    gold = tree_distances_ref(heads).astype(float)
    allp = score_distances_many([gold], [heads], punct=[[True] * 4])[0]
    assert allp == score_distances(gold, heads, punct=[True] * 4)
    assert (allp.uuas_correct, allp.uuas_total, allp.sdr_equal) == (0, 0, 6)
    assert allp.dspr == allp.dspr_prim == 1.0
    assert score_distances_many([], []) == []
    # inputs that are not float64 arrays: lists and integers
    assert score_distances_many([gold.astype(int).tolist()], [heads.tolist()]) == [
        score_distances(gold, heads)
    ]


@pytest.mark.parametrize("n", [130, 400])
def test_distance_long_sentences(n: int) -> None:
    # rows longer than 128 values (numpy's pairwise sum halves them) and than 384 (sorted)
    rng = np.random.default_rng(n)
    heads = random_heads(rng, n)
    mask = _mask(rng, n, "some")
    preds = [_prediction(rng, heads, kind) for kind in ("noisy", "integers", "halves")]
    got = score_distances_many(preds, [heads] * 3, punct=[mask] * 3)
    assert got == [score_distances(p, heads, punct=mask) for p in preds]
    dpreds = [rng.normal(size=n), rng.integers(0, 5, n) / 2.0]
    assert score_depths_many(dpreds, [heads] * 2, punct=[mask] * 2) == [
        score_depths(p, heads, punct=mask) for p in dpreds
    ]


def test_distance_golds_told_apart() -> None:
    rng = np.random.default_rng(3)
    heads = random_heads(rng, 8)
    mask_a = np.zeros(8, dtype=bool)
    mask_b = rng.random(8) < 0.5
    preds = [_prediction(rng, heads, "noisy") for _ in range(4)]
    # one heads object with different masks, and the same tree as a copy
    hs = [heads, heads, heads.copy(), heads]
    ms = [mask_a, mask_b, mask_b, None]
    got = score_distances_many(preds, hs, punct=ms)
    assert got == [score_distances(p, h, punct=m) for p, h, m in zip(preds, hs, ms, strict=True)]
    # rows of a 2-D array are new objects at every access: each must be told apart
    trees = np.stack([random_heads(rng, 8) for _ in range(5)])
    preds = [_prediction(rng, t, "normal") for t in trees]
    # a 2-D array, deliberately: the library's Sequence annotation does not cover it
    got = score_distances_many(preds, trees)  # type: ignore[arg-type]
    assert got == [score_distances(p, t) for p, t in zip(preds, trees, strict=True)]


def test_distance_batch_errors() -> None:
    with pytest.raises(InvalidTreeError):
        score_distances(np.zeros((0, 0)), [])
    with pytest.raises(InvalidTreeError):
        score_distances_many([np.zeros((0, 0))], [[]])
    with pytest.raises(InvalidTreeError):
        score_distances_many([np.zeros((2, 2))], [[0, 0]])
    with pytest.raises(LengthMismatchError):
        score_distances_many([np.zeros((2, 2))], [[0, 1], [0, 1]])
    with pytest.raises(LengthMismatchError):
        score_distances_many([np.zeros((2, 2))], [[0, 1]], punct=[])
    with pytest.raises(LengthMismatchError, match="shape"):
        score_distances_many([np.zeros((2, 2)), np.zeros((3, 3))], [[0, 1], [0, 1]])
    with pytest.raises(LengthMismatchError):
        score_distances_many([np.zeros((2, 2))], [[0, 1]], punct=[[True]])
    with pytest.raises(ScorerInputError, match="finite"):
        score_distances_many([np.zeros((2, 2)), np.full((2, 2), np.inf)], [[0, 1], [0, 1]])


# ------------------------------------------------------------------ depths
@examples(200)
@given(st.integers(0, 2**32 - 1), st.integers(1, 30), st.integers(1, 6))
def test_depth_batch_equals_per_sentence(seed: int, n: int, m: int) -> None:
    from brittle.engine.core.tree import depths

    rng = np.random.default_rng(seed)
    trees = [random_heads(rng, n), random_heads(rng, int(rng.integers(1, n + 1)))]
    masks = [_mask(rng, len(t), str(rng.choice(["none", "some", "half", "all"]))) for t in trees]
    preds, hs, ms = [], [], []
    for _ in range(m):
        t = int(rng.integers(0, 2))
        k = len(trees[t])
        kind = rng.integers(0, 4)
        if kind == 0:
            pred = depths(trees[t]) + rng.normal(0.0, 0.5, k)
        elif kind == 1:
            pred = rng.integers(0, 3, k).astype(np.float64)
        elif kind == 2:
            pred = rng.integers(-1, 6, k) / 2.0
        else:
            pred = np.full(k, 1.0)
        preds.append(pred.astype(np.float32) if rng.random() < 0.3 else pred)
        hs.append(trees[t])
        ms.append(masks[t])
    got = score_depths_many(preds, hs, punct=ms)
    assert got == [score_depths(p, h, punct=q) for p, h, q in zip(preds, hs, ms, strict=True)]
    assert all(isinstance(g, DepthScores) and type(g.root_correct) is bool for g in got)


def test_depth_batch_edge_cases_and_errors() -> None:
    assert score_depths_many([[0.3]], [[0]]) == [score_depths([0.3], [0])]
    assert score_depths_many([[0.3, 0.1]], [[0, 1]], punct=[[True, True]]) == [
        score_depths([0.3, 0.1], [0, 1], punct=[True, True])
    ]
    assert score_depths_many([], []) == []
    with pytest.raises(LengthMismatchError):
        score_depths_many([[0.0]], [[0, 1]])
    with pytest.raises(ScorerInputError, match="finite"):
        score_depths_many([[np.nan, 0.0]], [[0, 1]])
    with pytest.raises(InvalidTreeError):
        score_depths_many([[0.0, 0.0]], [[0, 0]])


# ------------------------------------------------------------------ probe tasks
def _same_dicts(a: list[dict[str, float]], b: list[dict[str, float]]) -> bool:
    return len(a) == len(b) and all(
        x.keys() == y.keys() and all(_same_floats(x[k], y[k]) for k in x)
        for x, y in zip(a, b, strict=True)
    )


@pytest.mark.parametrize("task", ["distance", "perceptron", "depth"])
def test_probe_tasks_use_the_batched_path(task: str) -> None:
    from brittle.engine.core.tree import depths
    from brittle.scorers.metrics import aggregate_depth, aggregate_distance

    rng = np.random.default_rng(7)
    golds = []
    for _ in range(6):
        n = int(rng.integers(1, 12))
        upos = ["PUNCT" if rng.random() < 0.3 else "NOUN" for _ in range(n)]
        golds.append(Gold.from_arrays(random_heads(rng, n), upos=upos))
    golds = golds + [golds[0]] * 5  # candidates of one sentence share its Gold
    spec = ProbeSpec(task=task, dim=4)
    t = task_for(task)
    preds: list[Prediction]  # float32, as a probe's output
    if task == "depth":
        preds = [(depths(g.heads) + rng.normal(0.0, 0.6, len(g))).astype(np.float32) for g in golds]
        ref = [score_depths(p, g.heads, punct=g.punct) for p, g in zip(preds, golds, strict=True)]
        expected = [
            {
                "root_acc": float(s.root_correct),
                "depth_spearman": s.depth_spearman,
                "depth_acc": s.depth_correct / s.depth_total,
            }
            for s in ref
        ]
        expected_corpus = aggregate_depth(ref)
    else:
        preds = [_prediction(rng, g.heads, "noisy").astype(np.float32) for g in golds]
        dref = [
            score_distances(p, g.heads, punct=g.punct) for p, g in zip(preds, golds, strict=True)
        ]
        expected = [
            {"uuas": s.uuas, "sdr": s.sdr, "dspr": s.dspr, "dspr_prim": s.dspr_prim} for s in dref
        ]
        expected_corpus = aggregate_distance(dref)
    assert _same_dicts(t.score(preds, golds, spec), expected)
    assert _same_dicts([t.aggregate(preds, golds, spec)], [expected_corpus])


# ------------------------------------------------------------------ kernel pieces
@examples(60)
@given(st.integers(0, 2**32 - 1), st.integers(0, 1200))
def test_pairwise_sum_is_numpys(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n) * 10.0 ** rng.integers(-6, 6, n)
    assert _metric_kernels.pairwise_sum(a) == np.add.reduce(a)
    assert _metric_kernels.pairwise_sum(a[: n // 3]) == np.add.reduce(a[: n // 3])


@examples(40)
@given(st.integers(0, 2**32 - 1), st.integers(1, 600), st.sampled_from([2, 10, 1000]))
def test_centred_ranks(seed: int, k: int, distinct: int) -> None:
    # lengths above 384 take the sorting path, shorter ones the counting path
    rng = np.random.default_rng(seed)
    x = rng.integers(0, distinct, k).astype(np.float64) + (0.25 if distinct == 1000 else 0.0)
    out = np.empty(k)
    _metric_kernels.centred_ranks(x, out)
    assert (out == rankdata(x) - (k + 1) / 2.0).all()
    small = rng.integers(0, k, k).astype(np.int32)
    count = np.empty(k + 1, dtype=np.int64)
    _metric_kernels.centred_ranks_small(small, out, count)
    assert (out == rankdata(small) - (k + 1) / 2.0).all()


@examples(300)
@given(
    heads_arrays(min_words=0, max_words=10, forest=True),
    st.lists(st.tuples(st.integers(0, 9), st.integers(-1, 11)), max_size=2),
)
def test_is_tree_agrees_with_tree_problems(heads, edits) -> None:
    # forests, cycles, self-loops and out-of-range heads from a few random edits
    for i, h in edits:
        if i < len(heads):
            heads[i] = h
    assert _metric_kernels.is_tree(heads) == (tree_problems(heads) == [])
    if tree_problems(heads):
        with pytest.raises(InvalidTreeError):
            score_distances_many([np.zeros((len(heads), len(heads)))], [heads])
