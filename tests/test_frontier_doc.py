"""docs/frontier.md: its table is bench/reproduce_frontier.py's output.

The table is rendered again from ``docs/frontier.json`` (what ``make reproduce`` last
wrote: ``brittle frontier``'s own JSON) and must equal the page's generated block byte
for byte, so a table edited by hand, or a change of the command's format without a
rerun, fails here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from support import generated_blocks

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import reproduce_frontier as rf  # noqa: E402

from brittle.engine.reports.report import LEVELS  # noqa: E402


def figures() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(rf.MEASURED.read_text(encoding="utf-8"))
    return data


def test_the_page_holds_the_generated_table() -> None:
    page = generated_blocks(rf.DOC.read_text(encoding="utf-8"))
    own = rf.blocks(figures())
    assert {k: page[k] for k in own} == own


def test_the_rows_are_every_preset_then_every_generator_on_the_same_sentences() -> None:
    rows = figures()["rows"]
    # the command's default presets, one per validity level, then the generators
    assert [r["name"] for r in rows] == [*LEVELS, *rf.METHODS]
    assert {r["sentences"] for r in rows} == {rf.LIMIT}
    for row in rows:
        # every result says how valid it is
        assert set(row["valid"]) == {"tree", "grammatical", "meaning"}
        assert 0 <= row["changed"] <= row["sentences"]
