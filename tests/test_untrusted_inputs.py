"""Shared probe directories and model files are data, never code; no command replaces
one of its own inputs.

The crafted files hold a pickle whose loading would write a marker file (the way a real
attack would run a shell command); every test checks that the marker never appears and
that the command ends with one ``error:`` line and exit status 2.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from brittle.cli.main import main
from brittle.engine.core.errors import ConfigError
from brittle.engine.core.overlap import Named, check_no_overlap, named
from brittle.scorers.probe import Probe, describe_probe
from brittle.scorers.static_backend import StaticVectors

TREEBANK = Path(__file__).resolve().parents[1] / "data" / "default.conllu"


class _Payload:
    """Pickles into a call that writes ``marker`` when unpickled."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (exec, (f"open({self.marker!r}, 'w').write('code ran')",))


def payload(marker: Path) -> bytes:
    return pickle.dumps(_Payload(marker))


def test_the_payload_does_run_when_unpickled(tmp_path: Path) -> None:
    """The check the other tests rely on: unpickling the payload writes the marker."""
    marker = tmp_path / "ran"
    pickle.loads(payload(marker))  # the point of this test
    assert marker.read_text() == "code ran"


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BRITTLE_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def one_error(result: Result) -> str:
    """The single ``error:`` line of a status-2 result."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


def copy_probe(probe: Path, where: Path) -> Path:
    target = where / "shared-probe"
    shutil.copytree(probe, target)
    return target


def point_at(probe: Path, model: str, backend: str) -> None:
    """Make ``probe.json`` name ``model`` (as a downloaded probe could)."""
    meta = json.loads((probe / "probe.json").read_text())
    meta["model"] = model
    meta["representation"]["model"] = model
    meta["representation"]["backend"] = backend
    meta["backend"] = {"backend": backend, "model": model, "pooling": "mean"}
    (probe / "probe.json").write_text(json.dumps(meta))


def evaluate(probe: Path) -> Result:
    return run("evaluate", TREEBANK, "--probe", probe, "--no-baselines", "--quiet")


ATTACK = ("--method", "shuffle", "--search", "sample", "--parser", "gold", "--quiet")


def attack(probe: Path, out: Path) -> Result:
    return run("attack", TREEBANK, "--probe", probe, *ATTACK, "--limit", "2", "--out", out)


# ------------------------------------------------------------------ static vectors
def test_a_pickled_kv_named_by_a_probe_runs_nothing(static_probe: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    probe = copy_probe(static_probe, tmp_path)
    (probe / "vectors.kv").write_bytes(payload(marker))
    point_at(probe, str(probe / "vectors.kv"), "static")
    line = one_error(evaluate(probe))
    assert "pickle" in line and "vectors.kv" in line
    line = one_error(attack(probe, tmp_path / "out"))
    assert "pickle" in line
    assert not marker.exists()


def test_a_pickled_kv_given_directly_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    for name in ("v.kv", "v.model", "v.pkl"):
        (tmp_path / name).write_bytes(payload(marker))
        with pytest.raises(ConfigError, match="pickle"):
            StaticVectors.from_file(tmp_path / name)
    args: list[str | Path] = [
        "--dev",
        TREEBANK,
        "--out",
        tmp_path / "p",
        "--model",
        tmp_path / "v.kv",
    ]
    line = one_error(run("train-probe", TREEBANK, *args, "--quiet"))
    assert "pickle" in line
    assert not marker.exists()


@pytest.mark.parametrize("binary", [False, True])
def test_a_header_announcing_more_vectors_than_the_file_holds(tmp_path: Path, binary: bool) -> None:
    path = tmp_path / ("v.bin" if binary else "v.txt")
    path.write_bytes(b"999999999 300\nthe 1 0 0\n")
    with pytest.raises(ConfigError, match="999999999 vectors of 300 numbers"):
        StaticVectors.from_file(path)


def test_word2vec_text_and_binary_still_load(tmp_path: Path) -> None:
    from gensim.models import KeyedVectors

    kv = KeyedVectors(2)
    kv.add_vectors(["the", "cat"], [[1.0, 0.0], [0.0, 1.0]])
    kv.save_word2vec_format(str(tmp_path / "v.bin"), binary=True)
    kv.save_word2vec_format(str(tmp_path / "v.txt"), binary=False)
    for name in ("v.bin", "v.txt"):
        got = StaticVectors.from_file(tmp_path / name).encode([["cat"]])[0]
        assert got.tolist() == [[0.0, 1.0]]


# ------------------------------------------------------------------ weights.pt
def test_a_pickle_in_place_of_the_weights_runs_nothing(static_probe: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    probe = copy_probe(static_probe, tmp_path)
    (probe / "weights.pt").write_bytes(payload(marker))
    line = one_error(evaluate(probe))
    assert "weights.pt: cannot load the probe weights" in line and "never loads" in line
    one_error(attack(probe, tmp_path / "out"))
    assert not marker.exists()


@pytest.mark.parametrize("content", [b"", b"not a torch file at all"])
def test_damaged_weights(static_probe: Path, tmp_path: Path, content: bytes) -> None:
    probe = copy_probe(static_probe, tmp_path)
    (probe / "weights.pt").write_bytes(content)
    with pytest.raises(ConfigError, match="cannot load the probe weights"):
        Probe.load(probe)
    assert "cannot load the probe weights" in one_error(evaluate(probe))


def test_weights_of_another_shape(static_probe: Path, tmp_path: Path) -> None:
    import torch

    probe = copy_probe(static_probe, tmp_path)
    torch.save({"nothing": torch.zeros(2)}, probe / "weights.pt")
    assert "cannot load the probe weights" in one_error(evaluate(probe))
    torch.save([1, 2, 3], probe / "weights.pt")
    assert "not a state_dict" in one_error(evaluate(probe))


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"format": "abc"}, "not a version number"),
        ({"format": None}, "not a version number"),
        ({"format": 99}, "newer brittle"),
        ({"spec": {"task": "root", "dim": -4}}, "dim must be between 1"),
        ({"spec": {"task": "root", "dim": 10**12}}, "dim must be between 1"),
        ({"spec": {"task": "root", "dim": 4, "margin": float("nan")}}, "margin"),
        ({"spec": {"task": "root", "dim": 4, "arch": "rnn"}}, "architecture"),
        ({"spec": {"task": "constituency", "dim": 4}}, "constituency"),
        ({"spec": "root"}, "not a probe description"),
        ({"representation": None}, "not a probe description"),
        ({"backend": {"backend": "static", "model": "v", "seed": "x"}}, "options are damaged"),
    ],
)
def test_damaged_probe_json(
    static_probe: Path, tmp_path: Path, change: dict[str, object], problem: str
) -> None:
    probe = copy_probe(static_probe, tmp_path)
    meta = json.loads((probe / "probe.json").read_text())
    meta.update(change)
    (probe / "probe.json").write_text(json.dumps(meta))
    assert problem in one_error(evaluate(probe))


def test_probe_json_that_is_not_json(static_probe: Path, tmp_path: Path) -> None:
    probe = copy_probe(static_probe, tmp_path)
    (probe / "probe.json").write_bytes(b"\xff\xfe not text")
    with pytest.raises(ConfigError, match="not a probe description"):
        describe_probe(probe)


# ------------------------------------------------------------------ transformer dirs
def transformer_dir(where: Path) -> Path:
    from repr_models import tiny_bert

    return tiny_bert(where / "model")


def test_a_pickled_checkpoint_in_a_model_directory_runs_nothing(
    static_probe: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    model = transformer_dir(tmp_path)
    for weights in model.glob("*.safetensors"):
        weights.unlink()
    (model / "pytorch_model.bin").write_bytes(payload(marker))
    probe = copy_probe(static_probe, tmp_path)
    point_at(probe, str(model), "transformer")
    line = one_error(evaluate(probe))
    assert "a pickle that holds more than tensors" in line
    assert not marker.exists()


@pytest.mark.parametrize("model_type", ["bert", "evil-bert"])
def test_custom_code_in_a_model_directory_never_runs(
    static_probe: Path, tmp_path: Path, model_type: str
) -> None:
    marker = tmp_path / "ran"
    model = transformer_dir(tmp_path)
    (model / "evil.py").write_text(f"open({str(marker)!r}, 'w').write('code ran')\n")
    config = json.loads((model / "config.json").read_text())
    config["auto_map"] = {"AutoModel": "evil.EvilModel", "AutoConfig": "evil.EvilConfig"}
    config["model_type"] = model_type
    (model / "config.json").write_text(json.dumps(config))
    probe = copy_probe(static_probe, tmp_path)
    point_at(probe, str(model), "transformer")
    assert "ships code of its own" in one_error(evaluate(probe))
    assert not marker.exists()


def test_report_of_a_directory_naming_a_crafted_probe_runs_nothing(
    static_probe: Path, tmp_path: Path
) -> None:
    """``report`` renders from results.jsonl and the treebank: it never opens probes."""
    marker = tmp_path / "ran"
    probe = copy_probe(static_probe, tmp_path)
    out = tmp_path / "out"
    assert attack(probe, out).exit_code == 0
    (probe / "vectors.kv").write_bytes(payload(marker))
    (probe / "weights.pt").write_bytes(payload(marker))
    point_at(probe, str(probe / "vectors.kv"), "static")
    result = run("report", out)
    assert result.exit_code == 0, result.output
    assert not marker.exists()


# ------------------------------------------------------------------ outputs vs inputs
@pytest.fixture
def treebank(tmp_path: Path) -> Path:
    directory = tmp_path / "d"
    directory.mkdir()
    path = directory / "x.conllu"
    shutil.copy(TREEBANK, path)
    return path


def unchanged(path: Path) -> bool:
    return path.read_bytes() == TREEBANK.read_bytes()


def test_perturb_never_replaces_its_treebank(treebank: Path) -> None:
    d = treebank.parent
    round_about = f"{d}/../{d.name}/{treebank.name}"
    for option in ("--out", "--report", "--html"):
        for name in (str(treebank), round_about):
            args = ["perturb", str(treebank), "--method", "shuffle", "--parser", "gold"]
            if option != "--out":
                args += ["--out", str(d / "other.conllu")]
            line = one_error(run(*args, option, name))
            assert f"{option} {name} is the input TREEBANK" in line
            assert unchanged(treebank)
    assert not (d / "other.conllu").exists()


def test_links_to_the_input_are_the_input(treebank: Path) -> None:
    d = treebank.parent
    (d / "hard.conllu").hardlink_to(treebank)
    (d / "soft.conllu").symlink_to(treebank)
    for link in ("hard.conllu", "soft.conllu"):
        line = one_error(run("stats", treebank, "--json", d / link))
        assert "is the input TREEBANKS" in line
    assert unchanged(treebank)


def test_stats_and_evaluate_never_replace_their_treebank(treebank: Path) -> None:
    assert "is the input TREEBANKS" in one_error(run("stats", treebank, "--json", treebank))
    line = one_error(run("evaluate", treebank, "--json", treebank, "--quiet"))
    assert "--json" in line and "is the input TREEBANK" in line
    assert unchanged(treebank)


def test_evaluate_never_writes_into_a_probe(static_probe: Path, tmp_path: Path) -> None:
    probe = copy_probe(static_probe, tmp_path)
    before = (probe / "probe.json").read_bytes()
    line = one_error(
        run("evaluate", TREEBANK, "--probe", probe, "--json", probe / "probe.json", "--quiet")
    )
    assert "is part of the input --probe" in line
    assert (probe / "probe.json").read_bytes() == before


def test_directory_outputs_never_hold_an_input(treebank: Path) -> None:
    d = treebank.parent
    line = one_error(
        run("train-probe", treebank, "--dev", treebank, "--out", d, "--model", "random:8")
    )
    assert f"--out {d} holds the input TREEBANKS" in line
    line = one_error(run("compare-methods", treebank, "--methods", "shuffle", "--out", d))
    assert "holds the input TREEBANK" in line
    assert unchanged(treebank)


def test_attack_never_replaces_its_treebank(static_probe: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert attack(static_probe, out).exit_code == 0
    chained = out / "adversarial.conllu"
    before = chained.read_bytes()
    result = run("attack", chained, "--probe", static_probe, *ATTACK, "--out", out, "--overwrite")
    assert "holds the input TREEBANK" in one_error(result)
    assert chained.read_bytes() == before


def test_report_never_replaces_the_treebank_it_replays(static_probe: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert attack(static_probe, out).exit_code == 0
    config = json.loads((out / "config.json").read_text())
    config["treebank"] = str(out / "adversarial.conllu")  # a directory edited by hand
    (out / "config.json").write_text(json.dumps(config))
    before = (out / "adversarial.conllu").read_bytes()
    assert "is the input the attack's treebank" in one_error(run("report", out))
    assert (out / "adversarial.conllu").read_bytes() == before


# ------------------------------------------------------------------ check_no_overlap
def test_overlap_rules(tmp_path: Path) -> None:
    src = tmp_path / "in.conllu"
    src.write_text("x")
    check_no_overlap(named("IN", src), named("--out", tmp_path / "out.conllu"))
    check_no_overlap(named("IN", src), named("--out", "-"))  # standard output
    check_no_overlap(named("IN", "-"), named("--out", tmp_path / "o"))  # standard input
    check_no_overlap(named("IN", src), named("--out", os.devnull))  # a device
    check_no_overlap(named("IN", src), named("--out", tmp_path / "sub"))  # a sibling dir
    check_no_overlap(named("IN", src), [*named("--a", tmp_path / "a"), *named("--b", "-")])
    with pytest.raises(ConfigError, match="is the input IN"):
        check_no_overlap(named("IN", src), named("--out", src))
    with pytest.raises(ConfigError, match="holds the input IN"):
        check_no_overlap(named("IN", src), named("--out", tmp_path))
    check_no_overlap(named("IN", tmp_path), named("--out", tmp_path / "new.json"))
    with pytest.raises(ConfigError, match="is part of the input IN"):
        check_no_overlap(named("IN", tmp_path), named("--out", src))
    with pytest.raises(ConfigError, match="--a and --b both name"):
        check_no_overlap([], [Named("--a", tmp_path / "o"), Named("--b", tmp_path / "o")])
    with pytest.raises(ConfigError, match="lies inside --a"):
        check_no_overlap([], [Named("--a", tmp_path), Named("--b", tmp_path / "o")])
    assert named("X", None) == [] and named("X", [None, src]) == [Named("X", src)]


# ------------------------------------------------------------------ strict options
@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["evaluate", TREEBANK, "--threads", "0"], "--threads"),
        (
            ["train-probe", TREEBANK, "--dev", TREEBANK, "--out", "p", "--threads", "-2"],
            "--threads",
        ),
        (["compare-methods", TREEBANK, "--budget", "1,,2", "--out", "o"], "got '1,,2'"),
        (["compare-methods", TREEBANK, "--budget", "2,x", "--out", "o"], "got '2,x'"),
    ],
)
def test_lenient_values_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str | Path], problem: str
) -> None:
    monkeypatch.chdir(tmp_path)
    assert problem in one_error(run(*args))
    assert not (tmp_path / "p").exists() and not (tmp_path / "o").exists()
