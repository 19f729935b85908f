"""Import every module that registers components, so registries are complete.

Modules register on import; listing or resolving names first calls
:func:`load_components`. Optional modules that fail to import (a missing optional
dependency) are skipped and reported by ``brittle resources``.
"""

from __future__ import annotations

import importlib

#: Modules whose import registers components.
COMPONENT_MODULES: tuple[str, ...] = (
    "brittle.search.strategies",
    "brittle.scorers.parsers",
    "brittle.search.constraints",
    "brittle.search.generators",
    "brittle.scorers.transformer_backend",
    "brittle.scorers.static_backend",
    "brittle.scorers.probe_tasks",
)

_loaded = False


def load_components() -> None:
    """Import all component modules once."""
    global _loaded
    if _loaded:
        return
    for name in COMPONENT_MODULES:
        importlib.import_module(name)
    _loaded = True
