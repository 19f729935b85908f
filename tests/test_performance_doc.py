"""docs/performance.md's bench tables and the README's summary are ``brittle bench``'s
own, from the runs ``bench/reproduce_bench.py`` keeps.

The tables are rendered again from ``docs/bench.json`` (the runs' ``--json`` reports,
read back with :meth:`BenchReport.from_dict`) and must equal the pages' generated
blocks byte for byte; the kept runs measured the same workload in each stage and
every stage the command runs by default.
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

import reproduce_bench as rb  # noqa: E402

from brittle.engine.bench.records import BenchReport  # noqa: E402


def kept() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(rb.MEASURED.read_text(encoding="utf-8"))
    return data


def test_the_pages_hold_the_benchs_tables() -> None:
    rendered = rb.blocks(kept())
    page = generated_blocks(rb.DOC.read_text(encoding="utf-8"))
    readme = generated_blocks(rb.README.read_text(encoding="utf-8"))
    assert {
        k: page[k] for k in page if k.startswith("bench-") and not k.startswith("bench-gpu-")
    } == {k: v for k, v in rendered.items() if k != "bench-summary"}
    assert readme["bench-summary"] == rendered["bench-summary"]


def test_the_runs_cover_every_stage_on_an_unmoving_workload() -> None:
    runs = kept()["runs"]
    assert len(runs) >= 3
    names = [list(r["stages"]) for r in runs]
    assert all(n == names[0] for n in names)
    assert set(rb.SUMMARY) <= set(names[0])
    # the attack stage scores the same recorded candidates in every run
    reports = [BenchReport.from_dict(r) for r in runs]
    counts = {rb.scored(next(s for s in r.stages if s.name == "end_to_end")) for r in reports}
    assert len(counts) == 1 and counts.pop() > 0


def test_the_anytime_curves_by_queries_do_not_depend_on_the_clock() -> None:
    """The searches are the same in every run: only their time points may move."""
    reports = [BenchReport.from_dict(r) for r in kept()["runs"]]
    for search in rb.ANYTIME:
        curves = [
            rb.anytime_curve(next(s for s in r.stages if s.name == f"anytime.{search}"))
            for r in reports
        ]
        assert all(c[1] == curves[0][1] for c in curves)
        assert list(curves[0][1]) == ["10", "25", "50", "100"]


def test_an_anytime_curve_is_read_back_from_its_detail_line() -> None:
    from brittle.engine.bench.records import StageResult

    stage = StageResult(
        "anytime.beam", 0.1, "drop in 1 s", None, None, 100.0,
        "beam on 6 sentences over a pool, tau 2, query budget 100, warm, lock-step rounds "
        "(9.0 s in all); mean drop within 0.25 s 0.0000, 1 s 0.0158; within 10 0.0035, "
        "100 0.0925 queries",
    )  # fmt: skip
    assert rb.anytime_curve(stage) == (
        {"0.25": 0.0, "1": 0.0158},
        {"10": 0.0035, "100": 0.0925},
        9.0,
    )


def test_the_textattack_table_is_the_scripts_rendering_of_its_runs() -> None:
    """bench/textattack_loop.py's table (rendered by bench/textattack_table.py) from
    ``docs/textattack.json``: both searches under both constraint settings; with the
    budget check only (no constraint placement to tell them apart) both loops' beam
    searches score the same candidates within 1%."""
    import textattack_table as ta

    data = json.loads(ta.MEASURED.read_text(encoding="utf-8"))
    page = generated_blocks(ta.DOC.read_text(encoding="utf-8"))
    assert page["textattack"] == ta.blocks(data)["textattack"]
    assert list(data["modes"]) == list(ta.MODES)
    for searches in data["modes"].values():
        assert list(searches) == ["beam", "greedy"]
    beam = data["modes"]["budget only"]["beam"]
    assert beam["brittle"]["candidates"] == pytest.approx(
        beam["TextAttack"]["candidates"], rel=0.01
    )


def test_the_readme_quotes_the_textattack_runs() -> None:
    import textattack_table as ta

    data = json.loads(ta.MEASURED.read_text(encoding="utf-8"))
    readme = generated_blocks(ta.README.read_text(encoding="utf-8"))
    assert readme["textattack-summary"] == ta.readme_block(data)["textattack-summary"]
