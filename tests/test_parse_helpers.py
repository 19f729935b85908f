"""Parsing split between this process and helper processes: the same parses, in order,
whatever happens to a helper."""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.errors import ResourceMissingError
from brittle.scorers.parsers import CachedParser, Parse, SpacyBackend, make_parser
from brittle.scorers.parsers.helpers import (
    HELPERS_ENV,
    SplitBackend,
    auto_helpers,
    split_by_words,
)

from support import EWT_TEST

DEFAULT_TREEBANK = Path(__file__).resolve().parents[1] / "data" / "default.conllu"
needs_spacy = pytest.mark.needs("spacy-model")


@dataclass
class ChainBackend:
    """Parses every sentence as a chain (word i+1 headed by word i), tagging each word
    with the process that parsed it only through ``mark``; fails to load when asked."""

    fail_load: bool = False
    fail_parse: bool = False
    name: str = "chain"
    ud_labels: bool = False
    slow_load: float = 0.0
    slow_exit: float = 0.0

    def prepare(self) -> None:
        if self.fail_load:
            raise RuntimeError("no model here")
        time.sleep(self.slow_load)
        if self.slow_exit:  # as a loaded library's clean-up at interpreter exit
            atexit.register(time.sleep, self.slow_exit)

    def describe(self) -> dict[str, object]:
        return {"parser": self.name}

    def parse_words(self, batch: Sequence[tuple[str, ...]]) -> list[Parse]:
        if self.fail_parse:
            raise RuntimeError("parse failed")
        return [Parse.build(range(len(w)), ["X"] * len(w), [w[0]] * len(w)) for w in batch]


def _batch(n: int) -> list[tuple[str, ...]]:
    return [tuple(f"w{i}_{j}" for j in range(1 + (i * 7) % 13)) for i in range(n)]


@given(
    lengths=st.lists(st.integers(1, 40), max_size=60),
    parts=st.integers(1, 5),
)
def test_split_covers_the_batch_in_order(lengths: list[int], parts: int) -> None:
    batch = [("w",) * n for n in lengths]
    bounds = split_by_words(batch, parts)
    assert len(bounds) <= parts
    flat = [i for start, stop in bounds for i in range(start, stop)]
    assert flat == list(range(len(batch)))
    assert all(stop > start for start, stop in bounds)
    if len(bounds) > 1:  # no part is more than one sentence beyond its share
        total = sum(lengths)
        longest = max(lengths)
        for start, stop in bounds:
            assert sum(lengths[start:stop]) <= total / parts + longest + 1e-9


@given(
    lengths=st.lists(st.integers(1, 40), min_size=1, max_size=60),
    weights=st.lists(st.floats(0.1, 10.0), min_size=1, max_size=4),
)
def test_weighted_split_follows_the_weights(lengths: list[int], weights: list[float]) -> None:
    batch = [("w",) * n for n in lengths]
    bounds = split_by_words(batch, len(weights), weights)
    flat = [i for start, stop in bounds for i in range(start, stop)]
    assert flat == list(range(len(batch)))
    # every cut lies within half a sentence of a cut the weights ask for
    total, longest = sum(lengths), max(lengths)
    asked = [total * sum(weights[: k + 1]) / sum(weights) for k in range(len(weights) - 1)]
    for _, stop in bounds[:-1]:
        assert min(abs(sum(lengths[:stop]) - a) for a in asked) <= longest / 2 + 1e-9


def test_split_needs_a_part_and_positive_weights() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        split_by_words([("a",)], 0)
    with pytest.raises(ValueError, match="positive"):
        split_by_words([("a",), ("b",)], 2, [1.0, 0.0])
    with pytest.raises(ValueError, match="positive"):
        split_by_words([("a",), ("b",)], 2, [1.0])


def test_shares_follow_the_measured_speeds() -> None:
    split = SplitBackend(ChainBackend(), ChainBackend(), helpers=1, min_split=4)
    try:
        assert split.wait_ready() == 1
        batch = _batch(60)
        assert split.parse_words(batch) == ChainBackend().parse_words(batch)
        assert split._speed is not None and split._pool[0].speed is not None
        # told that this process parses three times as fast as its helper, it keeps
        # about three quarters of the words (and the parses are unchanged)
        split._speed, split._pool[0].speed = 3.0, 1.0
        sent: list[int] = []
        conn = split._pool[0].conn
        original = conn.send

        def spy(batch: object) -> None:
            if isinstance(batch, list):
                sent.append(sum(len(w) for w in batch))
            original(batch)

        split._pool[0].conn.send = spy  # type: ignore[method-assign,assignment]
        assert split.parse_words(batch) == ChainBackend().parse_words(batch)
        total = sum(len(w) for w in batch)
        assert abs(sent[0] - total / 4) <= 13
    finally:
        split.close()


def test_helpers_parse_their_part_in_order() -> None:
    split = SplitBackend(ChainBackend(), ChainBackend(), helpers=2, min_split=4)
    try:
        assert split.wait_ready() == 2
        batch = _batch(40)
        assert split.parse_words(batch) == ChainBackend().parse_words(batch)
        small = _batch(3)  # below min_split: parsed here
        assert split.parse_words(small) == ChainBackend().parse_words(small)
    finally:
        split.close()


def test_a_stopped_helper_ends_without_tearing_its_interpreter_down() -> None:
    """close() would otherwise wait for the libraries' clean-up (0.7 s with spaCy);
    here a clean-up of 30 s would run into close()'s 5 s limit and be killed."""
    split = SplitBackend(ChainBackend(), ChainBackend(slow_exit=30), helpers=1, min_split=4)
    assert split.wait_ready() == 1
    batch = _batch(20)
    assert split.parse_words(batch) == ChainBackend().parse_words(batch)
    process = split._pool[0].process
    split.close()
    assert process.returncode == 0


def test_a_helper_that_cannot_load_is_dropped() -> None:
    split = SplitBackend(ChainBackend(), ChainBackend(fail_load=True), helpers=1, min_split=4)
    try:
        assert split.wait_ready() == 0
        batch = _batch(30)
        assert split.parse_words(batch) == ChainBackend().parse_words(batch)
    finally:
        split.close()


def test_a_helper_that_fails_or_dies_is_dropped_and_its_part_parsed_here() -> None:
    failing = SplitBackend(ChainBackend(), ChainBackend(fail_parse=True), helpers=1, min_split=4)
    dying = SplitBackend(ChainBackend(), ChainBackend(), helpers=2, min_split=4)
    try:
        assert failing.wait_ready() == 1
        batch = _batch(30)
        assert failing.parse_words(batch) == ChainBackend().parse_words(batch)
        assert failing.wait_ready() == 0  # dropped
        assert dying.wait_ready() == 2
        dying._pool[0].process.kill()
        dying._pool[0].process.wait()
        assert dying.parse_words(batch) == ChainBackend().parse_words(batch)
        assert len(dying._pool) == 1
        assert dying.parse_words(batch) == ChainBackend().parse_words(batch)
    finally:
        failing.close()
        dying.close()


@dataclass
class CountingBackend(ChainBackend):
    """A chain parser that counts its loads and the sentences it parsed here."""

    loads: int = 0
    parsed: int = 0

    def prepare(self) -> None:
        super().prepare()
        self.loads += 1

    def parse_words(self, batch: Sequence[tuple[str, ...]]) -> list[Parse]:
        self.parsed += len(batch)
        return super().parse_words(batch)


def test_a_located_backend_loads_at_its_first_batch_while_helpers_parse_it() -> None:
    here = CountingBackend()
    located: list[bool] = []
    split = SplitBackend(
        here, ChainBackend(), helpers=1, min_split=4, locate=lambda: located.append(True)
    )
    try:
        split.prepare()
        assert located == [True] and here.loads == 0  # checked, not loaded
        assert split.wait_ready() == 1  # the helper started at prepare()
        batch = _batch(40)
        assert split.parse_words(batch) == ChainBackend().parse_words(batch)
        assert here.loads == 1 and here.parsed == 0  # loaded while the helper parsed
        assert split.parse_words(batch) == ChainBackend().parse_words(batch)
        assert here.loads == 1 and 0 < here.parsed < len(batch)  # now it takes its share
    finally:
        split.close()


def test_describing_a_located_backend_loads_it_once() -> None:
    here = CountingBackend()
    split = SplitBackend(here, ChainBackend(), helpers=1, min_split=4, locate=lambda: None)
    try:
        split.prepare()
        assert split.describe() == {"parser": "chain"}
        assert here.loads == 1
        assert split.wait_ready() == 1
        batch = _batch(40)
        assert split.parse_words(batch) == ChainBackend().parse_words(batch)
        assert here.loads == 1 and 0 < here.parsed < len(batch)  # loaded: takes its share
    finally:
        split.close()


def test_a_located_backend_without_a_ready_helper_loads_and_parses_alone() -> None:
    here = CountingBackend()
    split = SplitBackend(
        here, ChainBackend(fail_load=True), helpers=1, min_split=4, locate=lambda: None
    )
    try:
        split.prepare()
        assert split.wait_ready() == 0
        batch = _batch(30)
        assert split.parse_words(batch) == ChainBackend().parse_words(batch)
        assert here.loads == 1 and here.parsed == len(batch)
        small = _batch(2)
        assert split.parse_words(small) == ChainBackend().parse_words(small)
        assert here.loads == 1
    finally:
        split.close()


def test_a_missing_pipeline_fails_at_prepare_without_loading_spacy(tmp_path: Path) -> None:
    parser = make_parser("spacy", model=str(tmp_path / "no-such-pipeline"), helpers=1)
    with pytest.raises(ResourceMissingError, match="no-such-pipeline"):
        parser.prepare()


def test_empty_words_are_refused_before_any_split() -> None:
    split = SplitBackend(ChainBackend(), ChainBackend(), helpers=1, min_split=2)
    with pytest.raises(ValueError, match="empty"):
        split.parse_words([("a",), (), ("b",)])
    split.close()


def test_helper_count_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(HELPERS_ENV, "3")
    assert auto_helpers() == 3
    monkeypatch.setenv(HELPERS_ENV, "0")
    assert auto_helpers() == 0
    monkeypatch.setenv(HELPERS_ENV, "many")
    assert auto_helpers() in (0, 1)
    monkeypatch.delenv(HELPERS_ENV)
    assert auto_helpers() in (0, 1)
    monkeypatch.setenv(HELPERS_ENV, "1")
    parser = make_parser("spacy")
    assert isinstance(parser, CachedParser) and isinstance(parser.backend, SplitBackend)
    monkeypatch.setenv(HELPERS_ENV, "0")
    plain = make_parser("spacy")
    assert isinstance(plain, CachedParser) and isinstance(plain.backend, SpacyBackend)


@needs_spacy
def test_spacy_split_equals_one_process_on_a_real_treebank() -> None:
    path = EWT_TEST if EWT_TEST.exists() else DEFAULT_TREEBANK
    words = [s.forms for s in read_conllu(path)[:160]]
    alone = SpacyBackend()
    split = SplitBackend(SpacyBackend(), SpacyBackend(), helpers=1)
    try:
        assert split.wait_ready() == 1
        assert split.parse_words(words) == alone.parse_words(words)
    finally:
        split.close()


def test_a_script_without_a_main_guard_runs_once(tmp_path: Path) -> None:
    runs = tmp_path / "runs.txt"
    script = tmp_path / "script.py"
    script.write_text(
        f"import sys\nsys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        f"with open({str(runs)!r}, 'a') as f:\n    f.write('run\\n')\n"
        "from test_parse_helpers import ChainBackend, _batch\n"
        "from brittle.scorers.parsers.helpers import SplitBackend\n"
        "split = SplitBackend(ChainBackend(), ChainBackend(), helpers=1, min_split=4)\n"
        "assert split.wait_ready() == 1\n"
        "assert split.parse_words(_batch(20)) == ChainBackend().parse_words(_batch(20))\n"
        "split.close()\n"
        "print('parsed')\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "parsed\n"  # nothing from the helper on standard output
    assert runs.read_text() == "run\n"


def test_a_helper_still_loading_ends_when_its_parent_is_gone(tmp_path: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text(
        f"import os, sys\nsys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from test_parse_helpers import ChainBackend\n"
        "from brittle.scorers.parsers.helpers import SplitBackend\n"
        "split = SplitBackend(ChainBackend(), ChainBackend(slow_load=60), helpers=1)\n"
        "split.start()\n"
        "print(split._pool[0].process.pid, flush=True)\n"
        "os._exit(0)\n"  # no close(): the helper is orphaned in the middle of its load
    )
    started = time.perf_counter()
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    # capture_output waited for every holder of the child's standard error: the
    # helper left within seconds, not after its 60 s load
    assert time.perf_counter() - started < 30
    helper = int(done.stdout.split()[0])
    deadline = time.perf_counter() + 10
    while time.perf_counter() < deadline and _alive(helper):
        time.sleep(0.1)
    assert not _alive(helper)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    try:
        return "\tZ" not in status.read_text()  # a zombie has exited
    except OSError:
        return False
