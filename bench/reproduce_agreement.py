"""Chaves & Richter's agreement experiments 1 and 2 with brittle's own commands.

1. ``brittle agreement stimuli`` writes the default design (seed 0: 2,800 stimuli of
   experiment 1, 480 of experiment 2; docs/agreement.md);
2. ``brittle agreement score`` scores them with the bundled causal SmolLM2-135M (the
   paper's causal side used GPT-2 small and medium; no masked LM with its MLM head is
   available offline, so the BERT side is not run).

It prints, per experiment, how many conditions pass the paper's one-tailed paired
t-test (S(correct) < S(wrong), p < 0.05), experiment 2's accuracy per condition, and
the paper's Table 4 cell (E4, mismatching context) per verb. Steps whose output exists
are skipped.

The figures are kept in ``docs/agreement.json`` (``--measured``; ``--render`` prints the
tables from it and runs nothing), and ``--write-doc`` writes the two accuracy grids
(experiment 1 per target, attractors and depth; experiment 2 per target, matrix subject
and depth) into docs/agreement.md's blocks ``agreement-exp1-accuracy`` and
``agreement-exp2-accuracy``, with the example tables below.

``--examples`` prints only docs/agreement.md's two example tables (item 0 of the
default design, seed 0; no model runs) and, with ``--write-doc``, writes them into the
page between ``<!-- generated: agreement-exp1-example -->`` / ``agreement-exp2-example``
and ``<!-- end generated -->`` (``make docs`` does; a test renders them again).

Usage::

    python bench/reproduce_agreement.py [--work DIR] [--json OUT.json] [--write-doc]
    python bench/reproduce_agreement.py --render [--write-doc]
    python bench/reproduce_agreement.py --examples [--write-doc]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from reproduce_common import add_doc_options, brittle, kept_figures, publish

from brittle.engine.agreement.stimuli import build_sentence, design_frames

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "agreement.md"
#: The figures the page's accuracy grids are rendered from.
MEASURED = ROOT / "docs" / "agreement.json"
#: The paper's significance level for a condition.
ALPHA = 0.05


def significant(row: dict[str, Any]) -> bool:
    """Whether a condition's one-tailed paired t-test rejects at ``ALPHA``."""
    p = row.get("p")
    return isinstance(p, int | float) and p < ALPHA


def example_blocks() -> dict[str, str]:
    """docs/agreement.md's example tables: item 0 of ``is/are`` in experiment 1 (target
    singular, attractors plural, E0-E4) and of experiment 2 (target plural, E4, every
    matrix subject), from the default design (``brittle agreement stimuli``, seed 0)."""
    frames = design_frames(seed=0)
    exp1 = [
        f
        for f in frames
        if f.experiment == 1
        and f.verb == "is"
        and f.item == 0
        and f.target_number == "sg"
        and f.numbers[0] == "pl"
    ]
    exp2 = [
        f
        for f in frames
        if f.experiment == 2 and f.item == 0 and f.target_number == "pl" and f.depth == 4
    ]
    one = ["| depth | item 0 of `is/are`, target sg, attractors pl (seed 0) |", "| --- | --- |"]
    one += [f"| E{f.depth} | {build_sentence(f).text} |" for f in exp1]
    two = ["| matrix | item 0, target pl, E4 (seed 0) |", "| --- | --- |"]
    two += [f"| {f.matrix} | {build_sentence(f).text} |" for f in exp2]
    return {
        "agreement-exp1-example": "\n".join(one) + "\n",
        "agreement-exp2-example": "\n".join(two) + "\n",
    }


def accuracy_blocks(table: dict[str, Any]) -> dict[str, str]:
    """docs/agreement.md's accuracy grids: experiment 1 per target and attractors
    number (rows) and depth E0-E4 (columns), experiment 2 per target and matrix subject
    and depth E1-E4, from the conditions' rows (``target-context-E<depth>``)."""
    cells: dict[str, dict[tuple[str, str], dict[str, float]]] = {"1": {}, "2": {}}
    for r in table["by_condition"]:
        target, context, depth = str(r["condition"]).split("-")
        row = cells[str(r["experiment"])].setdefault((target, context), {})
        row[depth] = float(r["accuracy"])
    out: dict[str, str] = {}
    for experiment, (name, heading, digits) in {
        "1": ("agreement-exp1-accuracy", "attractors", 3),
        "2": ("agreement-exp2-accuracy", "matrix subject", 2),
    }.items():
        rows = cells[experiment]
        depths = sorted({d for row in rows.values() for d in row})
        lines = [
            f"| target | {heading} | " + " | ".join(depths) + " |",
            "| --- | --- |" + " ---: |" * len(depths),
        ]
        for (target, context), row in rows.items():
            values = " | ".join(f"{row[d]:.{digits}f}" for d in depths)
            lines.append(f"| {target} | {context} | {values} |")
        out[name] = "\n".join(lines) + "\n"
    return out


def measure(work: Path) -> dict[str, Any]:
    """The default design scored by SmolLM2 (module docstring), steps whose output
    exists skipped: ``{"model", "counts", "by_condition", "hardest"}``."""
    work.mkdir(parents=True, exist_ok=True)
    stimuli = work / "agreement.conllu"
    if not stimuli.exists():
        brittle("agreement", "stimuli", stimuli, "--quiet")
    scores = work / "score"
    if not (scores / "summary.json").exists():
        brittle("agreement", "score", stimuli, "--out", scores, "--batch-size", 64, "--quiet")
    summary: dict[str, Any] = json.loads((scores / "summary.json").read_text())
    rows = summary["by_condition"]
    (model,) = summary["models"]
    counts: dict[str, dict[str, int]] = {}
    for experiment in sorted({str(r["experiment"]) for r in rows}):
        mine = [r for r in rows if str(r["experiment"]) == experiment]
        counts[experiment] = {"conditions": len(mine), "significant": sum(map(significant, mine))}
    return {"model": model, "counts": counts, "by_condition": rows, "hardest": summary["hardest"]}


def print_tables(table: dict[str, Any]) -> None:
    """The conditions passing the paper's test per experiment, experiment 2 per
    condition and the paper's Table 4 cell per verb, on stdout."""
    rows = table["by_condition"]
    print(f"{table['model']}: conditions with S(correct) < S(wrong) at p < {ALPHA} (one-tailed):\n")
    print("| experiment | conditions | significant | accuracy min–max |")
    print("| --- | ---: | ---: | --- |")
    for experiment, count in table["counts"].items():
        acc = [float(r["accuracy"]) for r in rows if str(r["experiment"]) == experiment]
        print(
            f"| {experiment} | {count['conditions']} | {count['significant']} "
            f"| {min(acc):.3f}–{max(acc):.3f} |"
        )
    exp2 = [r for r in rows if str(r["experiment"]) == "2"]
    print("\nExperiment 2 (was/were), accuracy per condition (target-matrix-depth):\n")
    print("| condition | n | accuracy | t | p |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for r in exp2:
        t = "–" if r["t"] is None else f"{float(r['t']):.1f}"
        p = "–" if r["p"] is None else f"{float(r['p']):.2g}"
        print(f"| {r['condition']} | {r['n']} | {float(r['accuracy']):.2f} | {t} | {p} |")
    print("\nTable 4 (E4, mismatching context), accuracy per verb:\n")
    print("| experiment | verb | n | accuracy |")
    print("| --- | --- | ---: | ---: |")
    for r in table["hardest"]:
        print(f"| {r['experiment']} | {r['verb']} | {r['n']} | {float(r['accuracy']):.3f} |")
    print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("reproduce-agreement"))
    parser.add_argument("--json", type=Path, default=None, help="write the tables here")
    parser.add_argument(
        "--examples", action="store_true", help="only the page's example tables (no model)"
    )
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    if args.examples:
        publish(example_blocks(), DOC, write=args.write_doc)
        return 0
    table = kept_figures(args, lambda: measure(args.work))
    print_tables(table)
    if args.json is not None:
        args.json.write_text(json.dumps(table, indent=2) + "\n")
    publish({**accuracy_blocks(table), **example_blocks()}, DOC, write=args.write_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
