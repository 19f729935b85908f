"""The CLI skeleton, run in-process with click's runner."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
from click.testing import CliRunner

from brittle import __version__
from brittle.cli.main import main
from brittle.data import default_treebank_path
from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.sentence import Sentence
from brittle.scorers.parsers.base import PARSERS
from brittle.search.generators.base import GENERATORS, SubstitutionGenerator, SubstitutionTable

from support import FIXTURES

#: Libraries that ``--help`` of a command must not import (seconds each).
HEAVY = ("torch", "transformers", "spacy", "stanza", "matplotlib")


@dataclass(frozen=True, kw_only=True)
class Blicket(SubstitutionGenerator):
    """A test generator: ``blicket`` at every eligible position."""

    method: ClassVar[str] = "test-blicket"

    def candidates(
        self, sentences: Sequence[Sentence], *, top_k: int | None = None
    ) -> list[SubstitutionTable]:
        return [
            SubstitutionTable.from_mapping(
                s.sent_id,
                self.method,
                len(s),
                {i: (("blicket", "blicket"),) for i in self.eligibility.positions(s)},
            )
            for s in sentences
        ]


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
    assert names == {"wordnet", "encoder", "glove", "spacy", "causal-lm", "ud-parser"}
    missing = [d for d in data if d["state"] == "missing"]
    assert result.exit_code == (2 if missing else 0)
    for d in missing:
        assert d["fix"]


@pytest.mark.parametrize("command", ["perturb", "compare-methods"])
def test_help_lists_every_registered_generator_and_parser(command: str) -> None:
    result = CliRunner().invoke(main, [command, "--help"], terminal_width=400)
    assert result.exit_code == 0, result.output
    for name in (*GENERATORS.names(), *PARSERS.names()):
        assert name in result.output


def test_a_newly_registered_generator_needs_no_cli_edit(tmp_path: Path) -> None:
    GENERATORS.register("test-blicket", help="test generator")(Blicket)
    try:
        help_text = CliRunner().invoke(main, ["perturb", "--help"], terminal_width=400).output
        assert "test-blicket" in help_text
        out = tmp_path / "blicket.conllu"
        args = [
            "perturb", str(default_treebank_path()), "--method", "test-blicket",
            "--parser", "gold", "--limit", "3", "--out", str(out),
        ]  # fmt: skip
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        assert any("blicket" in s.forms for s in read_conllu(out))
    finally:
        GENERATORS.unregister("test-blicket")
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "unknown generator 'test-blicket'" in result.output


def test_perturb_and_compare_cli_modules_import_no_heavy_library() -> None:
    code = "import brittle.cli.perturb, brittle.cli.compare_methods"
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    modules = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()}
    loaded = sorted(m for m in modules if m.split(".")[0] in HEAVY)
    assert not loaded, f"importing the CLI loaded {loaded[:5]}"


def test_compare_methods_rejects_an_unknown_method_in_the_list(tmp_path: Path) -> None:
    args = [
        "compare-methods", str(default_treebank_path()), "--methods", "shuffle,nope",
        "--out", str(tmp_path),
    ]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "unknown generator 'nope'" in result.output
    assert not any(tmp_path.iterdir())
