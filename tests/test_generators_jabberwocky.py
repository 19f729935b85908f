"""Jabberwocky pseudowords: not English, inflected per tag, seeded; the character n-gram model."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_generators_helpers import CATS, glove_or_skip, make_sentence, wordnet_or_skip

from brittle.search.generators import Jabberwocky
from brittle.search.generators.charlm import CharNgramModel
from brittle.search.generators.inflection import regular_inflection

# A verb in every PTB verb tag, a noun in both numbers, adjectives and adverbs by degree.
TAGS = """
1 dogs dog NOUN NNS Number=Plur 2 nsubj
2 chase chase VERB VBP Mood=Ind|Tense=Pres|VerbForm=Fin 0 root
3 cat cat NOUN NN Number=Sing 2 obj
4 running run VERB VBG VerbForm=Ger 2 advcl
5 eats eat VERB VBZ Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin 2 conj
6 eaten eat VERB VBN Tense=Past|VerbForm=Part 2 conj
7 ate eat VERB VBD Mood=Ind|Tense=Past|VerbForm=Fin 2 conj
8 eat eat VERB VB VerbForm=Inf 2 xcomp
9 big big ADJ JJ Degree=Pos 3 amod
10 bigger big ADJ JJR Degree=Cmp 3 amod
11 biggest big ADJ JJS Degree=Sup 3 amod
12 fast fast ADV RB _ 2 advmod
13 faster fast ADV RBR Degree=Cmp 2 advmod
14 fastest fast ADV RBS Degree=Sup 2 advmod
"""


@pytest.fixture(scope="module")
def wordnet() -> Any:
    return wordnet_or_skip()


@pytest.fixture(scope="module")
def glove_words() -> frozenset[str]:
    return frozenset(glove_or_skip()[0])


@pytest.fixture(scope="module")
def jabber(wordnet: Any, glove_words: frozenset[str]) -> Jabberwocky:
    return Jabberwocky(wordnet=wordnet, real_words=glove_words, seed=7, top_k=6)


def test_pseudowords_are_not_english(
    jabber: Jabberwocky, wordnet: Any, glove_words: frozenset[str]
) -> None:
    s = make_sentence("tags", TAGS)
    (t,) = jabber.candidates([s])
    assert len(t) == len(s)
    lemma_names = {n.lower() for n in wordnet.all_lemma_names()}
    for _i, opts in t:
        assert len(opts) == 6
        for form, stem in opts:
            for w in (form.lower(), stem):
                assert w not in glove_words
                assert w not in lemma_names
                assert not wordnet.synsets(w)
            assert form.isalpha() and form.isascii()


def test_pseudowords_are_inflected_per_tag(jabber: Jabberwocky) -> None:
    s = make_sentence("tags", TAGS)
    (t,) = jabber.candidates([s])
    for i, opts in t:
        tag = s.xpos[i]
        for form, stem in opts:
            assert form == regular_inflection(stem, tag)
            if tag in ("NNS", "VBZ"):
                assert form.endswith("s")
            elif tag == "VBG":
                assert form.endswith("ing")
            elif tag in ("VBD", "VBN"):
                assert form.endswith("ed")
            elif tag in ("JJR", "RBR"):
                assert form.endswith("er")
            elif tag in ("JJS", "RBS"):
                assert form.endswith("est")
            else:
                assert form == stem


def test_pseudowords_keep_capitalisation(jabber: Jabberwocky) -> None:
    spec = CATS.replace("2 cats cat", "2 Cats cat").replace("6 dogs dog", "6 DOGS dog")
    (t,) = jabber.candidates([make_sentence("caps", spec)])
    assert all(f[0].isupper() and f[1:].islower() for f, _ in t.options(1))
    assert all(f.isupper() for f, _ in t.options(5))


def test_pseudowords_are_seeded_and_batch_independent(
    wordnet: Any, glove_words: frozenset[str]
) -> None:
    a = Jabberwocky(wordnet=wordnet, real_words=glove_words, seed=1)
    b = Jabberwocky(wordnet=wordnet, real_words=glove_words, seed=1)
    c = Jabberwocky(wordnet=wordnet, real_words=glove_words, seed=2)
    s1, s2 = make_sentence("one", CATS), make_sentence("two", TAGS)
    alone = a.candidates([s1])[0]
    assert b.candidates([s2, s1])[1] == alone
    assert c.candidates([s1])[0] != alone


def test_stem_lengths_follow_the_limits(wordnet: Any, glove_words: frozenset[str]) -> None:
    gen = Jabberwocky(wordnet=wordnet, real_words=glove_words, min_length=5, max_length=6)
    (t,) = gen.candidates([make_sentence("s", CATS)])
    stems = [stem for _, opts in t for _, stem in opts]
    assert stems and all(5 <= len(stem) <= 6 for stem in stems)


def test_char_model_learns_and_samples_deterministically() -> None:
    words = ["blab", "blob", "blub", "blib"] * 5
    model = CharNgramModel.train(words, order=3, k=1e-6)
    assert model.words == 20
    rng1, rng2 = np.random.default_rng(0), np.random.default_rng(0)
    drawn = [model.sample(rng1, min_length=1, max_length=8) for _ in range(20)]
    assert drawn == [model.sample(rng2, min_length=1, max_length=8) for _ in range(20)]
    assert all(w in {"blab", "blob", "blub", "blib"} for w in drawn if w is not None)
    assert model.logprob("blab") > model.logprob("xqzv")
    probs = np.diff(model.cumulative, axis=1, prepend=0.0)
    assert np.allclose(probs.sum(axis=1), 1.0) and (probs[:, 0] == 0).all()


def test_char_model_rejects_bad_settings() -> None:
    with pytest.raises(ValueError):
        CharNgramModel.train(["ab"], order=5)
    with pytest.raises(ValueError):
        CharNgramModel.train(["ab"], k=0)
    model = CharNgramModel.train(["ab", "ABC", "a-b"], order=2)
    assert model.words == 1  # only lowercase a-z words count
