"""Probe metrics against slow transcriptions (scipy Spearman, networkx MST, BFS distances)."""

from __future__ import annotations

import warnings
from collections import defaultdict

import networkx as nx
import numpy as np
import pytest
import scipy.stats
from hypothesis import given
from hypothesis import strategies as st
from scorers_reference import (
    ewt_test_sentences,
    examples,
    random_heads,
    tree_distances_ref,
)

from brittle.scorers.errors import InvalidTreeError, LengthMismatchError, ScorerInputError
from brittle.scorers.metrics import (
    PosMetrics,
    RootMetrics,
    aggregate_depth,
    aggregate_distance,
    dspr,
    dspr_prim,
    length_binned_mean,
    punct_mask,
    score_depths,
    score_depths_many,
    score_distances,
    score_distances_many,
    score_pos,
    sdr_counts,
    uuas_counts,
)


# ------------------------------------------------------------------ references
def _rho(a: np.ndarray, b: np.ndarray) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = float(scipy.stats.spearmanr(a, b).statistic) if len(a) > 1 else float("nan")
    return 0.0 if np.isnan(r) else r


def _mst_edges_nx(pred: np.ndarray, words: list[int]) -> set[tuple[int, int]]:
    g = nx.Graph()
    g.add_nodes_from(words)
    for x in words:
        for y in words:
            if x < y:
                g.add_edge(x, y, weight=float(pred[x, y]))
    return {(min(a, b), max(a, b)) for a, b in nx.minimum_spanning_tree(g).edges()}


def uuas_ref(pred: np.ndarray, heads: np.ndarray, punct: np.ndarray) -> tuple[int, int]:
    words = [i for i in range(len(heads)) if not punct[i]]
    gold = set()
    for i, h in enumerate(heads):
        if h > 0 and not punct[i] and not punct[h - 1]:
            gold.add((min(i, h - 1), max(i, h - 1)))
    pred_edges = _mst_edges_nx(pred, words) if len(words) > 1 else set()
    return len(gold & pred_edges), len(gold)


def sdr_ref(pred: np.ndarray, heads: np.ndarray) -> tuple[int, int]:
    gold = tree_distances_ref(heads)
    n = len(heads)
    equal = total = 0
    for i in range(n):
        for j in range(i + 1, n):
            total += 1
            equal += round(pred[i, j]) == gold[i, j]
    return equal, total


def dspr_ref(pred: np.ndarray, heads: np.ndarray) -> float:
    gold = tree_distances_ref(heads)
    n = len(heads)
    return float(np.mean([_rho(pred[i], gold[i]) for i in range(n)])) if n else 0.0


def dspr_prim_ref(pred: np.ndarray, heads: np.ndarray) -> float:
    n = len(heads)
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from(_mst_edges_nx(pred, list(range(n))))
    lengths = dict(nx.all_pairs_shortest_path_length(g))
    tree_d = np.array([[lengths[i][j] for j in range(n)] for i in range(n)], dtype=float)
    gold = tree_distances_ref(heads)
    return float(np.mean([_rho(tree_d[i], gold[i]) for i in range(n)]))


def depths_ref(heads: np.ndarray) -> list[int]:
    out = []
    for i in range(len(heads)):
        d, node = 0, i + 1
        while heads[node - 1] != 0:
            node = heads[node - 1]
            d += 1
        out.append(d)
    return out


def binned_ref(values: list[float], lengths: list[int], lo: int, hi: int) -> float:
    by_len: dict[int, list[float]] = defaultdict(list)
    for v, n in zip(values, lengths, strict=True):
        by_len[n].append(v)
    means = [np.mean(by_len[n]) for n in range(lo, hi + 1) if n in by_len]
    return float(np.mean(means)) if means else float("nan")


@st.composite
def sentences(draw: st.DrawFn, max_words: int = 12):
    n = draw(st.integers(1, max_words))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    heads = random_heads(rng, n)
    gold = tree_distances_ref(heads).astype(float)
    noise = rng.normal(0.0, draw(st.sampled_from([0.2, 0.6, 3.0])), (n, n))
    pred = np.abs(gold + (noise + noise.T) / 2)
    np.fill_diagonal(pred, 0.0)
    punct = rng.random(n) < draw(st.sampled_from([0.0, 0.2, 0.5]))
    depth_pred = np.array(depths_ref(heads)) + rng.normal(0.0, 0.5, n)
    return heads, pred, punct, depth_pred


# ------------------------------------------------------------------ per sentence
@examples(80)
@given(sentences())
def test_distance_scores_match_reference(sent) -> None:
    heads, pred, punct, _ = sent
    assert uuas_counts(pred, heads, punct=punct) == uuas_ref(pred, heads, punct)
    assert uuas_counts(pred, heads) == uuas_ref(pred, heads, np.zeros(len(heads), bool))
    assert sdr_counts(pred, heads) == sdr_ref(pred, heads)
    assert dspr(pred, heads) == pytest.approx(dspr_ref(pred, heads), abs=1e-12)
    assert dspr_prim(pred, heads) == pytest.approx(dspr_prim_ref(pred, heads), abs=1e-12)
    s = score_distances(pred, heads, punct=punct)
    assert (s.uuas_correct, s.uuas_total) == uuas_ref(pred, heads, punct)
    assert (s.sdr_equal, s.sdr_total) == sdr_ref(pred, heads)
    assert s.dspr == pytest.approx(dspr_ref(pred, heads), abs=1e-12)
    assert s.dspr_prim == pytest.approx(dspr_prim_ref(pred, heads), abs=1e-12)
    assert s.length == len(heads)


@examples(80)
@given(sentences())
def test_depth_scores_match_reference(sent) -> None:
    heads, _, punct, pred = sent
    gold = depths_ref(heads)
    s = score_depths(pred, heads, punct=punct)
    assert s.depth_correct == sum(round(p) == g for p, g in zip(pred, gold, strict=True))
    assert s.depth_total == len(heads)
    assert s.depth_spearman == pytest.approx(_rho(pred, np.array(gold)), abs=1e-12)
    allowed = [i for i in range(len(heads)) if not punct[i]] or list(range(len(heads)))
    shallowest = min(allowed, key=lambda i: (pred[i], i))
    assert s.root_correct == (heads[shallowest] == 0)


def test_perfect_prediction_scores_one() -> None:
    heads = np.array([2, 0, 2, 3, 2, 5])
    gold = tree_distances_ref(heads).astype(float)
    s = score_distances(gold, heads)
    assert (s.uuas, s.sdr, s.dspr, s.dspr_prim) == (
        1.0,
        1.0,
        pytest.approx(1.0),
        pytest.approx(1.0),
    )
    d = score_depths(np.array(depths_ref(heads), dtype=float), heads)
    assert d.root_correct and d.depth_correct == 6 and d.depth_spearman == pytest.approx(1.0)


def test_uuas_with_punctuation() -> None:
    # "I saw her ." : saw is root; the full stop hangs from saw
    heads = np.array([2, 0, 2, 2])
    gold = tree_distances_ref(heads).astype(float)
    punct = punct_mask(["PRON", "VERB", "PRON", "PUNCT"])
    assert punct.tolist() == [False, False, False, True]
    assert uuas_counts(gold, heads, punct=punct) == (2, 2)
    assert uuas_counts(gold, heads) == (3, 3)
    assert uuas_counts(gold, heads, punct=[True] * 4) == (0, 0)
    one = np.zeros((1, 1))
    assert uuas_counts(one, [0]) == (0, 0)
    s = score_distances(one, [0])
    assert np.isnan(s.uuas) and np.isnan(s.sdr)


# ------------------------------------------------------------------ corpus
@examples(25)
@given(st.lists(sentences(max_words=9), min_size=1, max_size=10))
def test_corpus_aggregation(batch) -> None:
    lo, hi = 3, 7
    heads, punct = [b[0] for b in batch], [b[2] for b in batch]
    dist = score_distances_many([b[1] for b in batch], heads, punct=punct)
    depth = score_depths_many([b[3] for b in batch], heads, punct=punct)
    assert len(dist) == len(depth) == len(batch)
    lengths = [len(b[0]) for b in batch]
    u = [uuas_ref(b[1], b[0], b[2]) for b in batch]
    sd = [sdr_ref(b[1], b[0]) for b in batch]
    got = aggregate_distance(dist, min_length=lo, max_length=hi)
    assert list(got) == ["uuas", "sdr", "dspr", "dspr_prim"]
    total_u = sum(t for _, t in u)
    if total_u:
        assert got["uuas"] == pytest.approx(sum(c for c, _ in u) / total_u)
    else:
        assert np.isnan(got["uuas"])
    total_pairs = sum(t for _, t in sd)
    if total_pairs:
        assert got["sdr"] == pytest.approx(sum(e for e, _ in sd) / total_pairs)
    else:
        assert np.isnan(got["sdr"])
    for key, ref in (("dspr", dspr_ref), ("dspr_prim", dspr_prim_ref)):
        expected = binned_ref([ref(b[1], b[0]) for b in batch], lengths, lo, hi)
        assert got[key] == pytest.approx(expected, abs=1e-12, nan_ok=True)
    dres = aggregate_depth(depth, min_length=lo, max_length=hi)
    assert list(dres) == ["root_acc", "depth_spearman", "depth_acc"]
    rhos = [_rho(b[3], np.array(depths_ref(b[0]))) for b in batch]
    assert dres["depth_spearman"] == pytest.approx(
        binned_ref(rhos, lengths, lo, hi), abs=1e-12, nan_ok=True
    )
    assert dres["depth_acc"] == pytest.approx(sum(s.depth_correct for s in depth) / sum(lengths))


def test_length_binned_mean() -> None:
    # lengths 5 and 6: mean(mean(1, 3), 5) = 3.5; lengths outside 5..50 are ignored
    assert length_binned_mean([1, 3, 5, 100, 100], [5, 5, 6, 4, 51]) == 3.5
    assert np.isnan(length_binned_mean([1.0], [3]))
    with pytest.raises(LengthMismatchError):
        length_binned_mean([1.0], [5, 6])


def test_pos_and_root_metrics() -> None:
    pos = PosMetrics()
    pos.add(["NOUN", "VERB"], ["NOUN", "NOUN"])
    pos.add_batch([["DET"]], [["DET"]])
    assert (pos.correct, pos.total) == (2, 3)
    assert pos.result() == {"pos_acc": pytest.approx(2 / 3)}
    assert score_pos([1, 2], [1, 3]).accuracy == 0.5
    assert np.isnan(PosMetrics().result()["pos_acc"])
    root = RootMetrics()
    assert root.add_batch([1, 0], [[2, 0, 2], [2, 0]]) == [True, False]
    assert root.result() == {"root_acc": 0.5}
    with pytest.raises(LengthMismatchError):
        score_pos(["A"], [])


def test_metric_errors() -> None:
    with pytest.raises(LengthMismatchError):
        score_distances(np.zeros((2, 2)), [0, 1, 1])
    with pytest.raises(ScorerInputError, match="finite"):
        score_distances(np.full((2, 2), np.nan), [0, 1])
    with pytest.raises(InvalidTreeError):
        score_distances(np.zeros((2, 2)), [0, 0])
    with pytest.raises(LengthMismatchError):
        score_depths([0.0], [0, 1])
    with pytest.raises(LengthMismatchError):
        uuas_counts(np.zeros((2, 2)), [0, 1], punct=[True])


@pytest.mark.shared
def test_gold_trees_from_treebank_score_one() -> None:
    try:
        sentences_ = ewt_test_sentences()
    except FileNotFoundError:
        pytest.skip("../shared/data/ud is not available")
    dist = []
    depth = []
    rng = np.random.default_rng(0)
    for s in sentences_[:150]:
        gold = s.distance_matrix().astype(float)
        assert (gold == tree_distances_ref(s.heads)).all()
        punct = punct_mask(s.upos)
        noisy = gold + rng.uniform(-0.3, 0.3, gold.shape)
        dist.append(score_distances(noisy, s.heads, punct=punct))
        noisy_depths = s.depths() + rng.uniform(-0.3, 0.3, len(s))
        depth.append(score_depths(noisy_depths, s.heads, punct=punct))
    r = aggregate_distance(dist)
    assert r["uuas"] == 1.0 and r["sdr"] == 1.0 and r["dspr_prim"] == pytest.approx(1.0)
    assert 0.8 < r["dspr"] <= 1.0
    d = aggregate_depth(depth)
    assert d["root_acc"] == 1.0 and d["depth_acc"] == 1.0 and d["depth_spearman"] > 0.8
