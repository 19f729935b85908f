"""Random command lines, valid and not: no traceback, exit 0 or 2, no half-written output.

Hypothesis draws, for each command, a mix of good and bad values for its options and
paths (missing files, directories where files go, malformed treebanks, unknown names,
out-of-range numbers). Whatever it draws, brittle must answer with exit status 0 or 2
and, on 2, one ``error:`` line and nothing new at the output paths (no temporary files
left either). Model loads are replaced by the attack tests' stand-in components, so a
run that gets past the checks finishes in milliseconds; the checks themselves are real.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_attack import components as fake_components
from test_attack_reliability import make_probe

import brittle.cli.attack as cli_attack
from brittle.cli.main import main
from brittle.engine.attack import AttackComponents, AttackConfig

from support import FIXTURES

GOOD = FIXTURES / "mwt_empty.conllu"
FUZZ = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture
def place(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scratch directory with good and bad inputs, shared by the examples of a test."""
    root = tmp_path_factory.mktemp("fuzz")
    (root / "bad.conllu").write_text("# sent_id = x\n1\tword\n\n")
    (root / "empty.conllu").write_text("")
    (root / "a_dir").mkdir()
    (root / "a_file").write_text("keep me\n")
    make_probe(root / "probe_distance")
    make_probe(root / "probe_pos", "pos")
    return root


@pytest.fixture
def no_models(monkeypatch: pytest.MonkeyPatch) -> None:
    def build(
        config: AttackConfig,
        *,
        reuse: AttackComponents | None = None,
        device: str | None = None,
        remember_tables: bool = False,
    ) -> AttackComponents:
        return fake_components(config.search)

    monkeypatch.setattr(cli_attack, "build_components", build)


def treebanks(root: Path) -> st.SearchStrategy[str]:
    return st.sampled_from(
        [
            str(GOOD),
            str(root / "bad.conllu"),
            str(root / "empty.conllu"),
            str(root / "a_dir"),
            str(root / "missing.conllu"),
        ]
    )


def outputs(root: Path, name: str) -> st.SearchStrategy[str]:
    return st.sampled_from(
        [
            str(root / "new" / name),
            str(root / "a_dir"),
            str(root / "a_file"),
            str(root / "no" / "such" / "dir" / name),
        ]
    )


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (the probes aside) with its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "probe_" not in str(p) and p.name != ".brittle.lock"
    }


def check(root: Path, args: list[str]) -> None:
    before = snapshot(root)
    result = CliRunner().invoke(main, args)
    event(f"exit {result.exit_code}")
    assert result.exit_code in (0, 2), (args, result.output, result.exception)
    assert "Traceback" not in result.output, args
    after = snapshot(root)
    assert not [k for k in after if k.endswith(".tmp")], (args, sorted(after))
    if result.exit_code == 2:
        errors = [line for line in result.output.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 or "Usage:" in result.output, (args, result.output)
        assert after == before, (args, result.output)  # nothing written, nothing destroyed
    new = root / "new"
    if new.exists():
        shutil.rmtree(new)  # each example starts from the same place


@FUZZ
@given(data=st.data())
def test_stats(place: Path, data: st.DataObject) -> None:
    args = ["stats", data.draw(treebanks(place))]
    if data.draw(st.booleans()):
        args += ["--json", data.draw(outputs(place, "stats.json"))]
    if data.draw(st.booleans()):
        args.append("--skip-invalid")
    check(place, args)


@FUZZ
@given(data=st.data())
def test_perturb(place: Path, data: st.DataObject) -> None:
    args = ["perturb", data.draw(treebanks(place)), "--parser", "gold"]
    args += ["--method", data.draw(st.sampled_from(["shuffle", "neighbour-flip", "nope"]))]
    args += ["--budget", data.draw(st.sampled_from(["1", "2", "0", "-1", "x"]))]
    args += ["--out", data.draw(outputs(place, "out.conllu"))]
    if data.draw(st.booleans()):
        args += ["--report", data.draw(outputs(place, "report.json"))]
    if data.draw(st.booleans()):
        args += ["--html", data.draw(outputs(place, "page.html"))]
    if data.draw(st.booleans()):
        args += ["--limit", data.draw(st.sampled_from(["0", "1", "3", "-2"]))]
    for spec in data.draw(
        st.lists(st.sampled_from(["budget", "syntax:0.3", "syntax:x", "nope"]), max_size=2)
    ):
        args += ["--constraint", spec]
    check(place, args)


@pytest.mark.needs("spacy-model", "glove")
@FUZZ
@given(data=st.data())
def test_attack(place: Path, no_models: None, data: st.DataObject) -> None:
    args = ["attack", data.draw(treebanks(place)), "--parser", "gold"]
    probes = data.draw(
        st.lists(
            st.sampled_from(
                [place / "probe_distance", place / "probe_pos", place / "nowhere", place / "a_file"]
            ),
            min_size=1,
            max_size=2,
        )
    )
    for p in probes:
        args += ["--probe", str(p)]
    args += ["--search", data.draw(st.sampled_from(["beam", "greedy", "sample", "nope"]))]
    args += ["--method", data.draw(st.sampled_from(["copos", "shuffle", "nope"]))]
    args += ["--budget", data.draw(st.sampled_from(["1", "1,2", "0", "x"]))]
    args += ["--out", data.draw(outputs(place, "attack"))]
    if data.draw(st.booleans()):
        args += ["--limit", data.draw(st.sampled_from(["0", "1", "2", "-1"]))]
    if data.draw(st.booleans()):
        args += ["--objective", data.draw(st.sampled_from(["distance", "pos.pos_acc", "nope"]))]
    for spec in data.draw(
        st.lists(st.sampled_from(["budget", "syntax:0.3", "pos:2", "nope"]), max_size=2)
    ):
        args += ["--constraint", spec]
    check(place, args)


@FUZZ
@given(data=st.data())
def test_report(place: Path, data: st.DataObject) -> None:
    target = data.draw(st.sampled_from([place / "a_dir", place / "a_file", place / "missing"]))
    check(place, ["report", str(target)])
