"""``replacement_tokens`` against the slow obvious way: the variant sentence tokenized
whole, on many random sentences, for every tokenizer family brittle meets (WordPiece,
byte-level BPE, SentencePiece-style, and the bundled models' own where installed), with
both alignment strategies."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brittle.scorers.alignment import PieceCache, align_batch, replacement_tokens

from support import missing_sentence_models

#: Words of every shape a treebank holds: lower and capitalised, punctuation, clitics,
#: numbers, hyphens, accents, and words no small vocabulary knows.
VOCAB = [
    "the", "The", "cat", "sat", "on", "mat", ".", ",", "n't", "'s", "do", "Hello",
    "world", "antidisestablishmentarianism", "e-mail", "1,200", "3.5", "café", "naïve",
    "--", "(", ")", "?", "U.S.", "don't", "zzyzx", "Ünïcödé", "$", "%", "a", "I",
]  # fmt: skip

words_st = st.lists(st.sampled_from(VOCAB), min_size=1, max_size=9)


@pytest.fixture(scope="module")
def tokenizers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from repr_models import tiny_bert, tiny_gpt2, tiny_sentencepiece
    from transformers import AutoTokenizer

    root = tmp_path_factory.mktemp("tokenizers")
    out = {
        "wordpiece": AutoTokenizer.from_pretrained(str(tiny_bert(root / "bert"))),
        "byte-bpe": AutoTokenizer.from_pretrained(str(tiny_gpt2(root / "gpt2"))),
        "sentencepiece": AutoTokenizer.from_pretrained(str(tiny_sentencepiece(root / "sp"))),
    }
    if missing_sentence_models() is None:
        from brittle.engine.core import resources

        out["minilm"] = AutoTokenizer.from_pretrained(str(resources.default_encoder_path()))
        out["smollm2"] = AutoTokenizer.from_pretrained(str(resources.causal_lm_path()))
    return out


def whole(tokenizer: Any, words: list[str], position: int, form: str, strategy: str) -> Any:
    variant = [*words[:position], form, *words[position + 1 :]]
    a = align_batch(tokenizer, [variant], strategy=strategy)[0]  # type: ignore[arg-type]
    return a.content_ids[a.word_of == position]


@pytest.mark.parametrize("strategy", ["auto", "offsets"])
@settings(max_examples=40, deadline=None)
@given(
    words=words_st,
    at=st.floats(0, 1, exclude_max=True),
    forms=st.lists(st.sampled_from(VOCAB), min_size=1, max_size=4),
)
def test_a_form_gets_the_tokens_it_gets_in_the_whole_sentence(
    tokenizers: dict[str, Any], strategy: str, words: list[str], at: float, forms: list[str]
) -> None:
    position = int(at * len(words))
    for name, tok in tokenizers.items():
        got = replacement_tokens(tok, [(words, position, forms)], strategy=strategy)  # type: ignore[arg-type]
        assert len(got) == 1 and len(got[0]) == len(forms)
        for form, ids in zip(forms, got[0], strict=True):
            expected = whole(tok, words, position, form, strategy)
            assert ids.tolist() == expected.tolist(), (name, words, position, form)


def test_queries_come_back_in_order(tokenizers: dict[str, Any]) -> None:
    tok = tokenizers["wordpiece"]
    queries = [(["the", "cat", "sat"], 0, ["a", "The"]), (["on", "mat"], 1, ["cat"])]
    got = replacement_tokens(tok, queries)
    assert [len(g) for g in got] == [2, 1]
    for (words, position, forms), ids in zip(queries, got, strict=True):
        for form, one in zip(forms, ids, strict=True):
            np.testing.assert_array_equal(one, whole(tok, words, position, form, "auto"))
    assert replacement_tokens(tok, []) == []


@settings(max_examples=40, deadline=None)
@given(batches=st.lists(st.lists(words_st, min_size=1, max_size=4), min_size=1, max_size=3))
def test_the_piece_cache_aligns_as_the_whole_sentences_do(
    tokenizers: dict[str, Any], batches: list[list[list[str]]]
) -> None:
    """Several calls sharing one small cache (it starts again when full) give every
    sentence the alignment of the sentence tokenized whole."""
    for name, tok in tokenizers.items():
        cache = PieceCache(max_words=12)
        for sentences in batches:
            got = align_batch(tok, sentences, cache=cache)
            expected = align_batch(tok, sentences)
            for a, b in zip(got, expected, strict=True):
                assert a.content_ids.tolist() == b.content_ids.tolist(), (name, sentences)
                assert a.word_of.tolist() == b.word_of.tolist(), (name, sentences)
                assert (a.orphans, a.prefix, a.suffix) == (b.orphans, b.prefix, b.suffix)


def test_the_piece_cache_starts_again_when_full(tokenizers: dict[str, Any]) -> None:
    tok = tokenizers["wordpiece"]
    cache = PieceCache(max_words=3)
    align_batch(tok, [["the", "cat"]], cache=cache)
    assert len(cache) == 2
    align_batch(tok, [["the", "cat", "sat", "on"]], cache=cache)
    assert len(cache) == 2  # full: emptied, then the two new words kept
    assert cache.lookup({("sat", False), ("on", False), ("the", True)}).keys() == {
        ("sat", False),
        ("on", False),
    }
