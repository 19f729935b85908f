"""Probes on agreement stimuli: the attachment counts on hand-made distances, and
``brittle agreement probe`` end to end with a tiny probe trained here."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from brittle.cli.main import main
from brittle.engine.agreement.probing import attachment
from brittle.engine.agreement.stimuli import Stimulus, generate
from brittle.engine.core.conllu import write_conllu

TREEBANK = Path(__file__).resolve().parents[1] / "data" / "default.conllu"


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BRITTLE_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def _stimulus() -> Stimulus:
    every = [Stimulus.from_sentence(s) for s in generate(items=1, seed=0, verbs=["seems"])]
    return next(s for s in every if s.condition == "sg-pl-E2")


def _gold_distances(s: Stimulus) -> np.ndarray:
    return s.sentence.distance_matrix().astype(np.float64)


def test_gold_distances_join_the_verb_to_the_target() -> None:
    s = _stimulus()  # "... thought the lawyer seems upset": the verb heads its clause
    a = attachment(s, _gold_distances(s))
    assert a.verb_target and not a.verb_attractor and not a.closer_attractor


def test_a_tree_that_hangs_the_verb_on_an_attractor() -> None:
    s = _stimulus()
    d = _gold_distances(s)
    v, t, att = s.verb_index, s.target, s.attractors[-1]
    d[v, :] = d[:, v] = 5.0
    d[v, v] = 0.0
    d[v, att] = d[att, v] = 0.5  # the verb sits next to the attractor only
    a = attachment(s, d)
    assert a.verb_attractor and not a.verb_target and a.closer_attractor
    assert d[v, t] > d[v, att]


def test_probe_command_end_to_end(tmp_path: Path) -> None:
    probe = tmp_path / "probe"
    result = CliRunner().invoke(
        main,
        [
            "train-probe",
            str(TREEBANK),
            "--dev",
            str(TREEBANK),
            "--out",
            str(probe),
            "--model",
            "random:16",
            "--task",
            "distance",
            "--epochs",
            "1",
            "--quiet",
            "--threads",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    stimuli = tmp_path / "s.conllu"
    write_conllu(generate(items=1, seed=0, verbs=["is", "seems"]), stimuli)
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main,
        ["agreement", "probe", str(stimuli), "--probe", str(probe), "--out", str(out), "--quiet"],
    )
    assert result.exit_code == 0, result.output
    rows = json.loads((out / "probes.json").read_text())["rows"]
    overall = [r for r in rows if r["depth"] == -1]
    assert {(r["experiment"], r["verb"]) for r in overall} == {
        (1, "is/are"),
        (1, "seems/seem"),
        (2, "was/were"),
    }
    for r in overall:
        assert 0.0 <= r["uuas"] <= 1.0
        assert 0.0 <= r["verb_attractor"] <= 1.0 and 0.0 <= r["verb_target"] <= 1.0
        assert r["attractor_instead"] <= r["verb_attractor"]
    by_depth = {(r["experiment"], r["verb"], r["depth"]): r["n"] for r in rows}
    assert by_depth[(1, "is/are", 0)] == 4 and by_depth[(1, "all", 3)] == 8
    assert "experiment 2" in (out / "report.md").read_text()
    # the stimuli are ordinary CoNLL-U: brittle evaluate reads them too
    result = CliRunner().invoke(
        main, ["evaluate", str(stimuli), "--probe", str(probe), "--quiet", "--no-baselines"]
    )
    assert result.exit_code == 0, result.output


def test_probe_command_refuses_a_non_probe(tmp_path: Path) -> None:
    stimuli = tmp_path / "s.conllu"
    write_conllu(generate(items=1, seed=0, verbs=["is"], experiments=(1,)), stimuli)
    result = CliRunner().invoke(
        main,
        [
            "agreement",
            "probe",
            str(stimuli),
            "--probe",
            str(tmp_path),
            "--out",
            str(tmp_path / "o"),
        ],
    )
    assert result.exit_code == 2 and "not a probe directory" in result.output
