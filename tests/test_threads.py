"""A searching process runs numpy's BLAS on one thread."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_attack import components, config

from brittle.engine.attack import chunk_search, run_attack

CHILD = """
import json
import numpy as np
from threadpoolctl import threadpool_info
from brittle.engine.core.threads import single_blas_thread
assert single_blas_thread() is True
a = np.random.default_rng(0).normal(size=(64, 64))
assert np.allclose(a @ a.T, (a @ a.T).T)
print(json.dumps([i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]))
"""


def test_blas_runs_on_one_thread() -> None:
    # a child process: the limit holds for the rest of the process that sets it
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True)
    threads = json.loads(done.stdout)
    assert threads and all(n == 1 for n in threads)


def test_an_attack_sets_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[bool] = []

    def record() -> bool:
        calls.append(True)
        return True

    monkeypatch.setattr(chunk_search, "single_blas_thread", record)
    run_attack(config(search="sample", limit=2), tmp_path, components=components("sample"))
    assert calls
