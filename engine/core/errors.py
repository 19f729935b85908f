"""Error types. Every error a user can cause is a :class:`BrittleError`.

The CLI prints a ``BrittleError`` as one readable message (no traceback) and exits with
status 2 for bad input and 1 for a missing resource.
"""

from __future__ import annotations

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
