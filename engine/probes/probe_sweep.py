"""``train-probe --layer all``: one probe per layer of a model, from one extraction.

A sweep reads the treebanks once, runs the model once over them for every layer asked
for (:func:`~brittle.engine.probes.probe_data.encode_split_layers`; with the disk cache, the
layers already stored are mapped back instead) and trains the same probe on each
layer. The sweep directory holds one ordinary probe directory per layer, named by its
hidden-state index (``layer0`` is the embedding layer, ``layer6`` the last of a
6-layer model), and ``layers.json``, the summary: per layer the dev loss, the dev
metrics and the best epoch, and which layer has the lowest dev loss.

``layers.json`` is rewritten (atomically) after every layer, with a fingerprint of
the settings. A sweep started again with the same settings keeps the layers already
trained and trains only the rest, so an interrupted sweep resumes; other settings
retrain every layer. ``brittle evaluate --probe DIR`` evaluates every probe of a sweep
directory.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from brittle.engine.core.atomic import atomic_write
from brittle.engine.core.errors import ConfigError
from brittle.engine.probes.probe_data import encode_split_layers, read_treebanks
from brittle.engine.probes.probe_jobs import (
    NullReporter,
    Reporter,
    TrainJob,
    check_job_paths,
    check_train_job,
    default_cache,
    train_on_vectors,
)
from brittle.engine.probes.probe_training import TrainConfig
from brittle.scorers.probe import METADATA
from brittle.scorers.representations import open_backend

if TYPE_CHECKING:
    from brittle.engine.probes.probe_training import TrainResult

__all__ = [
    "SUMMARY",
    "LayerOutcome",
    "SweepJob",
    "SweepResult",
    "check_sweep",
    "layer_directory",
    "parse_layers",
    "run_sweep",
]

#: The summary file of a sweep directory.
SUMMARY = "layers.json"
#: Version of the summary's layout.
SUMMARY_FORMAT = 1


def parse_layers(text: str) -> tuple[int, ...] | None:
    """The layers of a ``--layer`` value.

    ``all`` gives ``None`` (every hidden state of the model, known once it loads);
    ``0,2,-1`` gives ``(0, 2, -1)`` and ``-1`` gives ``(-1,)``.

    Raises:
        ValueError: not ``all`` nor a comma-separated list of integers.
    """
    value = text.strip().lower()
    if value == "all":
        return None
    parts = [p.strip() for p in value.split(",")]
    if not parts or any(not p.lstrip("-").isdigit() for p in parts):
        raise ValueError(f"{text!r} is not a layer number, 'all' nor a list such as 0,2,4")
    return tuple(int(p) for p in parts)


def layer_directory(out: Path, index: int) -> Path:
    """Where the probe of hidden state ``index`` (0..n_layers) goes in sweep ``out``."""
    return out / f"layer{index}"


@dataclass(frozen=True)
class SweepJob:
    """A sweep: the probe of ``job`` trained on each of ``layers``.

    Attributes:
        job: the probe to train; its ``layer`` is ignored and its ``out`` is the sweep
            directory.
        layers: layers to train on (negative from the output; duplicates are trained
            once); ``None`` is every hidden state, the embedding layer included.
    """

    job: TrainJob
    layers: tuple[int, ...] | None = None


@dataclass(frozen=True)
class LayerOutcome:
    """How one layer of a sweep went.

    Attributes:
        index: hidden-state index, 0..n_layers.
        path: the layer's probe directory.
        dev_loss: the kept epoch's dev loss.
        dev_metrics: the task's metrics on the dev data.
        best_epoch: 1-based epoch whose weights were kept.
        epochs: epochs run.
        kept: trained by an earlier run of the same sweep, not retrained.
    """

    index: int
    path: Path
    dev_loss: float
    dev_metrics: Mapping[str, float]
    best_epoch: int
    epochs: int
    kept: bool = False

    def to_dict(self) -> dict[str, object]:
        """The layer's entry in ``layers.json``."""
        return {
            "layer": self.index,
            "probe": self.path.name,
            "dev_loss": self.dev_loss,
            "dev_metrics": dict(self.dev_metrics),
            "best_epoch": self.best_epoch,
            "epochs": self.epochs,
        }


@dataclass(frozen=True)
class SweepResult:
    """Every layer of a sweep, in hidden-state order, and where it was written.

    Attributes:
        out: the sweep directory.
        model: the representation's description (model, pooling).
        layers: one outcome per layer.
    """

    out: Path
    model: str
    layers: tuple[LayerOutcome, ...]

    @property
    def best(self) -> LayerOutcome:
        """The layer with the lowest dev loss (the first of equals)."""
        return min(self.layers, key=lambda o: (o.dev_loss, o.index))


def _check_sweep_out(out: Path) -> None:
    if out.is_file():
        raise ConfigError(f"--out {out} is a file; give a directory")
    if out.is_dir():
        if (out / METADATA).is_file():
            raise ConfigError(
                f"--out {out} is a single probe; a sweep over layers needs a new or empty "
                f"directory, or a sweep directory (with {SUMMARY}) to continue or replace"
            )
        if not (out / SUMMARY).is_file() and any(out.iterdir()):
            raise ConfigError(
                f"--out {out} is a non-empty directory that is not a sweep (no {SUMMARY}); "
                "give a new or empty directory"
            )


def check_sweep(sweep: SweepJob) -> None:
    """The mistakes of ``sweep`` that show before a treebank is read or a model loads.

    Raises:
        ConfigError: the first mistake found, as one line naming the option.
    """
    if sweep.layers is not None and not sweep.layers:
        raise ConfigError("--layer: no layer given")
    check_job_paths(sweep.job, Path(sweep.job.out))
    check_train_job(replace(sweep.job, out=layer_directory(Path(sweep.job.out), 0)))
    _check_sweep_out(Path(sweep.job.out))


def _fingerprint(job: TrainJob, model: str) -> str:
    """A digest of every setting that changes what a layer's probe learns."""
    config = job.config or TrainConfig()
    settings = {
        "model": model,
        "task": job.task,
        "arch": job.arch,
        "rank": job.rank,
        "hidden": job.hidden,
        "tagset": job.tagset,
        "margin": job.margin,
        "train": [str(Path(p).resolve()) for p in job.train],
        "dev": str(Path(job.dev).resolve()),
        "config": [
            config.epochs,
            config.patience,
            config.lr,
            config.batch_size,
            config.weight_decay,
            config.min_delta,
            config.seed,
        ],
    }
    if config.standardize:  # absent otherwise: sweeps from before the option still match
        settings["standardize"] = True
    text = json.dumps(settings, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _read_summary(out: Path) -> dict[str, object]:
    path = out / SUMMARY
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: not a readable sweep summary ({exc})") from None
    return data if isinstance(data, dict) else {}


def _kept(summary: Mapping[str, object], fingerprint: str, out: Path) -> dict[int, LayerOutcome]:
    """The layers an earlier run with the same settings finished (probe on disk)."""
    if summary.get("settings") != fingerprint:
        return {}
    entries = summary.get("layers")
    kept: dict[int, LayerOutcome] = {}
    for entry in entries if isinstance(entries, list) else []:
        try:
            index = int(entry["layer"])
            path = layer_directory(out, index)
            if not (path / METADATA).is_file():
                continue
            metrics = entry.get("dev_metrics", {})
            kept[index] = LayerOutcome(
                index=index,
                path=path,
                dev_loss=float(entry["dev_loss"]),
                dev_metrics={str(k): float(v) for k, v in metrics.items()},
                best_epoch=int(entry["best_epoch"]),
                epochs=int(entry["epochs"]),
                kept=True,
            )
        except (AttributeError, KeyError, TypeError, ValueError):
            raise ConfigError(
                f"{out / SUMMARY}: a layer entry is malformed ({entry!r}); delete the file "
                "to retrain every layer"
            ) from None
    return kept


def _write_summary(
    out: Path, fingerprint: str, model: str, task: str, done: Sequence[LayerOutcome]
) -> None:
    ordered = sorted(done, key=lambda o: o.index)
    finite = [o for o in ordered if math.isfinite(o.dev_loss)]
    best = min(finite, key=lambda o: (o.dev_loss, o.index)) if finite else None
    data = {
        "format": SUMMARY_FORMAT,
        "settings": fingerprint,
        "model": model,
        "task": task,
        "best_layer": None if best is None else best.index,
        "layers": [o.to_dict() for o in ordered],
    }
    with atomic_write(out / SUMMARY, "w") as f:
        f.write(json.dumps(data, indent=2) + "\n")


def _remove_stale(out: Path, previous: Mapping[str, object], current: set[int]) -> None:
    """Remove the probes an earlier sweep with other settings left, once this one is
    complete, so that the directory holds only probes of its summary."""
    entries = previous.get("layers")
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and int(entry.get("layer", -1)) not in current:
            path = layer_directory(out, int(entry["layer"]))
            if (path / METADATA).is_file():
                shutil.rmtree(path)


def _outcome(index: int, path: Path, result: TrainResult) -> LayerOutcome:
    loss = result.probe.info.get("dev_loss")
    return LayerOutcome(
        index=index,
        path=path,
        dev_loss=float(loss) if isinstance(loss, int | float) else math.nan,
        dev_metrics=dict(result.dev_metrics),
        best_epoch=result.best_epoch,
        epochs=len(result.history),
    )


def run_sweep(sweep: SweepJob, *, reporter: Reporter | None = None) -> SweepResult:
    """Train the probe of ``sweep`` on each of its layers; see the module doc.

    Progress: one vectors stage per split (every layer at once), then per layer a
    training stage and a note; layers kept from an earlier run get a note only.
    """
    rep = reporter or NullReporter()
    check_sweep(sweep)
    job = sweep.job
    out = Path(job.out)
    train_sents = read_treebanks(job.train)
    dev_sents = read_treebanks([job.dev])
    backend = open_backend(job.request, backend=job.backend)
    try:
        asked = sweep.layers if sweep.layers is not None else range(backend.n_layers + 1)
        indices = sorted({backend.layer_index(layer) for layer in asked})
        model = (
            f"{backend.model} ({backend.pooling} pooling)"
            if backend.name == "transformer"
            else f"{backend.model} ({backend.name})"
        )
        fingerprint = _fingerprint(job, f"{backend.name}:{backend.model}:{backend.pooling}")
        previous = _read_summary(out)
        kept = _kept(previous, fingerprint, out)
        todo = [i for i in indices if i not in kept]
        # Layers trained earlier with the same settings stay in the sweep, asked or not.
        done = list(kept.values())
        for index in indices:
            if index in kept:
                rep.note(f"kept layer {index}: trained by an earlier run of this sweep")
        if todo:
            cache = default_cache(backend, job.cache_dir) if job.use_cache else None
            splits = {}
            for name, sents, paths in (
                ("train", train_sents, job.train),
                ("dev", dev_sents, (job.dev,)),
            ):
                rep.start(f"vectors: {name} ({len(todo)} layers of {backend.model})", len(sents))
                splits[name] = encode_split_layers(
                    sents,
                    backend,
                    layers=todo,
                    cache=cache,
                    progress=rep.advance,
                    sources=paths,
                )
                rep.finish()
            out.mkdir(parents=True, exist_ok=True)
            for k, index in enumerate(todo):
                path = layer_directory(out, index)
                result = train_on_vectors(
                    replace(job, layer=index, out=path),
                    backend,
                    backend.key(index),
                    splits["train"][k],
                    splits["dev"][k],
                    reporter=rep,
                )
                done.append(_outcome(index, path, result))
                _write_summary(out, fingerprint, model, job.task, done)
        elif not (out / SUMMARY).is_file():
            _write_summary(out, fingerprint, model, job.task, done)
        _remove_stale(out, previous, {o.index for o in done})
        return SweepResult(out, model, tuple(sorted(done, key=lambda o: o.index)))
    finally:
        backend.close()
