"""``FlatVectors.stack_sums`` against the slow obvious way (each sum made on its own,
then stacked), bit for bit, on many random parts in float32 and in mixed precisions."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from brittle.scorers.representations import FlatVectors


@st.composite
def parts(draw: st.DrawFn) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    dim = draw(st.integers(1, 6))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    out = []
    for n in draw(st.lists(st.integers(0, 7), min_size=1, max_size=12)):
        dtypes = draw(
            st.sampled_from(
                [(np.float32,) * 3, (np.float64, np.float32, np.float32), (np.float64,) * 3]
            )
        )
        x, y, z = ((rng.standard_normal((n, dim)) * 1e3).astype(t) for t in dtypes)
        out.append((x, y, z))
    return out


@settings(max_examples=200, deadline=None)
@given(parts())
def test_stack_sums_is_stack_of_the_sums(
    triples: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
) -> None:
    got = FlatVectors.stack_sums(triples)
    expected = FlatVectors.stack([x + y - z for x, y, z in triples])
    assert got.vectors.dtype == np.float32
    np.testing.assert_array_equal(got.offsets, expected.offsets)
    assert got.vectors.tobytes() == expected.vectors.tobytes()
