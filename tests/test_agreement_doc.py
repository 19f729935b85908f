"""docs/agreement.md: its example stimuli are the default design's, as the generator
makes them today.

The two example tables are rendered again from ``brittle agreement stimuli``'s default
design (seed 0; no model) by ``bench/reproduce_agreement.py --examples`` and must equal
the page's generated blocks byte for byte, so a change to the grammar or the lexicon
that moves item 0 fails here until ``make docs`` writes the page again.
"""

from __future__ import annotations

import sys
from pathlib import Path

from support import generated_blocks

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import reproduce_agreement as ra  # noqa: E402


def test_the_example_tables_are_the_default_designs_item_0() -> None:
    page = generated_blocks(ra.DOC.read_text(encoding="utf-8"))
    assert page == ra.example_blocks()


def test_the_examples_show_every_depth_and_every_matrix_subject() -> None:
    blocks = ra.example_blocks()
    one = blocks["agreement-exp1-example"].splitlines()[2:]
    assert [row.split(" | ")[0] for row in one] == [f"| E{d}" for d in range(5)]
    # the target and its verb close every experiment-1 sentence; attractors grow with depth
    assert all(row.endswith(" the singer is anxious. |") or "| E0 |" in row for row in one)
    two = blocks["agreement-exp2-example"].splitlines()[2:]
    assert [row.split(" | ")[0] for row in two] == ["| none", "| simple", "| complex"]
    assert all(" were " in row for row in two)
