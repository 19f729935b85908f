"""Substitution tables, the budgeted sampler, eligibility rules and surface spans."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_generators_helpers import CATS, PARIS, make_sentence

from brittle.engine.core.perturbation import apply_perturbation
from brittle.engine.core.sentence import Sentence
from brittle.scorers.hamming import hamming
from brittle.search.generators import (
    GENERATORS,
    Eligibility,
    Generator,
    SubstitutionGenerator,
    SubstitutionTable,
)
from brittle.search.generators.eligibility import (
    fixed_expression_positions,
    hyphen_part_positions,
    is_lettered,
    related_positions,
    title_positions,
)
from brittle.search.generators.surface import surface_of
from brittle.search.sampling import count_substitutions, sample_substitutions


def table(counts: dict[int, int], n: int = 10) -> SubstitutionTable:
    return SubstitutionTable.from_mapping(
        "s1",
        "test",
        n,
        {i: [(f"w{i}x{j}", f"l{i}x{j}") for j in range(c)] for i, c in counts.items()},
    )


def test_every_generator_is_registered_and_declares_what_it_is() -> None:
    names = GENERATORS.names()
    kinds = {"copos": "substitution", "coco": "substitution", "random": "substitution"}
    kinds |= {"jabberwocky": "substitution", "neighbours": "substitution"}
    kinds |= {"shuffle": "reordering", "phrase-shuffle": "reordering"}
    kinds |= {"neighbour-flip": "reordering"}
    assert set(kinds) <= set(names)
    for name in names:
        cls = GENERATORS.get(name)
        assert issubclass(cls, Generator)
        assert cls.method == name
        assert isinstance(cls.requires, frozenset) and "form" in cls.requires
        if name in kinds:
            assert cls.family == kinds[name]
        assert issubclass(cls, SubstitutionGenerator) == (cls.family == "substitution")
        assert "top_k" in cls.options() or cls.family == "reordering"


def test_a_class_that_is_not_a_generator_cannot_register() -> None:
    with pytest.raises(TypeError, match="does not satisfy Generator"):
        GENERATORS.register("not-a-generator")(dict)
    assert "not-a-generator" not in GENERATORS


def test_table_validates_and_views() -> None:
    t = table({5: 2, 1: 3})
    assert t.positions == (1, 5)
    assert t.options(5) == (("w5x0", "l5x0"), ("w5x1", "l5x1"))
    assert t.options(2) == ()
    assert t.size == 5 and len(t) == 2
    assert t.truncated(1).size == 2
    assert t.as_dict()[1][2] == ("w1x2", "l1x2")
    assert SubstitutionTable.from_mapping("s", "m", 3, {0: []}).positions == ()
    with pytest.raises(ValueError):
        SubstitutionTable("s", "m", 3, ((2, (("a", "a"),)), (1, (("b", "b"),))))
    with pytest.raises(ValueError):
        SubstitutionTable("s", "m", 3, ((3, (("a", "a"),)),))
    with pytest.raises(ValueError):
        SubstitutionTable("s", "m", 3, ((1, ()),))


def test_count_substitutions_matches_enumeration() -> None:
    t = table({0: 2, 3: 1, 4: 3})
    for size in range(5):
        brute = sum(
            int(np.prod([len(t.options(p)) for p in combo]))
            for combo in itertools.combinations(t.positions, size)
        )
        assert count_substitutions(t, size) == brute


@given(
    counts=st.dictionaries(st.integers(0, 9), st.integers(1, 3), max_size=6),
    tau=st.integers(1, 4),
    b=st.integers(0, 30),
    seed=st.integers(0, 2**32 - 1),
)
def test_sampler_respects_budget_distinctness_and_seed(
    counts: dict[int, int], tau: int, b: int, seed: int
) -> None:
    t = table(counts)
    draws = sample_substitutions(t, tau=tau, b=b, rng=np.random.default_rng(seed))
    again = sample_substitutions(t, tau=tau, b=b, rng=np.random.default_rng(seed))
    assert draws == again
    assert len(draws) == len(set(draws)) <= b
    size = min(tau, len(t))
    assert len(draws) == (min(b, count_substitutions(t, size)) if size else 0)
    forms = tuple(f"orig{i}" for i in range(10))
    for p in draws:
        assert len(p.positions) == size
        assert len(set(p.positions)) == len(p.positions)
        for pos, form, lemma in zip(p.positions, p.replacements, p.lemmas, strict=True):
            assert (form, lemma) in t.options(pos)
        new = list(forms)
        for pos, form in zip(p.positions, p.replacements, strict=True):
            new[pos] = form
        assert hamming(forms, new) <= tau


def test_sampler_up_to_sizes_and_distinct_positions() -> None:
    t = table({0: 3, 1: 3, 2: 3})
    rng = np.random.default_rng(0)
    draws = sample_substitutions(t, tau=2, b=50, rng=rng, sizes="up_to")
    assert {len(p.positions) for p in draws} == {1, 2}
    sets = sample_substitutions(t, tau=2, b=10, rng=rng, distinct_positions=True)
    assert len(sets) == 3  # only three 2-subsets of three positions
    assert len({p.positions for p in sets}) == 3
    assert sample_substitutions(SubstitutionTable("s", "m", 3), tau=1, b=5, rng=rng) == []
    with pytest.raises(ValueError):
        sample_substitutions(t, tau=0, b=1, rng=rng)


def test_eligibility_defaults_are_content_words() -> None:
    s = make_sentence("cats", CATS)
    assert Eligibility().positions(s) == (1, 2, 4, 5, 6)


def test_eligibility_excludes_proper_nouns_multiword_tokens_and_function_words() -> None:
    s = make_sentence("paris", PARIS)
    assert Eligibility().positions(s) == (3,)  # sleep
    everything = Eligibility(include_upos=None)
    # PROPN, AUX, PUNCT stay excluded; "n't" (PART) sits in a multiword token.
    assert everything.positions(s) == (3,)
    nothing_excluded = Eligibility(include_upos=None, exclude_upos=frozenset(), letters_only=False)
    assert nothing_excluded.positions(s) == (0, 3, 4)  # never words 1-2 of "doesn't"


def test_eligibility_options() -> None:
    s = make_sentence("cats", CATS)
    assert Eligibility(include_upos=frozenset({"NOUN"})).positions(s) == (1, 5)
    assert Eligibility(exclude_forms=frozenset({"dogs"})).positions(s) == (1, 2, 4, 6)
    assert Eligibility(min_length=6).positions(s) == (2, 4, 6)
    assert is_lettered("well-known") and is_lettered("o'clock")
    assert not is_lettered("3D") and not is_lettered("--") and not is_lettered("a--b")


AS_WELL = """
1 We we PRON PRP _ 2 nsubj
2 left leave VERB VBD _ 0 root
3 early early ADV RB _ 2 advmod
4 as as ADV RB _ 2 advmod
5 well well ADV RB _ 4 fixed
6 , , PUNCT , _ 8 punct
7 of of ADP IN _ 8 case
8 course course NOUN NN _ 2 obl
9 . . PUNCT . _ 2 punct
"""


def test_eligibility_skips_fixed_expressions() -> None:
    s = make_sentence("as-well", AS_WELL)
    assert fixed_expression_positions(s) == frozenset({3, 4})
    # "as well" is one expression; "of course" is not marked fixed here, so "course" stays.
    assert Eligibility().positions(s) == (1, 2, 7)
    assert Eligibility(fixed_expressions=True).positions(s) == (1, 2, 3, 4, 7)
    goeswith = make_sentence("gw", AS_WELL.replace("4 fixed", "4 goeswith"))
    assert Eligibility().positions(goeswith) == (1, 2, 7)


OPT_OUT = """
1 The the DET DT _ 5 det
2 opt opt VERB VB _ 4 compound
3 - - PUNCT HYPH _ 4 punct
4 out out ADP RP _ 5 compound
5 form form NOUN NN _ 7 nsubj
6 really really ADV RB _ 7 advmod
7 helps help VERB VBZ _ 0 root
8 search search NOUN NN _ 9 compound
9 engines engine NOUN NNS _ 7 obj
10 - - PUNCT HYPH _ 11 punct
11 well well ADV RB _ 7 advmod
"""


def _glued(sentence: Sentence, positions: set[int]) -> Sentence:
    """``sentence`` with ``SpaceAfter=No`` on the words at ``positions`` (0-based)."""
    rows = tuple(
        dataclasses.replace(t, misc="SpaceAfter=No") if i in positions else t
        for i, t in enumerate(sentence.rows)
    )
    return dataclasses.replace(sentence, rows=rows)


def test_eligibility_can_skip_hyphen_parts_and_compounds() -> None:
    # "opt-out" written against its hyphen; "- well" has spaces on both sides
    s = _glued(make_sentence("opt-out", OPT_OUT), {1, 2})
    assert hyphen_part_positions(s) == frozenset({1, 3})
    assert related_positions(s, frozenset({"compound"})) == frozenset({1, 3, 4, 7, 8})
    assert Eligibility().positions(s) == (1, 4, 5, 6, 7, 8, 10)  # the default: unchanged
    assert Eligibility(hyphen_parts=False).positions(s) == (4, 5, 6, 7, 8, 10)
    assert Eligibility(compounds=False).positions(s) == (5, 6, 10)
    # with spaces around it a hyphen joins nothing
    spaced = make_sentence("spaced", OPT_OUT)
    assert hyphen_part_positions(spaced) == frozenset()


TITLE = """
1 We we PRON PRP _ 2 nsubj
2 follow follow VERB VBP _ 0 root
3 a a DET DT _ 7 det
4 Working work VERB VBG _ 7 compound
5 Out out ADP RP _ 4 compound:prt
6 Loud loud ADV RB _ 4 advmod
7 principle principle NOUN NN _ 2 obj
"""


def test_eligibility_can_skip_the_words_of_a_title() -> None:
    s = make_sentence("title", TITLE)
    assert title_positions(s) == frozenset({3, 4, 5})
    assert Eligibility().positions(s) == (1, 3, 5, 6)  # the default: unchanged
    assert Eligibility(title_words=False).positions(s) == (1, 6)
    # the first word is capitalised for its place: it makes no title of the second
    heading = make_sentence(
        "plan", "1 Analytical analytical ADJ JJ _ 2 amod\n2 Plan plan NOUN NN _ 0 root"
    )
    assert title_positions(heading) == frozenset()
    # nor is a word in capitals alone, or a capitalised word with no capitalised neighbour
    caps = make_sentence(
        "caps", "1 its its PRON PRP$ _ 2 nmod:poss\n2 SPEAKERS speaker NOUN NNS _ 0 root"
    )
    lone = make_sentence("lone", TITLE.replace("Working", "working").replace("Out", "out"))
    assert title_positions(caps) == frozenset() and title_positions(lone) == frozenset()


def test_surface_spans_skip_multiword_tokens() -> None:
    s = make_sentence("paris", PARIS)
    surf = surface_of(s)
    assert surf.text == "Paris doesn't sleep ."
    assert surf.spans[1] is None and surf.spans[2] is None
    assert surf.left(3) == "Paris doesn't" and surf.right(3) == " ."
    assert surf.replaced(3, "dream") == "Paris doesn't dream ."
    with pytest.raises(ValueError):
        surf.left(1)


def test_replaced_with_a_window_cuts_after_the_words_that_follow() -> None:
    surf = surface_of(make_sentence("cats", CATS))
    whole = surf.replaced(1, "mice")
    assert surf.replaced(1, "mice", window=None) == whole
    assert surf.replaced(1, "mice", window=0) == whole[: whole.index("mice") + 4]
    assert surf.replaced(1, "mice", window=1) == whole[: whole.index("mice") + 4] + " chased"
    assert surf.replaced(1, "mice", window=50) == whole  # fewer words follow
    for w in range(len(CATS.splitlines())):
        assert whole.startswith(surf.replaced(1, "mice", window=w))
    # the words of a multiword token are passed over: the window counts "sleep" first
    paris = surface_of(make_sentence("paris", PARIS))
    assert paris.replaced(0, "Rome", window=1) == "Rome doesn't sleep"
    assert paris.replaced(0, "Rome", window=2) == "Rome doesn't sleep ."


def test_sampled_perturbations_apply_to_the_sentence() -> None:
    s = make_sentence("cats", CATS)
    t = SubstitutionTable.from_mapping(
        "cats", "test", len(s), {1: [("mice", "mouse")], 5: [("birds", "bird")]}
    )
    (p,) = sample_substitutions(t, tau=2, b=1, rng=np.random.default_rng(1))
    out = apply_perturbation(s, p)
    assert out.forms[1] == "mice" and out.forms[5] == "birds"
    assert out.lemmas[1] == "mouse"
