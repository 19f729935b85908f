"""Errors raised by the scorers on bad input.

Each is a :class:`brittle.engine.core.errors.BrittleError` (so the CLI prints it as one line)
and a :class:`ValueError` (so plain ``except ValueError`` callers keep working).
"""

from __future__ import annotations

from brittle.engine.core.errors import BrittleError

__all__ = ["InvalidTreeError", "LengthMismatchError", "NotAPermutationError", "ScorerInputError"]


class ScorerInputError(BrittleError, ValueError):
    """An array or sequence handed to a scorer has the wrong shape, type or content."""


class NotAPermutationError(ScorerInputError):
    """A text, token sequence or index array is not a reordering of the original."""


class InvalidTreeError(ScorerInputError):
    """A HEAD array does not describe a tree (out-of-range head or a cycle)."""


class LengthMismatchError(ScorerInputError):
    """Two sequences that must have the same length do not."""
