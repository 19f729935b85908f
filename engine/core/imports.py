"""Importing a library without the optional extras its own import drags in.

Some libraries import another one at their top level only to offer something brittle
never uses, when it happens to be installed: NLTK imports ``scipy.stats`` for its
collocation measures (1.2 of its 1.5 s import), lemminflect imports spaCy to register
token extensions (0.7 s, and a run may not need spaCy before its first result).
:func:`hidden` makes those imports fail inside a block, as if the extra were not
installed, which both libraries handle; the extra imports normally afterwards.
"""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib.machinery import ModuleSpec
from types import ModuleType

__all__ = ["hidden"]


class _Refuse(importlib.abc.MetaPathFinder):
    """Fails the import of the named modules and of their submodules."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        if any(fullname == n or fullname.startswith(n + ".") for n in self.names):
            raise ModuleNotFoundError(f"{fullname} is hidden while another library imports")
        return None


@contextmanager
def hidden(*names: str) -> Iterator[None]:
    """Inside the block, importing a module of ``names`` (or one of its submodules) that
    is not imported yet raises ``ModuleNotFoundError``; nothing else changes. Modules
    already imported stay importable."""
    finder = _Refuse([n for n in names if n not in sys.modules])
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
