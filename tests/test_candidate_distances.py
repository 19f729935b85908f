"""The probe evaluator's L2 and cosine between an original's word vectors and its
candidates', vectorised, against the per-candidate loop it replaced."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from brittle.engine.probes.probe_eval import candidate_distances


def _reference(
    original: np.ndarray, candidates: list[np.ndarray], alignments: list[np.ndarray | None]
) -> tuple[np.ndarray, np.ndarray]:
    ref = original.astype(np.float64).ravel()
    l2, cos = [], []
    for vec, align in zip(candidates, alignments, strict=True):
        vec = vec.astype(np.float64)
        if align is not None:
            aligned = np.empty_like(vec)
            aligned[align] = vec
            vec = aligned
        flat = vec.ravel()
        l2.append(float(np.linalg.norm(flat - ref)))
        denom = float(np.linalg.norm(flat) * np.linalg.norm(ref))
        cos.append(float(flat @ ref / denom) if denom > 0 else 1.0)
    return np.array(l2), np.array(cos)


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(1, 12),
    dim=st.integers(1, 24),
    m=st.integers(0, 6),
    seed=st.integers(0, 2**32 - 1),
    zero=st.booleans(),
)
def test_matches_the_per_candidate_loop(n: int, dim: int, m: int, seed: int, zero: bool) -> None:
    rng = np.random.default_rng(seed)
    original = rng.normal(size=(n, dim)).astype(np.float32)
    candidates = [rng.normal(size=(n, dim)).astype(np.float32) for _ in range(m)]
    if zero and m:
        candidates[0] = np.zeros((n, dim), dtype=np.float32)  # cosine of a zero vector: 1
    alignments = [rng.permutation(n) if rng.random() < 0.5 else None for _ in range(m)]
    l2, cos = candidate_distances(original, candidates, alignments)
    want_l2, want_cos = _reference(original, candidates, alignments)
    assert l2.shape == cos.shape == (m,)
    np.testing.assert_allclose(l2, want_l2, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cos, want_cos, rtol=1e-12, atol=1e-12)


def test_identical_candidate_is_at_distance_zero() -> None:
    original = np.arange(12, dtype=np.float32).reshape(3, 4)
    l2, cos = candidate_distances(original, [original[[2, 0, 1]]], [np.array([2, 0, 1])])
    assert l2[0] == 0.0
    assert abs(cos[0] - 1.0) < 1e-15
