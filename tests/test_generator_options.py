"""Every generator option from the command line, typed; reorderings honour the budget."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_attack import AcceptAll, WordHashEvaluator

from brittle.cli.main import main
from brittle.engine.attack import AttackComponents, AttackConfig, build_generator, run_attack
from brittle.engine.attack.assembly import LazyParser
from brittle.engine.core.errors import ConfigError
from brittle.search.generators import CoCO, CoPOS, NeighbourFlip, PhraseShuffle
from brittle.search.generators.base import GENERATORS
from brittle.search.generators.options import option_help, parse_options, shorthand_options
from brittle.search.strategies import SampleSearch

from support import FIXTURES

TREEBANK = FIXTURES / "mwt_empty.conllu"
DEFAULT = Path(__file__).resolve().parents[1] / "data" / "default.conllu"


def test_values_are_converted_by_the_fields_types() -> None:
    assert parse_options(CoCO, ["kind=masked", "model=some/dir", "rerank=yes", "batch_size=4"]) == {
        "kind": "masked",
        "model": "some/dir",
        "rerank": True,
        "batch_size": 4,
    }
    assert parse_options(CoCO, ["model=none"]) == {"model": None}
    flip = parse_options(NeighbourFlip, ["rho=0.25", "level=character", "keep_spaces=false"])
    assert flip == {"rho": 0.25, "level": "character", "keep_spaces": False}
    nested = parse_options(
        CoPOS, ["eligibility.include_upos=NOUN, ADJ", "eligibility.min_length=3"]
    )
    eligibility = nested["eligibility"]
    assert eligibility.include_upos == frozenset({"NOUN", "ADJ"})  # type: ignore[attr-defined]
    assert eligibility.min_length == 3  # type: ignore[attr-defined]
    assert CoPOS(**nested).eligibility.min_length == 3  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("cls", "spec", "message"),
    [
        (CoCO, "kind=sideways", "expected one of auto, causal, masked"),
        (CoCO, "rerank=maybe", "expected true or false"),
        (CoCO, "batch_size=many", "expected a whole number"),
        (PhraseShuffle, "rho=high", "expected a number"),
        (CoPOS, "nope=1", "copos has no option 'nope'"),
        (CoPOS, "inflect", "expected NAME=VALUE"),
        (CoPOS, "wordnet=x", "cannot be set from the command line"),
    ],
)
def test_bad_options_are_one_clear_line(cls: type, spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_options(cls, [spec])


def test_every_generator_lists_its_options() -> None:
    for name in GENERATORS.names():
        names = option_help(GENERATORS.get(name))
        assert "wordnet" not in names and "lexicon" not in names
        for option in names:
            assert option.split(".")[0] in GENERATORS.get(name).options()
    assert "rho" in option_help(NeighbourFlip) and "kind" in option_help(CoCO)
    listing = CliRunner().invoke(main, ["list", "generators"])
    assert listing.exit_code == 0 and "options (-o NAME=VALUE)" in listing.output


def test_attack_builds_the_generator_with_its_options() -> None:
    config = AttackConfig(
        treebank=str(TREEBANK),
        probes=("p",),
        method="phrase-shuffle",
        search="sample",
        parser="gold",
        generator_options=("rho=0.9", "segmentation=random"),
    )
    generator = build_generator(config)
    assert isinstance(generator, PhraseShuffle)
    assert generator.rho == 0.9 and generator.segmentation == "random"
    assert config.to_dict()["generator_options"] == ["rho=0.9", "segmentation=random"]
    assert AttackConfig.from_dict(config.to_dict()) == config
    assert "generator_options" not in AttackConfig(str(TREEBANK), ("p",)).to_dict()
    with pytest.raises(ConfigError, match="option top_k is set by --candidates"):
        AttackConfig(str(TREEBANK), ("p",), generator_options=("top_k=3",))


def test_reorderings_in_an_attack_honour_the_budget(tmp_path: Path) -> None:
    config = AttackConfig(
        treebank=str(DEFAULT),
        probes=("p",),
        method="neighbour-flip",
        search="sample",
        budget=2,
        candidates=10,
        parser="gold",
        limit=12,
    )
    components = AttackComponents(
        WordHashEvaluator(),
        NeighbourFlip(rho=0.3),
        SampleSearch(candidates=10),
        (AcceptAll(),),
        LazyParser("gold"),
    )
    run_attack(config, tmp_path, components=components)
    rows = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert any(r["success"] for r in rows), rows[:2]
    for row in rows:
        assert row["hamming"] <= 2, row  # a draw swaps about 0.3 of the pairs: tau limits it


def test_perturb_takes_generator_options(tmp_path: Path) -> None:
    out, report = tmp_path / "flip.conllu", tmp_path / "flip.json"
    args = ["perturb", str(TREEBANK), "--method", "neighbour-flip", "--parser", "gold"]
    args += ["--budget", "2", "--out", str(out), "--report", str(report), "-o", "rho=1.0"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    data = json.loads(report.read_text())
    assert data["config"]["generator_options"] == ["rho=1.0"]
    assert data["methods"]["neighbour-flip"]["mean_dnd"] > 0
    assert all(r["dnd"] > 0 for r in data["sentences"] if r["status"] == "perturbed")
    assert "mean DND" in result.output
    bad = CliRunner().invoke(main, [*args[:-2], "-o", "level=character"])
    assert bad.exit_code == 2
    assert "cannot be written as CoNLL-U" in bad.output
    unknown = CliRunner().invoke(main, [*args[:-2], "-o", "nope=1"])
    assert unknown.exit_code == 2 and "neighbour-flip has no option 'nope'" in unknown.output


def test_shorthand_flags_set_the_options_of_the_generators_that_have_them() -> None:
    generators = {name: GENERATORS.get(name) for name in GENERATORS.names()}
    given = {"--lm": "some/dir", "--lm-kind": "masked", "--sense": None}
    assert shorthand_options(["coco", "copos"], generators, given) == {
        "coco": ("model=some/dir", "kind=masked"),
        "copos": (),
    }
    assert shorthand_options(["copos"], generators, {"--sense": "first"}) == {
        "copos": ("sense=first",)
    }
    with pytest.raises(ConfigError, match=r"--lm sets the 'model' option.*applies to: coco"):
        shorthand_options(["copos", "random"], generators, {"--lm": "x"})


@pytest.mark.needs("glove")
def test_perturb_records_lm_and_sense_flags_as_generator_options(tmp_path: Path) -> None:
    out, report = tmp_path / "s.conllu", tmp_path / "s.json"
    args = ["perturb", str(TREEBANK), "--method", "copos", "--parser", "gold", "--sense", "first"]
    result = CliRunner().invoke(main, [*args, "--out", str(out), "--report", str(report)])
    assert result.exit_code == 0, result.output
    assert json.loads(report.read_text())["config"]["generator_options"] == ["sense=first"]
    bad = CliRunner().invoke(main, [*args, "--lm", "x", "--out", str(out)])
    assert bad.exit_code == 2 and "--lm sets the 'model' option" in bad.output
    assert "Traceback" not in bad.output
