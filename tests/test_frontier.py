"""``brittle frontier``: damage against validity, one row per preset or generator."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from test_reports_quality import row

from brittle.cli.main import main
from brittle.engine.attack import AttackConfig
from brittle.engine.core.errors import ConfigError
from brittle.engine.frontier import (
    _box,
    _overlaps,
    entries_of,
    frontier_row,
    markdown_report,
    place_labels,
    write_frontier,
)
from brittle.engine.reports.report import summarize
from brittle.engine.reports.results import RowValidity, TaskScores

TREEBANK = Path(__file__).resolve().parents[1] / "data" / "default.conllu"
BASE = AttackConfig(treebank=str(TREEBANK), probes=("p",), budget=2, parser="gold")


@pytest.mark.needs("spacy-model", "glove")
def test_entries_take_each_preset_and_method_with_the_base_settings() -> None:
    entries = entries_of(BASE, ["tree", "meaning"], ["random"])
    assert [e.name for e in entries] == ["tree", "meaning", "random"]
    tree, meaning, plain = entries
    assert tree.config.method == "jabberwocky" and tree.level == "tree"
    assert tree.config.generator_options == ("stems=syllable", "slots=regular")
    assert meaning.config.constraints[-1] == "judged:meaning" and meaning.level == "meaning"
    assert plain.config.method == "random" and plain.level is None
    assert plain.config.constraints == () and all(e.config.budget == 2 for e in entries)
    with pytest.raises(ConfigError, match="given twice"):
        entries_of(BASE, ["tree", "tree"], [])
    with pytest.raises(ConfigError, match="at least one"):
        entries_of(BASE, [], [])
    with pytest.raises(ConfigError, match="unknown validity preset"):
        entries_of(BASE, ["nope"], [])


def test_rows_set_the_drop_beside_validity(tmp_path: Path) -> None:
    rows = [
        row(0, validity=RowValidity(True, True, False)),  # pos.acc drop 0.5
        row(1, validity=RowValidity(False, False, False), damage=0.3,
            tasks={"pos.acc": TaskScores(1.0, 0.7, 0.3)}, surprisal_increase=2.0),
    ]  # fmt: skip
    summary = summarize(rows, config={}, versions={}, objective=["pos.acc"])
    entry = entries_of(BASE, ["grammatical"], [])[0]
    result = frontier_row(entry, summary)
    assert result.changed == 2 and result.drop == 0.4
    assert result.valid == {"tree": 0.5, "grammatical": 0.5, "meaning": 0.0}
    assert result.valid_drop["tree"] == 0.25  # (0.5 + 0) / 2
    assert result.surprisal_increase == 2.0
    plain = frontier_row(replace(entry, level=None), summarize([row(0)], config={}, versions={}))
    assert plain.valid["tree"] is None  # not graded: no share is made up
    md = markdown_report([result, plain], "settings")
    assert "| grammatical | grammatical | 2/2 | 0.400 | 50% | 50% | 0% | 0.250 | +2.00 |" in md
    assert "| grammatical | - | 1/1 | 0.500 | – | – | – | – | – |" in md
    paths = write_frontier([result], "settings", tmp_path)
    assert [p.name for p in paths] == [
        "frontier.json", "frontier.md", "frontier.png", "frontier.html"
    ]  # fmt: skip
    saved = json.loads(paths[0].read_text())
    assert saved["rows"][0]["valid"]["tree"] == 0.5
    assert paths[2].read_bytes().startswith(b"\x89PNG")
    page = paths[3].read_text()
    assert "<table" in page and "Content-Security-Policy" in page and "<script" not in page


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def test_mistakes_stop_before_anything_loads(tmp_path: Path) -> None:
    probe = tmp_path / "p"
    result = run(
        "frontier", TREEBANK, "--probe", probe, "--presets", "nope", "--out", tmp_path / "o"
    )
    assert result.exit_code == 2 and "unknown validity preset 'nope'" in result.output
    result = run("frontier", TREEBANK, "--probe", probe, "--out", TREEBANK.parent)
    assert result.exit_code == 2 and "holds the input TREEBANK" in result.output
    result = run("frontier", TREEBANK, "--probe", probe, "--out", tmp_path / "o")
    assert result.exit_code == 2 and "train-probe" in result.output  # no such probe
    assert not (tmp_path / "o").exists()


@pytest.mark.needs("spacy-model", "glove")
@pytest.mark.slow
def test_frontier_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, static_probe: Path
) -> None:
    monkeypatch.setenv("BRITTLE_HOME", str(tmp_path / "home"))
    probe = static_probe
    out = tmp_path / "frontier"
    result = run(
        "frontier", TREEBANK, "--probe", probe, "--presets", "tree", "--methods", "random",
        "--limit", "3", "--quiet", "--out", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    saved = json.loads((out / "frontier.json").read_text())
    assert [r["name"] for r in saved["rows"]] == ["tree", "random"]
    tree, plain = saved["rows"]
    assert tree["valid"]["tree"] is not None and plain["method"] == "random"
    assert (out / "tree" / "summary.json").exists() and (out / "random" / "summary.json").exists()
    adversarial = (out / "random" / "adversarial.conllu").read_text()
    assert "Perturbation=random" in adversarial and "Perturbation=jabberwocky" not in adversarial


def test_names_of_points_that_sit_together_stand_apart() -> None:
    """Two points a few points apart (coco and meaning: the same drop, nearly the same
    validity) get name boxes that neither meet each other nor cover the other point,
    and a name by the right edge goes to the left of its point."""
    points = [(100.0, 50.0), (112.0, 48.0), (300.0, 200.0)]
    names = ["meaning", "coco", "grammatical"]
    bounds = (0.0, 0.0, 305.0, 300.0)
    offsets = place_labels(points, names, bounds)
    boxes = [_box(x, y, *o, n) for (x, y), o, n in zip(points, offsets, names, strict=True)]
    assert not _overlaps(boxes[0], boxes[1])
    for k, (x, y) in enumerate(points):
        dot = (x - 3, y - 3, x + 3, y + 3)
        assert not any(_overlaps(box, dot) for j, box in enumerate(boxes) if j != k)
    assert offsets[2][0] < 0  # right-aligned, to the left of the point
    assert boxes[2][2] <= bounds[2]
    assert place_labels(points, names, bounds) == offsets  # the same every time
    # alone, a name goes right above its point
    assert place_labels([(10.0, 10.0)], ["tree"], bounds) == [(4, 4)]
