"""Parsing on helper processes beside this one: each large batch is split between them.

A re-parsing backend (spaCy, Stanza) runs on one core, and the search waits for it
between two model passes, which use every core. :class:`SplitBackend` gives the
backend's parses of one batch to this process and to ``helpers`` processes at once,
each with its own copy of the backend: one helper on 2 cores nearly halves the wait.

The helpers start (and load their model) in the background when the parser is
prepared, or at the first batch worth splitting; until one is ready, this process
parses everything itself, so nothing waits on a helper's start-up. With a ``locate``
check, this process's own model loads at its first batch, while the helpers parse
that batch: a run's first model pass does not wait for the parser. A batch is cut into
contiguous parts whose word counts follow each process's measured parsing speed, and
the parses come back in input order. A backend's parse of a sentence does not depend
on the batch it came in (checked for spaCy on EWT test), so the result is the same as
one process's. A helper that fails or dies is dropped with a warning and its part is
parsed here.

Hand-written rather than spaCy's ``nlp.pipe(n_process=...)``, which starts new
processes and loads the model again at every call. A helper is a fresh interpreter
running :func:`main` (not a ``multiprocessing`` child, which would run the importing
script's top level again when that script has no ``if __name__ == "__main__"`` guard),
talking over a socket pair, with its standard output closed so that nothing it prints
can reach an output written to the parent's standard output.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection

from brittle.engine.core import heap
from brittle.scorers.parsers.base import Parse, WordParser, Words

__all__ = ["HELPERS_ENV", "SplitBackend", "auto_helpers", "main", "split_by_words"]

log = logging.getLogger(__name__)

#: Environment variable that sets how many helper processes parse (0 turns them off).
HELPERS_ENV = "BRITTLE_PARSE_HELPERS"


def auto_helpers() -> int:
    """Helper processes a parser gets by default: ``$BRITTLE_PARSE_HELPERS`` when set,
    else one when this process may run on at least 2 CPUs (the model's forward pass and
    the parse alternate, so the second core is free while the parser runs), else none.
    Worker processes of a sharded run set the variable to 0: their cores are taken.
    None off POSIX systems (helpers inherit a socket by descriptor)."""
    if os.name != "posix":  # pragma: no cover - brittle is developed on Linux
        return 0
    value = os.environ.get(HELPERS_ENV, "").strip()
    if value:
        try:
            return max(0, int(value))
        except ValueError:
            log.warning("ignoring %s=%r: not a whole number", HELPERS_ENV, value)
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cpus = os.cpu_count() or 1
    return 1 if cpus >= 2 else 0


def _words(batch: Sequence[Words]) -> int:
    return sum(len(w) for w in batch)


def split_by_words(
    batch: Sequence[Words], parts: int, weights: Sequence[float] | None = None
) -> list[tuple[int, int]]:
    """Cut ``batch`` into at most ``parts`` contiguous ``(start, stop)`` ranges whose word
    counts follow ``weights`` (default: equal; none empty, fewer ranges than ``parts``
    when the batch is short)."""
    if parts < 1:
        raise ValueError("parts must be at least 1")
    if weights is None:
        weights = [1.0] * parts
    if len(weights) != parts or not all(w > 0 for w in weights):
        raise ValueError("weights must be one positive number per part")
    total = _words(batch)
    scale = total / sum(weights)
    bounds: list[tuple[int, int]] = []
    start, seen, target = 0, 0, 0.0
    for k in range(parts - 1):
        target += weights[k] * scale
        stop = start
        while stop < len(batch) and seen + len(batch[stop]) / 2 < target:
            seen += len(batch[stop])
            stop += 1
        if stop > start:
            bounds.append((start, stop))
            start = stop
    if start < len(batch):
        bounds.append((start, len(batch)))
    return bounds


def _serve(conn: Connection, backend: WordParser) -> None:
    """A helper process: load the backend, then parse every batch sent until ``None``."""
    try:
        backend.prepare()
    except Exception as exc:  # reported to the parent, which parses alone
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", None))
    while True:
        try:
            batch = conn.recv()
        except EOFError:
            return
        if batch is None:
            return
        try:
            start = time.perf_counter()
            parses = backend.parse_words(batch)
            conn.send(("ok", (parses, time.perf_counter() - start)))
        except Exception as exc:
            conn.send(("failed", f"{type(exc).__name__}: {exc}"))


def _exit_when_orphaned(parent: int, every: float = 0.1) -> None:
    """End this process once its parent is gone (it is then re-parented), even while it
    is still loading its model: it would otherwise keep the parent's standard error
    open, and whoever waits on that pipe would wait for the load to finish."""
    while os.getppid() == parent:
        time.sleep(every)
    os._exit(0)


def main() -> None:
    """A helper process's entry point: ``python -c "...; main()" FD PID`` with ``FD`` its
    end of the socket pair and ``PID`` its parent's; the first message is the backend to
    load."""
    # Ctrl-C is the parent's to handle: it stops its helpers as it stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = int(sys.argv[2]) if len(sys.argv) > 2 else os.getppid()
    threading.Thread(target=_exit_when_orphaned, args=(parent,), daemon=True).start()
    conn = Connection(int(sys.argv[1]))
    try:
        backend = conn.recv()
        _serve(conn, backend)
    except (EOFError, OSError):  # the parent went away: nothing is left to answer
        pass
    # Ended at once: tearing down an interpreter with spaCy loaded takes about 0.7 s,
    # which the parent would wait for in close(), and a caller reading the standard
    # error both share would wait for too. Nothing is left to write.
    sys.stderr.flush()
    os._exit(0)


@dataclass
class _Helper:
    process: subprocess.Popen[bytes]
    conn: Connection
    ready: bool = False
    #: Words per second it parsed its last parts at (``None``: not measured yet).
    speed: float | None = None


def _updated(speed: float | None, words: int, seconds: float) -> float | None:
    """A running words-per-second estimate after parsing ``words`` in ``seconds``
    (an even mix of the old estimate and the new measurement)."""
    if words < 1 or seconds <= 0:
        return speed
    now = words / seconds
    return now if speed is None else (speed + now) / 2


@dataclass
class SplitBackend:
    """A :class:`~brittle.scorers.parsers.base.WordParser` that splits each batch of at
    least ``min_split`` sentences between this process and ``helpers`` helper processes.

    Attributes:
        backend: the backend this process runs; its unloaded copy (``spec``) is what
            each helper loads.
        spec: a picklable, not yet prepared backend like ``backend``, sent to helpers.
        helpers: helper processes (0: this process parses alone).
        min_split: smaller batches are parsed here (a round trip costs a few ms).
        locate: with helpers, checks from files alone that ``backend``'s model is there
            (raising ResourceMissingError when not); :meth:`prepare` then starts the
            helpers and leaves this process's model to load at its first batch, the
            helpers parsing that batch meanwhile. ``None``: :meth:`prepare` loads it.

    Each part's share of the words follows how fast each process parsed its recent
    parts (this one also runs the search between batches and may be slower), so that
    every part is done at about the same time; equal shares until both are measured.
    """

    backend: WordParser
    spec: WordParser
    helpers: int = 1
    min_split: int = 16
    locate: Callable[[], object] | None = None
    _pool: list[_Helper] = field(default_factory=list, repr=False)
    _started: bool = field(default=False, repr=False)
    _speed: float | None = field(default=None, repr=False)
    _loaded: bool = field(default=False, repr=False)

    @property
    def name(self) -> str:
        """The backend's registry name."""
        return self.backend.name

    @property
    def ud_labels(self) -> bool:
        """Whether the backend labels with UD's relations."""
        return self.backend.ud_labels

    def prepare(self) -> None:
        """Load this process's model, or with ``locate`` and helpers, check that it is
        there and start the helpers, which load theirs in the background while this
        process goes on loading the rest of a run (its own model loads at its first
        batch)."""
        if self.locate is None or self.helpers < 1:
            self._load_here()
            return
        self.locate()
        self.start()

    def _load_here(self) -> None:
        if not self._loaded:
            with heap.loading():  # a model loaded mid-run: kept off the collector too
                self.backend.prepare()
            self._loaded = True

    def _parse_here(self, batch: Sequence[Words]) -> list[Parse]:
        self._load_here()
        return self.backend.parse_words(batch)

    def describe(self) -> dict[str, object]:
        """The backend's description (helpers change no parse, so they are not named); a
        backend describes itself from its loaded model, so this process loads its own."""
        self._load_here()
        return self.backend.describe()

    def start(self) -> None:
        """Start the helper processes now (they load their models in the background)."""
        if self._started:
            return
        self._started = True
        paths = [p for p in sys.path if p and os.path.isdir(p)]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
        code = "from brittle.scorers.parsers.helpers import main; main()"
        for _ in range(self.helpers):
            mine, theirs = socket.socketpair()
            try:
                proc = subprocess.Popen(
                    [sys.executable, "-c", code, str(theirs.fileno()), str(os.getpid())],
                    pass_fds=[theirs.fileno()],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    env=env,
                )
            except OSError as err:
                mine.close()
                log.warning("could not start a parse helper (%s); parsing in this process", err)
                return
            finally:
                theirs.close()
            conn = Connection(mine.detach())
            try:
                conn.send(self.spec)
            except (OSError, ValueError) as err:
                proc.kill()
                proc.wait()
                conn.close()
                log.warning("could not start a parse helper (%s); parsing in this process", err)
                return
            self._pool.append(_Helper(proc, conn))

    def wait_ready(self, timeout: float = 120.0) -> int:
        """Start the helpers and block until each has loaded its model or failed (at
        most ``timeout`` seconds each); returns how many are ready."""
        self.start()
        for helper in list(self._pool):
            if not helper.ready:
                self._check(helper, timeout)
        return sum(h.ready for h in self._pool)

    def _check(self, helper: _Helper, timeout: float = 0.0) -> bool:
        """Whether ``helper`` is ready, reading its start-up message when there is one."""
        if helper.ready:
            return True
        try:
            if not helper.conn.poll(timeout):
                return False
            status, detail = helper.conn.recv()
        except (EOFError, OSError):
            status, detail = "failed", "the process ended while loading"
        if status == "ready":
            helper.ready = True
            return True
        self._drop(helper, str(detail))
        return False

    def _drop(self, helper: _Helper, why: str) -> None:
        log.warning("parse helper dropped (%s); parsing in this process", why)
        self._pool.remove(helper)
        helper.conn.close()
        helper.process.kill()
        helper.process.wait()

    def parse_words(self, batch: Sequence[Words]) -> list[Parse]:
        """One parse per word sequence, in order; large batches split across helpers."""
        if self.helpers < 1 or len(batch) < self.min_split:
            return self._parse_here(batch)
        for words in batch:
            if not words:
                raise ValueError("cannot parse an empty word sequence")
        self.start()
        ready = [h for h in list(self._pool) if self._check(h)]
        if not ready:
            return self._parse_here(batch)
        # Without its own model yet (a located backend), this process gives the helpers
        # the whole batch and loads the model while they parse.
        here = 1 if self._loaded or self.locate is None else 0
        speeds = [self._speed, *(h.speed for h in ready)][1 - here :]
        weights = None if None in speeds else [float(v or 1.0) for v in speeds]
        parts = split_by_words(batch, len(ready) + here, weights)
        sent: list[tuple[_Helper, tuple[int, int]]] = []
        for helper, bounds in zip(ready, parts[here:], strict=False):
            try:
                helper.conn.send(list(batch[bounds[0] : bounds[1]]))
                sent.append((helper, bounds))
            except (OSError, ValueError) as exc:
                self._drop(helper, f"could not send: {exc}")
        done: dict[tuple[int, int], list[Parse]] = {}
        if here:
            mine = batch[parts[0][0] : parts[0][1]]
            self._load_here()
            began = time.perf_counter()
            done[parts[0]] = self.backend.parse_words(mine)
            self._speed = _updated(self._speed, _words(mine), time.perf_counter() - began)
        else:
            self._load_here()
        for helper, (start, stop) in sent:
            try:
                status, value = helper.conn.recv()
            except (EOFError, OSError):
                status, value = "failed", "the process ended"
            parses, seconds = value if status == "ok" and isinstance(value, tuple) else (None, 0)
            if isinstance(parses, list) and len(parses) == stop - start:
                done[(start, stop)] = parses
                helper.speed = _updated(helper.speed, _words(batch[start:stop]), seconds)
            else:
                self._drop(helper, str(value))
        out: list[Parse] = []
        for start, stop in parts:
            got = done.get((start, stop))
            out.extend(got if got is not None else self._parse_here(batch[start:stop]))
        return out

    def close(self) -> None:
        """Stop the helpers."""
        for helper in self._pool:
            with contextlib.suppress(OSError, ValueError):
                helper.conn.send(None)
            helper.conn.close()
            try:
                helper.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                helper.process.kill()
                helper.process.wait()
        self._pool.clear()

    def __del__(self) -> None:
        # not contextlib.suppress: at interpreter shutdown the module may be gone
        try:  # noqa: SIM105
            self.close()
        except Exception:
            pass
