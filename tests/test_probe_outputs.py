"""An affine probe predicts from its outputs as from its inputs, and from sums of them.

Guided search composes pairs of scored perturbations by adding, word by word, the
changes each made to the probed vectors; for a ``linear`` probe it adds the changes to
the probe's outputs instead (``Probe.outputs``, ``Probe.predict_outputs``), which is the
same by linearity and costs each part one pass through the network instead of each pair.
Checked here on random probes of every task, with and without feature scaling.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from brittle.scorers.feature_scaling import Standardizer
from brittle.scorers.probe import Probe
from brittle.scorers.probe_tasks import ProbeSpec
from brittle.scorers.representations import FlatVectors, RepresentationKey

KEY = RepresentationKey("random", "synthetic", 0, "-")
DIM = 8
#: Every task, with the labels the ones that classify need.
TASKS = {
    "distance": (),
    "perceptron": (),
    "depth": (),
    "pos": ("NOUN", "VERB", "ADJ", "DET"),
    "root": (),
    "tree-depth": ("2", "3", "4", "5"),
}


def _probe(task: str, seed: int, scaled: bool) -> Probe:
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    scaler = None
    if scaled:
        mean = rng.normal(size=DIM).astype(np.float32)
        scaler = Standardizer(mean, rng.uniform(0.5, 2.0, size=DIM).astype(np.float32))
    return Probe(ProbeSpec(task, DIM, rank=5, labels=TASKS[task]), KEY, scaler=scaler)


def _assert_same(got: list[np.ndarray], want: list[np.ndarray]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        if np.issubdtype(w.dtype, np.integer):
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


@settings(max_examples=30, deadline=None)
@given(
    task=st.sampled_from(sorted(TASKS)),
    lengths=st.lists(st.integers(2, 9), min_size=1, max_size=5),
    seed=st.integers(0, 2**16),
    scaled=st.booleans(),
)
def test_an_affine_probe_predicts_from_its_outputs_and_their_sums(
    task: str, lengths: list[int], seed: int, scaled: bool
) -> None:
    probe = _probe(task, seed, scaled)
    assert probe.affine
    rng = np.random.default_rng(seed + 1)
    a, b, c = ([rng.normal(size=(n, DIM)).astype(np.float32) for n in lengths] for _ in range(3))
    stack = FlatVectors.stack
    _assert_same(probe.predict_outputs(probe.outputs(stack(a))), probe.predict(stack(a)))
    oa, ob, oc = (probe.outputs(stack(x)).split() for x in (a, b, c))
    summed = stack([x + y - z for x, y, z in zip(oa, ob, oc, strict=True)])
    direct = stack([x + y - z for x, y, z in zip(a, b, c, strict=True)])
    _assert_same(probe.predict_outputs(summed), probe.predict(direct))


@pytest.mark.parametrize("arch", ["mlp", "sentence"])
def test_other_networks_are_not_affine(arch: str) -> None:
    assert not Probe(ProbeSpec("pos", DIM, arch=arch, labels=("A", "B")), KEY).affine
