"""Search strategies, registered by name in :data:`~brittle.search.strategies.base.STRATEGIES`.

Each is a frozen dataclass of typed parameters with ``search(problem, *, rng) -> Outcome``.
"""

from brittle.search.strategies.base import STRATEGIES, Strategy
from brittle.search.strategies.beam import BeamSearch, GreedySearch
from brittle.search.strategies.guided import GuidedSearch
from brittle.search.strategies.sample import SampleSearch

__all__ = ["STRATEGIES", "BeamSearch", "GreedySearch", "GuidedSearch", "SampleSearch", "Strategy"]
