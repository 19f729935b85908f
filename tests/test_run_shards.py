"""run_shards' ordering and failure contract, with an executor whose attempts the test
completes by hand (the real local and Ray executors are tested in test_workers.py and
test_ray.py)."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any

import pytest

from brittle.engine.runs.shards import (
    Shard,
    ShardCall,
    ShardExecutor,
    ShardFailed,
    ShardTask,
    ShardWorker,
    run_shards,
)


class _Task(ShardTask[int, int]):
    def start(self, previous: ShardWorker[Any, Any] | None) -> ShardWorker[int, int]:
        raise AssertionError("the hand-driven executor never starts a worker")


class _ByHand(ShardExecutor):
    """Attempts of shards in ``fails_for_good`` fail at once, those of ``slow`` shards
    wait for :meth:`release_slow`, the others succeed at once (result: 10 x number)."""

    def __init__(self, workers: int, fails_for_good: set[int], slow: set[int]) -> None:
        self.workers = workers
        self.fails_for_good = fails_for_good
        self.slow = slow
        self.futures: list[tuple[ShardCall[Any, Any], Future[Any]]] = []

    def submit(self, call: ShardCall[Any, Any]) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_running_or_notify_cancel()
        self.futures.append((call, future))
        n = call.shard.number
        if n in self.fails_for_good:
            future.set_exception(RuntimeError(f"shard {n} broke"))
        elif n not in self.slow:
            future.set_result(n * 10)
        return future

    def release_slow(self) -> None:
        for call, future in self.futures:
            if call.shard.number in self.slow and not future.done():
                future.set_result(call.shard.number * 10)

    def failed(self, future: Future[Any], error: BaseException) -> None:
        pass

    def close(self) -> None:
        pass


def _shards(n: int) -> list[Shard[int]]:
    return [Shard(k, 4 * k, 4 * k + 4, k) for k in range(n)]


def test_results_come_in_shard_order_whatever_order_they_finish_in() -> None:
    executor = _ByHand(2, fails_for_good=set(), slow={0})
    got = run_shards(executor, _Task(), _shards(5), attempts=1)
    # shard 1 is done before shard 0: nothing is yielded until shard 0 is in
    timer = threading.Timer(0.2, executor.release_slow)
    timer.start()
    try:
        assert [(s.number, r) for s, r in got] == [(k, 10 * k) for k in range(5)]
    finally:
        timer.cancel()


def test_a_shard_failing_for_good_still_yields_the_shards_before_it() -> None:
    # Shard 2 fails while shard 1 is still running: shard 1's rows are good and come out,
    # then the failure is raised; no shard after 2 is yielded.
    executor = _ByHand(3, fails_for_good={2}, slow={1})
    timer = threading.Timer(0.2, executor.release_slow)
    timer.start()
    got: list[int] = []
    try:
        with pytest.raises(ShardFailed, match=r"shard 2 \(sentences 8-11\) failed 1 times"):
            for shard, _ in run_shards(executor, _Task(), _shards(6), attempts=1):
                got.append(shard.number)
    finally:
        timer.cancel()
    assert got == [0, 1]


def test_a_failure_is_retried_up_to_the_attempts() -> None:
    executor = _ByHand(2, fails_for_good={1}, slow=set())
    with pytest.raises(ShardFailed, match="failed 3 times"):
        list(run_shards(executor, _Task(), _shards(3), attempts=3))
    assert [c.attempt for c, _ in executor.futures if c.shard.number == 1] == [0, 1, 2]
