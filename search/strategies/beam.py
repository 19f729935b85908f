"""Beam search over substitutions; greedy search is a beam of width one.

Step ``t`` extends every kept perturbation by one more substitution, scores the batch
and keeps the ``width`` most damaging feasible ones (feasibility checked lazily, in
order of damage). The first step scores every single substitution, which also ranks
positions by importance; with ``positions_per_step`` set, later steps only extend the
next most important unused positions (greedy search with word-importance ranking).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from brittle.engine.core.errors import ConfigError
from brittle.engine.core.perturbation import Perturbation
from brittle.search.problem import Outcome, SearchProblem, first_feasible
from brittle.search.strategies.base import STRATEGIES, Strategy


def _beam(problem: SearchProblem, *, width: int, positions_per_step: int | None) -> Outcome:
    if width < 1:
        raise ValueError("beam width must be at least 1")
    beam: list[Perturbation] = [problem.empty()]
    best, best_damage = problem.empty(), 0.0
    evaluated = checked = 0
    ranking: list[int] | None = None
    for _step in range(problem.budget):
        pool: list[Perturbation] = []
        seen: set[Perturbation] = set()
        for base in beam:
            positions = None
            if ranking is not None and positions_per_step is not None:
                used = set(base.positions)
                positions = [p for p in ranking if p not in used][:positions_per_step]
            for cand in problem.expand(base, positions=positions):
                if cand not in seen:
                    seen.add(cand)
                    pool.append(cand)
        if not pool:
            break
        damages = problem.score(pool)
        pool = pool[: damages.size]
        evaluated += len(pool)
        if not pool:
            break
        if ranking is None:
            ranking = _rank_positions(pool, damages)
        keep, n_checked = first_feasible(problem, pool, damages, want=width)
        checked += n_checked
        if not keep:
            break
        beam = [pool[i] for i in keep]
        top = keep[0]
        if damages[top] > best_damage or best.is_identity:
            best, best_damage = pool[top], float(damages[top])
        if problem.is_exhausted():
            break
    return Outcome(best, best_damage, evaluated, checked)


def _rank_positions(pool: list[Perturbation], damages: np.ndarray) -> list[int]:
    """Positions by their best single-substitution damage, most important first."""
    best: dict[int, float] = {}
    for cand, dmg in zip(pool, damages.tolist(), strict=False):
        pos = cand.positions[0]
        best[pos] = max(best.get(pos, -np.inf), dmg)
    return sorted(best, key=lambda p: (-best[p], p))


@STRATEGIES.register(
    "beam", help="beam search: keep the w most damaging feasible perturbations per step"
)
@dataclass(frozen=True, kw_only=True)
class BeamSearch(Strategy):
    """Beam search of width ``beam_width``, one more substitution per step up to tau.

    Attributes:
        beam_width: perturbations kept per step (>= 1).
    """

    beam_width: int = 4

    def __post_init__(self) -> None:
        if self.beam_width < 1:
            raise ConfigError(f"beam width must be at least 1, got {self.beam_width}")

    def search(self, problem: SearchProblem, *, rng: np.random.Generator) -> Outcome:
        return _beam(problem, width=self.beam_width, positions_per_step=None)


@STRATEGIES.register(
    "greedy", help="greedy search: rank positions by importance, substitute one at a time"
)
@dataclass(frozen=True, kw_only=True)
class GreedySearch(Strategy):
    """Beam of width one that extends only the next most important position each step."""

    def search(self, problem: SearchProblem, *, rng: np.random.Generator) -> Outcome:
        return _beam(problem, width=1, positions_per_step=1)
