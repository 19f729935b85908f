"""Builders shared by the generator tests: small sentences and offline resources."""

from __future__ import annotations

from typing import Any

import pytest

from brittle.engine.core.errors import ResourceMissingError
from brittle.engine.core.sentence import Sentence, Token


def make_sentence(sent_id: str, spec: str) -> Sentence:
    """A sentence from one line per token: ``ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL``.

    A multiword token is written ``3-4 FORM``; the other columns are ``_``.
    """
    rows = []
    for line in spec.strip().splitlines():
        cols = line.split()
        if "-" in cols[0]:
            rows.append(Token(cols[0], cols[1]))
            continue
        tid, form, lemma, upos, xpos, feats, head, deprel = cols
        rows.append(Token(tid, form, lemma, upos, xpos, feats, head, deprel))
    return Sentence(sent_id, (f"# sent_id = {sent_id}",), tuple(rows))


def wordnet_or_skip() -> Any:
    """The offline WordNet reader, or skip the test."""
    from brittle.engine.core.resources import load_wordnet

    try:
        return load_wordnet()
    except ResourceMissingError as err:
        pytest.skip(str(err))


def glove_or_skip() -> tuple[Any, Any]:
    """GloVe ``(words, vectors)``, or skip the test."""
    from brittle.search.generators.vocabulary import glove

    try:
        return glove()
    except ResourceMissingError as err:
        pytest.skip(str(err))


#: "The cats chased two bigger dogs quickly ." with PTB tags and features.
CATS = """
1 The the DET DT Definite=Def|PronType=Art 2 det
2 cats cat NOUN NNS Number=Plur 3 nsubj
3 chased chase VERB VBD Mood=Ind|Tense=Past|VerbForm=Fin 0 root
4 two two NUM CD NumType=Card 6 nummod
5 bigger big ADJ JJR Degree=Cmp 6 amod
6 dogs dog NOUN NNS Number=Plur 3 obj
7 quickly quickly ADV RB _ 3 advmod
8 . . PUNCT . _ 3 punct
"""

#: "Paris doesn't sleep ." with a multiword token and a proper noun.
PARIS = """
1 Paris Paris PROPN NNP Number=Sing 4 nsubj
2-3 doesn't _
2 does do AUX VBZ Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin 4 aux
3 n't not PART RB _ 4 advmod
4 sleep sleep VERB VB VerbForm=Inf 0 root
5 . . PUNCT . _ 4 punct
"""
