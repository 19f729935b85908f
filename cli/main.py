"""The ``brittle`` command: a thin click layer over typed library functions.

Each sub-command lives in its own module of this package and registers itself on the
group of :mod:`brittle.cli.group`; importing this module imports every one of them, so
:data:`main` (the console entry point) knows every sub-command.
"""

from __future__ import annotations

from brittle.cli import (  # noqa: F401  (each import registers its sub-command)
    agreement,
    attack,
    bench,
    compare_methods,
    cut,
    demo,
    evaluate,
    frontier,
    grade,
    listing,
    perturb,
    report,
    resources,
    stats,
    train_probe,
)
from brittle.cli.group import main

__all__ = ["main"]
