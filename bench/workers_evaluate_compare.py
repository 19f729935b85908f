"""docs/performance.md's table of ``evaluate`` and ``compare-methods`` in one process and
on two local worker processes.

Four commands on EWT test, each run as it comes and with ``--workers 2``, one after
the other:

- ``brittle evaluate`` on every sentence with the demo's MiniLM layer -5 distance and
  POS probes (trained when missing, as ``brittle demo`` does), ``--no-cache
  --no-baselines``;
- the same on a file of the first 60 sentences (one shard; ``evaluate`` has no
  ``--limit``);
- ``brittle compare-methods --methods copos,random,jabberwocky --budget 1,2,3
  --no-quality`` on the first 60 sentences (one shard) and on the first 300 (5
  shards).

Each command is timed whole from the shell (models loading and every file written
included), :data:`REPEATS` times, the two settings taking turns; the table gives each
setting's median. What every workers' run wrote is compared with the first
one-process run's:
``evaluate``'s ``--json`` byte for byte, ``compare-methods``' ``compare-methods.md``
byte for byte and the rows of its ``compare-methods.json`` without the wall-time
``seconds``.

Every run's output is kept under ``--work`` with its timing; a run with a timing is not
run again. The figures go to ``docs/workers-evaluate-compare.json`` (``--measured``);
``--write-doc`` puts the table into docs/performance.md's generated block
``workers-evaluate-compare``. Run it with nothing else running: the times are the
machine's.

Usage::

    python bench/workers_evaluate_compare.py [--work reproduce/workers-evaluate-compare]
        [--write-doc]
    python bench/workers_evaluate_compare.py --render [--write-doc]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TypedDict

from reproduce_common import TEST, add_doc_options, brittle, kept_figures, publish

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ROOT / "docs" / "workers-evaluate-compare.json"
DOC = ROOT / "docs" / "performance.md"
BLOCK = "workers-evaluate-compare"
LIMIT = 60
#: Timed runs of each command in each setting (the table gives their median): on a
#: 2-core machine a single run moves by tens of percent.
REPEATS = 3
#: The options of the two runs of every command: one process (the reference), then
#: two local workers.
SETTINGS: tuple[tuple[str, ...], ...] = ((), ("--workers", "2"))
#: Sentences a shard: ``evaluate``'s blocks of word vectors, ``compare-methods``' chunks.
SHARD = {"evaluate": 256, "compare-methods": 64}
COMPARE_METHODS = (
    "--methods", "copos,random,jabberwocky", "--budget", "1,2,3", "--no-quality",
)  # fmt: skip


class Command(TypedDict):
    """One command of :data:`COMMANDS`: its brittle command and how many sentences."""

    name: str
    command: str
    limit: int | None


#: The table's rows, in order.
COMMANDS: tuple[Command, ...] = (
    {"name": "evaluate-all", "command": "evaluate", "limit": None},
    {"name": "evaluate-60", "command": "evaluate", "limit": LIMIT},
    {"name": "compare-60", "command": "compare-methods", "limit": LIMIT},
    {"name": "compare-300", "command": "compare-methods", "limit": 300},
)


class Run(TypedDict):
    """A command's timed runs in one setting."""

    options: list[str]
    #: the median of ``times``, seconds
    seconds: float
    times: list[float]
    #: whether every run wrote what the first one-process run did
    same: bool


class Row(TypedDict):
    """A command's runs, one per entry of :data:`SETTINGS`."""

    name: str
    command: str
    sentences: int
    runs: list[Run]


class Figures(TypedDict):
    """What the table is rendered from."""

    treebank: str
    cores: int | None
    rows: list[Row]


def sentences(treebank: Path) -> int:
    """The number of sentences of a CoNLL-U file."""
    blocks = treebank.read_text(encoding="utf-8").split("\n\n")
    return sum(1 for b in blocks if b.strip())


def _compare_rows(run: Path) -> list[dict[str, object]]:
    """The rows of ``compare-methods.json`` without their wall times."""
    data: dict[str, list[dict[str, object]]] = json.loads(
        (run / "compare-methods.json").read_text(encoding="utf-8")
    )
    rows = data["rows"]
    for row in rows:
        row.pop("seconds", None)
    return rows


def same_output(command: str, run: Path, reference: Path) -> bool:
    """Whether ``run`` wrote what ``reference`` did (module docstring)."""
    if command == "evaluate":
        return (run / "evaluate.json").read_bytes() == (reference / "evaluate.json").read_bytes()
    md = "compare-methods.md"
    return (run / md).read_bytes() == (reference / md).read_bytes() and _compare_rows(
        run
    ) == _compare_rows(reference)


def head(treebank: Path, n: int, out: Path) -> Path:
    """``out``: the first ``n`` sentences of ``treebank``, as they are written there
    (``evaluate`` has no ``--limit``)."""
    if not out.exists():
        text = treebank.read_text(encoding="utf-8")
        blocks = [b for b in text.split("\n\n") if b.strip()][:n]
        out.write_text("\n\n".join(b.strip("\n") for b in blocks) + "\n\n", encoding="utf-8")
    return out


def _run(
    command: Command, probes: Sequence[Path], options: Sequence[str], out: Path, work: Path
) -> None:
    limit = command["limit"]
    if command["command"] == "evaluate":
        treebank = TEST if limit is None else head(TEST, limit, work / f"ewt-test-{limit}.conllu")
        out.mkdir(parents=True, exist_ok=True)
        brittle(
            "evaluate", treebank, *[x for p in probes for x in ("--probe", p)],
            "--no-cache", "--no-baselines", "--quiet", *options,
            "--json", out / "evaluate.json",
        )  # fmt: skip
    else:
        brittle(
            "compare-methods", TEST, *COMPARE_METHODS,
            *(() if limit is None else ("--limit", limit)), "--quiet", *options, "--out", out,
        )  # fmt: skip


def measure(work: Path) -> Figures:
    """Every command of :data:`COMMANDS` under every setting, timed (skipped where its
    timing is kept)."""
    # deferred: the demo's probes load torch
    from brittle.engine.demo import prepare_demo, train_demo_probes

    plan = prepare_demo()
    train_demo_probes(plan)
    total = sentences(TEST)
    rows: list[Row] = []
    for command in COMMANDS:
        reference = work / command["name"] / "run-0"
        times: list[list[float]] = [[] for _ in SETTINGS]
        same = [True for _ in SETTINGS]
        for r in range(REPEATS):
            for k, options in enumerate(SETTINGS):
                run = work / command["name"] / (f"run-{k}" if r == 0 else f"run-{k}-{r}")
                timing = run.with_suffix(".seconds")
                if not timing.exists():
                    run.parent.mkdir(parents=True, exist_ok=True)
                    start = time.perf_counter()
                    _run(command, plan.probes, options, run, work)
                    timing.write_text(f"{time.perf_counter() - start:.2f}\n")
                times[k].append(float(timing.read_text()))
                same[k] = same[k] and same_output(command["command"], run, reference)
        runs: list[Run] = [
            {
                "options": list(options),
                "seconds": statistics.median(times[k]),
                "times": times[k],
                "same": same[k],
            }
            for k, options in enumerate(SETTINGS)
        ]
        limit = command["limit"]
        rows.append(
            {
                "name": command["name"],
                "command": command["command"],
                "sentences": total if limit is None else min(limit, total),
                "runs": runs,
            }
        )
    return {"treebank": TEST.name, "cores": os.cpu_count(), "rows": rows}


def _label(row: Row) -> str:
    n = row["sentences"]
    shards = math.ceil(n / SHARD[row["command"]])
    split = "one shard" if shards == 1 else f"{shards} shards"
    if row["command"] == "evaluate":
        what = "`evaluate`, the demo's two MiniLM layer -5 probes, `--no-cache --no-baselines`"
    else:
        what = f"`compare-methods {' '.join(COMPARE_METHODS)}`"
    return f"{what}, {n:,} sentences ({split})"


def _time(seconds: float, n: int) -> str:
    return f"{seconds:.1f} s ({n / seconds:.1f} sentences/s)"


def blocks(data: Figures) -> dict[str, str]:
    """docs/performance.md's generated block ``workers-evaluate-compare``."""
    lines = [
        "| run | one process | `--workers 2` | against one process | output as one process's |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for row in data["rows"]:
        one, two = row["runs"]
        n = row["sentences"]
        lines.append(
            f"| {_label(row)} | {_time(one['seconds'], n)} | {_time(two['seconds'], n)} "
            f"| {one['seconds'] / two['seconds']:.2f}x "
            f"| {'the same' if two['same'] else 'different'} |"
        )
    return {BLOCK: "\n".join(lines) + "\n"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("reproduce/workers-evaluate-compare"))
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    work: Path = args.work
    data: Figures = kept_figures(args, lambda: measure(work))
    publish(blocks(data), DOC, write=args.write_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
