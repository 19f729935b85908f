"""docs/agreement.md: its example stimuli are the default design's, as the generator
makes them today, and its accuracy grids are SmolLM2's scores as last measured.

The two example tables are rendered again from ``brittle agreement stimuli``'s default
design (seed 0; no model) by ``bench/reproduce_agreement.py --examples`` and must equal
the page's generated blocks byte for byte, so a change to the grammar or the lexicon
that moves item 0 fails here until ``make docs`` writes the page again. The accuracy
grids are rendered again from ``docs/agreement.json`` (what ``make reproduce`` last
measured).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from support import generated_blocks

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import reproduce_agreement as ra  # noqa: E402


def kept() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(ra.MEASURED.read_text(encoding="utf-8"))
    return data


def test_the_page_holds_the_examples_and_the_measured_grids() -> None:
    page = generated_blocks(ra.DOC.read_text(encoding="utf-8"))
    assert page == {**ra.accuracy_blocks(kept()), **ra.example_blocks()}


def test_the_grids_cover_every_condition_of_both_experiments() -> None:
    blocks = ra.accuracy_blocks(kept())
    one = blocks["agreement-exp1-accuracy"].splitlines()
    assert one[0] == "| target | attractors | E0 | E1 | E2 | E3 | E4 |" and len(one) == 2 + 4
    two = blocks["agreement-exp2-accuracy"].splitlines()
    assert two[0] == "| target | matrix subject | E1 | E2 | E3 | E4 |" and len(two) == 2 + 6
    assert kept()["counts"]["1"]["conditions"] == 20
    assert kept()["counts"]["2"]["conditions"] == 24


def test_the_examples_show_every_depth_and_every_matrix_subject() -> None:
    blocks = ra.example_blocks()
    one = blocks["agreement-exp1-example"].splitlines()[2:]
    assert [row.split(" | ")[0] for row in one] == [f"| E{d}" for d in range(5)]
    # the target and its verb close every experiment-1 sentence; attractors grow with depth
    assert all(row.endswith(" the singer is anxious. |") or "| E0 |" in row for row in one)
    two = blocks["agreement-exp2-example"].splitlines()[2:]
    assert [row.split(" | ")[0] for row in two] == ["| none", "| simple", "| complex"]
    assert all(" were " in row for row in two)
