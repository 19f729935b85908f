"""Padded forward batches: the dynamic programme against every possible cut."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brittle.engine.core.errors import ConfigError
from brittle.scorers.batching import batch_cost, padded_batches


def _all_cuts(order: list[int]) -> list[list[list[int]]]:
    """Every way to cut ``order`` into consecutive non-empty runs."""
    n = len(order)
    out = []
    for mask in itertools.product((False, True), repeat=max(0, n - 1)):
        runs, start = [], 0
        for i, cut in enumerate(mask, start=1):
            if cut:
                runs.append(order[start:i])
                start = i
        runs.append(order[start:])
        out.append(runs)
    return out


def _fits(lengths: np.ndarray, batch: list[int], max_rows: int, max_tokens: int) -> bool:
    return len(batch) <= max_rows and (
        len(batch) == 1 or int(lengths[batch].max()) * len(batch) <= max_tokens
    )


@settings(max_examples=300, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 60), min_size=1, max_size=9),
    max_rows=st.integers(1, 6),
    max_tokens=st.integers(1, 200),
    call_cost=st.integers(0, 80),
)
def test_least_cost_cut_of_the_sorted_rows(
    lengths: list[int], max_rows: int, max_tokens: int, call_cost: int
) -> None:
    arr = np.asarray(lengths, dtype=np.int64)
    got = padded_batches(arr, max_rows=max_rows, max_tokens=max_tokens, call_cost=call_cost)
    order = np.argsort(-arr, kind="stable").tolist()
    assert [i for b in got for i in b] == order  # every row once, longest first
    assert all(_fits(arr, b, max_rows, max_tokens) for b in got)
    feasible = [
        cut for cut in _all_cuts(order) if all(_fits(arr, b, max_rows, max_tokens) for b in cut)
    ]
    assert batch_cost(arr, got, call_cost) == min(batch_cost(arr, c, call_cost) for c in feasible)


def test_mixed_lengths_pad_less_than_fixed_batches() -> None:
    # one model call of an attack round: a few dozen candidates of mixed lengths
    rng = np.random.default_rng(0)
    lengths = rng.integers(8, 96, size=60).astype(np.int64)
    got = padded_batches(lengths, max_rows=64, max_tokens=16384, call_cost=48)
    order = np.argsort(-lengths, kind="stable").tolist()
    fixed = [order[k : k + 64] for k in range(0, len(order), 64)]
    assert batch_cost(lengths, got, 48) < 0.8 * batch_cost(lengths, fixed, 48)


def test_equal_lengths_take_the_fewest_calls() -> None:
    lengths = np.full(130, 20, dtype=np.int64)
    got = padded_batches(lengths, max_rows=64, max_tokens=16384, call_cost=48)
    assert len(got) == 3
    assert max(len(b) for b in got) <= 64


def test_a_row_longer_than_the_token_bound_runs_alone() -> None:
    lengths = np.asarray([500, 10, 10], dtype=np.int64)
    got = padded_batches(lengths, max_rows=64, max_tokens=100, call_cost=48)
    assert got == [[0], [1, 2]]


def test_no_rows_no_batches_and_bad_bounds() -> None:
    assert padded_batches(np.zeros(0, dtype=np.int64), max_rows=4, max_tokens=10) == []
    with pytest.raises(ConfigError):
        padded_batches(np.ones(3, dtype=np.int64), max_rows=0, max_tokens=10)
    with pytest.raises(ConfigError):
        padded_batches(np.ones(3, dtype=np.int64), max_rows=4, max_tokens=10, call_cost=-1)
