"""The collector kept off what a block loads."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from brittle.engine.core import heap


@pytest.fixture(autouse=True)
def _unfrozen() -> Iterator[None]:
    yield
    gc.unfreeze()  # what a test froze goes back to the collector


def test_loading_holds_full_collections_and_freezes_what_it_loaded() -> None:
    before = gc.get_threshold()
    gc.unfreeze()
    with heap.loading():
        assert gc.get_threshold()[:2] == before[:2]
        assert gc.get_threshold()[2] > 10**8  # no full collection while loading
        kept = [[i] for i in range(10_000)]
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() >= len(kept)
    assert all(o is not kept[0] for o in gc.get_objects(2))  # in the permanent generation


def test_nested_blocks_restore_the_outer_thresholds() -> None:
    before = gc.get_threshold()
    with heap.loading():
        with heap.loading():
            pass
        assert gc.get_threshold()[2] > 10**8
    assert gc.get_threshold() == before


def test_thresholds_are_restored_when_loading_fails() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), heap.loading():
        raise RuntimeError("a model failed to load")
    assert gc.get_threshold() == before
