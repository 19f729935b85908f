"""Flat memory over long runs: the heap's free pages go back to the system between
rounds of model work.

A model's forward pass allocates its activations (batch x padded tokens x hidden size,
a few hundred kilobytes to tens of megabytes each) and frees them when it returns, and
their shapes change from batch to batch. glibc's ``malloc`` serves a block that large
with its own ``mmap`` only at first: each time such a block is freed, the size above
which it does so (``M_MMAP_THRESHOLD``, 128 KiB) rises to that block's size, up to 32
MiB. After the first forward pass the activations therefore come from the heap, and
the small long-lived objects allocated between two passes (cached rows, parses,
results) settle among them, so the heap's top is never free and the heap is never
trimmed: memory that is free but not returned grows with the number of sentences.

:func:`release_free_memory` calls ``malloc_trim(0)``, which hands back to the system
every whole page of free memory in every arena, wherever it lies (``madvise``), not
only at the top. The attack calls it after each lock-step round of model work and at
each chunk's start, so what a round freed is returned before the next one, and the
next round's buffers come from pages the heap already has mapped.

An earlier version fixed the mmap threshold at 128 KiB instead, so that every large
block was mapped and unmapped on its own. That kept memory as flat, but each new
buffer cost a page fault per page: on an attack of 60 sentences, 2.1 million minor
faults and 4 s of kernel time against 0.6 million and 1.8 s with trimming
(docs/performance.md). Other C libraries have neither the rise nor ``malloc_trim``;
the call does nothing there.
"""

from __future__ import annotations

import ctypes
import platform
import sys
from collections.abc import Callable
from functools import cache

__all__ = ["release_free_memory"]


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or ``None`` off glibc."""
    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        return None
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim  # type: ignore[no-any-return]


def release_free_memory() -> bool:
    """Return the heap's free pages to the system (glibc's ``malloc_trim(0)``; see the
    module's description).

    Returns whether the call ran (``False`` off glibc, where nothing happens). It
    takes a few milliseconds and changes no allocation in use.
    """
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
