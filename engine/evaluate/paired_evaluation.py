"""``evaluate --paired``: every probe on a perturbed treebank beside its plain original.

The two files must hold the same sentences in the same order (same ids and word counts),
as ``brittle perturb`` writes them. Each probe is scored on both; the drop is
``plain - perturbed`` (positive: the perturbation hurt the probe), with a paired
percentile bootstrap over sentences: each resample draws sentence indices with
replacement, and the corpus metric (micro UUAS, length-binned DSpr, ...) is recomputed
on the same indices of both files. Path and Majority are trees guessed from the
sentence length alone, so they are scored on each file's own gold trees.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np

from brittle.engine.core.atomic import write_json
from brittle.engine.core.errors import BrittleInputError
from brittle.engine.core.json_types import JSONObject
from brittle.engine.core.sentence import Sentence
from brittle.engine.evaluate.evaluation import check_evaluation, expand_probe_dirs, probe_names
from brittle.engine.probes.probe_data import read_treebanks
from brittle.engine.probes.probe_jobs import NullReporter, Reporter
from brittle.engine.probes.probe_vectors import BLOCK, ProbeVectors
from brittle.engine.runs.shards import ShardExecutor
from brittle.scorers.baselines import MajorityTrees, baseline_metrics
from brittle.scorers.metrics import aggregate_distance, score_distances_many
from brittle.scorers.probe import Probe, package_versions
from brittle.scorers.probe_gold import Gold, golds_of
from brittle.scorers.probe_tasks import DistanceTask, PerceptronTask, Prediction
from brittle.scorers.representations import RepresentationKey

__all__ = [
    "PairedMetric",
    "PairedReport",
    "PairedRow",
    "check_pairs",
    "evaluate_paired",
    "paired_bootstrap",
    "write_paired_json",
]

#: Resamples of the bootstrap by default, and the confidence level of its interval.
DEFAULT_RESAMPLES = 1000
CONFIDENCE = 0.95

#: ``score(indices, perturbed)``: corpus metrics of one file on those sentences (None: all).
Score = Callable[[Sequence[int] | None, bool], Mapping[str, float]]


@dataclass(frozen=True)
class PairedMetric:
    """One metric on the plain and the perturbed file, the drop and its interval.

    ``drop = plain - perturbed``; ``low``/``high`` bound its 95% percentile bootstrap
    interval (NaN when the metric is undefined on some resample, or without resamples).
    """

    plain: float
    perturbed: float
    drop: float
    low: float
    high: float


@dataclass(frozen=True)
class PairedRow:
    """A probe (or a baseline tree) and its paired metrics, in the task's column order."""

    name: str
    kind: str
    metrics: dict[str, PairedMetric]


@dataclass(frozen=True)
class PairedReport:
    """Results of ``brittle evaluate PERTURBED --paired PLAIN``."""

    plain: str
    perturbed: str
    sentences: int
    resamples: int
    seed: int
    rows: tuple[PairedRow, ...]
    majority_trained_on: tuple[str, ...] = ()
    versions: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> JSONObject:
        """JSON-ready form (NaN becomes ``null``)."""

        def num(x: float) -> float | None:
            return None if math.isnan(x) or math.isinf(x) else x

        return {
            "plain": self.plain,
            "perturbed": self.perturbed,
            "sentences": self.sentences,
            "resamples": self.resamples,
            "confidence": CONFIDENCE,
            "seed": self.seed,
            "rows": {
                r.name: {
                    "kind": r.kind,
                    "metrics": {
                        k: {
                            "plain": num(m.plain),
                            "perturbed": num(m.perturbed),
                            "drop": num(m.drop),
                            "ci_low": num(m.low),
                            "ci_high": num(m.high),
                        }
                        for k, m in r.metrics.items()
                    },
                }
                for r in self.rows
            },
            "majority_trained_on": list(self.majority_trained_on),
            "versions": dict(self.versions),
        }


def check_pairs(plain: Sequence[Sentence], perturbed: Sequence[Sentence], path: Path) -> None:
    """The perturbed file holds the plain file's sentences, in order, word for word count.

    Raises:
        BrittleInputError: naming the perturbed file and the first sentence that differs.
    """
    if len(plain) != len(perturbed):
        raise BrittleInputError(
            path, None, f"{len(perturbed)} sentences, but the --paired file has {len(plain)}"
        )
    for i, (a, b) in enumerate(zip(plain, perturbed, strict=True)):
        if a.sent_id != b.sent_id or len(a) != len(b):
            raise BrittleInputError(
                path,
                None,
                f"sentence {i + 1} ({b.sent_id}, {len(b)} words) does not match the --paired "
                f"file's ({a.sent_id}, {len(a)} words): pair a file with its own original",
            )


def paired_bootstrap(
    n: int,
    aggregate: Callable[[np.ndarray], Mapping[str, float]],
    *,
    resamples: int,
    seed: int,
) -> dict[str, tuple[float, float]]:
    """Percentile interval of each metric ``aggregate(indices)`` returns.

    Args:
        n: sentences.
        aggregate: metric name -> value of a resample, given int64 indices (n,) drawn
            with replacement; for a paired drop it computes both files on the same
            indices.
        resamples: how many resamples (0: no interval, NaN bounds).
        seed: seeds the draws.

    Returns:
        metric name -> (low, high) at :data:`CONFIDENCE`; NaN when the metric was NaN on
        any resample.
    """
    if resamples <= 0 or n == 0:
        return {}
    rng = np.random.default_rng([seed & 0xFFFFFFFF, 0xB007])
    values: dict[str, list[float]] = {}
    for _ in range(resamples):
        idx = rng.integers(0, n, size=n)
        for k, v in aggregate(idx).items():
            values.setdefault(k, []).append(v)
    tail = (1.0 - CONFIDENCE) / 2 * 100
    out: dict[str, tuple[float, float]] = {}
    for k, vs in values.items():
        arr = np.asarray(vs, dtype=np.float64)
        if np.isnan(arr).any():
            out[k] = (float("nan"), float("nan"))
        else:
            lo, hi = np.percentile(arr, [tail, 100 - tail])
            out[k] = (float(lo), float(hi))
    return out


def _paired_metrics(
    score: Score,
    columns: Sequence[str],
    n: int,
    *,
    resamples: int,
    seed: int,
) -> dict[str, PairedMetric]:
    """``score(indices, perturbed)`` is a metric dict of one file on those sentences."""
    plain = score(None, False)
    pert = score(None, True)

    def drops(idx: np.ndarray) -> dict[str, float]:
        a, b = score(idx.tolist(), False), score(idx.tolist(), True)
        return {c: a[c] - b[c] for c in columns if c in a and c in b}

    ci = paired_bootstrap(n, drops, resamples=resamples, seed=seed)
    nan = float("nan")
    return {
        c: PairedMetric(plain[c], pert[c], plain[c] - pert[c], *ci.get(c, (nan, nan)))
        for c in columns
        if c in plain and c in pert
    }


def _scorer(
    probe: Probe, preds: Mapping[bool, Sequence[Prediction]], golds: Mapping[bool, Sequence[Gold]]
) -> Score:
    """``score(indices, perturbed)``: the probe's corpus metrics on those sentences.

    Distance and perceptron probes score each sentence once and aggregate the resampled
    sentence scores (what their task's ``aggregate`` does, so equal to the bit); other
    tasks aggregate the resampled predictions again.
    """
    if isinstance(probe.task, (DistanceTask, PerceptronTask)):
        per_sentence = {
            which: score_distances_many(
                preds[which], [g.heads for g in golds[which]], punct=[g.punct for g in golds[which]]
            )
            for which in (False, True)
        }

        def distance_score(idx: Sequence[int] | None, which: bool) -> Mapping[str, float]:
            s = per_sentence[which]
            return aggregate_distance(s if idx is None else [s[i] for i in idx])

        return distance_score

    def score(idx: Sequence[int] | None, which: bool) -> Mapping[str, float]:
        p, g = preds[which], golds[which]
        if idx is not None:
            p, g = [p[i] for i in idx], [g[i] for i in idx]
        return probe.aggregate(p, g)

    return score


def _check_one(probe: Probe, keys: Sequence[RepresentationKey]) -> None:
    """The key of the probe's one layer is the probe's representation."""
    probe.check_representation(keys[0])


def evaluate_paired(
    perturbed: Path,
    plain: Path,
    probe_dirs: Sequence[Path],
    *,
    majority_from: Sequence[Path] = (),
    baselines: bool = True,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    device: str | None = None,
    reporter: Reporter | None = None,
    executor: ShardExecutor | None = None,
    chunk: int = BLOCK,
) -> PairedReport:
    """Each probe's metrics on ``plain`` and ``perturbed``, the drop and its interval.

    ``probe_dirs`` may name directories of probes (:func:`expand_probe_dirs`).
    ``executor`` computes the vectors, ``chunk`` sentences a shard
    (:mod:`brittle.engine.probes.probe_vectors`); predictions, metrics and the bootstrap run
    here over every sentence in input order, so the report is the same as without it.

    Raises:
        ConfigError: a missing file or a device this machine lacks, before anything
            loads; a ``--probe`` directory that holds no probe.
        BrittleInputError: the two files do not hold the same sentences.
    """
    rep = reporter or NullReporter()
    check_evaluation(perturbed, majority_from=majority_from, device=device)
    check_evaluation(plain, device=device)
    probe_dirs = expand_probe_dirs(probe_dirs)
    plain_s = read_treebanks([plain])
    pert_s = read_treebanks([perturbed])
    check_pairs(plain_s, pert_s, perturbed)
    golds = {False: golds_of(plain_s), True: golds_of(pert_s)}
    n = len(plain_s)
    rows: list[PairedRow] = []
    loaded = [Probe.load(p) for p in probe_dirs]
    names = probe_names(probe_dirs)
    for path, name, probe in zip(probe_dirs, names, loaded, strict=True):
        preds: dict[bool, list[Prediction]] = {}
        with ProbeVectors(
            probe.backend,
            device=device,
            cache_dir=cache_dir,
            use_cache=use_cache,
            chunk=chunk,
            executor=executor,
        ) as vectors:
            for which, sents, src in ((False, plain_s, plain), (True, pert_s, perturbed)):
                (data,) = vectors.encode(
                    sents,
                    layers=[probe.key.layer],
                    check=partial(_check_one, probe),
                    reporter=rep,
                    model=probe.key.model,
                    sources=(src,),
                )
                preds[which] = probe.predict(data)

        score = _scorer(probe, preds, golds)

        rep.start(f"bootstrap {path.name}", None)
        metrics = _paired_metrics(score, probe.task.columns, n, resamples=resamples, seed=seed)
        rep.finish()
        rows.append(PairedRow(name, f"{probe.spec.task} ({probe.spec.arch})", metrics))

    trained_on: list[str] = []
    if baselines:
        sources = [Path(p) for p in majority_from]
        if not sources:
            recorded: list[Path] = []
            for probe in loaded:
                training = probe.info.get("training")
                files = training.get("train", []) if isinstance(training, dict) else []
                recorded.extend(Path(f) for f in files)
            sources = list(dict.fromkeys(p for p in recorded if p.is_file())) or [plain]
        majority = MajorityTrees.fit(golds_of(read_treebanks(sources)))
        trained_on = [str(p) for p in sources]
        columns = ("uuas", "dspr")
        for name, guess in (("path", majority.path), ("majority", majority.heads)):

            def tree_score(
                idx: Sequence[int] | None,
                which: bool,
                guess: Callable[[int], np.ndarray] = guess,
            ) -> Mapping[str, float]:
                g: Sequence[Gold] = golds[which]
                if idx is not None:
                    g = [g[i] for i in idx]
                return baseline_metrics(g, guess)

            rep.start(f"bootstrap {name}", None)
            # A guessed tree depends on the length only: its drop is the gold trees'.
            metrics = _paired_metrics(tree_score, columns, n, resamples=0, seed=seed)
            rep.finish()
            rows.append(PairedRow(name, "baseline tree", metrics))
    return PairedReport(
        plain=str(plain),
        perturbed=str(perturbed),
        sentences=n,
        resamples=resamples,
        seed=seed,
        rows=tuple(rows),
        majority_trained_on=tuple(trained_on),
        versions=package_versions(),
    )


def write_paired_json(report: PairedReport, path: str | os.PathLike[str]) -> None:
    """Write ``report.to_dict()`` atomically as indented JSON."""
    write_json(path, report.to_dict())
