"""``train-probe --layer all``: one probe per layer, from one extraction, resumable."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner, Result
from repr_models import tiny_bert

from brittle.cli.main import main
from brittle.engine.core.errors import ConfigError
from brittle.engine.evaluate.evaluation import expand_probe_dirs, probe_names
from brittle.engine.probes.probe_jobs import TrainJob, run_train_job
from brittle.engine.probes.probe_sweep import (
    SUMMARY,
    SweepJob,
    check_sweep,
    parse_layers,
    run_sweep,
)
from brittle.engine.probes.probe_training import TrainConfig
from brittle.scorers.probe import Probe
from brittle.scorers.representations import BackendRequest
from brittle.scorers.transformer_backend import TransformerEncoder

TREEBANK = Path(__file__).resolve().parents[1] / "data" / "default.conllu"


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BRITTLE_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_bert(tmp_path_factory.mktemp("sweep") / "bert")


def job(bert_dir: Path, out: Path, *, epochs: int = 2, task: str = "distance") -> TrainJob:
    return TrainJob(
        train=(TREEBANK,),
        dev=TREEBANK,
        out=out,
        task=task,
        request=BackendRequest(model=str(bert_dir)),
        config=TrainConfig(epochs=epochs, seed=0),
        use_cache=False,
    )


def count_passes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, ...]]:
    """Record the layers of every model pass (``encode_flat`` call)."""
    calls: list[tuple[int, ...]] = []
    original = TransformerEncoder.encode_flat

    def spy(self: TransformerEncoder, sentences, *, layers):  # type: ignore[no-untyped-def]
        calls.append(tuple(layers))
        return original(self, sentences, layers=layers)

    monkeypatch.setattr(TransformerEncoder, "encode_flat", spy)
    return calls


def test_parse_layers() -> None:
    assert parse_layers("all") is None and parse_layers(" ALL ") is None
    assert parse_layers("0,2,-1") == (0, 2, -1)
    assert parse_layers("-1") == (-1,)
    for bad in ("", "a", "1,,2", "1.5", "all,2"):
        with pytest.raises(ValueError, match="not a layer number"):
            parse_layers(bad)


def test_all_layers_one_extraction(
    tmp_path: Path, bert_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = count_passes(monkeypatch)
    out = tmp_path / "sweep"
    result = run_sweep(SweepJob(job(bert_dir, out)))
    n_layers = len(result.layers) - 1
    assert n_layers >= 2
    assert [o.index for o in result.layers] == list(range(n_layers + 1))
    # every pass of the model asked for every layer at once: one extraction per split
    assert calls and all(c == tuple(range(n_layers + 1)) for c in calls)
    summary = json.loads((out / SUMMARY).read_text())
    assert [e["layer"] for e in summary["layers"]] == list(range(n_layers + 1))
    assert summary["best_layer"] == result.best.index
    assert summary["best_layer"] == min(summary["layers"], key=lambda e: e["dev_loss"])["layer"]
    for o in result.layers:
        probe = Probe.load(o.path)
        assert probe.key.layer == o.index and probe.spec.task == "distance"
        assert probe.info["dev_loss"] == pytest.approx(o.dev_loss)


def test_sweep_layer_equals_single_training(tmp_path: Path, bert_dir: Path) -> None:
    """A layer of a sweep is the probe ``--layer N`` trains alone (same seed)."""
    out = tmp_path / "sweep"
    run_sweep(SweepJob(job(bert_dir, out), (1, -1)))
    single = tmp_path / "single"
    run_train_job(replace(job(bert_dir, single), layer=1))
    a, b = Probe.load(out / "layer1").net.state_dict(), Probe.load(single).net.state_dict()
    assert a.keys() == b.keys()
    for name in a:
        assert torch.equal(a[name], b[name]), name
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["layer1", f"layer{Probe.load(single).key.n_layers}", SUMMARY]
    )


def test_rerun_keeps_trained_layers(
    tmp_path: Path, bert_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "sweep"
    run_sweep(SweepJob(job(bert_dir, out), (0, 1)))
    weights = (out / "layer0" / "probe.json").read_bytes()
    calls = count_passes(monkeypatch)
    result = run_sweep(SweepJob(job(bert_dir, out), (0, 1, 2)))
    assert [o.kept for o in result.layers] == [True, True, False]
    assert calls and all(c == (2,) for c in calls)  # only the new layer was extracted
    assert (out / "layer0" / "probe.json").read_bytes() == weights
    # other settings retrain everything and drop layers the new sweep does not have
    result = run_sweep(SweepJob(job(bert_dir, out, epochs=1), (0,)))
    assert [(o.index, o.kept) for o in result.layers] == [(0, False)]
    assert sorted(p.name for p in out.iterdir()) == ["layer0", SUMMARY]


def test_sweep_out_errors(tmp_path: Path, bert_dir: Path) -> None:
    single = tmp_path / "single"
    run_train_job(job(bert_dir, single, epochs=1))
    with pytest.raises(ConfigError, match="is a single probe"):
        check_sweep(SweepJob(job(bert_dir, single)))
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="not a sweep"):
        check_sweep(SweepJob(job(bert_dir, other)))
    afile = tmp_path / "file"
    afile.write_text("x")
    with pytest.raises(ConfigError, match="is a file"):
        check_sweep(SweepJob(job(bert_dir, afile)))
    with pytest.raises(ConfigError, match="does not exist"):
        run_sweep(SweepJob(job(bert_dir, tmp_path / "new"), (0, 99)))
    assert not (tmp_path / "new").exists()


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_cli_layer_all_and_static(tmp_path: Path, bert_dir: Path) -> None:
    out = tmp_path / "sweep"
    common = ["train-probe", str(TREEBANK), "--dev", str(TREEBANK), "--epochs", "1", "--quiet"]
    result = run(*common, "--model", str(bert_dir), "--layer", "all", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "lowest dev loss" in result.output and "layer0" in result.output
    assert (out / "layer0" / "probe.json").is_file()
    # static vectors have one layer: the sweep has one probe
    static = tmp_path / "static"
    result = run(*common, "--model", "random:8", "--layer", "all", "--out", str(static))
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in static.iterdir()) == ["layer0", SUMMARY]
    result = run(*common, "--model", "random:8", "--layer", "x", "--out", str(tmp_path / "y"))
    assert result.exit_code == 2 and "not a layer number" in result.output


def test_evaluate_names_the_probes_of_a_sweep_by_sweep_and_layer(
    tmp_path: Path, bert_dir: Path
) -> None:
    out = tmp_path / "minilm-distance"
    run_sweep(SweepJob(job(bert_dir, out, epochs=1), (0, 1)))
    single = tmp_path / "single"
    run_train_job(job(bert_dir, single, epochs=1))
    link = tmp_path / "named"
    link.symlink_to(out / "layer1", target_is_directory=True)
    paths = expand_probe_dirs([out, single, link, out / "layer0"])
    assert probe_names(paths) == [
        "minilm-distance/layer0",
        "minilm-distance/layer1",
        "single",
        "named",
        "minilm-distance/layer0-2",
    ]
    report = tmp_path / "eval.json"
    result = run("evaluate", str(TREEBANK), "--probe", str(out), "--json", str(report), "--quiet")
    assert result.exit_code == 0, result.output
    names = list(json.loads(report.read_text())["probes"])
    assert names == ["minilm-distance/layer0", "minilm-distance/layer1"]


def test_a_malformed_summary_is_a_clear_error(tmp_path: Path, bert_dir: Path) -> None:
    out = tmp_path / "sweep"
    run_sweep(SweepJob(job(bert_dir, out, epochs=1), (0,)))
    data = json.loads((out / SUMMARY).read_text())
    data["layers"][0].pop("dev_loss")
    (out / SUMMARY).write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="malformed"):
        run_sweep(SweepJob(job(bert_dir, out, epochs=1), (0,)))
    (out / SUMMARY).write_text("{not json")
    with pytest.raises(ConfigError, match="not a readable sweep summary"):
        run_sweep(SweepJob(job(bert_dir, out, epochs=1), (0,)))
