"""Per-dimension standardisation of probe inputs (``train-probe --standardize``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from probe_synthetic import synthetic

from brittle.cli.main import main
from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.errors import ConfigError
from brittle.engine.probes.probe_data import ProbeData
from brittle.engine.probes.probe_training import TrainConfig, TrainResult, train_probe
from brittle.scorers.feature_scaling import Standardizer
from brittle.scorers.probe import Probe
from brittle.scorers.probe_gold import golds_of
from brittle.scorers.probe_tasks import ProbeSpec
from brittle.scorers.representations import FlatVectors, RepresentationKey

KEY = RepresentationKey("transformer", "tiny", 2, "mean", n_layers=2)
TREEBANK = Path(__file__).resolve().parents[1] / "data" / "default.conllu"


def quick(
    task: str, data: tuple[ProbeData, ProbeData], *, standardize: bool, epochs: int = 3
) -> TrainResult:
    spec = ProbeSpec(task=task, dim=data[0].dim, arch="linear")
    config = TrainConfig(epochs=epochs, lr=1e-2, seed=0, standardize=standardize)
    return train_probe(spec, KEY, *data, config=config)


def test_fit_is_the_mean_and_population_std() -> None:
    rng = np.random.default_rng(0)
    v = (rng.standard_normal((500, 6)) * [1, 10, 1e4, 0.1, 1, 1] + [0, 5, -3e3, 1, 2, 3]).astype(
        np.float32
    )
    v[:, 5] = 7.0  # a constant dimension is centred, not scaled
    s = Standardizer.fit(v, chunk=64)  # chunks do not change the result
    np.testing.assert_allclose(s.mean, v.astype(np.float64).mean(0), rtol=1e-6)
    np.testing.assert_allclose(s.std[:5], v[:, :5].astype(np.float64).std(0), rtol=1e-6)
    assert s.std[5] == 1.0 and s.mean.dtype == np.float32 and s.std.dtype == np.float32
    out = s.apply(FlatVectors(v, np.array([0, 200, 500], dtype=np.int64)))
    assert out.vectors.dtype == np.float32 and out.offsets.tolist() == [0, 200, 500]
    np.testing.assert_allclose(out.vectors[:, :5].mean(0), 0, atol=1e-3)
    np.testing.assert_allclose(out.vectors[:, :5].std(0), 1, rtol=1e-3)
    with pytest.raises(ConfigError, match="do not fit"):
        s.apply(FlatVectors(v[:, :3], np.array([0, 500], dtype=np.int64)))


def test_dict_round_trip_is_exact_and_checked() -> None:
    rng = np.random.default_rng(1)
    s = Standardizer.fit(rng.standard_normal((50, 5)).astype(np.float32) * 1e3)
    back = Standardizer.from_dict(json.loads(json.dumps(s.to_dict())), dim=5)
    assert np.array_equal(back.mean, s.mean) and np.array_equal(back.std, s.std)
    good = s.to_dict()
    for bad, match in (
        ([], "mapping"),
        ({"mean": good["mean"]}, "std"),
        ({**good, "std": good["std"][:4]}, "4 values for 5"),
        ({**good, "mean": [*good["mean"][:4], float("nan")]}, "finite"),
        ({**good, "mean": [True] * 5}, "finite"),
        ({**good, "std": [0.0] * 5}, "positive"),
    ):
        with pytest.raises(ConfigError, match=match):
            Standardizer.from_dict(bad, dim=5)


@pytest.fixture(scope="module")
def data() -> tuple[ProbeData, ProbeData]:
    return synthetic(60, seed=5, dim=32), synthetic(20, seed=6, dim=32)


@pytest.mark.parametrize("task", ["distance", "depth", "pos"])
def test_standardised_probe_round_trips_through_save_and_load(
    tmp_path: Path, data: tuple[ProbeData, ProbeData], task: str
) -> None:
    result = quick(task, data, standardize=True)
    probe = result.probe
    assert probe.scaler is not None
    np.testing.assert_array_equal(probe.scaler.mean, Standardizer.fit(data[0].vectors).mean)
    out = probe.save(tmp_path / "p")
    meta = json.loads((out / "probe.json").read_text())
    assert meta["format"] == 2 and meta["optimisation"]["standardize"] is True
    assert set(meta["standardize"]) == {"mean", "std"} and len(meta["standardize"]["std"]) == 32
    loaded = Probe.load(out, expect=KEY)
    assert loaded.scaler is not None and "standardize" not in loaded.info
    assert np.array_equal(loaded.scaler.mean, probe.scaler.mean)
    assert np.array_equal(loaded.scaler.std, probe.scaler.std)
    for a, b in zip(probe.predict(data[1]), loaded.predict(data[1]), strict=True):
        np.testing.assert_array_equal(a, b)
    # the weights hold the network alone: the statistics live in probe.json
    plain = quick(task, data, standardize=False).probe
    assert set(loaded.net.state_dict()) == set(plain.net.state_dict())
    # the dev metrics are those of the raw dev vectors read through the scaler
    assert loaded.aggregate(loaded.predict(data[1]), list(data[1].golds)) == pytest.approx(
        result.dev_metrics
    )


def test_probes_without_standardisation_are_written_and_read_as_before(
    tmp_path: Path, data: tuple[ProbeData, ProbeData]
) -> None:
    probe = quick("distance", data, standardize=False).probe
    assert probe.scaler is None
    out = probe.save(tmp_path / "p")
    meta = json.loads((out / "probe.json").read_text())
    assert meta["format"] == 1 and "standardize" not in meta
    assert "standardize" not in meta["optimisation"]
    loaded = Probe.load(out)
    assert loaded.scaler is None
    for a, b in zip(probe.predict(data[1]), loaded.predict(data[1]), strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_damaged_standardisation_is_an_error(
    tmp_path: Path, data: tuple[ProbeData, ProbeData]
) -> None:
    out = quick("distance", data, standardize=True).probe.save(tmp_path / "p")
    meta = json.loads((out / "probe.json").read_text())
    meta["standardize"]["std"] = meta["standardize"]["std"][:3]
    (out / "probe.json").write_text(json.dumps(meta))
    with pytest.raises(ConfigError, match=r"probe\.json: standardize: std has 3 values"):
        Probe.load(out)


def massive(seed: int, sentences: int | None = None) -> ProbeData:
    """Tree-encoding vectors of the real gold trees of data/default.conllu, with two
    "massive activation" dimensions that vary by thousands and carry nothing.

    Each word's vector sums one direction per edge on its path to the root (so squared
    distances are tree distances), as in probe_synthetic; decoder LMs add dimensions
    like the last two.
    """
    sentences_ = read_conllu(TREEBANK)[:sentences]
    golds = tuple(golds_of(sentences_))
    rng = np.random.default_rng(seed)
    dim = 48
    basis = np.linalg.qr(np.random.default_rng(1234).standard_normal((dim, dim)))[0]
    blocks = []
    for gold in golds:
        heads = np.asarray(gold.heads)
        n = heads.shape[0]
        vecs = np.zeros((n, dim + 2))
        for i in range(n):
            node = i
            while heads[node] != 0:
                vecs[i, :dim] += basis[node % dim]
                node = int(heads[node]) - 1
        vecs[:, dim:] = 3e4 + rng.standard_normal((n, 2)) * 3e3
        blocks.append(vecs.astype(np.float32))
    return ProbeData(FlatVectors.stack(blocks).vectors, FlatVectors.stack(blocks).offsets, golds)


def test_standardisation_trains_where_massive_dimensions_explode() -> None:
    train, dev = massive(0), massive(1, 40)
    raw = quick("distance", (train, dev), standardize=False, epochs=3)
    scaled = quick("distance", (train, dev), standardize=True, epochs=3)
    raw_loss = raw.probe.info["dev_loss"]
    scaled_loss = scaled.probe.info["dev_loss"]
    assert isinstance(raw_loss, float) and isinstance(scaled_loss, float)
    assert raw_loss > 1e4 * scaled_loss
    assert scaled.dev_metrics["uuas"] > 0.8 > raw.dev_metrics["uuas"] + 0.2


def test_cli_standardize_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRITTLE_HOME", str(tmp_path / "home"))
    out = tmp_path / "p"
    args = [
        "train-probe", str(TREEBANK), "--dev", str(TREEBANK), "--model", "random:8",
        "--epochs", "1", "--quiet", "--threads", "1", "--standardize", "--out", str(out),
    ]  # fmt: skip
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "probe.json").read_text())
    assert meta["format"] == 2 and len(meta["standardize"]["mean"]) == 8
    assert Probe.load(out).scaler is not None
