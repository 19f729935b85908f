"""Large buffers are mapped on their own, also after a larger one was freed."""

from __future__ import annotations

import ctypes
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from brittle.engine.core.memory import map_large_buffers

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in [
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        ]
    ]


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None)
    if not hasattr(libc, "mallinfo2"):
        pytest.skip("glibc before 2.33 has no mallinfo2")
    libc.mallinfo2.restype = _MallInfo2
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    return libc


def _mapped(libc: ctypes.CDLL) -> int:
    """Bytes in blocks malloc mapped on their own."""
    info: _MallInfo2 = libc.mallinfo2()
    return int(info.hblkhd)


_CHECK = """
import ctypes
from test_memory import _libc, _mapped
from brittle.engine.core.memory import LARGE_BUFFER, map_large_buffers

libc = _libc()
assert map_large_buffers() is True
# Without a fixed threshold, freeing this block would raise it to 16 MiB ...
big = libc.malloc(16 << 20)
assert big
libc.free(big)
# ... and a 1 MiB block would then come from the heap.
before = _mapped(libc)
block = libc.malloc(1 << 20)
assert block
try:
    assert _mapped(libc) >= before + (1 << 20), (_mapped(libc), before)
finally:
    libc.free(block)
assert _mapped(libc) == before
# Below the threshold, blocks stay in the heap.
small = libc.malloc(LARGE_BUFFER // 4)
assert small
try:
    assert _mapped(libc) == before
finally:
    libc.free(small)
print("ok")
"""


@pytest.mark.skipif(not GLIBC, reason="the threshold is glibc's")
def test_a_freed_large_block_does_not_move_the_next_ones_into_the_heap() -> None:
    # In a fresh process: a large block malloc finds free in a heap that other tests
    # used comes from the heap whatever the threshold, so this process's heap would
    # decide the outcome rather than the threshold.
    libc = _libc()  # skips on a glibc without mallinfo2
    assert libc is not None
    tests = str(Path(__file__).resolve().parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([tests, *sys.path])}
    done = subprocess.run(
        [sys.executable, "-c", _CHECK], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"


def test_the_threshold_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        map_large_buffers(0)


def test_other_c_libraries_are_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(platform, "libc_ver", lambda: ("", ""))
    assert map_large_buffers() is False
