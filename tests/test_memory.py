"""The heap's free pages go back to the system, wherever they lie in the heap."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from brittle.engine.core import memory
from brittle.engine.core.memory import release_free_memory

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"

# In a fresh process: a heap other tests used would decide how much is free.
_CHECK = """
import ctypes
from brittle.engine.core.memory import release_free_memory

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096

# Blocks below the mmap threshold come from the heap. Every other one stays in use, so
# the freed ones lie between blocks in use and the heap cannot shrink from its top.
block = 96 * 1024
freed, kept = [], []
for k in range(1200):
    b = libc.malloc(block)
    libc.memset(b, 1, block)
    (freed if k % 2 == 0 else kept).append(b)
for b in freed:
    libc.free(b)
held = rss()
assert release_free_memory() is True
returned = held - rss()
print(returned >= 0.8 * len(freed) * block, returned)
"""


@pytest.mark.skipif(not GLIBC, reason="malloc_trim is glibc's")
def test_free_pages_between_blocks_in_use_go_back_to_the_system() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", _CHECK], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[0] == "True", done.stdout


def test_other_c_libraries_are_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(platform, "libc_ver", lambda: ("", ""))
    memory._malloc_trim.cache_clear()
    try:
        assert release_free_memory() is False
    finally:
        memory._malloc_trim.cache_clear()


def test_trimming_twice_is_harmless() -> None:
    assert release_free_memory() is GLIBC
    assert release_free_memory() is GLIBC
