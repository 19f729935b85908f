"""The one scorer wrapper: batching, a cache that lives across sentences, query counting.

Strategies only see :meth:`ScoringSession.__call__` (a batch of perturbations in, one
damage per candidate out). Underneath, candidates are applied to the sentence, the
cache is consulted by word sequence, the misses are scored in one batch by the
:class:`TaskEvaluator`, and every model evaluation counts as one query against the
sentence's query budget.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from cachetools import LRUCache
from numpy.typing import NDArray

from brittle.engine.core.perturbation import Perturbation, apply_perturbation
from brittle.engine.core.sentence import Sentence
from brittle.search.problem import Estimates
from brittle.search.table import SubstitutionTable

Words = tuple[str, ...]
#: One sentence's scoring request: (original, candidate sentences, alignments).
Request = tuple[Sentence, Sequence[Sentence], Sequence["NDArray[np.int64] | None"]]
#: Serves one request: its rows ``[metrics..., l2, cosine]`` and its number of misses.
RowsFunction = Callable[[Request], tuple[NDArray[np.float64], int]]
#: One sentence's composition request: (original, the word sequences of each pair of
#: scored perturbations whose union is asked for).
ComposeRequest = tuple[Sentence, Sequence[tuple[Words, Words]]]
#: Serves one composition request: the metrics (m, tasks) of each pair's union.
ComposeFunction = Callable[[ComposeRequest], NDArray[np.float64]]


@dataclass(frozen=True, eq=False)
class Evaluation:
    """What the evaluator measured on m candidates.

    Attributes:
        metrics: float64 (m, tasks): each task's metric, higher is better, against the
            candidate's own gold annotation (the original's, carried over; for a
            reordering, renumbered with the words).
        l2: float64 (m,): L2 distance between the representation of the original and of
            the candidate (word vectors aligned to the original's order and stacked).
        cosine: float64 (m,): cosine similarity between the same two stacked vectors.
    """

    metrics: NDArray[np.float64]
    l2: NDArray[np.float64]
    cosine: NDArray[np.float64]


class TaskEvaluator(Protocol):
    """Per-task metrics and representation distances of candidate sentences."""

    @property
    def tasks(self) -> tuple[str, ...]:
        """Task names, in a fixed order."""
        ...

    @property
    def primary(self) -> tuple[str, ...]:
        """The tasks whose mean drop is the default objective (empty: every task)."""
        ...

    def evaluate(
        self,
        original: Sentence,
        candidates: Sequence[Sentence],
        alignments: Sequence[NDArray[np.int64] | None],
    ) -> Evaluation:
        """Metrics and distances of each candidate.

        ``alignments[i]`` maps word ``j`` of candidate ``i`` to its 0-based index in the
        original (``None``: the identity, as for substitutions).
        """
        ...

    def evaluate_many(self, requests: Sequence[Request]) -> list[Evaluation]:
        """:meth:`evaluate` of several sentences' requests, in one batched model pass
        where the evaluator can (one :class:`Evaluation` per request, in order)."""
        ...


class RepresentationComposer(Protocol):
    """Predicts the metrics of the union of two scored perturbations from the word
    vectors measured when they were scored (a guided search's ranking of pairs)."""

    def compose_many(self, requests: Sequence[ComposeRequest]) -> list[NDArray[np.float64]]:
        """For each request, float64 (m, tasks): the metrics of each pair's union, as
        if the changes each part made to the word vectors (against the original's) added
        up, columns in :attr:`TaskEvaluator.tasks` order; a row of NaN where the vectors
        of a part, or of the original, are no longer kept."""
        ...

    def keep_vectors(self) -> None:
        """Keep the word vectors of what is scored from now on (bounded), which
        :meth:`compose_many` reads."""
        ...


class SubstitutionEstimator(Protocol):
    """First-order damage estimates of a table's options (a guided search's ranking)."""

    def substitution_estimates_many(
        self, requests: Sequence[tuple[Sentence, SubstitutionTable, Mapping[str, float]]]
    ) -> list[Estimates | None]:
        """For each request ``(original, table, weights)``, the estimated damage of
        every option of ``table`` under the objective's column ``weights`` (``None``: no
        estimate to be had, as for static vectors); the requests' sentences may share
        model passes."""
        ...


@dataclass(frozen=True)
class Objective:
    """How per-task drops combine into one damage: a weighted mean over some tasks."""

    weights: Mapping[str, float]

    @classmethod
    def mean_of(cls, tasks: Sequence[str]) -> Objective:
        """The unweighted mean drop over ``tasks``."""
        if not tasks:
            raise ValueError("the objective needs at least one task")
        return cls({t: 1.0 for t in tasks})

    def column_weights(self, tasks: Sequence[str]) -> dict[str, float]:
        """``{task: weight}`` of :meth:`vector`, only the tasks with a weight."""
        return {t: float(w) for t, w in zip(tasks, self.vector(tasks).tolist(), strict=True) if w}

    def vector(self, tasks: Sequence[str]) -> NDArray[np.float64]:
        """Weights aligned with ``tasks``, summing to one, shape (len(tasks),)."""
        unknown = set(self.weights) - set(tasks)
        if unknown:
            raise ValueError(f"objective names unknown task(s): {', '.join(sorted(unknown))}")
        w = np.array([self.weights.get(t, 0.0) for t in tasks], dtype=np.float64)
        total = w.sum()
        if total <= 0:
            raise ValueError("objective weights must sum to a positive number")
        return w / total


def _alignment(p: Perturbation) -> NDArray[np.int64] | None:
    return None if p.order is None else np.asarray(p.order, dtype=np.int64)


class CachedScorer:
    """Scores candidate sentences with a bounded LRU cache shared by all sentences.

    Each cache entry is one row ``[metric per task..., l2, cosine]`` keyed by the
    sentence id and the candidate's words.

    Args:
        evaluator: computes per-task metrics in batches.
        cache_size: the most word sequences kept.
    """

    def __init__(self, evaluator: TaskEvaluator, *, cache_size: int = 100_000) -> None:
        self.evaluator = evaluator
        self.cache_size = cache_size
        self._cache: LRUCache[tuple[str, Words], NDArray[np.float64]] = LRUCache(max(cache_size, 0))
        self.hits = 0
        self.misses = 0

    @property
    def tasks(self) -> tuple[str, ...]:
        """Task names of the evaluator."""
        return self.evaluator.tasks

    def __len__(self) -> int:
        return len(self._cache)

    def is_cached(self, original: Sentence, forms: Words) -> bool:
        """Whether the row of ``forms`` (a perturbation of ``original``) is cached."""
        return (original.sent_id, forms) in self._cache

    def rows_many(self, requests: Sequence[Request]) -> list[tuple[NDArray[np.float64], int]]:
        """Rows ``[metrics..., l2, cosine]`` of several requests (several sentences), and
        each one's misses; cached rows are reused and the misses evaluated.

        The misses of every request are evaluated in one evaluator call (the
        evaluator's ``evaluate_many`` when it has one), so a round of many sentences'
        searches costs one batched model pass. Returns, per request, its rows (m, tasks
        + 2) and how many of its candidates were evaluated (its queries).
        """
        plans = []
        todo_requests: list[Request] = []
        for original, candidates, alignments in requests:
            keys = [(original.sent_id, c.forms) for c in candidates]
            found: dict[int, NDArray[np.float64]] = {}
            first_of: dict[tuple[str, Words], int] = {}
            todo: list[int] = []
            for i, key in enumerate(keys):
                cached = self._cache.get(key)
                if cached is not None:
                    found[i] = cached
                    self.hits += 1
                elif key in first_of:
                    self.hits += 1
                else:
                    first_of[key] = i
                    todo.append(i)
            plans.append((keys, found, first_of, todo))
            if todo:
                todo_requests.append(
                    (original, [candidates[i] for i in todo], [alignments[i] for i in todo])
                )
        evaluations = iter(self._evaluate(todo_requests) if todo_requests else [])
        out: list[tuple[NDArray[np.float64], int]] = []
        for (_, candidates, _), (keys, found, first_of, todo) in zip(requests, plans, strict=True):
            if todo:
                ev = next(evaluations)
                self.misses += len(todo)
                fresh = np.column_stack([ev.metrics, ev.l2, ev.cosine])
                for i, row in zip(todo, fresh, strict=True):
                    found[i] = row
                    if self._cache.maxsize > 0:
                        self._cache[keys[i]] = row.copy()
            # The width is read after evaluating: an evaluator may learn its columns then.
            rows = np.empty((len(candidates), len(self.tasks) + 2), dtype=np.float64)
            for i, key in enumerate(keys):
                rows[i] = found[i] if i in found else found[first_of[key]]
            out.append((rows, len(todo)))
        return out

    def _evaluate(self, requests: Sequence[Request]) -> list[Evaluation]:
        return list(self.evaluator.evaluate_many(requests))

    def session(
        self,
        original: Sentence,
        objective: Objective,
        *,
        query_budget: int | None = None,
        rows: RowsFunction | None = None,
        time_budget: float | None = None,
        compose: ComposeFunction | None = None,
        clean_first: bool = True,
    ) -> ScoringSession:
        """A per-sentence scoring callable with its own query count and budgets.

        ``rows`` serves the session's requests (default: this scorer, one request at a
        time); lock-step searches pass one that batches the requests of many sentences
        into :meth:`rows_many`. ``time_budget``: seconds of wall-clock time after which
        the session scores no new candidate (see :class:`ScoringSession`).
        ``compose`` serves :meth:`ScoringSession.composed` (``None``: no composition).
        ``clean_first=False`` scores the clean sentence with the first batch.
        """
        return ScoringSession(
            self,
            original,
            objective,
            query_budget,
            rows=rows,
            time_budget=time_budget,
            compose=compose,
            clean_first=clean_first,
        )


class ScoringSession:
    """Scores perturbations of one sentence and counts queries (model evaluations).

    Calling it with a batch returns the damage (objective-weighted drop from the clean
    metrics) of as many candidates as the query budget allows, in order. Cache hits are
    free. With a time budget (seconds of wall-clock time from the session's start, the
    clean sentence's evaluation included) a batch that starts after it has run out
    scores only the candidates already cached, and :attr:`out_of_time` says so: what
    is found then depends on the machine's speed, not only on the seed. The session also
    keeps Algorithm 2's epsilon: the farthest L2 distance and the lowest cosine
    similarity to the original over the scored candidates that were found admissible
    (:meth:`admit`; a candidate the constraints rejected, or that the search never had
    checked, does not count), and over the same candidates each task's largest drop
    (``worst``, shape (tasks,)) and smallest (``best``: a negative one is the largest
    gain, what a worst-of-b finds by chance when the changes do nothing on average).

    The clean sentence is scored when the session starts, or, with ``clean_first=False``,
    with the first batch of candidates, in the same request: one model pass fewer before
    the first candidate is scored, so a search that first asks for something else (a
    gradient estimate) has its first scores sooner. Its query is counted from the start
    either way, so the budget left is the same.
    """

    def __init__(
        self,
        scorer: CachedScorer,
        original: Sentence,
        objective: Objective,
        query_budget: int | None,
        *,
        rows: RowsFunction | None = None,
        time_budget: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        compose: ComposeFunction | None = None,
        clean_first: bool = True,
    ) -> None:
        self.scorer = scorer
        self._objective = objective
        self._compose = compose
        self.original = original
        self.query_budget = query_budget
        self.time_budget = time_budget
        self._clock = clock
        self._started = clock()
        #: Whether a batch was cut because the time budget had run out.
        self.out_of_time = False
        #: The anytime record: each time an admitted candidate beats every one admitted
        #: before it, (queries so far, seconds since the session's start, its damage).
        self.anytime: list[tuple[int, float, float]] = []
        self._rows: RowsFunction = rows or (lambda request: scorer.rows_many([request])[0])
        self._clean: NDArray[np.float64] | None = None
        self._weights: NDArray[np.float64] | None = None
        #: The clean sentence's query, counted from the start (0: cached already).
        self._clean_cost = 0 if scorer.is_cached(original, original.forms) else 1
        self.queries = self._clean_cost
        if clean_first:
            self._score_clean([], [])
        self.scored = 0
        #: Scored candidates found admissible (the ones epsilon is taken over).
        self.admitted = 0
        #: Of those, the ones whose representation distances were measured (all of them
        #: when the evaluator reads representations, none when it does not).
        self.measured = 0
        self.max_l2 = 0.0
        self.min_cosine = 1.0
        #: Per task, the largest drop over the admitted candidates (None: none yet).
        self.worst: NDArray[np.float64] | None = None
        #: Per task, the smallest drop over the same candidates (None: none yet).
        self.best: NDArray[np.float64] | None = None
        self._distances: dict[Perturbation, tuple[float, float]] = {}
        self._counted: set[Perturbation] = set()
        self._metrics: dict[Perturbation, NDArray[np.float64]] = {}
        self._applied: dict[Perturbation, Sentence] = {}

    @property
    def clean(self) -> NDArray[np.float64]:
        """The clean sentence's per-task metrics, shape (tasks,); scored now when no
        batch has been."""
        if self._clean is None:
            self._score_clean([], [])
        assert self._clean is not None
        return self._clean

    @property
    def weights(self) -> NDArray[np.float64]:
        """The objective's weight of each task column, shape (tasks,)."""
        if self._weights is None:
            self._score_clean([], [])
        assert self._weights is not None
        return self._weights

    def _score_clean(
        self, sentences: list[Sentence], alignments: list[NDArray[np.int64] | None]
    ) -> tuple[NDArray[np.float64], int]:
        """Score the clean sentence and ``sentences`` (``alignments``: each one's word
        order) in one request; the rows of ``sentences`` and their misses."""
        cost = 0 if self.scorer.is_cached(self.original, self.original.forms) else 1
        rows, misses = self._rows((self.original, [self.original, *sentences], [None, *alignments]))
        self.queries += cost - self._clean_cost  # counted at the start, as it was then
        self._clean = rows[0, :-2]
        # After the first evaluation: an evaluator may learn its task columns from it.
        self._weights = self._objective.vector(self.scorer.tasks)
        return rows[1:], misses - cost

    def applied(self, p: Perturbation) -> Sentence:
        """``p`` applied to the original, computed once per perturbation (scoring, the
        constraints and the result row share it)."""
        if p.is_identity:
            return self.original
        found = self._applied.get(p)
        if found is None:
            found = self._applied[p] = apply_perturbation(self.original, p)
        return found

    def _time_left(self) -> bool:
        return self.time_budget is None or self._clock() - self._started < self.time_budget

    def queries_left(self) -> int | None:
        """Queries the budget has left (``None``: no query budget)."""
        return None if self.query_budget is None else max(self.query_budget - self.queries, 0)

    def is_exhausted(self) -> bool:
        """Whether no query is left (the query budget spent, or the time budget)."""
        if self.query_budget is not None and self.queries >= self.query_budget:
            return True
        if not self._time_left():
            self.out_of_time = True
            return True
        return False

    def _affordable(self, sentences: Sequence[Sentence]) -> int:
        """How many leading candidates fit in the remaining budgets (out of time: only
        the leading ones already cached)."""
        timed_out = not self._time_left()
        left = 0 if timed_out else self.queries_left()
        if left is None:
            return len(sentences)
        new = allowed = 0
        seen: set[Words] = set()
        for s in sentences:
            if not self.scorer.is_cached(self.original, s.forms) and s.forms not in seen:
                if new == left:
                    break
                new += 1
                seen.add(s.forms)
            allowed += 1
        if timed_out and allowed < len(sentences):
            self.out_of_time = True
        return allowed

    def __call__(self, candidates: Sequence[Perturbation]) -> NDArray[np.float64]:
        """Damage of each candidate, shape (m,), m <= len(candidates) when the budget ends."""
        sentences = [self.applied(p) for p in candidates]
        allowed = self._affordable(sentences)
        alignments = [_alignment(p) for p in candidates[:allowed]]
        if self._clean is None:
            rows, misses = self._score_clean(sentences[:allowed], alignments)
        else:
            rows, misses = self._rows((self.original, sentences[:allowed], alignments))
        self.queries += misses
        self.scored += allowed
        metrics = rows[:, :-2]
        for p, row, full in zip(candidates[:allowed], metrics, rows, strict=True):
            self._metrics[p] = row
            self._distances[p] = (float(full[-2]), float(full[-1]))
        return self._damage(metrics)

    def _damage(self, metrics: NDArray[np.float64]) -> NDArray[np.float64]:
        """The objective's damage of each row of per-task ``metrics`` (m, tasks): the
        weighted drop from the clean sentence's, shape (m,)."""
        return np.asarray((self.clean[None, :] - metrics) @ self.weights, dtype=np.float64)

    def composed(self, pairs: Sequence[tuple[Perturbation, Perturbation]]) -> NDArray[np.float64]:
        """Predicted damage of the union of each pair of scored perturbations, shape
        (len(pairs),), no query spent (:meth:`~brittle.search.problem.SearchProblem.
        compose`); NaN where a pair cannot be predicted, and everywhere without a
        ``compose`` function."""
        if self._compose is None:
            return np.full(len(pairs), np.nan)
        words = [(self.applied(a).forms, self.applied(b).forms) for a, b in pairs]
        return self._damage(self._compose((self.original, words)))

    def admit(self, candidates: Sequence[Perturbation], admissible: NDArray[np.bool_]) -> None:
        """Record which checked candidates the constraints admitted, for epsilon and
        the anytime record.

        Args:
            candidates: m perturbations whose constraints were checked.
            admissible: bool (m,): which of them passed.
        """
        for p, ok in zip(candidates, admissible.tolist(), strict=True):
            found = self._distances.get(p)
            if not ok or found is None or p in self._counted:
                continue
            self._counted.add(p)
            self.admitted += 1
            if not math.isnan(found[0]):  # an evaluator without representations: NaN
                self.measured += 1
                self.max_l2 = max(self.max_l2, found[0])
                self.min_cosine = min(self.min_cosine, found[1])
            drops = self.clean - self._metrics[p]
            self.worst = drops if self.worst is None else np.fmax(self.worst, drops)
            self.best = drops if self.best is None else np.fmin(self.best, drops)
            damage = float(drops @ self.weights)
            if not self.anytime or damage > self.anytime[-1][2]:
                seconds = round(self._clock() - self._started, 4)
                self.anytime.append((self.queries, seconds, round(damage, 6)))

    def metrics_of(self, p: Perturbation) -> NDArray[np.float64]:
        """Per-task metrics of a scored perturbation (the clean ones for the identity)."""
        if p.is_identity:
            return self.clean
        return self._metrics[p]
