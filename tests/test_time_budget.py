"""``attack --time-budget``: a sentence's search stops scoring when its time runs out,
and the rows and summary say which ran out; without it nothing is written about it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from brittle.cli.main import main
from brittle.data import bench_tables_path, default_treebank_path

# The bench's recorded coPOS tables of the built-in treebank: real candidates, no model
COMMON = ["--method", "recorded", "-o", f"tables={bench_tables_path()}", "--search", "beam",
          "-b", "5", "--budget", "2", "--parser", "gold", "--constraint", "budget",
          "--limit", "12", "--no-grade", "--quiet"]  # fmt: skip


def run(static_probe: Path, out: Path, home: Path, *extra: str):
    return CliRunner(env={"BRITTLE_HOME": str(home)}).invoke(
        main,
        ["attack", str(default_treebank_path()), "--probe", str(static_probe), *COMMON,
         "--out", str(out), *extra],
    )  # fmt: skip


def rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").open()]


def test_a_spent_time_budget_stops_every_search_and_is_counted(
    tmp_path: Path, static_probe: Path
) -> None:
    result = run(static_probe, tmp_path / "timed", tmp_path / "home", "--time-budget", "1e-9")
    assert result.exit_code == 0, result.output
    found = rows(tmp_path / "timed")
    searched = [r for r in found if r["eligible_positions"] or r["evaluated"]]
    assert searched and all(r["time_budget_hit"] is True for r in searched)
    assert all(r["queries"] == 1 and not r["positions"] for r in searched)
    summary = json.loads((tmp_path / "timed" / "summary.json").read_text())
    assert summary["time_budget_hits"] == len(searched)
    assert summary["config"]["time_budget"] == 1e-9
    assert "stopped at the time budget" in (tmp_path / "timed" / "summary.md").read_text()


def test_an_ample_or_absent_time_budget_changes_no_result(
    tmp_path: Path, static_probe: Path
) -> None:
    plain = run(static_probe, tmp_path / "plain", tmp_path / "home")
    ample = run(static_probe, tmp_path / "ample", tmp_path / "home", "--time-budget", "3600")
    assert plain.exit_code == 0 and ample.exit_code == 0, plain.output + ample.output
    drop = ("seconds", "time_budget_hit")
    assert [{k: v for k, v in r.items() if k not in drop} for r in rows(tmp_path / "plain")] == [
        {k: v for k, v in r.items() if k not in drop} for r in rows(tmp_path / "ample")
    ]
    assert all("time_budget_hit" not in r for r in rows(tmp_path / "plain"))
    assert all(r["time_budget_hit"] is False for r in rows(tmp_path / "ample"))
    summary = json.loads((tmp_path / "plain" / "summary.json").read_text())
    assert "time_budget_hits" not in summary and "time_budget" not in summary["config"]
    assert (tmp_path / "plain" / "adversarial.conllu").read_bytes() == (
        tmp_path / "ample" / "adversarial.conllu"
    ).read_bytes()


def test_a_time_budget_must_be_positive(tmp_path: Path, static_probe: Path) -> None:
    result = run(static_probe, tmp_path / "bad", tmp_path / "home", "--time-budget", "0")
    assert result.exit_code == 2
    assert "--time-budget must be a positive number of seconds" in result.output
    assert "Traceback" not in result.output


def test_the_python_api_takes_the_time_budget(
    tmp_path: Path, static_probe: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import brittle

    monkeypatch.setenv("BRITTLE_HOME", str(tmp_path / "home"))
    found = brittle.attack(
        default_treebank_path(),
        [static_probe],
        method="recorded",
        generator_options=[f"tables={bench_tables_path()}"],
        search="beam",
        candidates=5,
        budget=2,
        parser="gold",
        constraints=["budget"],
        limit=12,
        grade=False,
        time_budget=1e-9,
    )
    searched = [r for r in found.rows if r.eligible_positions]
    assert searched and all(r.time_budget_hit for r in searched)
    assert found.summary["time_budget_hits"] == len(searched)


def test_anytime_rows_record_how_the_best_drop_grew(tmp_path: Path, static_probe: Path) -> None:
    plain = run(static_probe, tmp_path / "plain", tmp_path / "home")
    traced = run(static_probe, tmp_path / "traced", tmp_path / "home", "--anytime")
    assert plain.exit_code == 0 and traced.exit_code == 0, plain.output + traced.output
    assert all("anytime" not in r for r in rows(tmp_path / "plain"))
    found = rows(tmp_path / "traced")
    assert [{k: v for k, v in r.items() if k not in ("seconds", "anytime")} for r in found] == [
        {k: v for k, v in r.items() if k != "seconds"} for r in rows(tmp_path / "plain")
    ]
    improved = [r for r in found if r["anytime"]]
    assert improved
    for r in improved:
        drops = [d for _, _, d in r["anytime"]]
        assert drops == sorted(drops) and len(set(drops)) == len(drops)
        assert [q for q, _, _ in r["anytime"]] == sorted(q for q, _, _ in r["anytime"])
        assert r["anytime"][-1][0] <= r["queries"]
        if r["success"]:
            assert drops[-1] == pytest.approx(r["damage"])
    config = json.loads((tmp_path / "traced" / "config.json").read_text())
    assert config["anytime"] is True
    assert "anytime" not in json.loads((tmp_path / "plain" / "config.json").read_text())
