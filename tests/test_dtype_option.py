"""``--dtype`` of ``attack``, ``perturb`` and ``compare-methods``: the precision of
every torch model the command runs, checked before anything loads, recorded in the
attack's ``config.json`` only when set."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result
from repr_models import tiny_bert

from brittle.cli.main import main
from brittle.engine.attack import AttackConfig
from brittle.engine.core.errors import ConfigError

TREEBANK = Path(__file__).resolve().parents[1] / "data" / "default.conllu"


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BRITTLE_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A distance probe on a tiny BERT, trained in float32 for one epoch."""
    root = tmp_path_factory.mktemp("dtype")
    bert = tiny_bert(root / "bert")
    out = root / "dist"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("BRITTLE_HOME", str(root / "home"))
        result = run(
            "train-probe", str(TREEBANK), "--dev", str(TREEBANK), "--out", str(out),
            "--model", str(bert), "--task", "distance", "--epochs", "1", "--threads", "1",
            "--quiet",
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def attack_args(probe: Path, out: Path) -> list[str]:
    return [
        "attack", str(TREEBANK), "--probe", str(probe), "--method", "neighbour-flip",
        "--search", "sample", "--parser", "gold", "--candidates", "3", "--budget", "1",
        "--limit", "3", "--quiet", "--out", str(out),
    ]  # fmt: skip


def test_attack_in_bfloat16_runs_on_cpu_and_records_the_dtype(
    probe: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import brittle.engine.probes.probe_eval as probe_eval

    opened: list[str] = []
    real_reopen = probe_eval.reopen_backend

    def spying_reopen(description, *, device=None, dtype=None):  # type: ignore[no-untyped-def]
        backend = real_reopen(description, device=device, dtype=dtype)
        opened.append(str(backend.describe()["dtype"]))
        return backend

    monkeypatch.setattr(probe_eval, "reopen_backend", spying_reopen)
    half = tmp_path / "bf16"
    result = run(*attack_args(probe, half), "--dtype", "bfloat16", "--device", "cpu")
    assert result.exit_code == 0, result.output
    assert opened == ["bfloat16"]  # the probe was trained in float32
    assert json.loads((half / "config.json").read_text())["dtype"] == "bfloat16"
    summary = json.loads((half / "summary.json").read_text())
    assert summary["sentences"] == 3 and summary["config"]["dtype"] == "bfloat16"
    # The default: the probe's own precision, and config.json without the key.
    plain = tmp_path / "default"
    result = run(*attack_args(probe, plain), "--device", "cpu")
    assert result.exit_code == 0, result.output
    assert opened == ["bfloat16", "float32"]
    assert "dtype" not in json.loads((plain / "config.json").read_text())
    # Resuming with another precision would mix results: refused, naming the setting.
    again = run(*attack_args(probe, half), "--resume", "--device", "cpu")
    assert again.exit_code == 2 and "dtype" in again.output, again.output


@pytest.mark.parametrize(
    "command",
    [
        ["attack", str(TREEBANK), "--probe", "PROBE", "--out", "OUT"],
        ["perturb", str(TREEBANK), "--method", "shuffle", "--out", "OUT/p.conllu"],
        ["compare-methods", str(TREEBANK), "--methods", "shuffle", "--out", "OUT"],
    ],
    ids=["attack", "perturb", "compare-methods"],
)
def test_float16_on_cpu_fails_in_one_line_before_anything_loads(
    command: list[str], probe: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import brittle.engine.attack.assembly as assembly
    import brittle.search.generators.lm as lm
    import brittle.search.sentence_models as sentence_models

    def no_loading(*args: object, **kwargs: object) -> None:
        raise AssertionError("a model loaded")

    monkeypatch.setattr(assembly, "build_components", no_loading)
    monkeypatch.setattr(lm, "load_lm", no_loading)
    monkeypatch.setattr(sentence_models.SentenceEncoder, "_load", no_loading)
    args = [a.replace("PROBE", str(probe)).replace("OUT", str(tmp_path / "o")) for a in command]
    result = run(*args, "--dtype", "float16", "--device", "cpu")
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert "--dtype float16 needs a GPU" in lines[0] and "Traceback" not in result.output
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("command", ["attack", "perturb", "compare-methods"])
def test_an_unknown_dtype_is_refused_by_click(command: str, tmp_path: Path) -> None:
    result = run(command, str(TREEBANK), "--dtype", "float64", "--out", str(tmp_path / "o"))
    assert result.exit_code == 2
    assert "Invalid value for '--dtype'" in result.output
    assert "float32" in result.output and "bfloat16" in result.output


def test_help_explains_the_option() -> None:
    for command in ("attack", "perturb", "compare-methods"):
        text = " ".join(run(command, "--help").output.split())
        assert "--dtype [float32|float16|bfloat16]" in text, command
        assert "float16 needs a GPU" in text


def test_configs_write_the_dtype_only_when_set() -> None:
    from brittle.engine.compare.compare_run import CompareConfig, CompareResult
    from brittle.engine.perturb.perturb_run import PerturbConfig

    base = AttackConfig(treebank="t.conllu", probes=("p",), method="shuffle", search="sample")
    assert "dtype" not in base.to_dict()
    half = AttackConfig(**{**base.__dict__, "dtype": "bfloat16"})
    assert half.to_dict()["dtype"] == "bfloat16"
    assert AttackConfig.from_dict(half.to_dict()) == half
    with pytest.raises(ConfigError, match="--dtype"):
        AttackConfig(**{**base.__dict__, "dtype": "float64"})
    assert "dtype" not in PerturbConfig(method="shuffle").to_dict()
    assert PerturbConfig(method="shuffle", dtype="bfloat16").to_dict()["dtype"] == "bfloat16"
    with pytest.raises(ConfigError, match="--dtype"):
        PerturbConfig(method="shuffle", dtype="half")

    def config_of(config: CompareConfig) -> dict[str, object]:
        written = CompareResult(config=config, treebank="t", rows=()).to_dict()["config"]
        assert isinstance(written, dict)
        return written

    assert "dtype" not in config_of(CompareConfig(methods=("shuffle",)))
    assert config_of(CompareConfig(methods=("shuffle",), dtype="bfloat16"))["dtype"] == "bfloat16"


def test_workers_get_the_dtype_with_the_shard_task(monkeypatch: pytest.MonkeyPatch) -> None:
    import brittle.engine.attack.chunk_search as chunk_search
    from brittle.engine.attack.chunk_search import AttackShards

    config = AttackConfig(
        treebank="t.conllu", probes=("p",), method="shuffle", search="sample", dtype="bfloat16"
    )
    task = AttackShards(config, cache_size=10, lockstep=True, quality=False)
    sent = pickle.loads(pickle.dumps(task))  # what a worker process receives
    built: list[str | None] = []

    class Built(Exception):
        pass

    def fake_build(config: AttackConfig, **kwargs: object) -> None:
        built.append(config.dtype)
        raise Built

    monkeypatch.setattr(chunk_search, "build_components", fake_build)
    with pytest.raises(Built):
        sent.start(None)
    assert built == ["bfloat16"]


def test_perturb_models_take_the_dtype() -> None:
    from brittle.engine.perturb.perturb_run import PerturbConfig, perturb_constraints, quality_meter
    from brittle.scorers.parsers import make_parser
    from brittle.search.constraints.fluency import FluencyConstraint
    from brittle.search.constraints.similarity import SimilarityConstraint

    config = PerturbConfig(
        method="shuffle", constraints=("fluency", "similarity"), parser="gold", dtype="bfloat16"
    )
    parser = make_parser("gold")
    checks = perturb_constraints(config, parser)
    models = [c for c in checks if isinstance(c, FluencyConstraint | SimilarityConstraint)]
    assert len(models) == 2 and all(c.dtype == "bfloat16" for c in models)
    meter = quality_meter(config, parser)
    assert meter is not None and meter.dtype == "bfloat16"
    assert quality_meter(PerturbConfig(method="shuffle", quality=False), parser) is None


def test_causal_lm_and_sentence_encoder_run_in_bfloat16(tmp_path: Path) -> None:
    import torch
    from agreement_models import make_gpt2

    from brittle.search.generators.lm import load_lm
    from brittle.search.generators.lm_causal import sentence_logprobs
    from brittle.search.sentence_models import SentenceEncoder

    gpt2 = make_gpt2(tmp_path / "gpt2")
    texts = ["the cat sat on the mat", "hello world"]
    full = load_lm(str(gpt2), kind="causal", device="cpu")
    half = load_lm(str(gpt2), kind="causal", device="cpu", dtype="bfloat16")
    assert next(full.model.parameters()).dtype == torch.float32
    assert next(half.model.parameters()).dtype == torch.bfloat16
    assert load_lm(str(gpt2), kind="causal", device="cpu", dtype="float32") is full
    a, b = sentence_logprobs(full, texts), sentence_logprobs(half, texts)
    assert b.dtype == np.float64 and np.allclose(a, b, rtol=0.05, atol=0.5)
    with pytest.raises(ConfigError, match="float16 needs a GPU"):
        load_lm(str(gpt2), kind="causal", device="cpu", dtype="float16")
    bert = tiny_bert(tmp_path / "bert")
    plain = SentenceEncoder(str(bert), device="cpu").embed(texts)
    brain = SentenceEncoder(str(bert), device="cpu", dtype="bfloat16").embed(texts)
    assert brain.dtype == np.float32 and np.allclose(plain, brain, atol=0.05)


def test_dtype_reaches_the_generators_that_run_a_model() -> None:
    from brittle.engine.runs.run_options import shorthand_generator_options
    from brittle.search.generators.coco import CoCO

    out = shorthand_generator_options(
        ["coco", "copos"], lm=None, lm_kind=None, sense=None, dtype="bfloat16"
    )
    assert out == {"coco": ("dtype=bfloat16",), "copos": ()}
    assert shorthand_generator_options(["coco"], lm=None, lm_kind=None, sense=None) == {"coco": ()}
    assert CoCO(dtype="bfloat16").dtype == "bfloat16" and CoCO().dtype is None
