"""Sentences sharded over worker processes or Ray actors, merged back in input order.

A run that parallelises cuts its sentences into :class:`Shard` s (contiguous ranges in
input order, aligned with the run's own chunks, so that each chunk is computed exactly
as in one process) and hands them to a :class:`ShardExecutor`:

- :class:`LocalProcesses`: ``N`` processes started with ``spawn``; each builds the
  run's components (models) once and uses ``threads // N`` torch threads;
- :class:`RayActors`: ``N`` Ray actors that hold the components, one GPU each when the
  cluster has GPUs.

:func:`run_shards` keeps every worker busy, retries a shard whose attempt failed (a
worker that raised, died or was lost; at most ``attempts`` times) and yields the
results in input order. A shard's result travels back whole when its attempt succeeds,
and nothing of a failed attempt is kept, so a retry can neither duplicate nor lose a
row. A :class:`~brittle.engine.core.errors.BrittleError` in a worker (a user mistake
or a missing resource) is not retried: it is raised as it is.

What a worker does is a :class:`ShardTask` (picklable, small: it is sent with every
shard): :meth:`ShardTask.start` builds a :class:`ShardWorker` (loads the models) the
first time a process sees the task, and the process keeps it for the following
shards; a different task (another budget of the same attack) may reuse the previous
worker's models.

Failure injection, for the tests only: ``BRITTLE_TEST_FAIL_SHARD=K`` (read in the
parent) makes the first attempt of shard ``K`` raise once it has computed its result;
``K:exit`` makes the worker process exit instead. Unset (always, outside the tests),
it does nothing.
"""

from __future__ import annotations

import ipaddress
import os
import re
import signal
import socket
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, Literal, Self, TypeVar

from brittle.engine.core.errors import BrittleError, ConfigError

P = TypeVar("P")
R = TypeVar("R")

#: How many times a shard is tried before the run gives up on it.
ATTEMPTS = 3
#: Environment variable of the failure injection (tests only; see the module's doc).
FAIL_SHARD_ENV = "BRITTLE_TEST_FAIL_SHARD"


@dataclass(frozen=True)
class Shard(Generic[P]):
    """A contiguous range of sentences, ``start`` to ``stop - 1`` (0-based, input order).

    Attributes:
        number: the shard's place among the shards of the run (0, 1, ...): results are
            merged in this order.
        start: index of its first sentence.
        stop: one past the index of its last sentence.
        payload: what a worker needs to compute it (for an attack: the sentences, so a
            worker never reads the treebank).
    """

    number: int
    start: int
    stop: int
    payload: P

    def describe(self) -> str:
        """``shard 3 (sentences 48-63)``."""
        return f"shard {self.number} (sentences {self.start}-{self.stop - 1})"


class ShardWorker(ABC, Generic[P, R]):
    """What a worker process holds between shards: the loaded components."""

    @abstractmethod
    def run(self, shard: Shard[P]) -> R:
        """The result of one shard."""


class ShardTask(ABC, Generic[P, R]):
    """A picklable description of a worker's job (settings, not models); equal tasks
    share a worker."""

    @abstractmethod
    def start(self, previous: ShardWorker[Any, Any] | None) -> ShardWorker[P, R]:
        """Build the worker (load the models), in the worker process. ``previous`` is
        the worker of the task this process ran before, if any, whose models may be
        reused when they are the same."""


@dataclass(frozen=True)
class FailOnce:
    """An injected failure (tests only): the first attempt of shard ``shard`` fails."""

    shard: int
    how: Literal["raise", "exit"] = "raise"

    @classmethod
    def from_env(cls) -> FailOnce | None:
        """The failure :data:`FAIL_SHARD_ENV` asks for (``None`` when unset)."""
        value = os.environ.get(FAIL_SHARD_ENV, "").strip()
        if not value:
            return None
        number, _, how = value.partition(":")
        if how not in ("", "raise", "exit"):
            raise ConfigError(f"{FAIL_SHARD_ENV}={value!r}: expected K, K:raise or K:exit")
        return cls(int(number), "exit" if how == "exit" else "raise")


class InjectedFailure(RuntimeError):
    """The failure :class:`FailOnce` injects."""


@dataclass(frozen=True)
class ShardCall(Generic[P, R]):
    """One attempt at one shard, as sent to a worker."""

    task: ShardTask[P, R]
    shard: Shard[P]
    attempt: int
    fail: FailOnce | None = None


class ShardFailed(RuntimeError):
    """A shard failed on every attempt (not a user mistake: a crash, a lost node)."""


# ---------------------------------------------------------------- the worker side
#: The worker of this process, with the task it was built for (worker processes only).
_held: tuple[ShardTask[Any, Any], ShardWorker[Any, Any]] | None = None


def run_call(call: ShardCall[P, R]) -> R:
    """Run one attempt in this process: build (or reuse) the task's worker, compute the
    shard, and fail on purpose when the injected failure names this attempt."""
    global _held
    if _held is None or _held[0] != call.task:
        worker = call.task.start(_held[1] if _held is not None else None)
        _held = (call.task, worker)
    result: R = _held[1].run(call.shard)
    fail = call.fail
    if fail is not None and call.attempt == 0 and fail.shard == call.shard.number:
        if fail.how == "exit":
            os._exit(70)  # a crash: the process dies without a word
        raise InjectedFailure(f"injected failure of {call.shard.describe()}, first attempt")
    return result


def set_threads(threads: int) -> None:
    """Torch's intra-op threads of this worker process; its parser gets no helper
    process (the workers take the cores)."""
    # deferred: the parsers' package loads only in workers
    from brittle.scorers.parsers.helpers import HELPERS_ENV

    os.environ["OMP_NUM_THREADS"] = str(threads)
    os.environ[HELPERS_ENV] = "0"
    import torch  # deferred: heavy

    torch.set_num_threads(threads)


def _start_local_worker(threads: int) -> None:
    """Initialiser of a local worker process: Ctrl-C is the parent's to handle (it
    stops the workers), and torch gets its share of the cores."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    set_threads(threads)


# ---------------------------------------------------------------- executors
def available_cpus() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class ShardExecutor(ABC):
    """Runs shard attempts on a fixed number of workers.

    Attributes:
        workers: how many shards run at the same time.
    """

    workers: int

    @abstractmethod
    def submit(self, call: ShardCall[P, R]) -> Future[R]:
        """Start one attempt; at most :attr:`workers` are outstanding at a time."""

    @abstractmethod
    def failed(self, future: Future[Any], error: BaseException) -> None:
        """An attempt failed with ``error``: replace what it broke (a dead process, a
        lost actor) so that its retry has somewhere to run."""

    def finished(self, future: Future[Any]) -> None:  # noqa: B027 - optional hook
        """An attempt ended (either way); its worker is free."""

    @abstractmethod
    def close(self) -> None:
        """Stop every worker (outstanding attempts are abandoned)."""

    def describe(self) -> str:
        """For messages: ``2 local processes``."""
        return f"{self.workers} workers"

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LocalProcesses(ShardExecutor):
    """``workers`` local processes (``spawn``: nothing inherited from the parent but
    what a shard carries). Each holds its own copy of the models, so memory grows with
    ``workers``; torch gets ``threads // workers`` threads in each (``threads``: the
    CPUs this process may use, by default).

    A worker that dies breaks the pool: a new pool replaces it and the attempts that
    were outstanding are retried.
    """

    def __init__(self, workers: int, *, threads: int | None = None) -> None:
        if workers < 1:
            raise ConfigError(f"--workers must be at least 1, got {workers}")
        self.workers = workers
        self.threads = max(1, (threads or available_cpus()) // workers)
        self._generation = 0
        self._pool = self._new_pool()
        self._born: dict[Future[Any], int] = {}

    def _new_pool(self) -> ProcessPoolExecutor:
        import multiprocessing

        return ProcessPoolExecutor(
            self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_local_worker,
            initargs=(self.threads,),
        )

    def submit(self, call: ShardCall[P, R]) -> Future[R]:
        try:
            future: Future[R] = self._pool.submit(run_call, call)
        except BrokenProcessPool:
            # A worker died while the pool was idle (between shards or runs): the
            # pool is replaced before anything is lost.
            self._replace_pool()
            future = self._pool.submit(run_call, call)
        self._born[future] = self._generation
        return future

    def _replace_pool(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._generation += 1
        self._pool = self._new_pool()

    def finished(self, future: Future[Any]) -> None:
        self._born.pop(future, None)

    def failed(self, future: Future[Any], error: BaseException) -> None:
        # Every attempt outstanding on a broken pool fails; it is replaced once.
        if isinstance(error, BrokenProcessPool) and self._born.get(future) == self._generation:
            self._replace_pool()
        self._born.pop(future, None)

    def close(self) -> None:
        # Abandoned attempts are not waited for: their processes are stopped (Python
        # 3.11's pool has no public way to do it; shutdown alone waits for them).
        processes = dict(getattr(self._pool, "_processes", None) or {})
        self._pool.shutdown(wait=False, cancel_futures=True)
        for process in processes.values():
            if process.is_alive():
                process.terminate()

    def describe(self) -> str:
        return f"{self.workers} local processes ({self.threads} torch threads each)"


#: Seconds a ``--ray`` address has to answer before the run gives up on it.
RAY_CONNECT_TIMEOUT = 5.0
#: A host name: letters, digits and inner hyphens in dot-separated labels.
_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST_NAME = re.compile(rf"(?=.{{1,253}}$){_LABEL}(\.{_LABEL})*\.?")
#: What an HTTP/2 client sends first (the preface and an empty SETTINGS frame); Ray's
#: GCS and client server speak gRPC, so they answer with a SETTINGS frame of their own.
_HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
_HTTP2_SETTINGS = 4
_RAY_ADDRESS_FORMS = "auto, local, HOST:PORT or ray://HOST:PORT, with a port from 1 to 65535"


@dataclass(frozen=True)
class RayAddress:
    """A ``--ray`` address, parsed.

    Attributes:
        text: the address as given.
        kind: ``local`` (a new instance on this machine), ``auto`` (the cluster this
            machine belongs to), ``cluster`` (``HOST:PORT`` of a cluster's head) or
            ``client`` (``ray://HOST:PORT``, Ray Client).
        host: the head's host name or IP address (``cluster`` and ``client``).
        port: its port, 1 to 65535 (``cluster`` and ``client``).
    """

    text: str
    kind: Literal["local", "auto", "cluster", "client"]
    host: str = ""
    port: int = 0

    @property
    def target(self) -> str | None:
        """What ``ray.init(address=...)`` gets (``None``: start a local instance)."""
        if self.kind == "local":
            return None
        if self.kind == "auto":
            return "auto"
        where = f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"
        return f"ray://{where}" if self.kind == "client" else where


def parse_ray_address(text: str | None) -> RayAddress:
    """The address ``--ray`` names (``None``: ``local``).

    Raises:
        ConfigError: neither ``auto``, ``local``, ``HOST:PORT`` nor ``ray://HOST:PORT``
            (a host that is no valid name or IP address, a port outside 1-65535).
    """
    if text is None:
        return RayAddress("local", "local")
    value = text.strip()
    if value.lower() in ("auto", "local"):
        return RayAddress(text, "auto" if value.lower() == "auto" else "local")
    kind: Literal["cluster", "client"] = "cluster"
    if value.lower().startswith("ray://"):
        kind, value = "client", value[len("ray://") :]
    host, port = _host_and_port(text, value)
    return RayAddress(text, kind, host, port)


def _host_and_port(text: str, value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[V6]:PORT`` for an IPv6 address) split and checked."""

    def bad(why: str) -> ConfigError:
        return ConfigError(f"--ray {text!r}: {why}; expected {_RAY_ADDRESS_FORMS}")

    host, colon, port_text = value.rpartition(":")
    if not colon or not host:
        raise bad("no HOST:PORT")
    if not port_text.isascii() or not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise bad(f"port {port_text!r} is not a number from 1 to 65535")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise bad(f"{host!r} is not an IPv6 address") from None
        return host, int(port_text)
    if all(part.isdigit() for part in host.split(".")):  # dotted numbers: an IPv4 address
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            raise bad(f"{host!r} is not an IPv4 address") from None
    elif not _HOST_NAME.fullmatch(host):
        raise bad(f"{host!r} is not a host name")
    return host, int(port_text)


def check_ray_answers(address: RayAddress, *, timeout: float | None = None) -> None:
    """Make sure a Ray head answers at ``address`` (``cluster`` and ``client`` only)
    within ``timeout`` seconds (default :data:`RAY_CONNECT_TIMEOUT`), so that a wrong
    address fails at once instead of Ray waiting for it forever.

    The head must accept a TCP connection and, unless Ray runs with TLS
    (``RAY_USE_TLS``), answer an HTTP/2 preface as a gRPC server does.

    Raises:
        ConfigError: nothing answers there, or something that is no gRPC server (the
            message says which).
    """
    if address.kind not in ("cluster", "client"):
        return
    wait = RAY_CONNECT_TIMEOUT if timeout is None else timeout
    where = f"{address.host}:{address.port}"
    try:
        conn = socket.create_connection((address.host, address.port), timeout=wait)
    except OSError as exc:
        reason = "no answer" if isinstance(exc, TimeoutError) else exc.strerror or str(exc)
        raise ConfigError(
            f"--ray {address.text}: nothing answers at {where} within {wait:g} s ({reason}); "
            "start the cluster (ray start --head) or check the address"
        ) from None
    with conn:
        if os.environ.get("RAY_USE_TLS", "").strip().lower() in ("1", "true"):
            return
        try:
            conn.sendall(_HTTP2_PREFACE)
            frame = _read_exactly(conn, 9)
        except OSError:
            frame = b""
    if len(frame) < 9 or frame[3] != _HTTP2_SETTINGS:
        raise ConfigError(
            f"--ray {address.text}: {where} answers, but not as a Ray head (no gRPC reply "
            f"within {wait:g} s); give the port of the cluster's GCS (ray start --head "
            "prints it, default 6379) or of its Ray Client server (ray://HOST:10001)"
        )


def _read_exactly(conn: socket.socket, size: int) -> bytes:
    """Up to ``size`` bytes from ``conn``: fewer only when the peer closes first."""
    data = b""
    while len(data) < size:
        more = conn.recv(size - len(data))
        if not more:
            break
        data += more
    return data


def _connect_ray(ray: Any, address: RayAddress) -> None:
    """``ray.init`` at ``address`` once it is known to answer; every way it fails is a
    :class:`ConfigError` naming the address."""
    resolved = address
    if address.kind == "auto":
        resolved = _running_cluster(address)
    check_ray_answers(resolved)
    with _keeping_sigterm():
        try:
            ray.init(address=resolved.target, include_dashboard=False, log_to_driver=False)
        except (ConnectionError, ValueError) as exc:
            lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
            why = lines[0] if lines else type(exc).__name__
            raise ConfigError(f"--ray {address.text}: cannot connect ({why})") from None


@contextmanager
def _keeping_sigterm() -> Iterator[None]:
    """Put SIGTERM's handler back after the block: ``ray.init`` sets one that exits at
    once, where the run's own stops it as Ctrl-C does (and closes the actors)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _running_cluster(address: RayAddress) -> RayAddress:
    """The head ``auto`` stands for (``RAY_ADDRESS``, else the cluster this machine
    last started or joined), as Ray finds it; ``address`` itself when Ray's lookup is
    not available."""
    try:
        from ray._private.services import canonicalize_bootstrap_address_or_die
    except ImportError:  # another Ray version: ray.init looks it up itself
        return address
    try:
        found = canonicalize_bootstrap_address_or_die("auto")
    except (ConnectionError, ValueError) as exc:
        raise ConfigError(
            f"--ray {address.text}: no Ray cluster found on this machine ({exc}); start one "
            "with ray start --head, or give its HOST:PORT"
        ) from None
    host, port = _host_and_port(address.text, str(found))
    return RayAddress(address.text, "cluster", host, port)


class _RayShardActor:
    """A Ray actor: one worker process that holds the task's components."""

    def __init__(self, threads: int) -> None:
        set_threads(threads)

    def run(self, call: ShardCall[Any, Any]) -> Any:
        return run_call(call)


class RayActors(ShardExecutor):
    """``workers`` Ray actors, each holding the components (one model copy each).

    Connects to the cluster at ``address`` (``auto``: the one this machine belongs to;
    ``local``: a new instance on this machine; ``HOST:PORT`` or ``ray://HOST:PORT``;
    checked by :func:`parse_ray_address`, and a head is given
    :data:`RAY_CONNECT_TIMEOUT` seconds to answer), unless Ray is initialised already
    (then that connection is used and left open). Each actor asks
    for an equal share of the cluster's CPUs (torch uses as many threads) and, when the
    cluster has GPUs, one GPU; actors are spread over the nodes. ``workers`` ``None``:
    one actor per GPU, or per node without GPUs.

    An actor that dies is replaced by a new one; its attempt is retried.
    """

    def __init__(self, address: str | None, workers: int | None = None) -> None:
        where = parse_ray_address(address)
        try:
            import ray  # deferred: heavy and optional
        except ImportError:
            raise ConfigError(
                "--ray needs Ray: pip install 'brittle[ray]' (or pip install ray)"
            ) from None
        self._ray = ray
        self._owns = not ray.is_initialized()
        if self._owns:
            _connect_ray(ray, where)
        resources = ray.cluster_resources()
        gpus = int(resources.get("GPU", 0))
        nodes = sum(1 for node in ray.nodes() if node.get("Alive"))
        count = workers if workers is not None else (gpus or max(1, nodes))
        if count < 1:
            raise ConfigError(f"--workers must be at least 1, got {count}")
        if gpus and count > gpus:
            raise ConfigError(
                f"--workers {count} asks for {count} actors, one GPU each, but the cluster "
                f"has {gpus} GPUs; ask for at most {gpus}"
            )
        self.workers = count
        self.gpus = 1 if gpus else 0
        self.cpus = max(1, int(resources.get("CPU", 1)) // count)
        self._actor_class = ray.remote(_RayShardActor).options(
            num_cpus=self.cpus, num_gpus=self.gpus, scheduling_strategy="SPREAD"
        )
        self._idle = [self._new_actor() for _ in range(count)]
        self._busy: dict[Future[Any], Any] = {}

    def _new_actor(self) -> Any:
        return self._actor_class.remote(self.cpus)

    def submit(self, call: ShardCall[P, R]) -> Future[R]:
        actor = self._idle.pop()
        future: Future[R] = actor.run.remote(call).future()
        self._busy[future] = actor
        return future

    def finished(self, future: Future[Any]) -> None:
        actor = self._busy.pop(future, None)
        if actor is not None:
            self._idle.append(actor)

    def failed(self, future: Future[Any], error: BaseException) -> None:
        actor = self._busy.pop(future, None)
        if actor is None:
            return
        if isinstance(error, self._ray.exceptions.RayActorError):
            self._ray.kill(actor, no_restart=True)
            actor = self._new_actor()
        self._idle.append(actor)

    def close(self) -> None:
        for actor in [*self._idle, *self._busy.values()]:
            self._ray.kill(actor, no_restart=True)
        self._idle, self._busy = [], {}
        if self._owns and self._ray.is_initialized():
            self._ray.shutdown()

    def describe(self) -> str:
        gpu = ", 1 GPU" if self.gpus else ""
        return f"{self.workers} Ray actors ({self.cpus} CPUs{gpu} each)"


# ---------------------------------------------------------------- the loop
def _cause(error: BaseException) -> BaseException:
    """The worker's own exception inside a Ray task error (itself otherwise)."""
    cause = getattr(error, "cause", None)
    return cause if isinstance(cause, BaseException) else error


def run_shards(
    executor: ShardExecutor,
    task: ShardTask[P, R],
    shards: Iterable[Shard[P]],
    *,
    attempts: int | None = None,
    on_done: Callable[[Shard[P], R], None] | None = None,
) -> Generator[tuple[Shard[P], R], None, None]:
    """Every shard's result, in the order of ``shards`` (numbered 0, 1, ...).

    Each shard is tried at most ``attempts`` times (default :data:`ATTEMPTS`).
    Shards are taken from ``shards`` lazily, as workers become free; results that
    arrive early wait (at most about twice the number of workers of them) until the
    ones before them are in. ``on_done`` hears each shard as soon as it is computed,
    in any order (progress).

    Raises:
        BrittleError: a worker met a user mistake (raised as it is, not retried).
        ShardFailed: a shard failed ``attempts`` times; the message names its
            sentences and the last error.
    """
    attempts = ATTEMPTS if attempts is None else attempts
    fail = FailOnce.from_env()
    pending = iter(shards)
    outstanding: dict[Future[R], tuple[Shard[P], int]] = {}
    early: dict[int, tuple[Shard[P], R]] = {}
    following = 0
    exhausted = False
    # A shard that failed for good: the shards before it still in flight are awaited
    # and yielded (their rows are good), nothing after it.
    failure: ShardFailed | None = None

    def submit(shard: Shard[P], attempt: int) -> None:
        future = executor.submit(ShardCall(task, shard, attempt, fail))
        outstanding[future] = (shard, attempt)

    def give_up(shard: Shard[P], error: BaseException, cause: BaseException) -> ShardFailed:
        failed = ShardFailed(
            f"{shard.describe()} failed {attempts} times on {executor.describe()}; "
            f"last error: {type(cause).__name__}: {cause}"
        )
        failed.__cause__ = error
        for future, (other, _) in list(outstanding.items()):
            if other.number > shard.number:
                future.cancel()
                del outstanding[future]
        return failed

    try:
        while True:
            while (
                failure is None
                and not exhausted
                and len(outstanding) < executor.workers
                and len(outstanding) + len(early) < 2 * executor.workers
            ):
                shard = next(pending, None)
                if shard is None:
                    exhausted = True
                else:
                    submit(shard, 0)
            if not outstanding:
                break
            done, _ = wait(list(outstanding), return_when=FIRST_COMPLETED)
            for future in done:
                if future not in outstanding:  # dropped after a later failure
                    continue
                shard, attempt = outstanding.pop(future)
                try:
                    result = future.result()
                except Exception as error:
                    cause = _cause(error)
                    if isinstance(cause, BrittleError):
                        raise cause from None
                    executor.failed(future, error)
                    if attempt + 1 >= attempts:
                        failure = give_up(shard, error, cause)
                        continue
                    submit(shard, attempt + 1)
                    continue
                executor.finished(future)
                if on_done is not None:
                    on_done(shard, result)
                early[shard.number] = (shard, result)
            while following in early:
                yield early.pop(following)
                following += 1
        if failure is not None:
            raise failure
    finally:
        for future in outstanding:
            future.cancel()
