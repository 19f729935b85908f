"""docs/performance.md's GPU rows and the README's GPU sentence are ``brittle bench
--device cuda``'s own, from the runs ``bench/reproduce_bench_gpu.py`` keeps.

The blocks are rendered again from ``docs/bench-gpu.json`` and must equal the pages'
byte for byte; the kept runs measured the same workload on a CUDA device, and their
anytime curves by queries are the CPU runs' (the search does not depend on the device,
as the page says).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from support import generated_blocks

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import reproduce_bench as rb  # noqa: E402
import reproduce_bench_gpu as rg  # noqa: E402

from brittle.engine.bench.records import BenchReport  # noqa: E402


def kept(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_the_pages_hold_the_gpu_runs_tables() -> None:
    data = kept(rg.MEASURED)
    page = generated_blocks(rg.DOC.read_text(encoding="utf-8"))
    readme = generated_blocks(rg.README.read_text(encoding="utf-8"))
    rendered = rg.blocks(data)
    assert {k: page[k] for k in page if k.startswith("bench-gpu-")} == rendered
    assert readme["bench-gpu-summary"] == rg.readme_block(data)["bench-gpu-summary"]


def test_the_gpu_runs_ran_every_model_stage_on_a_gpu_on_one_workload() -> None:
    data = kept(rg.MEASURED)
    assert data["device"] == "cuda" and len(data["runs"]) >= 3
    reports = [BenchReport.from_dict(r) for r in data["runs"]]
    for report in reports:
        assert "GPU: none" not in report.markdown()
        assert {s.name.split(".")[0] for s in report.stages} - {"end_to_end_full"} == set(rg.STAGES)
    counts = {rb.scored(rb.stage_named(r, "end_to_end")) for r in reports}
    assert len(counts) == 1 and counts.pop() > 0


def test_the_gpu_anytime_curves_by_queries_are_the_cpus() -> None:
    """Except for a search changed since the GPU runs (``OLDER_THAN_CPU``), whose curve
    must then differ: measured again on a GPU, it leaves the list, and the page's note
    with it."""
    gpu = [BenchReport.from_dict(r) for r in kept(rg.MEASURED)["runs"]]
    cpu = [BenchReport.from_dict(r) for r in kept(rb.MEASURED)["runs"]]
    for search in rb.ANYTIME:
        name = f"anytime.{search}"
        by_queries = {rb.anytime_curve(rb.stage_named(r, name))[1] == rb.anytime_curve(
            rb.stage_named(cpu[0], name))[1] for r in gpu}  # fmt: skip
        assert by_queries == {search not in rg.OLDER_THAN_CPU}, search
    page = " ".join(rg.DOC.read_text(encoding="utf-8").split())
    for search, change in rg.OLDER_THAN_CPU.items():
        assert f"{search} search's GPU rows are older than its CPU rows ({change})" in page
