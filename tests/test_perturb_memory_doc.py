"""docs/performance.md's perturb memory table is bench/perturb_memory.py's output.

It is rendered again from ``docs/perturb-memory.json`` and must equal the page's
generated block byte for byte; the kept runs are the first 100 sentences of EWT test
and the whole file, and the whole run's output begins with the shorter run's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from support import generated_blocks

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import perturb_memory as pm  # noqa: E402


def kept() -> pm.Figures:
    data: pm.Figures = json.loads(pm.MEASURED.read_text(encoding="utf-8"))
    return data


def test_the_page_holds_the_table() -> None:
    page = generated_blocks(pm.DOC.read_text(encoding="utf-8"))
    assert page["perturb-memory"] == pm.blocks(kept())["perturb-memory"]


def test_the_runs_are_the_first_100_sentences_and_the_whole_file() -> None:
    data = kept()
    assert [r["sentences"] for r in data["runs"]] == [100, 2077]
    assert data["treebank"] == pm.TEST.name and data["same_start"]
    assert all(r["peak_bytes"] > 0 and r["seconds"] > 0 for r in data["runs"])


def test_the_verdict_follows_the_figures() -> None:
    def figures(whole: int) -> pm.Figures:
        runs: list[pm.Run] = [
            {"sentences": 100, "peak_bytes": 1_000_000_000, "seconds": 30.0},
            {"sentences": 2077, "peak_bytes": whole, "seconds": 300.0},
        ]
        return {"treebank": "t", "command": "c", "runs": runs, "same_start": False}

    within = pm.blocks(figures(1_080_000_000))["perturb-memory"]
    assert "| 2,077 sentences | 1.08 GB | 1.08x | 300 s |" in within
    assert "within the target of 1.10" in within and "are not the same" in within
    assert "above the target" in pm.blocks(figures(1_150_000_000))["perturb-memory"]
