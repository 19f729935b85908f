"""An exclusive lock on an output directory: one run writes into it at a time.

The lock is ``fcntl.flock`` on ``OUT/.brittle.lock``, which the kernel releases when
the holding process ends however it ends, so the lock of a killed run is stale by
construction and the next run simply takes it over. The file records who holds it
(pid, command, start time) so that a refused run can say so.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from brittle.engine.core.errors import ConfigError

#: File name of the lock inside the locked directory.
LOCK_NAME = ".brittle.lock"


def holder(directory: Path) -> str:
    """Who holds (or last held) the lock of ``directory``, as one phrase."""
    try:
        info = json.loads((directory / LOCK_NAME).read_text())
        return f"{info['command']} (pid {info['pid']}, started {info['started']})"
    except (OSError, ValueError, KeyError, TypeError):
        return "another brittle run"


@contextmanager
def locked_directory(directory: Path, command: str) -> Iterator[Path]:
    """Hold the exclusive lock of ``directory`` (created if needed) while the block runs.

    Raises:
        ConfigError: another live process holds the lock (the message names it).
    """
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConfigError(
                f"{directory} is in use by {holder(directory)}; wait for it to finish "
                "or choose another --out"
            ) from None
        record = {
            "command": command,
            "pid": os.getpid(),
            "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(record) + "\n").encode(), 0)
        yield directory
    finally:
        os.close(fd)  # closing releases the lock


def check_unlocked(directory: Path) -> None:
    """Fail now, before a long set-up, when a live run holds the lock of ``directory``.

    Nothing is created: a directory without a lock file is free. The lock is only
    tried, and released at once; :func:`locked_directory` takes it for the run.

    Raises:
        ConfigError: another live process holds the lock (the message names it).
    """
    try:
        fd = os.open(directory / LOCK_NAME, os.O_RDONLY)
    except OSError:  # no lock file (or no directory): nobody holds it
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise ConfigError(
            f"{directory} is in use by {holder(directory)}; wait for it to finish "
            "or choose another --out"
        ) from None
    finally:
        os.close(fd)
