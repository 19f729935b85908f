"""The strategy contract: typed parameters, the generator kinds it can search, one call.

A strategy receives the :class:`~brittle.search.problem.SearchProblem` of one sentence
and a seeded generator and returns an :class:`~brittle.search.problem.Outcome`; it
builds no candidates, counts no queries and parses nothing itself. Its parameters are
keyword-only dataclass fields, so a run passes only the ones it declares.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, fields
from typing import ClassVar

import numpy as np

from brittle.engine.core.registry import Registry
from brittle.search.generators.base import GeneratorFamily
from brittle.search.problem import Outcome, SearchProblem

__all__ = ["STRATEGIES", "Strategy"]


@dataclass(frozen=True, kw_only=True)
class Strategy(ABC):
    """A way through the search space of one sentence."""

    #: Generator kinds whose problems it can search (reorderings have no positions).
    supports: ClassVar[frozenset[GeneratorFamily]] = frozenset({"substitution"})
    #: Whether it asks the problem to compose scored perturbations
    #: (:meth:`~brittle.search.problem.SearchProblem.compose`): the run then keeps the
    #: word vectors of what it scores.
    composes: ClassVar[bool] = False
    #: Whether it asks the problem for its estimates
    #: (:meth:`~brittle.search.problem.SearchProblem.estimates`) before it scores
    #: anything: the run then scores the clean sentence with its first batch, not before
    #: the estimates (:class:`~brittle.search.scoring.ScoringSession`).
    estimates_first: ClassVar[bool] = False

    @classmethod
    def parameters(cls) -> tuple[str, ...]:
        """Names of its keyword parameters."""
        return tuple(f.name for f in fields(cls) if f.init)

    @abstractmethod
    def search(self, problem: SearchProblem, *, rng: np.random.Generator) -> Outcome:
        """The most damaging feasible perturbation it finds for ``problem``."""


#: Strategies by name (classes; build one with its parameters).
STRATEGIES: Registry[type[Strategy]] = Registry(
    "strategies", contract=Strategy, packages=("brittle.search.strategies",), item="strategy"
)
