"""Each probe learns a small synthetic task whose vectors encode the answer."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from probe_synthetic import synthetic

from brittle.engine.core.errors import ConfigError
from brittle.engine.probes.probe_data import ProbeData
from brittle.engine.probes.probe_training import TrainConfig, TrainResult, train_probe
from brittle.scorers.batching import length_batches
from brittle.scorers.probe_gold import Gold
from brittle.scorers.probe_nets import pad_flat
from brittle.scorers.probe_tasks import (
    PROBE_TASKS,
    ProbeSpec,
    ProbeTask,
    squared_distances,
    task_for,
)
from brittle.scorers.representations import FlatVectors, RepresentationKey

KEY = RepresentationKey("random", "synthetic", 0, "-")


@pytest.fixture(scope="module")
def data() -> tuple[ProbeData, ProbeData]:
    import torch

    torch.set_num_threads(1)
    return synthetic(240, seed=1), synthetic(80, seed=2)


def train(task: str, arch: str, data: tuple[ProbeData, ProbeData]) -> TrainResult:
    lr = 1e-2 if arch == "linear" else 3e-3
    spec = ProbeSpec(task=task, dim=data[0].dim, arch=arch, hidden=64)
    return train_probe(spec, KEY, *data, config=TrainConfig(epochs=25, lr=lr, patience=3, seed=0))


@pytest.mark.parametrize(
    ("task", "arch", "metric", "least"),
    [
        ("distance", "linear", "uuas", 0.95),
        ("distance", "mlp", "uuas", 0.7),
        ("perceptron", "linear", "uuas", 0.95),
        ("depth", "linear", "depth_spearman", 0.9),
        ("depth", "linear", "root_acc", 0.9),
        ("pos", "linear", "pos_acc", 0.97),
        ("pos", "mlp", "pos_acc", 0.97),
        ("root", "linear", "root_acc", 0.95),
        ("tree-depth", "mlp", "tree_depth_acc", 0.6),
    ],
)
def test_probe_learns(
    data: tuple[ProbeData, ProbeData], task: str, arch: str, metric: str, least: float
) -> None:
    result = train(task, arch, data)
    assert result.dev_metrics[metric] >= least, result.dev_metrics
    assert list(result.dev_metrics) == list(task_for(task).metric_names)
    losses = [h.train_loss for h in result.history]
    assert losses[-1] < losses[0]


def test_distance_probe_distances_are_tree_distances(data: tuple[ProbeData, ProbeData]) -> None:
    result = train("distance", "linear", data)
    preds = result.probe.predict(data[1])
    gold = data[1].golds
    err = np.mean([np.abs(p - g.distances).mean() for p, g in zip(preds, gold, strict=True)])
    assert err < 0.25
    assert result.dev_metrics["sdr"] > 0.8


def test_per_sentence_scores(data: tuple[ProbeData, ProbeData]) -> None:
    probe = train("root", "linear", data).probe
    reps = data[1].split()[:5]
    preds = probe.predict(FlatVectors.stack(reps))
    scores = probe.score_predictions(preds, data[1].golds[:5])
    assert len(scores) == 5 and set(scores[0]) == {"root_acc", "root_prob"}
    assert all(0.0 <= s["root_prob"] <= 1.0 for s in scores)
    assert [p.shape for p in preds] == [(r.shape[0],) for r in reps]
    np.testing.assert_allclose([p.sum() for p in preds], 1.0, rtol=1e-5)


def test_perceptron_loss_is_zero_only_with_margin_met() -> None:
    import torch

    gold = Gold.from_arrays([0, 1, 2])  # a chain 1 <- 2 <- 3
    task = task_for("perceptron")
    # vectors on a line reproduce the chain's distances exactly (squared: 1, 1, 4)
    x = np.array([[0.0], [1.0], [2.0]], dtype=np.float32)
    spec = ProbeSpec(task="perceptron", dim=1, rank=1)
    net = task.build(spec)
    weight = net.weight
    assert isinstance(weight, torch.Tensor)
    with torch.no_grad():
        weight.fill_(1.0)
    batch = pad_flat(FlatVectors.stack([x]))
    loss = task.loss(net, batch, [gold], spec)
    assert float(loss.detach()) == pytest.approx(0.0, abs=1e-6)
    with torch.no_grad():
        weight.fill_(0.0)
    collapsed = task.loss(net, batch, [gold], spec)
    assert float(collapsed.detach()) > 0.0  # the margin rules out the collapsed probe


def test_squared_distances() -> None:
    import torch

    h = torch.tensor([[[0.0, 0.0], [3.0, 4.0], [1.0, 0.0]]])
    d = squared_distances(h)[0]
    assert d[0, 1] == pytest.approx(25.0) and d[1, 2] == pytest.approx(20.0)
    assert torch.all(d >= 0) and torch.allclose(d, d.T)


def test_length_mismatch_is_an_error(data: tuple[ProbeData, ProbeData]) -> None:
    probe = train("pos", "linear", data).probe
    batch = pad_flat(data[1], [0, 1])
    with pytest.raises(ConfigError):
        probe.task.loss(probe.net, batch, list(data[1].golds[1:3]), probe.spec)


# ------------------------------------------------------------------ task facts
PRIMARY = {
    "distance": "uuas",
    "perceptron": "uuas",
    "depth": "depth_spearman",
    "pos": "pos_acc",
    "root": "root_acc",
    "tree-depth": "tree_depth_acc",
}


@pytest.mark.parametrize("name", sorted(PRIMARY))
def test_tasks_state_their_facts(name: str) -> None:
    cls = PROBE_TASKS.get(name)
    assert cls.name == name and cls.primary == PRIMARY[name]
    assert cls.higher_is_better(cls.primary)
    assert set(cls.columns) <= set(cls.metric_names)
    assert cls.primary in cls.attack_metrics()
    assert set(cls.attack_metrics()) == {m for m in cls.metric_names if cls.higher_is_better(m)}


def test_lower_is_better_metrics_are_not_attacked() -> None:
    task = task_for("tree-depth")
    assert not task.higher_is_better("tree_depth_mae")
    assert task.attack_metrics() == ("tree_depth_acc",)
    assert task.columns == ("tree_depth_acc", "tree_depth_mae")
    with pytest.raises(ConfigError):
        task.higher_is_better("uuas")


def test_a_task_with_wrong_facts_fails_where_it_is_defined() -> None:
    base = PROBE_TASKS.get("root")
    with pytest.raises(TypeError, match="primary"):
        type("NoPrimary", (base,), {"name": "no-primary", "primary": "accuracy"})
    with pytest.raises(TypeError, match="primary"):
        type("LowPrimary", (base,), {"name": "low", "lower_is_better": frozenset({"root_acc"})})
    with pytest.raises(TypeError, match="columns"):
        type("BadColumns", (base,), {"name": "bad-columns", "columns": ("uuas",)})
    with pytest.raises(TypeError):  # the registry's contract: ProbeTask classes
        PROBE_TASKS.register("not-a-task")(dict)
    assert "not-a-task" not in PROBE_TASKS


def test_unknown_task_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="distance"):
        task_for("constituency")
    assert issubclass(PROBE_TASKS.get("pos"), ProbeTask)


# ------------------------------------------------------------------ batching
@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(1, 80), max_size=60),
    st.integers(1, 20),
    st.sampled_from([0.5, 0.75, 1.0]),
)
def test_length_batches_cover_every_sentence_in_similar_lengths(
    lengths: list[int], max_rows: int, min_fill: float
) -> None:
    arr = np.asarray(lengths, dtype=np.int64)
    batches = length_batches(arr, max_rows, min_fill)
    flat = [int(i) for b in batches for i in b]
    assert sorted(flat) == list(range(len(lengths)))
    # longest first, ties in input order: the batches concatenate to the stable sort
    assert flat == sorted(range(len(lengths)), key=lambda i: -lengths[i])
    for k, b in enumerate(batches):
        sizes = arr[b]
        assert 1 <= len(b) <= max_rows
        assert sizes.min() >= min_fill * sizes[0]
        if k + 1 < len(batches) and len(b) < max_rows:
            # a batch ends early only where the next sentence is too short for it
            assert arr[batches[k + 1][0]] < min_fill * sizes[0]


@pytest.mark.parametrize("task", ["distance", "pos", "tree-depth"])
def test_predictions_do_not_depend_on_the_batching(
    task: str, data: tuple[ProbeData, ProbeData]
) -> None:
    probe = train(task, "linear", data).probe
    together = probe.predict(data[1])
    alone = [
        probe.predict(FlatVectors.stack([np.asarray(data[1].sentence(i))]))[0]
        for i in range(len(data[1]))
    ]
    for a, b in zip(together, alone, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
