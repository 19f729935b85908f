"""The worst-case agreement search: brittle's strategies over the grammar's choices,
the target dependency kept intact, budgets respected, and the attack command."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from agreement_models import make_gpt2
from click.testing import CliRunner

from brittle.cli.main import main
from brittle.engine.agreement.search import (
    MarginScorer,
    attack_frame,
    frame_of,
    intact,
    slots_for,
)
from brittle.engine.agreement.stimuli import Frame, Stimulus, build_sentence, design_frames
from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.perturbation import Perturbation


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _start(experiment: int, target: str = "sg") -> Frame:
    return next(
        f
        for f in design_frames(items=2, seed=0, experiments=(experiment,), verbs=["seems"])
        if f.target_number == target
        and f.depth == 4
        and (f.numbers[0] != target if experiment == 1 else f.matrix == "complex")
    )


def plural_pull(stimuli: Sequence[Stimulus]) -> np.ndarray:
    """A stand-in model: the margin grows with the attractors of the other number and
    with the words between them and the verb."""
    out = []
    for s in stimuli:
        words = s.sentence.words
        against = [
            i
            for i in s.attractors
            if words[i].feats_dict.get("Number") != words[s.target].feats_dict["Number"]
        ]
        out.append(len(against) + 0.01 * len(words) + 0.001 * sum(len(w.form) for w in words))
    return np.array(out, dtype=np.float64)


@pytest.mark.parametrize("search", ["sample", "greedy", "beam"])
@pytest.mark.parametrize("experiment", [1, 2])
def test_strategies_keep_the_target_dependency(search: str, experiment: int) -> None:
    base = _start(experiment)
    scorer = MarginScorer(plural_pull)
    result = attack_frame(
        base,
        scorer,
        search=search,
        budget=3,
        queries=120,
        parameters={"candidates": 40, "beam_width": 3},
        seed=1,
    )
    assert result.queries <= 120
    assert result.worst_margin >= result.base_margin
    assert intact(result.base, result.worst)
    b, w = result.base.sentence.words, result.worst.sentence.words
    assert b[result.base.target].form == w[result.worst.target].form
    assert b[result.base.verb_index].form == w[result.worst.verb_index].form
    assert len(result.changes) <= 3
    if experiment == 1:
        assert result.worst.verb_index == result.worst.target + 1
    assert plural_pull([result.worst])[0] == pytest.approx(result.worst_margin)


def test_beam_finds_more_than_the_design() -> None:
    """The design's E4 cell has all four attractors against the target; longer words
    (the stand-in's tie-breaker) are found by changing choices."""
    base = _start(1)
    result = attack_frame(
        base,
        MarginScorer(plural_pull),
        search="beam",
        budget=2,
        queries=400,
        parameters={"beam_width": 2},
    )
    assert result.worst_margin > result.base_margin
    assert result.changes


def test_same_seed_same_result() -> None:
    base = _start(2, "pl")
    runs = [
        attack_frame(
            base,
            MarginScorer(plural_pull),
            search="sample",
            budget=3,
            queries=50,
            parameters={"candidates": 30},
            seed=4,
        )
        for _ in range(2)
    ]
    assert runs[0].worst.sentence == runs[1].worst.sentence
    assert runs[0].changes == runs[1].changes


def test_feasibility_refuses_a_changed_target_and_unrealised_choices() -> None:
    base = _start(1)
    stim = Stimulus.from_sentence(build_sentence(base))
    other_target = Stimulus.from_sentence(build_sentence(replace(base, target="nurse")))
    assert not intact(stim, other_target)
    other_number = Stimulus.from_sentence(build_sentence(replace(base, target_number="pl")))
    assert not intact(stim, other_number)
    # a noun beyond the chosen depth is not realised: the search may not count it
    slots = slots_for(base)
    names = [s.name for s in slots]
    p = Perturbation(
        stim.sent_id,
        "agreement",
        positions=(names.index("depth"), names.index("place")),
        replacements=("1", "museum:pl"),
    )
    shallow = frame_of(base, slots, p)
    assert shallow.depth == 1 and shallow.place == "museum"
    scorer = MarginScorer(plural_pull)
    result = attack_frame(base, scorer, search="beam", budget=2, queries=500)
    assert not any(c.startswith("place=") for c in result.changes) or result.worst.depth == 4


def test_query_budget_cuts_the_search() -> None:
    calls: list[int] = []

    def counting(stimuli: Sequence[Stimulus]) -> np.ndarray:
        calls.append(len(stimuli))
        return plural_pull(stimuli)

    result = attack_frame(_start(1), MarginScorer(counting), search="beam", budget=3, queries=10)
    assert result.queries <= 10
    assert sum(calls) == result.queries


def test_attack_command_end_to_end(tmp_path: Path) -> None:
    model = make_gpt2(tmp_path / "gpt2")
    out = tmp_path / "attack"
    result = CliRunner().invoke(
        main,
        [
            "agreement",
            "attack",
            "--out",
            str(out),
            "--model",
            str(model),
            "--verb",
            "is",
            "--items",
            "1",
            "--experiment",
            "1",
            "--experiment",
            "2",
            "--search",
            "greedy",
            "--budget",
            "2",
            "--queries",
            "30",
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    worst = read_conllu(out / "worst.conllu")
    assert len(worst) == 4  # two target numbers x two experiments
    for s in worst:
        stim = Stimulus.from_sentence(s)
        assert s.metadata["agreement_attack"].startswith("model=")
        base_id = s.metadata["agreement_base"]
        assert stim.sentence.problems() == []
        assert base_id in s.sent_id
    summary = json.loads((out / "summary.json").read_text())
    row = summary["summary"]["gpt2"]
    assert row["found_margin"] >= row["base_margin"]
    assert (out / "report.md").exists()
    # the worst stimuli are stimuli: `agreement score` reads them
    scored = tmp_path / "scored"
    result = CliRunner().invoke(
        main,
        [
            "agreement",
            "score",
            str(out / "worst.conllu"),
            "--out",
            str(scored),
            "--model",
            str(model),
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    margins = {
        line.split("\t")[1]: float(line.split("\t")[8])
        for line in (scored / "scores.tsv").read_text().splitlines()[1:]
    }
    for item in summary["items"]:
        found = next(m for sid, m in margins.items() if sid.startswith(item["base"] + "-"))
        assert found == pytest.approx(item["worst_margin"], abs=1e-4)
    # same seed, same files
    again = tmp_path / "again"
    CliRunner().invoke(
        main,
        [
            "agreement",
            "attack",
            "--out",
            str(again),
            "--model",
            str(model),
            "--verb",
            "is",
            "--items",
            "1",
            "--experiment",
            "1",
            "--experiment",
            "2",
            "--search",
            "greedy",
            "--budget",
            "2",
            "--queries",
            "30",
            "--quiet",
        ],
    )
    assert (again / "worst.conllu").read_bytes() == (out / "worst.conllu").read_bytes()


def test_attack_command_refuses_an_unknown_search(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["agreement", "attack", "--out", str(tmp_path / "o"), "--search", "nope"]
    )
    assert result.exit_code == 2
    assert "unknown strategy 'nope'" in result.output and "beam" in result.output
    assert "Traceback" not in result.output
