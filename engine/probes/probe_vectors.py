"""The word vectors ``evaluate`` feeds its probes, computed here or sharded over workers.

:class:`ProbeVectors` opens the backend a probe recorded and extracts some of its
layers for lists of sentences, in blocks of ``chunk`` sentences (one
``encode_flat`` call each, through the disk cache for transformers). With an executor
(:mod:`brittle.engine.runs.shards`) the blocks go out as shards, one block each: a worker
opens the backend once and extracts its blocks exactly as one process would, so the
vectors merged back in input order are the same, bit for bit. The probes then predict
and score in the calling process, over every sentence at once, as without workers; a
corpus metric is therefore computed from the same arrays in the same order.

With workers, the disk cache holds each block's vectors under the block's own
sentences (a one-process run caches the whole treebank under its sentences), so a
rerun with workers finds them, and the cache of one kind of run does not serve the
other.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from brittle.engine.core.sentence import Sentence
from brittle.engine.probes.probe_data import ProbeData, encode_split_layers
from brittle.engine.probes.probe_jobs import Reporter, default_cache
from brittle.engine.runs.shards import Shard, ShardExecutor, ShardTask, ShardWorker, run_shards
from brittle.scorers.probe_gold import golds_of
from brittle.scorers.representations import (
    RepresentationBackend,
    RepresentationKey,
    offsets_of,
    reopen_backend,
)

__all__ = ["BLOCK", "EncodedBlock", "ProbeVectors", "VectorShards"]

#: Sentences per ``encode_flat`` call (and per shard), as in ``encode_split_layers``.
BLOCK = 256

#: Checks the representation keys of the layers asked for (in their order) against the
#: probes that read them; raises ``ConfigError`` on a mismatch.
KeyCheck = Callable[[Sequence[RepresentationKey]], None]


@dataclass(frozen=True)
class EncodedBlock:
    """The vectors of one shard's sentences.

    Attributes:
        keys: the backend's representation key of each layer asked for.
        vectors: per layer, (words of the shard, dim) float32, in sentence order.
    """

    keys: tuple[RepresentationKey, ...]
    vectors: tuple[NDArray[np.float32], ...]


class _VectorWorker(ShardWorker[list[Sentence], EncodedBlock]):
    """A worker's opened backend (reused by the next task when it names the same
    backend on the same device) and its disk cache."""

    def __init__(self, task: VectorShards, previous: ShardWorker[Any, Any] | None) -> None:
        self.task = task
        if (
            isinstance(previous, _VectorWorker)
            and previous.task.backend == task.backend
            and previous.task.device == task.device
        ):
            self.backend: RepresentationBackend = previous.backend
        else:
            if isinstance(previous, _VectorWorker):
                previous.backend.close()
            self.backend = reopen_backend(json.loads(task.backend), device=task.device)
        cache_dir = None if task.cache_dir is None else Path(task.cache_dir)
        self.cache = default_cache(self.backend, cache_dir) if task.use_cache else None

    def run(self, shard: Shard[list[Sentence]]) -> EncodedBlock:
        """The vectors of the shard's sentences at the task's layers."""
        data = encode_split_layers(
            shard.payload,
            self.backend,
            layers=self.task.layers,
            cache=self.cache,
            chunk=self.task.chunk,
        )
        return EncodedBlock(
            keys=tuple(self.backend.key(layer) for layer in self.task.layers),
            vectors=tuple(np.ascontiguousarray(d.vectors, dtype=np.float32) for d in data),
        )


@dataclass(frozen=True)
class VectorShards(ShardTask[list[Sentence], EncodedBlock]):
    """The job of ``evaluate``'s workers: some layers of one backend for each shard.

    Attributes:
        backend: the backend options a probe recorded, as JSON with sorted keys.
        layers: the layers to extract.
        device: torch device (``None``: ``cuda`` when available).
        cache_dir: the disk cache directory (``None``: the default).
        use_cache: use the disk cache (transformers only).
        chunk: sentences per ``encode_flat`` call (a shard holds at most one block).
    """

    backend: str
    layers: tuple[int, ...]
    device: str | None = None
    cache_dir: str | None = None
    use_cache: bool = True
    chunk: int = BLOCK

    def start(self, previous: ShardWorker[Any, Any] | None) -> _VectorWorker:
        """Open the backend (or keep the previous task's, when it is the same)."""
        return _VectorWorker(self, previous)


class ProbeVectors:
    """The vectors of one recorded backend, for any sentences and layers; a context
    manager that closes what it opened.

    Without an executor the backend opens at the first :meth:`encode` and serves the
    following ones; with one, the workers open it (once each) and this process loads
    no model.

    Args:
        backend: the probe's backend options (``Probe.backend``).
        device, cache_dir, use_cache: where the backend runs, and its disk cache.
        chunk: sentences per ``encode_flat`` call; with ``executor``, per shard.
        executor: workers to shard the blocks over (``None``: this process).
    """

    def __init__(
        self,
        backend: Mapping[str, object],
        *,
        device: str | None = None,
        cache_dir: Path | None = None,
        use_cache: bool = True,
        chunk: int = BLOCK,
        executor: ShardExecutor | None = None,
    ) -> None:
        self.backend = dict(backend)
        self.device = device
        self.cache_dir = cache_dir
        self.use_cache = use_cache
        self.chunk = chunk
        self.executor = executor
        self._opened: RepresentationBackend | None = None

    def __enter__(self) -> ProbeVectors:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the backend this process opened, if any."""
        if self._opened is not None:
            self._opened.close()
            self._opened = None

    def encode(
        self,
        sentences: Sequence[Sentence],
        *,
        layers: Sequence[int],
        check: KeyCheck,
        reporter: Reporter,
        model: str,
        sources: Sequence[str | Path] = (),
    ) -> list[ProbeData]:
        """The vectors of ``sentences`` at ``layers``.

        Args:
            sentences: the sentences, in order.
            layers: the layers to extract (one :class:`ProbeData` each, in this order).
            check: called with the backend's keys of ``layers`` before the vectors are
                used (in this process: before they are computed).
            reporter: progress, a stage ``vectors: MODEL layers ...`` of one unit per
                sentence.
            model: the model's name, for the progress label.
            sources: the files the sentences came from (recorded in the data).

        Returns:
            Per layer, vectors (total words, dim) float32 with the sentences' offsets
            and gold annotations; the same values with or without an executor.
        """
        src = tuple(str(Path(p)) for p in sources)
        what = f"vectors: {model} layers {list(layers)}"
        if self.executor is None or not sentences:
            if self._opened is None:
                self._opened = reopen_backend(self.backend, device=self.device)
            opened = self._opened
            check([opened.key(layer) for layer in layers])
            cache = default_cache(opened, self.cache_dir) if self.use_cache else None
            reporter.start(what, len(sentences))
            data = encode_split_layers(
                sentences,
                opened,
                layers=layers,
                cache=cache,
                chunk=self.chunk,
                progress=reporter.advance,
                sources=src,
            )
            reporter.finish()
            return data
        task = VectorShards(
            backend=json.dumps(self.backend, sort_keys=True),
            layers=tuple(layers),
            device=self.device,
            cache_dir=None if self.cache_dir is None else str(self.cache_dir),
            use_cache=self.use_cache,
            chunk=self.chunk,
        )
        size = self.chunk
        shards = (
            Shard(
                number,
                start,
                min(start + size, len(sentences)),
                list(sentences[start : start + size]),
            )
            for number, start in enumerate(range(0, len(sentences), size))
        )
        reporter.start(what, len(sentences))
        parts: list[EncodedBlock] = []
        for shard, block in run_shards(
            self.executor, task, shards, on_done=lambda s, _: reporter.advance(s.stop - s.start)
        ):
            if shard.number == 0:
                check(block.keys)
            parts.append(block)
        reporter.finish()
        offsets = offsets_of([s.forms for s in sentences])
        golds = tuple(golds_of(sentences))
        return [
            ProbeData(np.concatenate([p.vectors[j] for p in parts], axis=0), offsets, golds, src)
            for j in range(len(layers))
        ]
