"""Lock-step rounds: round composition, results in order, errors, and the attack on top."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brittle.engine.runs.rounds import run_rounds


def counting_job(i: int, requests: int, kind: str = "double"):
    def job(client):
        total = 0
        for r in range(requests):
            total += client.request(kind, (i, r))
        return (i, total)

    return job


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=8))
def test_every_live_job_is_in_each_round(counts: list[int]) -> None:
    rounds: list[list[tuple[int, int]]] = []

    def double(payloads):
        rounds.append(list(payloads))
        return [2 * i + r for i, r in payloads]

    jobs = [counting_job(i, n) for i, n in enumerate(counts)]
    results = run_rounds(jobs, {"double": double})
    assert results == [(i, sum(2 * i + r for r in range(n))) for i, n in enumerate(counts)]
    # Round r holds request r of every job that makes more than r requests, in job order.
    expected = [[(i, r) for i, n in enumerate(counts) if n > r] for r in range(max(counts))]
    assert rounds == expected


def test_kinds_are_served_separately_in_one_round() -> None:
    seen: dict[str, list] = {"a": [], "b": []}

    def handler(kind):
        def serve(payloads):
            seen[kind].append(list(payloads))
            return [kind] * len(payloads)

        return serve

    def job(i: int, kind: str):
        return lambda client: client.request(kind, (i, 0))

    jobs = [job(0, "a"), job(1, "b"), job(2, "a")]
    assert run_rounds(jobs, {"a": handler("a"), "b": handler("b")}) == ["a", "b", "a"]
    assert seen == {"a": [[(0, 0), (2, 0)]], "b": [[(1, 0)]]}


def test_handlers_run_in_the_calling_thread() -> None:
    threads: set[int] = set()

    def serve(payloads):
        threads.add(threading.get_ident())
        return [0] * len(payloads)

    run_rounds([counting_job(i, 3) for i in range(4)], {"double": serve})
    assert threads == {threading.get_ident()}


def test_a_failing_job_stops_the_others_and_raises() -> None:
    def bad(client):
        client.request("double", (9, 0))
        raise ValueError("broken search")

    jobs = [counting_job(0, 50), bad, counting_job(2, 50)]
    served: list[int] = []

    def double(payloads):
        served.append(len(payloads))
        return [0] * len(payloads)

    with pytest.raises(ValueError, match="broken search"):
        run_rounds(jobs, {"double": double})
    assert len(served) < 50  # the other searches were abandoned
    assert not [t for t in threading.enumerate() if t.name.startswith("search-")]


def test_a_failing_handler_raises_in_the_caller() -> None:
    def serve(payloads):
        raise RuntimeError("model exploded")

    with pytest.raises(RuntimeError, match="model exploded"):
        run_rounds([counting_job(i, 2) for i in range(3)], {"double": serve})
    assert not [t for t in threading.enumerate() if t.name.startswith("search-")]


def test_unknown_kind_fails_the_job() -> None:
    with pytest.raises(KeyError, match="no handler"):
        run_rounds([counting_job(0, 1, "nope")], {"double": lambda p: p})


def test_no_jobs() -> None:
    assert run_rounds([], {}) == []


def test_on_done_reports_each_job_once_in_the_calling_thread() -> None:
    reported: list[tuple[int, tuple[int, int], int]] = []

    def on_done(i, result):
        reported.append((i, result, threading.get_ident()))

    counts = [3, 0, 5, 1]
    results = run_rounds(
        [counting_job(i, n) for i, n in enumerate(counts)],
        {"double": lambda p: [2 * i + r for i, r in p]},
        on_done=on_done,
    )
    assert sorted(i for i, _, _ in reported) == [0, 1, 2, 3]
    assert all(results[i] == res for i, res, _ in reported)
    assert {t for _, _, t in reported} == {threading.get_ident()}
    # Jobs that make fewer requests finish (and are reported) no later than longer ones.
    order = [i for i, _, _ in reported]
    assert order.index(1) < order.index(3) < order.index(0) < order.index(2)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=6))
def test_after_round_runs_once_per_round_before_the_searches_wake(counts: list[int]) -> None:
    events: list[str] = []

    def double(payloads):
        events.append("serve")
        return [2 * i + r for i, r in payloads]

    def job(i: int, n: int):
        def run(client):
            for r in range(n):
                client.request("double", (i, r))
                events.append(f"woke {i}")
            return i

        return run

    run_rounds(
        [job(i, n) for i, n in enumerate(counts)],
        {"double": double},
        after_round=lambda: events.append("after"),
    )
    assert events.count("serve") == events.count("after") == max(counts)
    # Each round: served, then after_round, and only then the searches go on.
    for k, event in enumerate(events):
        if event == "serve":
            assert events[k + 1] == "after"
