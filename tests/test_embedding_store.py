"""Embeddings kept on disk: the same vector whoever stored it, read back by later runs,
and a store that cannot be used is skipped, not fatal."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from brittle.search.embedding_store import EmbeddingStore, store_path
from brittle.search.sentence_models import SentenceEncoder

from support import missing_sentence_models

MISSING = missing_sentence_models()
needs_models = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))

GLOSSES = [
    "a piece of furniture for one person to sit on",
    "the part of the body you sit on",
    "a legislative position",
    "an ordinary period of ten years",
]


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BRITTLE_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_round_trip_and_missing_texts(tmp_path: Path) -> None:
    store = EmbeddingStore(tmp_path / "s" / "e.sqlite", dim=3)
    assert store.get_many(["a"]) == {}
    store.put_many({"a": np.array([1, 2, 3], np.float32), "b": np.array([4, 5, 6], np.float32)})
    store.put_many({"a": np.array([9, 9, 9], np.float32)})  # the first vector stays
    again = EmbeddingStore(tmp_path / "s" / "e.sqlite", dim=3)
    got = again.get_many(["a", "b", "c", "a"])
    assert set(got) == {"a", "b"}
    assert got["a"].tolist() == [1, 2, 3] and got["b"].dtype == np.float32
    assert len(again) == 2
    assert EmbeddingStore(tmp_path / "s" / "e.sqlite", dim=4).get_many(["a"]) == {}


def test_many_texts_cross_the_query_limit(tmp_path: Path) -> None:
    store = EmbeddingStore(tmp_path / "e.sqlite", dim=2)
    items = {f"t{i}": np.array([i, -i], np.float32) for i in range(1_234)}
    store.put_many(items)
    got = store.get_many(list(items))
    assert len(got) == len(items) and got["t1233"].tolist() == [1233, -1233]


def test_an_unusable_store_is_skipped_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    store = EmbeddingStore(blocker / "e.sqlite", dim=2)
    with caplog.at_level(logging.WARNING):
        store.put_many({"a": np.zeros(2, np.float32)})
        assert store.get_many(["a"]) == {}
    assert "unusable" in caplog.text
    assert len(store) == 0


def test_the_setting_names_the_store(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    (model / "weights").write_bytes(b"1")
    base = store_path(model, dtype="checkpoint", device="cpu", threads=2)
    assert base == store_path(model, dtype="checkpoint", device="cpu", threads=2)
    assert base.parent == tmp_path / "home" / "cache" / "embeddings"
    assert base != store_path(model, dtype="float16", device="cpu", threads=2)
    assert base != store_path(model, dtype="checkpoint", device="cpu", threads=1)
    assert store_path(model, dtype="x", device="cuda:0", threads=1) == store_path(
        model, dtype="x", device="cuda:1", threads=1
    )
    (model / "weights").write_bytes(b"22")
    assert base != store_path(model, dtype="checkpoint", device="cpu", threads=2)


@needs_models
def test_embed_alone_is_independent_of_companions_and_read_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = SentenceEncoder(device="cpu")
    together = first.embed_alone(GLOSSES)
    assert together.shape == (4, 384) and together.dtype == np.float32
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-6)
    # the batched embedding of the same texts agrees to float precision
    assert np.allclose(together, first.embed(GLOSSES), atol=1e-5)
    alone = SentenceEncoder(device="cpu").embed_alone([GLOSSES[2]])
    assert np.array_equal(alone[0], together[2])

    # A new encoder (a later run) reads the vectors back without running the model.
    later = SentenceEncoder(device="cpu")

    def no_forward(*args: object, **kwargs: object) -> object:
        raise AssertionError("the model ran for a stored text")

    later._store()  # opened (model loaded) before the model is taken away
    monkeypatch.setattr(later, "_last_layer", no_forward)
    assert np.array_equal(later.embed_alone(GLOSSES[::-1]), together[::-1])


@needs_models
def test_forget_texts_empties_the_caches_but_not_the_store(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from brittle.search import sentence_models

    encoder = SentenceEncoder(device="cpu")
    monkeypatch.setitem(sentence_models._ENCODERS, ("test", None, None), encoder)
    encoder.embed(["One sentence."])
    kept = encoder.embed_alone(GLOSSES[:2])
    sentence_models.forget_texts()
    assert len(encoder._cache) == 0 and len(encoder._alone_cache) == 0

    def no_forward(*args: object, **kwargs: object) -> object:
        raise AssertionError("the model ran for a stored text")

    monkeypatch.setattr(encoder, "_last_layer", no_forward)
    assert np.array_equal(encoder.embed_alone(GLOSSES[:2]), kept)
