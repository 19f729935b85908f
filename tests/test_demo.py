"""`brittle demo` end to end with the real offline models (a few sentences)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from brittle.cli.main import main
from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.resources import check_all
from brittle.engine.reports.results import read_rows


@pytest.mark.slow
def test_demo_trains_attacks_and_reports(tmp_path: Path, monkeypatch) -> None:
    missing = [s.name for s in check_all() if s.state == "missing"]
    if {"encoder", "spacy", "wordnet"} & set(missing):
        pytest.skip(f"offline resources missing: {missing}")
    monkeypatch.setenv("BRITTLE_HOME", str(tmp_path / "home"))
    out = tmp_path / "demo"
    result = CliRunner().invoke(main, ["demo", "--out", str(out), "--limit", "4"])
    assert result.exit_code == 0, result.output
    assert "Worst-case drop per task" in result.output
    lines = result.output.splitlines()
    trained = [line for line in lines if line.startswith("trained ")]
    assert len(trained) == 2, result.output  # one line per probe trained
    assert not any(line.lstrip().startswith("epoch ") for line in lines)  # only with --verbose
    assert "━" not in result.stderr  # not a terminal: plain lines, no bars
    summary = json.loads((out / "summary.json").read_text())
    assert summary["sentences"] == 4
    assert {"distance.uuas", "pos.pos_acc"} <= set(summary["tasks"])
    assert (tmp_path / "home" / "demo").is_dir()
    adversarial = read_conllu(out / "adversarial.conllu")
    assert len(adversarial) == 4
    changed = [t for s in adversarial for t in s.words if "Perturbation=copos" in t.misc]
    assert changed, "the demo should perturb at least one word"
    # The tree preset beside it: nonwords in every sentence, gold columns kept.
    assert "Mean worst-case drop by validity preset" in result.output
    tree = json.loads((out / "tree" / "summary.json").read_text())
    assert tree["sentences"] == 4 and tree["config"]["method"] == "jabberwocky"
    nonwords = read_conllu(out / "tree" / "adversarial.conllu")
    for sentence in nonwords:  # every attacked sentence offers a slot to a nonword
        assert any("Perturbation=jabberwocky" in t.misc for t in sentence.words)
    # Both attacks grade what they kept, and the table sets the shares side by side.
    assert tree["validity"]["graded"] == 4 and tree["validity"]["shares"]["tree"] == 1.0
    assert summary["validity"]["graded"] == sum(1 for s in adversarial if any(
        "Perturbation=copos" in t.misc for t in s.words))  # fmt: skip
    assert "validity of the" in result.output
    row = next(line for line in lines if "graded tree-valid" in line)
    assert row.rstrip().endswith("100% │") or row.rstrip().endswith("100%"), row
    assert any("graded meaning kept" in line for line in lines)
    # docs/substitutions.md's reading of the demo holds each swap it keeps, as kept: a
    # demo that keeps another word needs that table read again.
    reading = (Path(__file__).resolve().parents[1] / "docs" / "substitutions.md").read_text()
    swaps = [
        (old, new)
        for row in read_rows(out / "results.jsonl")
        for old, new in zip(row.original_words, row.perturbed_words, strict=True)
    ]
    assert swaps
    for old, new in swaps:
        assert f"**{old}**" in reading and f"| {new} |" in reading, (old, new)
    # A second run reuses the cached probes.
    again = CliRunner().invoke(main, ["demo", "--out", str(out), "--limit", "4"])
    assert again.exit_code == 0, again.output
    assert "reusing cached probes" in again.output
    assert json.loads((out / "summary.json").read_text())["tasks"] == summary["tasks"]
