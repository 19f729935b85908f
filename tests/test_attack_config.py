"""The attack's configuration and result schema: checked up front, read back typed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from brittle.cli.main import main
from brittle.engine.attack import AttackConfig
from brittle.engine.attack.preflight import count_sentences
from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.errors import BrittleInputError, ConfigError
from brittle.engine.core.sentence import ColumnSurvey
from brittle.engine.reports.results import ResultRow, TaskScores, read_rows

from support import FIXTURES

TREEBANK = FIXTURES / "mwt_empty.conllu"


def config(**kw: object) -> AttackConfig:
    base: dict[str, object] = {"treebank": str(TREEBANK), "probes": ("p",), "parser": "gold"}
    base.update(kw)
    return AttackConfig(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize("search", ["beam", "greedy"])
def test_reorderings_need_a_strategy_that_supports_them(search: str) -> None:
    with pytest.raises(ConfigError, match=r"reordering; --search \w+ cannot search it"):
        config(method="shuffle", search=search)
    assert config(method="shuffle", search="sample").method == "shuffle"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("method", "nope", "unknown generator 'nope'"),
        ("search", "nope", "unknown strategy 'nope'"),
        ("parser", "nope", "unknown parser 'nope'"),
        ("constraints", ("nope",), "unknown constraint 'nope'"),
    ],
)
def test_unknown_components_are_refused_with_the_known_names(
    field: str, value: object, message: str
) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        config(**{field: value})
    assert "known:" in str(info.value)


def test_strategy_parameters_and_options_come_from_the_declarations() -> None:
    assert config(search="beam", beam_width=3).strategy_parameters == {"beam_width": 3}
    assert config(search="greedy").strategy_parameters == {}
    assert config(search="sample", candidates=7).strategy_parameters == {
        "candidates": 7,
        "check_all": False,
    }
    assert config(search="sample", check_all=True).strategy_parameters["check_all"] is True
    with pytest.raises(ConfigError, match="--check-all applies to --search sample"):
        config(search="beam", check_all=True)
    assert "check_all" not in config(search="sample").to_dict()
    assert config(search="sample", check_all=True).to_dict()["check_all"] is True
    assert config(search="sample", candidates=7).options_per_position == 10
    assert config(search="beam", candidates=7).options_per_position == 7


def test_config_round_trips_and_leaves_default_constraints_out() -> None:
    plain = config()
    assert "constraints" not in plain.to_dict()
    assert plain.constraint_specs == ("syntax:0.2", "word-similarity", "similarity", "fluency")
    assert config(method="random").constraint_specs == ("syntax:0.2",)  # as perturb
    named = config(constraints=("budget", "syntax:0.3"))
    assert named.to_dict()["constraints"] == ["budget", "syntax:0.3"]
    for c in (plain, named):
        assert AttackConfig.from_dict(json.loads(json.dumps(c.to_dict()))) == c


def test_cli_refuses_bad_choices_before_loading_anything(tmp_path: Path) -> None:
    out = tmp_path / "out"
    for extra, message in (
        (["--method", "shuffle", "--search", "beam"], "cannot search it"),
        (["--constraint", "nope"], "unknown constraint 'nope'"),
        (["--method", "nope"], "unknown generator 'nope'"),
    ):
        args = ["attack", str(TREEBANK), "--probe", str(tmp_path / "missing"), "--out", str(out)]
        result = CliRunner().invoke(main, [*args, *extra])
        assert result.exit_code == 2, result.output
        assert message in result.output and "Traceback" not in result.output
        assert not out.exists()


def test_help_lists_registered_components() -> None:
    result = CliRunner().invoke(main, ["attack", "--help"])
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    for name in ("copos", "neighbour-flip", "beam", "sample", "spacy", "gold"):
        assert name in text


def _row(index: int) -> ResultRow:
    return ResultRow(
        index=index,
        sent_id=f"s{index}",
        success=True,
        method="copos",
        positions=(1,),
        original_words=("cat",),
        perturbed_words=("kitty",),
        lemmas=("kitty",),
        order=None,
        words=("the", "cat"),
        perturbed=("the", "kitty"),
        tasks={"distance.uuas": TaskScores(1.0, 0.5, 0.5)},
        damage=0.5,
        syntax_distance=0.0,
        hamming=1,
        eligible_positions=1,
        queries=3,
        evaluated=2,
        syntax_checked=1,
        epsilon_l2=1.5,
        epsilon_cosine=0.9,
        seconds=0.01,
    )


def test_rows_round_trip_and_bad_rows_name_their_line(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    rows = [_row(0), _row(1)]
    path.write_bytes(b"".join(r.to_line() for r in rows))
    assert list(read_rows(path)) == rows
    assert "dnd" not in json.loads(rows[0].to_line())  # substitutions have no word-order scores
    assert rows[1].perturbation.replacements == ("kitty",)
    data = json.loads(rows[1].to_line())
    del data["queries"]
    path.write_bytes(rows[0].to_line() + (json.dumps(data) + "\n").encode())
    with pytest.raises(BrittleInputError, match=r"results.jsonl:2: result row lacks queries"):
        list(read_rows(path))
    path.write_bytes(rows[0].to_line() + b'{"index": "x"}\n')
    with pytest.raises(BrittleInputError, match=r":2: result row lacks"):
        list(read_rows(path))
    path.write_bytes(rows[0].to_line() + b"[1, 2]\n")
    with pytest.raises(BrittleInputError, match=r":2: malformed result row"):
        list(read_rows(path))
    path.write_bytes(rows[0].to_line() + b'{"index": 1')  # a torn last line is skipped
    assert list(read_rows(path)) == rows[:1]


def test_a_column_the_generator_reads_must_not_be_blank(tmp_path: Path) -> None:
    blank = tmp_path / "no_xpos.conllu"
    lines = []
    for line in TREEBANK.read_text().splitlines():
        cols = line.split("\t")
        if len(cols) == 10:
            cols[4] = "_"
        lines.append("\t".join(cols))
    blank.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError, match=r"reads the XPOS column, but .* leaves it blank"):
        count_sentences(config(treebank=str(blank), method="copos"))
    assert count_sentences(config(treebank=str(blank), method="shuffle", search="sample")) == len(
        read_conllu(TREEBANK)
    )


def test_column_survey() -> None:
    sentences = read_conllu(TREEBANK)
    survey = ColumnSurvey(frozenset({"upos", "deps"}))
    assert survey.blank == []
    for s in sentences:
        survey.add(s)
    assert survey.sentences == len(sentences)
    assert survey.blank == (
        ["deps"] if all(v == "_" for s in sentences for v in s.column("deps")) else []
    )
    with pytest.raises(ValueError, match="unknown word column"):
        sentences[0].column("nope")


def test_the_grader_shares_the_attacks_parser_and_reads_gold_runs_with_spacy() -> None:
    from brittle.engine.attack.assembly import AttackComponents
    from brittle.engine.attack.chunk_search import attack_grader
    from brittle.scorers.parsers.base import Parser

    class Counted:
        """The attack's parser factory, counting its calls (nothing is loaded)."""

        def __init__(self) -> None:
            self.calls = 0
            self.parser = object()

        def __call__(self) -> Parser:
            self.calls += 1
            return self.parser  # type: ignore[return-value]

        def clear_cache(self) -> None:
            pass

    factory = Counted()
    comps = AttackComponents(
        evaluator=None,  # type: ignore[arg-type]
        generator=None,  # type: ignore[arg-type]
        strategy=None,  # type: ignore[arg-type]
        constraints=(),
        parser=factory,
    )
    spacy = AttackConfig(treebank="t.conllu", probes=("p",), parser="spacy", dtype="float32")
    grader = attack_grader(spacy, comps, device="cpu")
    assert grader.parser is factory.parser and factory.calls == 1  # one parser, one cache
    assert (grader.device, grader.dtype) == ("cpu", "float32")
    gold = AttackConfig(treebank="t.conllu", probes=("p",), parser="gold")
    assert attack_grader(gold, comps, device=None).parser == "spacy"
    assert factory.calls == 1  # the gold run's parser is not asked for


def test_attack_config_resolves_the_options_as_the_command_and_the_api_do() -> None:
    from brittle.engine.attack import attack_config
    from brittle.search.presets import PRESETS

    tree = PRESETS.get("tree")
    config = attack_config(
        "t.conllu", ["p"], method=None, validity="tree", constraints=("retag",),
        generator_options=("stems=syllable",), objective=["distance", " ", "pos "], budget=2,
    )  # fmt: skip
    assert config.method == tree.method and config.budget == 2
    assert config.constraints == (*tree.constraints, "retag")
    assert config.generator_options == (*tree.generator_options, "stems=syllable")
    assert config.objective == ("distance", "pos")
    shorthand = attack_config("t.conllu", ["p"], method="copos", sense="context",
                              generator_options=("min_lead=0.1",))  # fmt: skip
    assert shorthand.generator_options == ("sense=context", "min_lead=0.1")  # shorthands first
    with pytest.raises(ConfigError):
        attack_config("t.conllu", ["p"], method="random", validity="tree")
    with pytest.raises(ConfigError):
        attack_config("t.conllu", ["p"], method=None)
