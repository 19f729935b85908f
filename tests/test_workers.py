"""Sharded attacks on local worker processes: the same files as one process.

Real probes (linear, trained for two epochs on ``random:16`` word vectors, so no model
file is needed), the real Jabberwocky generator and gold parser, real ``spawn``
processes. Chunks of 4 sentences make 3 shards of the 12 sentences attacked.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from brittle.cli.main import main
from brittle.engine.attack import AttackConfig, run_attack
from brittle.engine.reports.results import read_rows
from brittle.engine.runs.shards import FAIL_SHARD_ENV, LocalProcesses, ShardFailed

TREEBANK = Path(__file__).resolve().parents[1] / "data" / "default.conllu"
SENTENCES = 12
CHUNK = 4
#: Every file of an attack that must not depend on how it ran (results.jsonl apart:
#: its ``seconds`` are wall times).
SAME_BYTES = ("adversarial.conllu", "summary.json", "summary.md", "config.json", "inputs.json")


def _run(*args: str) -> None:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def probes(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, ...]:
    root = tmp_path_factory.mktemp("worker-probes")
    previous = os.environ.get("BRITTLE_HOME")
    os.environ["BRITTLE_HOME"] = str(root / "home")
    try:
        out = []
        for task in ("distance", "pos"):
            _run(
                "train-probe", str(TREEBANK), "--dev", str(TREEBANK), "--out",
                str(root / task), "--model", "random:16", "--task", task, "--epochs", "2",
                "--threads", "1", "--quiet",
            )  # fmt: skip
            out.append(str(root / task))
        return tuple(out)
    finally:
        if previous is None:
            os.environ.pop("BRITTLE_HOME", None)
        else:
            os.environ["BRITTLE_HOME"] = previous


def config(probes: tuple[str, ...]) -> AttackConfig:
    return AttackConfig(
        treebank=str(TREEBANK),
        probes=probes,
        method="neighbour-flip",
        search="sample",
        budget=2,
        candidates=6,
        parser="gold",
        seed=3,
        limit=SENTENCES,
    )


def timeless(path: Path) -> list[bytes]:
    """The lines of ``results.jsonl`` without their wall times."""
    lines = []
    for line in path.read_bytes().splitlines():
        row = json.loads(line)
        row.pop("seconds")
        lines.append(json.dumps(row, sort_keys=True).encode())
    return lines


def assert_same_files(a: Path, b: Path) -> None:
    for name in SAME_BYTES:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    assert timeless(a / "results.jsonl") == timeless(b / "results.jsonl")
    indices = [row.index for row in read_rows(b / "results.jsonl")]
    assert indices == list(range(SENTENCES))


@pytest.fixture(scope="module")
def one_process(probes: tuple[str, ...], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("one") / "out"
    run_attack(config(probes), out, chunk_size=CHUNK)
    return out


@pytest.fixture(scope="module")
def executor() -> Iterator[LocalProcesses]:
    """Two worker processes shared by the tests of this module (they keep their models
    between runs, as they do between the budgets of one command)."""
    with LocalProcesses(2) as workers:
        yield workers


def test_two_workers_write_the_files_of_one_process(
    probes: tuple[str, ...], one_process: Path, tmp_path: Path, executor: LocalProcesses
) -> None:
    seen: list[int] = []
    run_attack(
        config(probes),
        tmp_path,
        chunk_size=CHUNK,
        executor=executor,
        on_sentence=lambda progress, total: seen.append(progress.done),
    )
    assert_same_files(one_process, tmp_path)
    # The bar moves a shard at a time, never backwards, to the end.
    assert seen[0] == 0 and seen[-1] == SENTENCES and seen == sorted(seen)


def test_resume_with_workers_appends_the_missing_rows_in_order(
    probes: tuple[str, ...], one_process: Path, tmp_path: Path, executor: LocalProcesses
) -> None:
    # Six rows and a torn seventh, as a crash leaves them: the second chunk (4-7) is
    # searched again whole, and only rows 6 and 7 of it are appended.
    lines = (one_process / "results.jsonl").read_bytes().splitlines(keepends=True)
    (tmp_path / "results.jsonl").write_bytes(b"".join(lines[:6]) + lines[6][:20])
    run_attack(config(probes), tmp_path, chunk_size=CHUNK, executor=executor, resume=True)
    assert_same_files(one_process, tmp_path)


@pytest.mark.parametrize("how", ["raise", "exit"])
def test_a_shard_that_fails_once_is_retried_without_duplicates(
    probes: tuple[str, ...],
    one_process: Path,
    tmp_path: Path,
    executor: LocalProcesses,
    monkeypatch: pytest.MonkeyPatch,
    how: str,
) -> None:
    # Shard 1 (sentences 4-7) computes its rows, then raises or kills its process
    # (which breaks the pool: a new one takes over).
    monkeypatch.setenv(FAIL_SHARD_ENV, f"1:{how}")
    run_attack(config(probes), tmp_path, chunk_size=CHUNK, executor=executor)
    assert_same_files(one_process, tmp_path)


def test_a_shard_that_always_fails_names_its_sentences(
    probes: tuple[str, ...],
    tmp_path: Path,
    executor: LocalProcesses,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from brittle.engine.runs import shards

    monkeypatch.setattr(shards, "ATTEMPTS", 1)
    monkeypatch.setenv(FAIL_SHARD_ENV, "2")
    with pytest.raises(ShardFailed, match=r"shard 2 \(sentences 8-11\) failed 1 times"):
        run_attack(config(probes), tmp_path, chunk_size=CHUNK, executor=executor)
    # The shards before it are written, in order; nothing of it.
    assert [row.index for row in read_rows(tmp_path / "results.jsonl")] == list(range(8))


def test_cli_workers_match_one_process(probes: tuple[str, ...], tmp_path: Path) -> None:
    args = [
        "attack", str(TREEBANK), "--probe", probes[0], "--probe", probes[1], "--method",
        "neighbour-flip", "--parser", "gold", "--search", "sample", "--budget", "1,2",
        "--candidates", "6", "--seed", "3", "--limit", "20", "--quiet",
    ]  # fmt: skip
    _run(*args, "--out", str(tmp_path / "one"))
    _run(*args, "--out", str(tmp_path / "two"), "--workers", "2")
    for tau in ("tau=1", "tau=2"):
        a, b = tmp_path / "one" / tau, tmp_path / "two" / tau
        for name in SAME_BYTES:
            assert (a / name).read_bytes() == (b / name).read_bytes(), (tau, name)
        assert timeless(a / "results.jsonl") == timeless(b / "results.jsonl")


def test_a_bad_treebank_fails_before_any_worker_starts(
    probes: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tword\n\n")

    def no_workers(*args: object, **kwargs: object) -> None:
        raise AssertionError("a worker started")

    monkeypatch.setattr(LocalProcesses, "__init__", no_workers)
    result = CliRunner().invoke(
        main,
        ["attack", str(bad), "--probe", probes[0], "--out", str(tmp_path / "o"), "--workers", "2"],
    )
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: {bad}:1"), result.output


def test_perturb_with_workers_writes_the_files_of_one_process(
    tmp_path: Path, executor: LocalProcesses
) -> None:
    from brittle.engine.perturb.perturb_run import (
        PerturbConfig,
        perturb_treebank,
        write_perturb_outputs,
    )

    settings = PerturbConfig(
        method="neighbour-flip",
        budget=2,
        candidates=6,
        parser="gold",
        seed=5,
        limit=SENTENCES,
        chunk_size=CHUNK,
        quality=False,
    )
    done: list[int] = []
    one = perturb_treebank(TREEBANK, settings)
    two = perturb_treebank(TREEBANK, settings, executor=executor, progress=done.append)
    assert done == [CHUNK] * (SENTENCES // CHUNK)
    for name, result in (("one", one), ("two", two)):
        write_perturb_outputs(result, tmp_path / f"{name}.conllu", report=tmp_path / f"{name}.json")
    for suffix in (".conllu", ".json"):
        assert (tmp_path / f"one{suffix}").read_bytes() == (tmp_path / f"two{suffix}").read_bytes()
    assert (tmp_path / "one.conllu").read_text().count("# sent_id") == SENTENCES


def test_cli_perturb_workers_match_one_process(tmp_path: Path) -> None:
    args = [
        "perturb", str(TREEBANK), "--method", "shuffle", "--budget", "3", "--candidates", "4",
        "--parser", "gold", "--no-quality", "--limit", "70", "--quiet",
    ]  # fmt: skip
    _run(*args, "--out", str(tmp_path / "one.conllu"), "--report", str(tmp_path / "one.json"))
    _run(
        *args, "--out", str(tmp_path / "two.conllu"), "--report", str(tmp_path / "two.json"),
        "--workers", "2",
    )  # fmt: skip
    for suffix in (".conllu", ".json"):
        assert (tmp_path / f"one{suffix}").read_bytes() == (tmp_path / f"two{suffix}").read_bytes()
