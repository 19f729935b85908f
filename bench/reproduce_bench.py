"""docs/performance.md's bench tables and the README's summary: ``brittle bench`` on EWT
test, three full runs one after another.

Runs ``brittle bench --treebank TEST --json WORK/bench-K.json`` for K = 1..``--runs``
(each skipped when its file is there), keeps the reports as ``docs/bench.json`` and
renders, with the command's own writer (:meth:`BenchReport.markdown`):

- ``bench-latest``: the full table of the run whose ``end_to_end`` ratio is the median;
- ``bench-spread``: every stage's ratio in each run, the median and the spread
  (largest over smallest, minus one), and the candidates the attack stage scored in
  each run (its workload is recorded, so the count must not move);
- ``bench-targets``: the engine's targets (:data:`TARGETS`) against each stage's median
  over the runs and its range;
- ``bench-grading``: each grading stage's attack rate in the median run and grading's
  share of the attack's time in every run (the spread table leaves them out);
- ``bench-anytime``: each strategy's mean drop within each time and query point, the
  median over the runs;
- ``bench-summary`` (README.md): per stage, the rate and ratio of the run where its
  ratio is the median, with the range of the ratio over the runs.

Run it on a machine with nothing else running: the ratios compare two timings of the
same run, but a busy machine still moves them.

Usage::

    python bench/reproduce_bench.py [--work DIR] [--runs 3] [--write-doc]
    python bench/reproduce_bench.py --render [--write-doc]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reproduce_common import TEST, add_doc_options, brittle, kept_figures, publish, write_doc

from brittle.engine.bench.records import BenchReport, StageResult

ROOT = Path(__file__).resolve().parents[1]
#: The runs' reports, as the last run wrote them (the pages are rendered from it).
MEASURED = ROOT / "docs" / "bench.json"
DOC = ROOT / "docs" / "performance.md"
README = ROOT / "README.md"
#: The stages of the README's summary, in its order.
SUMMARY = (
    "tree_edit_distance",
    "hamming",
    "order_metrics",
    "probe_scoring",
    "parsing",
    "representations",
    "end_to_end",
    "end_to_end_full",
    "workers",
    "grading",
    "startup",
    "startup_imports",
)

#: The engine's targets: stage, ``ratio`` (at least) or ``seconds`` (at most), bound.
TARGETS = (
    ("tree_edit_distance", "ratio", 1000.0),
    ("parsing", "ratio", 3.0),
    ("end_to_end", "ratio", 0.9),
    ("end_to_end_full", "ratio", 1.5),
    ("startup", "seconds", 5.0),
)


def measure(work: Path, runs: int) -> dict[str, Any]:
    """``runs`` full ``brittle bench`` runs on EWT test (those already in ``work`` are
    kept): ``{"treebank", "runs": [report, ...]}``."""
    work.mkdir(parents=True, exist_ok=True)
    reports = []
    for k in range(1, runs + 1):
        out = work / f"bench-{k}.json"
        if not out.exists():
            brittle("bench", "--treebank", TEST, "--json", out)
        reports.append(json.loads(out.read_text()))
    return {"treebank": TEST.name, "runs": reports}


def median_run(reports: Sequence[BenchReport]) -> BenchReport:
    """The run whose ``end_to_end`` ratio is the median (:func:`median_stage`)."""
    middle = median_stage(reports, "end_to_end")
    return next(r for r in reports if stage_named(r, "end_to_end") is middle)


def scored(stage: StageResult) -> int:
    """The candidates an attack stage scored, from its detail line."""
    found = re.search(r"([\d,]+) candidates scored", stage.detail)
    if found is None:
        raise ValueError(f"{stage.name}: no 'candidates scored' in {stage.detail!r}")
    return int(found.group(1).replace(",", ""))


def median_stage(reports: Sequence[BenchReport], name: str) -> StageResult:
    """Stage ``name`` of the run where its ratio (or, without a reference, its
    throughput) is the median (the lower middle one of an even count)."""

    def key(stage: StageResult) -> float:
        return stage.throughput if stage.ratio is None else stage.ratio

    ranked = sorted((stage_named(r, name) for r in reports), key=key)
    return ranked[(len(ranked) - 1) // 2]


def stage_named(report: BenchReport, name: str) -> StageResult:
    (stage,) = (s for s in report.stages if s.name == name)
    return stage


#: The grading stages, and the anytime stages' strategies, in their tables' order.
GRADING = ("grading", "grading.tree", "grading.meaning")
ANYTIME = ("sample", "greedy", "beam", "guided")


def anytime_curve(stage: StageResult) -> tuple[dict[str, float], dict[str, float], float]:
    """An anytime stage's curve from its detail line: the mean drop within each number
    of seconds and within each number of queries (keyed as written, ``"0.25"``,
    ``"10"``), and the strategy's whole run in seconds."""
    found = re.search(
        r"\(([\d.]+) s in all\); mean drop within (.*?); within (.*?) queries$", stage.detail
    )
    if found is None:
        raise ValueError(f"{stage.name}: no anytime curve in {stage.detail!r}")

    def pairs(text: str, unit: str) -> dict[str, float]:
        items = (item.rsplit(" ", 1) for item in text.split(", "))
        return {at.removesuffix(unit): float(v) for at, v in items}

    return pairs(found.group(2), " s"), pairs(found.group(3), ""), float(found.group(1))


def _grading_table(reports: Sequence[BenchReport]) -> list[str]:
    """Each grading stage: the attack's rate without grading in the median run, and
    grading's share of the attack's time in every run and its median (the stage's
    reference rate over its own: grading's seconds over the attack's)."""
    n = len(reports)
    lines = [
        "| stage | attack without grading (median run) | "
        + " | ".join(f"grading's share, run {k}" for k in range(1, n + 1))
        + " | median |",
        "| --- | ---: |" + " ---: |" * (n + 1),
    ]
    for name in GRADING:
        stage = median_stage(reports, name)
        shares = [
            (s.reference_throughput or 0.0) / s.throughput
            for s in (stage_named(r, name) for r in reports)
        ]
        ref = stage.reference_throughput or 0.0
        lines.append(
            f"| {name} | {ref:,.3g} {stage.unit} | "
            + " | ".join(f"{v:.0%}" for v in shares)
            + f" | {statistics.median(shares):.0%} |"
        )
    return lines


def anytime_table(reports: Sequence[BenchReport]) -> list[str]:
    """Each strategy's mean drop within each time and query point and its whole run:
    the median over the runs of each cell (the query points are the same in every run:
    the search does not depend on the clock)."""
    curves = {s: [anytime_curve(stage_named(r, f"anytime.{s}")) for r in reports] for s in ANYTIME}
    times, queries, _ = curves[ANYTIME[0]][0]
    lines = [
        "| strategy | "
        + " | ".join(f"{t} s" for t in times)
        + " | "
        + " | ".join(f"{q} queries" for q in queries)
        + " | whole run |",
        "| --- |" + " ---: |" * (len(times) + len(queries) + 1),
    ]
    for search in ANYTIME:
        runs = curves[search]
        cells = [f"{statistics.median(c[0][t] for c in runs):.4f}" for t in times]
        cells += [f"{statistics.median(c[1][q] for c in runs):.4f}" for q in queries]
        cells.append(f"{statistics.median(c[2] for c in runs):.1f} s")
        lines.append(f"| {search} | " + " | ".join(cells) + " |")
    return lines


def spread_table(reports: Sequence[BenchReport]) -> list[str]:
    """Every stage's ratio in each run (those with a reference; the grading stages, whose
    own table gives their share run by run, left out), the median and the spread (largest
    over smallest, minus one), and the candidates ``end_to_end`` scored in each run."""
    median = median_run(reports)
    n = len(reports)
    spread = [
        "| stage | " + " | ".join(f"run {k}" for k in range(1, n + 1))
        + " | median | spread |",
        "| --- |" + " ---: |" * (n + 2),
    ]  # fmt: skip
    for stage in median.stages:
        if stage.name in GRADING:  # their own table gives grading's share run by run
            continue
        runs = [stage_named(r, stage.name) for r in reports]
        ratios = [s.ratio for s in runs]
        if any(r is None for r in ratios):
            continue
        values = [float(r) for r in ratios if r is not None]
        cells = " | ".join(f"{r:,.2f}x" for r in values)
        wide = max(values) / min(values) - 1 if min(values) > 0 else float("inf")
        spread.append(
            f"| {stage.name} | {cells} | {statistics.median(values):,.2f}x | {wide:.0%} |"
        )
    counts = [scored(stage_named(r, "end_to_end")) for r in reports]
    spread += [
        "",
        "`end_to_end` scored " + ", ".join(f"{c:,}" for c in counts)
        + f" candidates in the {n} runs.",
    ]  # fmt: skip
    return spread


def blocks(data: dict[str, Any]) -> dict[str, str]:
    """The generated blocks: ``bench-latest``, ``bench-spread``, ``bench-targets``,
    ``bench-grading`` and ``bench-anytime`` of docs/performance.md, ``bench-summary``
    of the README."""
    reports = [BenchReport.from_dict(r) for r in data["runs"]]
    median = median_run(reports)
    n = len(reports)
    spread = spread_table(reports)
    summary = [
        f"| stage | brittle (median of {n} runs) | reference | ratio (range over the runs) |",
        "| --- | ---: | --- | ---: |",
    ]
    for name in SUMMARY:
        stage = median_stage(reports, name)
        values = [v for v in (stage_named(r, name).ratio for r in reports) if v is not None]
        ratio = (
            ""
            if stage.ratio is None
            else f"{stage.ratio:,.2f}x ({min(values):,.2f}x to {max(values):,.2f}x)"
        )
        summary.append(f"| {name} | {stage.figure} | {stage.reference or ''} | {ratio} |")
    targets = [
        f"| target | median of the {n} runs | range | |",
        "| --- | ---: | ---: | --- |",
    ]
    for name, kind, bound in TARGETS:
        stage = median_stage(reports, name)
        if kind == "ratio":
            values = [v for v in (stage_named(r, name).ratio for r in reports) if v is not None]
            goal, shown = f"`{name}` >= {bound:,g}x", f"{stage.ratio or 0.0:,.2f}x"
            span = f"{min(values):,.2f}x to {max(values):,.2f}x"
            met = [v >= bound for v in values]
        else:
            values = [stage_named(r, name).throughput for r in reports]
            goal, shown = f"`{name}` <= {bound:g} s", stage.figure
            span = f"{min(values):.2f} s to {max(values):.2f} s"
            met = [v <= bound for v in values]
        verdict = "met" if all(met) else "missed" if not any(met) else "met in some runs"
        targets.append(f"| {goal} | {shown} | {span} | {verdict} |")
    return {
        "bench-latest": median.markdown() + "\n",
        "bench-spread": "\n".join(spread) + "\n",
        "bench-targets": "\n".join(targets) + "\n",
        "bench-grading": "\n".join(_grading_table(reports)) + "\n",
        "bench-anytime": "\n".join(anytime_table(reports)) + "\n",
        "bench-summary": "\n".join(summary) + "\n",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("reproduce-bench"))
    parser.add_argument("--runs", type=int, default=3, help="full bench runs (default 3)")
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    data = kept_figures(args, lambda: measure(args.work, args.runs))
    rendered = blocks(data)
    readme = {"bench-summary": rendered.pop("bench-summary")}
    publish(rendered, DOC, write=args.write_doc)
    publish(readme, README, write=False)
    if args.write_doc:
        write_doc(README, readme)
    return 0


if __name__ == "__main__":
    sys.exit(main())
