"""Parsers: the spaCy backend for real, Stanza's conversion without models, gold, cache."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from needs import require

from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.errors import ConfigError, ResourceMissingError
from brittle.engine.core.tree import tree_problems
from brittle.scorers.parsers import (
    CachedParser,
    GoldParser,
    Parse,
    Parser,
    SpacyBackend,
    StanzaBackend,
    make_parser,
    parser_names,
)
from brittle.scorers.parsers.stanza_backend import document_to_parses

from support import FIXTURES

needs_spacy = pytest.mark.needs("spacy-model")


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split(" "))


class CountingBackend:
    """A fake backend: a right-branching chain, counting what it was asked."""

    name = "fake"
    ud_labels = False

    def __init__(self) -> None:
        self.calls: list[list[tuple[str, ...]]] = []

    def prepare(self) -> None:
        pass

    def describe(self) -> dict[str, object]:
        return {"parser": self.name}

    def parse_words(self, batch: Sequence[tuple[str, ...]]) -> list[Parse]:
        self.calls.append(list(batch))
        return [Parse.build(range(len(w)), ["X"] * len(w), ["dep"] * len(w)) for w in batch]


def test_registry_lists_the_three_parsers() -> None:
    assert {"spacy", "stanza", "gold"} <= set(parser_names())
    with pytest.raises(ConfigError, match=r"known: .*gold"):
        make_parser("nope")


def test_parse_record_validates_and_is_read_only() -> None:
    p = Parse.build([2, 0], ["PRON", "VERB"], ["nsubj", "root"])
    assert p.heads.dtype == np.int32 and len(p) == 2
    with pytest.raises(ValueError):
        p.heads[0] = 1
    with pytest.raises(ValueError):
        Parse.build([0], ["X", "Y"], ["root"])
    assert p == Parse.build(np.array([2, 0]), ("PRON", "VERB"), ("nsubj", "root"))
    assert hash(p) == hash(Parse.build([2, 0], ["PRON", "VERB"], ["nsubj", "root"]))


def test_cache_deduplicates_and_survives_across_calls() -> None:
    backend = CountingBackend()
    parser = CachedParser(backend, cache_size=10)
    a, b = ("a", "b"), ("c", "d", "e")
    out = parser.parse_words([a, b, a])
    assert [len(p) for p in out] == [2, 3, 2]
    assert out[0] is out[2]
    assert backend.calls == [[a, b]]
    parser.parse_words([b, ("f",)])
    assert backend.calls[-1] == [("f",)]
    assert parser.stats.queries == 5 and parser.stats.parsed == 3
    assert parser.stats.hits == 2 and parser.stats.batches == 2


def test_cache_is_lru_bounded() -> None:
    backend = CountingBackend()
    parser = CachedParser(backend, cache_size=2)
    parser.parse_words([("a",), ("b",)])
    parser.parse_words([("a",)])  # a becomes most recent
    parser.parse_words([("c",)])  # evicts b
    assert len(parser) == 2
    parser.parse_words([("a",)])
    assert backend.calls[-1] == [("c",)]
    parser.parse_words([("b",)])
    assert backend.calls[-1] == [("b",)]


def test_gold_parser_reads_the_annotation() -> None:
    sentences = read_conllu(FIXTURES / "mwt_empty.conllu")
    parser = make_parser("gold")
    assert isinstance(parser, GoldParser) and isinstance(parser, Parser)
    parses = parser.parse(sentences)
    for s, p in zip(sentences, parses, strict=True):
        assert np.array_equal(p.heads, s.heads)
        assert p.upos == s.upos and p.deprels == s.deprels


# ------------------------------------------------------------------ stanza (no models)
def _stanza_document(sentences: list[list[dict[str, object]]]) -> object:
    from stanza.models.common.doc import Document

    return Document(sentences)


def test_stanza_conversion_from_a_document_built_from_dicts() -> None:
    pytest.importorskip("stanza")
    doc = _stanza_document(
        [
            [
                {"id": 1, "text": "I", "upos": "PRON", "head": 2, "deprel": "nsubj"},
                {"id": 2, "text": "saw", "upos": "VERB", "head": 0, "deprel": "root"},
                {"id": 3, "text": "it", "upos": "PRON", "head": 2, "deprel": "obj"},
            ],
            [
                {"id": 1, "text": "Go", "upos": "VERB", "head": 0, "deprel": "root"},
                {"id": 2, "text": "!", "upos": None, "head": 1, "deprel": None},
            ],
        ]
    )
    first, second = document_to_parses(doc)
    assert first.heads.tolist() == [2, 0, 2]
    assert first.upos == ("PRON", "VERB", "PRON")
    assert first.deprels == ("nsubj", "root", "obj")
    assert second.heads.tolist() == [0, 1]
    assert second.upos == ("VERB", "X") and second.deprels == ("root", "dep")


def test_stanza_conversion_uses_words_of_multiword_tokens() -> None:
    pytest.importorskip("stanza")
    doc = _stanza_document(
        [
            [
                {"id": 1, "text": "I", "upos": "PRON", "head": 3, "deprel": "nsubj"},
                {"id": (2, 3), "text": "don't"},
                {"id": 2, "text": "do", "upos": "AUX", "head": 4, "deprel": "aux"},
                {"id": 3, "text": "n't", "upos": "PART", "head": 4, "deprel": "advmod"},
                {"id": 4, "text": "know", "upos": "VERB", "head": 0, "deprel": "root"},
            ]
        ]
    )
    (parse,) = document_to_parses(doc)
    assert len(parse) == 4 and parse.upos == ("PRON", "AUX", "PART", "VERB")


def test_stanza_conversion_rejects_missing_heads() -> None:
    pytest.importorskip("stanza")
    doc = _stanza_document([[{"id": 1, "text": "Hi", "upos": "INTJ"}]])
    with pytest.raises(ValueError, match="no head"):
        document_to_parses(doc)


def test_stanza_without_models_raises_resource_missing(tmp_path: object) -> None:
    pytest.importorskip("stanza")
    backend = StanzaBackend(model_dir=str(tmp_path))
    with pytest.raises(ResourceMissingError) as err:
        backend.prepare()
    assert str(tmp_path) in str(err.value) and "stanza.download" in str(err.value)


# ------------------------------------------------------------------ spaCy (real model)
@pytest.fixture(scope="module")
def spacy_parser() -> Parser:
    require("spacy-model")
    parser = make_parser("spacy")
    parser.prepare()
    return parser


@needs_spacy
@pytest.mark.models
def test_spacy_parses_pretokenized_words_into_one_tree(spacy_parser: Parser) -> None:
    sentences = read_conllu(FIXTURES / "mwt_empty.conllu")
    parses = spacy_parser.parse(sentences)
    for s, p in zip(sentences, parses, strict=True):
        assert len(p) == len(s)  # one parse word per CoNLL-U word (multiword parts too)
        assert tree_problems(p.heads) == []
        assert p.heads.dtype == np.int32
    first = parses[0]
    assert first.upos[0] == "PRON" and first.upos[-1] == "PUNCT"
    assert first.deprels[int(np.flatnonzero(first.heads == 0)[0])] == "ROOT"


@needs_spacy
@pytest.mark.models
def test_spacy_keeps_several_clauses_as_one_sentence(spacy_parser: Parser) -> None:
    assert isinstance(spacy_parser, CachedParser)
    words = _words("I saw a movie . It was great . Then I left")
    (parse,) = spacy_parser.parse_words([words])
    assert int((parse.heads == 0).sum()) == 1
    assert tree_problems(parse.heads) == []


@needs_spacy
@pytest.mark.models
def test_spacy_batched_equals_one_by_one(spacy_parser: Parser) -> None:
    assert isinstance(spacy_parser, CachedParser)
    backend = spacy_parser.backend
    assert isinstance(backend, SpacyBackend)
    batch = [
        _words("The cat sat on the mat ."),
        _words("She gave him a book yesterday"),
        _words("Colorless green ideas sleep furiously"),
    ]
    together = backend.parse_words(batch)
    alone = [backend.parse_one(words) for words in batch]
    assert together == alone
    before = spacy_parser.stats.parsed
    spacy_parser.parse_words(batch)
    spacy_parser.parse_words(batch)
    assert spacy_parser.stats.parsed == before + len(batch)
    assert spacy_parser.describe()["parser"] == "spacy"


# ------------------------------------------------------------------ compiled UPOS rules
def test_compiled_upos_rules_follow_the_attribute_rulers_semantics() -> None:
    from spacy.lang.en import English
    from spacy.tokens import Doc

    from brittle.scorers.parsers.upos_rules import compile_upos_rules

    patterns: list[dict[str, object]] = [
        {"patterns": [[{"TAG": "VBZ"}]], "attrs": {"POS": "VERB"}},
        {"patterns": [[{"TAG": "VBZ", "LOWER": {"IN": ["is", "'s"]}}]], "attrs": {"POS": "AUX"}},
        {"patterns": [[{"TAG": "NN"}]], "attrs": {"MORPH": "Number=Sing"}},  # no POS
        {"patterns": [[{"TAG": "NN", "DEP": {"NOT_IN": ["compound"]}}]], "attrs": {"POS": "NOUN"}},
        {"patterns": [[{"DEP": "expl"}, {"LOWER": "is"}]], "attrs": {"POS": "VERB"}, "index": 1},
    ]
    rules = compile_upos_rules(patterns)
    assert rules is not None
    nlp = English()
    words = ["there", "is", "tax", "law", "runs"]
    doc = Doc(
        nlp.vocab,
        words=words,
        tags=["EX", "VBZ", "NN", "NN", "VBZ"],
        deps=["expl", "ROOT", "compound", "nsubj", "dep"],
        heads=[1, 1, 3, 1, 1],
    )
    # "is": AUX by the second rule, then VERB by the later two-token rule; "tax" is a
    # compound (NOT_IN fails); "runs" VERB; "there" matches nothing
    assert rules.upos(doc) == ["", "VERB", "", "NOUN", "VERB"]
    assert (
        compile_upos_rules([{"patterns": [[{"TAG": {"REGEX": "^V"}}]], "attrs": {"POS": "X"}}])
        is None
    )
    assert compile_upos_rules([{"patterns": [[{"ORTH": "a"}]], "attrs": {"POS": "DET"}}]) is None


@needs_spacy
def test_compiled_upos_rules_equal_the_component_on_ewt() -> None:
    """The backend skips the attribute_ruler and applies its compiled rules: the same
    UPOS, token for token, on real sentences."""
    from brittle.scorers.parsers.spacy_backend import SpacyBackend

    from support import EWT_TEST

    if not EWT_TEST.exists():
        pytest.skip(f"{EWT_TEST} is not available")
    sentences = read_conllu(EWT_TEST)[:400]
    backend = SpacyBackend()
    rules = backend.rules
    assert rules is not None and "attribute_ruler" in backend.skipped
    docs = backend.nlp.pipe([backend.make_doc(s.forms) for s in sentences], disable=["lemmatizer"])
    for sentence, doc in zip(sentences, docs, strict=True):
        assert rules.upos(doc) == [t.pos_ for t in doc], sentence.sent_id
