"""random and neighbours inflect like coPOS: lemmas of the right class, attested forms."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_generators_helpers import CATS, glove_or_skip, make_sentence

from brittle.search.generators import Neighbours, RandomWords
from brittle.search.generators.inflection import inflect_lemma, is_lexicon_lemma, target_tag
from brittle.search.generators.lexicon import PosLexicon
from brittle.search.generators.vocabulary import attested_form

#: "They forbade dogs ." (past tense verb, plural noun).
FORBADE = """
1 They they PRON PRP Case=Nom|Number=Plur|Person=3|PronType=Prs 2 nsubj
2 forbade forbid VERB VBD Mood=Ind|Number=Plur|Person=3|Tense=Past|VerbForm=Fin 0 root
3 dogs dog NOUN NNS Number=Plur 2 obj
4 . . PUNCT . _ 2 punct
"""


def test_attested_form() -> None:
    known = {"prohibited", "prohibiting", "dogs", "puppies", "was", "were", "dialogs"}
    assert attested_form("prohibit", "VERB", "VBD", known) == "prohibited"
    assert attested_form("dog", "NOUN", "NNS", known) == "dogs"
    assert attested_form("hound", "NOUN", "NNS", known) is None  # "hounds" not attested
    # "dialog" is a verb in lemminflect's lexicon, but no verb form of it is attested.
    assert is_lexicon_lemma("dialog", "VERB")
    assert attested_form("dialog", "VERB", "VBZ", known) is None
    assert attested_form("dialog", "NOUN", "NNS", known) == "dialogs"
    assert attested_form("be", "VERB", "VBD", known, number="Plur", person="3") == "were"
    assert attested_form("be", "VERB", "VBD", known, number="Sing", person="3") == "was"
    assert attested_form("blicket", "NOUN", "NN", known | {"blicket"}) is None  # no lemma


def _embedding() -> tuple[list[str], np.ndarray]:
    words = [
        "forbade",
        "forbid",
        "prohibiting",
        "prohibited",
        "prohibit",
        "banning",
        "banned",
        "dogs",
        "dog",
        "puppy",
        "puppies",
        "hound",
        "cat",
        "they",
    ]
    rng = np.random.default_rng(0)
    base = {0: rng.normal(size=8), 1: rng.normal(size=8), 2: rng.normal(size=8)}
    group = [0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2]
    near = [0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.0, 0.01, 0.02, 0.03, 0.04, 0.3, 0.0]
    vecs = np.stack(
        [base[g] + d * rng.normal(size=8) for g, d in zip(group, near, strict=True)]
    ).astype(np.float32)
    return words, vecs


def test_neighbours_are_inflected_like_the_original() -> None:
    words, vecs = _embedding()
    gen = Neighbours(words=words, vectors=vecs, vocab_size=None, top_k=5)
    s = make_sentence("forbade", FORBADE)
    (t,) = gen.candidates([s])
    verbs = [f for f, _ in t.options(1)]
    assert "prohibited" in verbs and "banned" in verbs
    assert "prohibiting" not in verbs and "banning" not in verbs  # forbade is VBD
    assert len(verbs) == len(set(verbs))  # prohibiting/prohibited count once
    nouns = t.options(2)
    assert ("puppies", "puppy") in nouns
    assert "hound" not in [f for f, _ in nouns]  # its plural is not in the vocabulary
    for form, lemma in nouns:
        assert form == inflect_lemma(lemma, "NNS")
    raw = Neighbours(words=words, vectors=vecs, vocab_size=None, top_k=5, inflect=False)
    assert "prohibiting" in [f for f, _ in raw.candidates([s])[0].options(1)]


def test_random_words_draw_only_attested_forms_of_real_lemmas() -> None:
    vocab = [
        "house",
        "houses",
        "dialog",
        "dialogs",
        "infirm",
        "walk",
        "walked",
        "walking",
        "jump",
        "jumped",
        "chase",
        "run",
        "ran",
        "running",
        "dog",
        "dogs",
        "cat",
        "quickly",
        "slowly",
    ]
    gen = RandomWords(vocabulary=vocab, vocab_size=None, seed=0, top_k=10)
    assert set(gen.slot_pool("VERB", "VBD")) == {"walk", "jump", "run"}
    assert "dialog" not in gen.slot_pool("VERB", "VB")  # no verb form attested
    assert set(gen.slot_pool("NOUN", "NNS")) >= {"house", "dog", "dialog"}
    (t,) = gen.candidates([make_sentence("cats", CATS)])
    verbs = {f for f, _ in t.options(2)}  # chased (VBD)
    assert verbs == {"walked", "jumped", "ran"}
    nouns = {f for f, _ in t.options(1)}  # cats (NNS)
    assert nouns and nouns <= {"houses", "dialogs", "dogs"}


@pytest.mark.shared
def test_treebank_options_are_attested_and_carry_the_tag(ewt_test: Path) -> None:
    """On real sentences, every content-word option of random and neighbours is a GloVe
    word, the inflection of its lemma for the original's tag, and a form lemminflect
    lists for that lemma and tag."""
    from lemminflect import getInflection

    from brittle.engine.core.conllu import read_conllu

    words, _ = glove_or_skip()
    known = set(words)
    lexicon = PosLexicon()
    sentences = read_conllu(ewt_test)[:40]
    for gen in (Neighbours(top_k=5), RandomWords(top_k=5, seed=3)):
        checked = 0
        for s, table in zip(sentences, gen.candidates(sentences), strict=True):
            for i, opts in table:
                w = s.words[i]
                tag = target_tag(w.upos, w.xpos, w.feats_dict)
                if w.upos not in ("NOUN", "VERB", "ADJ", "ADV") or tag is None:
                    continue
                for form, lemma in opts:
                    low = form.lower()
                    assert low in known, (gen.method, w.form, form)
                    assert low == inflect_lemma(lemma.lower(), tag, **_agreement(w.feats_dict))
                    listed = getInflection(lemma.lower(), tag=tag, inflect_oov=False)
                    base = tag in ("NN", "VB", "VBP", "JJ", "RB") and low == lemma.lower()
                    assert base or low in listed or lexicon.has_tag(low, w.upos, tag), (
                        gen.method,
                        w.form,
                        tag,
                        form,
                    )
                    checked += 1
        assert checked > 200, gen.method


def _agreement(feats: dict[str, str]) -> dict[str, str | None]:
    return {"number": feats.get("Number"), "person": feats.get("Person")}
