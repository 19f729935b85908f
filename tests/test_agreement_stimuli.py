"""The agreement stimulus generator: design counts, reproducibility and valid gold trees."""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from brittle.cli.main import main
from brittle.engine.agreement.lexicon import PEOPLE, PLACES, THINGS, VERB_PAIRS
from brittle.engine.agreement.stimuli import (
    Frame,
    Stimulus,
    build_sentence,
    design_frames,
    generate,
    validate_stimulus,
)
from brittle.engine.core.conllu import format_conllu, read_conllu, write_conllu
from brittle.engine.core.errors import ConfigError

ITEMS = 3


@pytest.fixture(scope="module")
def stimuli() -> list[Stimulus]:
    return [Stimulus.from_sentence(s) for s in generate(items=ITEMS, seed=0)]


def test_design_counts(stimuli: list[Stimulus]) -> None:
    exp1 = [s for s in stimuli if s.experiment == 1]
    exp2 = [s for s in stimuli if s.experiment == 2]
    assert len(exp1) == len(VERB_PAIRS) * ITEMS * 2 * 2 * 5
    assert len(exp2) == ITEMS * 2 * 3 * 4
    cells1 = Counter((s.verb.key, s.condition) for s in exp1)
    assert len(cells1) == len(VERB_PAIRS) * 20
    assert set(cells1.values()) == {ITEMS}
    conditions1 = {s.condition for s in exp1}
    assert conditions1 == {
        f"{t}-{a}-E{d}" for t in ("sg", "pl") for a in ("sg", "pl") for d in range(5)
    }
    cells2 = Counter(s.condition for s in exp2)
    assert set(cells2) == {
        f"{t}-{m}-E{d}"
        for t in ("sg", "pl")
        for m in ("none", "simple", "complex")
        for d in range(1, 5)
    }
    assert set(cells2.values()) == {ITEMS}
    assert {s.verb.key for s in exp2} == {"was/were"}
    assert len({s.sent_id for s in stimuli}) == len(stimuli)


def test_default_design_has_twenty_items_per_condition_and_verb() -> None:
    frames = design_frames(items=20, seed=0)
    cells = Counter((f.experiment, f.verb, f.condition) for f in frames)
    assert min(cells.values()) == 20
    assert len(frames) == 7 * 20 * 20 + 20 * 24


def test_same_seed_same_bytes_other_seed_other_items(tmp_path: Path) -> None:
    a = format_conllu(generate(items=2, seed=7))
    b = format_conllu(generate(items=2, seed=7))
    c = format_conllu(generate(items=2, seed=8))
    assert a == b
    assert a != c
    write_conllu(generate(items=2, seed=7), tmp_path / "x.conllu")
    assert (tmp_path / "x.conllu").read_text() == a


def test_gold_trees_are_valid_and_numbers_consistent(stimuli: list[Stimulus]) -> None:
    for s in stimuli:
        sent = s.sentence
        assert validate_stimulus(s) == [], s.sent_id
        heads = sent.heads
        assert int((heads == 0).sum()) == 1
        assert sent.problems() == []
        target = sent.words[s.target]
        assert target.feats_dict["Number"] == ("Sing" if s.target_number == "sg" else "Plur")
        assert sent.words[s.verb_index].form == s.correct
        assert s.correct != s.wrong
        # the text comment is the surface of the words
        assert sent.metadata["text"] == sent.surface_text()


def test_experiment_1_structure(stimuli: list[Stimulus]) -> None:
    for s in (s for s in stimuli if s.experiment == 1):
        words = s.sentence.words
        assert s.verb_index == s.target + 1
        assert len(s.attractors) == s.depth
        numbers = {words[i].feats_dict["Number"] for i in s.attractors}
        if s.depth:
            want = "Sing" if s.context == "sg" else "Plur"
            assert numbers == {want}
        clause = s.verb_index if not s.verb.is_copula else int(s.sentence.heads[s.verb_index]) - 1
        assert int(s.sentence.heads[s.target]) - 1 == clause
        assert words[s.target].deprel == "nsubj"


def test_experiment_2_structure(stimuli: list[Stimulus]) -> None:
    for s in (s for s in stimuli if s.experiment == 2):
        words = s.sentence.words
        forms = [w.form.lower() for w in words]
        assert forms[s.target - 3 : s.target] == ["it", "was", "the"]
        assert forms[s.target + 1] == "who"
        # the embeddings: one pronoun + verb pair per level between "who" and the verb
        assert s.verb_index - (s.target + 2) == 2 * s.depth
        matrix_nouns = {"none": 0, "simple": 1, "complex": 2}[s.context]
        assert len(s.attractors) == matrix_nouns
        for i in s.attractors:
            assert words[i].feats_dict["Number"] != words[s.target].feats_dict["Number"]
        assert not s.sentence.is_projective()  # extraction out of the relative clause


def test_round_trip_through_conllu(tmp_path: Path, stimuli: list[Stimulus]) -> None:
    path = tmp_path / "s.conllu"
    write_conllu([s.sentence for s in stimuli[:50]], path)
    back = [Stimulus.from_sentence(s) for s in read_conllu(path)]
    assert [(b.sent_id, b.target, b.verb_index, b.attractors) for b in back] == [
        (s.sent_id, s.target, s.verb_index, s.attractors) for s in stimuli[:50]
    ]


def test_validation_catches_a_wrong_number(stimuli: list[Stimulus]) -> None:
    s = stimuli[5]
    i = s.target
    word = s.sentence.words[i]
    wrong = "Number=Plur" if "Sing" in word.feats else "Number=Sing"
    from dataclasses import replace

    broken = s.sentence.with_words({i: replace(word, feats=wrong)})
    problems = validate_stimulus(Stimulus.from_sentence(broken))
    assert problems


def test_lexicon_forms() -> None:
    plurals = {n.lemma: n.plural for n in PEOPLE + THINGS + PLACES}
    assert plurals["child"] == "children"
    assert plurals["analysis"] == "analyses"
    assert plurals["city"] == "cities"
    assert plurals["church"] == "churches"
    assert plurals["survey"] == "surveys"


def test_bad_frames_are_refused() -> None:
    frame = design_frames(items=1, seed=0)[0]
    from dataclasses import replace

    with pytest.raises(ConfigError):
        build_sentence(replace(frame, depth=7))
    with pytest.raises(ConfigError):
        design_frames(items=0)
    assert isinstance(frame, Frame)


@pytest.mark.skipif(
    shutil.which("udvalidate") is None
    and not Path(__file__).parents[1].joinpath(".venv/bin/udvalidate").exists(),
    reason="no udvalidate",
)
def test_official_validator_accepts_the_stimuli(tmp_path: Path) -> None:
    exe = shutil.which("udvalidate") or str(Path(__file__).parents[1] / ".venv/bin/udvalidate")
    path = tmp_path / "s.conllu"
    write_conllu(generate(items=1, seed=3), path)
    done = subprocess.run(
        [exe, "--lang", "en", "--level", "3", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_cli_writes_the_same_file_twice(tmp_path: Path) -> None:
    runner = CliRunner()
    for name in ("a.conllu", "b.conllu"):
        result = runner.invoke(
            main,
            [
                "agreement",
                "stimuli",
                str(tmp_path / name),
                "--items",
                "2",
                "--verb",
                "is",
                "--seed",
                "4",
            ],
        )
        assert result.exit_code == 0, result.output
    assert (tmp_path / "a.conllu").read_bytes() == (tmp_path / "b.conllu").read_bytes()
    back = read_conllu(tmp_path / "a.conllu")
    assert len(back) == 2 * 20 + 2 * 24


def test_no_slot_holds_a_verb_that_licenses_the_wrong_form() -> None:
    """A perception verb (heard the child get upset) or a mandative one (insisted that
    the child become upset) would make the plural-looking form grammatical after a
    singular target; the lexicon keeps them out of every slot."""
    from brittle.engine.agreement.lexicon import EXCLUDED_VERBS, SAY_VERBS, THINK_VERBS
    from brittle.engine.agreement.stimuli import BRIDGE_VERBS

    used = {f for f, _ in SAY_VERBS + THINK_VERBS} | set(BRIDGE_VERBS)
    assert not used & EXCLUDED_VERBS
    words = {w.lower() for s in generate(items=3, seed=0) for w in s.forms}
    assert not words & EXCLUDED_VERBS
