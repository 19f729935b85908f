"""``perturb --budget all`` (a Jabberwocky corpus), ``evaluate --paired`` with its bootstrap,
and the character permutation of ``bench/reproduce_word_order.py``."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from click.testing import CliRunner, Result

from brittle.cli.main import main
from brittle.engine.core.conllu import read_conllu, write_conllu
from brittle.engine.evaluate.paired_evaluation import paired_bootstrap
from brittle.search.generators.base import GENERATORS, SubstitutionGenerator

TREEBANK = Path(__file__).resolve().parents[1] / "data" / "default.conllu"
LIMIT = 30  # sentences of TREEBANK the tests perturb
BENCH = Path(__file__).resolve().parents[1] / "bench" / "reproduce_word_order.py"


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BRITTLE_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def jabberwocky(out: Path, *extra: str) -> Result:
    return run(
        "perturb",
        str(TREEBANK),
        "--method",
        "jabberwocky",
        "-b",
        "1",
        "--parser",
        "gold",
        "-d",
        "inf",
        "--no-quality",
        "--quiet",
        "--limit",
        str(LIMIT),
        "--out",
        str(out),
        *extra,
    )


@pytest.mark.needs("glove")
def test_budget_all_changes_every_eligible_word(tmp_path: Path) -> None:
    out = tmp_path / "j.conllu"
    result = jabberwocky(out, "--budget", "all")
    assert result.exit_code == 0, result.output
    plain = read_conllu(TREEBANK)[:LIMIT]
    perturbed = read_conllu(out)
    generator = GENERATORS.get("jabberwocky")()
    assert isinstance(generator, SubstitutionGenerator)
    tables = generator.candidates(plain)
    assert len(perturbed) == len(plain)
    assert sum(len(t.entries) for t in tables) > 2 * LIMIT  # not a one-word budget
    for a, b, table in zip(plain, perturbed, tables, strict=True):
        changed = {i for i, (x, y) in enumerate(zip(a.forms, b.forms, strict=True)) if x != y}
        eligible = {i for i, _ in table.entries}
        assert eligible <= changed, a.sent_id
        assert all(a.forms[i].lower() in ("a", "an") for i in changed - eligible)  # repairs
        assert a.heads.tolist() == b.heads.tolist()  # the tree is kept


@pytest.mark.parametrize("bad", ["0", "two", "-3"])
def test_budget_rejects_what_is_not_a_count_or_all(tmp_path: Path, bad: str) -> None:
    result = jabberwocky(tmp_path / "x.conllu", "--budget", bad)
    assert result.exit_code == 2
    assert "--budget" in result.output and not (tmp_path / "x.conllu").exists()


def test_paired_bootstrap_is_seeded_and_brackets_the_statistic() -> None:
    values = np.random.default_rng(1).normal(0.3, 0.1, size=200)

    def mean(idx: np.ndarray) -> dict[str, float]:
        return {"m": float(values[idx].mean())}

    a = paired_bootstrap(200, mean, resamples=300, seed=4)
    assert a == paired_bootstrap(200, mean, resamples=300, seed=4)
    assert a != paired_bootstrap(200, mean, resamples=300, seed=5)
    low, high = a["m"]
    assert low < values.mean() < high
    assert 0.01 < high - low < 0.06  # about 4 standard errors of 0.1 / sqrt(200)
    assert paired_bootstrap(200, mean, resamples=0, seed=4) == {}


@pytest.mark.needs("glove")
def test_evaluate_paired_plain_beside_jabberwocky(tmp_path: Path) -> None:
    probe = tmp_path / "dist"
    result = run(
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
        "2",
        "--quiet",
        "--threads",
        "1",
    )
    assert result.exit_code == 0, result.output
    jab = tmp_path / "j.conllu"
    assert jabberwocky(jab, "--budget", "all").exit_code == 0
    plain = tmp_path / "plain.conllu"
    write_conllu(read_conllu(TREEBANK)[:LIMIT], plain)

    single = tmp_path / "single.json"
    assert run("evaluate", str(plain), "--probe", str(probe), "--json", str(single)).exit_code == 0
    jab_single = tmp_path / "jab-single.json"
    assert (
        run("evaluate", str(jab), "--probe", str(probe), "--json", str(jab_single)).exit_code == 0
    )

    outs = []
    for name in ("a.json", "b.json"):
        out = tmp_path / name
        args = ("evaluate", str(jab), "--paired", str(plain), "--probe", str(probe))
        result = run(*args, "--resamples", "40", "--json", str(out), "--quiet")
        assert result.exit_code == 0, result.output
        assert "drop" in result.output and "95% CI" in result.output
        outs.append(out.read_text())
    assert outs[0] == outs[1]  # same seed, same file
    report = json.loads(outs[0])
    uuas = report["rows"]["dist"]["metrics"]["uuas"]
    plain_uuas = json.loads(single.read_text())["probes"]["dist"]["metrics"]["uuas"]
    jab_uuas = json.loads(jab_single.read_text())["probes"]["dist"]["metrics"]["uuas"]
    assert uuas["plain"] == pytest.approx(plain_uuas)
    assert uuas["perturbed"] == pytest.approx(jab_uuas)
    assert uuas["drop"] == pytest.approx(plain_uuas - jab_uuas)
    assert uuas["ci_low"] <= uuas["ci_high"]
    for base in ("path", "majority"):  # guessed from the length; the tree is kept
        assert report["rows"][base]["metrics"]["uuas"]["drop"] == pytest.approx(0.0)


def test_evaluate_paired_refuses_files_that_do_not_match(tmp_path: Path) -> None:
    text = TREEBANK.read_text(encoding="utf-8")
    short = tmp_path / "short.conllu"
    short.write_text(text.split("\n\n", 3)[0] + "\n\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["evaluate", str(TREEBANK), "--paired", str(short)])
    assert result.exit_code != 0
    assert "--paired" in result.output and str(TREEBANK) in result.output


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("reproduce_word_order", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_word_order_character_permutation_is_exact() -> None:
    from brittle.scorers.order import char_permutation
    from brittle.search.generators.order import TextReordering

    bench = _bench()
    words = ("the", "cat", "sat")
    r = TextReordering("s", "shuffle", "word", words, (2, 0, 1), "the cat sat", "sat the cat", 1, 0)
    perm = bench.char_permutation_of(r)
    original, moved = "the cat sat", "".join(" " * (i > 0) + words[i] for i in (2, 0, 1))
    assert "".join(original[i] for i in perm) == moved
    assert sorted(perm.tolist()) == list(range(len(original)))
    # the library's text matcher finds the same permutation for this text
    assert perm.tolist() == char_permutation(original, moved).tolist()
    sub = TextReordering(
        "s", "shuffle", "subword", ("play", "##ing", "cat"), (2, 0, 1), "", "", 1, 0
    )
    assert bench.unit_chars(sub) == [4, 3, 4]
