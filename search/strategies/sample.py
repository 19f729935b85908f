"""Best-of-b random sampling (Algorithms 1 and 3 of La Malfa et al.)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from brittle.engine.core.errors import ConfigError
from brittle.search.generators.base import GeneratorFamily
from brittle.search.problem import Outcome, SearchProblem, first_feasible
from brittle.search.strategies.base import STRATEGIES, Strategy


@STRATEGIES.register(
    "sample", help="draw b random tau-word perturbations, keep the most damaging feasible one"
)
@dataclass(frozen=True, kw_only=True)
class SampleSearch(Strategy):
    """Score ``candidates`` random perturbations; return the worst feasible one.

    The constraints are checked lazily, in order of damage, until one passes; with
    ``check_all`` they are checked on every candidate scored (one batch), so that what
    is kept over the feasible candidates (epsilon, each task's own worst drop) covers
    all of them, as in La Malfa et al.'s Algorithms 1 and 2. The perturbation chosen is
    the same either way.

    Attributes:
        candidates: b, the perturbations drawn (>= 1).
        check_all: check every candidate, not only until the most damaging feasible one.
    """

    supports: ClassVar[frozenset[GeneratorFamily]] = frozenset({"substitution", "reordering"})

    candidates: int = 20
    check_all: bool = False

    def __post_init__(self) -> None:
        if self.candidates < 1:
            raise ConfigError(f"candidates must be at least 1, got {self.candidates}")

    def search(self, problem: SearchProblem, *, rng: np.random.Generator) -> Outcome:
        pool = problem.sample(self.candidates, rng)
        if not pool:
            return Outcome(problem.empty(), 0.0, 0, 0)
        damages = problem.score(pool)
        pool = pool[: damages.size]
        if not pool:
            return Outcome(problem.empty(), 0.0, 0, 0)
        if self.check_all:
            mask = problem.feasible(pool)
            checked = len(pool)
            # the most damaging feasible candidate, the earlier of equals (as lazily)
            ranked = [i for i in np.argsort(-damages, kind="stable").tolist() if mask[i]]
            found = ranked[:1]
        else:
            found, checked = first_feasible(problem, pool, damages)
        if not found:
            return Outcome(problem.empty(), 0.0, len(pool), checked)
        i = found[0]
        return Outcome(pool[i], float(damages[i]), len(pool), checked)
