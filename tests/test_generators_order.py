"""Word-order generators: exact permutations, DND/IDC, phrases, flips, levels, budget, seeds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_generators_helpers import CATS, make_sentence

from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.errors import ConfigError, ResourceMissingError
from brittle.engine.core.perturbation import REORDER_NOTE, Perturbation, apply_perturbation
from brittle.engine.core.sentence import Sentence, Token
from brittle.scorers.order import char_permutation, order_scores, token_permutation
from brittle.search.generators import NeighbourFlip, PhraseShuffle, Shuffle
from brittle.search.generators.order import Reordering, tree_phrases

from support import FIXTURES

MAT = """
1 The the DET DT _ 2 det
2 cat cat NOUN NN _ 3 nsubj
3 sat sit VERB VBD _ 0 root
4 on on ADP IN _ 6 case
5 the the DET DT _ 6 det
6 mat mat NOUN NN _ 3 obl
7 . . PUNCT . _ 3 punct
"""


@st.composite
def sentences(draw: st.DrawFn) -> Sentence:
    """Random trees (each word attached to an earlier word or the root) with distinct forms."""
    n = draw(st.integers(1, 12))
    root = draw(st.integers(0, n - 1))
    heads = []
    for i in range(n):
        if i == root:
            heads.append(0)
        else:
            others = [j for j in range(n) if j != i]
            heads.append(draw(st.sampled_from(others)) + 1)
    # Keep it a tree: re-attach any word whose head chain cycles to the root.
    for i in range(n):
        seen, node = set(), i
        while heads[node] != 0 and node not in seen:
            seen.add(node)
            node = heads[node] - 1
        if heads[node] != 0:
            heads[i] = root + 1
    rows = tuple(
        Token(str(i + 1), f"w{i}x", "_", "NOUN", "NN", "_", str(h), "dep")
        for i, h in enumerate(heads)
    )
    return Sentence(f"rand{n}", (), rows)


GENERATORS = [
    Shuffle(),
    PhraseShuffle(rho=0.7),
    PhraseShuffle(rho=0.7, segmentation="random"),
    NeighbourFlip(rho=0.4),
    Shuffle(level="character"),
    PhraseShuffle(level="character", rho=1.0),
    NeighbourFlip(level="character", rho=0.5, keep_spaces=True),
]


@pytest.mark.parametrize("gen", GENERATORS, ids=lambda g: f"{g.method}-{g.level}")
@given(sentence=sentences(), seed=st.integers(0, 2**31 - 1), b=st.integers(0, 6))
def test_reorderings_are_exact_permutations_with_matching_scores(
    gen: Reordering, sentence: Sentence, seed: int, b: int
) -> None:
    (records,) = gen.reorder([sentence], b=b, seed=seed)
    assert len(records) <= b
    assert len({r.permutation for r in records}) == len(records)
    for r in records:
        k = len(r.units)
        assert sorted(r.permutation) == list(range(k))
        assert r.moved > 0
        assert list(r.perturbed_units) == [r.units[i] for i in r.permutation]
        if r.level == "character":
            assert r.original_text == "".join(r.units)
            assert r.perturbed_text == "".join(r.perturbed_units)
            recovered = order_scores(r.original_text, r.perturbed_text)
            assert char_permutation(r.original_text, r.perturbed_text).shape == (k,)
        else:
            assert r.perturbed_text == " ".join(r.perturbed_units)
            # Forms are distinct, so the permutation is recoverable from the text.
            assert token_permutation(r.units, r.perturbed_units).tolist() == list(r.permutation)
            recovered = order_scores(r.units, r.perturbed_units)
        exact = order_scores(list(range(k)), list(r.permutation))
        assert r.dnd == pytest.approx(exact.dnd) and r.idc == pytest.approx(exact.idc)
        if r.level == "word":
            assert (r.dnd, r.idc) == pytest.approx((recovered.dnd, recovered.idc))
    again = gen.reorder([sentence], b=b, seed=seed)[0]
    assert again == records


@given(sentence=sentences(), seed=st.integers(0, 2**31 - 1))
def test_neighbour_flip_moves_units_by_one_in_disjoint_pairs(sentence: Sentence, seed: int) -> None:
    for r in NeighbourFlip(rho=0.5).reorder([sentence], b=4, seed=seed)[0]:
        perm = r.permutation
        for j, i in enumerate(perm):
            assert abs(i - j) <= 1
            if i == j + 1:
                assert perm[j + 1] == j  # a swapped pair


@given(sentence=sentences(), seed=st.integers(0, 2**31 - 1), depth=st.integers(1, 3))
def test_phrase_shuffle_keeps_tree_phrases_contiguous(
    sentence: Sentence, seed: int, depth: int
) -> None:
    phrase = tree_phrases(sentence.heads, depth=depth)
    assert list(phrase) == sorted(phrase) and (not phrase or phrase[0] == 0)
    gen = PhraseShuffle(rho=0.8, depth=depth)
    for r in gen.reorder([sentence], b=3, seed=seed)[0]:
        moved_ids = [phrase[i] for i in r.permutation]
        # Each phrase appears as one contiguous block, in its internal order.
        blocks = [pid for j, pid in enumerate(moved_ids) if j == 0 or pid != moved_ids[j - 1]]
        assert len(blocks) == len(set(blocks))
        for pid in set(phrase):
            inside = [i for i in r.permutation if phrase[i] == pid]
            assert inside == sorted(inside)


def test_tree_phrases_of_a_simple_sentence() -> None:
    s = make_sentence("mat", MAT)
    assert tree_phrases(s.heads) == (0, 0, 1, 2, 2, 2, 3)
    assert tree_phrases(s.heads, depth=2) == (0, 1, 2, 3, 4, 5, 6)
    gen = PhraseShuffle(rho=1.0)
    for r in gen.reorder([s], b=10, seed=0)[0]:
        text = r.perturbed_text
        assert "The cat" in text and "on the mat" in text


def test_rho_zero_changes_nothing_and_rho_one_flips_every_pair() -> None:
    s = make_sentence("mat", MAT)
    assert NeighbourFlip(rho=0.0).reorder([s], b=3, seed=0) == [[]]
    assert PhraseShuffle(rho=0.0).reorder([s], b=3, seed=0) == [[]]
    (flips,) = NeighbourFlip(rho=1.0).reorder([s], b=3, seed=0)
    assert [r.permutation for r in flips] == [(1, 0, 3, 2, 5, 4, 6)]
    with pytest.raises(ConfigError):
        NeighbourFlip(rho=1.5)
    with pytest.raises(ConfigError):
        Shuffle(level="sentence")  # type: ignore[arg-type]


def test_budget_limits_moved_words() -> None:
    s = make_sentence("mat", MAT)
    for tau in (2, 3, 4):
        for p in Shuffle().perturb([s], b=20, seed=1, tau=tau)[0]:
            assert 0 < p.size <= tau


def test_word_reorderings_apply_as_conllu() -> None:
    s = make_sentence("mat", MAT)
    (ps,) = PhraseShuffle(rho=1.0).perturb([s], b=5, seed=2)
    assert ps
    for p in ps:
        out = apply_perturbation(s, p)
        assert out.problems() == []
        assert out.forms == tuple(s.forms[i] for i in p.order or ())
        # The gold tree stays attached to the same words.
        for j, i in enumerate(p.order or ()):
            head = s.heads[i]
            if head:
                assert out.forms[int(out.heads[j]) - 1] == s.forms[head - 1]


def test_character_level_keeps_spaces_when_asked() -> None:
    s = make_sentence("cats", CATS)
    for r in Shuffle(level="character", keep_spaces=True).reorder([s], b=5, seed=0)[0]:
        assert [j for j, c in enumerate(r.perturbed_text) if c == " "] == [
            j for j, c in enumerate(r.original_text) if c == " "
        ]
    for r in PhraseShuffle(level="character", rho=1.0).reorder([s], b=5, seed=0)[0]:
        assert sorted(r.perturbed_text.split()) == sorted(r.original_text.split())


def test_subword_level_needs_text_records() -> None:
    s = make_sentence("cats", CATS)
    gen = Shuffle(level="subword")
    with pytest.raises(ConfigError):
        gen.perturb([s], b=1, seed=0)
    try:
        (records,) = gen.reorder([s], b=3, seed=0)
    except ResourceMissingError as err:
        pytest.skip(str(err))
    assert len(records) == 3
    tok = gen.units(s)
    assert list(tok.word_of) == sorted(tok.word_of)
    for r in records:
        assert sorted(r.permutation) == list(range(len(r.units)))
        assert r.perturbed_text == tok.join(r.perturbed_units)
        assert r.original_text == tok.join(r.units)


def test_seeds_differ_and_sentences_are_independent() -> None:
    s1, s2 = make_sentence("mat", MAT), make_sentence("cats", CATS)
    a = Shuffle().reorder([s1, s2], b=3, seed=0)
    assert Shuffle().reorder([s2], b=3, seed=0)[0] == a[1]
    assert Shuffle().reorder([s1], b=3, seed=1)[0] != a[0]
    assert np.all([r.sentence_id == "mat" for r in a[0]])


def test_a_reordering_says_what_it_cannot_keep() -> None:
    """Multiword-token lines, empty nodes and (with empty nodes) DEPS describe the old
    order: they are dropped, and the sentence says so in a comment."""
    notes = []
    for sentence in read_conllu(FIXTURES / "mwt_empty.conllu"):
        order = tuple(reversed(range(len(sentence))))
        out = apply_perturbation(sentence, Perturbation(sentence.sent_id, "shuffle", order=order))
        assert all(t.kind == "word" for t in out.rows)
        notes.append(out.metadata.get(REORDER_NOTE))
    assert notes == ["1 multiword token line(s)", "1 empty node(s), DEPS", None]
