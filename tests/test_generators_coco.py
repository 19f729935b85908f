"""coCO with tiny randomly initialised models loaded the way users load theirs.

The models (a GPT-2 and a BERT with a few hundred tokens) are built from configs, saved
with ``save_pretrained`` and loaded back by directory through
:func:`brittle.search.generators.lm.load_lm`. A hand-written bigram model checks greedy
word completion exactly.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_generators_helpers import CATS, make_sentence

from brittle.search.generators import CoCO, Eligibility
from brittle.search.generators.base import GENERATORS
from brittle.search.generators.lexicon import PosLexicon
from brittle.search.generators.lm import LoadedLM, PieceTable, load_lm
from brittle.search.generators.lm_causal import (
    next_words,
    next_words_at,
    sentence_logprobs,
    shared_prefix_logprobs,
    substitution_logprobs,
)
from brittle.search.generators.lm_masked import masked_words

from support import ROOT, missing_sentence_models

CORPUS = [
    "the cat sat on the mat",
    "the dogs chased two bigger cats quickly",
    "a big dog runs in the park and the cats sleep",
    "the engineering students were reading slowly",
    "she walked slowly to the market with her dogs",
    "birds sing and dogs bark while cats chase mice",
] * 4

BERT_VOCAB = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", "the", "a", "two", "cat", "cats",
    "dog", "dogs", "mat", "house", "houses", "bird", "birds", "sat", "ran", "chased", "run",
    "walk", "big", "bigger", "small", "red", "quickly", "slowly", "engine", "##s", "##ed",
    "##ing", "##er", "##ly", "##y", "on", "of", "and", "mouse", "mice", "tree", "trees",
]  # fmt: skip


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import transformers
    from tokenizers import ByteLevelBPETokenizer
    from transformers import GPT2Config, GPT2LMHeadModel

    # transformers 5 names the tokenizers-backed class GPT2Tokenizer (4: GPT2TokenizerFast).
    fast_class: Any = getattr(transformers, "GPT2TokenizerFast", transformers.GPT2Tokenizer)

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        CORPUS,
        vocab_size=330,
        min_frequency=1,
        special_tokens=["<|endoftext|>"],
        show_progress=False,
    )
    tok = fast_class(
        tokenizer_object=bpe._tokenizer,
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        unk_token="<|endoftext|>",
    )
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=len(tok),
        n_positions=128,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
    )
    path = tmp_path_factory.mktemp("tiny-gpt2")
    GPT2LMHeadModel(config).save_pretrained(path)
    tok.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from transformers import BertConfig, BertForMaskedLM, BertTokenizer

    vocab = {w: i for i, w in enumerate(BERT_VOCAB)}
    try:
        tok = BertTokenizer(vocab=vocab)
    except TypeError:  # transformers 4: vocabulary from a file
        vocab_file = tmp_path_factory.mktemp("vocab") / "vocab.txt"
        vocab_file.write_text("\n".join(BERT_VOCAB) + "\n")
        tok = BertTokenizer(vocab_file=str(vocab_file))
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(tok),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    path = tmp_path_factory.mktemp("tiny-bert")
    BertForMaskedLM(config).save_pretrained(path)
    tok.save_pretrained(path)
    return path


def _check_tables(gen: CoCO, sentences: list[Any], top_k: int) -> list[Any]:
    tables = gen.candidates(sentences, top_k=top_k)
    assert [t.sentence_id for t in tables] == [s.sent_id for s in sentences]
    for s, t in zip(sentences, tables, strict=True):
        eligible = set(gen.eligibility.positions(s))
        for i, opts in t:
            assert i in eligible
            assert 1 <= len(opts) <= top_k
            forms = [f for f, _ in opts]
            assert len({f.lower() for f in forms}) == len(forms)
            for form in forms:
                assert form.isascii() and form.isalpha()
                assert form.lower() != s.forms[i].lower()
                if s.forms[i].islower():
                    assert form.islower()
    return tables


def test_registered_name() -> None:
    assert GENERATORS.get("coco") is CoCO


def test_causal_model_through_the_loading_path(gpt2_dir: Path) -> None:
    lm = load_lm(str(gpt2_dir))
    assert lm.kind == "causal" and load_lm(str(gpt2_dir)) is lm
    gen = CoCO(model=str(gpt2_dir), pos_filter="none", min_length=1, complete="all", top_k=4)
    sentences = [make_sentence("cats", CATS), make_sentence("two", CATS.replace("cats", "mice"))]
    tables = _check_tables(gen, sentences, 4)
    assert sum(t.size for t in tables) > 0
    assert gen.candidates(sentences, top_k=4) == tables  # deterministic
    draws = gen.perturb(sentences, b=3, seed=0, tau=2)
    assert all(len(p.positions) <= 2 for ps in draws for p in ps)


def test_masked_model_through_the_loading_path(bert_dir: Path) -> None:
    lm = load_lm(str(bert_dir))
    assert lm.kind == "masked"
    gen = CoCO(model=str(bert_dir), pos_filter="none", top_k=5)
    (table,) = _check_tables(gen, [make_sentence("cats", CATS)], 5)
    whole = {w for w in BERT_VOCAB if w.isalpha()}
    assert table.size > 0
    for _i, opts in table:
        assert {f.lower() for f, _ in opts} <= whole  # one mask: whole-word entries only


def test_masked_multi_piece_words_are_word_start_plus_continuations(bert_dir: Path) -> None:
    lm = load_lm(str(bert_dir))
    starts = {w for w in BERT_VOCAB if w.isalpha()}
    tails = {w[2:] for w in BERT_VOCAB if w.startswith("##")}
    (words,) = masked_words(lm, [("the", " sat on the mat .")], n_first=4, max_masks=2)
    assert len(words) > 4
    for word, score in words:
        assert score < 0
        assert word in starts or any(word[: -len(t)] in starts for t in tails if word.endswith(t))
    assert [s for _, s in words] == sorted((s for _, s in words), reverse=True)


def test_pos_filter_keeps_words_of_the_original_class(bert_dir: Path) -> None:
    gen = CoCO(model=str(bert_dir), pos_filter="upos", top_k=10)
    s = make_sentence("cats", CATS)
    (table,) = gen.candidates([s])
    assert table.size > 0
    lex = PosLexicon()
    for i, opts in table:
        for form, lemma in opts:
            assert s.upos[i] in lex.upos(form)
            assert lemma == lex.lemma(form, s.upos[i])
    strict = CoCO(model=str(bert_dir), pos_filter="xpos", top_k=10).candidates([s])[0]
    for form, _ in strict.options(1):  # cats (NNS)
        assert lex.has_tag(form, "NOUN", "NNS")


def test_function_words_never_fill_a_content_slot() -> None:
    """The lexicon lists could and am as verbs; coCO keeps them out of content slots."""
    s = make_sentence("cats", CATS)
    verb = next(i for i, u in enumerate(s.upos) if u == "VERB")
    strict = CoCO(pos_filter="none")
    loose = CoCO(pos_filter="none", function_words=True, frames=False)
    for word in ("could", "am", "the", "where", "or"):
        assert not strict._accepts(s, verb, word), word
        assert loose._accepts(s, verb, word), word
    assert strict._accepts(s, verb, "chase")


SEEKS = """
1 study study NOUN NN Number=Sing 2 nsubj
2 seeks seek VERB VBZ Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin 0 root
3 to to PART TO _ 4 mark
4 build build VERB VB VerbForm=Inf 2 xcomp
"""


def test_a_verb_is_replaced_only_by_a_verb_with_a_frame_for_its_use() -> None:
    """A verb with an infinitive frame for "seeks to build", not "provides to build"."""
    s = make_sentence("seeks", SEEKS)
    framed = CoCO()
    assert framed._accepts(s, 1, "attempts") and framed._accepts(s, 1, "tries")
    assert not framed._accepts(s, 1, "provides")  # no infinitive frame in WordNet
    assert CoCO(frames=False)._accepts(s, 1, "provides")
    assert not framed._accepts(s, 1, "xyzzies")  # no verb WordNet knows


class NoCache(torch.nn.Module):
    """Wraps a causal LM so it never returns a key/value cache."""

    def __init__(self, inner: Any) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, **kwargs: Any) -> Any:
        kwargs.pop("past_key_values", None)
        kwargs["use_cache"] = False
        out = self.inner(**kwargs)
        return SimpleNamespace(logits=out.logits, past_key_values=None)


def test_cached_completion_equals_full_recomputation(gpt2_dir: Path) -> None:
    lm = load_lm(str(gpt2_dir))
    plain = LoadedLM(lm.name, "causal", lm.tokenizer, NoCache(lm.model), lm.device, lm.pieces)
    contexts = ["the cat sat on the", "", "she walked slowly to", "birds"]
    cached = next_words(lm, contexts, n_first=12, complete="all", max_pieces=4, batch_size=3)
    full = next_words(plain, contexts, n_first=12, complete="all", max_pieces=4, batch_size=3)
    assert [[w for w, _ in ws] for ws in cached] == [[w for w, _ in ws] for ws in full]
    for a, b in zip(cached, full, strict=True):
        assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-4)


def test_cuts_in_one_text_equal_separate_contexts(gpt2_dir: Path) -> None:
    lm = load_lm(str(gpt2_dir))
    texts = ["the cat sat on the mat .", "she walked slowly to the market", "birds sing"]
    # Cuts before words, at the start, and one inside a word (its context runs alone).
    cuts = [[0, 3, 7, 14], [3, 10, 17, 21], [5, 8]]
    together = next_words_at(lm, texts, cuts, n_first=10, complete="all", batch_size=2)
    for text, text_cuts, got in zip(texts, cuts, together, strict=True):
        alone = next_words(lm, [text[:c] for c in text_cuts], n_first=10, complete="all")
        assert [[w for w, _ in ws] for ws in got] == [[w for w, _ in ws] for ws in alone]
        for a, b in zip(got, alone, strict=True):
            assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-4)


class Bigram(torch.nn.Module):
    """Next-token logits that depend on the last input token only (a lookup table)."""

    def __init__(self, table: Any) -> None:
        super().__init__()
        self.table = table

    def forward(self, input_ids: Any, **_: Any) -> Any:
        return SimpleNamespace(logits=self.table[input_ids], past_key_values=None)


def test_greedy_completion_follows_the_model(gpt2_dir: Path) -> None:
    tok = load_lm(str(gpt2_dir)).tokenizer
    pieces = PieceTable.build(tok)
    starts = [int(v) for v in pieces.word_starts.nonzero()[0]]
    conts = [int(v) for v in pieces.continuations.nonzero()[0]]
    a, d = starts[0], starts[1]
    b, c = conts[0], conts[1]
    ctx_last = tok.encode("the", add_special_tokens=False)[-1]
    table = torch.full((len(tok), len(tok)), -20.0)
    table[ctx_last, a], table[ctx_last, d] = 5.0, 4.0
    table[a, b] = 5.0  # a continues with b ...
    table[b, c] = 5.0  # ... and c ...
    table[c, d] = 5.0  # ... then a new word starts
    table[d, a] = 5.0  # d is a whole word
    lm = LoadedLM("bigram", "causal", tok, Bigram(table), "cpu", pieces)
    lp = torch.log_softmax(table, -1)
    word_a = pieces.text[a] + pieces.text[b] + pieces.text[c]
    score_a = float(lp[ctx_last, a] + lp[a, b] + lp[b, c])
    score_d = float(lp[ctx_last, d])

    (got,) = next_words(lm, ["the"], n_first=2, max_pieces=3, complete="all")
    assert dict(got) == pytest.approx({word_a: score_a, pieces.text[d]: score_d})
    (short,) = next_words(lm, ["the"], n_first=2, max_pieces=2, complete="all")
    assert [w for w, _ in short] == [pieces.text[d]]  # a's word is longer than 2 pieces
    (raw,) = next_words(lm, ["the"], n_first=2, complete="none")
    assert [w for w, _ in raw] == [pieces.text[a], pieces.text[d]]
    (known,) = next_words(
        lm, ["the"], n_first=2, complete="unknown", is_word=lambda w: w == pieces.text[a]
    )
    assert dict(known) == pytest.approx(
        {pieces.text[a]: float(lp[ctx_last, a]), pieces.text[d]: score_d}
    )


def test_pieces_that_cannot_make_the_top_are_not_completed(gpt2_dir: Path) -> None:
    tok = load_lm(str(gpt2_dir)).tokenizer
    pieces = PieceTable.build(tok)
    starts = [int(v) for v in pieces.word_starts.nonzero()[0]]
    conts = [int(v) for v in pieces.continuations.nonzero()[0]]
    a, d, b = starts[0], starts[1], conts[0]
    ctx_last = tok.encode("the", add_special_tokens=False)[-1]
    table = torch.full((len(tok), len(tok)), -20.0)
    table[ctx_last, d], table[ctx_last, a] = 6.0, 5.0  # the known word d ranks first
    table[a, b] = 5.0
    table[b, d] = 5.0
    table[d, a] = 5.0
    lm = LoadedLM("bigram", "causal", tok, Bigram(table), "cpu", pieces)
    word_d = pieces.text[d]
    calls: list[tuple[int, int, str]] = []

    def accept(text: int, cut: int, word: str) -> bool:
        calls.append((text, cut, word))
        return True

    def words(need: int) -> list[str]:
        (got,) = next_words_at(
            lm,
            ["the"],
            [[3]],
            n_first=2,
            complete="unknown",
            is_word=lambda w: w == word_d,
            accept=accept,
            need=need,
        )
        return [w for w, _ in got[0]]

    assert words(1) == [word_d]  # a's word could not beat d: never completed
    assert words(2) == [word_d, pieces.text[a] + pieces.text[b]]
    assert calls[0] == (0, 0, word_d)


def test_sentence_logprobs_and_rerank(gpt2_dir: Path) -> None:
    lm = load_lm(str(gpt2_dir))
    texts = ["the cat sat on the mat", "mat the on sat cat the", "birds"]
    got = sentence_logprobs(lm, texts, batch_size=2)
    for text, value in zip(texts, got.tolist(), strict=True):
        ids = [lm.tokenizer.bos_token_id, *lm.tokenizer.encode(text, add_special_tokens=False)]
        with torch.inference_mode():
            logits = lm.model(input_ids=torch.tensor([ids])).logits[0]
        expected = (
            torch.log_softmax(logits[:-1], -1).gather(1, torch.tensor(ids[1:])[:, None]).sum()
        )
        assert value == pytest.approx(float(expected), abs=1e-3)
    s = make_sentence("cats", CATS)
    # float32, as ``lm``: bfloat16's noise would reorder near ties
    base = CoCO(
        model=str(gpt2_dir),
        dtype="float32",
        pos_filter="none",
        min_length=1,
        complete="all",
        top_k=3,
    )
    ranked = replace(base, rerank=True)
    plain, reranked = base.candidates([s], top_k=6)[0], ranked.candidates([s], top_k=3)[0]
    from brittle.search.generators.surface import surface_of

    surf = surface_of(s)
    for i, opts in reranked:
        pool = {f for f, _ in plain.options(i)}
        assert {f for f, _ in opts} <= pool
        texts = [surf.replaced(i, f, window=1) for f, _ in opts]
        scores = sentence_logprobs(lm, texts).tolist()
        assert scores == sorted(scores, reverse=True)


def test_eligibility_is_respected(gpt2_dir: Path) -> None:
    only_nouns = Eligibility(include_upos=frozenset({"NOUN"}))
    gen = CoCO(model=str(gpt2_dir), eligibility=only_nouns, pos_filter="none", min_length=1)
    (t,) = gen.candidates([make_sentence("cats", CATS)])
    assert set(t.positions) <= {1, 5}


# ------------------------------------------------- the re-rank's shared-prefix scoring
SUBSTITUTED = [  # one sentence, one word replaced in turn: the re-rank's texts
    "the cat sat on the mat",
    "the cat ran on the mat",
    "the cat sleeping on the mat",
    "the cat sat on the mat",  # a text twice
    "the cat engineering on the mat",
    "the cat",  # a text that is all shared tokens
]


def test_shared_prefix_scores_equal_whole_sentences(gpt2_dir: Path) -> None:
    lm = load_lm(str(gpt2_dir))
    reference = sentence_logprobs(lm, SUBSTITUTED, batch_size=2)
    for batch_size in (1, 2, 16):
        got = shared_prefix_logprobs(lm, SUBSTITUTED, batch_size=batch_size)
        assert got == pytest.approx(reference, abs=1e-4)
    # Texts that share only the start token, one text alone, none at all.
    apart = ["birds sing", "the dogs chased two bigger cats quickly", "a"]
    assert shared_prefix_logprobs(lm, apart) == pytest.approx(
        sentence_logprobs(lm, apart), abs=1e-4
    )
    assert shared_prefix_logprobs(lm, apart[1:2]) == pytest.approx(
        sentence_logprobs(lm, apart[1:2]), abs=1e-4
    )
    assert shared_prefix_logprobs(lm, []).shape == (0,)


def test_shared_prefix_scores_without_a_cache_run_whole_texts(gpt2_dir: Path) -> None:
    lm = load_lm(str(gpt2_dir))
    plain = LoadedLM(lm.name, "causal", lm.tokenizer, NoCache(lm.model), lm.device, lm.pieces)
    assert shared_prefix_logprobs(plain, SUBSTITUTED) == pytest.approx(
        sentence_logprobs(lm, SUBSTITUTED), abs=1e-4
    )


@pytest.mark.parametrize("window", [None, 0, 1, 2])
def test_rerank_orders_the_pool_by_plain_scores(gpt2_dir: Path, window: int | None) -> None:
    """The re-ranked table is the pool sorted by plain log-probabilities of the sentences
    (``window`` None) or of the sentences cut ``window`` words after the substitute."""
    from brittle.search.generators.surface import surface_of

    k = 3
    model = str(gpt2_dir)
    # The same pool of 2k words either way: n_first = 6k, need = 2k.
    # float32 throughout: bfloat16's noise would reorder near ties between the paths
    pool_gen = CoCO(
        model=model,
        dtype="float32",
        pos_filter="none",
        min_length=1,
        rerank=False,
        oversample=3,
    )
    ranked_gen = replace(pool_gen, rerank=True, rerank_window=window, oversample=6)
    lm = load_lm(str(gpt2_dir), dtype="float32")
    sentences = [make_sentence("cats", CATS), make_sentence("mice", CATS.replace("cats", "mice"))]
    pools = pool_gen.candidates(sentences, top_k=2 * k)
    ranked = ranked_gen.candidates(sentences, top_k=k)
    compared = 0
    for s, pool, table in zip(sentences, pools, ranked, strict=True):
        surf = surface_of(s)
        assert table.positions == pool.positions
        for i, opts in pool:
            if len(opts) < 2:
                continue
            texts = [surf.replaced(i, f, window=window) for f, _ in opts]
            scores = sentence_logprobs(lm, texts).tolist()
            order = sorted(range(len(opts)), key=lambda j: -scores[j])
            assert table.options(i) == tuple(opts[j] for j in order[:k])
            compared += 1
    assert compared >= 4


def test_bad_sizes_are_refused_as_option_errors() -> None:
    from brittle.engine.core.errors import ConfigError

    with pytest.raises(ConfigError, match="rerank_window"):
        CoCO(rerank_window=-1)
    with pytest.raises(ConfigError, match="batch_size"):
        CoCO(batch_size=0)


def test_substitution_scores_equal_whole_texts(gpt2_dir: Path) -> None:
    lm = load_lm(str(gpt2_dir))
    original = SUBSTITUTED[0]
    cut = ["the cat ran on", "the dogs", "the cat sat on the mat", "the cat sat on the"]
    texts = [*SUBSTITUTED, *cut, "birds sing", "a"]
    reference = sentence_logprobs(lm, texts, batch_size=2)
    for batch_size in (1, 2, 64):
        got = substitution_logprobs(lm, original, texts, batch_size=batch_size)
        assert got == pytest.approx(reference, abs=1e-4)
    assert substitution_logprobs(lm, original, []).shape == (0,)
    plain = LoadedLM(lm.name, "causal", lm.tokenizer, NoCache(lm.model), lm.device, lm.pieces)
    assert substitution_logprobs(plain, original, texts) == pytest.approx(reference, abs=1e-4)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_substitution_scores_equal_whole_texts_on_random_substitutions(
    gpt2_dir: Path, data: st.DataObject
) -> None:
    """Random sentences of the tiny model's words, a word replaced and the text cut a
    random number of words after it: the slow, obvious reference runs each text whole."""
    words = " ".join(CORPUS[:6]).split()
    lm = load_lm(str(gpt2_dir))
    sentence = data.draw(st.lists(st.sampled_from(words), min_size=1, max_size=12))
    texts = []
    for _ in range(data.draw(st.integers(1, 6))):
        at = data.draw(st.integers(0, len(sentence) - 1))
        word = data.draw(st.sampled_from([*words, "xyzzy", "engineeringly"]))
        end = data.draw(st.integers(at + 1, len(sentence)))
        texts.append(" ".join([*sentence[:at], word, *sentence[at + 1 : end]]))
    batch_size = data.draw(st.integers(1, 8))
    got = substitution_logprobs(lm, " ".join(sentence), texts, batch_size=batch_size)
    assert got == pytest.approx(sentence_logprobs(lm, texts), abs=1e-4)


REPLACEMENTS = ("house", "unbelievably", "Zanzibar", "x", "thingamajigs")


@pytest.mark.skipif(missing_sentence_models() is not None, reason="bundled models absent")
def test_shared_prefix_scores_equal_whole_sentences_on_real_sentences() -> None:
    """SmolLM2 on real sentences, a word replaced in turn (the first, a middle one, the
    last before the final punctuation) by words of one to several tokens: the slow,
    obvious reference scores each whole text."""
    from brittle.engine.core.conllu import read_conllu
    from brittle.search.generators.surface import surface_of

    lm = load_lm(None)
    sentences = read_conllu(ROOT / "data" / "default.conllu")[:2]
    compared = 0
    for s in sentences:
        surf = surface_of(s)
        for i in sorted({0, len(s) // 2, len(s) - 2}):
            texts = [surf.replaced(i, w) for w in REPLACEMENTS]
            reference = sentence_logprobs(lm, texts)
            got = shared_prefix_logprobs(lm, texts, batch_size=4)
            assert got == pytest.approx(reference, abs=1e-3)
            beside = substitution_logprobs(lm, surf.text, texts, batch_size=4)
            assert beside == pytest.approx(reference, abs=1e-3)
            gaps = np.diff(np.sort(reference))
            if gaps.min() > 1e-3:  # no near ties: the very same order
                assert list(np.argsort(-got)) == list(np.argsort(-reference))
            compared += 1
    assert compared == 6


def test_surprisal_groups_and_fresh_scores_equal_plain_ones(gpt2_dir: Path) -> None:
    from brittle.search.sentence_models import SurprisalModel

    texts = [*SUBSTITUTED, "birds sing", "the dogs chased two bigger cats quickly"]
    labels = ["cat"] * len(SUBSTITUTED) + [None, "alone"]
    plain = SurprisalModel(str(gpt2_dir), device="cpu").logprobs(texts)
    grouped_model = SurprisalModel(str(gpt2_dir), device="cpu", batch_size=2)
    grouped = grouped_model.logprobs(texts, groups=labels)
    assert grouped == pytest.approx(plain, abs=1e-4)
    assert grouped[0] == grouped[3]  # the text twice
    with pytest.raises(ValueError, match="group labels"):
        grouped_model.logprobs(texts, groups=labels[1:])
    # Kept scores are read back unless fresh ones are asked for.
    grouped_model._cache.put(texts[1], 1.0)
    assert grouped_model.logprobs(texts[1:2])[0] == 1.0
    again = grouped_model.logprobs(texts[:3], groups=["cat"] * 3, fresh=True)
    assert again[1] == pytest.approx(plain[1], abs=1e-4)
    assert grouped_model.logprobs(texts[1:2])[0] == again[1]


def test_surprisal_anchored_scores_equal_plain_ones_and_keep_the_anchor(
    gpt2_dir: Path,
) -> None:
    from brittle.search.sentence_models import SurprisalModel

    original = "the dog chased the cat on the mat"
    texts = [
        "the dog chased the bird on the mat",  # changed from the fourth word on
        "the cow chased the cat on the mat",  # from the second
        "the dog chased the cat on the rug",  # the last
        "the cow chased the bird on the mat",  # two words
        "birds sing",  # no anchor: scored whole
    ]
    anchors = [original] * 4 + [None]
    plain = SurprisalModel(str(gpt2_dir), device="cpu").logprobs([*texts, original])
    model = SurprisalModel(str(gpt2_dir), device="cpu", batch_size=2)
    anchored = model.logprobs(texts, anchors=anchors)
    assert anchored == pytest.approx(plain[:-1], abs=1e-4)
    # the anchor was run for its texts: its score is kept for the caller's next call
    assert model._cache.get(original) == pytest.approx(plain[-1], abs=1e-4)
    with pytest.raises(ValueError, match="anchors"):
        model.logprobs(texts, anchors=anchors[1:])


def test_rerank_scores_are_kept_for_the_fluency_constraint(gpt2_dir: Path) -> None:
    from brittle.search.generators.surface import surface_of
    from brittle.search.sentence_models import surprisal_model

    s = make_sentence("cats", CATS)
    surf = surface_of(s)
    scorer = surprisal_model(str(gpt2_dir))
    for window in (None, 1):
        gen = CoCO(
            model=str(gpt2_dir), pos_filter="none", min_length=1, top_k=3, rerank_window=window
        )
        scorer.forget()
        (table,) = gen.candidates([s])
        texts = [surf.replaced(i, f) for i, opts in table if len(opts) > 1 for f, _ in opts]
        kept = [scorer._cache.get(t) is not None for t in texts]
        # whole sentences are kept; a windowed re-rank's cut texts are not sentences
        assert texts and all(kept) if window is None else not any(kept)


def test_the_logit_bound_moves_no_substitution_score(gpt2_dir: Path) -> None:
    """A bound so small that every batch is one row gives the bits of unbounded ones, up
    to float noise."""
    from brittle.search.generators import lm_causal

    lm = load_lm(str(gpt2_dir))
    original = "she walked slowly to the market with her dogs and the cats sleep"
    words = original.split()
    texts = [" ".join([*words[:i], "birds", *words[i + 1 :]]) for i in range(len(words))]
    free = substitution_logprobs(lm, original, texts, batch_size=64)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lm_causal, "TAIL_LOGIT_FLOATS", 1)
        bounded = substitution_logprobs(lm, original, texts, batch_size=64)
    assert bounded == pytest.approx(free, abs=1e-4)


def test_native_bfloat16_asks_the_cpu_and_never_a_gpu() -> None:
    from brittle.scorers.representations import native_bfloat16

    assert not native_bfloat16("cuda") and not native_bfloat16("cuda:1")
    cpu = torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported()
    assert native_bfloat16("cpu") is cpu


def test_the_language_model_runs_bfloat16_only_where_the_cpu_multiplies_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No dtype given: bfloat16 on a CPU with bfloat16 units, float32 elsewhere; a dtype
    given is kept whatever the CPU."""
    import brittle.search.generators.coco as coco

    monkeypatch.setattr(coco, "native_bfloat16", lambda device: device == "cpu")
    assert CoCO(device="cpu").precision() == "bfloat16"
    assert CoCO(device="cpu", dtype="float32").precision() == "float32"
    monkeypatch.setattr(coco, "native_bfloat16", lambda device: False)
    assert CoCO(device="cpu").precision() == "float32"
    assert CoCO(device="cpu", dtype="bfloat16").precision() == "bfloat16"


@pytest.mark.skipif(missing_sentence_models() is not None, reason="bundled models absent")
def test_bfloat16_proposes_what_float32_proposes_on_real_sentences() -> None:
    """SmolLM2 in bfloat16 against float32 on real sentences: the same positions, nearly
    the same options (the order moves among near ties), and the re-rank still turns
    away what the right context rules out."""
    from brittle.engine.core.conllu import read_conllu

    sentences = read_conllu(ROOT / "data" / "default.conllu")[:3]
    single = CoCO(dtype="float32").candidates(sentences, top_k=10)
    half = CoCO(dtype="bfloat16").candidates(sentences, top_k=10)
    shared = total = 0
    for a, b in zip(single, half, strict=True):
        assert a.positions == b.positions
        for i, opts in a:
            shared += len({f for f, _ in opts} & {f for f, _ in b.options(i)})
            total += len(opts)
    assert total >= 30 and shared / total >= 0.85


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_anchored_scores_equal_whole_texts_across_anchors_and_calls(
    gpt2_dir: Path, data: st.DataObject
) -> None:
    """Several random sentences, each with texts that replace words and may stop early:
    scored in one call (anchors of different lengths, cuts at different places, sharing
    forward passes) and again on the anchors' kept states, they equal the slow, obvious
    reference that runs each text whole."""
    from brittle.search.generators.lm_causal import AnchorStates, anchored_logprobs

    words = " ".join(CORPUS[:6]).split()
    lm = load_lm(str(gpt2_dir))
    anchors = [
        data.draw(st.lists(st.sampled_from(words), min_size=1, max_size=12))
        for _ in range(data.draw(st.integers(1, 4)))
    ]
    texts: list[str] = []
    owners: list[int] = []
    for _ in range(data.draw(st.integers(1, 10))):
        a = data.draw(st.integers(0, len(anchors) - 1))
        sentence = list(anchors[a])
        for _ in range(data.draw(st.integers(0, 2))):  # none: the anchor itself
            at = data.draw(st.integers(0, len(sentence) - 1))
            sentence[at] = data.draw(st.sampled_from([*words, "xyzzy", "engineeringly"]))
        end = data.draw(st.integers(1, len(sentence)))
        texts.append(" ".join(sentence[:end]))
        owners.append(a)
    joined = [" ".join(a) for a in anchors]
    reference = sentence_logprobs(lm, texts)
    batch_size = data.draw(st.integers(1, 8))
    kept = AnchorStates()
    first = anchored_logprobs(lm, joined, texts, owners, batch_size=batch_size, states=kept)
    assert first == pytest.approx(reference, abs=1e-4)
    # the texts ran on their anchors' caches (not whole): each anchor's state is kept
    assert all(kept.get(joined[a]) is not None for a in owners)
    again = anchored_logprobs(lm, joined, texts, owners, batch_size=batch_size, states=kept)
    assert again == pytest.approx(reference, abs=1e-4)


def test_anchor_states_keep_the_most_recent_within_their_tokens() -> None:
    from brittle.search.generators.lm_causal import AnchorState, AnchorStates

    def state(n: int) -> AnchorState:
        return AnchorState(ids=(0,) * n, keys=(), values=(), before=(0.0,) * (n + 1))

    kept = AnchorStates(max_tokens=5)
    kept.put("a", state(1))
    kept.put("b", state(2))
    assert kept.get("a") == state(1)  # now the most recent
    kept.put("c", state(3))  # 6 tokens: b, the least recent, goes
    assert kept.get("b") is None
    assert kept.get("a") == state(1) and kept.get("c") == state(3)
    kept.put("c", state(4))  # replaced: 5 tokens, a stays
    assert kept.get("a") == state(1)
    kept.put("d", state(9))  # alone over the bound: the newest stays, the rest go
    assert kept.get("d") == state(9) and kept.get("a") is None and kept.get("c") is None
    kept.clear()
    assert kept.get("d") is None
    kept.put("e", state(5))
    assert kept.get("e") == state(5)  # the count starts again from nothing


@settings(max_examples=80, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 40), min_size=0, max_size=30),
    batch_size=st.integers(1, 9),
    vocab=st.integers(1, 500),
    budget=st.integers(1, 5000),
)
def test_cheapest_batches_keep_the_bounds_and_cost_no_more_than_full_ones(
    lengths: list[int], batch_size: int, vocab: int, budget: int
) -> None:
    """Cut in order, at most ``batch_size`` rows and, but for a batch of one, the
    bound's floats of logits (each batch as wide as its first tail), and never costlier
    than full batches (each batch: a pass plus its rows times its longest tail)."""
    from brittle.search.generators import lm_causal

    tails = [[7] * n for n in lengths]
    todo = sorted(range(len(tails)), key=lambda j: (-len(tails[j]), j))

    def cost(batches: list[list[int]]) -> int:
        return sum(lm_causal.PASS_TOKENS + len(b) * max(1, len(tails[b[0]])) for b in batches)

    full: list[list[int]] = []  # as many rows as the bounds allow, in turn
    start = 0
    while start < len(todo):
        width = max(1, len(tails[todo[start]]))
        rows = max(1, min(batch_size, budget // (width * vocab)))
        full.append(todo[start : start + rows])
        start += rows
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lm_causal, "TAIL_LOGIT_FLOATS", budget)
        cheap = lm_causal._cheapest_batches(todo, [len(tails[j]) for j in todo], batch_size, vocab)
    assert [j for b in cheap for j in b] == todo
    for b in cheap:
        assert 1 <= len(b) <= batch_size
        assert len(b) == 1 or len(b) * max(1, len(tails[b[0]])) * vocab <= budget
    assert cost(cheap) <= cost(full)


def test_surprisal_keeps_anchor_states_until_forgotten_and_fresh_runs_them_anew(
    gpt2_dir: Path,
) -> None:
    from dataclasses import replace as changed

    from brittle.search.sentence_models import SurprisalModel

    original = "the dog chased the cat on the mat"
    texts = ["the dog chased the bird on the mat", "the cow chased the cat on the mat"]
    model = SurprisalModel(str(gpt2_dir), device="cpu")
    plain = model.logprobs(texts, anchors=[original] * 2)
    assert model._anchors is not None
    state = model._anchors.get(original)
    assert state is not None
    # a kept state is what the next call reads: shifted, it shifts the texts' scores
    model._anchors.put(original, changed(state, before=tuple(b + 5.0 for b in state.before)))
    model._cache.clear()
    assert model.logprobs(texts, anchors=[original] * 2) == pytest.approx(plain + 5.0, abs=1e-4)
    assert model.logprobs(texts, anchors=[original] * 2, fresh=True) == pytest.approx(
        plain, abs=1e-4
    )
    model.forget()
    assert model._anchors.get(original) is None
