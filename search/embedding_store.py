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

Nothing read from the store is trusted blindly, since it outlives the runs that wrote it
and may be damaged (a disk error, a copy cut short, an edit): every row carries a
checksum of its text and vector, written with it and verified when it is read, and a
vector must be finite. A store with a row that fails either, or that is not an SQLite
database of this layout, is renamed aside (``NAME.damaged-<time>``) with one warning and
the run goes on as without a store, which it then builds anew.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import time
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

#: Bumped when the way stored vectors are computed (or the store's layout) changes.
STORE_VERSION = 3
#: The columns of the store's one table, in order.
_COLUMNS = ("text", "v", "sum")
#: SQLite's result codes for a file that is damaged or is no database.
_DAMAGED_CODES = frozenset({11, 26})  # SQLITE_CORRUPT, SQLITE_NOTADB


class DamagedStore(Exception):
    """What the store holds cannot be trusted (the message says why)."""


def row_sum(text: str, blob: bytes) -> bytes:
    """The checksum stored with a row: 8 bytes of SHA-256 over the text and the vector."""
    return hashlib.sha256(text.encode("utf-8") + b"\0" + blob).digest()[:8]


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
        self._opened: tuple[int, int] | None = None  # (device, inode) of the file opened
        self._broken = False

    def _connect(self) -> sqlite3.Connection | None:
        if self._broken:
            return None
        if self._db is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(self.path, timeout=30.0)
            except (OSError, sqlite3.Error) as err:
                self._give_up(err)
                return None
            self._db = db
            try:
                self._prepare(db)
            except (DamagedStore, sqlite3.Error) as err:
                self._failed(err)  # set aside (the next use starts a new store) or skipped
                return None
        return self._db

    def _prepare(self, db: sqlite3.Connection) -> None:
        """Create the table in a new file; check an existing file's layout."""
        db.execute("PRAGMA journal_mode=WAL")  # readers do not wait for a writer
        db.execute("CREATE TABLE IF NOT EXISTS vectors (text TEXT PRIMARY KEY, v BLOB, sum BLOB)")
        db.commit()
        columns = tuple(row[1] for row in db.execute("PRAGMA table_info(vectors)"))
        if columns != _COLUMNS:
            raise DamagedStore(f"its table has the columns {', '.join(columns)}")
        st = os.stat(self.path)
        self._opened = (st.st_dev, st.st_ino)

    def _failed(self, err: Exception) -> None:
        """A damaged store is set aside (a new one is built in its place); any other
        failure (a read-only home, a full disk, a lock held too long) skips the store."""
        code = getattr(err, "sqlite_errorcode", None)
        damaged = isinstance(err, DamagedStore) or (
            isinstance(err, sqlite3.DatabaseError)
            and isinstance(code, int)
            and code & 0xFF in _DAMAGED_CODES  # the primary code of an extended one
        )
        if damaged:
            self._set_aside(err)
        else:
            self._give_up(err)

    def _give_up(self, err: Exception) -> None:
        log.warning("embedding store %s unusable (%s); computing without it", self.path, err)
        self._broken = True
        self.close()

    def _set_aside(self, err: Exception) -> None:
        """Rename the damaged file (with its WAL files) to ``NAME.damaged-<time>`` so no
        later run reads it, and warn once; the store starts again empty."""
        opened = self._opened
        self.close()
        aside = self.path.with_name(
            f"{self.path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        )
        try:
            st = os.stat(self.path)
            if opened is None or (st.st_dev, st.st_ino) == opened:  # not a newer store
                for suffix in ("", "-wal", "-shm"):
                    source = self.path.with_name(self.path.name + suffix)
                    if source.exists():
                        os.replace(source, aside.with_name(aside.name + suffix))
        except OSError as move:
            self._give_up(move)
            return
        log.warning(
            "embedding store %s is damaged (%s); moved it to %s and computing the vectors again",
            self.path,
            err,
            aside,
        )

    def _vector(self, text: str, blob: object, checksum: object) -> NDArray[np.float32] | None:
        """A stored row's vector once it is checked (``None``: another length).

        Raises:
            DamagedStore: the row's checksum does not match, or the vector is not finite.
        """
        if not isinstance(blob, bytes) or not isinstance(checksum, bytes):
            raise DamagedStore(f"the row of {text[:40]!r} is not a vector with its checksum")
        if row_sum(text, blob) != checksum:
            raise DamagedStore(f"the row of {text[:40]!r} does not match its checksum")
        if len(blob) != 4 * self.dim:
            return None
        vec = np.frombuffer(blob, dtype=np.float32)
        if not np.isfinite(vec).all():
            raise DamagedStore(f"the vector of {text[:40]!r} is not finite")
        return vec.copy()

    def get_many(self, texts: Iterable[str]) -> dict[str, NDArray[np.float32]]:
        """The stored vectors of ``texts`` (those not stored are absent). A damaged store
        gives none (it is set aside)."""
        wanted = list(dict.fromkeys(texts))
        db = self._connect() if wanted else None
        if db is None:
            return {}
        found: dict[str, NDArray[np.float32]] = {}
        try:
            for start in range(0, len(wanted), _QUERY_ROWS):
                part = wanted[start : start + _QUERY_ROWS]
                marks = ",".join("?" * len(part))
                for text, blob, checksum in db.execute(
                    f"SELECT text, v, sum FROM vectors WHERE text IN ({marks})",
                    part,
                ):
                    vec = self._vector(text, blob, checksum)
                    if vec is not None:
                        found[text] = vec
        except (DamagedStore, sqlite3.Error) as err:
            self._failed(err)
            return {}
        return found

    def put_many(self, items: Mapping[str, NDArray[np.float32]]) -> None:
        """Store ``items`` (texts already stored keep their vector; a vector that is not
        finite is not stored)."""
        db = self._connect() if items else None
        if db is None:
            return
        rows = []
        for text, vector in items.items():
            vec = np.asarray(vector, dtype=np.float32)
            if np.isfinite(vec).all():
                blob = vec.tobytes()
                rows.append((text, blob, row_sum(text, blob)))
        try:
            with db:
                db.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?, ?)", rows)
        except sqlite3.Error as err:
            self._failed(err)

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
        self._opened = None
