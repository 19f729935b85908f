"""docs/attack.md's speed table: the attack engine's candidates per second against the
bare model forward on the same candidates, on the first 20 and the first 60 sentences
of EWT test.

Runs ``python bench/bench_attack.py EWT-TEST --sentences N --json ...`` (beam search,
lock-step rounds, 2 torch threads; bench_attack.py's docstring has the workload) for
each N of :data:`SIZES`, one after the other, each in its own process. Around each
run the machine's CPU time (``/proc/stat``, every process) is read, and the command's
own (``os.wait4``): the difference is what other processes took while it ran, the
sign that the measurement shared its cores. The 1-minute load average before and after
(which counts the run itself) and the whole command's wall time are kept too.

Each run's figures are kept under ``--work``; a run with its figures is not run again.
The figures go to ``docs/bench-attack.json`` (``--measured``); ``--write-doc`` puts the
table into docs/attack.md's generated block ``bench-attack``. Run it with nothing else
running: the rates are the machine's.

Usage::

    python bench/reproduce_bench_attack.py [--work reproduce/bench-attack] [--write-doc]
    python bench/reproduce_bench_attack.py --render [--write-doc]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import textwrap
import time
from pathlib import Path
from typing import TypedDict

from bench_attack import Measurement
from reproduce_common import (
    TEST,
    add_doc_options,
    busy_cpu_seconds,
    child_usage,
    kept_figures,
    publish,
)

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ROOT / "docs" / "bench-attack.json"
DOC = ROOT / "docs" / "attack.md"
SCRIPT = ROOT / "bench" / "bench_attack.py"
#: The runs, by the number of sentences they attack, in the table's order.
SIZES: tuple[int, ...] = (20, 60)
#: bench_attack.py's options of the docs' runs, but for the size and the output.
OPTIONS: tuple[str, ...] = ("--search", "beam", "--threads", "2")


class Run(Measurement):
    """One run of bench_attack.py, with the machine's load around it."""

    #: the 1-minute load average just before and just after the command
    load_before: float
    load_after: float
    #: the whole command's wall time (models loading and warm-up included)
    wall_seconds: float
    #: CPU seconds the machine's other processes took while the command ran
    other_cpu_seconds: float


class Figures(TypedDict):
    """What :func:`measure` keeps."""

    treebank: str
    cores: int
    runs: list[Run]


def run_once(sentences: int, out: Path) -> Run:
    """One bench_attack.py run on the first ``sentences`` of EWT test, its figures kept
    in ``out``."""
    cmd = [sys.executable, str(SCRIPT), str(TEST), "--sentences", str(sentences), *OPTIONS]
    cmd += ["--json", str(out)]
    shown = ["python", "bench/bench_attack.py", TEST.name, *cmd[3:-1], out.name]
    print("$ " + shlex.join(shown), file=sys.stderr, flush=True)
    load_before = os.getloadavg()[0]
    busy, start = busy_cpu_seconds(), time.perf_counter()
    # its report goes to stderr: stdout carries the generated block
    usage = child_usage(cmd, stdout=sys.stderr)
    wall, busy = time.perf_counter() - start, busy_cpu_seconds() - busy
    load_after = os.getloadavg()[0]
    measured: Measurement = json.loads(out.read_text(encoding="utf-8"))
    return {
        **measured,
        "load_before": round(load_before, 2),
        "load_after": round(load_after, 2),
        "wall_seconds": round(wall, 1),
        "other_cpu_seconds": round(max(busy - usage.ru_utime - usage.ru_stime, 0.0), 1),
    }


def measure(work: Path) -> Figures:
    """Every run of :data:`SIZES` (skipped where its figures are kept)."""
    work.mkdir(parents=True, exist_ok=True)
    runs: list[Run] = []
    for n in SIZES:
        kept = work / f"sentences-{n}.json"
        if not kept.exists():
            run = run_once(n, work / f"sentences-{n}.measured.json")
            kept.write_text(json.dumps(run, indent=1) + "\n", encoding="utf-8")
        runs.append(json.loads(kept.read_text(encoding="utf-8")))
    return {"treebank": TEST.name, "cores": os.cpu_count() or 0, "runs": runs}


def blocks(data: Figures) -> dict[str, str]:
    """docs/attack.md's generated block ``bench-attack``."""
    first, *rest = data["runs"]
    lines = [
        f"| sentences | candidates | engine | bare forward, all {first['layers']} layers "
        f"| ratio | bare forward, layers 1–{first['probed_layer']} | ratio |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in data["runs"]:
        n = r["candidates"]
        lines.append(
            f"| {r['sentences']} | {n:,} | {n / r['engine_seconds']:.1f}/s "
            f"| {n / r['full_seconds']:.1f}/s | {r['full_seconds'] / r['engine_seconds']:.2f} "
            f"| {n / r['shallow_seconds']:.1f}/s "
            f"| {r['shallow_seconds'] / r['engine_seconds']:.2f} |"
        )
    per_run = [
        f"{first['sentences']} sentences in {first['batches']} model passes, "
        f"{first['wall_seconds']:.0f} s for the whole command, other processes "
        f"{first['other_cpu_seconds'] / first['wall_seconds']:.0%} of one core "
        f"meanwhile, 1-minute load average {first['load_before']:.2f} → "
        f"{first['load_after']:.2f} (the run's own included)",
        *(
            f"{r['sentences']} sentences in {r['batches']} model passes, "
            f"{r['wall_seconds']:.0f} s, {r['other_cpu_seconds'] / r['wall_seconds']:.0%}, "
            f"{r['load_before']:.2f} → {r['load_after']:.2f}"
            for r in rest
        ),
    ]
    note = (
        f"Per run ({data['cores']} cores, {first['threads']} torch threads, one run each): "
        + "; ".join(per_run)
        + "."
    )
    lines += ["", textwrap.fill(note, width=88, break_on_hyphens=False)]
    return {"bench-attack": "\n".join(lines) + "\n"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("reproduce/bench-attack"))
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    data: Figures = kept_figures(args, lambda: measure(args.work))
    publish(blocks(data), DOC, write=args.write_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
