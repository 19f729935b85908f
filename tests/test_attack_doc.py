"""docs/attack.md and the README: their attack tables are bench/reproduce_attack.py's,
bench/parser_scores.py's, bench/reproduce_parser_attack.py's, bench/guided_search.py's
and bench/reproduce_bench_attack.py's output.

The tables are rendered again from ``docs/attack.json``, ``docs/parser-scores.json``,
``docs/parser-attack.json``, ``docs/guided-search.json`` and ``docs/bench-attack.json``
(what ``make reproduce`` last wrote) and must equal the page's generated blocks byte for
byte, so a table edited by hand, or a change of a script's format without a rerun,
fails here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from support import generated_blocks

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import guided_search as gs  # noqa: E402
import parser_scores as ps  # noqa: E402
import reproduce_attack as ra  # noqa: E402
import reproduce_bench_attack as rba  # noqa: E402
import reproduce_parser_attack as rpa  # noqa: E402


def figures() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(ra.MEASURED.read_text(encoding="utf-8"))
    return data


def test_the_page_holds_the_generated_tables() -> None:
    """The attack tables (docs/attack.json), the parsers' clean scores
    (docs/parser-scores.json), the searches' (docs/guided-search.json) and the speed
    table (docs/bench-attack.json), each equal to its script's rendering, and no other."""
    page = generated_blocks(ra.DOC.read_text(encoding="utf-8"))
    scores = json.loads(ps.MEASURED.read_text(encoding="utf-8"))
    searches = json.loads(gs.MEASURED.read_text(encoding="utf-8"))
    attacked = json.loads(rpa.MEASURED.read_text(encoding="utf-8"))
    speed = json.loads(rba.MEASURED.read_text(encoding="utf-8"))
    assert page == {
        **ra.blocks(figures()),
        **ps.blocks(scores),
        **gs.blocks(searches),
        **rpa.blocks(attacked),
        **rba.blocks(speed),
    }


def test_the_parser_attack_covers_both_parsers_under_both_presets() -> None:
    """Every run graded; only the UD-labelled parser has a LAS; the tree preset's kept
    perturbations are all graded tree-valid."""
    data = json.loads(rpa.MEASURED.read_text(encoding="utf-8"))
    assert [(r["parser"], r["preset"]) for r in data["runs"]] == [(p, v) for p, v, _ in rpa.RUNS]
    for r in data["runs"]:
        assert r["sentences"] == rpa.LIMIT and 0 < r["graded"] <= r["sentences"]
        assert ("parser.las" in r["tasks"]) == (r["parser"] == "spacy-ud")
        assert r["validity"]["tree"] == 1.0


def test_the_searches_ran_every_run_on_the_same_sentences() -> None:
    """Every run of the guided-search table is there, in order, on 60 sentences, and the
    anytime table's rows are the searches at 100 queries: sample, greedy, beam, guided."""
    data = json.loads(gs.MEASURED.read_text(encoding="utf-8"))
    assert [(r["label"], r["query_budget"]) for r in data["runs"]] == [
        (label, q) for label, _, q, _ in gs.RUNS
    ]
    assert {r["sentences"] for r in data["runs"]} == {60}
    curve = gs.blocks(data)["anytime-queries"].splitlines()[2:]
    assert [line.split(" | ")[0] for line in curve] == [
        "| beam",
        "| greedy",
        "| sample (b = 100)",
        "| guided",
    ]
    for r in data["runs"]:  # the best so far never falls as queries are spent
        values = list(r["within_queries"].values())
        assert values == sorted(values)
        if str(r["query_budget"]) in r["within_queries"]:  # and ends at the row's damage
            assert r["within_queries"][str(r["query_budget"])] == pytest.approx(r["damage"])
    held = data["heldout"]
    assert [(r["label"], r["query_budget"]) for r in held["runs"]] == [
        (label, q) for label, _, q, _ in gs.HELDOUT_RUNS
    ]
    assert held["treebank"] == "en_ewt-ud-dev.conllu"
    assert {r["sentences"] for r in held["runs"]} == {held["sentences"]} == {200}
    for r in data["runs"] + held["runs"]:  # the means are those of the sentences kept
        for key in ("uuas_drop", "damage"):
            each = r["per_sentence"][key]
            assert len(each) == r["sentences"]
            assert sum(each) / len(each) == pytest.approx(r[key])


def test_the_paired_difference_is_the_mean_and_standard_error_of_per_sentence_gaps() -> None:
    run = {"per_sentence": {"damage": [0.3, 0.1, 0.2, 0.6]}}
    beam = {"per_sentence": {"damage": [0.1, 0.1, 0.3, 0.2]}}
    mean, se = gs.paired(run, beam, "damage")
    gaps = [0.2, 0.0, -0.1, 0.4]  # 0.125 on average; sample deviation 0.2217
    spread = (sum((g - 0.125) ** 2 for g in gaps) / 3) ** 0.5
    assert mean == pytest.approx(0.125)
    assert se == pytest.approx(spread / 2)
    assert gs.paired(beam, beam, "damage") == (0.0, 0.0)


def test_the_parser_scores_cover_both_parsers_on_both_test_sets() -> None:
    rows = json.loads(ps.MEASURED.read_text(encoding="utf-8"))
    assert [(r["parser"], r["test"]) for r in rows] == [
        (p, Path(t).stem) for p in ps.PARSERS for t in ps.TESTS
    ]
    for r in rows:  # only the UD-labelled parser has a LAS
        assert (r["las"] is None) == (r["parser"] == "spacy")
        assert 0 < r["uas"] < 1 and 0 < r["upos"] < 1


def test_the_readme_holds_its_summary_of_them() -> None:
    readme = generated_blocks(ra.README.read_text(encoding="utf-8"))
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
    assert ra.task_cell(row) == "0.700 → 0.650 (0.050 ± 0.100)"
    assert ra._shares({"validity": None}) == "–"
    shares = {"validity": {"tree": 1.0, "grammatical": 0.5, "meaning": 0.25}}
    assert ra._shares(shares) == "100% / 50% / 25%"
