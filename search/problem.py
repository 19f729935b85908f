"""The search problem a strategy receives: candidates, scoring, constraints and budgets.

A strategy never builds candidates, counts queries or parses sentences itself: it asks
the :class:`SearchProblem` to ``expand`` a perturbation by one more substitution, to
``score`` a batch (the probe damage; the problem's scorer counts queries and caches),
and to check ``feasible`` (the expensive syntax constraint, asked lazily and only for
candidates that could be selected).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from brittle.engine.core.perturbation import Perturbation
from brittle.search.sampling import sample_substitutions
from brittle.search.table import SubstitutionTable

#: A replacement option at one position: (FORM, LEMMA); LEMMA is ``"_"`` when unknown.
Option = tuple[str, str]
#: Estimated damage of each option, ``{position: float64 (options at position,)}``, in
#: the table's order; comparable within one sentence only (units are the estimator's).
Estimates = Mapping[int, NDArray[np.float64]]
#: Predicts the damage of the union of each pair of scored perturbations (see
#: :meth:`SearchProblem.compose`).
Composer = Callable[[Sequence[tuple["Perturbation", "Perturbation"]]], NDArray[np.float64]]


class Scorer(Protocol):
    """Scores batches of perturbations of one sentence (higher = more damage)."""

    def __call__(self, candidates: Sequence[Perturbation]) -> NDArray[np.float64]:
        """Damage of each candidate, shape (m,) with m <= len(candidates).

        Fewer scores than candidates means the query budget ran out after the first m.
        """
        ...


@dataclass(frozen=True, eq=False)
class SearchProblem:
    """Everything a strategy may use to find the worst perturbation of one sentence.

    Attributes:
        table: for each eligible 0-based word position of the sentence, its replacement
            options, best first (the generator's order); empty for reorderings.
        budget: the largest number of substituted words (tau).
        score: probe damage of a batch, counted and cached by the scorer wrapper.
        feasible: boolean mask of a batch: which candidates satisfy the constraints.
        is_exhausted: whether the query budget is spent.
        sampler: draws random perturbations for :meth:`sample` instead of the default
            (used by reorderings, which have no per-position options).
        estimator: first-order damage estimates of the table's options (one gradient
            pass; ``None``, or a call that returns ``None``: none to be had).
        queries_left: how many queries the budget has left (``None``, or a call that
            returns ``None``: no query budget).
        composer: predicts the damage of the union of two scored perturbations from
            what scoring them measured, without a query (``None``: no prediction to be
            had; :meth:`compose`).
    """

    table: SubstitutionTable
    budget: int
    score: Scorer
    feasible: Callable[[Sequence[Perturbation]], NDArray[np.bool_]]
    is_exhausted: Callable[[], bool]
    sampler: Callable[[int, np.random.Generator], list[Perturbation]] | None = None
    estimator: Callable[[], Estimates | None] | None = None
    queries_left: Callable[[], int | None] | None = None
    composer: Composer | None = None

    @property
    def sentence_id(self) -> str:
        """The sentence being attacked."""
        return self.table.sentence_id

    @property
    def method(self) -> str:
        """Generator name recorded on every perturbation."""
        return self.table.method

    @cached_property
    def options(self) -> dict[int, tuple[Option, ...]]:
        """``{position: options}`` of the table."""
        return self.table.as_dict()

    @property
    def positions(self) -> tuple[int, ...]:
        """Eligible positions that have at least one option, ascending."""
        return self.table.positions

    def estimates(self) -> Estimates | None:
        """Estimated damage of every option of the table (``None``: no estimate)."""
        return None if self.estimator is None else self.estimator()

    def compose(
        self, pairs: Sequence[tuple[Perturbation, Perturbation]]
    ) -> NDArray[np.float64] | None:
        """Predicted damage of the union of each pair, shape (len(pairs),); no query
        is spent.

        Both perturbations of a pair must have been scored and must change different
        positions. The prediction takes the changes each makes to the probed
        representations (word by word, against the clean sentence's) to add up, and
        runs the probes on the sum: two substitutions whose effects on the words'
        vectors reinforce each other are predicted to do more than the sum of their
        damages, where adding the damages cannot see it. NaN where a pair cannot be
        predicted (a part whose vectors are no longer kept); ``None``: the problem has
        no composer.
        """
        if self.composer is None or not pairs:
            return None
        return self.composer(pairs)

    def remaining_queries(self) -> int | None:
        """Queries the budget has left (``None``: no query budget)."""
        return None if self.queries_left is None else self.queries_left()

    def empty(self) -> Perturbation:
        """The identity perturbation (nothing changed)."""
        return Perturbation(self.sentence_id, self.method)

    def substitute(self, base: Perturbation, position: int, option: Option) -> Perturbation:
        """``base`` with one more substitution at ``position``."""
        items = dict(
            zip(
                base.positions,
                zip(base.replacements, base.lemmas or ("_",) * len(base.positions), strict=True),
                strict=True,
            )
        )
        items[position] = option
        keys = sorted(items)
        return Perturbation(
            self.sentence_id,
            self.method,
            positions=tuple(keys),
            replacements=tuple(items[k][0] for k in keys),
            lemmas=tuple(items[k][1] for k in keys),
        )

    def expand(
        self, base: Perturbation, *, positions: Sequence[int] | None = None
    ) -> list[Perturbation]:
        """Every perturbation with one more substitution than ``base``.

        Only positions not yet substituted are used, in ``positions`` order when given
        (else ascending); nothing is returned once ``base`` already uses the budget.
        """
        if len(base.positions) >= self.budget:
            return []
        used = set(base.positions)
        pool = self.positions if positions is None else positions
        return [
            self.substitute(base, p, option)
            for p in pool
            if p not in used and p in self.options
            for option in self.options[p]
        ]

    def sample(self, count: int, rng: np.random.Generator) -> list[Perturbation]:
        """``count`` random perturbations of exactly ``min(budget, |positions|)`` words.

        The draw is :func:`~brittle.search.sampling.sample_substitutions`, the one
        sampler ``brittle perturb`` uses too, so the same seed and table give the same
        perturbations in both. A problem with a ``sampler`` delegates to it.
        """
        if self.sampler is not None:
            return self.sampler(count, rng)
        if count <= 0:
            return []
        return sample_substitutions(self.table, tau=self.budget, b=count, rng=rng)


@dataclass(frozen=True)
class Outcome:
    """What a strategy found for one sentence.

    Attributes:
        best: the most damaging feasible perturbation (the identity when none was found).
        damage: its damage (0.0 for the identity).
        evaluated: candidates scored by the strategy (cache hits included).
        feasible_checked: candidates whose constraints were checked.
    """

    best: Perturbation
    damage: float
    evaluated: int
    feasible_checked: int

    @property
    def success(self) -> bool:
        """Whether a non-identity perturbation was found."""
        return not self.best.is_identity


def first_feasible(
    problem: SearchProblem,
    candidates: Sequence[Perturbation],
    damages: NDArray[np.float64],
    *,
    want: int = 1,
    max_chunk: int = 32,
) -> tuple[list[int], int]:
    """Indices of the ``want`` most damaging feasible candidates, and how many were checked.

    Candidates are checked in order of decreasing damage (ties: earlier first), so the
    expensive constraint only sees candidates that could be selected. The first batch
    holds ``want`` candidates (usually enough: most substitutions keep the parse) and
    each further batch twice as many, up to ``max_chunk``, so a run of infeasible
    candidates still reaches the parser in batches. The result does not depend on the
    batch sizes, only the number checked does.
    """
    order = np.argsort(-damages, kind="stable")
    found: list[int] = []
    checked = 0
    size = max(1, want)
    start = 0
    while start < order.size:
        idx = order[start : start + size]
        start += idx.size
        mask = problem.feasible([candidates[i] for i in idx.tolist()])
        checked += idx.size
        for i, ok in zip(idx.tolist(), mask.tolist(), strict=True):
            if ok:
                found.append(i)
                if len(found) == want:
                    return found, checked
        size = min(2 * size, max(max_chunk, want))
    return found, checked
