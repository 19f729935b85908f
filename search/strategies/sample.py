"""Best-of-b random sampling (Algorithms 1 and 3 of La Malfa et al.)."""

from __future__ import annotations

import numpy as np

from brittle.engine.registry import registry
from brittle.search.problem import Outcome, SearchProblem, first_feasible


@registry("strategies").register(
    "sample", help="draw b random tau-word perturbations, keep the most damaging feasible one"
)
def sample_search(
    problem: SearchProblem, *, rng: np.random.Generator, candidates: int = 20, **_: object
) -> Outcome:
    """Score ``candidates`` random perturbations; return the worst feasible one.

    The syntax constraint is checked lazily, in order of damage, until one passes.
    """
    pool = problem.sample(candidates, rng)
    if not pool:
        return Outcome(problem.empty(), 0.0, 0, 0)
    damages = problem.score(pool)
    pool = pool[: damages.size]
    if not pool:
        return Outcome(problem.empty(), 0.0, 0, 0)
    found, checked = first_feasible(problem, pool, damages)
    if not found:
        return Outcome(problem.empty(), 0.0, len(pool), checked)
    i = found[0]
    return Outcome(pool[i], float(damages[i]), len(pool), checked)
