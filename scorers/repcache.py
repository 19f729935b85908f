"""Caches of word representations: a bounded in-memory LRU and an on-disk memmap store.

:class:`CachedBackend` wraps any backend with an LRU keyed by (representation key,
words): the attack asks for the same sentences over and over, and only the misses of a
batch go to the model, in one batch. The arrays it hands out are read-only.

:class:`DiskCache` stores the vectors of a whole treebank for one representation as one
float32 memory map (``total_words x dim``) plus word offsets, so a training run
extracts each layer once and later runs map it back in a blink (as
:class:`~brittle.scorers.representations.FlatVectors`). Entries are named by
a digest of the representation key and every word of every sentence, and written
atomically (temporary file, then rename).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import cachetools
import numpy as np

from brittle.engine.core.errors import ConfigError
from brittle.scorers.representations import (
    BackendOptions,
    BackendRequest,
    EffectsRequest,
    FlatReps,
    FlatVectors,
    OOVReport,
    RepresentationBackend,
    RepresentationKey,
    Words,
    offsets_of,
    open_backend,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["CachedBackend", "DiskCache", "LRUCache"]


class LRUCache:
    """A bounded mapping from (key, words) to read-only arrays (n_words, dim).

    Args:
        max_items: most sentences kept; the least recently used go first.
    """

    def __init__(self, max_items: int = 50_000) -> None:
        if max_items < 1:
            raise ConfigError("the cache must hold at least one item")
        self.max_items = max_items
        self._items: cachetools.LRUCache[
            tuple[RepresentationKey, tuple[str, ...]], NDArray[np.float32]
        ] = cachetools.LRUCache(max_items)
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: RepresentationKey, words: tuple[str, ...]) -> NDArray[np.float32] | None:
        """The cached array or ``None``; a hit becomes the most recently used."""
        item = self._items.get((key, words))
        if item is None:
            self.misses += 1
            return None
        self.hits += 1
        return item

    def put(
        self, key: RepresentationKey, words: tuple[str, ...], value: NDArray[np.float32]
    ) -> None:
        """Keep a copy-free read-only view of ``value`` (n_words, dim)."""
        arr = value.view()
        arr.setflags(write=False)
        self._items[(key, words)] = arr

    def clear(self) -> None:
        """Forget everything (the counters too)."""
        self._items.clear()
        self.hits = self.misses = 0


class CachedBackend(RepresentationBackend):
    """A backend whose results go through an :class:`LRUCache`.

    Args:
        inner: the backend that computes misses.
        cache: the cache (a new one of ``max_items`` when ``None``).
        max_items: size of the new cache.
    """

    def __init__(
        self,
        inner: RepresentationBackend,
        *,
        cache: LRUCache | None = None,
        max_items: int = 50_000,
    ) -> None:
        self.inner = inner
        self.cache = cache if cache is not None else LRUCache(max_items)
        self.name = inner.name
        super().__init__(
            model=inner.model, dim=inner.dim, n_layers=inner.n_layers, pooling=inner.pooling
        )

    @classmethod
    def open(cls, request: BackendRequest) -> CachedBackend:
        """The backend ``request`` names (guessed from its model), behind a new cache."""
        return cls(open_backend(request))

    def key(self, layer: int) -> RepresentationKey:
        """The key of the wrapped backend."""
        return self.inner.key(layer)

    def describe(self) -> BackendOptions:
        """Options of the wrapped backend."""
        return self.inner.describe()

    def oov_report(self) -> OOVReport | None:
        """The wrapped backend's report (words looked up by cache misses only)."""
        return self.inner.oov_report()

    def substitution_effects_many(
        self, requests: Sequence[EffectsRequest], *, layers: Sequence[int]
    ) -> list[list[NDArray[np.float64]]] | None:
        """The wrapped backend's estimates (gradients are never cached)."""
        return self.inner.substitution_effects_many(requests, layers=layers)

    def encode_flat(self, sentences: Sequence[Words], *, layers: Sequence[int]) -> FlatReps:
        """Cached vectors; the misses of the batch are encoded together."""
        keys = [self.inner.key(layer) for layer in layers]
        idx = tuple(k.layer for k in keys)
        words = [tuple(s) for s in sentences]
        found: list[list[NDArray[np.float32] | None]] = [
            [self.cache.get(k, w) for w in words] for k in keys
        ]
        missing = sorted({i for row in found for i, v in enumerate(row) if v is None})
        if missing:
            # each distinct word sequence is encoded once, however often it repeats
            unique = list(dict.fromkeys(words[i] for i in missing))
            fresh = self.inner.encode_flat(unique, layers=layers)
            for pos, k in enumerate(keys):
                parts = dict(
                    zip(unique, np.split(fresh.vectors[pos], fresh.offsets[1:-1]), strict=True)
                )
                for w, part in parts.items():
                    self.cache.put(k, w, part)
                for i in missing:
                    found[pos][i] = parts[words[i]]
        offsets = offsets_of(sentences)
        out = np.empty((len(keys), int(offsets[-1]), self.dim), dtype=np.float32)
        for pos in range(len(keys)):
            row = [v for v in found[pos] if v is not None]  # every miss was filled above
            if row:
                np.concatenate(row, axis=0, out=out[pos])
        return FlatReps(out, offsets, idx)

    def close(self) -> None:
        """Close the wrapped backend and drop the cache."""
        self.cache.clear()
        self.inner.close()


def _digest(key: RepresentationKey, sentences: Sequence[Words]) -> str:
    h = hashlib.sha256()
    h.update(json.dumps(key.to_dict(), sort_keys=True).encode())
    for words in sentences:
        h.update("\x1f".join(words).encode())
        h.update(b"\x1e")
    return h.hexdigest()[:24]


class DiskCache:
    """Treebank vectors stored as memory maps under ``root``.

    Args:
        root: the cache directory (created when needed).
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def _paths(self, digest: str) -> tuple[Path, Path, Path]:
        return (
            self.root / f"{digest}.f32",
            self.root / f"{digest}.offsets.npy",
            self.root / f"{digest}.json",
        )

    def load(self, key: RepresentationKey, sentences: Sequence[Words]) -> FlatVectors | None:
        """The stored vectors of ``sentences`` under ``key`` (a read-only memory map
        (total_words, dim)), or ``None`` when absent or damaged."""
        data, offs, meta = self._paths(_digest(key, sentences))
        if not (data.is_file() and offs.is_file() and meta.is_file()):
            return None
        info = json.loads(meta.read_text())
        offsets = np.load(offs)
        total, dim = int(info["total_words"]), int(info["dim"])
        if offsets.shape[0] != len(sentences) + 1 or int(offsets[-1]) != total:
            return None
        if data.stat().st_size != total * dim * 4:
            return None
        if total == 0:
            return FlatVectors(np.zeros((0, dim), dtype=np.float32), offsets)
        vectors = np.memmap(data, dtype=np.float32, mode="r", shape=(total, dim))
        return FlatVectors(vectors, offsets)

    def get_or_extract(
        self,
        backend: RepresentationBackend,
        sentences: Sequence[Words],
        *,
        layer: int,
        chunk: int = 256,
        progress: Callable[[int], None] | None = None,
    ) -> FlatVectors:
        """Stored vectors of ``sentences`` for ``layer``, extracting them on a miss.

        Args:
            backend: computes the vectors on a miss.
            sentences: word lists.
            layer: layer number (negative from the output).
            chunk: sentences encoded per call while extracting.
            progress: called with the number of sentences done after each chunk.
        """
        return self.get_or_extract_layers(
            backend, sentences, layers=(layer,), chunk=chunk, progress=progress
        )[0]

    def get_or_extract_layers(
        self,
        backend: RepresentationBackend,
        sentences: Sequence[Words],
        *,
        layers: Sequence[int],
        chunk: int = 256,
        progress: Callable[[int], None] | None = None,
    ) -> list[FlatVectors]:
        """Like :meth:`get_or_extract` for several layers, extracted in one pass (one
        :class:`FlatVectors` per layer, in the order of ``layers``)."""
        keys = [backend.key(layer) for layer in layers]
        stored = [self.load(k, sentences) for k in keys]
        todo = [i for i, s in enumerate(stored) if s is None]
        if not todo:
            if progress is not None:
                progress(len(sentences))
            return [s for s in stored if s is not None]
        self.root.mkdir(parents=True, exist_ok=True)
        offsets = offsets_of(sentences)
        total = int(offsets[-1])
        parts: list[Path] = []
        maps: list[NDArray[np.float32]] = []
        for _ in todo:
            fd, part_name = tempfile.mkstemp(dir=self.root, suffix=".part")
            os.close(fd)
            parts.append(Path(part_name))
            if total:
                maps.append(
                    np.memmap(part_name, dtype=np.float32, mode="w+", shape=(total, backend.dim))
                )
        try:
            asked = [layers[i] for i in todo]
            for start in range(0, len(sentences), chunk):
                block = sentences[start : start + chunk]
                flat = backend.encode_flat(block, layers=asked)
                lo, hi = int(offsets[start]), int(offsets[start + len(block)])
                for j, mm in enumerate(maps):
                    mm[lo:hi] = flat.vectors[j]
                if progress is not None:
                    progress(len(block))
            for mm in maps:
                if isinstance(mm, np.memmap):
                    mm.flush()
            maps.clear()
            for part, i in zip(parts, todo, strict=True):
                data, offs, meta = self._paths(_digest(keys[i], sentences))
                os.replace(part, data)
                _atomic_save(offs, offsets)
                info = {
                    "key": keys[i].to_dict(),
                    "sentences": len(sentences),
                    "total_words": total,
                    "dim": backend.dim,
                }
                _atomic_text(meta, json.dumps(info, indent=2))
        finally:
            maps.clear()
            for part in parts:
                if part.exists():
                    part.unlink()
        out = [self.load(k, sentences) for k in keys]
        if any(s is None for s in out):
            raise ConfigError(f"the representation cache in {self.root} could not be read back")
        return [s for s in out if s is not None]


def _atomic_save(path: Path, array: NDArray[np.int64]) -> None:
    fd, name = tempfile.mkstemp(dir=path.parent, suffix=".part.npy")
    os.close(fd)
    try:
        np.save(name, array)
        os.replace(name, path)
    finally:
        if os.path.exists(name):
            os.unlink(name)


def _atomic_text(path: Path, text: str) -> None:
    fd, name = tempfile.mkstemp(dir=path.parent, suffix=".part")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text + "\n")
        os.replace(name, path)
    finally:
        if os.path.exists(name):
            os.unlink(name)
