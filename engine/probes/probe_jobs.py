"""The ``train-probe`` job: read treebanks, extract (or map) vectors, train, save.

The CLI builds a :class:`TrainJob`, checks it (:func:`check_train_job`: every option
mistake is found before a treebank is read or a model loads) and calls
:func:`run_train_job`; progress goes to a :class:`Reporter` (the CLI's draws bars on a
terminal and plain lines in logs, tests pass none).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from brittle.engine.core.atomic import check_output
from brittle.engine.core.errors import ConfigError
from brittle.engine.core.overlap import check_no_overlap, named
from brittle.engine.core.resources import data_home
from brittle.engine.probes.probe_data import encode_split, oov_info, read_treebanks
from brittle.engine.probes.probe_training import TrainConfig, train_probe
from brittle.scorers.probe import METADATA
from brittle.scorers.probe_tasks import PROBE_TASKS, SENTENCE_WORDS, ProbeSpec
from brittle.scorers.repcache import DiskCache
from brittle.scorers.representations import BackendRequest, check_device, open_backend

if TYPE_CHECKING:
    from brittle.engine.probes.probe_data import ProbeData
    from brittle.engine.probes.probe_training import EpochLog, TrainResult
    from brittle.scorers.representations import RepresentationBackend, RepresentationKey

__all__ = [
    "NullReporter",
    "Reporter",
    "TrainJob",
    "check_job_paths",
    "check_train_job",
    "default_cache",
    "run_train_job",
    "train_on_vectors",
]


class Reporter(Protocol):
    """Where long jobs report progress.

    A job runs in stages (reading vectors, training...); each stage is ``start``, any
    number of ``advance`` and ``finish``. How much of it is shown is the reporter's
    business: the CLI's draws bars on a terminal and plain lines in logs, prints epochs
    only when asked to be verbose and notes unless asked to be quiet.
    """

    def start(self, what: str, total: int | None) -> None:
        """A stage of ``total`` units begins (``None``: unknown)."""

    def advance(self, n: int) -> None:
        """``n`` more units of the current stage are done."""

    def finish(self) -> None:
        """The current stage is over."""

    def epoch(self, log: EpochLog) -> None:
        """A training epoch ended (the training stage also advances by one)."""

    def note(self, message: str) -> None:
        """Something worth telling the user, one line (e.g. a probe was trained)."""


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
        arch: ``linear``, ``mlp`` or ``sentence``.
        layer: layer number (negative from the output).
        request: the representation backend asked for.
        backend: backend name or ``auto``.
        rank: rank of B (distance/depth/perceptron); ``None`` is the vector size.
        hidden: width of the MLP and sentence networks.
        tagset: ``upos`` or ``xpos`` (pos task).
        margin: perceptron margin per wrong edge.
        words: words per sentence of the ``sentence`` network (``None``: 20).
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
    words: int | None = None
    config: TrainConfig | None = None
    cache_dir: Path | None = None
    use_cache: bool = True


def _check_treebank(path: Path, what: str) -> None:
    if not path.exists():
        raise ConfigError(f"{what} {path} not found")
    if path.is_dir():
        raise ConfigError(f"{what} {path} is a directory, not a CoNLL-U file")


def check_job_paths(job: TrainJob, out: Path) -> None:
    """``out`` (the probe directory, or a sweep's directory of them) neither is nor
    holds nor lies inside one of ``job``'s inputs (treebanks, a model file or
    directory).

    Raises:
        ConfigError: the overlap, naming both options.
    """
    model = job.request.model
    inputs = [
        *named("TREEBANKS", job.train),
        *named("--dev", job.dev),
        *named("--model", model if model is not None and Path(model).exists() else None),
    ]
    check_no_overlap(inputs, named("--out", out))


def _check_out(out: Path) -> None:
    """``out`` can become the probe directory: absent, empty, or a probe to replace, in
    a place that takes new files."""
    if out.is_file():
        raise ConfigError(f"--out {out} is a file; give a directory")
    if out.is_dir():
        if not (out / METADATA).is_file() and any(out.iterdir()):
            raise ConfigError(
                f"--out {out} is a non-empty directory that is not a probe (no {METADATA}); "
                "give a new or empty directory, or a probe directory to replace"
            )
        return
    for parent in out.parents:  # the first existing ancestor must be a directory
        if parent.exists():
            if not parent.is_dir():
                raise ConfigError(f"--out {out}: {parent} is a file, not a directory")
            break
    check_output(out, directory=True)


def check_train_job(job: TrainJob) -> None:
    """Every mistake in ``job`` that shows without reading a treebank or loading a model.

    The task, the sizes (``rank``, ``hidden``, ``margin``; the optimisation settings
    check themselves in :class:`TrainConfig`), the devices, that every treebank exists
    and that ``out`` can become the probe directory (absent, empty or a probe).
    :func:`run_train_job` calls it first; a CLI calls it before it shows any progress.

    Raises:
        ConfigError: the first mistake found, as one line naming the option.
    """
    known = PROBE_TASKS.names()  # built-in and plug-in tasks
    if job.task not in known:
        raise ConfigError(f"unknown probe task {job.task!r} (known: {', '.join(known)})")
    if job.rank is not None and job.rank < 1:
        raise ConfigError(f"--rank must be at least 1 (got {job.rank})")
    if job.hidden < 1:
        raise ConfigError(f"--hidden must be at least 1 (got {job.hidden})")
    if not job.margin >= 0:  # also NaN
        raise ConfigError(f"--margin must not be negative (got {job.margin:g})")
    if job.words is not None and job.arch != "sentence":
        raise ConfigError(f"--words sets the sentence network's width; --arch is {job.arch}")
    if job.words is not None and job.words < 1:
        raise ConfigError(f"--words must be at least 1 (got {job.words})")
    check_device(job.request.device)
    if job.config is not None:
        check_device(job.config.device)
    if not job.train:
        raise ConfigError("no training treebank given")
    for path in job.train:
        _check_treebank(Path(path), "training treebank")
    _check_treebank(Path(job.dev), "--dev treebank")
    check_job_paths(job, Path(job.out))
    _check_out(Path(job.out))


def run_train_job(job: TrainJob, *, reporter: Reporter | None = None) -> TrainResult:
    """Train and save the probe of ``job``; returns the training result.

    ``job`` is checked first (:func:`check_train_job`), so a mistake costs no training.
    Progress: a stage per split's vectors, then a training stage of ``epochs`` units
    (one per epoch), then one note saying what was trained.
    """
    rep = reporter or NullReporter()
    check_train_job(job)
    train_sents = read_treebanks(job.train)
    dev_sents = read_treebanks([job.dev])
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
        return train_on_vectors(job, backend, key, splits["train"], splits["dev"], reporter=rep)
    finally:
        backend.close()


def train_on_vectors(
    job: TrainJob,
    backend: RepresentationBackend,
    key: RepresentationKey,
    train: ProbeData,
    dev: ProbeData,
    *,
    reporter: Reporter | None = None,
) -> TrainResult:
    """Train the probe of ``job`` on vectors already extracted, and save it to ``job.out``.

    ``key`` names the representation ``train`` and ``dev`` hold (``backend.key(layer)``);
    ``backend`` says what the probe was trained on (and its OOV report, for static
    vectors). A sweep over layers extracts every layer once and calls this per layer.
    """
    rep = reporter or NullReporter()
    config = job.config or TrainConfig()
    oov = oov_info(backend)
    spec = ProbeSpec(
        task=job.task,
        dim=backend.dim,
        arch=job.arch,
        rank=job.rank,
        hidden=job.hidden,
        tagset=job.tagset,
        margin=job.margin,
        words=job.words or SENTENCE_WORDS,
    )
    info: dict[str, object] = {
        "training": {
            "train": [str(p) for p in job.train],
            "dev": str(job.dev),
            "train_sentences": len(train.golds),
            "dev_sentences": len(dev.golds),
        },
    }
    if oov is not None:
        info["oov"] = oov

    def on_epoch(log: EpochLog) -> None:
        rep.epoch(log)
        rep.advance(1)

    rep.start(f"training {job.task} ({job.arch})", config.epochs)
    result = train_probe(
        spec,
        key,
        train,
        dev,
        config=config,
        backend=backend.describe(),
        info=info,
        on_epoch=on_epoch,
    )
    rep.finish()
    result.probe.save(job.out)
    rep.note(_trained_line(result, len(train.golds), len(dev.golds)))
    return result


def _trained_line(result: TrainResult, n_train: int, n_dev: int) -> str:
    """One line saying what was trained, e.g. ``trained distance probe (linear) on ...``."""
    probe = result.probe
    dev_loss = probe.info.get("dev_loss")
    loss = f", dev loss {dev_loss:.4f}" if isinstance(dev_loss, float) else ""
    stopped = ", stopped early" if result.stopped_early else ""
    return (
        f"trained {probe.spec.task} probe ({probe.spec.arch}) on {probe.key.describe()}: "
        f"best epoch {result.best_epoch} of {len(result.history)}{stopped}{loss} "
        f"({n_train:,} training, {n_dev:,} dev sentences)"
    )
