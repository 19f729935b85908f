"""Error types. Every error a user or the environment can cause is a :class:`BrittleError`.

The CLI prints a ``BrittleError`` as one line, ``error: <message>``, on stderr (no
traceback) and exits with status 2: bad input, a bad option, a missing resource and an
output that cannot be written alike. Status 1 is kept for internal errors (bugs).
"""

from __future__ import annotations

import os
from pathlib import Path


class BrittleError(Exception):
    """Base class of every error brittle raises on purpose."""


class BrittleInputError(BrittleError):
    """Bad input data: names the file, the 1-based line number and the problem."""

    def __init__(self, path: str | Path | None, line: int | None, problem: str) -> None:
        self.path = str(path) if path is not None else "<input>"
        self.line = line
        self.problem = problem
        where = self.path if line is None else f"{self.path}:{line}"
        super().__init__(f"{where}: {problem}")


class ResourceMissingError(BrittleError):
    """A model or data resource could not be found.

    The message says what is missing, where brittle looked and the one command that
    provides it.
    """

    def __init__(self, resource: str, looked: list[str] | tuple[str, ...], fix: str) -> None:
        self.resource = resource
        self.looked = tuple(looked)
        self.fix = fix
        places = "; ".join(self.looked) if self.looked else "nowhere"
        super().__init__(f"{resource} is not available (looked in: {places}). Fix: {fix}")


class ConfigError(BrittleError):
    """An invalid option or combination of options."""


class OutputError(BrittleError, OSError):
    """An output could not be written: ``cannot write PATH: REASON``.

    Raised by :mod:`brittle.engine.core.atomic` for every :class:`OSError` met while
    writing (a read-only file system, a full disk, a file-size limit, a directory where
    a file belongs or a file where a directory belongs...). It is an :class:`OSError`
    too, with ``errno`` and ``filename`` set when known, so code that catches
    ``OSError`` around a write keeps working.

    Attributes:
        path: the output as the user named it (``<stdout>`` for standard output).
        reason: what went wrong, e.g. the system's ``No space left on device``.
    """

    def __init__(self, path: str | os.PathLike[str], reason: str, errno: int | None = None) -> None:
        self.path = os.fspath(path)
        self.reason = reason
        if errno is None:
            super().__init__(self.message)
            self.filename = self.path
        else:
            super().__init__(errno, reason, self.path)

    @property
    def message(self) -> str:
        """The one-line message, ``cannot write PATH: REASON``."""
        return f"cannot write {self.path}: {self.reason}"

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[type[OutputError], tuple[str, str, int | None]]:
        return (type(self), (self.path, self.reason, self.errno))

    @classmethod
    def of(cls, path: str | os.PathLike[str], err: OSError) -> OutputError:
        """The error for ``err`` met while writing ``path`` (itself if already one)."""
        if isinstance(err, OutputError):
            return err
        return cls(path, err.strerror or str(err), err.errno)
