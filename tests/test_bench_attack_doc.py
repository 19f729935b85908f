"""docs/attack.md's speed table is bench/reproduce_bench_attack.py's output.

It is rendered again from ``docs/bench-attack.json`` and must equal the page's
generated block byte for byte; the kept runs are bench_attack.py's on the first 20 and
the first 60 sentences of EWT test, in lock-step rounds on 2 torch threads.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from support import generated_blocks

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import reproduce_bench_attack as rba  # noqa: E402


def kept() -> rba.Figures:
    data: rba.Figures = json.loads(rba.MEASURED.read_text(encoding="utf-8"))
    return data


def run(sentences: int, candidates: int, engine: float, full: float, shallow: float) -> rba.Run:
    return {
        "sentences": sentences,
        "search": "beam",
        "lockstep": True,
        "threads": 2,
        "candidates": candidates,
        "batches": 15,
        "probed_layer": 2,
        "layers": 6,
        "engine_seconds": engine,
        "full_seconds": full,
        "shallow_seconds": shallow,
        "load_before": 0.5,
        "load_after": 1.25,
        "wall_seconds": 61.0,
        "other_cpu_seconds": 6.1,
    }


def test_the_page_holds_the_table() -> None:
    page = generated_blocks(rba.DOC.read_text(encoding="utf-8"))
    assert page["bench-attack"] == rba.blocks(kept())["bench-attack"]


def test_the_runs_are_the_docs_workload_on_20_and_60_sentences() -> None:
    data = kept()
    assert data["treebank"] == rba.TEST.name
    assert [r["sentences"] for r in data["runs"]] == list(rba.SIZES) == [20, 60]
    for r in data["runs"]:
        assert (r["search"], r["lockstep"], r["threads"]) == ("beam", True, 2)
        assert (r["probed_layer"], r["layers"]) == (2, 6)  # MiniLM's layer -5
        assert r["candidates"] > 0 and 0 < r["batches"] <= r["candidates"]
        assert min(r["engine_seconds"], r["full_seconds"], r["shallow_seconds"]) > 0
        # the blocks below the probed layer cost less than every block
        assert r["shallow_seconds"] < r["full_seconds"]
        assert r["wall_seconds"] > r["engine_seconds"]
        assert 0 <= r["other_cpu_seconds"] <= data["cores"] * r["wall_seconds"]


def test_the_rows_are_the_rates_and_their_ratios() -> None:
    data: rba.Figures = {
        "treebank": "t",
        "cores": 2,
        "runs": [
            run(20, 1007, 1007 / 316.5, 1007 / 204.2, 1007 / 556.8),
            run(60, 3672, 3672 / 345.7, 3672 / 162.2, 3672 / 464.0),
        ],
    }
    lines = rba.blocks(data)["bench-attack"].splitlines()
    assert lines[0].startswith("| sentences | candidates | engine | bare forward, all 6 layers |")
    assert lines[0].endswith("| bare forward, layers 1–2 | ratio |")
    assert lines[2] == "| 20 | 1,007 | 316.5/s | 204.2/s | 1.55 | 556.8/s | 0.57 |"
    assert lines[3] == "| 60 | 3,672 | 345.7/s | 162.2/s | 2.13 | 464.0/s | 0.75 |"
    assert lines[4] == ""
    assert all(len(line) <= 88 for line in lines[5:])
    note = " ".join(lines[5:])
    assert note.startswith("Per run (2 cores, 2 torch threads, one run each): 20 sentences in")
    assert "15 model passes, 61 s for the whole command, other processes 10% of one core" in note
    assert note.endswith("; 60 sentences in 15 model passes, 61 s, 10%, 0.50 → 1.25.")
