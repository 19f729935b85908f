"""Lock-step rounds: many searches, one batched model call per round.

Each sentence's search is plain sequential code (a strategy calling ``score`` and
``feasible``). To batch model work across sentences, :func:`run_rounds` runs every
search of a chunk in its own thread; a search that needs the model or the parser sends
a request through its :class:`Client` and blocks. When every live search is blocked (or
finished), the calling thread serves all waiting requests of each kind with one call
of that kind's handler, in search order, and wakes the searches up.

Searches and handlers never run at the same time, and handlers run in the calling
thread only, so the handlers' state (caches, models, parsers) needs no locks. Which
requests share a round depends only on the searches' own control flow, not on thread
timing, so results are deterministic. Hand-written because the standard executors
have no notion of "wait until every worker is blocked".
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar, cast

R = TypeVar("R")
P = TypeVar("P")
A = TypeVar("A")

#: Serves a round's requests of one kind: payloads in, one result per payload out. The
#: payload type differs from kind to kind, so a table of handlers cannot name it.
Handler = Callable[[list[Any]], Sequence[object]]


class Requester(Protocol):
    """What a search sends its model and parser work through."""

    def request(self, kind: str, payload: object) -> object:
        """Serve one request of ``kind`` and return its result."""
        ...


@dataclass(frozen=True)
class Channel(Generic[P, A]):
    """One kind of request, typed: payloads of type ``P`` answered with ``A``.

    The typed way in and out of the untyped request table: a search calls
    :meth:`ask`, the run registers :meth:`serve`.
    """

    name: str

    def ask(self, client: Requester, payload: P) -> A:
        """Send ``payload`` through ``client`` and return its answer."""
        return cast(A, client.request(self.name, payload))

    def serve(self, handler: Callable[[list[P]], Sequence[A]]) -> tuple[str, Handler]:
        """``(name, handler)``: an entry of the handler table."""
        return self.name, handler


class Direct:
    """Serves each request at once with its handler: one search at a time, no rounds."""

    def __init__(self, handlers: dict[str, Handler]) -> None:
        self.handlers = handlers

    def request(self, kind: str, payload: object) -> object:
        """``handlers[kind]`` on this one payload."""
        return self.handlers[kind]([payload])[0]


class Aborted(Exception):
    """Raised inside a search whose round was abandoned (another search failed)."""


@dataclass
class _State:
    """What the searches and the serving thread share, guarded by ``lock``.

    Each search sleeps on its own condition and the serving thread on ``ready``, all
    over the one lock: a request wakes the serving thread only when it completes the
    round, and an answer wakes only its search (one condition for everyone woke every
    search at every request, a cost quadratic in the searches of a chunk).
    """

    live: int
    lock: threading.Lock = field(default_factory=threading.Lock)
    waiting: dict[int, tuple[str, object]] = field(default_factory=dict)
    answers: dict[int, object] = field(default_factory=dict)
    failures: dict[int, BaseException] = field(default_factory=dict)
    finished: list[int] = field(default_factory=list)
    aborted: bool = False
    ready: threading.Condition = field(init=False)
    wake: list[threading.Condition] = field(init=False)

    def __post_init__(self) -> None:
        self.ready = threading.Condition(self.lock)
        self.wake = [threading.Condition(self.lock) for _ in range(self.live)]

    def round_complete(self) -> bool:
        """Whether the serving thread has work: every live search waits, or one failed
        (call with the lock held)."""
        return len(self.waiting) >= self.live or bool(self.failures)

    def abort(self) -> None:
        """Wake every search to raise :class:`Aborted` (call with the lock held)."""
        self.aborted = True
        for cond in self.wake:
            cond.notify()


class Client:
    """A search's way to the handlers (one per search; used from its own thread only)."""

    def __init__(self, index: int, state: _State) -> None:
        self.index = index
        self._state = state

    def request(self, kind: str, payload: object) -> object:
        """Send one request and block until the round that serves it is done."""
        state = self._state
        with state.lock:
            if state.aborted:
                raise Aborted
            state.waiting[self.index] = (kind, payload)
            if state.round_complete():
                state.ready.notify()
            mine = state.wake[self.index]
            while self.index not in state.answers and not state.aborted:
                mine.wait()
            if state.aborted:
                raise Aborted
            answer = state.answers.pop(self.index)
        if isinstance(answer, _Failed):
            raise answer.error
        return answer


@dataclass(frozen=True)
class _Failed:
    error: BaseException


def run_rounds(
    jobs: Sequence[Callable[[Client], R]],
    handlers: dict[str, Handler],
    *,
    on_done: Callable[[int, R], None] | None = None,
    after_round: Callable[[], object] | None = None,
) -> list[R]:
    """Run ``jobs`` in lock-step rounds and return their results, in order.

    Args:
        jobs: one callable per search; each gets its :class:`Client`.
        handlers: for each request kind, the function that serves a round's requests
            of that kind (payloads in job order; one result per payload).
        on_done: called in the calling thread with a job's index and result soon after
            it finishes (progress bars), in the order the jobs finish.
        after_round: called in the calling thread after each round's handlers, before
            the searches wake (the attack returns the round's freed memory there:
            :func:`~brittle.engine.core.memory.release_free_memory`).

    Raises:
        The first (lowest-index) exception a job or handler raised; the other jobs are
        abandoned.
    """
    if not jobs:
        return []
    state = _State(live=len(jobs))
    results: list[R | None] = [None] * len(jobs)

    def worker(i: int) -> None:
        try:
            results[i] = jobs[i](Client(i, state))
            with state.lock:
                state.finished.append(i)
        except Aborted:
            pass
        except BaseException as exc:  # handed to the calling thread
            with state.lock:
                state.failures[i] = exc
        finally:
            with state.lock:
                state.live -= 1
                if state.round_complete():
                    state.ready.notify()

    threads = [
        threading.Thread(target=worker, args=(i,), name=f"search-{i}", daemon=True)
        for i in range(len(jobs))
    ]
    for t in threads:
        t.start()
    try:
        while True:
            with state.lock:
                while not state.round_complete():
                    state.ready.wait()
                finished, state.finished = state.finished, []
                stop = bool(state.failures) or state.live == 0
                batch = sorted(state.waiting.items())
                state.waiting.clear()
            if on_done is not None and not state.failures:
                for i in finished:
                    on_done(i, cast(R, results[i]))
            if stop:
                break
            answers = _serve(batch, handlers)
            if after_round is not None:
                after_round()
            with state.lock:
                state.answers.update(answers)
                for i in answers:
                    state.wake[i].notify()
    finally:
        with state.lock:
            if state.live:
                state.abort()
        for t in threads:
            t.join()
    if state.failures:
        raise state.failures[min(state.failures)]
    return cast(list[R], results)


def _serve(
    batch: list[tuple[int, tuple[str, object]]], handlers: dict[str, Handler]
) -> dict[int, object]:
    """One round: each kind's payloads (in job order) through its handler."""
    kinds: dict[str, list[int]] = {}
    for i, (kind, _) in batch:
        kinds.setdefault(kind, []).append(i)
    payloads = {i: p for i, (_, p) in batch}
    answers: dict[int, object] = {}
    for kind in sorted(kinds):
        members = kinds[kind]
        handler = handlers.get(kind)
        if handler is None:
            error = KeyError(f"no handler for requests of kind {kind!r}")
            answers.update((i, _Failed(error)) for i in members)
            continue
        out = handler([payloads[i] for i in members])
        if len(out) != len(members):
            raise RuntimeError(f"handler {kind!r} gave {len(out)} results for {len(members)}")
        answers.update(zip(members, out, strict=True))
    return answers
