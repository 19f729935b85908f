"""``brittle attack`` and ``brittle report`` under mistakes, interruptions and contention.

The CLI runs in-process. Probe directories are real descriptions (``probe.json``) with
the model load replaced by the attack tests' stand-in components, and that replacement
fails the test when a check is expected to stop the run before anything loads.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_attack import components as fake_components

import brittle.cli.attack as cli_attack
from brittle.cli.main import main
from brittle.engine.attack import AttackComponents, AttackConfig
from brittle.engine.core.lock import LOCK_NAME, locked_directory
from brittle.scorers.probe_tasks import ProbeSpec
from brittle.scorers.representations import RepresentationKey

from support import FIXTURES

TREEBANK = FIXTURES / "mwt_empty.conllu"
ROOT = Path(__file__).resolve().parents[1]


def make_probe(directory: Path, task: str = "distance", model: str = "tiny") -> Path:
    """A probe directory as train-probe leaves it (the weights are never read here)."""
    directory.mkdir(parents=True)
    key = RepresentationKey("transformer", model, 2, "mean", n_layers=6)
    meta = {"format": 1, "spec": ProbeSpec(task, 8).to_dict(), "representation": key.to_dict()}
    (directory / "probe.json").write_text(json.dumps(meta))
    (directory / "weights.pt").write_bytes(b"")
    return directory


@pytest.fixture
def probes(tmp_path: Path) -> tuple[Path, Path]:
    return make_probe(tmp_path / "dist"), make_probe(tmp_path / "pos", "pos")


devices: list[str | None] = []


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[AttackConfig]:
    """Replace the model load by the stand-in components; records each load."""
    calls: list[AttackConfig] = []

    def build(
        config: AttackConfig,
        *,
        reuse: AttackComponents | None = None,
        device: str | None = None,
        remember_tables: bool = False,
    ) -> AttackComponents:
        calls.append(config)
        devices.append(device)
        return fake_components(config.search)

    monkeypatch.setattr(cli_attack, "build_components", build)
    return calls


def attack(probes: tuple[Path, ...], out: Path, *extra: str, treebank: Path = TREEBANK):
    args = ["attack", str(treebank), "--parser", "gold", "--budget", "2", "--out", str(out)]
    for p in probes:
        args += ["--probe", str(p)]
    return CliRunner().invoke(main, [*args, *extra])


def one_error_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1, output
    assert "Traceback" not in output
    return errors[0]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--limit", "-1"], "--limit must be at least 1"),
        (["--limit", "0"], "--limit must be at least 1"),
        (["--objective", "nope"], "--objective 'nope' names no probe task or metric"),
        (["--objective", "distance.nope"], "distance, pos, distance.uuas"),
        (["--constraint", "syntax:wide"], "syntax: expected a number"),
        (["--method", "shuffle"], "cannot search it"),
        (["--budget", "1,,2"], "expected positive integers like 3 or 1,2,3, got '1,,2'"),
        (["--budget", "0,1"], "budgets must be positive integers"),
        (["--budget", "-1"], "expected positive integers"),
        (["--resume", "--overwrite"], "--resume continues OUT and --overwrite discards it"),
    ],
)
def test_option_mistakes_stop_before_anything_loads(
    tmp_path: Path, probes: tuple[Path, Path], loads: list[AttackConfig], extra, message
) -> None:
    out = tmp_path / "out"
    result = attack(probes, out, *extra)
    assert result.exit_code == 2, result.output
    assert message in one_error_line(result.output)
    assert loads == [] and not out.exists()


def test_input_mistakes_stop_before_anything_loads(
    tmp_path: Path, probes: tuple[Path, Path], loads: list[AttackConfig]
) -> None:
    out = tmp_path / "out"
    cases = [
        (attack(probes, out, treebank=tmp_path / "missing.conllu"), "missing.conllu"),
        (attack((tmp_path / "nowhere",), out), "nowhere"),
    ]
    a_file = tmp_path / "file"
    a_file.write_text("x")
    cases.append((attack(probes, a_file), "is a file"))
    broken = make_probe(tmp_path / "broken")
    (broken / "weights.pt").unlink()
    cases.append((attack((broken,), out), "has no weights.pt"))
    for result, message in cases:
        assert result.exit_code == 2, result.output
        assert message in one_error_line(result.output)
    assert loads == [] and not out.exists()
    assert a_file.read_text() == "x"


@pytest.mark.needs("spacy-model", "glove")
def test_objective_takes_a_task_or_a_metric(
    tmp_path: Path, probes: tuple[Path, Path], loads: list[AttackConfig]
) -> None:
    result = attack(probes, tmp_path / "a", "--objective", "distance")
    assert result.exit_code == 0, result.output
    assert loads[0].objective == ("distance",)
    for _ in range(2):  # the run's summary, then the one `brittle report` renders
        summary = json.loads((tmp_path / "a" / "summary.json").read_text())
        assert summary["objective"] == ["distance.uuas"]  # the task's primary metric
        md = (tmp_path / "a" / "summary.md").read_text()
        assert "Objective: the mean drop of distance.uuas." in md
        assert "epsilon L2 (mean of per-sentence farthest)" in md
        assert CliRunner().invoke(main, ["report", str(tmp_path / "a")]).exit_code == 0


@pytest.mark.needs("spacy-model", "glove")
def test_summary_records_inputs_and_report_marks_incomplete_runs(
    tmp_path: Path, probes: tuple[Path, Path], loads: list[AttackConfig]
) -> None:
    out = tmp_path / "out"
    result = attack(probes, out)
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is True
    assert summary["sentences"] == summary["treebank_sentences"] == 3
    inputs = summary["inputs"]
    assert len(inputs["treebank"]["sha256"]) == 64
    assert [p["task"] for p in inputs["probes"]] == ["distance", "pos"]
    assert all(len(p["sha256"]) == 64 for p in inputs["probes"])
    # An interrupted run: only the first row made it.
    rows = (out / "results.jsonl").read_text().splitlines(keepends=True)
    (out / "results.jsonl").write_text(rows[0])
    report = CliRunner().invoke(main, ["report", str(out)])
    assert report.exit_code == 0, report.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is False and summary["sentences"] == 1
    assert "**Incomplete:** 1 of 3 sentences" in (out / "summary.md").read_text()
    # A row without a field is a line error, not a traceback.
    row = json.loads(rows[0])
    del row["damage"]
    (out / "results.jsonl").write_text(json.dumps(row) + "\n")
    report = CliRunner().invoke(main, ["report", str(out)])
    assert report.exit_code == 2
    assert "results.jsonl:1: result row lacks damage" in one_error_line(report.output)


@pytest.mark.needs("spacy-model", "glove")
def test_resume_refuses_a_changed_treebank(
    tmp_path: Path, probes: tuple[Path, Path], loads: list[AttackConfig]
) -> None:
    treebank = tmp_path / "tb.conllu"
    treebank.write_text(TREEBANK.read_text())
    out = tmp_path / "out"
    assert attack(probes, out, treebank=treebank).exit_code == 0
    treebank.write_text(TREEBANK.read_text().replace("# text = ", "# text =  "))
    result = attack(probes, out, "--resume", treebank=treebank)
    assert result.exit_code == 2
    assert "changed since the attack" in one_error_line(result.output)


@pytest.mark.needs("spacy-model", "glove")
def test_progress_in_logs_is_plain_lines(
    tmp_path: Path, probes: tuple[Path, Path], loads: list[AttackConfig]
) -> None:
    result = attack(probes, tmp_path / "out")
    assert result.exit_code == 0
    assert "tau=2: 0/3 sentences done, starting" in result.output
    assert "tau=2: 3/3 sentences" in result.output and "sent/s ·" not in result.output
    quiet = attack(probes, tmp_path / "quiet", "--quiet")
    assert quiet.exit_code == 0 and "sentences done" not in quiet.output
    assert "Worst-case drop per task" in quiet.output


def test_ctrl_c_says_how_far_and_how_to_resume(
    tmp_path: Path,
    probes: tuple[Path, Path],
    loads: list[AttackConfig],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from brittle.engine.attack.run import AttackRun

    real = AttackRun._search_chunk

    def interrupted(self, searches, done):  # type: ignore[no-untyped-def]
        real(self, searches, done)
        raise KeyboardInterrupt

    monkeypatch.setattr(AttackRun, "_search_chunk", interrupted)
    result = attack(probes, tmp_path / "out")
    assert result.exit_code == 130
    assert "interrupted after 3/3 sentences; rerun with --resume" in result.output
    assert not (tmp_path / "out" / "adversarial.conllu").exists()


@pytest.mark.needs("spacy-model", "glove")
def test_a_second_run_into_a_locked_directory_is_refused(
    tmp_path: Path, probes: tuple[Path, Path], loads: list[AttackConfig]
) -> None:
    out = tmp_path / "out"
    with locked_directory(out, "brittle attack"):
        result = attack(probes, out, "--overwrite")
        multi = attack(probes, out, "--overwrite", "--budget", "1,2")
    assert result.exit_code == 2
    line = one_error_line(result.output)
    assert f"{out} is in use by brittle attack (pid {os.getpid()}" in line
    assert f"{out} is in use by" in one_error_line(multi.output)
    assert loads == []  # refused before any model loads
    assert not (out / "results.jsonl").exists()
    assert attack(probes, out).exit_code == 0  # released


@pytest.mark.needs("spacy-model", "glove")
def test_a_killed_runs_lock_is_taken_over(
    tmp_path: Path, probes: tuple[Path, Path], loads: list[AttackConfig]
) -> None:
    out = tmp_path / "out"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import sys, time
                from pathlib import Path
                from brittle.engine.core.lock import locked_directory
                with locked_directory(Path({str(out)!r}), "brittle attack"):
                    print("locked", flush=True)
                    time.sleep(60)
                """
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        refused = attack(probes, out)
        assert refused.exit_code == 2 and f"pid {holder.pid}" in refused.output
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert (out / LOCK_NAME).exists()  # the stale lock file stays behind
    result = attack(probes, out)
    assert result.exit_code == 0, result.output


def test_perturb_and_compare_progress_in_logs_and_quiet(tmp_path: Path) -> None:
    base = ["--method", "shuffle", "--parser", "gold", "--out"]
    logged = CliRunner().invoke(main, ["perturb", str(TREEBANK), *base, str(tmp_path / "a")])
    assert logged.exit_code == 0, logged.output
    assert "perturb shuffle tau=1: 3/3" in logged.output
    quiet = CliRunner().invoke(
        main, ["perturb", str(TREEBANK), *base, str(tmp_path / "b"), "--quiet"]
    )
    assert quiet.exit_code == 0 and "tau=1: 3/3" not in quiet.output
    compare = CliRunner().invoke(
        main,
        [
            "compare-methods",
            str(TREEBANK),
            "--methods",
            "shuffle",
            "-t",
            "1",
            "--parser",
            "gold",
            "--out",
            str(tmp_path / "c"),
        ],
    )
    assert compare.exit_code == 0, compare.output
    assert "shuffle: " in compare.output


@pytest.mark.needs("spacy-model", "glove")
def test_probes_of_different_representations_are_warned_about(
    tmp_path: Path, loads: list[AttackConfig]
) -> None:
    one = make_probe(tmp_path / "one", model="model-a")
    two = make_probe(tmp_path / "two", "pos", model="model-b")
    result = attack((one, two), tmp_path / "out")
    assert result.exit_code == 0, result.output
    warning = [line for line in result.output.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1 and "epsilon is measured in the first one" in warning[0]
    assert "model-a" in warning[0] and "model-b" in warning[0]


@pytest.mark.needs("spacy-model", "glove")
def test_device_reaches_the_models_and_a_missing_one_is_refused_first(
    tmp_path: Path, probes: tuple[Path, Path], loads: list[AttackConfig]
) -> None:
    devices.clear()
    result = attack(probes, tmp_path / "cpu", "--device", "CPU")
    assert result.exit_code == 0, result.output
    assert devices == ["cpu"]  # normalised, then handed to the model loads
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    result = attack(probes, tmp_path / "cuda", "--device", "cuda")
    assert result.exit_code == 2
    assert "cuda" in one_error_line(result.output)
    assert devices == ["cpu"] and len(loads) == 1  # refused before anything loaded


@pytest.mark.needs("spacy-model", "glove")
def test_a_multi_budget_run_sweeps_what_a_killed_run_left_of_its_index(
    tmp_path: Path, probes: tuple[Path, Path], loads: list[AttackConfig]
) -> None:
    out = tmp_path / "out"
    (out / "plots").mkdir(parents=True)
    left = [out / ".report.html.abcd1234.tmp", out / "plots" / ".drop_vs_budget.png.x1y2z3w4.tmp"]
    kept = [out / "notes.txt", out / "plots" / ".other.png.abcd1234.tmp"]
    for path in left + kept:
        path.write_text("x")
    result = attack(probes, out, "--budget", "1,2")
    assert result.exit_code == 0, result.output
    assert not any(p.exists() for p in left)
    assert all(p.exists() for p in kept)  # only the index's own temporaries go


def test_a_malformed_ray_address_is_refused_while_parsing(
    tmp_path: Path, probes: tuple[Path, Path], loads: list[AttackConfig]
) -> None:
    for address in ("garbage", "256.1.1.1:99999", "host:0"):
        result = attack(probes, tmp_path / "out", "--ray", address)
        assert result.exit_code == 2
        assert "--ray" in one_error_line(result.output)
    assert loads == [] and not (tmp_path / "out").exists()
