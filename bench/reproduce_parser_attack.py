"""docs/attack.md's "Attacking a parser" table: each offline parser attacked under the
two presets that keep the gold tree.

``brittle attack`` on the first 60 sentences of GUM test, tau 2, ``--target
parser:NAME --objective parser --query-budget 200``, beam width 4, seed 0, every kept
perturbation graded, with ``--validity tree`` and ``--validity grammatical``, against
``spacy`` and ``spacy-ud`` (trained into the data home when missing, as ``brittle
resources --train-ud-parser`` does). Beside each parser the MiniLM hidden-state-2
distance and POS probes of ``reproduce_fragility.py`` (trained here when missing) are
measured on the same perturbations. Per run: the sentences with a kept perturbation,
the validity shares, the parser's UAS (and LAS) clean and perturbed with its drop and
spread, the probes' drops and the sentences that stopped at the query budget.

Every run's directory is kept under ``--work``; a run whose summary exists is not run
again. The figures go to ``docs/parser-attack.json`` (``--measured``); ``--write-doc``
puts the table into docs/attack.md's generated block ``parser-attack``.

Usage::

    python bench/reproduce_parser_attack.py [--work reproduce/parser-attack]
        [--probes reproduce/fragility/probes] [--write-doc]
    python bench/reproduce_parser_attack.py --render [--write-doc]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reproduce_attack import ensure_probes, task_cell
from reproduce_common import UD, add_doc_options, brittle, kept_figures, publish

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ROOT / "docs" / "parser-attack.json"
DOC = ROOT / "docs" / "attack.md"
TREEBANK = UD / "UD_English-GUM" / "en_gum-ud-test.conllu"
LIMIT = 60
#: (parser, preset, the preset's label in the table), in the table's order.
RUNS: tuple[tuple[str, str, str], ...] = (
    ("spacy-ud", "tree", "`tree` (Jabberwocky nonwords)"),
    ("spacy-ud", "grammatical", "`grammatical` (real words of the slot's class)"),
    ("spacy", "tree", "`tree`"),
    ("spacy", "grammatical", "`grammatical`"),
)
#: The summary's task columns the table shows.
TASKS = ("parser.uas", "parser.las", "distance.uuas", "pos.pos_acc")


def attack(out: Path, parser: str, preset: str, probes: Sequence[Path]) -> Path:
    """One ``brittle attack`` of ``parser`` under ``preset`` into ``out`` (skipped when
    its summary exists)."""
    if not (out / "summary.json").exists():
        brittle(
            "attack", TREEBANK, *[x for p in probes for x in ("--probe", p)],
            "--target", f"parser:{parser}", "--objective", "parser", "--validity", preset,
            "--search", "beam", "--beam-width", 4, "--budget", 2, "--query-budget", 200,
            "--limit", LIMIT, "--seed", 0, "--quiet",
            *(("--resume",) if out.exists() else ()), "--out", out,
        )  # fmt: skip
    return out


def summary_row(run: Path, parser: str, preset: str, label: str) -> dict[str, Any]:
    """The figures of one run's ``summary.json`` the table shows."""
    s = json.loads((run / "summary.json").read_text())
    validity = s.get("validity") or {}
    return {
        "parser": parser,
        "preset": preset,
        "label": label,
        "sentences": s["sentences"],
        "graded": validity.get("graded"),
        "validity": validity.get("shares"),
        "budget_hits": s["query_budget_hits"],
        "tasks": {k: s["tasks"][k] for k in TASKS if k in s["tasks"]},
    }


def measure(work: Path, probes: Path) -> dict[str, Any]:
    """Every run of :data:`RUNS`, attacked when its summary is missing."""
    paths = ensure_probes(probes)
    rows = []
    for parser, preset, label in RUNS:
        run = attack(work / f"{parser}-{preset}", parser, preset, paths)
        rows.append(summary_row(run, parser, preset, label))
    return {"treebank": TREEBANK.name, "sentences": LIMIT, "runs": rows}


def blocks(data: dict[str, Any]) -> dict[str, str]:
    """The generated block of docs/attack.md (``parser-attack``)."""
    lines = [
        "| target | preset | kept | tree-valid | grammatical | parser UAS clean → perturbed "
        "(drop ± sd) | parser LAS (drop) | distance UUAS drop | POS accuracy drop "
        "| stopped at the query budget |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in data["runs"]:
        tasks, shares = r["tasks"], r["validity"] or {}
        las = tasks.get("parser.las")
        las_cell = (
            "—"
            if las is None
            else f"{las['clean']:.3f} → {las['perturbed']:.3f} ({las['mean_drop']:.3f})"
        )
        lines.append(
            f"| {r['parser']} | {r['label']} | {r['graded']} / {r['sentences']} "
            f"| {shares.get('tree', 0.0):.3f} | {shares.get('grammatical', 0.0):.3f} "
            f"| {task_cell(tasks['parser.uas'])} | {las_cell} "
            f"| {tasks['distance.uuas']['mean_drop']:.3f} "
            f"| {tasks['pos.pos_acc']['mean_drop']:.3f} | {r['budget_hits']} |"
        )
    return {"parser-attack": "\n".join(lines) + "\n"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("reproduce/parser-attack"))
    parser.add_argument("--probes", type=Path, default=Path("reproduce/fragility/probes"))
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    data = kept_figures(args, lambda: measure(args.work, args.probes))
    publish(blocks(data), DOC, write=args.write_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
