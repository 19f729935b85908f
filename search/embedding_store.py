"""Sentence embeddings kept on disk: a text embedded once is read back by every later run.

coPOS chooses a word's sense by comparing the sentence with the gloss of each of the
word's WordNet senses (:mod:`brittle.search.generators.sense`), so a run embeds the
glosses of every sense of every word it may change: on a 2-core CPU that is most of the
time a coPOS attack spends on a treebank it has not seen, and the same glosses come back
in every run. :class:`EmbeddingStore` keeps them in one SQLite file per encoder setting
under the data home (``<data_home>/cache/embeddings/``), text -> float32 vector.

The vector of a text must not depend on the run that stored it, or a run's output would
depend on the runs before it: texts meant for the store are embedded one per forward
pass, with no padding beside other texts (a padded batch changes the last bits), and the
store is keyed by everything else that changes them: the model's files, the precision,
the device type and torch's thread count. A store that cannot be opened or written (a
read-only home, a full disk) is used as far as it works and otherwise skipped with a
warning: the vectors are then computed, the same ones.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from brittle.engine.core.resources.home import data_home

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["EmbeddingStore", "store_path"]

log = logging.getLogger(__name__)

#: Texts per ``SELECT ... IN`` query (SQLite's default limit of bound parameters is 999).
_QUERY_ROWS = 500

#: Bumped when the way stored vectors are computed changes.
STORE_VERSION = 2


def store_path(model_dir: Path, *, dtype: str, device: str, threads: int) -> Path:
    """The store of one encoder setting: a file named by a hash of the model's files
    (names, sizes, modification times), the precision, the device type (``cpu``,
    ``cuda``: not the index) and torch's intra-op thread count."""
    files = []
    if model_dir.is_dir():
        for f in sorted(model_dir.iterdir()):
            if f.is_file():
                st = f.stat()
                files.append([f.name, st.st_size, st.st_mtime_ns])
    key = {
        "version": STORE_VERSION,
        "model": str(model_dir.resolve()),
        "files": files,
        "dtype": dtype,
        "device": device.split(":")[0],
        "threads": threads,
    }
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return data_home() / "cache" / "embeddings" / f"{digest}.sqlite"


class EmbeddingStore:
    """Text -> float32 vector, in one SQLite file (created on first write).

    Args:
        path: the file (see :func:`store_path`).
        dim: the vector length; stored rows of another length are ignored.
    """

    def __init__(self, path: Path, dim: int) -> None:
        self.path = path
        self.dim = dim
        self._db: sqlite3.Connection | None = None
        self._broken = False

    def _connect(self) -> sqlite3.Connection | None:
        if self._broken:
            return None
        if self._db is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(self.path, timeout=30.0)
                db.execute("PRAGMA journal_mode=WAL")  # readers do not wait for a writer
                db.execute("CREATE TABLE IF NOT EXISTS vectors (text TEXT PRIMARY KEY, v BLOB)")
                db.commit()
            except (OSError, sqlite3.Error) as err:
                self._give_up(err)
                return None
            self._db = db
        return self._db

    def _give_up(self, err: Exception) -> None:
        log.warning("embedding store %s unusable (%s); computing without it", self.path, err)
        self._broken = True
        if self._db is not None:
            self._db.close()
            self._db = None

    def get_many(self, texts: Iterable[str]) -> dict[str, NDArray[np.float32]]:
        """The stored vectors of ``texts`` (those not stored are absent)."""
        wanted = list(dict.fromkeys(texts))
        db = self._connect() if wanted else None
        if db is None:
            return {}
        found: dict[str, NDArray[np.float32]] = {}
        try:
            for start in range(0, len(wanted), _QUERY_ROWS):
                part = wanted[start : start + _QUERY_ROWS]
                marks = ",".join("?" * len(part))
                for text, blob in db.execute(
                    f"SELECT text, v FROM vectors WHERE text IN ({marks})",
                    part,
                ):
                    vec = np.frombuffer(blob, dtype=np.float32)
                    if vec.shape == (self.dim,):
                        found[text] = vec.copy()
        except sqlite3.Error as err:
            self._give_up(err)
            return {}
        return found

    def put_many(self, items: Mapping[str, NDArray[np.float32]]) -> None:
        """Store ``items`` (texts already stored keep their vector)."""
        db = self._connect() if items else None
        if db is None:
            return
        rows = [(t, np.asarray(v, dtype=np.float32).tobytes()) for t, v in items.items()]
        try:
            with db:
                db.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?)", rows)
        except sqlite3.Error as err:
            self._give_up(err)

    def __len__(self) -> int:
        db = self._connect()
        if db is None:
            return 0
        (count,) = db.execute("SELECT COUNT(*) FROM vectors").fetchone()
        return int(count)

    def close(self) -> None:
        """Close the file (it reopens on next use)."""
        if self._db is not None:
            self._db.close()
            self._db = None
