"""docs/reproductions.md: its comparison tables are bench/reproduce_papers.py's output.

The tables are rendered again from the paper constants of ``reproduce_papers.py`` and
brittle's numbers in ``docs/reproductions.json`` (what ``make reproduce`` last wrote) and
must equal the page's generated blocks byte for byte; every row has the eight columns
and one of the four verdicts; every number the tables quote from a paper is found in
that paper's text (``shared/papers``, where present); and the verdict rules never say
more than the numbers show.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from support import generated_blocks, tables_outside_blocks

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import reproduce_fragility as rf  # noqa: E402
import reproduce_jabberwocky as rj  # noqa: E402
import reproduce_papers as rp  # noqa: E402
import reproduce_probe_parser as rpp  # noqa: E402
import reproduce_word_order as rw  # noqa: E402
import reproduce_word_order_damage as rd  # noqa: E402

PAPERS = ROOT.parent / "shared" / "papers"


def page_blocks() -> dict[str, str]:
    return generated_blocks(rp.DOC.read_text(encoding="utf-8"))


def measured() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(rp.MEASURED.read_text(encoding="utf-8"))
    return data


def cells(row: str) -> list[str]:
    """The cells of a Markdown table row (``\\|`` inside a cell is not a separator)."""
    inner = row.strip()[1:-1]
    return [c.strip() for c in re.split(r"(?<!\\)\|", inner)]


def fragility() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(rf.MEASURED.read_text(encoding="utf-8"))
    return data


def word_order() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(rw.MEASURED.read_text(encoding="utf-8"))["rows"]
    return rows


def test_the_page_holds_the_generated_tables() -> None:
    """The comparison tables (from docs/reproductions.json) and the data tables whose
    script keeps its figures in docs/ (Jabberwocky, probe vs parser, fragility, word
    order, word-order damage), each equal to its script's rendering, and no other."""

    def kept(script: Any) -> Any:
        return json.loads(script.MEASURED.read_text(encoding="utf-8"))

    expected = {
        **rp.blocks(measured()),
        **rj.blocks(kept(rj)),
        **rpp.blocks(kept(rpp)),
        **rf.blocks(fragility()),
        **rw.blocks(word_order()),
        **rd.blocks(kept(rd)),
    }
    assert page_blocks() == expected


def test_every_table_of_the_page_is_generated() -> None:
    """No Markdown table outside a generated block (command examples aside): a figure
    pasted by hand would never be checked against its script."""
    assert tables_outside_blocks(rp.DOC.read_text(encoding="utf-8")) == []


def test_the_fragility_tables_cover_every_representation_method_and_budget() -> None:
    data = fragility()
    assert list(data) == ["minilm2", "glove", "smollm2-30", "minilm2-sentence"]
    for name, by_method in data.items():
        methods = [m for m in rf.METHODS if not (m == "coco" and name.endswith("-sentence"))]
        assert list(by_method) == methods, name
        for by_tau in by_method.values():
            assert sorted(by_tau) == [str(t) for t in rf.BUDGETS]
            for row in by_tau.values():
                assert list(row["tasks"]) == [
                    "distance.uuas",
                    "depth.depth_spearman",
                    "pos.pos_acc",
                    "root.root_acc",
                    "tree-depth.tree_depth_acc",
                ]


def test_every_comparison_row_has_the_columns_and_one_verdict() -> None:
    blocks = page_blocks()
    data = ("jabberwocky-", "probe-parser", "fragility-", "word-order-", "damage-")
    papers = [n for n in blocks if not n.startswith(data)]
    assert papers == ["summary", *rp.PAPERS]
    header = cells(rp.HEADER.splitlines()[0])
    assert header == [
        "#",
        "claim",
        "where",
        "paper's setting",
        "paper",
        "brittle",
        "brittle's setting",
        "verdict",
    ]
    seen = 0
    for name in rp.PAPERS:
        lines = blocks[name].splitlines()
        assert "\n".join(lines[:2]) == rp.HEADER
        for line in lines[2:]:
            row = cells(line)
            assert len(row) == len(header), line
            kind = re.fullmatch(r"\*\*(.+?)\*\*: .+", row[-1])
            assert kind is not None and kind.group(1) in rp.VERDICTS, row[-1]
            assert row[3] and row[4] and row[6], line  # settings and the paper's number
            seen += 1
    assert seen == len(rp.CLAIMS)


def test_every_testable_claim_has_brittles_number() -> None:
    numbers = measured()
    assert set(numbers) == {c.id for c in rp.CLAIMS}
    for claim in rp.CLAIMS:
        if not claim.untestable:
            assert numbers[claim.id] is not None, f"{claim.id}: no measurement"


@pytest.mark.skipif(not PAPERS.is_dir(), reason="the papers' text is not on this machine")
def test_quoted_numbers_are_in_the_papers() -> None:
    for claim in rp.CLAIMS:
        assert claim.quotes, claim.id
        text = " ".join((PAPERS / rp.SOURCES[claim.paper]).read_text(encoding="utf-8").split())
        for quote in claim.quotes:
            assert " ".join(quote.split()) in text, f"{claim.id}: {quote!r}"


def _claim(**kw: Any) -> rp.Claim:
    base: dict[str, Any] = {
        "id": "x",
        "paper": "tale",
        "claim": "c",
        "where": "w",
        "setting": "s",
        "shown": "p",
        "brittle": "b",
    }
    return rp.Claim(**{**base, **kw})


@pytest.mark.parametrize(
    ("claim", "value", "low", "high", "kind"),
    [
        (_claim(value=0.25), 0.2, 0.15, 0.3, rp.REPRODUCED),  # inside the CI
        (_claim(value=0.25, spread=0.1), 0.16, 0.15, 0.17, rp.REPRODUCED),  # in the paper's ±
        (_claim(value=0.25), 0.04, 0.02, 0.06, rp.DIRECTION),  # same sign, far smaller
        (_claim(value=0.25), 0.01, -0.01, 0.03, rp.NOT_REPRODUCED),  # no sign established
        (_claim(value=0.25), -0.05, -0.08, -0.02, rp.NOT_REPRODUCED),  # the other sign
        (_claim(compare="sign", value=-1), -0.05, -0.07, -0.03, rp.REPRODUCED),
        (_claim(compare="sign", value=-1), 0.03, 0.02, 0.04, rp.NOT_REPRODUCED),
        (_claim(compare="sign", value=1, capped="no number"), 0.2, 0.1, 0.3, rp.DIRECTION),
        (_claim(compare="equal", value=1.0, tolerance=0.2), 0.85, None, None, rp.REPRODUCED),
        (_claim(compare="equal", value=1.0, tolerance=0.2), 0.25, None, None, rp.NOT_REPRODUCED),
        (_claim(compare="at_least", value=1.0), 0.75, None, None, rp.NOT_REPRODUCED),
        (_claim(compare="range", value=(0.0, 0.2)), 0.17, None, None, rp.REPRODUCED),
        (_claim(value=0.111, tolerance=0.01), 0.1, None, None, rp.DIRECTION),
    ],
)
def test_verdicts_follow_the_numbers(
    claim: rp.Claim, value: float, low: float | None, high: float | None, kind: str
) -> None:
    got, why = rp.verdict(claim, {"value": value, "low": low, "high": high, "text": ""})
    assert got == kind, why


def test_a_worst_of_b_is_read_against_its_null() -> None:
    """A worst-case drop whose CI excludes 0 establishes nothing when its excess over
    the largest gain among the same draws does not."""
    claim = _claim(value=0.25)
    drop = {"value": 0.04, "low": 0.02, "high": 0.06, "text": ""}
    assert rp.verdict(claim, drop)[0] == rp.DIRECTION
    kind, why = rp.verdict(claim, {**drop, "excess": (-0.01, 0.03)})
    assert kind == rp.NOT_REPRODUCED and "includes 0" in why
    kind, why = rp.verdict(claim, {**drop, "excess": (0.01, 0.03)})
    assert kind == rp.DIRECTION and "excess over the null" in why
    # not even a size that matches the paper's is reproduced when the null explains it
    inside = {**drop, "value": 0.2, "high": 0.3}
    assert rp.verdict(claim, inside)[0] == rp.REPRODUCED
    assert rp.verdict(claim, {**inside, "excess": (-0.1, 0.1)})[0] == rp.NOT_REPRODUCED
    assert rp.verdict(claim, {**inside, "excess": (0.02, 0.1)})[0] == rp.REPRODUCED
    # a ratio of two worst drops, one of them no larger than its null, compares chance
    equal = _claim(compare="equal", value=1.0, tolerance=0.2)
    ratio = {"value": 0.95, "low": None, "high": None, "text": ""}
    assert rp.verdict(equal, ratio)[0] == rp.REPRODUCED
    kind, why = rp.verdict(equal, {**ratio, "unfounded": ["0.116"]})
    assert kind == rp.NOT_REPRODUCED and "0.116 is no larger than its null" in why


def test_untestable_and_missing_claims_are_not_testable() -> None:
    assert rp.verdict(_claim(untestable="no GPT-2"), None) == (rp.NOT_TESTABLE, "no GPT-2")
    assert rp.verdict(_claim(value=1.0), None)[0] == rp.NOT_TESTABLE


def test_clouatre_listing_1_is_reproduced_exactly() -> None:
    for claim in rp.CLAIMS:
        if claim.id.startswith("cl-listing"):
            assert claim.measure is not None
            assert rp.verdict(claim, claim.measure({}))[0] == rp.REPRODUCED
