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

from brittle.engine.core.errors import ConfigError, OutputError

#: File name of the lock inside the locked directory.
LOCK_NAME = ".brittle.lock"


class DirectoryInUse(ConfigError):
    """Another live process holds the lock of a directory.

    Attributes:
        directory: the directory.
        holder: who holds it, as one phrase (see :func:`holder`).
        command: the holder's command (``brittle attack``), ``""`` when unknown.
    """

    def __init__(self, directory: Path, message: str) -> None:
        super().__init__(message)
        self.directory = directory
        self.holder = holder(directory)
        self.command = holder_command(directory)

    @classmethod
    def of(cls, directory: Path) -> DirectoryInUse:
        """The error for ``directory``, naming who holds it and what to do."""
        return cls(
            directory,
            f"{directory} is in use by {holder(directory)}; wait for it to finish "
            "or choose another --out",
        )


def _record(directory: Path) -> dict[str, object]:
    """What the lock file of ``directory`` says about its holder (empty: nothing)."""
    try:
        info = json.loads((directory / LOCK_NAME).read_text())
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def holder(directory: Path) -> str:
    """Who holds (or last held) the lock of ``directory``, as one phrase."""
    info = _record(directory)
    try:
        return f"{info['command']} (pid {info['pid']}, started {info['started']})"
    except KeyError:
        return "another brittle run"


def holder_command(directory: Path) -> str:
    """The command that holds (or last held) the lock of ``directory`` (``""``: unknown)."""
    command = _record(directory).get("command")
    return command if isinstance(command, str) else ""


def held(directory: Path) -> bool:
    """Whether a live process holds the lock of ``directory`` now (creates nothing)."""
    try:
        fd = os.open(directory / LOCK_NAME, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing releases the probe's own lock
    return False


@contextmanager
def locked_directory(directory: Path, command: str) -> Iterator[Path]:
    """Hold the exclusive lock of ``directory`` (created if needed) while the block runs.

    Raises:
        DirectoryInUse: another live process holds the lock (the message names it).
        OutputError: the directory or its lock file cannot be created.
    """
    path = directory / LOCK_NAME
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as err:
        raise OutputError.of(path, err) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise DirectoryInUse.of(directory) from None
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
    """Fail now, before a long set-up, when a live run holds the lock of ``directory``
    (nothing is created; :func:`locked_directory` takes the lock for the run).

    Raises:
        DirectoryInUse: another live process holds the lock (the message names it).
    """
    if held(directory):
        raise DirectoryInUse.of(directory)
