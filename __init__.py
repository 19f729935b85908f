"""brittle: worst-case, syntax-preserving perturbations of treebank sentences.

Subpackages:

- ``brittle.engine``: immutable records, CoNLL-U input/output, registries, resources, the run.
- ``brittle.search``: candidate generators, constraints and search strategies.
- ``brittle.scorers``: Numba kernels, parsers, representations, probes and their metrics.
- ``brittle.cli``: the ``brittle`` command.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("brittle")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0"

__all__ = ["__version__"]
