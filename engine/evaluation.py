"""The ``evaluate`` job: every metric of each probe on a treebank, beside the baselines.

Probes that read the same backend share one opened model, and all the layers they need
are extracted in one pass (and cached on disk for transformers). The Majority baseline
is learnt from training trees: the files given, else the training files recorded in
the probes (those that still exist), else the evaluated treebank itself (reported).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from brittle.engine.core.atomic import atomic_write
from brittle.engine.core.errors import ConfigError
from brittle.engine.core.json_types import JSONLike, JSONObject, JSONValue
from brittle.engine.probe_data import encode_split_layers, read_treebanks
from brittle.engine.probe_jobs import NullReporter, Reporter, default_cache
from brittle.scorers.baselines import MajorityTrees, baseline_metrics
from brittle.scorers.probe import Probe, package_versions
from brittle.scorers.probe_gold import golds_of
from brittle.scorers.representations import check_device, reopen_backend

__all__ = [
    "EvaluationReport",
    "ProbeResult",
    "check_evaluation",
    "evaluate_probes",
    "write_report_json",
]


@dataclass(frozen=True)
class ProbeResult:
    """The metrics of one probe.

    Attributes:
        name: unique name (the probe directory's name).
        path: the probe directory.
        task: probe task.
        arch: architecture.
        representation: ``RepresentationKey.describe()``.
        metrics: metric name -> value (the task's ``metric_names``).
        representation_key: the key as a dict.
        columns: the metrics to show, in order (the task's ``columns``).
    """

    name: str
    path: str
    task: str
    arch: str
    representation: str
    metrics: dict[str, float]
    representation_key: dict[str, str | int] = field(default_factory=dict)
    columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class EvaluationReport:
    """Results of ``brittle evaluate``.

    Attributes:
        treebank: the evaluated file.
        sentences: how many sentences.
        probes: one result per probe, in the order given.
        baselines: ``{"path": metrics, "majority": metrics}``.
        majority_trained_on: files the Majority baseline was learnt from.
        notes: things the user should know (e.g. the baseline fallback).
        versions: package versions.
    """

    treebank: str
    sentences: int
    probes: tuple[ProbeResult, ...]
    baselines: dict[str, dict[str, float]]
    majority_trained_on: tuple[str, ...]
    notes: tuple[str, ...] = ()
    versions: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> JSONObject:
        """JSON-ready form (NaN becomes ``null``)."""
        return _clean_object(
            {
                "treebank": self.treebank,
                "sentences": self.sentences,
                "probes": {
                    p.name: {
                        "task": p.task,
                        "architecture": p.arch,
                        "representation": p.representation_key,
                        "path": p.path,
                        "metrics": p.metrics,
                    }
                    for p in self.probes
                },
                "baselines": self.baselines,
                "majority_trained_on": list(self.majority_trained_on),
                "notes": list(self.notes),
                "versions": self.versions,
            }
        )


def _clean(obj: JSONLike) -> JSONValue:
    if isinstance(obj, float):
        return None if math.isnan(obj) or math.isinf(obj) else obj
    if isinstance(obj, Mapping):
        return _clean_object(obj)
    if isinstance(obj, Sequence) and not isinstance(obj, str):
        return [_clean(v) for v in obj]
    return obj


def _clean_object(obj: Mapping[str, JSONLike]) -> JSONObject:
    return {k: _clean(v) for k, v in obj.items()}


def _recorded_train_files(probe: Probe) -> list[Path]:
    """The training files a probe recorded (``info["training"]["train"]``)."""
    training = probe.info.get("training")
    files = training.get("train", []) if isinstance(training, dict) else []
    return [Path(p) for p in files]


def _unique_names(paths: Sequence[Path]) -> list[str]:
    names: list[str] = []
    for p in paths:
        base = p.resolve().name or str(p)
        name, k = base, 2
        while name in names:
            name, k = f"{base}-{k}", k + 1
        names.append(name)
    return names


def _check_input(path: Path, what: str) -> None:
    if not path.exists():
        raise ConfigError(f"{what} {path} not found")
    if path.is_dir():
        raise ConfigError(f"{what} {path} is a directory, not a CoNLL-U file")


def check_evaluation(
    treebank: Path,
    *,
    majority_from: Sequence[Path] = (),
    device: str | None = None,
    json_path: Path | None = None,
) -> None:
    """The mistakes of an evaluation that show before anything is read or loaded: the
    device, the treebanks, and a ``--json`` path that cannot become a file.

    Raises:
        ConfigError: the first mistake found, as one line naming the option.
    """
    check_device(device)
    _check_input(Path(treebank), "treebank")
    for path in majority_from:
        _check_input(Path(path), "--majority-from treebank")
    if json_path is not None:
        target = Path(json_path)
        if target.is_dir():
            raise ConfigError(f"--json {target} is a directory; give a file name")
        for parent in target.parents:  # the first existing ancestor must be a directory
            if parent.exists():
                if not parent.is_dir():
                    raise ConfigError(f"--json {target}: {parent} is a file, not a directory")
                break


def evaluate_probes(
    treebank: Path,
    probe_dirs: Sequence[Path],
    *,
    majority_from: Sequence[Path] = (),
    baselines: bool = True,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    device: str | None = None,
    reporter: Reporter | None = None,
) -> EvaluationReport:
    """Evaluate probes on ``treebank`` and compute the Path and Majority baselines.

    Args:
        treebank: CoNLL-U file with gold trees and tags.
        probe_dirs: probe directories written by ``train-probe``.
        majority_from: training treebanks for the Majority baseline (see module doc).
        baselines: compute the baselines at all.
        cache_dir: representation cache directory (``None``: the default).
        use_cache: use the disk cache for transformer vectors.
        device: device for models and probes (checked first, see
            :func:`check_evaluation`).
        reporter: progress.

    Raises:
        ConfigError: a device this machine lacks or a missing treebank, before anything
            is read; a probe that does not fit its model.
    """
    rep = reporter or NullReporter()
    check_evaluation(treebank, majority_from=majority_from, device=device)
    sentences = read_treebanks([treebank])
    golds = golds_of(sentences)
    loaded = [Probe.load(p) for p in probe_dirs]
    names = _unique_names(list(probe_dirs))
    notes: list[str] = []

    # group probes by the backend that reopens them
    groups: dict[str, list[int]] = {}
    for i, probe in enumerate(loaded):
        groups.setdefault(json.dumps(probe.backend, sort_keys=True), []).append(i)
    results: dict[int, ProbeResult] = {}
    for desc, members in groups.items():
        opts = json.loads(desc)
        backend = reopen_backend(opts, device=device)
        try:
            layers = sorted({loaded[i].key.layer for i in members})
            for i in members:
                loaded[i].check_representation(backend.key(loaded[i].key.layer))
            cache = default_cache(backend, cache_dir) if use_cache else None
            rep.start(f"vectors: {backend.model} layers {layers}", len(sentences))
            data = encode_split_layers(
                sentences,
                backend,
                layers=layers,
                cache=cache,
                progress=rep.advance,
                sources=(treebank,),
            )
            rep.finish()
            by_layer = dict(zip(layers, data, strict=True))
            for i in members:
                probe = loaded[i]
                d = by_layer[probe.key.layer]
                rep.start(f"probe {names[i]}", None)
                metrics = probe.aggregate(probe.predict(d), golds)
                rep.finish()
                results[i] = ProbeResult(
                    name=names[i],
                    path=str(probe_dirs[i]),
                    task=probe.spec.task,
                    arch=probe.spec.arch,
                    representation=probe.key.describe(),
                    metrics=metrics,
                    representation_key=probe.key.to_dict(),
                    columns=probe.task.columns,
                )
        finally:
            backend.close()

    base: dict[str, dict[str, float]] = {}
    trained_on: list[str] = []
    if baselines:
        sources = [Path(p) for p in majority_from]
        if not sources:
            recorded = [p for probe in loaded for p in _recorded_train_files(probe)]
            sources = list(dict.fromkeys(p for p in recorded if p.is_file()))
            if recorded and len(sources) < len(set(recorded)):
                notes.append("some training files recorded in the probes no longer exist")
        if not sources:
            sources = [treebank]
            notes.append(
                "the Majority baseline was learnt from the evaluated treebank itself "
                "(no training treebank given or recorded): it is optimistic"
            )
        rep.start("baselines", None)
        majority = MajorityTrees.fit(golds_of(read_treebanks(sources)))
        base["path"] = baseline_metrics(golds, majority.path)
        base["majority"] = baseline_metrics(golds, majority.heads)
        rep.finish()
        trained_on = [str(p) for p in sources]
    return EvaluationReport(
        treebank=str(treebank),
        sentences=len(sentences),
        probes=tuple(results[i] for i in range(len(loaded))),
        baselines=base,
        majority_trained_on=tuple(trained_on),
        notes=tuple(notes),
        versions=package_versions(),
    )


def write_report_json(report: EvaluationReport, path: str | os.PathLike[str]) -> None:
    """Write ``report.to_dict()`` atomically as indented JSON."""
    with atomic_write(path) as handle:
        json.dump(report.to_dict(), handle, indent=2)
        handle.write("\n")
