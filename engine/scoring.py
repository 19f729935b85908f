"""The one scorer wrapper: batching, a cache that lives across sentences, query counting.

Strategies only see :meth:`ScoringSession.__call__` (a batch of perturbations in, one
damage per candidate out). Underneath, candidates are applied to the sentence, the
cache is consulted by word sequence, the misses are scored in one batch by the
:class:`TaskEvaluator`, and every model evaluation counts as one query against the
sentence's query budget.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from brittle.engine.perturbation import Perturbation, apply_perturbation
from brittle.engine.sentence import Sentence

Words = tuple[str, ...]


class TaskEvaluator(Protocol):
    """Per-task metric of candidate word sequences against an original's gold annotation."""

    @property
    def tasks(self) -> tuple[str, ...]:
        """Task names, in a fixed order."""
        ...

    def evaluate(self, original: Sentence, candidates: Sequence[Sentence]) -> NDArray[np.float64]:
        """Metric of each candidate per task, shape (len(candidates), len(tasks)).

        Metrics are "higher is better" and computed against ``original``'s gold tree,
        tags and root, as the probes' tasks define them.
        """
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


class CachedScorer:
    """Scores candidate sentences with a bounded LRU cache shared by all sentences.

    Args:
        evaluator: computes per-task metrics in batches.
        cache_size: the most word sequences kept (each holds one float per task).
    """

    def __init__(self, evaluator: TaskEvaluator, *, cache_size: int = 100_000) -> None:
        self.evaluator = evaluator
        self.cache_size = cache_size
        self._cache: OrderedDict[tuple[str, Words], NDArray[np.float64]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    @property
    def tasks(self) -> tuple[str, ...]:
        """Task names of the evaluator."""
        return self.evaluator.tasks

    def metrics(self, original: Sentence, candidates: Sequence[Sentence]) -> NDArray[np.float64]:
        """Per-task metrics, shape (m, tasks); only cache misses reach the evaluator."""
        out = np.empty((len(candidates), len(self.tasks)), dtype=np.float64)
        todo: list[int] = []
        keys = [(original.sent_id, c.forms) for c in candidates]
        first_of: dict[tuple[str, Words], int] = {}
        for i, key in enumerate(keys):
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                out[i] = cached
                self.hits += 1
            elif key in first_of:
                self.hits += 1
            else:
                first_of[key] = i
                todo.append(i)
        if todo:
            values = self.evaluator.evaluate(original, [candidates[i] for i in todo])
            self.misses += len(todo)
            for i, row in zip(todo, values, strict=True):
                out[i] = row
                self._cache[keys[i]] = row.copy()
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        for i, key in enumerate(keys):
            j = first_of.get(key)
            if j is not None and j != i:
                out[i] = out[j]
        return out

    def is_cached(self, original: Sentence, forms: Words) -> bool:
        """Whether the metrics of ``forms`` (a perturbation of ``original``) are cached."""
        return (original.sent_id, forms) in self._cache

    def session(
        self, original: Sentence, objective: Objective, *, query_budget: int | None = None
    ) -> ScoringSession:
        """A per-sentence scoring callable with its own query count and budget."""
        return ScoringSession(self, original, objective, query_budget)


class ScoringSession:
    """Scores perturbations of one sentence; counts queries (model evaluations).

    Calling it with a batch returns the damage (objective-weighted drop from the clean
    metrics) of as many candidates as the query budget allows, in order.
    """

    def __init__(
        self,
        scorer: CachedScorer,
        original: Sentence,
        objective: Objective,
        query_budget: int | None,
    ) -> None:
        self.scorer = scorer
        self.original = original
        self.weights = objective.vector(scorer.tasks)
        self.query_budget = query_budget
        misses_before = scorer.misses
        self.clean = scorer.metrics(original, [original])[0]
        self.queries = scorer.misses - misses_before
        self._metrics: dict[Perturbation, NDArray[np.float64]] = {}

    def is_exhausted(self) -> bool:
        """Whether no query is left."""
        return self.query_budget is not None and self.queries >= self.query_budget

    def __call__(self, candidates: Sequence[Perturbation]) -> NDArray[np.float64]:
        """Damage of each candidate, shape (m,), m <= len(candidates) when the budget ends."""
        sentences = [apply_perturbation(self.original, p) for p in candidates]
        allowed = len(candidates)
        if self.query_budget is not None:
            # Cache hits are free; count how many new evaluations fit.
            left = max(self.query_budget - self.queries, 0)
            new = 0
            allowed = 0
            seen: set[Words] = set()
            for s in sentences:
                fresh = not self.scorer.is_cached(self.original, s.forms) and s.forms not in seen
                if fresh:
                    if new == left:
                        break
                    new += 1
                    seen.add(s.forms)
                allowed += 1
        misses_before = self.scorer.misses
        metrics = self.scorer.metrics(self.original, sentences[:allowed])
        self.queries += self.scorer.misses - misses_before
        for p, row in zip(candidates[:allowed], metrics, strict=True):
            self._metrics[p] = row
        drops = self.clean[None, :] - metrics
        return np.asarray(drops @ self.weights, dtype=np.float64)

    def metrics_of(self, p: Perturbation) -> NDArray[np.float64]:
        """Per-task metrics of an already scored perturbation (the clean ones for identity)."""
        if p.is_identity:
            return self.clean
        return self._metrics[p]
