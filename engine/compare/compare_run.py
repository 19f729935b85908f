"""How much each perturbation method disturbs the parse (La Malfa et al., Figure 7).

For every method and budget tau, each sentence gets ``b`` random perturbations of at
most tau words (the generator's own seeded draw, no constraint applied); the original
and every perturbation are parsed by the same parser, and the normalised tree edit
distance between the parse of the original and the parse of each perturbation is
measured. The reference is the distance between the parses of two *different*
sentences of the same treebank:

- ``random pairs``: each sentence against another one drawn uniformly (seeded). The
  trees usually differ in size; the edit distance handles that (insertions and
  deletions), and dividing by the larger word count keeps it in a comparable range.
  A length difference alone already costs ``|n_a - n_b| / max(n_a, n_b)``.
- ``random pairs, same length``: each sentence against another one with exactly the
  same number of words (sentences with no such partner are left out). This removes
  the size effect, so it is the stricter reference.

A method "preserves syntax" to the extent that its mean distance stays well below the
references. POS preservation is reported against the gold UPOS (the re-tag agreement)
and against the tagger's own tags on the original (which cancels tagger errors).

Every row also says how many words its candidates change (substituted or moved) and,
for reorderings, their mean DND and IDC (Clouatre et al.). With ``quality`` on, every
drawn candidate is also measured for how natural it leaves the sentence
(:class:`~brittle.search.quality.QualityMeter`): the causal LM's surprisal increase in
bits per word and the MiniLM sentence similarity.
"""

from __future__ import annotations

import math
import os
import platform
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from brittle.engine.core.errors import ConfigError
from brittle.engine.core.perturbation import Perturbation, apply_perturbation
from brittle.engine.core.sentence import Sentence
from brittle.engine.core.versions import versions
from brittle.engine.perturb.perturb_run import (
    check_requirements,
    chunks,
    make_generator,
    mean_or_none,
    read_treebank,
)
from brittle.engine.runs.run_checks import (
    check_at_least,
    check_precision,
)
from brittle.engine.runs.shards import Shard, ShardExecutor, ShardTask, ShardWorker, run_shards
from brittle.scorers.hamming import hamming_batch
from brittle.scorers.order import permutation_scores
from brittle.scorers.parsers import make_parser
from brittle.scorers.parsers.base import Parse, Parser
from brittle.scorers.representations import check_device
from brittle.search.constraints import TreeLabels, changed_words, parse_distances
from brittle.search.generators.base import Generator, SubstitutionGenerator, sentence_rng
from brittle.search.quality import PairQuality, QualityMeter
from brittle.search.sampling import sample_substitutions
from brittle.search.sentence_models import forget_texts

__all__ = [
    "RANDOM_PAIRS",
    "SAME_LENGTH_PAIRS",
    "ChunkMeasures",
    "CompareConfig",
    "CompareResult",
    "CompareRow",
    "CompareShards",
    "compare_chunk",
    "compare_methods",
    "compare_sentences",
    "random_partners",
]

RANDOM_PAIRS = "random pairs"
SAME_LENGTH_PAIRS = "random pairs, same length"

#: Called with (label of the step, sentences finished in it, sentences in it).
ProgressFn = Callable[[str, int, int], None]


@dataclass(frozen=True)
class CompareConfig:
    """Settings of a comparison.

    Attributes:
        methods: registered generator names.
        budgets: the tau values.
        candidates: b, perturbations drawn per sentence, method and tau.
        parser: registered parser name.
        seed: seeds every draw and the random pairs.
        limit: use the first ``limit`` sentences (``None``: all).
        tree_labels: node labels of the main distance (``deprel``); the unlabelled
            distance (tree shape only) is always reported beside it.
        chunk_size: sentences per generator/parser call.
        quality: measure every drawn candidate's surprisal increase and sentence
            similarity (loads the causal LM and the sentence encoder).
        device: torch device of the quality models (``None``: ``cuda`` when
            available, else ``cpu``).
        dtype: precision of the quality models (``float32``, ``float16``,
            ``bfloat16``; ``None``: each model's own).
    """

    methods: tuple[str, ...]
    budgets: tuple[int, ...] = (1, 2, 3)
    candidates: int = 10
    parser: str = "spacy"
    seed: int = 0
    limit: int | None = None
    tree_labels: TreeLabels = "deprel"
    chunk_size: int = 64
    quality: bool = True
    device: str | None = None
    dtype: str | None = None

    def __post_init__(self) -> None:
        # before anything loads: an unknown device, or one this machine lacks
        object.__setattr__(self, "device", check_device(self.device))
        check_precision(self.dtype)
        if not self.methods:
            raise ConfigError("give at least one method")
        if not self.budgets or min(self.budgets) < 1:
            raise ConfigError(f"budgets must be positive integers, got {self.budgets}")
        check_at_least("--candidates", self.candidates)
        check_at_least("--limit", self.limit, 2, "random pairs need two sentences")
        check_at_least("chunk size", self.chunk_size)

    def cells(self) -> list[tuple[str, int]]:
        """Every ``(method, tau)`` measured, in the order of the rows."""
        return [(m, tau) for m in self.methods for tau in self.budgets]


@dataclass(frozen=True)
class CompareRow:
    """One line of the comparison table.

    Attributes:
        method: generator name, or :data:`RANDOM_PAIRS` / :data:`SAME_LENGTH_PAIRS`.
        budget: tau (``None`` for the references).
        sentences: sentences with at least one perturbation (or pair).
        without_candidates: sentences that got none (nothing eligible / no partner).
        candidates: distances measured.
        distance: mean over sentences of the mean normalised tree edit distance over
            their candidates, labelled as configured.
        distance_sem: standard error of ``distance`` over sentences.
        distance_unlabelled: the same with tree shape only.
        best_of_b: mean over sentences of the smallest distance among their candidates
            (what Algorithm 1's syntax ranking can reach).
        share_identical: share of candidates whose labelled parse distance is 0.
        pos_gold: share of changed words whose new tag equals the gold UPOS.
        pos_tagger: share of changed words whose new tag equals the tagger's tag on
            the original.
        mean_hamming: mean words changed per candidate (FORM Hamming distance).
        seconds: wall time of this row (generation + parsing + quality).
        mean_words_changed: mean words substituted or moved per candidate.
        mean_surprisal_increase: mean over candidates of the causal LM's surprisal
            increase, bits per word (``None``: quality not measured).
        mean_similarity: mean over candidates of the MiniLM sentence similarity.
        mean_dnd, mean_idc: for reorderings, the mean displacement of the word order.
    """

    method: str
    budget: int | None
    sentences: int
    without_candidates: int
    candidates: int
    distance: float | None
    distance_sem: float | None
    distance_unlabelled: float | None
    best_of_b: float | None
    share_identical: float | None
    pos_gold: float | None
    pos_tagger: float | None
    mean_hamming: float | None
    seconds: float = 0.0
    mean_words_changed: float | None = None
    mean_surprisal_increase: float | None = None
    mean_similarity: float | None = None
    mean_dnd: float | None = None
    mean_idc: float | None = None


@dataclass(frozen=True)
class CompareResult:
    """The comparison as data: rows per method and budget, then the references."""

    config: CompareConfig
    treebank: str
    rows: tuple[CompareRow, ...]
    parser: Mapping[str, object] = field(default_factory=dict)
    versions: Mapping[str, str] = field(default_factory=dict)

    def method_rows(self) -> list[CompareRow]:
        """Rows of the perturbation methods."""
        return [r for r in self.rows if r.budget is not None]

    def reference_rows(self) -> list[CompareRow]:
        """Rows of the random-pair references."""
        return [r for r in self.rows if r.budget is None]

    def to_dict(self) -> dict[str, object]:
        """JSON-ready mapping (the configuration's ``dtype`` only when set, so a default
        run's file is as it always was)."""
        config = {**asdict(self.config), "methods": list(self.config.methods)}
        if self.config.dtype is None:
            del config["dtype"]
        return {
            "command": "compare-methods",
            "treebank": self.treebank,
            "config": config,
            "seed": self.config.seed,
            "parser": dict(self.parser),
            "versions": dict(self.versions),
            "rows": [asdict(r) for r in self.rows],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CompareResult:
        """The result :meth:`to_dict` wrote (``compare-methods.json``), to render its
        tables again without measuring.

        The device it ran on is not kept: a result read on another machine must not
        need that machine's GPU.

        Raises:
            KeyError, TypeError, ValueError: ``data`` is not such a mapping.
        """
        config = dict(data["config"])
        config["methods"] = tuple(config["methods"])
        config["budgets"] = tuple(config["budgets"])
        config["device"] = None
        return cls(
            config=CompareConfig(**config),
            treebank=str(data["treebank"]),
            rows=tuple(CompareRow(**row) for row in data["rows"]),
            parser=dict(data.get("parser", {})),
            versions=dict(data.get("versions", {})),
        )


# ------------------------------------------------------------------ measurement
@dataclass
class _Tally:
    """Accumulates per-sentence measurements of one row."""

    per_sentence: list[float] = field(default_factory=list)
    per_sentence_unlabelled: list[float] = field(default_factory=list)
    best: list[float] = field(default_factory=list)
    identical: int = 0
    candidates: int = 0
    without: int = 0
    pos_words: int = 0
    pos_gold: int = 0
    pos_tagger: int = 0
    hamming: int = 0
    words_changed: int = 0
    surprisal: list[float] = field(default_factory=list)
    similarity: list[float] = field(default_factory=list)
    dnd: list[float] = field(default_factory=list)
    idc: list[float] = field(default_factory=list)

    def extend(self, other: _Tally) -> None:
        """Append ``other``'s measurements (of the sentences after this one's)."""
        self.per_sentence.extend(other.per_sentence)
        self.per_sentence_unlabelled.extend(other.per_sentence_unlabelled)
        self.best.extend(other.best)
        self.identical += other.identical
        self.candidates += other.candidates
        self.without += other.without
        self.pos_words += other.pos_words
        self.pos_gold += other.pos_gold
        self.pos_tagger += other.pos_tagger
        self.hamming += other.hamming
        self.words_changed += other.words_changed
        self.surprisal.extend(other.surprisal)
        self.similarity.extend(other.similarity)
        self.dnd.extend(other.dnd)
        self.idc.extend(other.idc)

    def add_quality(self, measured: Sequence[PairQuality]) -> None:
        """Take the quality of some candidates into account."""
        for q in measured:
            self.surprisal.append(q.surprisal_increase)
            self.similarity.append(q.similarity)

    def row(self, method: str, budget: int | None, seconds: float) -> CompareRow:
        d = np.asarray(self.per_sentence, dtype=np.float64)
        return CompareRow(
            method=method,
            budget=budget,
            sentences=int(d.size),
            without_candidates=self.without,
            candidates=self.candidates,
            distance=mean_or_none(self.per_sentence),
            distance_sem=float(d.std(ddof=1) / math.sqrt(d.size)) if d.size > 1 else None,
            distance_unlabelled=mean_or_none(self.per_sentence_unlabelled),
            best_of_b=mean_or_none(self.best),
            share_identical=self.identical / self.candidates if self.candidates else None,
            pos_gold=self.pos_gold / self.pos_words if self.pos_words else None,
            pos_tagger=self.pos_tagger / self.pos_words if self.pos_words else None,
            mean_hamming=self.hamming / self.candidates if self.candidates else None,
            seconds=round(seconds, 2),
            mean_words_changed=self.words_changed / self.candidates if self.candidates else None,
            mean_surprisal_increase=_round(mean_or_none(self.surprisal)),
            mean_similarity=_round(mean_or_none(self.similarity)),
            mean_dnd=_round(mean_or_none(self.dnd)),
            mean_idc=_round(mean_or_none(self.idc)),
        )


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def _draw_by_budget(
    generator: Generator, chunk: Sequence[Sentence], *, budgets: Sequence[int], b: int, seed: int
) -> dict[int, list[list[Perturbation]]]:
    """Each budget's draw for a chunk.

    Substitution generators build their candidate tables once and draw every budget
    from them, exactly as their ``perturb`` would (same helper, same seeded stream per
    sentence); others are asked once per budget.
    """
    if isinstance(generator, SubstitutionGenerator):
        tables = generator.candidates(list(chunk), top_k=generator.top_k)
        return {
            tau: [
                sample_substitutions(t, tau=tau, b=b, rng=sentence_rng(seed, t.sentence_id))
                for t in tables
            ]
            for tau in budgets
        }
    return {tau: generator.perturb(list(chunk), b=b, seed=seed, tau=tau) for tau in budgets}


def _measure(
    tally: _Tally,
    original: Sentence,
    original_parse: Parse,
    candidates: Sequence[Sentence],
    perturbations: Sequence[Perturbation],
    parses: Sequence[Parse],
    labels: TreeLabels,
) -> None:
    if not candidates:
        tally.without += 1
        return
    d = parse_distances(original_parse, parses, labels=labels)
    du = parse_distances(original_parse, parses, labels="none")
    tally.per_sentence.append(float(d.mean()))
    tally.per_sentence_unlabelled.append(float(du.mean()))
    tally.best.append(float(d.min()))
    tally.identical += int((d == 0).sum())
    tally.candidates += len(candidates)
    tally.hamming += int(hamming_batch(original.forms, [c.forms for c in candidates]).sum())
    for p, parse in zip(perturbations, parses, strict=True):
        new_idx, old_idx = changed_words(p)
        tally.words_changed += len(new_idx)
        if p.order is not None:
            scores = permutation_scores(p.order)
            tally.dnd.append(scores.dnd)
            tally.idc.append(scores.idc)
        for j, i in zip(new_idx, old_idx, strict=True):
            tally.pos_words += 1
            tally.pos_gold += parse.upos[j] == original.upos[i]
            tally.pos_tagger += parse.upos[j] == original_parse.upos[i]


def random_partners(lengths: Sequence[int], *, seed: int, same_length: bool) -> list[int | None]:
    """For each sentence, the index of another sentence (``None`` when there is none).

    Args:
        lengths: word counts of the sentences, shape (n,).
        seed: seeds the draw.
        same_length: only partners with exactly the same word count.
    """
    rng = np.random.default_rng([seed & 0xFFFFFFFF, 0x9A125])
    n = len(lengths)
    everyone = list(range(n))
    by_length: dict[int, list[int]] = {}
    for i, k in enumerate(lengths):
        by_length.setdefault(k, []).append(i)
    out: list[int | None] = []
    for i in range(n):
        pool = by_length[lengths[i]] if same_length else everyone
        if len(pool) < 2:
            out.append(None)
            continue
        # Draw among the len(pool) - 1 others: skip over i's own place.
        j = int(rng.integers(len(pool) - 1))
        out.append(pool[j] if j < pool.index(i) else pool[j + 1])
    return out


def _pairs_row(
    label: str,
    parses: Sequence[Parse],
    partners: Sequence[int | None],
    labels: TreeLabels,
) -> CompareRow:
    start = time.perf_counter()
    tally = _Tally()
    for i, j in enumerate(partners):
        if j is None:
            tally.without += 1
            continue
        d = parse_distances(parses[i], [parses[j]], labels=labels)
        du = parse_distances(parses[i], [parses[j]], labels="none")
        tally.per_sentence.append(float(d[0]))
        tally.per_sentence_unlabelled.append(float(du[0]))
        tally.best.append(float(d[0]))
        tally.identical += int(d[0] == 0)
        tally.candidates += 1
    row = tally.row(label, None, time.perf_counter() - start)
    return CompareRow(
        **{
            **asdict(row),
            "pos_gold": None,
            "pos_tagger": None,
            "mean_hamming": None,
            "mean_words_changed": None,
        }
    )


@dataclass(frozen=True)
class ChunkMeasures:
    """What one chunk of sentences gives the comparison.

    Attributes:
        parses: the parser's parse of each original sentence of the chunk, in order.
        tallies: the chunk's measurements per method and tau, in the order of
            :meth:`CompareConfig.cells` (accumulators, merged in input order).
        seconds: wall time per method and tau spent on the chunk, same order.
        parser: the parser's description (for the report).
    """

    parses: tuple[Parse, ...]
    tallies: tuple[_Tally, ...]
    seconds: tuple[float, ...]
    parser: Mapping[str, object]


def compare_chunk(
    chunk: Sequence[Sentence],
    *,
    config: CompareConfig,
    generators: Mapping[str, Generator],
    parser: Parser,
    quality: QualityMeter | None = None,
    method_done: Callable[[str], None] | None = None,
) -> ChunkMeasures:
    """Every method and tau on one chunk: each generator draws for the whole chunk and
    the parser parses each budget's candidates in one call. Every draw is seeded from
    the seed and the sentence id, so a chunk comes out the same in any process.
    ``method_done(method)`` is called as each method finishes the chunk (for progress:
    one chunk of the slowest method takes minutes).

    The parser's cache and the shared models' text caches are emptied first: a chunk's
    candidates do not come back in a later chunk, so keeping them would only make what
    a comparison holds grow with the treebank (a chunk then computes what it needs
    alone, as it does on a worker)."""
    parser.clear()
    forget_texts()
    originals = parser.parse(chunk)
    cells = config.cells()
    tallies = {cell: _Tally() for cell in cells}
    seconds = dict.fromkeys(cells, 0.0)
    for method in config.methods:
        generator = generators[method]
        start = time.perf_counter()
        drawn = _draw_by_budget(
            generator, chunk, budgets=config.budgets, b=config.candidates, seed=config.seed
        )
        shared = (time.perf_counter() - start) / len(config.budgets)
        for tau in config.budgets:
            start = time.perf_counter()
            tally = tallies[method, tau]
            per_sentence = [
                list(dict.fromkeys(p for p in ps if not p.is_identity)) for ps in drawn[tau]
            ]
            applied = [
                [apply_perturbation(s, p) for p in ps]
                for s, ps in zip(chunk, per_sentence, strict=True)
            ]
            flat = [c for cs in applied for c in cs]
            parses = parser.parse(flat)
            k = 0
            for s, original, ps, cs in zip(chunk, originals, per_sentence, applied, strict=True):
                _measure(tally, s, original, cs, ps, parses[k : k + len(cs)], config.tree_labels)
                k += len(cs)
            if quality is not None:
                originals_of = [s for s, cs in zip(chunk, applied, strict=True) for _ in cs]
                tally.add_quality(
                    quality.measure(originals_of, flat, [p for ps in per_sentence for p in ps])
                )
            seconds[method, tau] += shared + time.perf_counter() - start
        if method_done is not None:
            method_done(method)
    return ChunkMeasures(
        parses=tuple(originals),
        tallies=tuple(tallies[cell] for cell in cells),
        seconds=tuple(seconds[cell] for cell in cells),
        parser=parser.describe(),
    )


class _CompareWorker(ShardWorker[list[Sentence], ChunkMeasures]):
    """What a worker of a sharded comparison holds: the generators, the parser and
    the quality meter, loaded once."""

    def __init__(self, task: CompareShards) -> None:
        config = task.config
        options = dict(task.generator_options)
        self.config = config
        self.generators = {m: make_generator(m, **dict(options.get(m, ()))) for m in config.methods}
        for generator in self.generators.values():
            generator.prepare()
        self.parser = make_parser(config.parser)
        self.parser.prepare()
        self.quality = (
            QualityMeter(device=config.device, dtype=config.dtype) if config.quality else None
        )

    def run(self, shard: Shard[list[Sentence]]) -> ChunkMeasures:
        """Every method and tau on the shard's chunk."""
        return compare_chunk(
            shard.payload,
            config=self.config,
            generators=self.generators,
            parser=self.parser,
            quality=self.quality,
        )


@dataclass(frozen=True)
class CompareShards(ShardTask[list[Sentence], ChunkMeasures]):
    """The job of a sharded comparison's workers: :func:`compare_chunk` on each shard.

    Attributes:
        config: the comparison's settings.
        generator_options: per method, its generator's keyword options as
            ``(name, value)`` pairs.
    """

    config: CompareConfig
    generator_options: tuple[tuple[str, tuple[tuple[str, object], ...]], ...] = ()

    def start(self, previous: ShardWorker[Any, Any] | None) -> _CompareWorker:
        """Load the generators, the parser and the quality models."""
        return _CompareWorker(self)


def compare_sentences(
    sentences: Sequence[Sentence],
    *,
    config: CompareConfig,
    generators: Mapping[str, Generator],
    parser: Parser,
    progress: ProgressFn | None = None,
    treebank: str = "",
    quality: QualityMeter | None = None,
) -> CompareResult:
    """The comparison over in-memory sentences with ready-made components.

    Args:
        sentences: at least two sentences.
        config: settings (``limit`` is not applied here).
        generators: one generator per name in ``config.methods``.
        parser: parses originals, perturbations and partners.
        progress: called as ``progress(method, done, total)`` as each method finishes
            a chunk (``done``: sentences of that method measured).
        treebank: the input path, for the report.
        quality: measures every drawn candidate (one call per chunk and budget;
            ``None``: quality is not measured, whatever ``config.quality`` says). Its
            re-tag agreement is not needed: ``pos_gold`` is that share already.
    """
    if len(sentences) < 2:
        raise ConfigError("compare-methods needs at least two sentences")
    parser.prepare()

    def parts() -> Iterator[ChunkMeasures]:
        done = 0
        for chunk in chunks(sentences, config.chunk_size):
            done += len(chunk)

            def method_done(method: str, done: int = done) -> None:
                if progress is not None:
                    progress(method, done, len(sentences))

            yield compare_chunk(
                chunk,
                config=config,
                generators=generators,
                parser=parser,
                quality=quality,
                method_done=method_done,
            )

    return _merge(sentences, config, parts(), treebank=treebank)


def _merge(
    sentences: Sequence[Sentence],
    config: CompareConfig,
    parts: Iterable[ChunkMeasures],
    *,
    treebank: str,
) -> CompareResult:
    """The result from the chunks' measures, taken in input order: each row's
    per-sentence values in the order one process appends them, then the references
    on every original's parse."""
    cells = config.cells()
    tallies = {cell: _Tally() for cell in cells}
    seconds = dict.fromkeys(cells, 0.0)
    originals: list[Parse] = []
    described: Mapping[str, object] = {}
    for part in parts:
        originals.extend(part.parses)
        for cell, tally, spent in zip(cells, part.tallies, part.seconds, strict=True):
            tallies[cell].extend(tally)
            seconds[cell] += spent
        described = part.parser
    rows = [tallies[m, tau].row(m, tau, seconds[m, tau]) for m, tau in cells]
    lengths = [len(s) for s in sentences]
    for label, same in ((RANDOM_PAIRS, False), (SAME_LENGTH_PAIRS, True)):
        partners = random_partners(lengths, seed=config.seed, same_length=same)
        rows.append(_pairs_row(label, originals, partners, config.tree_labels))
    return CompareResult(
        config=config,
        treebank=treebank,
        rows=tuple(rows),
        parser=described,
        versions={**versions(), "python": platform.python_version()},
    )


def _sharded(
    sentences: Sequence[Sentence],
    config: CompareConfig,
    task: CompareShards,
    executor: ShardExecutor,
    *,
    progress: ProgressFn | None,
    treebank: str,
) -> CompareResult:
    """The comparison with ``executor``'s workers measuring the chunks, one shard each."""
    if len(sentences) < 2:
        raise ConfigError("compare-methods needs at least two sentences")
    shards = (
        Shard(number, start, start + len(chunk), list(chunk))
        for number, (start, chunk) in enumerate(
            zip(
                range(0, len(sentences), config.chunk_size),
                chunks(sentences, config.chunk_size),
                strict=True,
            )
        )
    )
    done = 0

    def finished(shard: Shard[list[Sentence]], _: ChunkMeasures) -> None:
        nonlocal done
        done += shard.stop - shard.start
        if progress is not None:
            for method in config.methods:
                progress(method, done, len(sentences))

    parts = (part for _, part in run_shards(executor, task, shards, on_done=finished))
    return _merge(sentences, config, parts, treebank=treebank)


def compare_methods(
    path: str | os.PathLike[str],
    *,
    methods: Sequence[str],
    budgets: Sequence[int] = (1, 2, 3),
    candidates: int = 10,
    parser: str = "spacy",
    seed: int = 0,
    limit: int | None = None,
    tree_labels: TreeLabels = "deprel",
    generator_options: Mapping[str, Mapping[str, object]] | None = None,
    progress: ProgressFn | None = None,
    quality: bool = True,
    device: str | None = None,
    dtype: str | None = None,
    chunk_size: int = 64,
    executor: ShardExecutor | None = None,
) -> CompareResult:
    """Compare methods on a treebank: build everything by name (checked up front), run.

    Args:
        path: the CoNLL-U file.
        methods .. tree_labels, quality, device, dtype, chunk_size: see
            :class:`CompareConfig` (the workers get ``dtype`` with it).
        generator_options: per method, keyword options for its generator.
        progress: see :func:`compare_sentences`.
        executor: workers (local processes or Ray actors, :mod:`brittle.engine.runs.shards`)
            to send the chunks to, one shard each; they load the generators, the parser
            and the quality models, this process only checks them. The result is the
            same as in one process (``seconds`` apart: wall times).
    """
    config = CompareConfig(
        methods=tuple(dict.fromkeys(methods)),
        budgets=tuple(sorted(set(budgets))),
        candidates=candidates,
        parser=parser,
        seed=seed,
        limit=limit,
        tree_labels=tree_labels,
        quality=quality,
        device=device,
        dtype=dtype,
        chunk_size=chunk_size,
    )
    options = generator_options or {}
    generators = {m: make_generator(m, **dict(options.get(m, {}))) for m in config.methods}
    sentences = read_treebank(path, limit=limit)
    for generator in generators.values():
        check_requirements(sentences, generator, str(path))
    if executor is not None:
        task = CompareShards(
            config,
            tuple((m, tuple(dict(options.get(m, {})).items())) for m in config.methods),
        )
        return _sharded(sentences, config, task, executor, progress=progress, treebank=str(path))
    for generator in generators.values():
        generator.prepare()
    the_parser = make_parser(parser)
    return compare_sentences(
        sentences,
        config=config,
        generators=generators,
        parser=the_parser,
        progress=progress,
        treebank=str(path),
        quality=QualityMeter(device=device, dtype=dtype) if quality else None,
    )
