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

``--examples`` prints only docs/agreement.md's two example tables (item 0 of the
default design, seed 0; no model runs) and, with ``--write-doc``, writes them into the
page between ``<!-- generated: agreement-exp1-example -->`` / ``agreement-exp2-example``
and ``<!-- end generated -->`` (``make docs`` does; a test renders them again).

Usage::

    python bench/reproduce_agreement.py [--work DIR] [--json OUT.json]
    python bench/reproduce_agreement.py --examples [--write-doc]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from reproduce_common import brittle, publish

from brittle.engine.agreement.stimuli import build_sentence, design_frames

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "agreement.md"
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("reproduce-agreement"))
    parser.add_argument("--json", type=Path, default=None, help="write the tables here")
    parser.add_argument(
        "--examples", action="store_true", help="only the page's example tables (no model)"
    )
    parser.add_argument(
        "--write-doc", action="store_true", help=f"with --examples, write them into {DOC.name}"
    )
    args = parser.parse_args(argv)
    if args.examples:
        publish(example_blocks(), DOC, write=args.write_doc)
        return 0
    work: Path = args.work
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
    print(f"{model}: conditions with S(correct) < S(wrong) at p < {ALPHA} (one-tailed):\n")
    print("| experiment | conditions | significant | accuracy min–max |")
    print("| --- | ---: | ---: | --- |")
    for experiment in sorted({str(r["experiment"]) for r in rows}):
        mine = [r for r in rows if str(r["experiment"]) == experiment]
        k = sum(significant(r) for r in mine)
        counts[experiment] = {"conditions": len(mine), "significant": k}
        acc = [float(r["accuracy"]) for r in mine]
        print(f"| {experiment} | {len(mine)} | {k} | {min(acc):.3f}–{max(acc):.3f} |")
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
    for r in summary["hardest"]:
        print(f"| {r['experiment']} | {r['verb']} | {r['n']} | {float(r['accuracy']):.3f} |")
    if args.json is not None:
        table = {
            "model": model,
            "counts": counts,
            "by_condition": rows,
            "hardest": summary["hardest"],
        }
        args.json.write_text(json.dumps(table, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
