"""Versions of brittle and of the packages that decide its numbers, for every report."""

from __future__ import annotations

import platform
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

#: Packages whose versions every run report records.
PACKAGES: tuple[str, ...] = ("brittle", "numpy", "numba", "torch", "transformers", "spacy", "nltk")


def versions(
    packages: Sequence[str] = PACKAGES, *, python: bool = False, missing: str | None = None
) -> dict[str, str]:
    """``{package: version}`` of ``packages``.

    Args:
        packages: distribution names, in the order they are recorded.
        python: also record the interpreter's version under ``python`` (first).
        missing: what to record for a package that is not installed (``None``: leave it
            out).
    """
    out: dict[str, str] = {"python": platform.python_version()} if python else {}
    for pkg in packages:
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            if missing is not None:
                out[pkg] = missing
    return out
