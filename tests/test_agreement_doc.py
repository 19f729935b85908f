"""docs/agreement.md: its example stimuli are the default design's, as the generator
makes them today, and its accuracy grids, search tables and probe table are SmolLM2's
scores, searches and the MiniLM probe's figures as last measured.

The two example tables are rendered again from ``brittle agreement stimuli``'s default
design (seed 0; no model) by ``bench/reproduce_agreement.py --examples`` and must equal
the page's generated blocks byte for byte, so a change to the grammar or the lexicon
that moves item 0 fails here until ``make docs`` writes the page again. The accuracy
grids, the beam search's tables and the probe's table are rendered again from
``docs/agreement.json`` (what ``make reproduce`` last measured).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from brittle.engine.agreement.lexicon import VERB_PAIRS

from support import generated_blocks, tables_outside_blocks

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import reproduce_agreement as ra  # noqa: E402


def kept() -> ra.Figures:
    data: ra.Figures = json.loads(ra.MEASURED.read_text(encoding="utf-8"))
    return data


def test_the_page_holds_the_examples_and_the_measured_tables() -> None:
    page = generated_blocks(ra.DOC.read_text(encoding="utf-8"))
    assert page == ra.page_blocks(kept())


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


def test_no_table_of_a_measured_section_is_left_outside_a_block() -> None:
    text = ra.DOC.read_text(encoding="utf-8")
    sections = text.split("\n### ")[1:]
    measured = [s for s in sections if s.splitlines()[0].endswith("(measured here)")]
    assert len(measured) == 3
    for section in measured:
        end = section.find("\n## ")
        assert tables_outside_blocks(section[: end if end > 0 else None]) == []


def test_the_search_tables_cover_the_sixteen_cells_and_the_probe_every_verb() -> None:
    beam = kept()["searches"]["beam"]
    assert beam["config"]["search"] == "beam" and beam["config"]["budget"] == 3
    assert {ra.cell(i) for i in beam["items"]} == {(e, t) for e in "12" for t in ("sg", "pl")}
    blocks = ra.search_blocks(beam)
    rows = blocks["agreement-search"].splitlines()[2:]
    assert [r.split(" | ")[0] for r in rows] == [
        "| all 16",
        "| exp. 1, sg target (7)",
        "| exp. 1, pl target (7)",
        "| exp. 2 (2)",
    ]
    assert len(blocks["agreement-search-worst"].splitlines()) == 2 + 4
    probe = ra.probe_block(kept()["probe"])["agreement-probe"].splitlines()[2:]
    assert [r.split(" | ")[0] for r in probe] == [f"| {p.key}" for p in VERB_PAIRS]


def item(base: str, start: float, design: float, found: float, *changes: str) -> ra.AttackItem:
    return {
        "model": "m",
        "base": base,
        "base_margin": start,
        "worst_margin": found,
        "design_worst_margin": design,
        "changes": list(changes),
        "queries": 10,
        "text": f"text of {base}",
    }


def test_the_search_tables_average_each_group_and_show_its_worst_stimulus() -> None:
    items = [
        item("agr1-is-000-sg-pl-E4", -2.0, -1.0, 0.0, "depth=2"),
        item("agr1-was-000-sg-pl-E4", -4.0, -3.0, -1.0, "person=teacher:pl"),
        item("agr1-is-000-pl-sg-E4", -1.0, 1.0, 1.0),
        item("agr2-was-000-sg-complex-E4", -3.0, -2.0, 2.0, "clause_verb.2=figured"),
    ]
    blocks = ra.search_blocks({"config": {}, "seconds": None, "items": items})
    # a margin of 0 is an error (a tie), as in agreement attack's summary
    assert blocks["agreement-search"].splitlines()[2:] == [
        "| all 4 | -2.50 | -1.25 | +0.50 | 1.00 / 0.75 / 0.25 |",
        "| exp. 1, sg target (2) | -3.00 | -2.00 | -0.50 | 1.00 / 1.00 / 0.50 |",
        "| exp. 1, pl target (1) | -1.00 | +1.00 | +1.00 | 1.00 / 0.00 / 0.00 |",
        "| exp. 2 (1) | -3.00 | -2.00 | +2.00 | 1.00 / 1.00 / 0.00 |",
    ]
    assert blocks["agreement-search-worst"].splitlines()[2:] == [
        "| -2.00 -> +0.00 | depth=2 | text of agr1-is-000-sg-pl-E4 |",
        "| -1.00 -> +1.00 | - | text of agr1-is-000-pl-sg-E4 |",
        "| -3.00 -> +2.00 | clause_verb.2=figured | text of agr2-was-000-sg-complex-E4 |",
    ]
