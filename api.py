"""brittle's Python API: ``attack``, ``perturb`` and ``evaluate`` in memory.

Each function takes the options of its command (``brittle attack``, ``brittle perturb``,
``brittle evaluate``) as keyword arguments of the same names and defaults (a flag's
dashes become underscores; a repeatable option takes a sequence), builds the same typed
configuration, runs the same engine and returns a frozen record: the rows (one per
sentence, or per probe), the summary and, when ``out=`` was given, where the files
went. Without ``out=`` nothing is left on disk: an attack runs into a temporary
directory, removed once its rows are read. The same seed gives the same rows as the
command on the same input.

``to_pandas()`` on a result gives its rows as a pandas ``DataFrame`` (pandas is an
optional dependency: ``pip install 'brittle[pandas]'``).

The functions are re-exported by the top package (``brittle.attack``, ...), which imports
this module only when one of them is first used, so ``import brittle`` stays cheap.
Errors are those of the commands: :class:`~brittle.engine.core.errors.ConfigError` for
a bad option, :class:`~brittle.engine.core.errors.BrittleInputError` for bad input,
:class:`~brittle.engine.core.errors.ResourceMissingError` for a missing model.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from brittle.engine.attack import AttackConfig, attack_config, run_attack
from brittle.engine.attack.preflight import preflight
from brittle.engine.core.errors import ConfigError, ResourceMissingError
from brittle.engine.core.json_types import JSONObject
from brittle.engine.core.overlap import check_no_overlap, named
from brittle.engine.core.sentence import Sentence
from brittle.engine.evaluate.evaluation import (
    EvaluationReport,
    ProbeResult,
    check_evaluation,
    evaluate_probes,
    write_report_json,
)
from brittle.engine.perturb.perturb_html import write_perturb_set
from brittle.engine.perturb.perturb_run import (
    BUDGET_ALL,
    DEFAULT_MAX_SYNTAX_DISTANCE,
    PerturbConfig,
    PerturbSummary,
    SentenceRecord,
    check_perturb_outputs,
    perturb_treebank,
)
from brittle.engine.reports.report import Summary
from brittle.engine.reports.results import RESULTS, ResultRow, read_rows
from brittle.engine.runs.run_options import (
    make_executor,
    resolve_generator,
)
from brittle.engine.runs.shards import ShardExecutor
from brittle.scorers.representations import check_device, check_dtype

if TYPE_CHECKING:
    from pandas import DataFrame

__all__ = [
    "AttackResults",
    "EvaluationResults",
    "PerturbResults",
    "attack",
    "evaluate",
    "perturb",
]

#: A file or directory name, as ``open`` takes it.
PathLike = str | os.PathLike[str]


def _frame(records: Sequence[Mapping[str, object]]) -> DataFrame:
    """``records`` as a pandas ``DataFrame``, one row each, nested mappings flattened
    into dotted column names (``distance.uuas.drop``).

    Raises:
        ResourceMissingError: pandas is not installed.
    """
    try:
        import pandas  # an optional dependency, imported when a view is asked for
    except ImportError:
        raise ResourceMissingError(
            "the pandas package (for to_pandas())",
            ["the current Python environment"],
            "pip install 'brittle[pandas]'",
        ) from None
    return pandas.DataFrame.from_records([_flat(r) for r in records])


def _flat(record: Mapping[str, object], prefix: str = "") -> dict[str, object]:
    """``record`` with its nested mappings spread into dotted keys."""
    out: dict[str, object] = {}
    for key, value in record.items():
        if isinstance(value, Mapping):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


@dataclass(frozen=True)
class AttackResults:
    """What :func:`attack` found.

    Attributes:
        config: the settings the attack ran with (as ``config.json`` records them).
        rows: one row per sentence, in treebank order: the lines of ``results.jsonl``.
            Scores are the probes' metrics (fractions in [0, 1] for UUAS, accuracy and
            the like; Spearman correlations for ``dspr``); ``drop`` is clean minus
            perturbed; ``seconds`` is wall-clock time, the only field that differs
            between two runs with the same seed.
        summary: ``summary.json``: the worst-case drop per task, success rate, epsilon
            (L2 and cosine distance of the representations), queries per sentence.
        out: the output directory (``adversarial.conllu``, ``results.jsonl``, the
            summaries, ``plots/``, ``report.html``), or ``None`` when the attack ran
            into a temporary directory.
    """

    config: AttackConfig
    rows: tuple[ResultRow, ...]
    summary: Summary
    out: Path | None

    def to_pandas(self) -> DataFrame:
        """The rows as a ``DataFrame``, one row per sentence: the fields of
        ``results.jsonl``, each task's scores in columns ``TASK.clean``,
        ``TASK.perturbed`` and ``TASK.drop`` (``distance.uuas.drop``).

        Raises:
            ResourceMissingError: pandas is not installed.
        """
        return _frame([row.to_json() for row in self.rows])


@dataclass(frozen=True)
class PerturbResults:
    """What :func:`perturb` did.

    Attributes:
        config: the settings the run had.
        rows: one record per sentence, in input order (the ``sentences`` of
            ``--report``'s JSON): its status, candidates drawn and admissible, words
            changed, syntax distance (normalised tree edit distance, 0 = the same
            parse), surprisal increase (bits per word) and similarity (cosine).
        sentences: the output sentences, in input order (perturbed, or unchanged).
        summary: counts per status and means over the perturbed sentences.
        out, report, html: the files written (``None``: not asked for).
    """

    config: PerturbConfig
    rows: tuple[SentenceRecord, ...]
    sentences: tuple[Sentence, ...]
    summary: PerturbSummary
    out: Path | None
    report: Path | None
    html: Path | None

    def to_pandas(self) -> DataFrame:
        """The rows as a ``DataFrame``, one row per sentence (the record's fields; the
        candidates each constraint rejected in columns ``rejected.NAME``).

        Raises:
            ResourceMissingError: pandas is not installed.
        """
        return _frame([row.to_json() for row in self.rows])


@dataclass(frozen=True)
class EvaluationResults:
    """What :func:`evaluate` measured.

    Attributes:
        report: the evaluation: the treebank's sentence count, the notes (a baseline's
            fallback, ...), the versions.
        rows: one result per probe, in the order given: its task, architecture,
            representation and metrics (fractions in [0, 1], Spearman correlations
            for ``dspr``).
        baselines: per baseline tree (``path``, ``majority``), its metrics.
        summary: the JSON ``--json`` writes.
        out: the JSON file written (``None``: not asked for).
    """

    report: EvaluationReport
    rows: tuple[ProbeResult, ...]
    baselines: Mapping[str, Mapping[str, float]]
    summary: JSONObject
    out: Path | None

    def to_pandas(self) -> DataFrame:
        """One row per probe, then one per baseline: ``name``, ``kind`` (``probe`` or
        ``baseline``), ``task``, ``arch``, ``representation`` and a column per metric.

        Raises:
            ResourceMissingError: pandas is not installed.
        """
        records: list[dict[str, object]] = [
            {
                "name": p.name,
                "kind": "probe",
                "task": p.task,
                "arch": p.arch,
                "representation": p.representation,
                **p.metrics,
            }
            for p in self.rows
        ]
        records += [
            {"name": name, "kind": "baseline", **metrics}
            for name, metrics in self.baselines.items()
        ]
        return _frame(records)


@contextlib.contextmanager
def _executor(workers: int | None, ray: str | None) -> Iterator[ShardExecutor | None]:
    """The workers asked for, open for the block (``None``: this process)."""
    executor = make_executor(workers, ray)
    if executor is None:
        yield None
        return
    with executor:
        yield executor


def attack(
    treebank: PathLike,
    probes: Sequence[PathLike],
    *,
    method: str | None = None,
    validity: str | None = None,
    search: str = "beam",
    budget: int = 3,
    candidates: int = 20,
    beam_width: int = 4,
    guided_batch: int | None = None,
    guided_warmup: float | None = None,
    check_all: bool = False,
    max_syntax_distance: float = 0.2,
    parser: str = "spacy",
    constraints: Sequence[str] = (),
    query_budget: int | None = None,
    time_budget: float | None = None,
    anytime: bool = False,
    target: str | None = None,
    objective: Sequence[str] = (),
    generator_options: Sequence[str] = (),
    lm: str | None = None,
    lm_kind: str | None = None,
    sense: str | None = None,
    quality: bool = False,
    grade: bool = True,
    workers: int | None = None,
    ray: str | None = None,
    device: str | None = None,
    dtype: str | None = None,
    seed: int = 0,
    limit: int | None = None,
    out: PathLike | None = None,
    resume: bool = False,
    overwrite: bool = False,
) -> AttackResults:
    """``brittle attack``: per sentence of ``treebank``, the syntax-preserving
    perturbation that most damages the probes.

    The options are the command's (``brittle attack --help``), with one budget (tau,
    the most words substituted) per call. ``method`` ``None`` is the command's default
    (``copos``), or ``validity``'s preset's generator. ``max_syntax_distance`` is a
    normalised tree edit distance (0: the same parse, 1: nothing shared);
    ``query_budget`` counts model evaluations per sentence, ``time_budget`` caps each
    sentence's search in wall-clock seconds (results then depend on the machine's
    speed), ``anytime`` records in each row how its best drop grew; ``target``
    (``parser:NAME``) attacks a dependency parser too (column ``parser.uas``; ``probes``
    may then be empty); ``objective`` names probe tasks or metrics (``distance``,
    ``pos.pos_acc``, ``parser``).
    ``workers``/``ray``: as ``--workers``/``--ray``.

    Args:
        treebank: the CoNLL-U file attacked.
        probes: probe directories written by ``brittle train-probe``.
        out: the output directory (as ``--out``; ``resume`` and ``overwrite`` as the
            command's flags); ``None``: a temporary directory, removed afterwards.

    Returns:
        The rows of ``results.jsonl``, the summary and the output directory.

    Raises:
        ConfigError: a bad option (before anything loads).
        BrittleInputError: the treebank or a probe cannot be read.
        ResourceMissingError: a model or lexicon is not installed.
    """
    if resume and overwrite:
        raise ConfigError("resume continues OUT and overwrite discards it: give one")
    device = check_device(device)
    dtype = check_dtype(dtype, device)
    config = attack_config(
        os.fspath(treebank),
        [os.fspath(p) for p in probes],
        method=method if method is not None or validity is not None else "copos",
        validity=validity,
        search=search,
        budget=budget,
        candidates=candidates,
        beam_width=beam_width,
        max_syntax_distance=max_syntax_distance,
        parser=parser,
        query_budget=query_budget,
        seed=seed,
        limit=limit,
        objective=objective,
        constraints=constraints,
        generator_options=generator_options,
        lm=lm,
        lm_kind=lm_kind,
        sense=sense,
        check_all=check_all,
        dtype=dtype,
        time_budget=time_budget,
        anytime=anytime,
        target=target,
        guided_batch=guided_batch,
        guided_warmup=guided_warmup,
    )
    with contextlib.ExitStack() as stack:
        if out is None:
            out_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="brittle-")))
            out_dir = out_dir / "attack"
        else:
            out_dir = Path(out)
        checked = preflight(config, out_dir)
        for warning in checked.warnings:
            warnings.warn(warning, stacklevel=2)
        executor = stack.enter_context(_executor(workers, ray))
        summary = run_attack(
            config,
            out_dir,
            resume=resume,
            overwrite=overwrite,
            checked=checked,
            quality=quality,
            grade=grade,
            executor=executor,
            device=device,
        )
        rows = tuple(read_rows(out_dir / RESULTS))
    return AttackResults(config, rows, summary, None if out is None else Path(out))


def perturb(
    treebank: PathLike,
    *,
    method: str | None = None,
    validity: str | None = None,
    budget: int | Literal["all"] = 1,
    candidates: int = 20,
    max_syntax_distance: float = DEFAULT_MAX_SYNTAX_DISTANCE,
    parser: str = "spacy",
    constraints: Sequence[str] = (),
    enforce_pos: bool = False,
    generator_options: Sequence[str] = (),
    lm: str | None = None,
    lm_kind: str | None = None,
    sense: str | None = None,
    quality: bool = True,
    grade: bool = True,
    device: str | None = None,
    dtype: str | None = None,
    seed: int = 0,
    limit: int | None = None,
    workers: int | None = None,
    ray: str | None = None,
    out: PathLike | None = None,
    report: PathLike | None = None,
    html: PathLike | None = None,
) -> PerturbResults:
    """``brittle perturb``: one syntax-preserving perturbation per sentence of
    ``treebank`` (La Malfa et al.'s Algorithm 1), in memory.

    The options are the command's (``brittle perturb --help``): give ``method`` or a
    ``validity`` preset. ``budget`` is tau, the most words changed (``"all"``: every
    eligible word); ``max_syntax_distance`` a normalised tree edit distance (0: the
    same parse); ``quality`` ``False`` is ``--no-quality``, ``grade`` ``False``
    ``--no-grade``.

    Args:
        treebank: the CoNLL-U file.
        out: also write the perturbed CoNLL-U there (``--out``), with ``report`` (the
            JSON report) and ``html`` (the page) as one set; ``report`` and ``html``
            need ``out``.

    Returns:
        One record per sentence, the output sentences, the summary, the files written.

    Raises:
        ConfigError: a bad option (before anything loads).
        BrittleInputError: the treebank cannot be read.
        ResourceMissingError: a model or lexicon is not installed.
        OutputError: an output cannot be written.
    """
    if out is None and (report is not None or html is not None):
        raise ConfigError("report and html are written with out: give out as well")
    dtype = check_dtype(dtype, device)
    chosen, applied, options = resolve_generator(
        validity, method, constraints, generator_options, lm=lm, lm_kind=lm_kind, sense=sense,
        dtype=dtype,
    )  # fmt: skip
    config = PerturbConfig(
        method=chosen,
        budget=BUDGET_ALL if budget == "all" else budget,
        candidates=candidates,
        max_syntax_distance=max_syntax_distance,
        parser=parser,
        seed=seed,
        limit=limit,
        enforce_pos=enforce_pos,
        constraints=applied,
        generator_options=options,
        quality=quality,
        grade=grade,
        device=device,
        dtype=dtype,
    )
    if out is not None:
        outputs = [*named("--out", out), *named("--report", report), *named("--html", html)]
        check_no_overlap(named("TREEBANK", treebank), outputs)
        check_perturb_outputs(out, report=report, html=html)
    with _executor(workers, ray) as executor:
        result = perturb_treebank(treebank, config, executor=executor)
    if out is not None:
        write_perturb_set(result, out, report=report, html=html)
    return PerturbResults(
        config=config,
        rows=result.records,
        sentences=result.sentences,
        summary=result.summary(),
        out=_path(out),
        report=_path(report),
        html=_path(html),
    )


def _path(path: PathLike | None) -> Path | None:
    return None if path is None else Path(path)


def evaluate(
    treebank: PathLike,
    probes: Sequence[PathLike] = (),
    *,
    majority_from: Sequence[PathLike] = (),
    baselines: bool = True,
    device: str | None = None,
    cache_dir: PathLike | None = None,
    cache: bool = True,
    workers: int | None = None,
    ray: str | None = None,
    out: PathLike | None = None,
) -> EvaluationResults:
    """``brittle evaluate``: every metric of each probe on ``treebank``, beside the
    Path and Majority baseline trees.

    The options are the command's (``brittle evaluate --help``): ``baselines``
    ``False`` is ``--no-baselines``, ``cache`` ``False`` is ``--no-cache``, ``out`` is
    ``--json``.

    Args:
        treebank: the CoNLL-U file, with gold trees and tags.
        probes: probe directories (or directories of them, as ``train-probe --layer
            all`` writes them).

    Returns:
        One result per probe, the baselines' metrics, the JSON summary.

    Raises:
        ConfigError: a bad option, a probe that does not fit its model.
        BrittleInputError: a treebank cannot be read.
        ResourceMissingError: a model is not installed.
    """
    if not probes and not baselines:
        raise ConfigError("nothing to do: give probes, or keep the baselines")
    check_evaluation(
        Path(treebank),
        majority_from=[Path(p) for p in majority_from],
        device=device,
        json_path=_path(out),
        probes=[Path(p) for p in probes],
    )
    with _executor(workers, ray) as executor:
        report = evaluate_probes(
            Path(treebank),
            [Path(p) for p in probes],
            majority_from=[Path(p) for p in majority_from],
            baselines=baselines,
            cache_dir=None if cache_dir is None else Path(cache_dir),
            use_cache=cache,
            device=device,
            executor=executor,
        )
    if out is not None:
        write_report_json(report, out)
    return EvaluationResults(
        report=report,
        rows=report.probes,
        baselines=report.baselines,
        summary=report.to_dict(),
        out=_path(out),
    )
