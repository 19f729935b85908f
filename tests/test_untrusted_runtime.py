"""Mistakes of the user and of the environment at run time: each is one line and exit 2.

Devices, model names and model directories, cluster addresses, termination signals and
their left-overs, damaged caches, report pages and attack directories in use. Every file
a test needs is written by the test.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import pickle
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from browser import Browser, find_chromium
from click.testing import CliRunner, Result

from brittle.cli.group import Terminated, terminate_as_interrupt
from brittle.cli.main import main
from brittle.engine.core import resources
from brittle.engine.core.atomic import remove_stale_temporaries, stale_temporaries
from brittle.engine.core.errors import BrittleInputError, ConfigError, ResourceMissingError
from brittle.engine.core.lock import locked_directory
from brittle.engine.core.resources.loading import from_pretrained, refuse_custom_code
from brittle.engine.reports.html_report import content_policy, static_page
from brittle.engine.reports.report import PLOTS
from brittle.engine.runs import shards
from brittle.engine.runs.shards import parse_ray_address
from brittle.search.embedding_store import EmbeddingStore, row_sum

from support import FIXTURES, missing_sentence_models

TREEBANK = FIXTURES / "mwt_empty.conllu"


def one_error_line(result: Result) -> str:
    """The one ``error:`` line of a run that ended with exit status 2."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1, result.output
    return errors[0]


def perturb(tmp_path: Path, *extra: str) -> Result:
    """``brittle perturb`` of the small fixture treebank, without quality models."""
    args = ["perturb", str(TREEBANK), "--parser", "gold", "--no-quality", "--quiet"]
    return CliRunner().invoke(main, [*args, "--out", str(tmp_path / "out.conllu"), *extra])


# --------------------------------------------------------------- devices


def cuda_available() -> bool:
    import torch

    return bool(torch.cuda.is_available())


@pytest.mark.parametrize(
    ("device", "message"),
    [
        ("nope", "unknown device 'nope'"),
        ("cpu:1", "unknown device 'cpu:1'"),
        pytest.param(
            "cuda",
            "device 'cuda' is not available",
            marks=pytest.mark.skipif(cuda_available(), reason="this machine has CUDA"),
        ),
    ],
)
def test_perturb_checks_the_device_before_anything_loads(
    tmp_path: Path, device: str, message: str
) -> None:
    line = one_error_line(perturb(tmp_path, "--method", "copos", "--device", device))
    assert message in line
    assert not (tmp_path / "out.conllu").exists()


def test_perturb_config_keeps_the_device_normalised() -> None:
    from brittle.engine.perturb.perturb_run import PerturbConfig

    assert PerturbConfig(method="shuffle", device=" CPU ").device == "cpu"
    assert PerturbConfig(method="shuffle").device is None


# --------------------------------------------------------------- models: hub and directory


def test_a_hub_id_not_in_the_local_cache_is_missing_without_contacting_the_hub(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import huggingface_hub.file_download as download

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("the hub was contacted")

    monkeypatch.setattr(download, "hf_hub_download", no_network)
    monkeypatch.setattr(download, "get_hf_file_metadata", no_network)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    with pytest.raises(ResourceMissingError) as info:
        resources.resolve_model("some-org/model")
    message = str(info.value)
    assert "'some-org/model'" in message and "hf download some-org/model" in message
    result = perturb(tmp_path, "--method", "coco", "--lm", "some-org/model")
    assert "'some-org/model'" in one_error_line(result)


def test_a_hub_id_in_the_local_cache_gives_its_snapshot_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from huggingface_hub import constants

    repo = tmp_path / "hub" / "models--some-org--model"
    snapshot = repo / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    assert resources.resolve_model("some-org/model") == str(snapshot)


def write_bert_dir(directory: Path) -> Path:
    """A tiny BERT masked LM's configuration and tokenizer, without weights."""
    from transformers import BertConfig, BertTokenizer

    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "."]
    directory.mkdir(parents=True)
    BertTokenizer(vocab={w: i for i, w in enumerate(words)}).save_pretrained(directory)
    config = BertConfig(
        vocab_size=len(words),
        hidden_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=8,
        architectures=["BertForMaskedLM"],
    )
    config.save_pretrained(directory)
    return directory


class _WritesAFile:
    """Unpickling this runs code: it writes the file ``target``."""

    def __init__(self, target: Path) -> None:
        self.target = target

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (exec, (f"open({str(self.target)!r}, 'w').write('pwned')",))


def test_pickled_weights_that_run_code_are_refused_not_run(tmp_path: Path) -> None:
    model = write_bert_dir(tmp_path / "model")
    target = tmp_path / "pwned.txt"
    (model / "pytorch_model.bin").write_bytes(pickle.dumps(_WritesAFile(target)))
    from transformers import AutoModelForMaskedLM

    with pytest.raises(BrittleInputError) as info:
        from_pretrained(AutoModelForMaskedLM.from_pretrained, model, weights=True)
    assert "pickle" in str(info.value) and str(model) in str(info.value)
    assert not target.exists()
    line = one_error_line(perturb(tmp_path, "--method", "coco", "--lm", str(model)))
    assert str(model) in line and "pickle" in line
    assert not target.exists()


def test_a_model_directory_with_its_own_code_is_refused(tmp_path: Path) -> None:
    model = write_bert_dir(tmp_path / "model")
    config = json.loads((model / "config.json").read_text())
    config["auto_map"] = {"AutoModelForMaskedLM": "modeling_evil.EvilModel"}
    (model / "config.json").write_text(json.dumps(config))
    (model / "modeling_evil.py").write_text(
        f"open({str(tmp_path / 'pwned.txt')!r}, 'w').write('pwned')\n"
    )
    with pytest.raises(BrittleInputError) as info:
        refuse_custom_code(model)
    assert "auto_map" in str(info.value)
    line = one_error_line(perturb(tmp_path, "--method", "coco", "--lm", str(model)))
    assert "config.json" in line and "auto_map" in line
    assert not (tmp_path / "pwned.txt").exists()


def test_a_model_directory_without_weights_is_one_line(tmp_path: Path) -> None:
    model = write_bert_dir(tmp_path / "model")
    line = one_error_line(perturb(tmp_path, "--method", "coco", "--lm", str(model)))
    assert str(model) in line and "cannot be loaded as a model" in line


# --------------------------------------------------------------- Ray addresses


@pytest.mark.parametrize(
    ("text", "target"),
    [
        (None, None),
        ("local", None),
        ("AUTO", "auto"),
        ("10.0.0.1:6379", "10.0.0.1:6379"),
        ("head-node.example.org:6379", "head-node.example.org:6379"),
        ("[::1]:6379", "[::1]:6379"),
        ("ray://head:10001", "ray://head:10001"),
    ],
)
def test_ray_addresses_that_are_well_formed(text: str | None, target: str | None) -> None:
    assert parse_ray_address(text).target == target


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("garbage", "no HOST:PORT"),
        ("256.1.1.1:99999", "port '99999' is not a number from 1 to 65535"),
        ("256.1.1.1:6379", "'256.1.1.1' is not an IPv4 address"),
        ("head:0", "port '0'"),
        ("head:", "port ''"),
        ("http://head:8265", "'http://head' is not a host name"),
        ("ray://", "no HOST:PORT"),
        ("[nope]:6379", "'nope' is not an IPv6 address"),
    ],
)
def test_malformed_ray_addresses_are_one_line(tmp_path: Path, text: str, why: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_ray_address(text)
    assert why in str(info.value)
    line = one_error_line(perturb(tmp_path, "--method", "shuffle", "--ray", text))
    assert why in line and "expected auto, local, HOST:PORT or ray://HOST:PORT" in line


def free_port() -> int:
    """A TCP port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_ray_address_where_nothing_answers_fails_at_once(tmp_path: Path) -> None:
    address = f"127.0.0.1:{free_port()}"
    started = time.monotonic()
    line = one_error_line(perturb(tmp_path, "--method", "shuffle", "--ray", address))
    assert f"nothing answers at {address}" in line
    assert time.monotonic() - started < 30


def test_a_ray_address_that_answers_but_is_no_ray_head_fails_in_seconds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shards, "RAY_CONNECT_TIMEOUT", 0.5)
    with socket.socket() as silent:  # accepts connections (the kernel does), says nothing
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        address = f"127.0.0.1:{silent.getsockname()[1]}"
        line = one_error_line(perturb(tmp_path, "--method", "shuffle", "--ray", address))
    assert f"{address} answers, but not as a Ray head" in line


def test_ray_auto_without_a_cluster_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    services = pytest.importorskip("ray._private.services")

    def none_running(address: str) -> str:
        raise ConnectionError("Could not find any running Ray instance.")

    monkeypatch.setattr(services, "canonicalize_bootstrap_address_or_die", none_running)
    with pytest.raises(ConfigError) as info:
        shards._running_cluster(parse_ray_address("auto"))
    assert "no Ray cluster found on this machine" in str(info.value)


def test_a_real_ray_head_passes_the_check() -> None:
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        pytest.skip("Ray is already initialised in this process")
    ray.init(
        num_cpus=1,
        include_dashboard=False,
        log_to_driver=False,
        object_store_memory=80 * 1024 * 1024,
    )
    try:
        host, _, port = ray.get_runtime_context().gcs_address.rpartition(":")
        shards.check_ray_answers(parse_ray_address(f"{host}:{port}"))
        shards.check_ray_answers(parse_ray_address(f"127.0.0.1:{port}"))
    finally:
        ray.shutdown()


# --------------------------------------------------------------- SIGTERM and left-overs


def test_sigterm_is_raised_as_an_interruption_and_the_handler_restored() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt) as info, terminate_as_interrupt():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises before this ends
    assert isinstance(info.value, Terminated) and "SIGTERM" in str(info.value)
    assert signal.getsignal(signal.SIGTERM) is before


def test_only_the_atomic_writers_temporaries_of_the_named_outputs_are_swept(
    tmp_path: Path,
) -> None:
    stale = [
        ".adversarial.conllu.k3x_9ab2.tmp",  # a file being written
        ".report.html-a1b2c3d4.tmp",  # a directory being built
        ".summary.json.4242-123456789.bak",  # a replaced file kept to undo a set
    ]
    kept = [
        "adversarial.conllu",
        ".adversarial.conllu.k3x_9ab2.tmp.keep",
        ".adversarial.conllu.TOOLONG12.tmp",
        ".notes.txt.k3x_9ab2.tmp",  # not one of the outputs named
        "adversarial.conllu.k3x_9ab2.tmp",
    ]
    for name in [*stale, *kept]:
        if name.endswith("-a1b2c3d4.tmp"):
            (tmp_path / name).mkdir()
            (tmp_path / name / "part").write_text("x")
        else:
            (tmp_path / name).write_text("x")
    names = ("adversarial.conllu", "report.html", "summary.json")
    assert [p.name for p in stale_temporaries(tmp_path, names)] == sorted(stale)
    removed = remove_stale_temporaries(tmp_path, names)
    assert sorted(p.name for p in removed) == sorted(stale)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kept)


_TERMINATED_ATTACK = """
import sys, time
sys.path.insert(0, {tests!r})
from test_attack import components
import brittle.cli.attack as cli_attack
from brittle.cli.group import Terminated, terminate_as_interrupt
from brittle.cli.main import main
from brittle.engine.attack.run import AttackRun

cli_attack.build_components = lambda config, **options: components(config.search)
search_chunk = AttackRun._search_chunk

def slow(self, searches, done):
    rows = search_chunk(self, searches, done)
    print("searched", flush=True)
    time.sleep(60)
    return rows

AttackRun._search_chunk = slow
main({args!r}, prog_name="brittle")
"""


@pytest.mark.needs("spacy-model", "glove")
def test_sigterm_during_an_attack_says_how_to_resume_and_resume_sweeps_left_overs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_attack import components
    from test_attack_reliability import make_probe

    import brittle.cli.attack as cli_attack

    probes = [make_probe(tmp_path / "dist"), make_probe(tmp_path / "pos", "pos")]
    out = tmp_path / "out"
    args = ["attack", str(TREEBANK), "--parser", "gold", "--budget", "2", "--out", str(out)]
    for probe in probes:
        args += ["--probe", str(probe)]
    script = _TERMINATED_ATTACK.format(tests=str(Path(__file__).parent), args=args)
    run = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    try:
        assert run.stdout is not None and run.stdout.readline().strip() == "searched"
        run.send_signal(signal.SIGTERM)
        _, stderr = run.communicate(timeout=60)
    finally:
        run.kill()
    assert run.returncode == 130, stderr
    assert "interrupted after 3/3 sentences; rerun with --resume to finish" in stderr
    assert "Traceback" not in stderr
    assert not list(out.glob(".adversarial.conllu.*.tmp"))  # removed on the way out
    # What kill -9 leaves: the temporaries of outputs being written.
    left = [
        out / ".adversarial.conllu.ab12cd34.tmp",
        out / PLOTS / ".clean_vs_perturbed.png.x_y_z_12.tmp",
    ]
    (out / PLOTS).mkdir(exist_ok=True)
    for path in left:
        path.write_text("half written")
    (out / "my-notes.tmp").write_text("not brittle's")
    monkeypatch.setattr(
        cli_attack, "build_components", lambda config, **options: components(config.search)
    )
    resumed = CliRunner().invoke(main, [*args, "--resume"])
    assert resumed.exit_code == 0, resumed.output
    assert not any(path.exists() for path in left)
    assert (out / "my-notes.tmp").exists() and (out / "adversarial.conllu").exists()


# --------------------------------------------------------------- brittle report


@pytest.fixture
def attacked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An attack directory of the fixture treebank (stand-in probes and components)."""
    from test_attack import components
    from test_attack_reliability import make_probe

    import brittle.cli.attack as cli_attack

    monkeypatch.setattr(
        cli_attack, "build_components", lambda config, **options: components(config.search)
    )
    out = tmp_path / "out"
    args = ["attack", str(TREEBANK), "--parser", "gold", "--budget", "2", "--out", str(out)]
    args += ["--probe", str(make_probe(tmp_path / "dist"))]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return out


def report(out: Path) -> Result:
    return CliRunner().invoke(main, ["report", str(out)])


@pytest.mark.needs("spacy-model", "glove")
def test_report_refuses_a_directory_an_attack_is_running_in(attacked: Path) -> None:
    before = (attacked / "summary.json").read_bytes()
    with locked_directory(attacked, "brittle attack"):
        line = one_error_line(report(attacked))
    assert f"{attacked} is in use by brittle attack (pid {os.getpid()}" in line
    assert "an attack is running there" in line
    assert (attacked / "summary.json").read_bytes() == before
    assert report(attacked).exit_code == 0  # released


@pytest.mark.needs("spacy-model", "glove")
def test_report_refuses_a_budget_of_a_multi_budget_attack_that_is_running(
    attacked: Path,
) -> None:
    budget = attacked.parent / "multi" / "tau=2"
    budget.parent.mkdir()
    attacked.rename(budget)
    with locked_directory(budget.parent, "brittle attack"):
        line = one_error_line(report(budget))
    assert f"{budget.parent} is in use by brittle attack" in line
    assert "an attack is running there" in line


@pytest.mark.needs("spacy-model", "glove")
@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_report_refuses_a_damage_that_is_no_finite_number(attacked: Path, value: str) -> None:
    results = attacked / "results.jsonl"
    lines = results.read_text().splitlines(keepends=True)
    row = json.loads(lines[1])
    row["damage"] = float(value.replace("Infinity", "inf"))
    lines[1] = json.dumps(row, sort_keys=True) + "\n"
    results.write_text("".join(lines))
    line = one_error_line(report(attacked))
    assert line.startswith(f"error: {results}:2: ") and "damage" in line


# --------------------------------------------------------------- the embedding store


def tamper(path: Path, text: str, vector: np.ndarray, *, checksum: bool) -> None:
    """Overwrite ``text``'s stored vector, with a matching checksum or keeping the old."""
    blob = np.asarray(vector, np.float32).tobytes()
    with sqlite3.connect(path) as db:
        if checksum:
            db.execute(
                "UPDATE vectors SET v = ?, sum = ? WHERE text = ?",
                (blob, row_sum(text, blob), text),
            )
        else:
            db.execute("UPDATE vectors SET v = ? WHERE text = ?", (blob, text))
    db.close()


def damaged_files(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.damaged-*"))


def warnings_about(caplog: pytest.LogCaptureFixture, word: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if word in r.getMessage()]


@pytest.mark.parametrize(
    ("vector", "checksum"),
    [
        ([np.nan, np.nan, np.nan], True),  # not finite, though its checksum matches
        ([np.inf, 0.0, 1.0], True),
        ([0.25, -3.5, 7.0], False),  # another vector under the old checksum
    ],
)
def test_a_damaged_store_is_set_aside_once_and_built_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, vector: list[float], checksum: bool
) -> None:
    path = tmp_path / "e.sqlite"
    store = EmbeddingStore(path, dim=3)
    store.put_many({"a": np.array([1, 2, 3], np.float32), "b": np.array([4, 5, 6], np.float32)})
    store.close()
    tamper(path, "b", np.array(vector), checksum=checksum)
    with caplog.at_level(logging.WARNING):
        later = EmbeddingStore(path, dim=3)
        assert later.get_many(["a", "b"]) == {}  # nothing of it is trusted
        later.put_many({"a": np.array([1, 2, 3], np.float32)})  # computed again
        assert later.get_many(["a", "b"])["a"].tolist() == [1, 2, 3]
        again = EmbeddingStore(path, dim=3)  # a later run: no second warning
        assert set(again.get_many(["a", "b"])) == {"a"}
    assert len(warnings_about(caplog, "damaged")) == 1
    assert len(damaged_files(path)) == 1


def test_a_file_that_is_no_store_is_set_aside(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "e.sqlite"
    path.write_bytes(b"\x00garbage that is not an SQLite database" * 100)
    with caplog.at_level(logging.WARNING):
        assert EmbeddingStore(path, dim=2).get_many(["a"]) == {}
        fresh = EmbeddingStore(path, dim=2)
        fresh.put_many({"a": np.zeros(2, np.float32)})
        assert set(EmbeddingStore(path, dim=2).get_many(["a"])) == {"a"}
    assert len(warnings_about(caplog, "damaged")) == 1
    assert [p.read_bytes()[:1] for p in damaged_files(path)] == [b"\x00"]


def test_a_store_of_another_layout_is_set_aside(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "e.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE vectors (text TEXT PRIMARY KEY, v BLOB)")
        db.execute(
            "INSERT INTO vectors VALUES ('a', ?)", (np.full(2, np.nan, np.float32).tobytes(),)
        )
    db.close()
    with caplog.at_level(logging.WARNING):
        assert EmbeddingStore(path, dim=2).get_many(["a"]) == {}
    assert "columns text, v" in " ".join(warnings_about(caplog, "damaged"))
    assert len(damaged_files(path)) == 1


def test_vectors_that_are_not_finite_are_not_stored(tmp_path: Path) -> None:
    store = EmbeddingStore(tmp_path / "e.sqlite", dim=2)
    store.put_many({"a": np.array([np.nan, 1], np.float32), "b": np.ones(2, np.float32)})
    assert len(store) == 1


@pytest.mark.skipif(missing_sentence_models() is not None, reason="no bundled encoder")
def test_a_tampered_store_gives_the_vectors_of_a_clean_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from brittle.search.sentence_models import SentenceEncoder

    monkeypatch.setenv("BRITTLE_HOME", str(tmp_path / "home"))
    glosses = ["a piece of furniture for one person to sit on", "a legislative position"]
    first = SentenceEncoder(device="cpu")
    clean = first.embed_alone(glosses)
    path = first._store().path
    first._store().close()
    tamper(path, glosses[1], np.full(clean.shape[1], np.nan), checksum=True)
    with caplog.at_level(logging.WARNING):
        later = SentenceEncoder(device="cpu").embed_alone(glosses)
    assert np.array_equal(later, clean)
    assert len(warnings_about(caplog, "damaged")) == 1


# --------------------------------------------------------------- report pages: CSP

_RECORD_VIOLATIONS = (
    "window.__violations = [];"
    "document.addEventListener('securitypolicyviolation',"
    " e => window.__violations.push(e.violatedDirective));"
)
_INJECTED = (
    "<script>document.body.dataset.pwned = 'script'</script>"
    "<style>body { display: none }</style>"
    '<img src="data:," onerror="document.body.dataset.pwned = \'handler\'">'
)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    binary = find_chromium()
    if binary is None:
        pytest.skip("no Chromium found (install Debian's `chromium` package)")
    with Browser(binary) as browser:
        # Runs before the page's own script, and the page's policy does not apply to it.
        browser.send("Page.addScriptToEvaluateOnNewDocument", source=_RECORD_VIOLATIONS)
        yield browser


@pytest.mark.needs("spacy-model", "glove")
def test_every_page_names_its_script_and_style_by_hash(probed_attack: Path, tmp_path: Path) -> None:
    css = "\nbody { color: red }\n"
    js = "\nvar x = 1;\n"
    policy = content_policy(css, js)
    assert "unsafe-inline" not in policy.split("script-src")[1]
    assert (
        f"script-src 'sha256-{base64.b64encode(hashlib.sha256(js.encode()).digest()).decode()}'"
        in policy
    )
    page = (probed_attack / "report.html").read_text()
    assert "script-src 'unsafe-inline'" not in page and "script-src 'sha256-" in page
    assert "script-src" not in static_page("t", "<p>x</p>")  # no script at all


@pytest.mark.needs("spacy-model", "glove")
def test_the_report_pages_run_under_their_policy(
    chromium: Browser, probed_attack: Path, perturb_page: Path
) -> None:
    chromium.open(probed_attack / "report.html")
    assert chromium.evaluate("document.querySelectorAll('#sentence-table tbody tr').length") > 0
    k = chromium.evaluate(
        "Array.from(document.querySelectorAll('#sentence-table tbody tr'))"
        ".findIndex(tr => Array.from(tr.cells).some(td => td.textContent === 'success'))"
    )
    assert k >= 0
    chromium.evaluate(f"document.querySelectorAll('#sentence-table tbody tr')[{k}].click()")
    chromium.wait_until("!document.getElementById('sentence-view').hidden")
    swatch = "getComputedStyle(document.querySelector('#sentence-view .legend .sw'))"
    assert chromium.evaluate(f"{swatch}.borderTopStyle") in ("solid", "dashed", "dotted")
    assert chromium.evaluate("window.__violations") == []
    chromium.open(perturb_page)
    assert chromium.evaluate("window.__violations") == []
    assert chromium.errors == []


@pytest.mark.needs("spacy-model", "glove")
def test_injected_script_style_and_handlers_do_not_run(
    chromium: Browser, probed_attack: Path, tmp_path: Path
) -> None:
    page = (probed_attack / "report.html").read_text()
    injected = tmp_path / "report.html"
    injected.write_text(page.replace("</body>", _INJECTED + "</body>"))
    chromium.open(injected)  # the page's own script still runs: it sets data-ready
    time.sleep(0.2)
    assert chromium.evaluate("document.body.dataset.pwned || ''") == ""
    assert chromium.evaluate("getComputedStyle(document.body).display") == "block"
    violations = set(chromium.evaluate("window.__violations"))
    assert {"script-src-elem", "style-src-elem", "script-src-attr"} <= violations
    static = tmp_path / "static.html"
    static.write_text(static_page("t", "<p>x</p>").replace("</body>", _INJECTED + "</body>"))
    chromium.open(static, ready="document.readyState === 'complete'")
    time.sleep(0.2)
    assert chromium.evaluate("document.body.dataset.pwned || ''") == ""
    assert chromium.evaluate("getComputedStyle(document.body).margin") == "0px"  # its sheet
