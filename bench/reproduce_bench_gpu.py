"""docs/performance.md's GPU tables: ``brittle bench --device cuda`` on EWT test, the
stages that run a model, three runs one after another on a machine with a CUDA GPU.

Runs ``brittle bench --treebank TEST --device DEVICE --stage S ... --json
WORK/bench-gpu-K.json`` for K = 1..``--runs`` (each skipped when its file is there:
runs measured elsewhere are put in ``WORK`` and rendered here), keeps the reports as
``docs/bench-gpu.json`` and renders, with the same writers as the CPU tables
(``reproduce_bench.py``):

- ``bench-gpu-latest``: the full table of the run whose ``end_to_end`` ratio is the
  median, its machine and library versions in its header line;
- ``bench-gpu-spread``: every stage's ratio in each run, the median and the spread, and
  the candidates the attack stage scored in each run;
- ``bench-gpu-anytime``: each strategy's mean drop within each time and query point,
  the median over the runs;
- ``bench-gpu-summary`` (README.md): the attack stage's rate against the bare forward's
  in the median run, and the range of the ratio over the runs.

Every ratio compares brittle with the bare model forward on the same device in the
same run. Measuring needs a CUDA device; rendering needs nothing but the kept JSON.

Usage::

    python bench/reproduce_bench_gpu.py [--work DIR] [--runs 3] [--device cuda] [--write-doc]
    python bench/reproduce_bench_gpu.py --render [--write-doc]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from reproduce_bench import anytime_table, median_run, spread_table, stage_named
from reproduce_common import TEST, add_doc_options, brittle, kept_figures, publish

from brittle.engine.bench.records import BenchReport

ROOT = Path(__file__).resolve().parents[1]
#: The runs' reports, as measured on the GPU machine (the page is rendered from it).
MEASURED = ROOT / "docs" / "bench-gpu.json"
DOC = ROOT / "docs" / "performance.md"
README = ROOT / "README.md"
#: The stages that run a model on the device, in the command's order.
STAGES = ("representations", "length_scaling", "end_to_end", "anytime")
#: Searches whose code changed after the kept GPU runs were measured, with what changed:
#: their GPU rows are older than the CPU's, and their anytime curves by queries differ
#: from the CPU runs' until the GPU runs are measured again (the docs say so).
OLDER_THAN_CPU = {
    "guided": "pairs composed from their scored parts, a warm-up of 0.8, the first batch scored "
    "in two with the clean sentence"
}


def measure(work: Path, runs: int, device: str) -> dict[str, Any]:
    """``runs`` ``brittle bench`` runs of :data:`STAGES` on ``device`` (those already in
    ``work`` are kept): ``{"treebank", "device", "runs": [report, ...]}``."""
    work.mkdir(parents=True, exist_ok=True)
    reports = []
    for k in range(1, runs + 1):
        out = work / f"bench-gpu-{k}.json"
        if not out.exists():
            stages = [arg for name in STAGES for arg in ("--stage", name)]
            brittle("bench", "--treebank", TEST, "--device", device, *stages, "--json", out)
        reports.append(json.loads(out.read_text()))
    return {"treebank": TEST.name, "device": device, "runs": reports}


def blocks(data: dict[str, Any]) -> dict[str, str]:
    """The generated blocks ``bench-gpu-latest``, ``bench-gpu-spread`` and
    ``bench-gpu-anytime`` of docs/performance.md."""
    reports = [BenchReport.from_dict(r) for r in data["runs"]]
    return {
        "bench-gpu-latest": median_run(reports).markdown() + "\n",
        "bench-gpu-spread": "\n".join(spread_table(reports)) + "\n",
        "bench-gpu-anytime": "\n".join(anytime_table(reports)) + "\n",
    }


def readme_block(data: dict[str, Any]) -> dict[str, str]:
    """The README's block ``bench-gpu-summary``: ``end_to_end`` in the median run (its
    candidates per second, the bare forward's and their ratio) and the ratio's range."""
    reports = [BenchReport.from_dict(r) for r in data["runs"]]
    stage = stage_named(median_run(reports), "end_to_end")
    ratios = [stage_named(r, "end_to_end").ratio or 0.0 for r in reports]
    return {
        "bench-gpu-summary": (
            f"On one H100 the same attack scores {stage.throughput:,.0f} candidates/s against "
            f"{stage.reference_throughput or 0.0:,.0f} for the bare forward through the probed "
            f"blocks ({stage.ratio or 0.0:.2f}x; {min(ratios):.2f}x to {max(ratios):.2f}x over "
            f"{len(reports)} runs), because the parse, the probes and the reports stay on "
            "the CPU.\n"
        )
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("reproduce-bench-gpu"))
    parser.add_argument("--runs", type=int, default=3, help="bench runs (default 3)")
    parser.add_argument("--device", default="cuda", help="torch device (default cuda)")
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    data = kept_figures(args, lambda: measure(args.work, args.runs, args.device))
    publish(blocks(data), DOC, write=args.write_doc)
    publish(readme_block(data), README, write=args.write_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
