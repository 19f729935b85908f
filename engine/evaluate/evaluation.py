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
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from brittle.engine.core.atomic import check_output, write_json
from brittle.engine.core.errors import ConfigError
from brittle.engine.core.json_types import JSONLike, JSONObject, JSONValue
from brittle.engine.core.overlap import check_no_overlap, named
from brittle.engine.probes.probe_data import read_treebanks
from brittle.engine.probes.probe_jobs import NullReporter, Reporter
from brittle.engine.probes.probe_sweep import SUMMARY as SWEEP_SUMMARY
from brittle.engine.probes.probe_vectors import BLOCK, ProbeVectors
from brittle.engine.runs.shards import ShardExecutor
from brittle.scorers.baselines import MajorityTrees, baseline_metrics
from brittle.scorers.probe import METADATA, Probe, package_versions
from brittle.scorers.probe_gold import golds_of
from brittle.scorers.representations import RepresentationKey, check_device

__all__ = [
    "EvaluationReport",
    "ProbeResult",
    "check_evaluation",
    "evaluate_probes",
    "expand_probe_dirs",
    "natural_key",
    "probe_names",
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


def probe_names(paths: Sequence[Path]) -> list[str]:
    """The names tables and JSON give probes: each directory's name (as given, so a
    link keeps its own name), prefixed by its sweep's name for the probes of a
    ``train-probe --layer all`` directory (``minilm-distance/layer2``), and made
    unique with ``-2``, ``-3``."""
    names: list[str] = []
    for p in paths:
        p = Path(p)
        base = p.name if p.name not in ("", ".", "..") else p.resolve().name or str(p)
        parent = p.parent if p.name not in ("", ".", "..") else p.resolve().parent
        if (parent / SWEEP_SUMMARY).is_file():
            base = f"{parent.name or parent.resolve().name}/{base}"
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


def natural_key(name: str) -> tuple[tuple[int, int, str], ...]:
    """Sort key that compares the runs of digits in ``name`` as numbers and the rest as
    text: ``layer2`` before ``layer10``."""
    return tuple(
        (0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name)
    )


def expand_probe_dirs(paths: Sequence[Path]) -> list[Path]:
    """The probe directories ``--probe`` names: each path that is a probe (it holds the
    probe metadata file) as it is; each directory that is not a probe but holds probe
    directories one level down (as ``train-probe --layer all`` writes them, beside a
    summary file), those, in natural order of their names (``layer2`` before
    ``layer10``). Plain files and other directories inside are ignored; paths that do
    not exist are left for the probe loader to report.

    Raises:
        ConfigError: a directory that is neither a probe nor holds any.
    """
    out: list[Path] = []
    for path in paths:
        path = Path(path)
        if not path.is_dir() or (path / METADATA).is_file():
            out.append(path)
            continue
        inner = [p for p in path.iterdir() if p.is_dir() and (p / METADATA).is_file()]
        if not inner:
            raise ConfigError(
                f"--probe {path} is neither a probe directory (no {METADATA}) nor a "
                f"directory of probe directories"
            )
        out.extend(sorted(inner, key=lambda p: natural_key(p.name)))
    return out


def check_evaluation(
    treebank: Path,
    *,
    majority_from: Sequence[Path] = (),
    device: str | None = None,
    json_path: Path | None = None,
    probes: Sequence[Path] = (),
    paired: Path | None = None,
) -> None:
    """The mistakes of an evaluation that show before anything is read or loaded: the
    device, the treebanks, a ``--json`` path that cannot be written, and a ``--json``
    that would replace an input (the treebanks or a probe's files).

    Raises:
        ConfigError: the first mistake found, as one line naming the option.
        OutputError: ``--json`` cannot be written (a directory, under a file, in a
            directory that takes no new files).
    """
    check_device(device)
    _check_input(Path(treebank), "treebank")
    for path in majority_from:
        _check_input(Path(path), "--majority-from treebank")
    if paired is not None:
        _check_input(Path(paired), "--paired treebank")
    inputs = [
        *named("TREEBANK", treebank),
        *named("--paired", paired),
        *named("--probe", probes),
        *named("--majority-from", majority_from),
    ]
    check_no_overlap(inputs, named("--json", json_path))
    if json_path is not None:
        target = Path(json_path)
        if target.is_dir():
            raise ConfigError(f"--json {target} is a directory; give a file name")
        for parent in target.parents:  # the first existing ancestor must be a directory
            if parent.exists():
                if not parent.is_dir():
                    raise ConfigError(f"--json {target}: {parent} is a file, not a directory")
                break
        check_output(json_path)  # and it takes new files (not read-only, permitted)


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
    executor: ShardExecutor | None = None,
    chunk: int = BLOCK,
) -> EvaluationReport:
    """Evaluate probes on ``treebank`` and compute the Path and Majority baselines.

    Args:
        treebank: CoNLL-U file with gold trees and tags.
        probe_dirs: probe directories written by ``train-probe``, or directories of
            them (:func:`expand_probe_dirs`).
        majority_from: training treebanks for the Majority baseline (see module doc).
        baselines: compute the baselines at all.
        cache_dir: representation cache directory (``None``: the default).
        use_cache: use the disk cache for transformer vectors.
        device: device for models and probes (checked first, see
            :func:`check_evaluation`).
        reporter: progress.
        executor: workers that compute the vectors, ``chunk`` sentences a shard
            (:mod:`brittle.engine.probes.probe_vectors`); the probes predict and the metrics
            are aggregated here, over every sentence in input order, so the report is
            the same as without workers.
        chunk: sentences per representation block (and per shard).

    Raises:
        ConfigError: a device this machine lacks or a missing treebank, before anything
            is read; a probe that does not fit its model; a ``--probe`` directory that
            holds no probe.
    """
    rep = reporter or NullReporter()
    check_evaluation(treebank, majority_from=majority_from, device=device)
    probe_dirs = expand_probe_dirs(probe_dirs)
    sentences = read_treebanks([treebank])
    golds = golds_of(sentences)
    loaded = [Probe.load(p) for p in probe_dirs]
    names = probe_names(list(probe_dirs))
    notes: list[str] = []

    # group probes by the backend that reopens them
    groups: dict[str, list[int]] = {}
    for i, probe in enumerate(loaded):
        groups.setdefault(json.dumps(probe.backend, sort_keys=True), []).append(i)
    results: dict[int, ProbeResult] = {}
    for desc, members in groups.items():
        layers = sorted({loaded[i].key.layer for i in members})

        def check(
            keys: Sequence[RepresentationKey],
            members: list[int] = members,
            layers: list[int] = layers,
        ) -> None:
            by_layer = dict(zip(layers, keys, strict=True))
            for i in members:
                loaded[i].check_representation(by_layer[loaded[i].key.layer])

        with ProbeVectors(
            json.loads(desc),
            device=device,
            cache_dir=cache_dir,
            use_cache=use_cache,
            chunk=chunk,
            executor=executor,
        ) as vectors:
            data = vectors.encode(
                sentences,
                layers=layers,
                check=check,
                reporter=rep,
                model=loaded[members[0]].key.model,
                sources=(treebank,),
            )
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
    write_json(path, report.to_dict())
