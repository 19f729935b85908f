"""The agreement scorer against slow direct computations, the t-tests against scipy,
the tables, and ``brittle agreement score`` end to end with tiny random models."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from agreement_models import SPLIT_IN_BERT, make_bert, make_gpt2
from click.testing import CliRunner
from scipy import stats

from brittle.cli.main import main
from brittle.engine.agreement.analysis import ItemScore, paired_t, summarise
from brittle.engine.agreement.lm_scoring import SlotScorer, open_lm
from brittle.engine.agreement.stimuli import Stimulus, generate
from brittle.engine.core.conllu import write_conllu
from brittle.engine.core.errors import ResourceMissingError
from brittle.search.generators.lm_causal import sentence_logprobs

from support import missing_sentence_models


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """Tiny models run fastest on one thread (and do not fight other jobs for cores)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_gpt2(tmp_path_factory.mktemp("agr-gpt2"))


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_bert(tmp_path_factory.mktemp("agr-bert"))


@pytest.fixture(scope="module")
def sample() -> list[Stimulus]:
    every = [Stimulus.from_sentence(s) for s in generate(items=1, seed=2)]
    # every verb pair and both target numbers at E0 and E4, and experiment 2
    return [
        s
        for s in every
        if (s.experiment == 1 and s.depth in (0, 4) and s.context != s.target_number)
        or (s.context == "complex" and s.depth in (1, 4))
    ]


def _slow_causal(lm, left: str, form: str) -> float:
    """-log2 p(form | left), one piece at a time, each from a fresh unpadded pass."""
    tok = lm.tokenizer
    ids = [tok.bos_token_id, *tok.encode(left, add_special_tokens=False)]
    total = 0.0
    for piece in tok.encode(" " + form, add_special_tokens=False):
        with torch.no_grad():
            logits = lm.model(input_ids=torch.tensor([ids])).logits[0, -1]
        total -= float(torch.log_softmax(logits.double(), -1)[piece]) / math.log(2)
        ids.append(piece)
    return total


def _slow_masked(lm, left: str, right: str, form: str) -> float:
    """-log2 p(form) with successive masking, one sentence at a time."""
    tok = lm.tokenizer
    pieces = tok.encode(" " + form, add_special_tokens=False)
    text = f"{left} {tok.mask_token * len(pieces)}{right}"
    ids = tok(text, return_tensors="pt")["input_ids"]
    slots = (ids[0] == tok.mask_token_id).nonzero()[:, 0].tolist()
    total = 0.0
    for pos, piece in zip(slots, pieces, strict=True):
        with torch.no_grad():
            logits = lm.model(input_ids=ids).logits[0, pos]
        total -= float(torch.log_softmax(logits.double(), -1)[piece]) / math.log(2)
        ids[0, pos] = piece
    return total


def test_causal_scores_equal_a_slow_direct_computation(gpt2_dir: Path, sample) -> None:
    lm = open_lm(str(gpt2_dir))
    assert lm.kind == "causal"
    scorer = SlotScorer(lm, batch_size=5)
    got = scorer.stimulus_surprisals(sample)
    assert got.shape == (len(sample), 2)
    multi = 0
    for s, row in zip(sample, got, strict=True):
        left, _ = s.left_right()
        for form, value in zip((s.correct, s.wrong), row, strict=True):
            multi += len(scorer.pieces(form)) > 1
            assert value == pytest.approx(_slow_causal(lm, left, form), abs=1e-4)
    assert multi > 0  # the tiny BPE splits some verb forms


def test_masked_scores_equal_successive_masking(bert_dir: Path, sample) -> None:
    lm = open_lm(str(bert_dir))
    assert lm.kind == "masked"
    scorer = SlotScorer(lm, batch_size=7)
    got = scorer.stimulus_surprisals(sample)
    split = 0
    for s, row in zip(sample, got, strict=True):
        left, right = s.left_right()
        for form, value in zip((s.correct, s.wrong), row, strict=True):
            if form in SPLIT_IN_BERT:
                assert len(scorer.pieces(form)) == 2
                split += 1
            assert value == pytest.approx(_slow_masked(lm, left, right, form), abs=1e-4)
    assert split > 0


def test_masked_scores_see_the_right_context(bert_dir: Path) -> None:
    scorer = SlotScorer(open_lm(str(bert_dir)))
    a, b = scorer.surprisals([("the cat", " upset.", ("is",)), ("the cat", " tired.", ("is",))])
    assert a[0] != b[0]


def test_hand_checked_example(gpt2_dir: Path) -> None:
    """One item by hand: the scorer's two numbers are -log2 of the model's probabilities,
    and the item is correct exactly when the agreeing form's is lower."""
    lm = open_lm(str(gpt2_dir))
    s = Stimulus.from_sentence(generate(items=1, seed=0, experiments=(1,), verbs=["is"])[12])
    left, _ = s.left_right()
    tok = lm.tokenizer
    full = [tok.bos_token_id, *tok.encode(left, add_special_tokens=False)]
    with torch.no_grad():
        logits = lm.model(input_ids=torch.tensor([full])).logits[0, -1].double()
    p = torch.softmax(logits, -1)
    want = []
    for form in (s.correct, s.wrong):
        pieces = tok.encode(" " + form, add_special_tokens=False)
        if len(pieces) == 1:
            want.append(-math.log2(float(p[pieces[0]])))
        else:
            want.append(_slow_causal(lm, left, form))
    got = SlotScorer(lm).stimulus_surprisals([s])[0]
    assert got == pytest.approx(want, abs=1e-5)
    item = ItemScore("m", s.sent_id, 1, s.condition, "is/are", 0, got[0], got[1])
    assert item.correct == (want[0] < want[1])
    assert item.margin == pytest.approx(want[0] - want[1])


@pytest.mark.parametrize("seed", range(6))
def test_paired_t_equals_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    correct = rng.normal(5, 2, n)
    wrong = correct + rng.normal(rng.normal(0, 1), 1.5, n)
    ours = paired_t(correct, wrong)
    ref = stats.ttest_rel(wrong, correct, alternative="greater")
    assert ours.t == pytest.approx(float(ref.statistic), rel=1e-10)
    assert ours.p == pytest.approx(float(ref.pvalue), rel=1e-8, abs=1e-300)
    assert ours.df == n - 1


def test_paired_t_edge_cases() -> None:
    assert math.isnan(paired_t(np.array([1.0]), np.array([2.0])).t)
    same = paired_t(np.array([1.0, 2.0]), np.array([2.0, 3.0]))
    assert same.t == math.inf and same.p == 0.0
    zero = paired_t(np.array([1.0, 2.0]), np.array([1.0, 2.0]))
    assert math.isnan(zero.t)


def test_tables_count_and_order() -> None:
    scores = [
        ItemScore("m", f"x{i}", 1, cond, verb, i, c, w)
        for i, (cond, verb, c, w) in enumerate(
            [
                ("sg-pl-E4", "is/are", 1.0, 2.0),
                ("sg-pl-E4", "is/are", 3.0, 2.0),
                ("sg-pl-E4", "seems/seem", 1.0, 5.0),
                ("sg-sg-E0", "is/are", 1.0, 2.0),
                ("pl-sg-E4", "is/are", 2.0, 2.0),  # a tie is an error
            ]
        )
    ]
    summary = summarise(scores)
    by_cond = {r.key[2]: r for r in summary.by_condition}
    assert [r.key[2] for r in summary.by_condition] == ["sg-sg-E0", "sg-pl-E4", "pl-sg-E4"]
    assert by_cond["sg-pl-E4"].accuracy == pytest.approx(2 / 3)
    assert by_cond["pl-sg-E4"].accuracy == 0.0
    hardest = {r.key[2]: r.accuracy for r in summary.hardest}
    assert hardest == {"is/are": pytest.approx(1 / 3), "seems/seem": 1.0}
    assert [r.key[2] for r in summary.by_depth] == ["0", "4"]


def test_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ResourceMissingError):
        open_lm(str(tmp_path / "nope" / "model"))


def test_score_command_with_both_kinds(tmp_path: Path, gpt2_dir: Path, bert_dir: Path) -> None:
    path = tmp_path / "stimuli.conllu"
    write_conllu(generate(items=2, seed=1, verbs=["is", "seems"]), path)
    out = tmp_path / "scores"
    result = CliRunner().invoke(
        main,
        [
            "agreement",
            "score",
            str(path),
            "--out",
            str(out),
            "--model",
            str(gpt2_dir),
            "--model",
            str(bert_dir),
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["kinds"] == {gpt2_dir.name: "causal", bert_dir.name: "masked"}
    rows = (out / "scores.tsv").read_text().splitlines()
    assert len(rows) == 1 + 2 * (2 * 2 * 20 + 2 * 24)
    report = (out / "report.md").read_text()
    assert "Experiment 1" in report and "Experiment 2" in report and "E4" in report
    again = tmp_path / "again"
    CliRunner().invoke(
        main,
        [
            "agreement",
            "score",
            str(path),
            "--out",
            str(again),
            "--model",
            str(gpt2_dir),
            "--model",
            str(bert_dir),
            "--quiet",
        ],
    )
    assert (again / "scores.tsv").read_bytes() == (out / "scores.tsv").read_bytes()


def test_score_command_refuses_plain_treebanks(tmp_path: Path) -> None:
    path = tmp_path / "plain.conllu"
    path.write_text("# sent_id = 1\n# text = Hi.\n1\tHi\thi\tINTJ\tUH\t_\t0\troot\t_\t_\n\n")
    result = CliRunner().invoke(
        main, ["agreement", "score", str(path), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    assert "not an agreement stimulus" in result.output
    assert "Traceback" not in result.output


@pytest.mark.skipif(missing_sentence_models() is not None, reason="bundled models absent")
def test_smollm2_scores_equal_whole_sentence_log_probabilities() -> None:
    lm = open_lm(None)
    stimuli = [Stimulus.from_sentence(s) for s in generate(items=1, seed=0, verbs=["is"])][:6]
    got = SlotScorer(lm).stimulus_surprisals(stimuli)
    for s, row in zip(stimuli, got, strict=True):
        left, _ = s.left_right()
        base = sentence_logprobs(lm, [left])[0]
        for form, value in zip((s.correct, s.wrong), row, strict=True):
            direct = -(sentence_logprobs(lm, [f"{left} {form}"])[0] - base) / math.log(2)
            assert value == pytest.approx(direct, abs=1e-3)
    assert (got[:, 0] < got[:, 1]).mean() >= 0.5
