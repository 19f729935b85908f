"""The ``perturb`` run: one syntax-preserving perturbation per sentence, by Algorithm 1.

For every sentence of a treebank the chosen generator draws ``b`` random perturbations
of at most ``tau`` words; the constraints check them all in one batch; the admissible
candidate with the largest Hamming distance and, among those, the smallest syntax
distance is kept (ties: a seeded key). Sentences go through in chunks: the generator
sees a whole chunk at once and the parser parses every original and candidate of a
chunk in one call (its cache then answers the constraints).

The constraints are named, as on the command line (``NAME[:VALUE]``, resolved through
:data:`~brittle.search.constraints.CONSTRAINTS`). By default they are ``budget`` (at
the run's tau), ``pos`` (measured only, or enforced with ``enforce_pos``) and
``syntax`` (at ``max_syntax_distance``); every ``syntax`` constraint compares trees
labelled by the run's ``tree_labels``.

Every sentence's record says how many candidates each constraint rejected (a
candidate two constraints reject counts for both), and the summary adds them up. With
``quality`` on (the default), the chosen perturbations are measured with
:class:`~brittle.search.quality.QualityMeter`: the causal LM's surprisal increase per
word, the sentence similarity, the re-tag agreement of the changed words (for
reorderings, DND and IDC too); the records carry the values, the summary their means.

A treebank is streamed (:class:`PerturbJob`): read once to check and count its
sentences, then a chunk at a time, so what a run holds does not grow with the
treebank but for one record per sentence. :func:`perturb_treebank` keeps every
sentence as well, for use in memory (:class:`PerturbResult`), and
:func:`write_perturb_outputs` writes such a result's CoNLL-U and JSON report atomically,
as one set (both or neither); ``brittle perturb`` writes its files while the run goes
(:func:`brittle.engine.perturb.perturb_html.perturb_to_files`), the same bytes. Nothing depends
on timing or process state, so the same seed gives byte-identical files.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
import platform
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict, TypeVar

import numpy as np

from brittle.engine.core.atomic import STDOUT, check_output, output_set, write_json
from brittle.engine.core.conllu import iter_conllu, write_conllu
from brittle.engine.core.errors import ConfigError
from brittle.engine.core.json_types import JSONObject
from brittle.engine.core.perturbation import counted_forms, describe
from brittle.engine.core.sentence import ColumnSurvey, Sentence
from brittle.engine.core.versions import versions
from brittle.engine.reports.results import RowValidity, with_validity
from brittle.engine.runs.run_checks import (
    check_at_least,
    check_constraints,
    check_generator,
    check_precision,
    check_syntax_distance,
)
from brittle.engine.runs.shards import Shard, ShardExecutor, ShardTask, ShardWorker, run_shards
from brittle.scorers.hamming import hamming_batch
from brittle.scorers.order import permutation_scores
from brittle.scorers.parsers import make_parser
from brittle.scorers.parsers.base import Parse, Parser
from brittle.scorers.representations import check_device
from brittle.search.best_of_b import SampleOutcome, best_of_batch, distinct_candidates
from brittle.search.constraints import (
    Constraint,
    ConstraintContext,
    ConstraintSpec,
    SyntaxConstraint,
    TreeLabels,
    build_constraints,
    changed_words,
)
from brittle.search.generators.base import GENERATORS, Generator, stable_hash
from brittle.search.generators.options import parse_options
from brittle.search.presets import MEANING_CONSTRAINTS
from brittle.search.quality import PairQuality, QualityMeter
from brittle.search.sentence_models import forget_texts
from brittle.search.validity.grade import Grader, run_grader

__all__ = [
    "BUDGET_ALL",
    "DEFAULT_CONSTRAINTS",
    "DEFAULT_MAX_SYNTAX_DISTANCE",
    "GOLD_PARSER",
    "MEANING_CONSTRAINTS",
    "PerturbConfig",
    "PerturbJob",
    "PerturbResult",
    "PerturbRun",
    "PerturbShards",
    "PerturbSummary",
    "SentenceRecord",
    "batches",
    "check_perturb_outputs",
    "check_requirements",
    "chunks",
    "count_treebank",
    "decode_parse",
    "encode_parse",
    "make_generator",
    "mean_or_none",
    "perturb_chunk",
    "perturb_constraints",
    "perturb_sentences",
    "perturb_treebank",
    "quality_meter",
    "read_treebank",
    "summary_lines",
    "write_perturb_outputs",
]

#: The parser that reads the treebank's own trees: nothing is re-parsed, so records
#: keep no parses.
GOLD_PARSER = "gold"

#: ``--budget all``: a tau no sentence reaches, so every eligible word changes.
BUDGET_ALL = 1_000_000

#: Default largest normalised tree edit distance between the parses (see docs).
DEFAULT_MAX_SYNTAX_DISTANCE = 0.1

#: The constraints of a run that names none: bare names take the run's tau and
#: syntax threshold (``pos`` is enforced when ``enforce_pos`` is set).
DEFAULT_CONSTRAINTS: tuple[str, ...] = ("budget", "pos", "syntax")
# Added to the default for generators that mean to keep the meaning (coPOS, coCO):
# MEANING_CONSTRAINTS (search.presets), the sentence as likely under the causal LM and
# as close in meaning (docs/constraints.md has the measurements behind the thresholds).

Status = Literal["perturbed", "unchanged", "rejected"]


class PerturbSummary(TypedDict):
    """A run's sentences per status and means over the perturbed ones
    (:meth:`PerturbResult.summary`).

    ``rejected_by_constraint`` adds up, per constraint, the candidates it rejected;
    ``mean_words_changed`` counts substituted or moved words. The quality means
    (``mean_surprisal_increase`` in bits per word, ``mean_similarity``,
    ``retag_agreement`` over ``words_retagged`` changed words) are ``None`` when the
    run did not measure quality; ``validity`` is there when the run graded.
    """

    perturbed: int
    unchanged: int
    rejected: int
    sentences: int
    candidates_drawn: int
    candidates_admissible: int
    mean_syntax_distance: float | None
    mean_hamming: float | None
    pos_preservation_rate: float | None
    words_compared_for_pos: int
    mean_dnd: float | None
    mean_idc: float | None
    rejected_by_constraint: dict[str, int]
    mean_words_changed: float | None
    mean_surprisal_increase: float | None
    mean_similarity: float | None
    retag_agreement: float | None
    words_retagged: int
    validity: NotRequired[PerturbValidity]


class PerturbValidity(TypedDict):
    """How valid a graded run's chosen perturbations are: how many were graded, and the
    share of them valid at each level (``tree``, ``grammatical``, ``meaning``; ``None``
    when none was graded)."""

    graded: int
    shares: dict[str, float | None]


#: Called with the number of sentences just finished.
ProgressFn = Callable[[int], None]

T = TypeVar("T")

#: CoNLL-U columns a generator may require, and how to read them from a sentence.
_COLUMN_READERS: dict[str, Callable[[Sentence], Sequence[str]]] = {
    "lemma": lambda s: s.lemmas,
    "upos": lambda s: s.upos,
    "xpos": lambda s: s.xpos,
    "feats": lambda s: tuple(t.feats for t in s.words),
    "deprel": lambda s: s.deprels,
}


@dataclass(frozen=True)
class PerturbConfig:
    """Everything that decides a ``perturb`` run's output.

    Attributes:
        method: registered generator name (``copos``, ``coco``, ``shuffle``, ...).
        budget: tau, the most words a perturbation changes (Hamming distance).
        candidates: b, random perturbations drawn per sentence.
        max_syntax_distance: the largest normalised tree edit distance between the
            parse of the original and the parse of the perturbation (the threshold of
            a ``syntax`` constraint named without a value).
        parser: registered parser name (``spacy``, ``stanza``, ``gold``).
        seed: seeds the draws and the tie-break; same seed, same output.
        limit: perturb only the first ``limit`` sentences (``None``: all).
        enforce_pos: also reject candidates whose changed words lose their UPOS (a
            ``pos`` constraint without a value is enforced at rate 1; one is added
            when ``constraints`` names none).
        tree_labels: node labels for the tree edit distance of every ``syntax``
            constraint (``deprel``, ``upos``, ``none``).
        chunk_size: sentences handed to the generator and the parser at once.
        constraints: constraint specs ``NAME[:VALUE]`` (``syntax:0.2``, ``pos:1``,
            ``budget``, ``fluency:0.7``, ``similarity:0.8``, ``retag``); empty:
            :attr:`default_constraints`.
        generator_options: the generator's options (``NAME=VALUE``).
        quality: measure the chosen perturbations (LM surprisal, sentence similarity,
            re-tag agreement); loads the causal LM and the sentence encoder.
        grade: grade each chosen perturbation's validity (tree-valid, grammatical,
            meaning kept: :mod:`brittle.search.validity`) into its record, the summary
            and the MISC of its changed words (``Validity=LEVEL``); loads spaCy (when
            the run's parser is ``gold``), the causal LM and the sentence encoder.
        device: torch device of the model-based constraints and the quality models
            (``None``: ``cuda`` when available, else ``cpu``).
        dtype: precision of those models (``float32``, ``float16``, ``bfloat16``;
            ``None``: each model's own).

    Raises:
        ConfigError: a value out of range, an unknown or repeated constraint, an unknown
            device or one this machine does not have (``device`` is kept normalised,
            ``CUDA:0`` as ``cuda:0``).
    """

    method: str
    budget: int = 1
    candidates: int = 20
    max_syntax_distance: float = DEFAULT_MAX_SYNTAX_DISTANCE
    parser: str = "spacy"
    seed: int = 0
    limit: int | None = None
    enforce_pos: bool = False
    tree_labels: TreeLabels = "deprel"
    chunk_size: int = 64
    constraints: tuple[str, ...] = ()
    generator_options: tuple[str, ...] = ()
    quality: bool = True
    grade: bool = False
    device: str | None = None
    dtype: str | None = None

    def __post_init__(self) -> None:
        # before anything loads: an unknown device, or one this machine lacks
        object.__setattr__(self, "device", check_device(self.device))
        check_precision(self.dtype)
        check_at_least("--budget", self.budget)
        check_at_least("--candidates", self.candidates)
        check_syntax_distance(self.max_syntax_distance)
        check_at_least("--limit", self.limit)
        check_at_least("chunk size", self.chunk_size)
        # the names are checked when the run builds them: a generator or parser handed
        # to the run may be unregistered; the generator's options are checked here
        if self.generator_options:
            check_generator(self.method, self.generator_options)
        check_constraints(self.constraints or self.default_constraints)

    def parsed_generator_options(self) -> dict[str, object]:
        """``generator_options`` (``NAME=VALUE``) as the generator's keyword arguments."""
        if not self.generator_options:
            return {}
        return parse_options(GENERATORS.get(self.method), self.generator_options)

    @property
    def default_constraints(self) -> tuple[str, ...]:
        """The constraints of a run that names none: :data:`DEFAULT_CONSTRAINTS`, and
        :data:`MEANING_CONSTRAINTS` when the generator means to keep the meaning."""
        try:
            keeps = GENERATORS.get(self.method).keeps_meaning
        except ConfigError:  # a generator handed to the run without registering it
            keeps = False
        return DEFAULT_CONSTRAINTS + (MEANING_CONSTRAINTS if keeps else ())

    @property
    def constraint_specs(self) -> tuple[ConstraintSpec, ...]:
        """The constraints applied, parsed: ``constraints`` or the default, with a
        bare ``pos`` enforced (``pos:1``) when ``enforce_pos`` is set.

        Raises:
            ConfigError: an unknown constraint name or a malformed spec.
        """
        specs = [ConstraintSpec.parse(s) for s in self.constraints or self.default_constraints]
        if not self.enforce_pos:
            return tuple(specs)
        if not any(s.name == "pos" for s in specs):
            specs.append(ConstraintSpec("pos"))
        return tuple(
            ConstraintSpec("pos", "1") if s.name == "pos" and s.value is None else s for s in specs
        )

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping (an infinite distance becomes the string ``"inf"``; the
        constraints, generator options, ``quality``, ``grade``, ``device`` and ``dtype``
        are left out when they are the default)."""
        out = asdict(self)
        if math.isinf(self.max_syntax_distance):
            out["max_syntax_distance"] = "inf"
        if self.constraints:
            out["constraints"] = list(self.constraints)
        else:
            del out["constraints"]
        if self.generator_options:
            out["generator_options"] = list(self.generator_options)
        else:
            del out["generator_options"]
        if self.quality:  # the default: left out, as reports had it before
            del out["quality"]
        if not self.grade:  # the default: left out, as reports had it before
            del out["grade"]
        if self.device is None:
            del out["device"]
        if self.dtype is None:
            del out["dtype"]
        return out


@dataclass(frozen=True)
class SentenceRecord:
    """What happened to one sentence.

    Attributes:
        sent_id: the sentence id.
        words: number of words.
        status: ``perturbed``; ``unchanged`` (no candidate drawn: nothing eligible, or
            no draw within the budget); or ``rejected`` (candidates drawn, none
            admissible). Both of the latter are written unchanged.
        drawn: distinct candidates drawn.
        admissible: candidates that passed every enforced constraint.
        hamming: words changed by the chosen perturbation.
        syntax: its normalised tree edit distance to the original's parse (``None``
            without a ``syntax`` constraint).
        changed: words whose tag was compared (changed or moved words).
        pos_kept: of those, how many kept their UPOS (``None`` when a perturbation was
            chosen but no ``pos`` constraint measured it).
        perturbation: the ``# perturbation`` description of the choice.
        dnd, idc: for a reordering, the displacement scores of its word order
            (Clouatre et al.; 0 = unchanged); ``None`` for substitutions.
        rejected: per constraint, how many of the drawn candidates it rejected.
        surprisal_increase: the causal LM's surprisal of the chosen perturbation
            minus the original's, bits per word (``None``: quality not measured).
        similarity: cosine of their sentence embeddings (``None``: not measured).
        retag: share of the changed words the parser tags with their gold UPOS
            (``None``: not measured).
        validity: the judges' grade of the chosen perturbation (``None``: not graded,
            or a reordering). Left out of the JSON report when ``None``.
        parse_original, parse_perturbed: the run's parser's parse of the original and
            of the chosen perturbation (the parses the ``syntax`` constraint compared),
            one ``HEAD:DEPREL`` per word, space-separated (:func:`encode_parse`);
            ``None`` when that sentence was not parsed (no candidate drawn, no
            perturbation chosen) or the parser is ``gold`` (no re-parse). Left out of
            the JSON report when ``None``.
    """

    sent_id: str
    words: int
    status: Status
    drawn: int = 0
    admissible: int = 0
    hamming: int | None = None
    syntax: float | None = None
    changed: int = 0
    pos_kept: int | None = 0
    perturbation: str | None = None
    dnd: float | None = None
    idc: float | None = None
    rejected: Mapping[str, int] = field(default_factory=dict)
    surprisal_increase: float | None = None
    similarity: float | None = None
    retag: float | None = None
    validity: RowValidity | None = None
    parse_original: str | None = None
    parse_perturbed: str | None = None

    def to_json(self) -> dict[str, object]:
        """The record as the JSON report writes it (parses and validity left out when
        absent)."""
        out = asdict(self)
        for name in ("parse_original", "parse_perturbed"):
            if out[name] is None:
                del out[name]
        if self.validity is None:
            del out["validity"]
        else:
            out["validity"] = self.validity.to_json()
        return out

    def with_quality(self, quality: PairQuality) -> SentenceRecord:
        """The record with the chosen perturbation's quality (values rounded to 6 digits)."""
        return dataclasses.replace(
            self,
            surprisal_increase=round(quality.surprisal_increase, 6),
            similarity=round(quality.similarity, 6),
            retag=None if quality.retag is None else round(quality.retag, 6),
        )


@dataclass(frozen=True)
class PerturbRun:
    """A run's records and provenance: what its summary and JSON report are made of
    (its sentences aside, which a streamed run does not keep).

    Attributes:
        config: the resolved configuration.
        treebank: the input path (as given), or ``""`` for in-memory sentences.
        records: one record per sentence, in input order.
        parser: the parser's description (name, model, versions, cache size).
        versions: package versions.
        constraints: each applied constraint's description (name and settings).
        quality: the quality models' description (empty: quality not measured).
    """

    config: PerturbConfig
    treebank: str
    records: tuple[SentenceRecord, ...]
    parser: Mapping[str, object] = field(default_factory=dict)
    versions: Mapping[str, str] = field(default_factory=dict)
    constraints: tuple[Mapping[str, object], ...] = ()
    quality: Mapping[str, object] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        """Sentences per status (``perturbed``, ``unchanged``, ``rejected``)."""
        out = {"perturbed": 0, "unchanged": 0, "rejected": 0}
        for r in self.records:
            out[r.status] += 1
        return out

    def summary(self) -> PerturbSummary:
        """Counts and means over the perturbed sentences (None when there are none)."""
        done = [r for r in self.records if r.status == "perturbed"]
        measured = [r for r in done if r.pos_kept is not None]
        changed = sum(r.changed for r in measured)
        kept = sum(r.pos_kept or 0 for r in measured)
        counts = self.counts()
        rejected: dict[str, int] = {str(c["name"]): 0 for c in self.constraints}
        for r in self.records:
            for name, n in r.rejected.items():
                rejected[name] = rejected.get(name, 0) + n
        retagged = [r for r in done if r.retag is not None]
        words = sum(r.changed for r in retagged)
        retag_kept = sum(round((r.retag or 0.0) * r.changed) for r in retagged)
        out: PerturbSummary = {
            "perturbed": counts["perturbed"],
            "unchanged": counts["unchanged"],
            "rejected": counts["rejected"],
            "sentences": len(self.records),
            "candidates_drawn": sum(r.drawn for r in self.records),
            "candidates_admissible": sum(r.admissible for r in self.records),
            "mean_syntax_distance": mean_or_none([r.syntax for r in done]),
            "mean_hamming": mean_or_none([r.hamming for r in done]),
            "pos_preservation_rate": kept / changed if changed else None,
            "words_compared_for_pos": changed,
            "mean_dnd": mean_or_none([r.dnd for r in done]),
            "mean_idc": mean_or_none([r.idc for r in done]),
            "rejected_by_constraint": rejected,
            "mean_words_changed": mean_or_none([r.changed for r in done]),
            "mean_surprisal_increase": mean_or_none([r.surprisal_increase for r in done]),
            "mean_similarity": mean_or_none([r.similarity for r in done]),
            "retag_agreement": retag_kept / words if words else None,
            "words_retagged": words,
        }
        if self.config.grade:
            out["validity"] = _validity(done)
        return out

    def report(self) -> dict[str, object]:
        """The JSON report: per-method summary, per-sentence records, config, versions
        (and the constraints' settings when the config names them)."""
        out: dict[str, object] = {
            "command": "perturb",
            "treebank": self.treebank,
            "config": self.config.to_dict(),
            "seed": self.config.seed,
            "methods": {self.config.method: self.summary()},
            "parser": dict(self.parser),
            "versions": dict(self.versions),
            "sentences": [r.to_json() for r in self.records],
        }
        if self.config.constraints:
            out["constraints"] = [_json_ready(c) for c in self.constraints]
        if self.quality:
            out["quality"] = dict(self.quality)
        return out


@dataclass(frozen=True)
class PerturbResult(PerturbRun):
    """A run with its sentences: the :class:`PerturbRun` and, in input order,
    ``sentences``, the output sentences (perturbed or unchanged), and ``originals``,
    the input sentences (for the HTML page's gold trees; empty when not kept)."""

    sentences: tuple[Sentence, ...] = field(kw_only=True)
    originals: tuple[Sentence, ...] = field(default=(), kw_only=True)


def _json_ready(description: Mapping[str, object]) -> dict[str, object]:
    """A constraint description with infinite numbers written as ``"inf"``."""
    return {
        k: "inf" if isinstance(v, float) and math.isinf(v) else v for k, v in description.items()
    }


def _validity(done: Sequence[SentenceRecord]) -> PerturbValidity:
    """How many of the perturbed sentences were graded, and the share valid at each
    level (``None`` when none was)."""
    graded = [r.validity for r in done if r.validity is not None]
    shares: dict[str, float | None] = {
        level: sum(bool(v.at(level)) for v in graded) / len(graded) if graded else None
        for level in ("tree", "grammatical", "meaning")
    }
    return {"graded": len(graded), "shares": shares}


def mean_or_none(values: Sequence[float | int | None]) -> float | None:
    """Mean of the values that are not ``None`` (``None`` when there are none)."""
    xs = [float(v) for v in values if v is not None]
    return float(np.mean(xs)) if xs else None


def summary_lines(summary: PerturbSummary) -> list[tuple[str, str]]:
    """The summary as (what, value) lines for a printed table: counts, means, the
    candidates each constraint rejected and, when measured, the quality means."""

    def fmt(x: float | None, spec: str = ".3f") -> str:
        return "–" if x is None else format(x, spec)

    lines = [
        ("perturbed", str(summary["perturbed"])),
        ("unchanged (no candidate drawn)", str(summary["unchanged"])),
        ("rejected by the constraints", str(summary["rejected"])),
        ("candidates drawn", str(summary["candidates_drawn"])),
        ("candidates admissible", str(summary["candidates_admissible"])),
    ]
    lines += [
        (f"candidates rejected by {name}", str(n))
        for name, n in summary["rejected_by_constraint"].items()
    ]
    lines += [
        ("mean words changed (Hamming)", fmt(summary["mean_hamming"], ".2f")),
        ("mean syntax distance", fmt(summary["mean_syntax_distance"], ".4f")),
        ("POS preservation rate", fmt(summary["pos_preservation_rate"], ".1%")),
    ]
    if summary["mean_surprisal_increase"] is not None:
        lines += [
            ("mean surprisal increase (bits per word)", fmt(summary["mean_surprisal_increase"])),
            ("mean sentence similarity (MiniLM cosine)", fmt(summary["mean_similarity"])),
            ("re-tag agreement (gold UPOS)", fmt(summary["retag_agreement"], ".1%")),
        ]
    validity = summary.get("validity")
    if validity is not None:
        shares = validity["shares"]
        lines += [
            ("perturbations graded", str(validity["graded"])),
            ("graded tree-valid", fmt(shares["tree"], ".1%")),
            ("graded grammatical", fmt(shares["grammatical"], ".1%")),
            ("graded meaning kept", fmt(shares["meaning"], ".1%")),
        ]
    if summary["mean_dnd"] is not None:
        lines += [
            ("mean DND (word order, 0 = unchanged)", fmt(summary["mean_dnd"])),
            ("mean IDC (word order, 0 = unchanged)", fmt(summary["mean_idc"])),
        ]
    return lines


def chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    """Consecutive slices of ``items`` of ``size`` elements (the last may be shorter)."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def batches(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Consecutive lists of ``size`` items taken from ``items`` as they come (the last
    may be shorter): a stream is never held whole."""
    stream = iter(items)
    while batch := list(itertools.islice(stream, size)):
        yield batch


def make_generator(method: str, **options: object) -> Generator:
    """The generator registered as ``method``, built with its keyword options.

    Raises:
        ConfigError: an unknown name (the message lists the known ones).
    """
    return GENERATORS.get(method)(**options)


def perturb_constraints(config: PerturbConfig, parser: Parser) -> list[Constraint]:
    """The run's constraints (:attr:`PerturbConfig.constraint_specs`), cheap ones first.

    Bare names take the run's values: ``budget`` its tau, ``syntax`` its
    ``max_syntax_distance``. Every ``syntax`` constraint compares trees labelled by
    ``config.tree_labels``.

    Raises:
        ConfigError: an unknown constraint or a bad value.
    """
    context = ConstraintContext(
        tau=config.budget,
        parser=lambda: parser,
        max_syntax_distance=config.max_syntax_distance,
        device=config.device,
        dtype=config.dtype,
    )
    return [
        dataclasses.replace(c, labels=config.tree_labels) if isinstance(c, SyntaxConstraint) else c
        for c in build_constraints(config.constraint_specs, context)
    ]


def check_requirements(sentences: Sequence[Sentence], generator: Generator, source: str) -> None:
    """Fail early when the treebank lacks a column the generator reads.

    A column counts as missing when it is ``_`` on every word of the treebank.

    Raises:
        ConfigError: a column the generator requires is missing.
    """
    for column in sorted(generator.requires & _COLUMN_READERS.keys()):
        read = _COLUMN_READERS[column]
        if sentences and all(v == "_" for s in sentences for v in read(s)):
            raise ConfigError(
                f"method {generator.method!r} needs the {column.upper()} column, "
                f"but {source or 'the input'} has none"
            )


def count_treebank(
    path: str | os.PathLike[str], generator: Generator, *, limit: int | None = None
) -> int:
    """The sentences of ``path`` to perturb (the first ``limit``), read once and not
    kept: a bad sentence anywhere is reported with its line before any model loads, and
    so is a column the generator requires that they all leave blank (the check of
    :func:`check_requirements`, made while streaming).

    Raises:
        BrittleInputError: the treebank cannot be read.
        ConfigError: a column the generator requires is missing.
    """
    survey = ColumnSurvey(frozenset(generator.requires & _COLUMN_READERS.keys()))
    for sentence in itertools.islice(iter_conllu(path), limit):
        survey.add(sentence)
    if survey.blank:
        raise ConfigError(
            f"method {generator.method!r} needs the {survey.blank[0].upper()} column, "
            f"but {str(path) or 'the input'} has none"
        )
    return survey.sentences


def _tiebreak_rng(seed: int, sent_id: str) -> np.random.Generator:
    # A stream of its own, apart from the generator's draws for the same sentence.
    return np.random.default_rng([seed & 0xFFFFFFFF, stable_hash(sent_id), 0x7E])


def _record(outcome: SampleOutcome) -> SentenceRecord:
    """The record of one sentence's outcome."""
    original = outcome.original
    p = outcome.perturbation
    rejected = outcome.outcome.rejected()
    if p is None:
        return SentenceRecord(
            sent_id=original.sent_id,
            words=len(original),
            status="unchanged" if outcome.drawn == 0 else "rejected",
            drawn=outcome.drawn,
            admissible=outcome.admissible,
            rejected=rejected,
        )
    changed = len(changed_words(p)[0])
    hamming = outcome.value("budget")
    if hamming is None:  # no budget constraint measured it
        counted = counted_forms(original, p, outcome.sentence)  # article repairs not counted
        hamming = float(hamming_batch(original.forms, [counted])[0])
    pos = outcome.value("pos")
    if outcome.outcome.values("pos") is None:
        pos_kept: int | None = None
    else:
        pos_kept = 0 if pos is None or math.isnan(pos) else round(pos * changed)
    dnd = idc = None
    if p.order is not None:
        scores = permutation_scores(p.order)
        dnd, idc = round(scores.dnd, 6), round(scores.idc, 6)
    return SentenceRecord(
        sent_id=original.sent_id,
        words=len(original),
        status="perturbed",
        drawn=outcome.drawn,
        admissible=outcome.admissible,
        hamming=round(hamming),
        syntax=outcome.value("syntax"),
        changed=changed,
        dnd=dnd,
        idc=idc,
        pos_kept=pos_kept,
        perturbation=describe(p, original),
        rejected=rejected,
    )


def perturb_sentences(
    sentences: Sequence[Sentence],
    *,
    config: PerturbConfig,
    generator: Generator,
    parser: Parser,
    constraints: Sequence[Constraint] | None = None,
    progress: ProgressFn | None = None,
    treebank: str = "",
    quality: QualityMeter | None = None,
    grader: Grader | None = None,
) -> PerturbResult:
    """Algorithm 1 over in-memory sentences with ready-made components.

    Args:
        sentences: the input, in order (``config.limit`` is not applied here).
        config: the run's settings.
        generator: draws the candidates (``perturb(sentences, *, b, seed, tau)``).
        parser: parses originals and candidates (``prepare()`` is called first).
        constraints: the constraints to check (default:
            :func:`perturb_constraints` of ``config`` and ``parser``).
        progress: called after each chunk with the number of sentences done.
        treebank: the input path, for the report.
        quality: measures the chosen perturbations of each chunk in one call (``None``:
            quality is not measured, whatever ``config.quality`` says).
        grader: grades the chosen perturbations of each chunk in one call (``None``:
            not graded).
    """
    parser.prepare()
    checks = list(perturb_constraints(config, parser) if constraints is None else constraints)
    out: list[Sentence] = []
    records: list[SentenceRecord] = []
    for chunk in chunks(sentences, config.chunk_size):
        chunk_out, chunk_records = perturb_chunk(
            chunk,
            config=config,
            generator=generator,
            parser=parser,
            checks=checks,
            quality=quality,
            grader=grader,
        )
        out.extend(chunk_out)
        records.extend(chunk_records)
        if progress is not None:
            progress(len(chunk))
    return _result(config, treebank, sentences, out, records, parser, checks, quality)


class _Provenance(TypedDict):
    """Where a run's records come from: the fields :class:`PerturbRun` has besides its
    configuration, treebank and records."""

    parser: Mapping[str, object]
    versions: Mapping[str, str]
    constraints: tuple[Mapping[str, object], ...]
    quality: Mapping[str, object]


def _provenance(
    parser: Parser, checks: Sequence[Constraint], quality: QualityMeter | None
) -> _Provenance:
    """The descriptions of a finished run's parser, constraints and quality models,
    and the versions of the packages."""
    return {
        "parser": parser.describe(),
        "versions": {**versions(), "python": platform.python_version()},
        "constraints": tuple(c.describe() for c in checks),
        "quality": {} if quality is None else quality.describe(),
    }


def _result(
    config: PerturbConfig,
    treebank: str,
    originals: Sequence[Sentence],
    out: Sequence[Sentence],
    records: Sequence[SentenceRecord],
    parser: Parser,
    checks: Sequence[Constraint],
    quality: QualityMeter | None,
) -> PerturbResult:
    """The result of a run, its sentences and records in input order."""
    return PerturbResult(
        config=config,
        treebank=treebank,
        records=tuple(records),
        sentences=tuple(out),
        originals=tuple(originals),
        **_provenance(parser, checks, quality),
    )


def perturb_chunk(
    chunk: Sequence[Sentence],
    *,
    config: PerturbConfig,
    generator: Generator,
    parser: Parser,
    checks: Sequence[Constraint],
    quality: QualityMeter | None,
    grader: Grader | None = None,
) -> tuple[list[Sentence], list[SentenceRecord]]:
    """Algorithm 1 on one chunk: its output sentences and records, in order. The
    generator sees the whole chunk and the parser parses it in one call; every draw and
    tie-break is seeded from the run's seed and the sentence's id, so a chunk comes out
    the same in any process. With a ``grader`` the chosen perturbations are graded (one
    call for the chunk) and their changed words marked ``Validity=LEVEL``.

    The parser's cache and the shared models' text caches are emptied first: a chunk's
    candidates do not come back in a later chunk, so keeping them would only make what
    a run holds grow with the treebank (and a chunk then computes what it needs alone,
    as it does on a worker)."""
    parser.clear()
    forget_texts()
    drawn = generator.perturb(list(chunk), b=config.candidates, seed=config.seed, tau=config.budget)
    if len(drawn) != len(chunk):
        raise RuntimeError(
            f"generator {config.method} returned {len(drawn)} lists for {len(chunk)} sentences"
        )
    batches = [distinct_candidates(s, d) for s, d in zip(chunk, drawn, strict=True)]
    # One parser call for the whole chunk; the constraints then read the cache.
    parser.parse([s for b in batches if len(b) for s in (b.original, *b.sentences)])
    outcomes = [
        best_of_batch(
            batch,
            constraints=checks,
            rng=_tiebreak_rng(config.seed, batch.original.sent_id),
        )
        for batch in batches
    ]
    records = [_record(outcome) for outcome in outcomes]
    if parser.name != GOLD_PARSER:
        records = _with_parses(parser, outcomes, records)
    if quality is not None:
        records = _with_quality(quality, outcomes, records)
    sentences = [outcome.sentence for outcome in outcomes]
    if grader is not None:
        records = _with_validity(grader, outcomes, records)
        sentences = [
            with_validity(s, changed_words(o.perturbation)[0], r.validity)
            if o.perturbation is not None
            else s
            for s, o, r in zip(sentences, outcomes, records, strict=True)
        ]
    return sentences, records


def encode_parse(parse: Parse) -> str:
    """A parse as one line: ``HEAD:DEPREL`` per word, space-separated (``2:nsubj 0:root
    2:obj``); DEPREL has no spaces in CoNLL-U, and may itself hold a colon."""
    return " ".join(
        f"{int(h)}:{r}" for h, r in zip(parse.heads.tolist(), parse.deprels, strict=True)
    )


def decode_parse(text: str) -> tuple[list[int], list[str]]:
    """The heads (1-based, 0 for the root) and relations of an :func:`encode_parse` line.

    Raises:
        ValueError: ``text`` is not such a line.
    """
    heads: list[int] = []
    deprels: list[str] = []
    for item in text.split():
        head, _, rel = item.partition(":")
        heads.append(int(head))
        deprels.append(rel)
    return heads, deprels


def _with_parses(
    parser: Parser, outcomes: Sequence[SampleOutcome], records: Sequence[SentenceRecord]
) -> list[SentenceRecord]:
    """``records`` with the parser's parses of each original that had candidates and
    of each chosen perturbation (answered by the parser's cache: the chunk's parse call
    already parsed them)."""
    drawn = [k for k, o in enumerate(outcomes) if o.drawn]
    chosen = [k for k in drawn if outcomes[k].perturbation is not None]
    parses = parser.parse(
        [outcomes[k].original for k in drawn] + [outcomes[k].sentence for k in chosen]
    )
    out = list(records)
    for k, parse in zip(drawn, parses[: len(drawn)], strict=True):
        out[k] = dataclasses.replace(out[k], parse_original=encode_parse(parse))
    for k, parse in zip(chosen, parses[len(drawn) :], strict=True):
        out[k] = dataclasses.replace(out[k], parse_perturbed=encode_parse(parse))
    return out


#: A perturbed chunk: its output sentences and records.
PerturbedChunk = tuple[list[Sentence], list[SentenceRecord]]


def quality_meter(config: PerturbConfig, parser: Parser) -> QualityMeter | None:
    """The meter of the chosen perturbations (``None`` without ``config.quality``), its
    models on the run's device and in its precision."""
    if not config.quality:
        return None
    return QualityMeter(parser=parser, device=config.device, dtype=config.dtype)


def perturb_grader(config: PerturbConfig, parser: Parser) -> Grader | None:
    """The grader of the chosen perturbations (``None`` without ``config.grade``):
    :func:`~brittle.search.validity.grade.run_grader` with the run's parser, its models
    on the run's device and in its precision."""
    if not config.grade:
        return None
    return run_grader(config.parser, lambda: parser, device=config.device, dtype=config.dtype)


class PerturbWorker(ShardWorker[list[Sentence], PerturbedChunk]):
    """What a worker of a sharded perturb run holds: generator, parser, constraints
    and quality meter, loaded once."""

    def __init__(self, task: PerturbShards) -> None:
        config = task.config
        options = {**config.parsed_generator_options(), **dict(task.generator_options)}
        self.config = config
        self.generator = make_generator(config.method, **options)
        self.parser = make_parser(config.parser, **dict(task.parser_options))
        self.checks = perturb_constraints(config, self.parser)
        self.generator.prepare()
        self.parser.prepare()
        self.quality = quality_meter(config, self.parser)
        self.grader = perturb_grader(config, self.parser)

    def run(self, shard: Shard[list[Sentence]]) -> PerturbedChunk:
        """The output sentences and records of the shard's chunk."""
        return perturb_chunk(
            shard.payload,
            config=self.config,
            generator=self.generator,
            parser=self.parser,
            checks=self.checks,
            quality=self.quality,
            grader=self.grader,
        )


@dataclass(frozen=True)
class PerturbShards(ShardTask[list[Sentence], PerturbedChunk]):
    """The job of a sharded perturb run's workers: Algorithm 1 on each shard's chunk.

    Attributes:
        config: the run's settings.
        generator_options, parser_options: keyword options of the components, as
            ``(name, value)`` pairs.
    """

    config: PerturbConfig
    generator_options: tuple[tuple[str, object], ...] = ()
    parser_options: tuple[tuple[str, object], ...] = ()

    def start(self, previous: ShardWorker[Any, Any] | None) -> PerturbWorker:
        """Load the components."""
        return PerturbWorker(self)


def _with_quality(
    meter: QualityMeter, outcomes: Sequence[SampleOutcome], records: Sequence[SentenceRecord]
) -> list[SentenceRecord]:
    """``records`` with the quality of their chosen perturbations (one meter call)."""
    chosen = [k for k, o in enumerate(outcomes) if o.perturbation is not None]
    measured = meter.measure(
        [outcomes[k].original for k in chosen],
        [outcomes[k].sentence for k in chosen],
        [p for k in chosen if (p := outcomes[k].perturbation) is not None],
    )
    out = list(records)
    for k, q in zip(chosen, measured, strict=True):
        out[k] = out[k].with_quality(q)
    return out


def _with_validity(
    grader: Grader, outcomes: Sequence[SampleOutcome], records: Sequence[SentenceRecord]
) -> list[SentenceRecord]:
    """``records`` with the judges' grade of their chosen perturbations (one grader
    call; a reordering, whose gold tree no longer lines up, stays without one)."""
    chosen = [k for k, o in enumerate(outcomes) if o.perturbation is not None]
    grades = grader.grade(
        [outcomes[k].original for k in chosen], [outcomes[k].sentence for k in chosen]
    )
    out = list(records)
    for k, grade in zip(chosen, grades, strict=True):
        out[k] = dataclasses.replace(out[k], validity=RowValidity.of(grade))
    return out


def read_treebank(path: str | os.PathLike[str], *, limit: int | None = None) -> list[Sentence]:
    """The first ``limit`` sentences of a CoNLL-U file (all when ``limit`` is None)."""
    out: list[Sentence] = []
    for sentence in iter_conllu(path):
        if limit is not None and len(out) >= limit:
            break
        out.append(sentence)
    return out


#: One perturbed chunk with its input: the input sentences, the output sentences and
#: their records, in order.
PerturbedInput = tuple[list[Sentence], list[Sentence], list[SentenceRecord]]


class PerturbJob:
    """A ``perturb`` run over a treebank, streamed a chunk at a time.

    Creating it builds and checks the components by name (generator, parser,
    constraints) and reads the treebank once without keeping it (:func:`count_treebank`),
    so a mistake shows before any model loads. :meth:`chunks` loads the models and reads
    the treebank again, ``config.chunk_size`` sentences at a time, so what it holds does
    not grow with the treebank; :meth:`run` gives the run's provenance around the
    records the caller kept.

    Args:
        path: the CoNLL-U file.
        config: the run's settings (``config.limit`` is applied here).
        generator_options, parser_options: keyword options for the components.
        executor: workers (local processes or Ray actors, :mod:`brittle.engine.runs.shards`)
            to send the chunks to, one shard each; they load the components, this
            process only checks them. The chunks are the same as in one process.

    Attributes:
        total: the sentences to perturb.

    Raises:
        BrittleInputError: the treebank cannot be read.
        ConfigError: an unknown name, a bad option, a missing column.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        config: PerturbConfig,
        *,
        generator_options: Mapping[str, object] | None = None,
        parser_options: Mapping[str, object] | None = None,
        executor: ShardExecutor | None = None,
    ) -> None:
        options = {**config.parsed_generator_options(), **dict(generator_options or {})}
        self.path = path
        self.config = config
        self.executor = executor
        self.generator = make_generator(config.method, **options)
        self.parser = make_parser(config.parser, **dict(parser_options or {}))
        self.checks = perturb_constraints(config, self.parser)
        self.task = PerturbShards(
            config,
            tuple((generator_options or {}).items()),
            tuple((parser_options or {}).items()),
        )
        self.total = count_treebank(path, self.generator, limit=config.limit)
        self.quality: QualityMeter | None = None

    def _batches(self) -> Iterator[list[Sentence]]:
        """The treebank's sentences, up to the limit, ``chunk_size`` at a time."""
        sentences = itertools.islice(iter_conllu(self.path), self.config.limit)
        return batches(sentences, self.config.chunk_size)

    def chunks(
        self,
        progress: ProgressFn | None = None,
        on_start: Callable[[int], None] | None = None,
    ) -> Iterator[PerturbedInput]:
        """Algorithm 1 on each chunk of the treebank, in order: in this process, or on
        the executor's workers (one shard a chunk). ``on_start`` hears :attr:`total`
        once the components are loaded; ``progress`` the sentences of each chunk done.
        With ``config.quality`` the chosen perturbations are measured."""
        if self.executor is not None:
            yield from self._sharded(self.executor, progress, on_start)
            return
        self.generator.prepare()
        self.parser.prepare()
        if on_start is not None:
            on_start(self.total)
        self.quality = quality_meter(self.config, self.parser)
        grader = perturb_grader(self.config, self.parser)
        for chunk in self._batches():
            outputs, records = perturb_chunk(
                chunk,
                config=self.config,
                generator=self.generator,
                parser=self.parser,
                checks=self.checks,
                quality=self.quality,
                grader=grader,
            )
            if progress is not None:
                progress(len(chunk))
            yield chunk, outputs, records

    def _sharded(
        self,
        executor: ShardExecutor,
        progress: ProgressFn | None,
        on_start: Callable[[int], None] | None,
    ) -> Iterator[PerturbedInput]:
        """The chunks perturbed by ``executor``'s workers, in order (this process's
        parser and constraints, not loaded, describe the run)."""
        if on_start is not None:
            on_start(self.total)
        size = self.config.chunk_size
        shards = (
            Shard(number, number * size, number * size + len(chunk), chunk)
            for number, chunk in enumerate(self._batches())
        )

        def finished(shard: Shard[list[Sentence]], perturbed: PerturbedChunk) -> None:
            if progress is not None:
                progress(shard.stop - shard.start)

        for shard, (outputs, records) in run_shards(executor, self.task, shards, on_done=finished):
            yield shard.payload, outputs, records
        self.quality = quality_meter(self.config, self.parser)

    def run(self, records: Sequence[SentenceRecord]) -> PerturbRun:
        """The run's provenance around ``records`` (once :meth:`chunks` is done)."""
        return PerturbRun(
            config=self.config,
            treebank=str(self.path),
            records=tuple(records),
            **_provenance(self.parser, self.checks, self.quality),
        )


def perturb_treebank(
    path: str | os.PathLike[str],
    config: PerturbConfig,
    *,
    generator_options: Mapping[str, object] | None = None,
    parser_options: Mapping[str, object] | None = None,
    progress: ProgressFn | None = None,
    on_start: Callable[[int], None] | None = None,
    executor: ShardExecutor | None = None,
) -> PerturbResult:
    """Perturb a treebank in memory: build the components by name, check them, run
    Algorithm 1 (a :class:`PerturbJob`), and keep every input and output sentence.
    :func:`brittle.engine.perturb.perturb_html.perturb_to_files` streams a run into its files
    instead.

    Generator, parser and constraints are built (and checked) before the treebank is
    read; no model loads before the treebank has been checked. With ``config.quality``
    the chosen perturbations are measured (:class:`~brittle.search.quality.QualityMeter`
    with the run's parser).

    Args:
        path: the CoNLL-U file.
        config: the run's settings (``config.limit`` is applied here).
        generator_options, parser_options: keyword options for the components.
        progress: called with the number of sentences finished after each chunk.
        on_start: called once with the number of sentences to do, after loading.
        executor: workers (local processes or Ray actors, :mod:`brittle.engine.runs.shards`)
            to send the chunks to, one shard each; they load the components, this
            process only checks them. The result is the same as in one process.

    Raises:
        BrittleInputError: the treebank cannot be read.
        ConfigError: an unknown name, a bad option, a missing column.
        ResourceMissingError: a model or lexicon is not installed.
    """
    job = PerturbJob(
        path,
        config,
        generator_options=generator_options,
        parser_options=parser_options,
        executor=executor,
    )
    originals: list[Sentence] = []
    outputs: list[Sentence] = []
    records: list[SentenceRecord] = []
    for chunk, chunk_out, chunk_records in job.chunks(progress, on_start):
        originals.extend(chunk)
        outputs.extend(chunk_out)
        records.extend(chunk_records)
    return _result(
        config, str(path), originals, outputs, records, job.parser, job.checks, job.quality
    )


def check_perturb_outputs(
    out: str | os.PathLike[str],
    *,
    report: str | os.PathLike[str] | None = None,
    html: str | os.PathLike[str] | None = None,
) -> None:
    """Fail before the run when the outputs clearly cannot be written.

    Raises:
        ConfigError: two of ``out``, ``report`` and ``html`` name the same file.
        OutputError: an output is a directory, lies under a file, or its directory
            does not accept new files.
    """
    named = [("--out", out), ("--report", report), ("--html", html)]
    given = [(flag, path) for flag, path in named if path is not None]
    for k, (flag_a, a) in enumerate(given):
        for flag_b, b in given[k + 1 :]:
            if _same_output(a, b):
                raise ConfigError(f"{flag_a} and {flag_b} both name {os.fspath(a)}; give two files")
    for _, path in given:
        check_output(path)


def _same_output(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    if STDOUT in (os.fspath(a), os.fspath(b)):
        return os.fspath(a) == os.fspath(b)
    return os.path.realpath(a) == os.path.realpath(b)


def write_perturb_outputs(
    result: PerturbResult,
    out: str | os.PathLike[str],
    *,
    report: str | os.PathLike[str] | None = None,
) -> None:
    """Write the perturbed CoNLL-U (and the JSON report) as one set.

    Both are finished in temporary files and renamed into place together, so a failure
    leaves neither (and earlier files of those names untouched); called inside a larger
    :func:`~brittle.engine.core.atomic.output_set` (as
    :func:`brittle.engine.perturb.perturb_html.write_perturb_set` does, adding the HTML page),
    they join it. ``-`` is standard
    output; devices, FIFOs and symbolic links are written as
    :func:`~brittle.engine.core.atomic.atomic_write` says.

    Raises:
        OutputError: an output cannot be written.
    """
    with output_set():
        write_conllu(result.sentences, out)
        if report is not None:
            write_json(Path(report), result.report(), sort_keys=True)
