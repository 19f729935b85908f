"""The ``train-probe`` job: read treebanks, extract (or map) vectors, train, save.

The CLI builds a :class:`TrainJob` and calls :func:`run_train_job`; progress goes to a
:class:`Reporter` (the CLI's draws rich progress bars, tests pass none).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from brittle.engine.core.errors import ConfigError
from brittle.engine.core.resources import data_home
from brittle.engine.probe_data import encode_split, oov_info, read_treebanks
from brittle.engine.probe_training import TrainConfig, train_probe
from brittle.scorers.probe_tasks import PROBE_TASKS, ProbeSpec
from brittle.scorers.repcache import DiskCache
from brittle.scorers.representations import BackendRequest, open_backend

if TYPE_CHECKING:
    from brittle.engine.probe_training import EpochLog, TrainResult
    from brittle.scorers.representations import RepresentationBackend

__all__ = ["NullReporter", "Reporter", "TrainJob", "default_cache", "run_train_job"]


class Reporter(Protocol):
    """Where long jobs report progress."""

    def start(self, what: str, total: int | None) -> None:
        """A stage of ``total`` units begins."""

    def advance(self, n: int) -> None:
        """``n`` more units of the current stage are done."""

    def finish(self) -> None:
        """The current stage is over."""

    def epoch(self, log: EpochLog) -> None:
        """A training epoch ended."""

    def note(self, message: str) -> None:
        """Something worth telling the user."""


class NullReporter:
    """A reporter that says nothing."""

    def start(self, what: str, total: int | None) -> None:
        """Ignored."""

    def advance(self, n: int) -> None:
        """Ignored."""

    def finish(self) -> None:
        """Ignored."""

    def epoch(self, log: EpochLog) -> None:
        """Ignored."""

    def note(self, message: str) -> None:
        """Ignored."""


def default_cache(backend: RepresentationBackend, cache_dir: Path | None) -> DiskCache | None:
    """The disk cache to use for ``backend``: transformers only (static lookups are cheap).

    ``cache_dir`` overrides the default ``<data_home>/representations``.
    """
    if backend.name != "transformer":
        return None
    if cache_dir is not None:
        return DiskCache(cache_dir)

    return DiskCache(data_home() / "representations")


@dataclass(frozen=True)
class TrainJob:
    """Everything ``brittle train-probe`` needs.

    Attributes:
        train: training treebanks.
        dev: development treebank (early stopping and dev metrics).
        out: probe directory to write.
        task: registered probe task.
        arch: ``linear`` or ``mlp``.
        layer: layer number (negative from the output).
        request: the representation backend asked for.
        backend: backend name or ``auto``.
        rank: rank of B (distance/depth/perceptron); ``None`` is the vector size.
        hidden: MLP width.
        tagset: ``upos`` or ``xpos`` (pos task).
        margin: perceptron margin per wrong edge.
        config: optimisation settings.
        cache_dir: representation cache directory (``None``: the default).
        use_cache: whether to use the disk cache at all.
    """

    train: tuple[Path, ...]
    dev: Path
    out: Path
    task: str = "distance"
    arch: str = "linear"
    layer: int = -1
    request: BackendRequest = field(default_factory=BackendRequest)
    backend: str = "auto"
    rank: int | None = None
    hidden: int = 256
    tagset: str = "upos"
    margin: float = 1.0
    config: TrainConfig | None = None
    cache_dir: Path | None = None
    use_cache: bool = True


def run_train_job(job: TrainJob, *, reporter: Reporter | None = None) -> TrainResult:
    """Train and save the probe of ``job``; returns the training result."""
    rep = reporter or NullReporter()
    known = PROBE_TASKS.names()  # built-in and plug-in tasks
    if job.task not in known:
        raise ConfigError(f"unknown probe task {job.task!r} (known: {', '.join(known)})")
    if job.out.exists() and job.out.is_file():
        raise ConfigError(f"--out {job.out} is a file; give a directory")
    config = job.config or TrainConfig()
    train_sents = read_treebanks(job.train)
    dev_sents = read_treebanks([job.dev])
    rep.note(f"{len(train_sents)} training and {len(dev_sents)} dev sentences")
    backend = open_backend(job.request, backend=job.backend)
    try:
        key = backend.key(job.layer)
        cache = default_cache(backend, job.cache_dir) if job.use_cache else None
        splits = {}
        for name, sents, paths in (
            ("train", train_sents, job.train),
            ("dev", dev_sents, (job.dev,)),
        ):
            rep.start(f"vectors: {name} ({key.describe()})", len(sents))
            splits[name] = encode_split(
                sents, backend, layer=job.layer, cache=cache, progress=rep.advance, sources=paths
            )
            rep.finish()
        oov = oov_info(backend)
        spec = ProbeSpec(
            task=job.task,
            dim=backend.dim,
            arch=job.arch,
            rank=job.rank,
            hidden=job.hidden,
            tagset=job.tagset,
            margin=job.margin,
        )
        info: dict[str, object] = {
            "training": {
                "train": [str(p) for p in job.train],
                "dev": str(job.dev),
                "train_sentences": len(train_sents),
                "dev_sentences": len(dev_sents),
            },
        }
        if oov is not None:
            info["oov"] = oov
        rep.start(f"training {job.task} ({job.arch})", None)
        result = train_probe(
            spec,
            key,
            splits["train"],
            splits["dev"],
            config=config,
            backend=backend.describe(),
            info=info,
            on_epoch=rep.epoch,
        )
        rep.finish()
        result.probe.save(job.out)
        return result
    finally:
        backend.close()
