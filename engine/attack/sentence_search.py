"""One sentence's search as a job of the lock-step rounds, and what serves its requests.

A :class:`SentenceSearch` hands its strategy a :class:`~brittle.search.problem.
SearchProblem` whose scoring, constraint checks and reorder sampling are requests to a
:class:`~brittle.engine.runs.rounds.Requester`: served at once by a
:class:`~brittle.engine.runs.rounds.Direct`, or in lock-step rounds batched across the
sentences of a chunk. :class:`RoundServices` serves them: ``score`` (the probes' rows of
candidates, through the cache), ``check`` (every constraint, one call per constraint
for the whole round) and ``sample`` (random reorderings).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from brittle.engine.attack.assembly import AttackComponents
from brittle.engine.attack.config import AttackConfig
from brittle.engine.core.perturbation import Perturbation, counted_forms
from brittle.engine.core.sentence import Sentence
from brittle.engine.reports.results import ResultRow, TaskScores
from brittle.engine.runs.rounds import Channel, Handler, Requester
from brittle.scorers.order import permutation_scores
from brittle.search.constraints import CandidateBatch, ConstraintOutcome, check_batches
from brittle.search.generators.base import sentence_rng
from brittle.search.problem import Estimates, SearchProblem
from brittle.search.scoring import (
    CachedScorer,
    ComposeRequest,
    Objective,
    Request,
    ScoringSession,
)
from brittle.search.table import SubstitutionTable

#: A reorder sampling request: (sentence, how many, seed, tau: the most units moved).
SampleRequest = tuple[Sentence, int, int, int]
#: An estimate request: (sentence, its table, the objective's column weights).
EstimateRequest = tuple[Sentence, SubstitutionTable, dict[str, float]]

#: The kinds of request a search sends.
SCORE: Channel[Request, tuple[NDArray[np.float64], int]] = Channel("score")
CHECK: Channel[CandidateBatch, ConstraintOutcome] = Channel("check")
SAMPLE: Channel[SampleRequest, list[Perturbation]] = Channel("sample")
ESTIMATE: Channel[EstimateRequest, Estimates | None] = Channel("estimate")
COMPOSE: Channel[ComposeRequest, NDArray[np.float64]] = Channel("compose")


@dataclass(frozen=True)
class RoundServices:
    """Serves a round's requests of every kind, each kind in one batched call."""

    components: AttackComponents
    scorer: CachedScorer

    def score(self, requests: list[Request]) -> list[tuple[NDArray[np.float64], int]]:
        """Rows of every request's candidates: one model pass for the cache misses."""
        return self.scorer.rows_many(requests)

    def check(self, batches: list[CandidateBatch]) -> list[ConstraintOutcome]:
        """The constraints on every batch, each constraint once for the whole round and
        only on the candidates the ones before it admitted (the search needs only the
        conjunction; the rows count each rejected candidate for the first constraint
        that rejected it)."""
        return check_batches(batches, self.components.constraints, every=False)

    def sample(self, requests: list[SampleRequest]) -> list[list[Perturbation]]:
        """Random perturbations drawn by the generator itself (reorderings)."""
        generator = self.components.generator
        return [
            list(generator.perturb([s], b=count, seed=seed, tau=tau)[0])
            for s, count, seed, tau in requests
        ]

    def estimate(self, requests: list[EstimateRequest]) -> list[Estimates | None]:
        """First-order estimates of each table's options (the round's sentences in
        batched gradient passes; ``None`` for every request when the attack has no
        estimator)."""
        estimator = self.components.estimator
        if estimator is None:
            return [None] * len(requests)
        return estimator.substitution_estimates_many(requests)

    def compose(self, requests: list[ComposeRequest]) -> list[NDArray[np.float64]]:
        """Metrics of each request's pairs of scored perturbations, composed from their
        kept vectors (rows of NaN for every pair when the attack has no composer)."""
        composer = self.components.composer
        if composer is None:
            return [np.full((len(pairs), len(self.scorer.tasks)), np.nan) for _, pairs in requests]
        return composer.compose_many(requests)

    def handlers(self) -> dict[str, Handler]:
        """The handlers :func:`~brittle.engine.runs.rounds.run_rounds` serves requests with."""
        return dict(
            [
                SCORE.serve(self.score),
                CHECK.serve(self.check),
                SAMPLE.serve(self.sample),
                ESTIMATE.serve(self.estimate),
                COMPOSE.serve(self.compose),
            ]
        )


class SentenceSearch:
    """The search of one sentence; calling it with a requester runs it to its row.

    Args:
        sentence: the sentence attacked.
        index: its 0-based position in the treebank.
        table: its substitution options (empty for reorderings).
        config: the attack settings.
        components: generator, strategy, constraints and evaluator.
        scorer: the shared scores cache.
        objective: how task drops combine into the damage.
    """

    def __init__(
        self,
        sentence: Sentence,
        *,
        index: int,
        table: SubstitutionTable,
        config: AttackConfig,
        components: AttackComponents,
        scorer: CachedScorer,
        objective: Objective,
    ) -> None:
        self.sentence = sentence
        self.index = index
        self.table = table
        self.config = config
        self.components = components
        self.scorer = scorer
        self.objective = objective
        self.perturbed: Sentence = sentence
        self._client: Requester | None = None
        self._session: ScoringSession | None = None
        self._syntax: dict[Perturbation, float] = {}
        self._rejected: Counter[str] = Counter({c.name: 0 for c in components.constraints})

    # ------------------------------------------------------------ requests
    @property
    def client(self) -> Requester:
        assert self._client is not None, "the search is not running"
        return self._client

    @property
    def session(self) -> ScoringSession:
        assert self._session is not None, "the search is not running"
        return self._session

    def _rows(self, request: Request) -> tuple[NDArray[np.float64], int]:
        return SCORE.ask(self.client, request)

    def _feasible(self, perts: Sequence[Perturbation]) -> NDArray[np.bool_]:
        batch = CandidateBatch(
            self.sentence, tuple(perts), tuple(self.session.applied(p) for p in perts)
        )
        outcome = CHECK.ask(self.client, batch)
        mask = outcome.mask
        self.session.admit(perts, mask)
        self._rejected.update(outcome.rejected())
        syntax = outcome.values("syntax")
        if syntax is not None:
            for p, v in zip(perts, syntax.tolist(), strict=True):
                self._syntax[p] = float(v)
        return mask

    def _estimate(self) -> Estimates | None:
        weights = self.objective.column_weights(self.scorer.tasks)
        return ESTIMATE.ask(self.client, (self.sentence, self.table, weights))

    def _compose(self, request: ComposeRequest) -> NDArray[np.float64]:
        return COMPOSE.ask(self.client, request)

    def _sample(self, count: int, rng: np.random.Generator) -> list[Perturbation]:
        seed = int(rng.integers(2**31 - 1))
        return SAMPLE.ask(self.client, (self.sentence, count, seed, self.config.budget))

    # ------------------------------------------------------------ the job
    def __call__(self, client: Requester) -> ResultRow:
        """Search the sentence, its requests sent through ``client``; its result row."""
        start = time.perf_counter()
        self._client = client
        config = self.config
        session = self.scorer.session(
            self.sentence,
            self.objective,
            query_budget=config.query_budget,
            rows=self._rows,
            time_budget=config.time_budget,
            compose=self._compose,
            clean_first=not self.components.strategy.estimates_first,
        )
        self._session = session
        reorders = self.components.substitutions is None
        problem = SearchProblem(
            self.table,
            config.budget,
            session,
            self._feasible,
            session.is_exhausted,
            self._sample if reorders else None,
            None if reorders else self._estimate,
            session.queries_left,
            None if reorders or self.components.composer is None else session.composed,
        )
        outcome = self.components.strategy.search(
            problem, rng=sentence_rng(config.seed, self.sentence.sent_id)
        )
        best = outcome.best
        after = session.metrics_of(best)
        sentence = self.sentence
        perturbed = session.applied(best)
        self.perturbed = perturbed
        # Tasks in name order, as a row read back from results.jsonl has them, so the
        # reports are the same whether they come from this run or from the file.
        n = len(self.scorer.tasks)

        def per_task(found: NDArray[np.float64] | None) -> list[float | None]:
            """A drop per task when every candidate was checked (none feasible: the
            sentence is kept, drop 0), else ``None`` each."""
            if not config.check_all:
                return [None] * n
            return [round(float(w), 6) for w in (found if found is not None else np.zeros(n))]

        worst, least = per_task(session.worst), per_task(session.best)
        tasks = {
            t: TaskScores(round(float(c), 6), round(float(a), 6), round(float(c - a), 6), w, b)
            for t, c, a, w, b in sorted(
                zip(self.scorer.tasks, session.clean, after, worst, least, strict=True)
            )
        }
        counted = counted_forms(sentence, best, perturbed)  # article repairs are not counted
        changed = sum(a != b for a, b in zip(sentence.forms, counted, strict=True))
        syntax = None
        if not best.is_identity and best in self._syntax:
            syntax = round(self._syntax[best], 6)
        dnd = idc = None
        if best.order is not None:
            scores = permutation_scores(best.order)
            dnd, idc = round(scores.dnd, 6), round(scores.idc, 6)
        return ResultRow(
            index=self.index,
            sent_id=sentence.sent_id,
            success=outcome.success,
            method=config.method,
            positions=best.positions,
            original_words=tuple(sentence.forms[i] for i in best.positions),
            perturbed_words=best.replacements,
            lemmas=best.lemmas,
            order=best.order,
            words=tuple(sentence.forms),
            perturbed=tuple(perturbed.forms),
            tasks=tasks,
            damage=round(float(outcome.damage), 6),
            syntax_distance=syntax,
            hamming=changed,
            eligible_positions=len(problem.positions),
            queries=session.queries,
            evaluated=outcome.evaluated,
            syntax_checked=outcome.feasible_checked,
            epsilon_l2=round(session.max_l2, 6) if session.measured else None,
            epsilon_cosine=round(session.min_cosine, 6) if session.measured else None,
            seconds=round(time.perf_counter() - start, 4),
            dnd=dnd,
            idc=idc,
            rejected=dict(self._rejected),
            time_budget_hit=session.out_of_time if config.time_budget is not None else None,
            anytime=tuple(session.anytime) if config.anytime else None,
        )
