"""The README's "Scaling out" table: one attack in one process, on two local worker
processes and on two Ray actors.

``brittle attack`` on the first 60 sentences of EWT test with the demo's MiniLM layer
-5 distance and POS probes (trained when missing, as ``brittle demo`` does), coPOS,
beam width 4, tau 2, 10 options, query budget 100, seed 0, the default constraints
(spaCy syntax check), run three ways one after the other: as it comes, with
``--workers 2`` and with ``--ray local --workers 2``. Each command is timed whole from
the shell (models loading, a Ray instance starting and every file written included);
its files are compared with the one-process run's: ``adversarial.conllu`` and
``summary.json`` byte for byte, ``results.jsonl`` row by row without the wall-time
``seconds``.

Every run's directory is kept under ``--work`` with its timing; a run with a timing
is not run again. The figures go to ``docs/workers.json`` (``--measured``);
``--write-doc`` puts the table into the README's generated block ``workers``. Run it
with nothing else running: the times are the machine's.

Usage::

    python bench/reproduce_workers.py [--work reproduce/workers] [--write-doc]
    python bench/reproduce_workers.py --render [--write-doc]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from reproduce_common import TEST, add_doc_options, brittle, kept_figures, publish

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ROOT / "docs" / "workers.json"
DOC = ROOT / "README.md"
LIMIT = 60
#: (label, the options that set the run's workers), in the table's order; the first
#: is the run the others are compared with.
RUNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("one process", ()),
    ("`--workers 2` (local processes)", ("--workers", "2")),
    ("`--ray local --workers 2` (Ray actors)", ("--ray", "local", "--workers", "2")),
)


def _rows(run: Path) -> list[dict[str, Any]]:
    """A run's result rows without their wall times."""
    rows = []
    for line in (run / "results.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        row.pop("seconds", None)
        rows.append(row)
    return rows


def _same(run: Path, reference: Path) -> bool:
    """Whether ``run`` wrote what ``reference`` did (module docstring)."""
    return all(
        (run / name).read_bytes() == (reference / name).read_bytes()
        for name in ("adversarial.conllu", "summary.json")
    ) and _rows(run) == _rows(reference)


def measure(work: Path) -> dict[str, Any]:
    """Every run of :data:`RUNS`, timed (skipped where its timing is kept)."""
    # deferred: the demo's probes load torch
    from brittle.engine.demo import prepare_demo, train_demo_probes

    plan = prepare_demo()
    train_demo_probes(plan)
    out: list[dict[str, Any]] = []
    reference = work / "run-0"
    for k, (label, options) in enumerate(RUNS):
        run, timing = work / f"run-{k}", work / f"run-{k}.seconds"
        if not timing.exists():
            start = time.perf_counter()
            brittle(
                "attack", TEST, *[x for p in plan.probes for x in ("--probe", p)],
                "--method", "copos", "--search", "beam", "--beam-width", 4, "--budget", 2,
                "--candidates", 10, "--query-budget", 100, "--limit", LIMIT, "--seed", 0,
                "--quiet", *options, "--overwrite", "--out", run,
            )  # fmt: skip
            timing.write_text(f"{time.perf_counter() - start:.2f}\n")
        seconds = float(timing.read_text())
        out.append(
            {
                "label": label,
                "options": list(options),
                "seconds": seconds,
                "same": _same(run, reference),
            }
        )
    return {"treebank": TEST.name, "sentences": LIMIT, "cores": os.cpu_count(), "runs": out}


def blocks(data: dict[str, Any]) -> dict[str, str]:
    """The README's generated block ``workers``."""
    n = data["sentences"]
    one = data["runs"][0]["seconds"]
    lines = [
        f"| run | whole command, {n} sentences | sentences/s | against one process "
        "| files as one process's |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for r in data["runs"]:
        lines.append(
            f"| {r['label']} | {r['seconds']:.0f} s | {n / r['seconds']:.2f} "
            f"| {one / r['seconds']:.2f}x | {'the same' if r['same'] else 'different'} |"
        )
    return {"workers": "\n".join(lines) + "\n"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("reproduce/workers"))
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    data = kept_figures(args, lambda: measure(args.work))
    publish(blocks(data), DOC, write=args.write_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
