"""brittle: worst-case, syntax-preserving perturbations of treebank sentences.

The Python API (:mod:`brittle.api`): :func:`attack`, :func:`perturb` and
:func:`evaluate` take the options of their commands and return the rows and the
summary in memory. They are imported on first use, so ``import brittle`` loads none of
the engine.

Subpackages:

- ``brittle.engine``: immutable records, CoNLL-U input/output, registries, resources, the run.
- ``brittle.search``: candidate generators, constraints and search strategies.
- ``brittle.scorers``: Numba kernels, parsers, representations, probes and their metrics.
- ``brittle.cli``: the ``brittle`` command.
"""

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from brittle.api import (
        AttackResults,
        EvaluationResults,
        PerturbResults,
        attack,
        evaluate,
        perturb,
    )

try:
    __version__ = version("brittle")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0"

__all__ = [
    "AttackResults",
    "EvaluationResults",
    "PerturbResults",
    "__version__",
    "attack",
    "evaluate",
    "perturb",
]
#: The names of :mod:`brittle.api` the package re-exports.
_API = frozenset(__all__) - {"__version__"}


def __getattr__(name: str) -> object:
    """The API's names, imported when first used (PEP 562)."""
    if name not in _API:
        raise AttributeError(f"module 'brittle' has no attribute {name!r}")
    from brittle import api  # defer: the API imports the engine, numpy and numba

    value: object = getattr(api, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})
