"""The ``recorded`` generator: tables written to a file and searched again as they were."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from brittle.cli.main import main
from brittle.data import bench_pool_tables_path, bench_tables_path, default_treebank_path
from brittle.engine.attack import AttackConfig, build_generator
from brittle.engine.bench.workload import (
    EVERY_SENSE_OPTIONS,
    RECORDED_SENTENCES,
    recorded_tables,
)
from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.errors import BrittleInputError, ConfigError
from brittle.search.generators.base import GENERATORS
from brittle.search.generators.recorded import RecordedTables, read_tables, write_tables
from brittle.search.table import SubstitutionTable

SENTENCES = tuple(read_conllu(default_treebank_path())[:12])

word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)


@st.composite
def tables(draw: st.DrawFn) -> list[SubstitutionTable]:
    out = []
    for s in SENTENCES:
        positions = draw(st.sets(st.integers(0, len(s) - 1), max_size=len(s)))
        options = {
            i: draw(st.lists(st.tuples(word, word | st.just("_")), min_size=1, max_size=6,
                             unique_by=lambda c: c[0]))
            for i in positions
        }  # fmt: skip
        out.append(SubstitutionTable.from_mapping(s.sent_id, "copos", len(s), options))
    return out


@settings(max_examples=25, deadline=None)
@given(tables(), st.integers(1, 7))
def test_written_tables_come_back_cut_to_top_k(made: list[SubstitutionTable], k: int) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.json"
        write_tables(path, SENTENCES, made)
        assert read_tables(path) == {
            (s.sent_id, tuple(s.forms)): t for s, t in zip(SENTENCES, made, strict=True)
        }
        generator = RecordedTables(tables=str(path))
        assert generator.coverage(SENTENCES) == (len(SENTENCES), len(SENTENCES))
        assert generator.candidates(list(SENTENCES), top_k=k) == [t.truncated(k) for t in made]


def test_a_sentence_the_file_does_not_hold_gets_no_options(tmp_path: Path) -> None:
    made = [
        SubstitutionTable.from_mapping(s.sent_id, "copos", len(s), {0: [("x", "x")]})
        for s in SENTENCES[:2]
    ]
    path = tmp_path / "t.json"
    write_tables(path, SENTENCES[:2], made)
    generator = RecordedTables(tables=str(path))
    other = SENTENCES[2]
    got = generator.candidates([SENTENCES[0], other])
    assert got[0] == made[0] and got[1].entries == () and got[1].sentence_id == other.sent_id
    assert generator.coverage([SENTENCES[0], other]) == (1, 2)
    assert GENERATORS.get("recorded") is RecordedTables


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{not json", "not a JSON tables file"),
        ('{"format": "other"}', "not a tables file"),
        ('{"format": "brittle-tables/1", "tables": {}}', "'tables' is not a list"),
        ('{"format": "brittle-tables/1", "tables": [{"sent_id": "a"}]}', "table 1: 'forms'"),
        (
            '{"format": "brittle-tables/1", "tables": [{"sent_id": "a", "forms": ["x"], '
            '"method": "m", "options": [[3, [["y", "y"]]]]}]}',
            "table 1: position 3 out of range",
        ),
        (
            '{"format": "brittle-tables/1", "tables": [{"sent_id": "a", "forms": ["x"], '
            '"method": "m", "options": [[0, [["y"]]]]}]}',
            "table 1:",
        ),
    ],
)
def test_a_malformed_file_is_refused_in_one_line(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(BrittleInputError, match=problem) as caught:
        read_tables(path)
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)


def test_the_file_must_be_named() -> None:
    with pytest.raises(ConfigError, match="tables=FILE"):
        RecordedTables()


@pytest.mark.needs("glove")
def test_an_attack_on_recorded_tables_equals_the_attack_that_made_them(
    tmp_path: Path, static_probe: Path
) -> None:
    treebank = str(default_treebank_path())
    common = ["--probe", str(static_probe), "--search", "beam", "--budget", "2", "-b", "4",
              "--parser", "gold", "--constraint", "budget", "--limit", "8", "--no-grade",
              "--quiet"]  # fmt: skip
    config = AttackConfig(treebank=treebank, probes=(str(static_probe),), method="random",
                          candidates=4, parser="gold", limit=8)  # fmt: skip
    sentences = read_conllu(treebank)[:8]
    generator = build_generator(config).substitution_tables()
    assert generator is not None
    made = generator.candidates(sentences, top_k=4)
    write_tables(tmp_path / "t.json", sentences, made)
    runner = CliRunner(env={"BRITTLE_HOME": str(tmp_path / "home")})
    live = runner.invoke(
        main, ["attack", treebank, "--method", "random", *common, "--out", str(tmp_path / "live")]
    )
    assert live.exit_code == 0, live.output
    replayed = runner.invoke(
        main,
        ["attack", treebank, "--method", "recorded", "-o", f"tables={tmp_path / 't.json'}",
         *common, "--out", str(tmp_path / "replayed")],
    )  # fmt: skip
    assert replayed.exit_code == 0, replayed.output
    assert (tmp_path / "live" / "adversarial.conllu").read_bytes() == (
        tmp_path / "replayed" / "adversarial.conllu"
    ).read_bytes()
    rows = [
        [json.loads(line)["perturbed"] for line in (tmp_path / d / "results.jsonl").open()]
        for d in ("live", "replayed")
    ]
    assert rows[0] == rows[1]


def test_a_missing_tables_file_is_one_line_exit_2(tmp_path: Path, static_probe: Path) -> None:
    result = CliRunner(env={"BRITTLE_HOME": str(tmp_path / "home")}).invoke(
        main,
        ["attack", str(default_treebank_path()), "--probe", str(static_probe), "--method",
         "recorded", "-o", f"tables={tmp_path / 'absent.json'}", "--parser", "gold",
         "--out", str(tmp_path / "out")],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "absent.json" in result.output and "Traceback" not in result.output


def test_the_bench_file_holds_the_first_sentences_of_the_builtin_treebank() -> None:
    sentences = read_conllu(default_treebank_path())[:RECORDED_SENTENCES]
    assert recorded_tables(sentences) == bench_tables_path()
    assert recorded_tables(sentences[:3]) == bench_tables_path()
    later = read_conllu(default_treebank_path())[RECORDED_SENTENCES:]
    if later:  # a sentence past the recorded ones: coPOS as it stands
        assert recorded_tables([*sentences[:3], later[0]]) is None


def test_the_pool_file_holds_the_every_sense_pool_of_the_same_sentences() -> None:
    """The anytime stage's workload: the same sentences, La Malfa et al.'s larger pool."""
    sentences = read_conllu(default_treebank_path())[:RECORDED_SENTENCES]
    assert recorded_tables(sentences, bench_pool_tables_path()) == bench_pool_tables_path()
    pool = RecordedTables(tables=str(bench_pool_tables_path()), top_k=EVERY_SENSE_OPTIONS)
    small = RecordedTables(tables=str(bench_tables_path()), top_k=5)
    big = pool.candidates(sentences)
    few = small.candidates(sentences)
    assert sum(t.size for t in big) > 3 * sum(t.size for t in few)
    assert max(len(opts) for t in big for _, opts in t.entries) <= EVERY_SENSE_OPTIONS
