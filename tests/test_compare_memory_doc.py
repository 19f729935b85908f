"""docs/performance.md's compare-methods memory table is bench/compare_memory.py's output.

It is rendered again from ``docs/compare-memory.json`` and must equal the page's
generated block byte for byte; the kept runs are the first 100 sentences of EWT test and
the whole file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from support import generated_blocks

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import compare_memory as cm  # noqa: E402


def kept() -> cm.Figures:
    data: cm.Figures = json.loads(cm.MEASURED.read_text(encoding="utf-8"))
    return data


def test_the_page_holds_the_table() -> None:
    page = generated_blocks(cm.DOC.read_text(encoding="utf-8"))
    assert page["compare-memory"] == cm.blocks(kept())["compare-memory"]


def test_the_runs_are_the_first_100_sentences_and_the_whole_file() -> None:
    data = kept()
    assert [r["sentences"] for r in data["runs"]] == [100, 2077]
    assert data["treebank"] == cm.TEST.name
    assert data["command"].startswith("brittle compare-methods ")
    assert all(r["peak_bytes"] > 0 and r["seconds"] > 0 for r in data["runs"])


def test_the_verdict_follows_the_figures(tmp_path: Path) -> None:
    runs: list[cm.Run] = [
        {"sentences": 100, "peak_bytes": 1_000_000_000, "seconds": 20.0},
        {"sentences": 2077, "peak_bytes": 1_080_000_000, "seconds": 90.0},
    ]
    text = cm.blocks({"treebank": "t", "command": "c", "runs": runs})["compare-memory"]
    assert "| 2,077 sentences | 1.08 GB | 1.08x | 90 s |" in text and "within the target" in text
    runs[1]["peak_bytes"] = 1_200_000_000
    text = cm.blocks({"treebank": "t", "command": "c", "runs": runs})["compare-memory"]
    assert "above the target of 1.10" in text
    treebank = tmp_path / "t.conllu"
    treebank.write_text("# sent_id = a\n1\tx\n\n# sent_id = b\n1\ty\n\n", encoding="utf-8")
    assert cm._sentences(treebank, None) == 2 and cm._sentences(treebank, 1) == 1
