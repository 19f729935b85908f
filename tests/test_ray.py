"""Sharded attacks on Ray actors of a real local Ray instance: the files of one process.

The same small attack as tests/test_workers.py (real probes on ``random:16`` vectors,
neighbour flips, gold parser, 12 sentences in 3 shards), on 2 actors. Skipped, or failed
under ``BRITTLE_REQUIRE_ALL=1``, only when Ray is not installed (``pip install
'brittle[ray]'``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_workers import CHUNK, assert_same_files, config, one_process, probes

from brittle.engine.attack import run_attack
from brittle.engine.runs.shards import FAIL_SHARD_ENV, RayActors

pytestmark = pytest.mark.needs("ray")

__all__ = ["one_process", "probes"]  # fixtures shared with test_workers


@pytest.fixture(scope="module")
def actors() -> Iterator[RayActors]:
    """Two actors on a local Ray instance of 2 CPUs, shut down after the module."""
    import ray

    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        object_store_memory=80 * 1024 * 1024,
    )
    try:
        with RayActors(None, 2) as executor:
            yield executor
    finally:
        ray.shutdown()


def test_ray_actors_write_the_files_of_one_process(
    probes: tuple[str, ...], one_process: Path, tmp_path: Path, actors: RayActors
) -> None:
    assert actors.workers == 2 and actors.cpus == 1 and actors.gpus == 0
    run_attack(config(probes), tmp_path, chunk_size=CHUNK, executor=actors)
    assert_same_files(one_process, tmp_path)


@pytest.mark.parametrize("how", ["raise", "exit"])
def test_a_failed_shard_is_retried_on_ray_without_duplicates(
    probes: tuple[str, ...],
    one_process: Path,
    tmp_path: Path,
    actors: RayActors,
    monkeypatch: pytest.MonkeyPatch,
    how: str,
) -> None:
    # Shard 1 computes its rows, then raises (a task error) or kills its actor (the
    # actor is replaced by a new one, which loads the models again).
    monkeypatch.setenv(FAIL_SHARD_ENV, f"1:{how}")
    run_attack(config(probes), tmp_path, chunk_size=CHUNK, executor=actors)
    assert_same_files(one_process, tmp_path)
    assert actors.workers == 2
