"""Probe directories (save/load), representation checks, determinism and the baselines."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from probe_synthetic import synthetic

from brittle.engine.core.errors import ConfigError, ResourceMissingError
from brittle.engine.probes.probe_data import ProbeData
from brittle.engine.probes.probe_training import TrainConfig, TrainResult, train_probe
from brittle.scorers.baselines import MajorityTrees, baseline_metrics, path_heads, rooted_heads
from brittle.scorers.probe import Probe
from brittle.scorers.probe_gold import Gold
from brittle.scorers.probe_tasks import ProbeSpec
from brittle.scorers.representations import FlatVectors, RepresentationKey

KEY = RepresentationKey("transformer", "tiny", 2, "mean", n_layers=2)


@pytest.fixture(scope="module")
def data() -> tuple[ProbeData, ProbeData]:
    return synthetic(60, seed=5, dim=32), synthetic(20, seed=6, dim=32)


def quick(
    task: str, data: tuple[ProbeData, ProbeData], *, seed: int = 0, arch: str = "linear"
) -> TrainResult:
    spec = ProbeSpec(task=task, dim=32, arch=arch, hidden=16)
    return train_probe(spec, KEY, *data, config=TrainConfig(epochs=3, lr=1e-2, seed=seed))


@pytest.mark.parametrize(
    ("task", "arch"),
    [("distance", "linear"), ("pos", "mlp"), ("tree-depth", "linear"), ("root", "mlp")],
)
def test_save_load_round_trip(
    tmp_path: Path, data: tuple[ProbeData, ProbeData], task: str, arch: str
) -> None:
    result = quick(task, data, arch=arch)
    out = result.probe.save(tmp_path / "probe")
    loaded = Probe.load(out, expect=KEY)
    assert loaded.spec == result.probe.spec and loaded.key == KEY
    for a, b in zip(result.probe.predict(data[1]), loaded.predict(data[1]), strict=True):
        np.testing.assert_array_equal(a, b)
    meta = json.loads((out / "probe.json").read_text())
    for field in ("model", "layer", "pooling", "task", "architecture", "rank", "seed"):
        assert field in meta
    assert meta["layer"] == -1 and meta["model"] == "tiny" and meta["task"] == task
    assert meta["dev_metrics"] == result.dev_metrics
    assert "torch" in meta["versions"]
    # saving again replaces the probe atomically and leaves no staging directory
    result.probe.save(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["probe"]


def test_mismatched_representation_is_an_error(
    tmp_path: Path, data: tuple[ProbeData, ProbeData]
) -> None:
    out = quick("depth", data).probe.save(tmp_path / "p")
    other_layer = RepresentationKey("transformer", "tiny", 1, "mean", n_layers=2)
    other_model = RepresentationKey("transformer", "other", 2, "mean", n_layers=2)
    with pytest.raises(ConfigError, match="layer -2"):
        Probe.load(out, expect=other_layer)
    with pytest.raises(ConfigError, match="other"):
        Probe.load(out, expect=other_model)
    probe = Probe.load(out)
    with pytest.raises(ConfigError):
        probe.check_representation(other_layer)
    probe.check_representation(KEY)
    with pytest.raises(ConfigError, match="dimensions"):
        probe.predict(FlatVectors.stack([np.zeros((3, 7), dtype=np.float32)]))


def test_load_errors(tmp_path: Path) -> None:
    with pytest.raises(ResourceMissingError):
        Probe.load(tmp_path / "absent")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "probe.json").write_text("{}")
    with pytest.raises(ConfigError):
        Probe.load(tmp_path / "broken")
    (tmp_path / "notaprobe").mkdir()
    (tmp_path / "notaprobe" / "x.txt").write_text("x")
    probe = Probe(ProbeSpec(task="root", dim=4), KEY)
    with pytest.raises(ConfigError):
        probe.save(tmp_path / "notaprobe")


def test_training_is_deterministic(data: tuple[ProbeData, ProbeData]) -> None:
    a = quick("perceptron", data, seed=3).probe.net.state_dict()
    b = quick("perceptron", data, seed=3).probe.net.state_dict()
    c = quick("perceptron", data, seed=4).probe.net.state_dict()
    assert all(np.array_equal(a[k].numpy(), b[k].numpy()) for k in a)
    assert not all(np.array_equal(a[k].numpy(), c[k].numpy()) for k in a)


def test_predict_keeps_order_across_batches(data: tuple[ProbeData, ProbeData]) -> None:
    probe = quick("distance", data).probe
    reps = data[1].split()
    small = probe.predict(data[1], batch_size=3)
    whole = probe.predict(FlatVectors.stack(reps), batch_size=1000)
    for r, a, b in zip(reps, small, whole, strict=True):
        assert a.shape == (r.shape[0], r.shape[0])
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------ baselines
def test_path_heads() -> None:
    assert path_heads(4).tolist() == [0, 1, 2, 3]
    assert path_heads(4, root=2).tolist() == [2, 3, 0, 3]
    assert path_heads(1).tolist() == [0]


def test_rooted_heads_reorients() -> None:
    parent = np.array([-1, 0, 1, 1])  # edges 0-1, 1-2, 1-3
    assert rooted_heads(parent, 0).tolist() == [0, 1, 2, 2]
    assert rooted_heads(parent, 3).tolist() == [2, 4, 2, 0]


def test_majority_tree_is_the_most_common_edges() -> None:
    a = Gold.from_arrays([2, 0, 2])  # 1 <- 2 -> 3
    b = Gold.from_arrays([0, 1, 2])  # chain rooted at 1
    golds = [a, a, b, Gold.from_arrays([0, 1, 2, 3])]
    m = MajorityTrees.fit(golds, max_length=3)
    assert m.heads(3).tolist() == a.heads.tolist()
    assert m.root_position(3) == 1
    assert m.heads(4).tolist() == path_heads(4).tolist()  # longer than max_length
    assert m.heads(7).tolist() == path_heads(7).tolist()  # never seen
    perfect = baseline_metrics([a], m.heads)
    assert perfect["uuas"] == 1.0 and perfect["root_acc"] == 1.0 and perfect["depth_acc"] == 1.0
    assert baseline_metrics([a], m.path)["uuas"] == 1.0  # for 3 words the chain is a's tree
    assert set(perfect) >= {"uuas", "sdr", "dspr", "root_acc", "depth_spearman"}


def test_scores_from_a_backend_batch(data: tuple[ProbeData, ProbeData]) -> None:
    from brittle.scorers.representations import FlatReps

    probe = quick("depth", data).probe
    d = data[1]
    flat = FlatReps(np.asarray(d.vectors)[None], d.offsets, (2,))
    scores = probe.score_predictions(probe.predict_reps(flat, layer=2), d.golds)
    assert scores == probe.score_predictions(probe.predict(d), d.golds)
    assert set(scores[0]) == {"root_acc", "depth_spearman", "depth_acc"}
    assert probe.predict(FlatVectors(d.vectors, d.offsets[:1])) == []  # no sentence
