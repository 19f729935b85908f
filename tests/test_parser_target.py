"""A dependency parser as an attack's target: attachment scores, the evaluator that
joins it to the probes, the configuration, and whole attacks on the spaCy parser."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from brittle.cli.main import main
from brittle.data import default_treebank_path
from brittle.engine.attack import AttackConfig
from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.errors import BrittleInputError, ConfigError
from brittle.engine.core.perturbation import Perturbation, apply_perturbation
from brittle.engine.core.sentence import Sentence
from brittle.engine.targets.combined import CombinedEvaluator
from brittle.engine.targets.parser import ParserTarget, attachment_scores, target_parser
from brittle.scorers.parsers import make_parser
from brittle.search.scoring import Evaluation, Request

SENTENCES = read_conllu(default_treebank_path())[:4]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=12), max_size=5))
def test_attachment_scores_against_a_word_by_word_count(pairs: list[list[tuple[int, int]]]) -> None:
    predicted = [np.array([p for p, _ in s], dtype=np.int32) for s in pairs]
    gold = [np.array([g for _, g in s], dtype=np.int32) for s in pairs]
    got = attachment_scores(predicted, gold)
    for value, sentence in zip(got.tolist(), pairs, strict=True):
        same = sum(1 for p, g in sentence if p == g)
        assert value == (same / len(sentence) if sentence else 1.0)


def test_labelled_scores_compare_the_universal_relation_of_right_heads() -> None:
    heads = [np.array([2, 0, 2, 2], dtype=np.int32)], [np.array([2, 0, 2, 3], dtype=np.int32)]
    said = ("nmod:poss", "root", "obj", "punct")
    meant = ("nmod", "root", "obl", "punct")
    assert attachment_scores(*heads).tolist() == [0.75]
    # nmod:poss against nmod counts (subtypes aside); obj against obl does not; the
    # last word's relation is right but its head is not
    assert attachment_scores(*heads, [(said, meant)]).tolist() == [0.5]


def test_a_parse_of_another_length_is_refused() -> None:
    with pytest.raises(ValueError, match="3 words"):
        attachment_scores([np.zeros(3, np.int32)], [np.zeros(4, np.int32)])


def substituted(sentence: Sentence, position: int, form: str) -> Sentence:
    return apply_perturbation(
        sentence,
        Perturbation(sentence.sent_id, "test", positions=(position,), replacements=(form,)),
    )


def test_the_gold_parser_keeps_every_attachment_and_measures_no_distance() -> None:
    target = ParserTarget(lambda: make_parser("gold"), ud_labels=True)
    original = SENTENCES[0]
    candidates = [original, substituted(original, 1, "blorp")]
    (found,) = target.evaluate_many([(original, candidates, [None, None])])
    assert target.tasks == ("parser.uas", "parser.las")  # gold relations are UD's
    assert target.primary == ("parser.uas",)
    assert found.metrics.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert make_parser("gold").ud_labels and not make_parser("spacy", helpers=0).ud_labels
    assert ParserTarget(lambda: make_parser("gold"), ud_labels=False).tasks == ("parser.uas",)
    assert np.isnan(found.l2).all() and np.isnan(found.cosine).all()


class Fixed:
    """A stand-in evaluator of known columns, metrics and distances."""

    def __init__(self, tasks: tuple[str, ...], value: float, l2: float) -> None:
        self.tasks = self.primary = tasks
        self.value, self.l2 = value, l2

    def evaluate(self, original: Sentence, candidates, alignments) -> Evaluation:
        return self.evaluate_many([(original, candidates, alignments)])[0]

    def evaluate_many(self, requests: Sequence[Request]) -> list[Evaluation]:
        out = []
        for _, cands, _ in requests:
            m = len(cands)
            metrics: NDArray[np.float64] = np.full((m, len(self.tasks)), self.value)
            out.append(Evaluation(metrics, np.full(m, self.l2), np.full(m, self.l2 / 10)))
        return out


def test_combined_columns_sit_side_by_side_with_the_first_measured_distance() -> None:
    parser_like = Fixed(("parser.uas",), 0.5, np.nan)
    probes_like = Fixed(("distance.uuas", "pos.pos_acc"), 0.9, 2.0)
    combined = CombinedEvaluator([parser_like, probes_like])
    assert combined.tasks == ("parser.uas", "distance.uuas", "pos.pos_acc")
    assert combined.primary == combined.tasks
    request = (SENTENCES[0], [SENTENCES[0]] * 3, [None] * 3)
    first, second = combined.evaluate_many([request, request])
    assert first.metrics.tolist() == second.metrics.tolist() == [[0.5, 0.9, 0.9]] * 3
    assert first.l2.tolist() == [2.0] * 3 and first.cosine.tolist() == [0.2] * 3
    with pytest.raises(ValueError, match="overlap"):
        CombinedEvaluator([probes_like, probes_like])


def test_the_target_option_is_checked_before_anything_loads() -> None:
    assert target_parser("parser:spacy") == "spacy"
    for bad in ("spacy", "parser:", "probe:distance"):
        with pytest.raises(ConfigError, match="parser:NAME"):
            target_parser(bad)
    with pytest.raises(ConfigError, match="gold"):  # the known parsers are listed
        target_parser("parser:nonesuch")
    with pytest.raises(ConfigError, match="--probe directory or a --target"):
        AttackConfig(treebank="t", probes=())
    config = AttackConfig(treebank="t", probes=(), target="parser:gold")
    assert config.to_dict()["target"] == "parser:gold"
    assert AttackConfig.from_dict(config.to_dict()) == config
    assert "target" not in AttackConfig(treebank="t", probes=("p",)).to_dict()


def _run(*args: str) -> None:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output


def _rows(out: Path) -> list[dict]:
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    for row in rows:
        row.pop("seconds")
    return rows


@pytest.mark.needs("spacy-model")
def test_an_attack_on_the_spacy_parser_alone_and_on_two_workers(tmp_path: Path) -> None:
    args = [
        "attack", str(default_treebank_path()), "--target", "parser:spacy", "--validity",
        "tree", "--budget", "2", "--query-budget", "30", "--limit", "6", "--no-grade",
        "--quiet",
    ]  # fmt: skip
    _run(*args, "--out", str(tmp_path / "one"))
    _run(*args, "--out", str(tmp_path / "two"), "--workers", "2")
    one, two = _rows(tmp_path / "one"), _rows(tmp_path / "two")
    assert one == two
    for name in ("adversarial.conllu", "summary.json"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    assert all(set(r["tasks"]) == {"parser.uas"} for r in one)
    assert all(r["epsilon_l2"] is None and r["epsilon_cosine"] is None for r in one)
    drops = [r["tasks"]["parser.uas"]["drop"] for r in one]
    assert max(drops) > 0  # nonwords in the gold tree's slots do move spaCy's heads
    for row in one:  # the parser's heads before and after, which report.html draws
        parsed = row["predictions"]["parser"]
        assert len(parsed["clean"]["heads"]) == len(row["words"])
        if row["success"]:
            assert len(parsed["perturbed"]["heads"]) == len(row["perturbed"])
    assert '"parser"' in (tmp_path / "one" / "report.html").read_text()
    # per gold relation, the clean parse's right attachments the perturbation broke
    summary = json.loads((tmp_path / "one" / "summary.json").read_text())
    sentences = read_conllu(default_treebank_path())
    counted: dict[str, list[int]] = {}
    for row in one:
        if not row["success"]:
            continue
        gold = sentences[row["index"]]
        parsed = row["predictions"]["parser"]
        for g, rel, a, b in zip(
            gold.heads.tolist(), gold.deprels, parsed["clean"]["heads"],
            parsed["perturbed"]["heads"], strict=True,
        ):  # fmt: skip
            if a == g:
                entry = counted.setdefault(rel.split(":")[0], [0, 0])
                entry[0] += 1
                entry[1] += b != g
    breaks = summary["parser_breaks"]
    assert {r: [v["attached"], v["broken"]] for r, v in breaks.items()} == counted
    assert any(v["broken"] for v in breaks.values())
    assert "Parser attachments broken" in (tmp_path / "one" / "summary.md").read_text()
    summary = json.loads((tmp_path / "one" / "summary.json").read_text())
    assert json.loads((tmp_path / "one" / "config.json").read_text())["target"] == "parser:spacy"
    assert "parser.uas" in json.dumps(summary)


@pytest.mark.needs("spacy-model")
def test_probes_and_the_parser_on_the_same_perturbations(
    tmp_path: Path, static_probe: Path
) -> None:
    args = [
        "attack", str(default_treebank_path()), "--probe", str(static_probe), "--target",
        "parser:spacy", "--validity", "tree", "--budget", "1", "--query-budget", "20",
        "--limit", "4", "--no-grade", "--quiet", "--objective", "parser",
    ]  # fmt: skip
    _run(*args, "--out", str(tmp_path / "both"))
    rows = _rows(tmp_path / "both")
    for row in rows:
        assert set(row["tasks"]) == {"root.root_acc", "parser.uas"}
        assert row["damage"] == pytest.approx(row["tasks"]["parser.uas"]["drop"], abs=1e-6)
    inputs = json.loads((tmp_path / "both" / "inputs.json").read_text())
    assert inputs["objective"] == ["parser.uas"]


@pytest.mark.needs("spacy-model")
def test_the_ud_parser_trains_into_the_data_home_and_parses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two training steps on the built-in treebank laid out as the UD folders: the real
    conversion and training, into the data home, and the parser it gives."""
    from brittle.engine.core.resources.ud_parser import (
        UD_DEV,
        UD_TRAIN,
        train_ud_parser,
        ud_parser_status,
    )

    monkeypatch.setenv("BRITTLE_HOME", str(tmp_path / "home"))
    assert ud_parser_status().state == "provision"
    with pytest.raises(ConfigError, match="no such treebank"):
        train_ud_parser(tmp_path / "nothing")
    ud = tmp_path / "ud"
    for name in (*UD_TRAIN, UD_DEV):
        (ud / name).parent.mkdir(parents=True, exist_ok=True)
        (ud / name).write_bytes(default_treebank_path().read_bytes())
    broken = ud / UD_DEV
    broken.write_text(default_treebank_path().read_text().replace("\t", " ", 1))
    with pytest.raises(BrittleInputError, match=broken.name):
        train_ud_parser(ud, steps=2)
    assert ud_parser_status().state == "provision"  # nothing written
    broken.write_bytes(default_treebank_path().read_bytes())
    lines: list[str] = []
    where = train_ud_parser(ud, steps=2, log=lines.append)
    assert (where / "config.cfg").is_file() and any("Saved pipeline" in x for x in lines)
    assert ud_parser_status().state == "ok"
    parser = make_parser("spacy-ud", helpers=0)
    (parse,) = parser.parse([SENTENCES[0]])
    assert len(parse) == len(SENTENCES[0]) and parser.name == "spacy-ud"


@pytest.mark.needs("spacy-model")
def test_an_interrupted_parser_attack_resumes_to_the_same_files(tmp_path: Path) -> None:
    from brittle.engine.attack import run_attack
    from brittle.engine.attack.run import Progress

    config = AttackConfig(
        treebank=str(default_treebank_path()), probes=(), target="parser:spacy",
        method="jabberwocky", generator_options=("stems=syllable", "slots=regular"),
        constraints=("budget",), objective=("parser",), budget=2, query_budget=20, limit=20,
    )  # fmt: skip
    full, cut = tmp_path / "full", tmp_path / "cut"
    run_attack(config, full)

    class Interrupt(Exception):
        pass

    def stop_after_17(progress: Progress, total: int) -> None:
        if progress.done == 17:  # inside the second chunk of 16
            raise Interrupt

    with pytest.raises(Interrupt):
        run_attack(config, cut, on_sentence=stop_after_17)
    run_attack(config, cut, resume=True)
    assert _rows(full) == _rows(cut)
    for name in ("adversarial.conllu", "summary.json", "summary.md"):
        assert (full / name).read_bytes() == (cut / name).read_bytes(), name


def test_an_untrained_ud_parser_is_one_line_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BRITTLE_HOME", str(tmp_path / "home"))
    out = tmp_path / "out"
    result = CliRunner().invoke(main, [
        "attack", str(default_treebank_path()), "--target", "parser:spacy-ud", "--validity",
        "tree", "--limit", "2", "--no-grade", "--quiet", "--out", str(out),
    ])  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "--train-ud-parser" in result.output and "Traceback" not in result.output
    assert not out.exists()
