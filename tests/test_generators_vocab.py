"""random and neighbours: vocabulary draws and embedding neighbours, POS-filtered."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_generators_helpers import CATS, glove_or_skip, make_sentence

from brittle.search.generators import Neighbours, RandomWords
from brittle.search.generators.inflection import inflect_lemma
from brittle.search.generators.lexicon import PosLexicon
from brittle.search.generators.neighbours import embedding_index
from brittle.search.generators.vocabulary import frequent_words

VOCAB = [
    "the",
    ",",
    "house",
    "houses",
    "car",
    "tree",
    "river",
    "stone",
    "run",
    "ran",
    "walk",
    "eat",
    "jump",
    "sing",
    "big",
    "red",
    "small",
    "green",
    "quickly",
    "slowly",
    "loudly",
    "Paris",
    "3d",
    "co-op",
    "of",
    "and",
    "dog",
    "puppy",
    "cat",
    "dogs",
    "hound",
    "chase",
    "pursue",
    "fast",
    "happily",
]


def test_frequent_words_keeps_plain_lowercase_words() -> None:
    words, rows = frequent_words(VOCAB, 10)
    assert words == ("the", "house", "houses", "car", "tree", "river", "stone", "run", "ran")
    assert rows.tolist() == [0, 2, 3, 4, 5, 6, 7, 8, 9]
    assert "Paris" not in frequent_words(VOCAB, None)[0]


def test_lexicon_tags_and_lemmas() -> None:
    lex = PosLexicon()
    assert "NOUN" in lex.upos("houses") and "VERB" in lex.upos("ran")
    assert lex.upos("blorfy") == frozenset()
    assert lex.has("xyz", "DET")  # undecidable tags pass
    assert lex.has_tag("houses", "NOUN", "NNS") and not lex.has_tag("house", "NOUN", "NNS")
    assert lex.has_tag("ran", "VERB", "VBD") and not lex.has_tag("runs", "VERB", "VBD")
    assert lex.lemma("ran", "VERB") == "run" and lex.lemma("blorfy", "NOUN") == "_"


def test_random_words_match_pos_and_inflection() -> None:
    gen = RandomWords(vocabulary=VOCAB, vocab_size=None, seed=0, top_k=3)
    s = make_sentence("cats", CATS)
    (t,) = gen.candidates([s])
    lex = PosLexicon()
    plural = t.options(1)  # cats (NNS)
    assert plural
    for form, lemma in plural:
        assert "NOUN" in lex.upos(lemma) and form == inflect_lemma(lemma, "NNS")
        assert form != "cats"
    for form, lemma in t.options(2):  # chased (VBD)
        assert form == inflect_lemma(lemma, "VBD") and "VERB" in lex.upos(lemma)
    for form, _ in t.options(6):  # quickly (ADV)
        assert "ADV" in lex.upos(form) and form != "quickly"
    for _i, opts in t:
        assert all(f.isalpha() and f.islower() for f, _ in opts)


def test_random_words_without_pos_draw_anything_plain() -> None:
    gen = RandomWords(vocabulary=VOCAB, vocab_size=None, same_pos=False, inflect=False, top_k=30)
    (t,) = gen.candidates([make_sentence("cats", CATS)])
    plain = set(frequent_words(VOCAB, None)[0])
    drawn = {f for f, _ in t.options(1)}
    assert drawn <= plain and len(drawn) > 10
    assert any("NOUN" not in PosLexicon().upos(w) for w in drawn)


def test_random_words_are_seeded_and_batch_independent() -> None:
    s1, s2 = make_sentence("one", CATS), make_sentence("two", CATS)
    a = RandomWords(vocabulary=VOCAB, seed=5, top_k=2)
    alone = a.candidates([s1])[0]
    assert RandomWords(vocabulary=VOCAB, seed=5, top_k=2).candidates([s2, s1])[1] == alone
    other = RandomWords(vocabulary=VOCAB, seed=6, top_k=2).candidates([s1])[0]
    assert other != alone or len(a.pool("NOUN")) < 3


def _toy_embedding() -> tuple[list[str], np.ndarray]:
    words = ["dog", "dogs", "puppy", "hound", "cat", "devour", "chase", "the", "Rex"]
    vecs = np.array(
        [
            [1.0, 0.0, 0.0],
            [0.99, 0.05, 0.0],
            [0.95, 0.2, 0.0],
            [0.9, 0.0, 0.3],
            [0.7, 0.6, 0.0],
            [0.8, 0.0, 0.0001],  # near "dog" but a verb only in the noun filter's eyes
            [0.0, 0.0, 1.0],
            [0.0, 1.0, 0.0],
            [1.0, 0.0, 0.0],
        ],
        dtype=np.float32,
    )
    return words, vecs


def test_neighbours_are_nearest_other_lemmas_of_the_same_pos() -> None:
    words, vecs = _toy_embedding()
    gen = Neighbours(words=words, vectors=vecs, vocab_size=None, top_k=3, inflect=False)
    s = make_sentence("cats", CATS)
    (t,) = gen.candidates([s])
    opts = t.options(5)  # dogs: query "dogs"
    forms = [f for f, _ in opts]
    assert "dog" not in forms and "dogs" not in forms  # same lemma excluded
    assert "Rex" not in forms  # not a plain word, never indexed
    assert forms[:2] == ["puppy", "hound"]
    assert all("NOUN" in PosLexicon().upos(f) for f in forms)
    unfiltered = Neighbours(words=words, vectors=vecs, vocab_size=None, same_pos=False, top_k=4)
    assert "devour" in [f for f, _ in unfiltered.candidates([s])[0].options(5)]


def test_embedding_index_is_cached() -> None:
    words, vecs = _toy_embedding()
    a = embedding_index(words, vecs, vocab_size=None)
    assert embedding_index(words, vecs, vocab_size=None) is a
    assert embedding_index(words, vecs, vocab_size=3) is not a


@pytest.mark.shared
def test_glove_generators_on_treebank_sentences(ewt_test: Path) -> None:
    from brittle.engine.core.conllu import read_conllu

    glove_or_skip()
    sentences = read_conllu(ewt_test)[:20]
    for gen in (Neighbours(top_k=4), RandomWords(top_k=4, seed=1)):
        tables = gen.candidates(sentences)
        assert len(tables) == len(sentences)
        assert sum(t.size for t in tables) > 100
        for s, t in zip(sentences, tables, strict=True):
            assert t.sentence_id == s.sent_id
            for i, opts in t:
                assert len(opts) <= 4
                assert all(f.lower() != s.forms[i].lower() for f, _ in opts)
        draws = gen.perturb(sentences, b=4, seed=0, tau=3)
        assert all(len(p.positions) <= 3 for ps in draws for p in ps)
