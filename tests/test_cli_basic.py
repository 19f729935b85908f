"""The CLI skeleton, run in-process with click's runner."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from brittle import __version__
from brittle.cli.main import main

from support import FIXTURES


def test_version() -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert __version__ in result.output


def test_help_lists_commands() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    for command in ("stats", "resources", "list", "demo"):
        assert command in result.output


def test_stats_on_fixture(tmp_path: Path) -> None:
    out = tmp_path / "stats.json"
    result = CliRunner().invoke(
        main, ["stats", str(FIXTURES / "mwt_empty.conllu"), "--json", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "sentences" in result.output
    data = json.loads(out.read_text())
    assert data["sentences"] == 3
    assert data["tokens"] == 15
    assert data["multiword_tokens"] == 1
    assert data["empty_nodes"] == 1
    assert data["upos_counts"]["PUNCT"] == 3
    assert sum(data["length_histogram"].values()) == 3


def test_bad_input_prints_message_without_traceback_and_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tA\ta\tX\tX\t_\t5\tdep\t_\t_\n\n")
    result = CliRunner().invoke(main, ["stats", str(bad)])
    assert result.exit_code == 2
    assert f"{bad}:1: HEAD 5 out of range" in result.output
    assert "Traceback" not in result.output


def test_skip_invalid_reports_skipped(tmp_path: Path) -> None:
    text = (FIXTURES / "mwt_empty.conllu").read_text()
    bad = tmp_path / "mixed.conllu"
    bad.write_text("1\tA\ta\tX\tX\t_\t5\tdep\t_\t_\n\n" + text)
    result = CliRunner().invoke(main, ["stats", "--skip-invalid", str(bad)])
    assert result.exit_code == 0, result.output
    assert "1 invalid sentence(s) skipped" in result.output


def test_missing_file_is_clean_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["stats", str(tmp_path / "none.conllu")])
    assert result.exit_code == 2
    assert "file not found" in result.output


def test_list_runs() -> None:
    result = CliRunner().invoke(main, ["list"])
    assert result.exit_code == 0, result.output


def test_resources_lists_every_resource_and_exit_status(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("BRITTLE_HOME", str(tmp_path))
    result = CliRunner().invoke(main, ["resources", "--json"])
    data = json.loads(result.output)
    names = {d["name"] for d in data}
    assert names == {"wordnet", "encoder", "glove", "spacy", "causal-lm"}
    missing = [d for d in data if d["state"] == "missing"]
    assert result.exit_code == (1 if missing else 0)
    for d in missing:
        assert d["fix"]
