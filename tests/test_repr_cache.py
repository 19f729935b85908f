"""The in-memory LRU cache and the on-disk memmap cache of representations."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from brittle.scorers.repcache import CachedBackend, DiskCache, LRUCache
from brittle.scorers.representations import (
    BackendRequest,
    FlatReps,
    RepresentationBackend,
    offsets_of,
)


class Counting(RepresentationBackend):
    """A deterministic fake backend that counts the sentences it encodes."""

    name = "random"

    def __init__(self) -> None:
        super().__init__(model="fake", dim=4, n_layers=3, pooling="mean")
        self.calls: list[int] = []

    @classmethod
    def open(cls, request: BackendRequest) -> Counting:
        return cls()

    def encode_flat(self, sentences: Sequence[Sequence[str]], *, layers: Sequence[int]) -> FlatReps:
        self.calls.append(len(sentences))
        idx = tuple(self.layer_index(layer) for layer in layers)
        words = [w for s in sentences for w in s]
        base = np.array([[len(w), ord(w[0]), 1.0, 0.0] for w in words], dtype=np.float32)
        vecs = np.stack([base + k for k in idx]).reshape(len(idx), len(words), 4)
        return FlatReps(vecs.astype(np.float32), offsets_of(sentences), idx)


SENTS = [["the", "cat"], ["a", "dog", "barks"], ["the", "cat"], ["hi"]]


def test_lru_evicts_least_recent() -> None:
    inner = Counting()
    cache = LRUCache(max_items=2)
    key = inner.key(-1)
    cache.put(key, ("a",), np.zeros((1, 4), dtype=np.float32))
    cache.put(key, ("b",), np.ones((1, 4), dtype=np.float32))
    assert cache.get(key, ("a",)) is not None  # a is now the most recent
    cache.put(key, ("c",), np.ones((1, 4), dtype=np.float32))
    assert cache.get(key, ("b",)) is None
    assert cache.get(key, ("a",)) is not None and len(cache) == 2
    hit = cache.get(key, ("a",))
    assert hit is not None and not hit.flags.writeable
    assert cache.get(inner.key(-2), ("a",)) is None  # another layer is another key


def test_cached_backend_encodes_only_misses() -> None:
    inner = Counting()
    cached = CachedBackend(inner, max_items=100)
    first = cached.encode_flat(SENTS, layers=(-1, -2))
    assert inner.calls == [3]  # the repeated sentence is encoded once
    direct = inner.encode_flat(SENTS, layers=(-1, -2))
    np.testing.assert_array_equal(first.vectors, direct.vectors)
    inner.calls.clear()
    again = cached.encode([*SENTS, ["new", "one"]], layer=-1)
    assert inner.calls == [1]
    assert [a.shape[0] for a in again] == [2, 3, 2, 1, 2]
    assert cached.cache.hits > 0
    assert cached.key(-1) == inner.key(-1)
    assert cached.describe() == inner.describe() and cached.oov_report() is None


def test_cached_backend_opens_by_request() -> None:
    from brittle.scorers.static_backend import RandomVectors

    cached = CachedBackend.open(BackendRequest(model="random:8", seed=2))
    assert isinstance(cached.inner, RandomVectors) and cached.dim == 8
    assert cached.name == "random" and cached.describe() == cached.inner.describe()


def test_disk_cache_round_trip(tmp_path: Path) -> None:
    inner = Counting()
    disk = DiskCache(tmp_path / "cache")
    seen: list[int] = []
    a, b = disk.get_or_extract_layers(inner, SENTS, layers=(-1, 0), chunk=2, progress=seen.append)
    assert inner.calls == [2, 2] and sum(seen) == len(SENTS)
    assert isinstance(a.vectors, np.memmap) and a.vectors.shape == (8, 4)
    direct = inner.encode_flat(SENTS, layers=(-1, 0))
    np.testing.assert_array_equal(a.vectors, direct.vectors[0])
    np.testing.assert_array_equal(b.vectors, direct.vectors[1])
    np.testing.assert_array_equal(a.sentence(1), direct.split(inner.layer_index(-1))[1])
    assert len(a) == len(SENTS) and a.dim == 4
    inner.calls.clear()
    again = disk.get_or_extract(inner, SENTS, layer=-1)
    assert inner.calls == []
    np.testing.assert_array_equal(again.vectors, a.vectors)
    np.testing.assert_array_equal(again.offsets, a.offsets)
    # other sentences or another layer are other entries
    disk.get_or_extract(inner, SENTS[:2], layer=-1)
    disk.get_or_extract(inner, SENTS, layer=-2)
    assert len(inner.calls) == 2
    assert not list((tmp_path / "cache").glob("*.part"))


def test_disk_cache_rebuilds_damaged_entry(tmp_path: Path) -> None:
    inner = Counting()
    disk = DiskCache(tmp_path)
    disk.get_or_extract(inner, SENTS, layer=-1)
    (data,) = tmp_path.glob("*.f32")
    data.write_bytes(b"\0" * 8)  # truncated
    assert disk.load(inner.key(-1), SENTS) is None
    inner.calls.clear()
    fixed = disk.get_or_extract(inner, SENTS, layer=-1)
    assert inner.calls and fixed.vectors.shape == (8, 4)


def test_disk_cache_failure_leaves_no_part_files(tmp_path: Path) -> None:
    class Failing(Counting):
        def encode_flat(
            self, sentences: Sequence[Sequence[str]], *, layers: Sequence[int]
        ) -> FlatReps:
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        DiskCache(tmp_path).get_or_extract(Failing(), SENTS, layer=-1)
    assert list(tmp_path.iterdir()) == []
