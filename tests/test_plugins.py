"""Components added from outside brittle, by registration alone.

``tests/plugin_example/brittle_typos.py`` is CONTRIBUTING.md's worked example: one file
that registers a generator (``typo``) and a constraint (``keep-capitalised``). Here it
is found the way a user's package is (the ``brittle.components`` entry-point group of
an installed distribution), listed by ``brittle list`` and used by ``brittle attack``
and ``brittle perturb`` without any change to brittle.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from repr_models import tiny_bert

import brittle.engine.core.registry as registry
from brittle.cli.main import main
from brittle.engine.core.conllu import read_conllu
from brittle.search.constraints import CONSTRAINTS
from brittle.search.generators.base import GENERATORS, SubstitutionGenerator
from brittle.search.strategies.base import STRATEGIES

EXAMPLE = Path(__file__).resolve().parent / "plugin_example"
TREEBANK = Path(__file__).resolve().parents[1] / "data" / "default.conllu"


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The example installed as a distribution that announces it as an entry point."""
    site = tmp_path / "site"
    info = site / "brittle_typos-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: brittle-typos\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[brittle.components]\ntypos = brittle_typos\n")
    (site / "brittle_typos.py").write_text((EXAMPLE / "brittle_typos.py").read_text())
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(registry, "_entry_points_loaded", False)
    yield site
    GENERATORS.unregister("typo")
    CONSTRAINTS.unregister("keep-capitalised")
    STRATEGIES.unregister("first-k")
    sys.modules.pop("brittle_typos", None)


def test_an_entry_point_registers_its_components(installed: Path) -> None:
    assert "typo" not in GENERATORS
    typo = GENERATORS.get("typo")  # the miss loads the entry points
    assert issubclass(typo, SubstitutionGenerator)
    assert typo.family == "substitution" and typo.method == "typo"
    assert "keep-capitalised" in CONSTRAINTS.names() and "first-k" in STRATEGIES.names()
    sentence = read_conllu(TREEBANK)[0]
    (table,) = typo(top_k=2).candidates([sentence])
    for position, options in table:
        word = sentence.forms[position]
        for form, lemma in options:
            assert sorted(form) == sorted(word) and form != word and lemma == "_"
    listing = CliRunner().invoke(main, ["list", "generators"])
    assert listing.exit_code == 0 and "typo" in listing.output


def test_a_broken_plugin_is_reported_not_fatal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    info = site / "broken-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[brittle.components]\nbroken = no_such_module\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(registry, "_entry_points_loaded", False)
    monkeypatch.setattr(registry, "PLUGIN_ERRORS", [])
    assert "copos" in GENERATORS.names()
    assert registry.PLUGIN_ERRORS and "no_such_module" in registry.PLUGIN_ERRORS[0][0]


@pytest.mark.needs("spacy-model", "glove")
def test_attack_and_perturb_run_with_plugin_components(installed: Path, tmp_path: Path) -> None:
    bert = tiny_bert(tmp_path / "bert")
    probe = tmp_path / "probe"
    trained = CliRunner().invoke(
        main,
        [
            "train-probe",
            str(TREEBANK),
            "--dev",
            str(TREEBANK),
            "--model",
            str(bert),
            "--task",
            "distance",
            "--epochs",
            "2",
            "--quiet",
            "--out",
            str(probe),
        ],
    )
    assert trained.exit_code == 0, trained.output
    out = tmp_path / "attack"
    result = CliRunner().invoke(
        main,
        [
            "attack",
            str(TREEBANK),
            "--probe",
            str(probe),
            "--method",
            "typo",
            "--search",
            "first-k",
            "--budget",
            "2",
            "--parser",
            "gold",
            "--constraint",
            "keep-capitalised",
            "--constraint",
            "syntax:0.5",
            "--limit",
            "6",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 6 and any(r["success"] for r in rows)
    for row in rows:
        assert row["method"] == "typo"
        for before, after in zip(row["original_words"], row["perturbed_words"], strict=True):
            assert sorted(before) == sorted(after) and not before[:1].isupper()
    assert max(r["hamming"] for r in rows) == 1  # first-k makes single substitutions
    config = json.loads((out / "config.json").read_text())
    assert config["constraints"] == ["keep-capitalised", "syntax:0.5"]
    perturbed = tmp_path / "typos.conllu"
    result = CliRunner().invoke(
        main,
        [
            "perturb",
            str(TREEBANK),
            "--method",
            "typo",
            "--parser",
            "gold",
            "--budget",
            "1",
            "--limit",
            "5",
            "--out",
            str(perturbed),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Perturbation=typo" in perturbed.read_text()
