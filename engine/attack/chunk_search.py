"""The search of one chunk of sentences, in the run's process or in a worker's.

:class:`ChunkSearch` holds what searching needs (components, the scores cache, the
objective) and turns a chunk of sentences into their rows and perturbed sentences:
candidate tables for the whole chunk, the searches side by side in lock-step rounds,
then the quality of the kept perturbations and the probes' predictions, each in one
batched call. The run loop (:mod:`brittle.engine.attack.run`) calls it chunk after
chunk; a sharded run (``--workers``, ``--ray``) sends each chunk as a shard to a
worker holding an :class:`AttackWorker`, which calls it there. A chunk is the unit in
both cases, so its batches, and therefore its floats, are the same either way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from brittle.engine.attack.assembly import AttackComponents, build_components
from brittle.engine.attack.config import AttackConfig
from brittle.engine.attack.sentence_search import RoundServices, SentenceSearch
from brittle.engine.core.memory import release_free_memory
from brittle.engine.core.sentence import Sentence
from brittle.engine.core.threads import single_blas_thread
from brittle.engine.probes.probe_eval import ProbeColumns
from brittle.engine.reports.predictions import row_predictions
from brittle.engine.reports.results import ResultRow, RowValidity, with_validity
from brittle.engine.runs.rounds import Direct, run_rounds
from brittle.engine.runs.shards import Shard, ShardTask, ShardWorker
from brittle.search.quality import QualityMeter
from brittle.search.scoring import CachedScorer, Objective
from brittle.search.sentence_models import forget_texts
from brittle.search.table import SubstitutionTable
from brittle.search.validity.grade import Grader, run_grader


def attack_grader(
    config: AttackConfig, components: AttackComponents, *, device: str | None
) -> Grader:
    """The grader of an attack's kept perturbations (:func:`run_grader`: the attack's
    own parser, spaCy when it reads the gold trees), its models in the attack's
    precision."""
    return run_grader(config.parser, components.parser, device=device, dtype=config.dtype)


def mark_validity(sentence: Sentence, row: ResultRow) -> Sentence:
    """``sentence`` (a row's perturbation applied) with ``Validity=LEVEL`` in the MISC
    of each changed word (:func:`~brittle.engine.reports.results.with_validity`;
    unchanged when the row was not graded or kept nothing)."""
    return with_validity(sentence, row.positions, row.validity if row.success else None)


#: A searched chunk: each sentence's row and its worst perturbation applied, in order.
Searched = list[tuple[ResultRow, Sentence]]


class ChunkSearch:
    """Searches chunks of sentences with one set of components.

    After each round of model work and at each chunk's start it returns the heap's free
    pages to the system (:func:`~brittle.engine.core.memory.release_free_memory`): the
    models' freed activations do not pile up in a fragmented heap, so memory stays flat
    however many chunks follow. The process it searches in (this one or a worker) runs
    numpy's BLAS on one thread (:func:`~brittle.engine.core.threads.single_blas_thread`),
    so small products between model calls do not wait for torch's threads.

    Args:
        config: the attack settings.
        components: generator, strategy, constraints and evaluator.
        cache_size: candidate rows kept by the scores cache (shared by the chunks).
        lockstep: batch the model and parser work of a chunk's sentences together;
            off: one sentence at a time (same results, more model calls).
        quality: measures the kept perturbations of each chunk, in one call, before
            their rows are returned (``None``: not measured).
        grader: grades the kept perturbations of each chunk (tree-valid, grammatical,
            meaning kept; :mod:`brittle.search.validity`), in one call, into their rows
            (``None``: not graded).
    """

    def __init__(
        self,
        config: AttackConfig,
        components: AttackComponents,
        *,
        cache_size: int,
        lockstep: bool,
        quality: QualityMeter | None,
        grader: Grader | None = None,
    ) -> None:
        self.config = config
        self.components = components
        self.lockstep = lockstep
        self.quality = quality
        self.grader = grader
        self.cache_size = cache_size
        single_blas_thread()
        self.scorer = CachedScorer(components.evaluator, cache_size=cache_size)
        evaluator = components.evaluator
        probes = tuple(name.rpartition(".")[0] for name in evaluator.primary)
        columns = ProbeColumns(probes, evaluator.tasks, evaluator.primary)
        tasks = columns.objective(config.objective) or self.scorer.tasks
        self.objective = Objective.mean_of(list(tasks))
        self.services = RoundServices(components, self.scorer)

    def clear_cache(self) -> None:
        """Start a new scores cache, forget the parses and the shared models' texts
        kept so far (the constraints' encoder and language model) and return the heap's
        free pages to the system.

        Every chunk starts so (:meth:`searches`), in one process as on a worker: only a
        chunk's own sentences can hit the scores cache (it is keyed by sentence id), and
        a chunk's candidates do not come back in a later one, so queries and results are
        unchanged, and no cache outgrows a chunk. The probes' predictions kept for the
        rows start empty too.
        """
        if self.components.predictor is not None:
            self.components.predictor.forget_predictions()
        self.scorer = CachedScorer(self.components.evaluator, cache_size=self.cache_size)
        self.services = RoundServices(self.components, self.scorer)
        self.components.parser.clear_cache()
        forget_texts()
        release_free_memory()

    def __call__(self, chunk: Sequence[Sentence], start: int) -> Searched:
        """The rows and perturbed sentences of ``chunk``, whose first sentence is
        sentence ``start`` of the treebank."""
        searches = self.searches(chunk, start)
        return self.finish(searches, self.search(searches))

    def searches(self, chunk: Sequence[Sentence], start: int) -> list[SentenceSearch]:
        """The searches of a chunk, its candidate tables generated in one batch (the
        caches start empty: :meth:`clear_cache`)."""
        self.clear_cache()
        generator = self.components.substitutions
        if generator is None:
            tables = [SubstitutionTable(s.sent_id, self.config.method, len(s)) for s in chunk]
        else:
            tables = self.components.tables.tables(generator, chunk)
        return [
            SentenceSearch(
                sentence,
                index=start + k,
                table=table,
                config=self.config,
                components=self.components,
                scorer=self.scorer,
                objective=self.objective,
            )
            for k, (sentence, table) in enumerate(zip(chunk, tables, strict=True))
        ]

    def search(
        self,
        searches: Sequence[SentenceSearch],
        on_row: Callable[[ResultRow], None] | None = None,
    ) -> list[ResultRow]:
        """Run the searches; their rows in order. ``on_row`` hears each row as its
        sentence finishes."""

        def finished(row: ResultRow) -> None:
            if on_row is not None:
                on_row(row)

        handlers = self.services.handlers()
        if not self.lockstep:
            direct = Direct(handlers)
            rows = []
            for search in searches:
                rows.append(search(direct))
                release_free_memory()
                finished(rows[-1])
            return rows
        return run_rounds(
            list(searches),
            handlers,
            on_done=lambda _, row: finished(row),
            after_round=release_free_memory,
        )

    def finish(self, searches: Sequence[SentenceSearch], rows: Sequence[ResultRow]) -> Searched:
        """The rows completed with quality and predictions, with the perturbed
        sentences."""
        measured = self._with_validity(searches, self._with_quality(searches, rows))
        completed = self._with_predictions(searches, measured)
        return [
            (row, mark_validity(s.perturbed, row))
            for row, s in zip(completed, searches, strict=True)
        ]

    def _with_validity(
        self, searches: Sequence[SentenceSearch], rows: Sequence[ResultRow]
    ) -> list[ResultRow]:
        """``rows`` with the grade of their kept perturbations (one grader call); rows
        the judges cannot grade (reorderings) stay without one."""
        if self.grader is None:
            return list(rows)
        kept = [k for k, row in enumerate(rows) if row.success]
        grades = self.grader.grade(
            [searches[k].sentence for k in kept], [searches[k].perturbed for k in kept]
        )
        out = list(rows)
        for k, grade in zip(kept, grades, strict=True):
            if not grade.graded:  # a reordering: the gold tree no longer lines up
                continue
            out[k] = dataclasses.replace(rows[k], validity=RowValidity.of(grade))
        return out

    def _with_quality(
        self, searches: Sequence[SentenceSearch], rows: Sequence[ResultRow]
    ) -> list[ResultRow]:
        """``rows`` with the quality of their kept perturbations (one meter call)."""
        if self.quality is None:
            return list(rows)
        kept = [k for k, row in enumerate(rows) if row.success]
        measured = self.quality.measure(
            [searches[k].sentence for k in kept],
            [searches[k].perturbed for k in kept],
            [rows[k].perturbation for k in kept],
        )
        out = list(rows)
        for k, q in zip(kept, measured, strict=True):
            out[k] = dataclasses.replace(
                rows[k],
                surprisal_increase=round(q.surprisal_increase, 6),
                similarity=round(q.similarity, 6),
                retag=None if q.retag is None else round(q.retag, 6),
            )
        return out

    def _with_predictions(
        self, searches: Sequence[SentenceSearch], rows: Sequence[ResultRow]
    ) -> list[ResultRow]:
        """``rows`` with what the probes predict on their clean and perturbed sentences
        (one batched model call; unchanged when the evaluator cannot say)."""
        predictor = self.components.predictor
        if predictor is None:
            return list(rows)
        pairs = [(search.sentence, search.perturbed) for search in searches]
        predicted = row_predictions(predictor, pairs)
        return [
            dataclasses.replace(row, predictions=p) for row, p in zip(rows, predicted, strict=True)
        ]


class AttackWorker(ShardWorker[list[Sentence], Searched]):
    """What a worker of a sharded attack holds: the components and the scores cache."""

    def __init__(self, task: AttackShards, components: AttackComponents) -> None:
        self.task = task
        self.components = components
        quality = (
            QualityMeter(parser=components.parser(), device=task.device, dtype=task.config.dtype)
            if task.quality
            else None
        )
        self.search = ChunkSearch(
            task.config,
            components,
            cache_size=task.cache_size,
            lockstep=task.lockstep,
            quality=quality,
            grader=(
                attack_grader(task.config, components, device=task.device) if task.grade else None
            ),
        )

    def run(self, shard: Shard[list[Sentence]]) -> Searched:
        """The rows and perturbed sentences of the shard's chunk."""
        self.search.clear_cache()
        return self.search(shard.payload, shard.start)


@dataclass(frozen=True)
class AttackShards(ShardTask[list[Sentence], Searched]):
    """The job of a sharded attack's workers: search the chunk each shard carries.

    Attributes:
        config: the attack settings (its ``dtype`` is every worker's models' precision).
        cache_size: candidate rows kept by each worker's scores cache.
        lockstep: batch a chunk's sentences together (as in one process).
        quality: measure the kept perturbations.
        grade: grade the kept perturbations' validity.
        device: torch device of each worker's models (``None``: ``cuda`` when the
            worker has it, else ``cpu``).
    """

    config: AttackConfig
    cache_size: int
    lockstep: bool
    quality: bool
    device: str | None = None
    grade: bool = False

    def start(self, previous: ShardWorker[Any, Any] | None) -> AttackWorker:
        """Load the components; those of the same attack at another budget are kept."""
        reuse = None
        if isinstance(previous, AttackWorker):
            before = previous.task.config
            if dataclasses.replace(before, budget=self.config.budget) == self.config:
                reuse = previous.components
        return AttackWorker(self, build_components(self.config, reuse=reuse, device=self.device))
