"""The ``perturb`` run: one syntax-preserving perturbation per sentence, by Algorithm 1.

For every sentence of a treebank the chosen generator draws ``b`` random perturbations
of at most ``tau`` words; the constraints (budget, POS preservation, syntax distance of
the re-parse) check them all in one batch; the admissible candidate with the largest
Hamming distance and, among those, the smallest syntax distance is kept (ties: a seeded
key). Sentences go through in chunks: the generator sees a whole chunk at once and the
parser parses every original and candidate of a chunk in one call (its cache then
answers the constraints).

Results are data (:class:`PerturbResult`); :func:`write_perturb_outputs` writes the
CoNLL-U and the JSON report atomically. Nothing depends on timing or process state, so
the same seed gives byte-identical files.
"""

from __future__ import annotations

import math
import os
import platform
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from brittle.engine.conllu import iter_conllu, write_conllu
from brittle.engine.errors import ConfigError
from brittle.engine.registry import registry

if TYPE_CHECKING:
    from brittle.engine.sentence import Sentence
    from brittle.scorers.parsers.base import Parser
    from brittle.search.best_of_b import SampleOutcome
    from brittle.search.constraints import Constraint, TreeLabels

__all__ = [
    "DEFAULT_MAX_SYNTAX_DISTANCE",
    "PerturbConfig",
    "PerturbResult",
    "SentenceRecord",
    "build_constraints",
    "make_generator",
    "perturb_sentences",
    "perturb_treebank",
    "write_perturb_outputs",
]

#: Default largest normalised tree edit distance between the parses (see docs).
DEFAULT_MAX_SYNTAX_DISTANCE = 0.1

Status = Literal["perturbed", "unchanged", "rejected"]

#: Called with the number of sentences just finished.
ProgressFn = Callable[[int], None]

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
            parse of the original and the parse of the perturbation.
        parser: registered parser name (``spacy``, ``stanza``, ``gold``).
        seed: seeds the draws and the tie-break; same seed, same output.
        limit: perturb only the first ``limit`` sentences (``None``: all).
        enforce_pos: also reject candidates whose changed words lose their UPOS.
        tree_labels: node labels for the tree edit distance (``deprel``, ``upos``,
            ``none``).
        chunk_size: sentences handed to the generator and the parser at once.
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

    def __post_init__(self) -> None:
        if self.budget < 1:
            raise ConfigError(f"--budget must be at least 1, got {self.budget}")
        if self.candidates < 1:
            raise ConfigError(f"--candidates must be at least 1, got {self.candidates}")
        if not self.max_syntax_distance >= 0:
            raise ConfigError(f"--max-syntax-distance must be >= 0, got {self.max_syntax_distance}")
        if self.limit is not None and self.limit < 1:
            raise ConfigError(f"--limit must be at least 1, got {self.limit}")
        if self.chunk_size < 1:
            raise ConfigError(f"chunk size must be at least 1, got {self.chunk_size}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping (an infinite distance becomes the string ``"inf"``)."""
        out = asdict(self)
        if math.isinf(self.max_syntax_distance):
            out["max_syntax_distance"] = "inf"
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
        syntax: its normalised tree edit distance to the original's parse.
        changed: words whose tag was compared (changed or moved words).
        pos_kept: of those, how many kept their UPOS.
        perturbation: the ``# perturbation`` description of the choice.
    """

    sent_id: str
    words: int
    status: Status
    drawn: int = 0
    admissible: int = 0
    hamming: int | None = None
    syntax: float | None = None
    changed: int = 0
    pos_kept: int = 0
    perturbation: str | None = None


@dataclass(frozen=True)
class PerturbResult:
    """The run's data: output sentences, one record per sentence, provenance.

    Attributes:
        config: the resolved configuration.
        treebank: the input path (as given), or ``""`` for in-memory sentences.
        sentences: the output sentences, in input order (perturbed or unchanged).
        records: one record per sentence, same order.
        parser: the parser's description (name, model, versions, cache size).
        versions: package versions.
    """

    config: PerturbConfig
    treebank: str
    sentences: tuple[Sentence, ...]
    records: tuple[SentenceRecord, ...]
    parser: Mapping[str, object] = field(default_factory=dict)
    versions: Mapping[str, str] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        """Sentences per status (``perturbed``, ``unchanged``, ``rejected``)."""
        out = {"perturbed": 0, "unchanged": 0, "rejected": 0}
        for r in self.records:
            out[r.status] += 1
        return out

    def summary(self) -> dict[str, Any]:
        """Counts and means over the perturbed sentences (None when there are none)."""
        done = [r for r in self.records if r.status == "perturbed"]
        changed = sum(r.changed for r in done)
        return {
            **self.counts(),
            "sentences": len(self.records),
            "candidates_drawn": sum(r.drawn for r in self.records),
            "candidates_admissible": sum(r.admissible for r in self.records),
            "mean_syntax_distance": _mean([r.syntax for r in done]),
            "mean_hamming": _mean([r.hamming for r in done]),
            "pos_preservation_rate": (sum(r.pos_kept for r in done) / changed if changed else None),
            "words_compared_for_pos": changed,
        }

    def report(self) -> dict[str, Any]:
        """The JSON report: per-method summary, per-sentence records, config, versions."""
        return {
            "command": "perturb",
            "treebank": self.treebank,
            "config": self.config.to_dict(),
            "seed": self.config.seed,
            "methods": {self.config.method: self.summary()},
            "parser": dict(self.parser),
            "versions": dict(self.versions),
            "sentences": [asdict(r) for r in self.records],
        }


def _mean(values: Sequence[float | int | None]) -> float | None:
    xs = [float(v) for v in values if v is not None]
    return float(np.mean(xs)) if xs else None


def make_generator(method: str, **options: Any) -> Any:
    """The generator registered as ``method``, built with its keyword options."""
    cls = registry("generators").get(method)
    return cls(**options)  # type: ignore[operator]


def build_constraints(config: PerturbConfig, parser: Parser) -> list[Constraint]:
    """Budget (cheap) first, then POS preservation, then the syntax distance."""
    from brittle.search.constraints import BudgetConstraint, PosConstraint, SyntaxConstraint

    return [
        BudgetConstraint(config.budget),
        PosConstraint(parser, enforce=config.enforce_pos),
        SyntaxConstraint(
            parser, max_distance=config.max_syntax_distance, labels=config.tree_labels
        ),
    ]


def check_requirements(sentences: Sequence[Sentence], generator: Any, source: str) -> None:
    """Fail early when the treebank lacks a column the generator reads.

    A column counts as missing when it is ``_`` on every word of the treebank.
    """
    needs = sorted(set(getattr(generator, "requires", frozenset())) & set(_COLUMN_READERS))
    for column in needs:
        read = _COLUMN_READERS[column]
        if sentences and all(v == "_" for s in sentences for v in read(s)):
            raise ConfigError(
                f"method {generator.method!r} needs the {column.upper()} column, "
                f"but {source or 'the input'} has none"
            )


def _chunks(items: Sequence[Sentence], size: int) -> Iterator[Sequence[Sentence]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _tiebreak_rng(seed: int, sent_id: str) -> np.random.Generator:
    from brittle.search.generators.base import stable_hash

    # A stream of its own, apart from the generator's draws for the same sentence.
    return np.random.default_rng([seed & 0xFFFFFFFF, stable_hash(sent_id), 0x7E])


def _record(outcome: SampleOutcome) -> SentenceRecord:
    from brittle.engine.perturbation import describe
    from brittle.search.constraints import changed_words

    original = outcome.original
    base = {
        "sent_id": original.sent_id,
        "words": len(original),
        "drawn": outcome.drawn,
        "admissible": outcome.admissible,
    }
    p = outcome.perturbation
    if p is None:
        status: Status = "unchanged" if outcome.drawn == 0 else "rejected"
        return SentenceRecord(status=status, **base)  # type: ignore[arg-type]
    changed = len(changed_words(p)[0])
    pos = outcome.value("pos")
    hamming = outcome.value("budget")
    return SentenceRecord(
        status="perturbed",
        hamming=None if hamming is None else round(hamming),
        syntax=outcome.value("syntax"),
        changed=changed,
        pos_kept=0 if pos is None or math.isnan(pos) else round(pos * changed),
        perturbation=describe(p, original),
        **base,  # type: ignore[arg-type]
    )


def perturb_sentences(
    sentences: Sequence[Sentence],
    *,
    config: PerturbConfig,
    generator: Any,
    parser: Parser,
    progress: ProgressFn | None = None,
    treebank: str = "",
) -> PerturbResult:
    """Algorithm 1 over in-memory sentences with ready-made components.

    Args:
        sentences: the input, in order (``config.limit`` is not applied here).
        config: the run's settings.
        generator: anything with ``perturb(sentences, *, b, seed, tau)``.
        parser: parses originals and candidates (``prepare()`` is called first).
        progress: called after each chunk with the number of sentences done.
        treebank: the input path, for the report.
    """
    from brittle.search.best_of_b import best_of_batch, distinct_candidates

    parser.prepare()
    constraints = build_constraints(config, parser)
    out: list[Sentence] = []
    records: list[SentenceRecord] = []
    for chunk in _chunks(sentences, config.chunk_size):
        drawn = generator.perturb(
            list(chunk), b=config.candidates, seed=config.seed, tau=config.budget
        )
        if len(drawn) != len(chunk):
            raise RuntimeError(
                f"generator {config.method} returned {len(drawn)} lists for {len(chunk)} sentences"
            )
        batches = [distinct_candidates(s, d) for s, d in zip(chunk, drawn, strict=True)]
        # One parser call for the whole chunk; the constraints then read the cache.
        parser.parse([s for b in batches if len(b) for s in (b.original, *b.sentences)])
        for batch in batches:
            outcome = best_of_batch(
                batch,
                constraints=constraints,
                rng=_tiebreak_rng(config.seed, batch.original.sent_id),
            )
            out.append(outcome.sentence)
            records.append(_record(outcome))
        if progress is not None:
            progress(len(chunk))
    from brittle.engine.attack import versions

    return PerturbResult(
        config=config,
        treebank=treebank,
        sentences=tuple(out),
        records=tuple(records),
        parser=parser.describe(),
        versions={**versions(), "python": platform.python_version()},
    )


def read_treebank(path: str | os.PathLike[str], *, limit: int | None = None) -> list[Sentence]:
    """The first ``limit`` sentences of a CoNLL-U file (all when ``limit`` is None)."""
    out: list[Sentence] = []
    for sentence in iter_conllu(path):
        if limit is not None and len(out) >= limit:
            break
        out.append(sentence)
    return out


def perturb_treebank(
    path: str | os.PathLike[str],
    *,
    method: str,
    budget: int = 1,
    candidates: int = 20,
    max_syntax_distance: float = DEFAULT_MAX_SYNTAX_DISTANCE,
    parser: str = "spacy",
    seed: int = 0,
    limit: int | None = None,
    enforce_pos: bool = False,
    tree_labels: TreeLabels = "deprel",
    generator_options: Mapping[str, Any] | None = None,
    parser_options: Mapping[str, Any] | None = None,
    progress: ProgressFn | None = None,
    on_start: Callable[[int], None] | None = None,
) -> PerturbResult:
    """Perturb a treebank: build the components by name, check them, run Algorithm 1.

    Args:
        path: the CoNLL-U file.
        method .. tree_labels: see :class:`PerturbConfig`.
        generator_options, parser_options: keyword options for the components.
        progress: called with the number of sentences finished after each chunk.
        on_start: called once with the number of sentences to do, after loading.

    Raises:
        BrittleInputError: the treebank cannot be read.
        ConfigError: an unknown name, a bad option, a missing column.
        ResourceMissingError: a model or lexicon is not installed.
    """
    from brittle.scorers.parsers import make_parser

    config = PerturbConfig(
        method=method,
        budget=budget,
        candidates=candidates,
        max_syntax_distance=max_syntax_distance,
        parser=parser,
        seed=seed,
        limit=limit,
        enforce_pos=enforce_pos,
        tree_labels=tree_labels,
    )
    generator = make_generator(method, **dict(generator_options or {}))
    the_parser = make_parser(parser, **dict(parser_options or {}))
    sentences = read_treebank(path, limit=limit)
    check_requirements(sentences, generator, str(path))
    the_parser.prepare()
    if on_start is not None:
        on_start(len(sentences))
    return perturb_sentences(
        sentences,
        config=config,
        generator=generator,
        parser=the_parser,
        progress=progress,
        treebank=str(path),
    )


def write_perturb_outputs(
    result: PerturbResult,
    out: str | os.PathLike[str],
    *,
    report: str | os.PathLike[str] | None = None,
) -> None:
    """Write the perturbed CoNLL-U (and the JSON report), each atomically."""
    write_conllu(result.sentences, out)
    if report is not None:
        from brittle.engine.report import write_json

        write_json(Path(report), result.report())
