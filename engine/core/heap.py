"""Keeping Python's cyclic garbage collector off the models' objects.

Loading torch, transformers, spaCy and WordNet leaves about a million objects that
live as long as the process. Each full collection walks all of them: about 0.5 s on
a laptop CPU, nine times while an attack's models load and again during the search
(1.4 s of a 6 s start-up, measured on the demo's attack). :func:`loading` holds full
collections back while a block loads and then freezes what it loaded
(:func:`gc.freeze`), so later collections walk only the objects the run itself makes.
Young collections keep running throughout, so short-lived cycles are still freed.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["loading"]

#: A full-collection threshold no load reaches (young collections between two full
#: ones).
_NEVER = 1 << 30


@contextmanager
def loading() -> Iterator[None]:
    """No full collection while the block runs; on leaving it, every object alive is
    frozen out of later collections and the thresholds are restored (blocks may nest).

    The price: cyclic garbage made while loading and still uncollected at the end is
    never freed (what loading leaves behind is small against what it keeps). Freezing
    is process-wide: every object alive at the end of the block is frozen, the caller's
    too; a long-lived process that builds components many times and needs its own
    reference cycles collected can call :func:`gc.unfreeze` between builds.
    """
    young, middle, full = gc.get_threshold()
    gc.set_threshold(young, middle, _NEVER)
    try:
        yield
    finally:
        gc.freeze()
        gc.set_threshold(young, middle, full)
