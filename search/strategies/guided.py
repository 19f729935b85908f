"""Guided search: score first the candidates a probe-gradient estimate ranks highest.

Where beam search scores every single substitution before it extends any, a guided
search keeps one frontier of unscored candidates (every single substitution and, once a
candidate has been scored, not found infeasible and is among the :data:`BASES` most
damaging so far, every extension of it by one more substitution, for at most
:data:`MAX_BASES` bases) and scores it
best-first in small batches, ranked by a predicted damage:

- a single substitution ``(p, k)`` is predicted ``a * e[p, k] + b + r[p]``, where
  ``e`` is the problem's first-order estimate (one gradient pass over the clean
  sentence: :meth:`~brittle.search.problem.SearchProblem.estimates`), ``a`` and ``b``
  are refit after every batch by least squares on the single substitutions scored so
  far (``a`` kept non-negative), and ``r[p]`` is the mean residual of the substitutions
  scored at position ``p``, shrunk towards 0 as if one more had a residual of 0 (what
  was learnt about the position); once scored, its own damage;
- an extension of a scored base by a single substitution that has been scored too is
  predicted by composing the two (:meth:`~brittle.search.problem.SearchProblem.
  compose`: the changes each made to the probed word vectors added, and the probes run
  on the sum; no query spent), which sees two changes reinforce or undo each other;
- any other extension adds the single's prediction to the base's damage (damages taken
  as additive, so two damaging singles are soon tried together).

Two substitutions interact about as much as either does alone (on the every-sense
coPOS pool of 60 EWT test sentences, a pair's damage minus the sum of its singles' has a
standard deviation of 0.028, the singles' damage 0.031), and the first-order estimate
does not see it: the change in the gradient at the base predicts none of it (a rank
correlation of -0.01). The composed prediction does (0.84 with the interaction, 0.92
with the pair's damage, against 0.81 for the sum of the damages).

The first batch is scored in two (:data:`FIRST_BATCH` candidates, then the rest), so
that a first find comes as early as one small model pass allows; the clean sentence is
scored with that first pass, after the gradient pass
(:attr:`~brittle.search.strategies.base.Strategy.estimates_first`). The search warms up
first: until :attr:`GuidedSearch.guided_warmup` of the query budget
(0.8 by default) has gone to single substitutions, nothing is extended, so that the line
and the positions' residuals are fitted on a spread of positions, and most pairs worth
trying can be composed from scored singles, before the search spends queries on pairs;
then the warm-up's finds are extended, most damaging first (with no query budget there
is no warm-up). Measured on that pool (docs/attack.md), this finds more damage at 60 and
100 queries than extending from the first batch on, which pairs the first damaging
single before most positions have been tried; with composition a longer warm-up pays.
Where no estimate is to be had (static vectors) every ``e`` is 0 and the first batches
take each position's first option (the generator's own ranking) in turn. The search ends
when the frontier is empty or the query budget is spent. Like beam search it checks the
constraints lazily: in each scored batch, in order of damage, only the candidates more
damaging than the best found so far, until one passes; a candidate they rejected is not
extended.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from brittle.engine.core.errors import ConfigError
from brittle.engine.core.perturbation import Perturbation
from brittle.search.problem import Estimates, Outcome, SearchProblem, first_feasible
from brittle.search.strategies.base import STRATEGIES, Strategy

#: One option of the table: (position, index of the option at that position).
Slot = tuple[int, int]

#: A scored candidate is extended only when it is more damaging than the least of the
#: this many most damaging bases extended so far (a beam's width of bases) ...
BASES = 16
#: ... and at most this many bases are extended in all, so that without a query budget
#: the search ends after at most MAX_BASES x (options) extensions, not every pair.
MAX_BASES = 64
#: Extensions composed per round at most, the highest by the sum of their parts' damages
#: first (each composition runs the probes once, about 0.1 ms for MiniLM's distance and
#: POS probes on 2 cores; the rest wait for a later round). On the guided bench's pool
#: a search rarely has more ready at once: 256 finds what composing all of them finds,
#: and 128 loses some on EWT test (UUAS drop 0.1303 against 0.1318 at 60 queries).
COMPOSED_PER_ROUND = 256
#: The first batch is scored in two: its this many best-estimated singles alone, then
#: the rest of it. In lock-step rounds the first find then comes one small model pass
#: after the gradient pass, not a whole batch's (on the anytime bench, EWT test, 16
#: sentences a round on 2 cores: 0.23 s into each sentence's search instead of 0.34 s).
FIRST_BATCH = 2


def _estimates_of(slots: list[Slot], estimates: Estimates | None) -> NDArray[np.float64]:
    """The estimate of each slot, shape (slots,) (0 where there is none)."""
    out = np.zeros(len(slots), dtype=np.float64)
    if estimates is not None:
        for i, (p, k) in enumerate(slots):
            values = estimates.get(p)
            if values is not None and k < values.size:
                out[i] = float(values[k])
    return out


class _Model:
    """The predicted damage of every single substitution, refit from what was scored.

    Args:
        slots: the table's options, in the order the search first takes them.
        estimates: first-order estimates of the options (``None``: none, all 0).
    """

    def __init__(self, slots: list[Slot], estimates: Estimates | None) -> None:
        self.position = np.array([p for p, _ in slots], dtype=np.int64)
        self.estimate = _estimates_of(slots, estimates)
        self.a, self.b = 1.0, 0.0
        self.residual = np.zeros(int(self.position.max()) + 1 if slots else 0)
        #: Damage of each scored single substitution (NaN: not scored).
        self.scored = np.full(len(slots), np.nan)

    def observe(self, slot: int, damage: float) -> None:
        """Record the damage of the scored single substitution ``slots[slot]``."""
        self.scored[slot] = damage

    def refit(self) -> None:
        """Refit ``a``, ``b`` and the positions' residuals on every observation."""
        seen = np.flatnonzero(~np.isnan(self.scored))
        if seen.size == 0:
            return
        e, d = self.estimate[seen], self.scored[seen]
        var = float(((e - e.mean()) ** 2).sum())
        a = float(((e - e.mean()) * (d - d.mean())).sum()) / var if var > 0 else 0.0
        self.a = max(a, 0.0)
        self.b = float(d.mean() - self.a * e.mean())
        where = self.position[seen]
        sums = np.bincount(where, weights=d - (self.a * e + self.b), minlength=self.residual.size)
        counts = np.bincount(where, minlength=self.residual.size)
        self.residual = sums / (counts + 1)

    def predict(self) -> NDArray[np.float64]:
        """Damage of every single substitution, shape (slots,): as scored, else as
        predicted."""
        guess = self.a * self.estimate + self.b + self.residual[self.position]
        return np.where(np.isnan(self.scored), guess, self.scored)


class _Frontier:
    """The unscored candidates: each a base (a scored candidate, or none) and the slot
    it adds, in the order they were queued (the tie-break of equal priorities)."""

    def __init__(self) -> None:
        self.bases: list[int] = []  # index into ``scored`` (-1: the identity)
        self.slots: list[int] = []
        self.alive: list[bool] = []
        #: The composed prediction of each entry's damage (NaN: none).
        self.composed: list[float] = []
        #: Entries of a scored base whose slot's single substitution has not been
        #: scored yet or has not been composed with the base yet.
        self.open: list[int] = []
        self.count = 0

    def add(self, base: int, slot: int) -> None:
        if base >= 0:
            self.open.append(len(self.bases))
        self.bases.append(base)
        self.slots.append(slot)
        self.alive.append(True)
        self.composed.append(np.nan)
        self.count += 1

    def take(self, priority: NDArray[np.float64], n: int) -> list[int]:
        """Remove and return the ``n`` live entries of highest ``priority`` (shape
        (entries,)), ties in queue order."""
        live = np.flatnonzero(np.asarray(self.alive, dtype=bool))
        order = live[np.lexsort((live, -priority[live]))][:n]
        for i in order.tolist():
            self.alive[i] = False
        self.count -= order.size
        return order.tolist()


def _first_order(problem: SearchProblem, estimates: Estimates | None) -> list[Slot]:
    """The options in the order the search first takes them: each position's
    best-estimated option, positions by estimate, then every position's second best,
    and so on (ties in the table's order)."""
    options = problem.options
    slots = [(p, k) for p in problem.positions for k in range(len(options[p]))]
    estimate = _estimates_of(slots, estimates)
    position = np.array([p for p, _ in slots], dtype=np.int64)
    rank = np.zeros(len(slots), dtype=np.int64)
    for p in problem.positions:
        mine = np.flatnonzero(position == p)
        rank[mine[np.argsort(-estimate[mine], kind="stable")]] = np.arange(mine.size)
    first = np.lexsort((np.arange(len(slots)), -estimate, rank))
    return [slots[i] for i in first.tolist()]


def _compose_new(
    problem: SearchProblem,
    frontier: _Frontier,
    model: _Model,
    scored: list[Perturbation],
    order: list[Slot],
    priority: NDArray[np.float64],
    queued: set[Perturbation],
) -> None:
    """Compose the live extensions whose slot's single substitution has been scored
    since they were queued with their base (:meth:`SearchProblem.compose`), in one
    request: the :data:`COMPOSED_PER_ROUND` of them ranked highest by ``priority`` (the
    sum of the two damages, shape (entries,)), each union once; the others wait for a
    later round. A composed prediction then ranks its entry instead of the sum."""
    if problem.composer is None or not frontier.open:
        return
    ready: list[int] = []
    still: list[int] = []
    for i in frontier.open:
        if not frontier.alive[i]:
            continue
        (ready if not np.isnan(model.scored[frontier.slots[i]]) else still).append(i)
    if len(ready) > COMPOSED_PER_ROUND:
        ready.sort(key=lambda i: (-priority[i], i))
        still.extend(ready[COMPOSED_PER_ROUND:])
        ready = ready[:COMPOSED_PER_ROUND]
    frontier.open = still
    unions: dict[Perturbation, list[int]] = {}  # a pair is reached from either half
    pairs: list[tuple[Perturbation, Perturbation]] = []
    for i in ready:
        p, k = order[frontier.slots[i]]
        base = scored[frontier.bases[i]]
        union = problem.substitute(base, p, problem.options[p][k])
        if union in queued:
            continue
        if union not in unions:
            unions[union] = []
            pairs.append((base, problem.substitute(problem.empty(), p, problem.options[p][k])))
        unions[union].append(i)
    predicted = problem.compose(pairs)
    if predicted is not None:
        for entries, value in zip(unions.values(), predicted.tolist(), strict=True):
            for i in entries:
                frontier.composed[i] = value


def _guided(problem: SearchProblem, *, batch: int, warmup: float) -> Outcome:
    options = problem.options
    estimates = problem.estimates()
    order = _first_order(problem, estimates)
    model = _Model(order, estimates)
    frontier = _Frontier()
    for slot in range(len(order)):
        frontier.add(-1, slot)
    scored: list[Perturbation] = []  # every scored candidate; a base is an index into it
    scored_damage: list[float] = [0.0]  # shifted by one: entry 0 is the identity's
    queued: set[Perturbation] = set()
    leaders: list[float] = []  # the damages of the bases extended, the BASES largest
    extended = 0
    best, best_damage = problem.empty(), 0.0
    evaluated = checked = 0
    left = problem.remaining_queries()
    warm = 0 if left is None else int(warmup * left)  # singles scored before any extension
    waiting: list[int] = []  # scored candidates held back from extension while warming up
    n_singles = 0
    # the first batch in two: its FIRST_BATCH best-estimated candidates alone, then
    # the rest of it (the queries after it are where one whole batch leaves them)
    first = min(batch, FIRST_BATCH)
    sizes = [first, batch - first]
    while frontier.count and not problem.is_exhausted():
        bases = np.asarray(frontier.bases)
        priority = np.asarray(scored_damage)[bases + 1] + model.predict()[frontier.slots]
        _compose_new(problem, frontier, model, scored, order, priority, queued)
        composed = np.asarray(frontier.composed)
        priority = np.where(np.isnan(composed), priority, composed)
        pool: list[Perturbation] = []
        singles: list[int] = []  # the slot of each single substitution of the pool, else -1
        for i in frontier.take(priority, sizes[0] if sizes else batch):
            base = problem.empty() if bases[i] < 0 else scored[bases[i]]
            p, k = order[frontier.slots[i]]
            cand = problem.substitute(base, p, options[p][k])
            if cand not in queued:  # a pair is reached from either half
                queued.add(cand)
                pool.append(cand)
                singles.append(frontier.slots[i] if bases[i] < 0 else -1)
        if not pool:
            continue
        sizes = [n for n in sizes[1:] if n > 0]
        damages = problem.score(pool)
        if damages.size == 0:
            break
        pool = pool[: damages.size]
        evaluated += len(pool)
        for slot, damage in zip(singles, damages.tolist(), strict=False):
            if slot >= 0:
                model.observe(slot, damage)
        model.refit()
        # Only a candidate that would be the new best needs its constraints checked.
        rivals = [i for i, d in enumerate(damages.tolist()) if best.is_identity or d > best_damage]
        keep, n_checked = first_feasible(problem, [pool[i] for i in rivals], damages[rivals])
        checked += n_checked
        looked = np.argsort(-damages[rivals], kind="stable")[:n_checked].tolist()
        rejected = {rivals[i] for i in looked} - {rivals[i] for i in keep}
        if keep:
            best, best_damage = pool[rivals[keep[0]]], float(damages[rivals[keep[0]]])
        bases_now: list[int] = []  # indices into ``scored`` that may be extended
        for j, cand in enumerate(pool):
            scored.append(cand)
            scored_damage.append(float(damages[j]))
            n_singles += len(cand.positions) == 1
            if len(cand.positions) < problem.budget and j not in rejected:
                bases_now.append(len(scored) - 1)
        if n_singles < warm and frontier.count:
            waiting.extend(bases_now)  # still warming up: extend nothing yet
            continue
        if waiting:  # the warm-up's finds, most damaging first
            bases_now = sorted(waiting + bases_now, key=lambda b: -scored_damage[b + 1])
            waiting = []
        for index in bases_now:
            damage = scored_damage[index + 1]
            # Only the most damaging bases so far are extended, and at most MAX_BASES
            # in all: without a query budget the search then ends, as a beam search
            # does, instead of trying every pair.
            if extended == MAX_BASES or (len(leaders) == BASES and damage <= leaders[0]):
                continue
            extended += 1
            heapq.heappush(leaders, damage)
            if len(leaders) > BASES:
                heapq.heappop(leaders)
            used = set(scored[index].positions)
            for slot, (p, _) in enumerate(order):
                if p not in used:
                    frontier.add(index, slot)
    return Outcome(best, best_damage, evaluated, checked)


@STRATEGIES.register(
    "guided",
    help="best-first search ranked by a probe-gradient estimate of each substitution's damage",
)
@dataclass(frozen=True, kw_only=True)
class GuidedSearch(Strategy):
    """Best-first search of single substitutions and their extensions (module docstring).

    Attributes:
        guided_batch: candidates scored per step (>= 1); smaller batches learn more
            from each query, larger ones batch the model better.
        guided_warmup: share of the query budget left at the start spent on single
            substitutions before any candidate is extended (0 to 1; 0: extend from the
            first batch on).
    """

    composes: ClassVar[bool] = True
    estimates_first: ClassVar[bool] = True

    guided_batch: int = 8
    guided_warmup: float = 0.8

    def __post_init__(self) -> None:
        if self.guided_batch < 1:
            raise ConfigError(f"guided_batch must be at least 1, got {self.guided_batch}")
        if not 0.0 <= self.guided_warmup <= 1.0:
            raise ConfigError(f"guided_warmup must be between 0 and 1, got {self.guided_warmup}")

    def search(self, problem: SearchProblem, *, rng: np.random.Generator) -> Outcome:
        return _guided(problem, batch=self.guided_batch, warmup=self.guided_warmup)
