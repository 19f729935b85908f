"""Each probe learns a small synthetic task whose vectors encode the answer."""

from __future__ import annotations

import numpy as np
import pytest
from probe_synthetic import synthetic

from brittle.engine.probe_data import ProbeData
from brittle.engine.probe_training import TrainConfig, train_probe
from brittle.scorers.probe_gold import Gold
from brittle.scorers.probe_tasks import ProbeSpec, squared_distances, task_for
from brittle.scorers.representations import RepresentationKey

KEY = RepresentationKey("random", "synthetic", 0, "-")


@pytest.fixture(scope="module")
def data() -> tuple[ProbeData, ProbeData]:
    import torch

    torch.set_num_threads(1)
    return synthetic(240, seed=1), synthetic(80, seed=2)


def train(task: str, arch: str, data: tuple[ProbeData, ProbeData], **kw: object):  # type: ignore[no-untyped-def]
    lr = 1e-2 if arch == "linear" else 3e-3
    spec = ProbeSpec(task=task, dim=data[0].dim, arch=arch, hidden=64, **kw)  # type: ignore[arg-type]
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
    assert set(task_for(task).metric_names) <= set(result.dev_metrics)
    losses = [h.train_loss for h in result.history]
    assert losses[-1] < losses[0]


def test_distance_probe_distances_are_tree_distances(data: tuple[ProbeData, ProbeData]) -> None:
    result = train("distance", "linear", data)
    preds = result.probe.predict(data[1].split())
    gold = data[1].golds
    err = np.mean([np.abs(p - g.distances).mean() for p, g in zip(preds, gold, strict=True)])
    assert err < 0.25
    assert result.dev_metrics["sdr"] > 0.8


def test_per_sentence_scores(data: tuple[ProbeData, ProbeData]) -> None:
    probe = train("root", "linear", data).probe
    reps = data[1].split()[:5]
    scores = probe.score(reps, data[1].golds[:5])
    assert len(scores) == 5 and set(scores[0]) == {"root_acc", "root_prob"}
    assert all(0.0 <= s["root_prob"] <= 1.0 for s in scores)
    preds = probe.predict(reps)
    assert [p.shape for p in preds] == [(r.shape[0],) for r in reps]
    np.testing.assert_allclose([p.sum() for p in preds], 1.0, rtol=1e-5)


def test_perceptron_loss_is_zero_only_with_margin_met() -> None:
    import torch

    from brittle.scorers.probe_nets import pad_list

    gold = Gold.from_arrays([0, 1, 2])  # a chain 1 <- 2 <- 3
    task = task_for("perceptron")
    # vectors on a line reproduce the chain's distances exactly (squared: 1, 1, 4)
    x = np.array([[0.0], [1.0], [2.0]], dtype=np.float32)
    spec = ProbeSpec(task="perceptron", dim=1, rank=1)
    net = task.build(spec)
    with torch.no_grad():
        net.weight.fill_(1.0)  # type: ignore[union-attr, operator]
    loss = task.loss(net, pad_list([x]), [gold], spec)
    assert float(loss.detach()) == pytest.approx(0.0, abs=1e-6)
    with torch.no_grad():
        net.weight.fill_(0.0)  # type: ignore[union-attr, operator]
    collapsed = task.loss(net, pad_list([x]), [gold], spec)
    assert float(collapsed.detach()) > 0.0  # the margin rules out the collapsed probe


def test_squared_distances() -> None:
    import torch

    h = torch.tensor([[[0.0, 0.0], [3.0, 4.0], [1.0, 0.0]]])
    d = squared_distances(h)[0]
    assert d[0, 1] == pytest.approx(25.0) and d[1, 2] == pytest.approx(20.0)
    assert torch.all(d >= 0) and torch.allclose(d, d.T)


def test_length_mismatch_is_an_error(data: tuple[ProbeData, ProbeData]) -> None:
    from brittle.engine.errors import ConfigError

    probe = train("pos", "linear", data).probe
    reps = data[1].split()[:2]
    with pytest.raises(ConfigError):
        probe.task.loss(
            probe.net,
            __import__("brittle.scorers.probe_nets", fromlist=["pad_list"]).pad_list(reps),
            list(data[1].golds[1:3]),
            probe.spec,
        )
