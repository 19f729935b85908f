"""Treebanks turned into what probes train and are scored on: word vectors plus gold.

Vectors of a whole split live flat (``total_words x dim``) with word offsets, as a
:class:`~brittle.scorers.representations.FlatVectors` that also carries the gold
annotations (:class:`ProbeData`); with a :class:`~brittle.scorers.repcache.DiskCache`
they are a memory map extracted once per (representation, treebank) and reused by every
later run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.errors import ConfigError
from brittle.scorers.probe_gold import Gold, golds_of
from brittle.scorers.representations import FlatVectors, offsets_of

if TYPE_CHECKING:
    from brittle.engine.core.sentence import Sentence
    from brittle.scorers.repcache import DiskCache
    from brittle.scorers.representations import OOVReport, RepresentationBackend

__all__ = ["ProbeData", "encode_split", "encode_split_layers", "oov_info", "read_treebanks"]

Progress = Callable[[int], None]


@dataclass(frozen=True)
class ProbeData(FlatVectors):
    """Word vectors and gold annotations of a set of sentences.

    Attributes:
        vectors: (total_words, dim) float32 (possibly a read-only memory map).
        offsets: (n_sentences + 1,) int64 word offsets.
        golds: one :class:`Gold` per sentence.
        sources: the files the sentences came from.
    """

    golds: tuple[Gold, ...]
    sources: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.offsets.shape[0] != len(self.golds) + 1:
            raise ConfigError(
                f"{self.offsets.shape[0] - 1} vector blocks for {len(self.golds)} sentences"
            )


def read_treebanks(paths: Sequence[str | os.PathLike[str]]) -> list[Sentence]:
    """Every sentence of ``paths``, in order (errors name the file and line)."""
    if not paths:
        raise ConfigError("no treebank given")
    out: list[Sentence] = []
    for p in paths:
        out.extend(read_conllu(p))
    return out


def encode_split(
    sentences: Sequence[Sentence],
    backend: RepresentationBackend,
    *,
    layer: int,
    cache: DiskCache | None = None,
    chunk: int = 256,
    progress: Progress | None = None,
    sources: Sequence[str | os.PathLike[str]] = (),
) -> ProbeData:
    """Vectors of ``layer`` for ``sentences`` plus their gold annotations.

    With ``cache`` the vectors come from (or go to) the disk cache; otherwise they are
    computed into memory ``chunk`` sentences at a time.
    """
    return encode_split_layers(
        sentences,
        backend,
        layers=(layer,),
        cache=cache,
        chunk=chunk,
        progress=progress,
        sources=sources,
    )[0]


def encode_split_layers(
    sentences: Sequence[Sentence],
    backend: RepresentationBackend,
    *,
    layers: Sequence[int],
    cache: DiskCache | None = None,
    chunk: int = 256,
    progress: Progress | None = None,
    sources: Sequence[str | os.PathLike[str]] = (),
) -> list[ProbeData]:
    """:func:`encode_split` for several layers, extracted in one pass."""
    golds = tuple(golds_of(sentences))
    words = [s.forms for s in sentences]
    src = tuple(str(Path(p)) for p in sources)
    if cache is not None:
        stored = cache.get_or_extract_layers(
            backend, words, layers=layers, chunk=chunk, progress=progress
        )
        return [ProbeData(s.vectors, s.offsets, golds, src) for s in stored]
    offsets = offsets_of(words)
    total = int(offsets[-1])
    out = np.empty((len(layers), total, backend.dim), dtype=np.float32)
    for start in range(0, len(words), chunk):
        part = words[start : start + chunk]
        flat = backend.encode_flat(part, layers=layers)
        out[:, offsets[start] : offsets[start + len(part)]] = flat.vectors
        if progress is not None:
            progress(len(part))
    return [ProbeData(out[i], offsets, golds, src) for i in range(len(layers))]


def oov_info(backend: RepresentationBackend) -> dict[str, str | int | float] | None:
    """The backend's OOV report as a dict, for backends with a vocabulary (static vectors)."""
    report: OOVReport | None = backend.oov_report()
    return None if report is None else report.to_dict()
