"""The syntax constraint's short cuts: identical parses and the label-histogram lower
bound give the same decisions as the exact distance, on many random parses."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from scorers_reference import apted_distance, examples, random_heads

from brittle.scorers.parsers.base import Parse
from brittle.search.constraints.syntax import DistancePaths, parse_distances

LABELS = ("nsubj", "obj", "det", "amod")


def _parse(rng: np.random.Generator, n: int) -> Parse:
    heads = random_heads(rng, n)
    deprels = tuple(str(x) for x in rng.choice(LABELS, n))
    return Parse.build(heads, ("NOUN",) * n, deprels)


def _variant(rng: np.random.Generator, p: Parse) -> Parse:
    """The parse itself, with some relations renamed, or a random tree of similar size."""
    kind = rng.integers(0, 3)
    if kind == 0:
        return p
    if kind == 1:
        deprels = list(p.deprels)
        for i in rng.choice(len(deprels), int(rng.integers(1, len(deprels) + 1)), replace=False):
            deprels[i] = str(rng.choice(LABELS))
        return Parse.build(p.heads, p.upos, deprels)
    return _parse(rng, max(1, len(p.heads) + int(rng.integers(-2, 3))))


@examples(150)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 12),
    bound=st.sampled_from([0.0, 0.1, 0.2, 0.5, 1.0]),
)
def test_bounded_distances_decide_as_the_exact_ones(seed: int, n: int, bound: float) -> None:
    rng = np.random.default_rng(seed)
    reference = _parse(rng, n)
    others = [_variant(rng, reference) for _ in range(8)]
    exact = parse_distances(reference, others)
    paths = DistancePaths()
    fast = parse_distances(reference, others, bound=bound, paths=paths)
    assert paths.total == len(others)
    np.testing.assert_array_equal(exact <= bound, fast <= bound)
    kept = exact <= bound
    np.testing.assert_array_equal(fast[kept], exact[kept])  # exact wherever it can matter
    assert np.all(fast[~kept] <= exact[~kept] + 1e-12)  # a lower bound elsewhere
    # The exact distances themselves agree with the apted reference.
    for other, value in zip(others, exact, strict=True):
        ted = apted_distance(reference.heads, other.heads, reference.deprels, other.deprels)
        assert value == ted / max(n, len(other.heads))


def test_paths_are_counted() -> None:
    rng = np.random.default_rng(0)
    reference = _parse(rng, 10)
    renamed = Parse.build(reference.heads, reference.upos, ("punct",) * 10)  # far: bound
    shape = Parse.build(random_heads(rng, 10), reference.upos, reference.deprels)  # computed
    paths = DistancePaths()
    values = parse_distances(reference, [reference, renamed, shape], bound=0.2, paths=paths)
    assert (paths.identical, paths.bounded, paths.computed) == (1, 1, 1)
    assert values[0] == 0.0 and values[1] > 0.2
    # Without a bound every distinct parse is computed; the counts add up across calls.
    parse_distances(reference, [renamed], paths=paths)
    assert (paths.identical, paths.bounded, paths.computed) == (1, 1, 2)
