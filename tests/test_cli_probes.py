"""``brittle train-probe`` and ``brittle evaluate`` in-process, offline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner, Result
from repr_models import tiny_bert

from brittle.cli.main import main

if TYPE_CHECKING:
    from brittle.engine.attack.config import AttackConfig
    from brittle.search.generators.base import Generator

TREEBANK = Path(__file__).resolve().parents[1] / "data" / "default.conllu"


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BRITTLE_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_bert(tmp_path_factory.mktemp("cli") / "bert")


def run(*args: str) -> Result:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result


def train(out: Path, *extra: str) -> Result:
    return run(
        "train-probe",
        str(TREEBANK),
        "--dev",
        str(TREEBANK),
        "--out",
        str(out),
        "--epochs",
        "2",
        "--quiet",
        "--threads",
        "1",
        *extra,
    )


def test_train_and_evaluate(tmp_path: Path, bert_dir: Path, home: Path) -> None:
    dist = tmp_path / "dist"
    result = train(dist, "--model", str(bert_dir), "--layer", "-1", "--task", "distance")
    assert result.exit_code == 0, result.output
    assert "uuas" in result.output
    meta = json.loads((dist / "probe.json").read_text())
    assert meta["task"] == "distance" and meta["layer"] == -1 and meta["pooling"] == "mean"
    assert meta["training"]["train"] == [str(TREEBANK)] and meta["seed"] == 0
    assert list((home / "representations").glob("*.f32"))  # vectors were cached on disk

    pos = tmp_path / "pos"
    result = train(pos, "--model", "random:16", "--task", "pos", "--arch", "mlp", "--hidden", "8")
    assert result.exit_code == 0, result.output

    out = tmp_path / "eval.json"
    result = run(
        "evaluate",
        str(TREEBANK),
        "--probe",
        str(dist),
        "--probe",
        str(pos),
        "--json",
        str(out),
        "--quiet",
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert set(report["probes"]) == {"dist", "pos"}
    assert report["probes"]["dist"]["task"] == "distance"
    assert set(report["probes"]["dist"]["metrics"]) >= {"uuas", "sdr", "dspr"}
    assert set(report["probes"]["pos"]["metrics"]) == {"pos_acc"}
    assert set(report["baselines"]) == {"path", "majority"}
    for base in report["baselines"].values():
        assert set(base) >= {"uuas", "sdr", "dspr", "root_acc", "depth_spearman"}
    assert report["majority_trained_on"] == [str(TREEBANK)]
    assert "path" in result.output


def test_static_vectors_report_oov(tmp_path: Path) -> None:
    vectors = tmp_path / "v.txt"
    vectors.write_text("2 3\nthe 1 0 0\nold 0 1 0\n")
    result = train(tmp_path / "root", "--model", str(vectors), "--task", "root")
    assert result.exit_code == 0, result.output
    meta = json.loads((tmp_path / "root" / "probe.json").read_text())
    assert meta["oov"]["oov_tokens"] > 0 and meta["oov"]["policy"] == "zero after lowercase"
    assert "OOV" in result.output


def test_user_errors(tmp_path: Path, bert_dir: Path) -> None:
    result = train(tmp_path / "p", "--model", str(bert_dir), "--layer", "-9")
    assert result.exit_code == 2 and "layer -9" in result.output
    result = train(tmp_path / "p", "--model", "random:8", "--task", "constituency")
    assert result.exit_code == 2 and "unknown probe task" in result.output
    result = run("evaluate", str(TREEBANK), "--probe", str(tmp_path / "absent"))
    assert result.exit_code == 2 and "train-probe" in result.output
    result = run("evaluate", str(TREEBANK), "--no-baselines")
    assert result.exit_code == 2


def test_evaluate_baselines_only(tmp_path: Path) -> None:
    out = tmp_path / "b.json"
    result = run("evaluate", str(TREEBANK), "--json", str(out), "--quiet")
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["probes"] == {} and report["notes"]  # majority learnt on the test set


@pytest.mark.needs("spacy-model", "glove")
def test_attack_several_budgets(
    tmp_path: Path, bert_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_generators_helpers import wordnet_or_skip

    wordnet_or_skip()
    dist = tmp_path / "dist"
    assert train(dist, "--model", str(bert_dir), "--task", "distance").exit_code == 0
    import brittle.engine.attack.assembly as assembly

    builds: list[AttackConfig] = []
    real_build = assembly.build_generator
    tabled: list[str] = []

    def counted_build(config: AttackConfig) -> Generator:
        builds.append(config)
        generator = real_build(config)
        real_candidates = generator.candidates  # type: ignore[attr-defined]

        def counted_candidates(sentences, *, top_k=None):  # type: ignore[no-untyped-def]
            tabled.extend(s.sent_id for s in sentences)
            return real_candidates(sentences, top_k=top_k)

        object.__setattr__(generator, "candidates", counted_candidates)
        return generator

    monkeypatch.setattr(assembly, "build_generator", counted_build)
    out = tmp_path / "attack"
    args = [
        "attack",
        str(TREEBANK),
        "--probe",
        str(dist),
        "--parser",
        "gold",
        "--budget",
        "1,2",
        "--candidates",
        "3",
        "--limit",
        "3",
        "--out",
        str(out),
    ]
    result = run(*args)
    assert result.exit_code == 0, result.output
    assert len(builds) == 1  # probes, model and generator loaded once for both budgets
    assert len(tabled) == 3  # each sentence's substitution table generated once
    for tau in (1, 2):
        summary = json.loads((out / f"tau={tau}" / "summary.json").read_text())
        assert summary["sentences"] == 3 and summary["config"]["budget"] == tau
    assert (out / "plots" / "drop_vs_budget.png").stat().st_size > 0
    # Running again without --resume refuses before loading anything.
    again = CliRunner().invoke(main, args)
    assert again.exit_code != 0 and "--resume" in again.output
    assert len(builds) == 1
    # A bad sentence near the end: one line naming file and line, no bar, no results.
    bad = tmp_path / "bad.conllu"
    lines = TREEBANK.read_text().splitlines(keepends=True)
    k = max(i for i, line in enumerate(lines) if line[:1].isdigit())
    cols = lines[k].split("\t")
    cols[6] = "x"
    lines[k] = "\t".join(cols)
    bad.write_text("".join(lines))
    broken = CliRunner().invoke(
        main,
        ["attack", str(bad), "--probe", str(dist), "--parser", "gold", "--out", str(out / "bad")],
    )
    assert broken.exit_code == 2
    assert f"{bad}:{k + 1}:" in broken.output and "Traceback" not in broken.output
    assert "━" not in broken.output
    assert not (out / "bad" / "results.jsonl").exists()
