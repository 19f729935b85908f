"""Flat memory over long runs: large buffers go back to the system when freed.

A model's forward pass allocates its activations (batch x padded tokens x hidden size,
a few hundred kilobytes to tens of megabytes each) and frees them when it returns, and
their shapes change from batch to batch. glibc's ``malloc`` serves a block that large
with its own ``mmap`` and unmaps it on ``free``, but only at first: each time such a
block is freed, the size above which it does so (``M_MMAP_THRESHOLD``, 128 KiB) rises
to that block's size, up to 32 MiB. After the first forward pass the activations
therefore come from the heap, and the small long-lived objects allocated between two
passes (cached rows, parses, results) settle among them, so the heap is never trimmed:
memory that is free but not returned grows with the number of sentences. In an attack
on the 2,077 sentences of EWT test, the heap held under 250 MB in use and more than
800 MB free by the end.

:func:`map_large_buffers` fixes the threshold, which turns the rise off: every block
of at least 128 KiB is mapped and unmapped on its own, and the heap only holds small
blocks. The price is a page fault per page of each new buffer (about a fifth more CPU
time in an attack). Other C libraries do not have the rise, and the call does nothing
there.
"""

from __future__ import annotations

import ctypes
import platform
import sys

__all__ = ["LARGE_BUFFER", "map_large_buffers"]

#: Blocks of at least this many bytes are mapped on their own (glibc's default threshold).
LARGE_BUFFER = 128 * 1024

#: ``mallopt`` parameter number of the mmap threshold (``malloc.h``).
_M_MMAP_THRESHOLD = -3


def map_large_buffers(threshold: int = LARGE_BUFFER) -> bool:
    """Have glibc map every block of at least ``threshold`` bytes on its own, and unmap
    it when freed, for the rest of the process (see the module's description).

    Returns whether the setting took (``False`` off glibc, where nothing changes).
    """
    if threshold < 1:
        raise ValueError("the threshold must be positive")
    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (AttributeError, OSError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, threshold))
