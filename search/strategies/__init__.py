"""Search strategies, registered by name in ``registry("strategies")``.

Each is a function ``strategy(problem, *, rng, **params) -> Outcome``.
"""

from brittle.search.strategies.beam import beam_search, greedy_search
from brittle.search.strategies.sample import sample_search

__all__ = ["beam_search", "greedy_search", "sample_search"]
