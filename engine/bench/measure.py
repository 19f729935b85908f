"""Timing and memory helpers of ``brittle bench``.

Peak memory is sampled: a daemon thread reads the process's resident set size every
few milliseconds while a stage runs (``/proc/self/statm`` on Linux; elsewhere the
process's lifetime maximum from ``getrusage``, which can only grow). A stage's peak is
therefore the largest RSS of the whole process while it ran, models already loaded by
earlier stages included.
"""

from __future__ import annotations

import os
import resource
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

__all__ = ["KernelUse", "PeakRSS", "best_time", "current_rss_mb", "kernel_use"]

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def current_rss_mb() -> float:
    """The process's resident set size now, MiB (lifetime peak where /proc is absent)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE / 2**20
    except OSError:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


@dataclass(frozen=True, slots=True)
class KernelUse:
    """What the kernel did for this process: CPU time in the kernel (seconds) and minor
    page faults (a page touched for the first time since it was mapped)."""

    kernel_s: float
    minor_faults: int

    def __sub__(self, other: KernelUse) -> KernelUse:
        return KernelUse(self.kernel_s - other.kernel_s, self.minor_faults - other.minor_faults)


def kernel_use(*, children: bool = False) -> KernelUse:
    """This process's kernel time and minor page faults so far (``getrusage``; its
    worker processes not included), or with ``children`` those of its child processes
    that have ended."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF)
    return KernelUse(usage.ru_stime, usage.ru_minflt)


class PeakRSS:
    """Context manager: the largest RSS (MiB) seen while its block ran, in ``peak_mb``."""

    def __init__(self, interval: float = 0.005) -> None:
        self.interval = interval
        self.peak_mb = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak_mb = max(self.peak_mb, current_rss_mb())
            self._stop.wait(self.interval)

    def __enter__(self) -> PeakRSS:
        self.peak_mb = current_rss_mb()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.peak_mb = max(self.peak_mb, current_rss_mb())


def best_time(fn: Callable[[], object], repeat: int = 3, *, at_least: float = 0.0) -> float:
    """Best wall-clock time of the calls of ``fn``, seconds: ``repeat`` calls, and more
    until they add up to ``at_least`` seconds.

    A call of a few milliseconds is at the mercy of one scheduler hiccup on a shared
    machine; repeating it for a fixed total, as :mod:`timeit` does, makes its best time
    stable from run to run.
    """
    best = float("inf")
    total = 0.0
    calls = 0
    while calls < max(1, repeat) or total < at_least:
        start = time.perf_counter()
        fn()
        took = time.perf_counter() - start
        best = min(best, took)
        total += took
        calls += 1
    return best
