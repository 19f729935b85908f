"""docs/attack.md and the README: their attack tables are bench/reproduce_attack.py's
output.

The tables are rendered again from ``docs/attack.json`` (what ``make reproduce`` last
wrote) and must equal the page's generated blocks byte for byte, so a table edited by
hand, or a change of the script's format without a rerun, fails here.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import parser_scores as ps  # noqa: E402
import reproduce_attack as ra  # noqa: E402

BLOCK = re.compile(r"<!-- generated: (\S+) -->\n(.*?)<!-- end generated -->", re.S)


def figures() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(ra.MEASURED.read_text(encoding="utf-8"))
    return data


def test_the_page_holds_the_generated_tables() -> None:
    """The attack tables (docs/attack.json) and the parsers' clean scores
    (docs/parser-scores.json), each equal to its script's rendering, and no other."""
    page = dict(BLOCK.findall(ra.DOC.read_text(encoding="utf-8")))
    scores = json.loads(ps.MEASURED.read_text(encoding="utf-8"))
    assert page == {**ra.blocks(figures()), **ps.blocks(scores)}


def test_the_parser_scores_cover_both_parsers_on_both_test_sets() -> None:
    rows = json.loads(ps.MEASURED.read_text(encoding="utf-8"))
    assert [(r["parser"], r["test"]) for r in rows] == [
        (p, Path(t).stem) for p in ps.PARSERS for t in ps.TESTS
    ]
    for r in rows:  # only the UD-labelled parser has a LAS
        assert (r["las"] is None) == (r["parser"] == "spacy")
        assert 0 < r["uas"] < 1 and 0 < r["upos"] < 1


def test_the_readme_holds_its_summary_of_them() -> None:
    readme = dict(BLOCK.findall(ra.README.read_text(encoding="utf-8")))
    for name, body in ra.readme_blocks(figures()).items():
        assert readme[name] == body


def test_the_figures_cover_every_search_budget_and_pool() -> None:
    data = figures()
    assert set(data["searches"]) == set(ra.SEARCHES)
    for by_tau in data["searches"].values():
        assert sorted(by_tau) == [str(t) for t in ra.BUDGETS]
        for row in by_tau.values():
            # every result says how valid it is
            assert set(row["validity"]) == {"tree", "grammatical", "meaning"}
    pools = {(r["pool"], r["constraints"]) for r in data["pools"]}
    assert len(pools) == len(ra.POOLS)
    assert len(data["pools"]) == len(ra.POOLS) * (1 + len(ra.BUDGETS))


def test_the_table_shows_drops_with_their_spread() -> None:
    row = {"clean": 0.7, "perturbed": 0.65, "mean_drop": 0.05, "std_drop": 0.1}
    assert ra._task(row) == "0.700 → 0.650 (0.050 ± 0.100)"
    assert ra._shares({"validity": None}) == "–"
    shares = {"validity": {"tree": 1.0, "grammatical": 0.5, "meaning": 0.25}}
    assert ra._shares(shares) == "100% / 50% / 25%"
