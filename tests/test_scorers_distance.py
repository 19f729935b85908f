"""Tree edit distance kernels against the ``apted`` package."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scorers_reference import apted_distance, ewt_test_sentences, examples, heads_arrays

from brittle.engine.core.sentence import Sentence
from brittle.scorers import distance
from brittle.scorers.distance import (
    UNIT_COSTS,
    Normalization,
    TreeEditCosts,
    normalized_tree_edit_distance,
    normalized_tree_edit_distance_batch,
    tree_edit_distance,
    tree_edit_distance_batch,
    tree_edit_distance_pairs,
)
from brittle.scorers.errors import InvalidTreeError, LengthMismatchError, ScorerInputError

# dyadic costs keep every sum exact, so kernel and reference agree to the last bit
COSTS = [
    UNIT_COSTS,
    TreeEditCosts(delete=1.0, insert=2.0, rename=0.5),
    TreeEditCosts(delete=0.75, insert=0.25, rename=3.0),
    TreeEditCosts(delete=1.5, insert=1.5, rename=0.0),
]
LABEL_SETS = st.sampled_from([None, ("a",), ("a", "b"), ("a", "b", "c")])


@st.composite
def labelled_pair(draw: st.DrawFn, max_words: int = 10):
    ha = draw(heads_arrays(max_words=max_words, forest=True))
    hb = draw(heads_arrays(max_words=max_words, forest=True))
    alphabet = draw(LABEL_SETS)
    if alphabet is None:
        return ha, hb, None, None
    la = draw(st.lists(st.sampled_from(alphabet), min_size=len(ha), max_size=len(ha)))
    lb = draw(st.lists(st.sampled_from(alphabet), min_size=len(hb), max_size=len(hb)))
    return ha, hb, la, lb


@examples(150)
@given(labelled_pair(), st.sampled_from(COSTS))
def test_matches_apted_on_random_trees(pair, costs: TreeEditCosts) -> None:
    ha, hb, la, lb = pair
    expected = apted_distance(ha, hb, la, lb, costs.delete, costs.insert, costs.rename)
    assert tree_edit_distance(ha, hb, la, lb, costs=costs) == expected


@examples(40)
@given(
    heads_arrays(max_words=9),
    st.lists(heads_arrays(max_words=9, forest=True), max_size=6),
    st.sampled_from(COSTS),
)
def test_batch_matches_single(h0, hs, costs: TreeEditCosts) -> None:
    expected = [
        apted_distance(h0, h, None, None, costs.delete, costs.insert, costs.rename) for h in hs
    ]
    got = tree_edit_distance_batch(h0, hs, costs=costs)
    assert got.dtype == np.float64
    assert got.tolist() == expected
    # Small batches run in the calling thread; the parallel kernel gives the same values.
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(distance, "SERIAL_WORK", 0)
        assert tree_edit_distance_batch(h0, hs, costs=costs).tolist() == expected
    pairs = tree_edit_distance_pairs([h0] * len(hs), hs, costs=costs)
    assert pairs.tolist() == expected


@examples(30)
@given(st.lists(labelled_pair(max_words=8), min_size=1, max_size=5), st.sampled_from(COSTS))
def test_labelled_pairs_batch(pairs, costs: TreeEditCosts) -> None:
    if any(p[2] is None for p in pairs) and not all(p[2] is None for p in pairs):
        pairs = [(ha, hb, None, None) for ha, hb, _, _ in pairs]
    labelled = pairs[0][2] is not None
    got = tree_edit_distance_pairs(
        [p[0] for p in pairs],
        [p[1] for p in pairs],
        [p[2] for p in pairs] if labelled else None,
        [p[3] for p in pairs] if labelled else None,
        costs=costs,
    )
    expected = [
        apted_distance(ha, hb, la, lb, costs.delete, costs.insert, costs.rename)
        for ha, hb, la, lb in pairs
    ]
    assert got.tolist() == expected


@examples(60)
@given(labelled_pair(max_words=12))
def test_symmetry_identity_and_bounds(pair) -> None:
    ha, hb, la, lb = pair
    d = tree_edit_distance(ha, hb, la, lb)
    assert d == tree_edit_distance(hb, ha, lb, la)
    assert tree_edit_distance(ha, ha, la, la) == 0.0
    assert abs(len(ha) - len(hb)) <= d <= len(ha) + len(hb)
    assert 0.0 <= normalized_tree_edit_distance(ha, hb, la, lb, by="sum") <= 1.0
    # asymmetric costs swap roles with the trees
    c = TreeEditCosts(delete=1.0, insert=2.0, rename=0.5)
    swapped = TreeEditCosts(delete=2.0, insert=1.0, rename=0.5)
    assert tree_edit_distance(ha, hb, la, lb, costs=c) == tree_edit_distance(
        hb, ha, lb, la, costs=swapped
    )


def _ewt_pairs(count: int, lo: int, hi: int) -> list[tuple[Sentence, Sentence]]:
    try:
        sentences = ewt_test_sentences()
    except FileNotFoundError:
        pytest.skip("../shared/data/ud is not available")
    picked = [s for s in sentences if lo <= len(s) <= hi][: 2 * count]
    return list(zip(picked[0::2], picked[1::2], strict=False))


@pytest.mark.shared
@pytest.mark.parametrize("field", [None, "forms", "upos", "deprels"])
@pytest.mark.parametrize("costs", COSTS[:3], ids=["unit", "cheap-rename", "dear-rename"])
def test_matches_apted_on_treebank(field: str | None, costs: TreeEditCosts) -> None:
    pairs = _ewt_pairs(8, 3, 22)
    many = [b for _, b in pairs]
    for a, b in pairs:
        la = getattr(a, field) if field else None
        lb = getattr(b, field) if field else None
        expected = apted_distance(
            a.heads, b.heads, la, lb, costs.delete, costs.insert, costs.rename
        )
        assert tree_edit_distance(a.heads, b.heads, la, lb, costs=costs) == expected
        assert tree_edit_distance(a.heads, a.heads, la, la, costs=costs) == 0.0
    # one against many, on the first tree
    a = pairs[0][0]
    la = getattr(a, field) if field else None
    many_labels = [getattr(b, field) for b in many] if field else None
    expected_many = [
        apted_distance(
            a.heads,
            b.heads,
            la,
            getattr(b, field) if field else None,
            costs.delete,
            costs.insert,
            costs.rename,
        )
        for b in many
    ]
    got = tree_edit_distance_batch(a.heads, [b.heads for b in many], la, many_labels, costs=costs)
    assert got.tolist() == expected_many


def test_known_values() -> None:
    chain = [0, 1, 2]
    flat = [0, 1, 1]
    assert tree_edit_distance(chain, flat) == 2.0
    assert tree_edit_distance([], []) == 0.0
    assert tree_edit_distance([], flat) == 3.0
    assert tree_edit_distance(flat, [], costs=TreeEditCosts(delete=0.5)) == 1.5
    assert tree_edit_distance([0, 1], [0, 1], ["a", "b"], ["a", "c"]) == 1.0
    assert (
        tree_edit_distance([0, 1], [0, 1], ["a", "b"], ["a", "c"], costs=TreeEditCosts(rename=5.0))
        == 2.0
    )
    # integer label arrays are used as they are, the root still differs from every word
    la = np.array([-1, 0])
    assert tree_edit_distance([0, 1], [0, 1], la, la) == 0.0
    # a 3-chain against a flat tree of 3 words: normalised by max exceeds 1
    assert tree_edit_distance([0, 1, 2], [0, 0, 0]) == 4.0
    assert normalized_tree_edit_distance([0, 1, 2], [0, 0, 0], by="max") == pytest.approx(4 / 3)
    assert normalized_tree_edit_distance([0, 1, 2], [0, 0, 0], by="sum") == pytest.approx(4 / 6)
    assert normalized_tree_edit_distance([], []) == 0.0


def test_normalized_batch() -> None:
    many = [np.array([0, 1, 1]), np.array([0]), np.array([], dtype=np.int64)]
    raw = tree_edit_distance_batch([0, 1, 2], many)
    cases: list[tuple[Normalization, list[int]]] = [("max", [3, 3, 3]), ("sum", [6, 4, 3])]
    for by, sizes in cases:
        got = normalized_tree_edit_distance_batch([0, 1, 2], many, by=by)
        np.testing.assert_allclose(got, raw / np.array(sizes))
    assert normalized_tree_edit_distance_batch([], [np.array([], dtype=np.int64)]).tolist() == [0.0]


def test_batch_accepts_2d_array_and_empty_batch() -> None:
    many = np.array([[0, 1, 1], [2, 0, 2], [0, 1, 2]])
    assert tree_edit_distance_batch([0, 1, 2], many).tolist() == [2.0, 2.0, 0.0]
    assert tree_edit_distance_batch([0, 1, 2], []).shape == (0,)
    assert tree_edit_distance_pairs([], []).shape == (0,)


def test_errors() -> None:
    with pytest.raises(InvalidTreeError, match="cycle"):
        tree_edit_distance([0, 3, 2], [0])
    with pytest.raises(InvalidTreeError, match="heads_b: word 1 has HEAD 5"):
        tree_edit_distance([0], [5])
    with pytest.raises(InvalidTreeError, match=r"many_heads\[1\]"):
        tree_edit_distance_batch([0], [[0], [1]])
    with pytest.raises(InvalidTreeError, match="heads"):
        tree_edit_distance_batch([1], [[0]])
    with pytest.raises(InvalidTreeError, match=r"heads_b\[0\]"):
        tree_edit_distance_pairs([[0]], [[2, 1]])
    with pytest.raises(ScorerInputError, match="every tree or for none"):
        tree_edit_distance([0], [0], ["a"], None)
    with pytest.raises(LengthMismatchError):
        tree_edit_distance([0, 1], [0], ["a"], ["b"])
    with pytest.raises(ScorerInputError, match="integers"):
        tree_edit_distance([0.0], [0])
    with pytest.raises(ScorerInputError, match="by must be"):
        normalized_tree_edit_distance([0], [0], by="min")  # type: ignore[arg-type]
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ScorerInputError):
            TreeEditCosts(delete=bad)
    with pytest.raises(ValueError):  # every scorer error is also a ValueError
        tree_edit_distance([0], [2])


def test_costs_are_frozen() -> None:
    with pytest.raises(AttributeError):
        UNIT_COSTS.delete = 2.0  # type: ignore[misc]
    assert TreeEditCosts() == UNIT_COSTS
    assert TreeEditCosts(delete=2) == TreeEditCosts(delete=2.0)
    assert isinstance(TreeEditCosts(delete=2).delete, float)
    with pytest.raises(ScorerInputError):
        TreeEditCosts(rename=True)
    assert {TreeEditCosts(): 1}[UNIT_COSTS] == 1


def test_all_small_trees_exhaustively() -> None:
    """Every pair of (forest) HEAD arrays with up to 3 words, unit costs."""
    trees = [
        np.array(h, dtype=np.int64)
        for n in range(4)
        for h in itertools.product(range(n + 1), repeat=n)
    ]
    from brittle.scorers import _ted_kernels

    trees = [h for h in trees if _ted_kernels.prepare(h, np.zeros(len(h), np.int64), -1, False)[5]]
    for a in trees:
        got = tree_edit_distance_batch(a, trees)
        assert got.tolist() == [apted_distance(a, b) for b in trees]


@examples(60)
@given(labelled_pair(max_words=11))
def test_both_orientations_match_apted(pair) -> None:
    """The kernel may solve a pair on the mirror images; both orientations must agree."""
    from brittle.scorers import _ted_kernels

    ha, hb, la, lb = pair
    expected = apted_distance(ha, hb, la, lb, 1.0, 2.0, 0.5)
    vocab: dict[object, int] = {}
    ids_a = np.array([vocab.setdefault(x, len(vocab)) for x in (la or [0] * len(ha))], np.int64)
    ids_b = np.array([vocab.setdefault(x, len(vocab)) for x in (lb or [0] * len(hb))], np.int64)
    for mirror in (False, True):
        pa = _ted_kernels.prepare(ha, ids_a, -1, mirror)
        pb = _ted_kernels.prepare(hb, ids_b, -1, mirror)
        assert pa[5] and pb[5]
        got = _ted_kernels.zhang_shasha(pa[0], pa[1], pa[2], pb[0], pb[1], pb[2], 1.0, 2.0, 0.5)
        assert got == expected
        # each orientation reports the other's decomposition cost
        other_a = _ted_kernels.prepare(ha, ids_a, -1, not mirror)
        assert pa[4] == other_a[3]
