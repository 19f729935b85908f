"""Mistakes and progress of ``train-probe``, ``evaluate`` and ``demo``, in-process.

Every option mistake is one ``error:`` line and exit status 2, found before a treebank is
read or a model loads (the loaders are replaced by functions that fail the test). Output
under CliRunner is not a terminal, so progress shows as plain lines, never as bars.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from repr_models import tiny_bert
from rich.console import Console

import brittle.cli.demo as demo_cli
import brittle.cli.probe_progress as probe_progress
import brittle.engine.demo as demo_engine
import brittle.engine.evaluate.evaluation as evaluation
import brittle.engine.probes.probe_jobs as probe_jobs
import brittle.engine.probes.probe_sweep as probe_sweep
import brittle.engine.probes.probe_vectors as probe_vectors
import brittle.scorers.representations as representations
import brittle.scorers.transformer_backend as transformer_backend
from brittle.cli.main import main
from brittle.cli.probe_progress import RichReporter
from brittle.engine.core.errors import ConfigError
from brittle.engine.probes.probe_training import EpochLog
from brittle.scorers.alignment import Pooling
from brittle.scorers.probe import Probe
from brittle.scorers.representations import BackendRequest, check_device
from brittle.scorers.transformer_backend import TransformerEncoder

TREEBANK = Path(__file__).resolve().parents[1] / "data" / "default.conllu"
BAR = "━"  # rich's bar character (tables use it too: look on stderr only)


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BRITTLE_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_bert(tmp_path_factory.mktemp("reliability") / "bert")


@pytest.fixture
def no_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if a model, a probe or a treebank is loaded, or training starts."""

    def fail(*args: object, **kwargs: object) -> None:
        pytest.fail("loaded or trained although the options were wrong")

    monkeypatch.setattr(representations, "open_backend", fail)
    monkeypatch.setattr(probe_jobs, "open_backend", fail)
    monkeypatch.setattr(probe_jobs, "read_treebanks", fail)
    monkeypatch.setattr(probe_jobs, "train_probe", fail)
    monkeypatch.setattr(probe_vectors, "reopen_backend", fail)
    monkeypatch.setattr(probe_sweep, "open_backend", fail)
    monkeypatch.setattr(probe_sweep, "read_treebanks", fail)
    monkeypatch.setattr(evaluation, "read_treebanks", fail)
    monkeypatch.setattr(transformer_backend, "_load", fail)
    monkeypatch.setattr(Probe, "load", fail)
    monkeypatch.setattr(demo_engine, "run_train_job", fail)


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def one_error_line(result: Result, *needles: str) -> str:
    """The result is exit status 2 with a single ``error:`` line holding ``needles``."""
    assert result.exit_code == 2, result.output
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def train_args(out: Path, *extra: str, model: str = "random:8") -> list[str]:
    return [
        "train-probe",
        str(TREEBANK),
        "--dev",
        str(TREEBANK),
        "--out",
        str(out),
        "--model",
        model,
        "--threads",
        "1",
        *extra,
    ]


def _cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def _mps() -> bool:
    import torch

    return bool(torch.backends.mps.is_available())


# ------------------------------------------------------------------ train-probe mistakes
DEVICE_CASES = [
    pytest.param(
        ["--device", "cuda"],
        ("'cuda'", "not available", "--device cpu"),
        marks=pytest.mark.skipif(_cuda(), reason="this machine has CUDA"),
        id="cuda-without-cuda",
    ),
    pytest.param(
        ["--device", "cuda:0"],
        ("'cuda:0'", "not available"),
        marks=pytest.mark.skipif(_cuda(), reason="this machine has CUDA"),
        id="cuda-index-without-cuda",
    ),
    pytest.param(
        ["--device", "mps"],
        ("'mps'", "not available"),
        marks=pytest.mark.skipif(_mps(), reason="this machine has MPS"),
        id="mps-without-mps",
    ),
    pytest.param(["--device", "gpu"], ("unknown device 'gpu'", "cpu"), id="unknown-device"),
    pytest.param(["--device", "cuda:x"], ("unknown device",), id="malformed-device"),
]

OPTION_CASES = [
    *DEVICE_CASES,
    pytest.param(["--rank", "0"], ("--rank must be at least 1", "got 0"), id="rank-0"),
    pytest.param(["--rank", "-3"], ("--rank must be at least 1",), id="rank-negative"),
    pytest.param(["--hidden", "0"], ("--hidden must be at least 1",), id="hidden-0"),
    pytest.param(["--epochs", "0"], ("--epochs must be at least 1",), id="epochs-0"),
    pytest.param(["--batch-size", "0"], ("--batch-size must be at least 1",), id="batch-0"),
    pytest.param(["--patience", "0"], ("--patience must be at least 1",), id="patience-0"),
    pytest.param(["--lr", "-0.01"], ("--lr", "positive", "-0.01"), id="lr-negative"),
    pytest.param(["--lr", "0"], ("--lr", "positive"), id="lr-zero"),
    pytest.param(["--margin", "-1"], ("--margin must not be negative",), id="margin-negative"),
    pytest.param(["--quiet", "--verbose"], ("--quiet and --verbose",), id="quiet-and-verbose"),
    pytest.param(["--task", "constituency"], ("unknown probe task",), id="unknown-task"),
    pytest.param(
        ["--layer", "all", "--rank", "0"], ("--rank must be at least 1",), id="sweep-rank-0"
    ),
    pytest.param(["--layer", "1,x"], ("not a layer number",), id="bad-layer-list"),
]


@pytest.mark.parametrize(("extra", "needles"), OPTION_CASES)
def test_train_probe_option_mistakes(
    tmp_path: Path, bert_dir: Path, no_loading: None, extra: list[str], needles: tuple[str, ...]
) -> None:
    out = tmp_path / "probe"
    one_error_line(run(*train_args(out, *extra, model=str(bert_dir))), *needles)
    assert not out.exists()


def test_train_probe_out_is_a_file(tmp_path: Path, bert_dir: Path, no_loading: None) -> None:
    out = tmp_path / "probe.txt"
    out.write_text("not a probe\n")
    one_error_line(run(*train_args(out, model=str(bert_dir))), "--out", "is a file")
    assert out.read_text() == "not a probe\n"


def test_train_probe_out_under_a_file(tmp_path: Path, bert_dir: Path, no_loading: None) -> None:
    parent = tmp_path / "file"
    parent.write_text("x")
    one_error_line(run(*train_args(parent / "probe", model=str(bert_dir))), "is a file")


def test_train_probe_out_holds_other_files(
    tmp_path: Path, bert_dir: Path, no_loading: None
) -> None:
    out = tmp_path / "results"
    out.mkdir()
    (out / "notes.txt").write_text("keep me\n")
    line = one_error_line(run(*train_args(out, model=str(bert_dir))), "--out", "not a probe")
    assert "non-empty" in line
    assert (out / "notes.txt").read_text() == "keep me\n"


@pytest.mark.parametrize("which", ["train", "dev"])
def test_train_probe_missing_treebanks(
    tmp_path: Path, bert_dir: Path, no_loading: None, which: str
) -> None:
    missing = tmp_path / "absent.conllu"
    train = missing if which == "train" else TREEBANK
    dev = missing if which == "dev" else TREEBANK
    args = ["train-probe", str(train), "--dev", str(dev), "--out", str(tmp_path / "p")]
    label = "training treebank" if which == "train" else "--dev treebank"
    one_error_line(run(*args, "--model", str(bert_dir)), label, str(missing), "not found")


def test_train_probe_treebank_is_a_directory(tmp_path: Path, no_loading: None) -> None:
    args = ["train-probe", str(tmp_path), "--dev", str(TREEBANK), "--out", str(tmp_path / "p")]
    one_error_line(run(*args), "is a directory")


def test_existing_probe_or_empty_directory_is_accepted(tmp_path: Path) -> None:
    out = tmp_path / "probe"
    out.mkdir()  # empty: fine
    first = run(*train_args(out, "--epochs", "1", "--quiet"))
    assert first.exit_code == 0, first.output
    again = run(*train_args(out, "--epochs", "1", "--quiet"))  # a probe: replaced
    assert again.exit_code == 0, again.output
    assert (out / "probe.json").is_file()


# ------------------------------------------------------------------ evaluate mistakes
@pytest.mark.parametrize(("extra", "needles"), DEVICE_CASES)
def test_evaluate_device_mistakes(
    tmp_path: Path, no_loading: None, extra: list[str], needles: tuple[str, ...]
) -> None:
    args = ["evaluate", str(TREEBANK), "--probe", str(tmp_path / "probe"), *extra]
    one_error_line(run(*args), *needles)


def test_evaluate_other_mistakes(tmp_path: Path, no_loading: None) -> None:
    absent = tmp_path / "absent.conllu"
    one_error_line(run("evaluate", str(absent)), "treebank", "not found")
    one_error_line(
        run("evaluate", str(TREEBANK), "--majority-from", str(absent)),
        "--majority-from",
        "not found",
    )
    one_error_line(run("evaluate", str(TREEBANK), "--json", str(tmp_path)), "--json", "directory")
    one_error_line(run("evaluate", str(TREEBANK), "--quiet", "--verbose"), "--quiet and --verbose")


# ------------------------------------------------------------------ demo mistakes
def test_demo_mistakes_before_training(tmp_path: Path, no_loading: None) -> None:
    one_error_line(run("demo", "--quiet", "--verbose"), "--quiet and --verbose")
    one_error_line(run("demo", "--limit", "0"), "--limit")
    report = tmp_path / "report.txt"
    report.write_text("x")
    one_error_line(run("demo", "--out", str(report)), "--out", "is a file")


# ------------------------------------------------------------------ library checks
def test_check_device() -> None:
    assert check_device(None) is None
    assert check_device(" CPU ") == "cpu"
    with pytest.raises(ConfigError, match="unknown device"):
        check_device("cpu:1")
    if not _cuda():
        with pytest.raises(ConfigError, match="not available"):
            check_device("cuda")
    with pytest.raises(ConfigError, match=r"not available|unknown"):
        TransformerEncoder("unused", device="cuda:99")


# ------------------------------------------------------------------ progress
class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def plain_reporter(**kwargs: object) -> tuple[RichReporter, io.StringIO, FakeClock]:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=False, width=200)
    clock = FakeClock()
    reporter = RichReporter(console=console, clock=clock, **kwargs)  # type: ignore[arg-type]
    return reporter, buffer, clock


def log(epoch: int) -> EpochLog:
    return EpochLog(epoch, 1.0 / epoch, 2.0 / epoch, 1e-3, 0.5)


def test_plain_progress_line_every_30_seconds() -> None:
    reporter, buffer, clock = plain_reporter()
    assert not reporter.live  # not a terminal: no bars
    with reporter:
        reporter.start("vectors: train", 100)
        for _ in range(10):
            clock.now += 10.0
            reporter.advance(10)
        reporter.finish()
    lines = buffer.getvalue().splitlines()
    # a line at 30 s, 60 s and 90 s, then the closing line
    assert lines[:3] == [
        "vectors: train: 30/100 (30%) · 30.0 s",
        "vectors: train: 60/100 (60%) · 1m00s",
        "vectors: train: 90/100 (90%) · 1m30s",
    ]
    assert lines[3] == "vectors: train: done in 1m40s, 100/100 (100%)"
    assert len(lines) == 4 and BAR not in buffer.getvalue()


def test_plain_progress_every_n_items_and_quiet_stages() -> None:
    reporter, buffer, _ = plain_reporter(every=25)
    with reporter:
        reporter.start("probe x", 100)
        for _ in range(100):
            reporter.advance(1)
        reporter.start("short", 3)  # finishes the previous stage
        reporter.advance(3)
    lines = buffer.getvalue().splitlines()
    assert [line.split(":")[1].split("·")[0].strip() for line in lines[:4]] == [
        "25/100 (25%)",
        "50/100 (50%)",
        "75/100 (75%)",
        "100/100 (100%)",
    ]
    assert lines[4].startswith("probe x: done in")
    assert len(lines) == 5  # the short stage printed nothing: no heartbeat was due


def test_quiet_and_verbose_reporters() -> None:
    quiet, quiet_out, clock = plain_reporter(quiet=True, every=1)
    with quiet:
        quiet.start("training", 3)
        for epoch in (1, 2, 3):
            clock.now += 100
            quiet.epoch(log(epoch))
            quiet.advance(1)
        quiet.finish()
        quiet.note("trained something")
    assert quiet_out.getvalue() == ""

    default, default_out, _ = plain_reporter()
    with default:
        default.start("training", 3)
        for epoch in (1, 2, 3):
            default.epoch(log(epoch))
            default.advance(1)
        default.finish()
        default.note("trained something")
    assert default_out.getvalue().splitlines() == ["trained something"]

    verbose, verbose_out, _ = plain_reporter(verbose=True)
    with verbose:
        verbose.start("training", 3)
        for epoch in (1, 2, 3):
            verbose.epoch(log(epoch))
            verbose.advance(1)
        verbose.finish()
    lines = verbose_out.getvalue().splitlines()
    assert [line.split()[:2] for line in lines[:3]] == [
        ["epoch", "1"],
        ["epoch", "2"],
        ["epoch", "3"],
    ]
    assert lines[3].startswith("training: done in") and "epoch 3, dev loss 0.6667" in lines[3]


def test_notes_keep_brackets() -> None:
    reporter, buffer, _ = plain_reporter()
    reporter.note("trained [bold]x[/] on a[1]")
    assert buffer.getvalue() == "trained [bold]x[/] on a[1]\n"


def test_train_probe_progress_in_logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    default = run(*train_args(tmp_path / "a", "--epochs", "3"))
    assert default.exit_code == 0, default.output
    assert BAR not in default.stderr and "epoch   1" not in default.output
    trained = [line for line in default.output.splitlines() if line.startswith("trained ")]
    assert len(trained) == 1 and "best epoch" in trained[0]

    verbose = run(*train_args(tmp_path / "b", "--epochs", "3", "--verbose"))
    assert verbose.exit_code == 0, verbose.output
    assert BAR not in verbose.stderr
    assert sum(line.lstrip().startswith("epoch ") for line in verbose.output.splitlines()) == 3
    assert "vectors: train" in verbose.output and "training distance (linear): done" in (
        verbose.output
    )

    quiet = run(*train_args(tmp_path / "c", "--epochs", "3", "--quiet"))
    assert quiet.exit_code == 0, quiet.output
    assert not quiet.stderr  # results on stdout, nothing else
    assert "uuas" in quiet.stdout and "trained " not in quiet.output

    # a long stage in a log: plain lines while it runs (every advance once 0 s are due)
    monkeypatch.setattr(probe_progress, "PLAIN_INTERVAL", 0.0)
    beat = run(*train_args(tmp_path / "d", "--epochs", "3"))
    assert beat.exit_code == 0, beat.output
    assert BAR not in beat.stderr
    assert "training distance (linear): 1/3 (33%) · epoch 1, dev loss" in beat.output
    assert "training distance (linear): done in" in beat.output


def test_evaluate_progress_flags(tmp_path: Path) -> None:
    probe = tmp_path / "probe"
    assert run(*train_args(probe, "--epochs", "1", "--quiet")).exit_code == 0
    quiet = run("evaluate", str(TREEBANK), "--probe", str(probe), "--quiet")
    assert quiet.exit_code == 0, quiet.output
    assert not quiet.stderr
    verbose = run("evaluate", str(TREEBANK), "--probe", str(probe), "--verbose")
    assert verbose.exit_code == 0, verbose.output
    assert BAR not in verbose.stderr
    assert "vectors: random:8" in verbose.stderr and "baselines: done in" in verbose.stderr


# ------------------------------------------------------------------ demo output
@pytest.fixture
def small_demo(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[list[str]]:
    """The demo trained on a tiny 5-layer BERT (its layer -5), with the attack replaced
    by a stub; yields the calls the stub received."""
    bert5 = tiny_bert(tmp_path_factory.mktemp("demo") / "bert5", layers=5)
    real_open = probe_jobs.open_backend

    def open_tiny(request: BackendRequest, *, backend: str = "auto") -> object:
        return real_open(replace(request, model=str(bert5)), backend=backend)

    attacks: list[str] = []

    def fake_attack(*args: object, **kwargs: object) -> dict[str, object]:
        attacks.append("quiet" if kwargs.get("quiet") else "bar")
        return {}

    monkeypatch.setattr(probe_jobs, "open_backend", open_tiny)
    monkeypatch.setattr(demo_cli, "run_with_progress", fake_attack)
    monkeypatch.setattr(demo_cli, "print_summary", lambda summary: None)
    monkeypatch.setattr(demo_cli, "print_presets", lambda summaries: None)
    yield attacks


def test_demo_prints_one_line_per_probe(tmp_path: Path, small_demo: list[str]) -> None:
    result = run("demo", "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    trained = [line for line in lines if line.startswith("trained ")]
    assert len(trained) == 2, result.output
    assert "distance probe" in trained[0] and "pos probe" in trained[1]
    assert not any(line.lstrip().startswith("epoch ") for line in lines)
    assert BAR not in result.stderr
    assert len(lines) <= 5, result.output  # header, 2 probes, reports line
    assert small_demo == ["bar", "bar"]  # the coPOS attack, then the tree preset's

    again = run("demo", "--out", str(tmp_path / "out"), "--quiet")
    assert again.exit_code == 0, again.output
    assert "reusing cached probes" in again.output
    assert small_demo == ["bar", "bar", "quiet", "quiet"]


def test_demo_verbose_and_quiet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_demo: list[str]
) -> None:
    verbose = run("demo", "--out", str(tmp_path / "out"), "--verbose")
    assert verbose.exit_code == 0, verbose.output
    epochs = [line for line in verbose.output.splitlines() if line.lstrip().startswith("epoch ")]
    assert len(epochs) > 2
    assert sum(line.startswith("trained ") for line in verbose.output.splitlines()) == 2

    monkeypatch.setenv("BRITTLE_HOME", str(tmp_path / "fresh"))  # train them again
    quiet = run("demo", "--out", str(tmp_path / "out"), "--quiet")
    assert quiet.exit_code == 0, quiet.output
    assert not quiet.stderr
    lines = quiet.output.splitlines()
    assert [line for line in lines if line.startswith("trained ")] == [
        "trained 2 probe(s): minilm-5-distance, minilm-5-pos"
    ]
    assert small_demo == ["bar", "bar", "quiet", "quiet"]


# ------------------------------------------------------------------ long sentences
class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def transformers_log() -> Iterator[Records]:
    handler = Records()
    logger = logging.getLogger("transformers")
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)


def test_long_sentence_gives_no_length_warning(tmp_path: Path, transformers_log: Records) -> None:
    from transformers import AutoTokenizer

    directory = tiny_bert(tmp_path / "bert16", max_positions=16)
    tokenizer = AutoTokenizer.from_pretrained(directory)
    tokenizer.model_max_length = 16  # the tokenizer knows the model's limit, as real ones do
    tokenizer.save_pretrained(directory)
    words = (["the", "cat", "sat", "on", "the", "mat", "."] * 100)[:700]

    # the warning exists: a plain tokenizer call on the sentence gives it
    AutoTokenizer.from_pretrained(directory)(words, is_split_into_words=True)
    assert any("Token indices sequence length" in m for m in transformers_log.messages)
    transformers_log.messages.clear()

    encoder = TransformerEncoder(str(directory), device="cpu")
    assert encoder.max_length == 16
    poolings: tuple[Pooling, ...] = ("mean", "first")
    for pooling in poolings:
        vectors = encoder.with_pooling(pooling).encode([words, words[:5]])
        assert vectors[0].shape == (700, encoder.dim)
    encoder.alignment = "offsets"
    assert encoder.encode([words])[0].shape == (700, encoder.dim)
    assert not [m for m in transformers_log.messages if "sequence length" in m]
