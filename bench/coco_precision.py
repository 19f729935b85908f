"""docs/performance.md's table of coCO's language model in float32 and in bfloat16: the
attack of docs/frontier.md's coCO cost, whole, once per setting.

Runs ``brittle attack GUM_TEST --method coco --search beam --budget 2 --query-budget
200 --limit 16`` with the demo's two probes (MiniLM layer -5 distance and POS, trained
when missing) for each of :data:`SETTINGS`, one after the other, each in a process of
its own whose CPU time (user and system, its threads included) and peak resident
memory are read from ``os.wait4`` (:func:`reproduce_common.child_usage`), its wall
time from the clock. The machine's busy CPU time around each run gives the other
processes' share, the sign that the runs shared the cores.

Each setting's ``adversarial.conllu`` is compared with the float32 run's: byte for byte
for the ungraded runs, and by the perturbed sentences alone for the graded run (grading
adds its grade to each sentence's comments and MISC).

The figures go to ``docs/coco-precision.json`` (``--measured``); ``--write-doc`` puts
the table into docs/performance.md's generated block ``coco-precision`` and the
default run's cost against :data:`TARGET` into docs/frontier.md's ``coco-cost``. Run it
with nothing else running.

Usage::

    python bench/coco_precision.py [--work DIR] [--write-doc]
    python bench/coco_precision.py --render [--write-doc]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path
from typing import TypedDict

from reproduce_common import (
    UD,
    add_doc_options,
    busy_cpu_seconds,
    child_usage,
    kept_figures,
    publish,
)

from brittle.engine.core.conllu import iter_conllu

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ROOT / "docs" / "coco-precision.json"
DOC = ROOT / "docs" / "performance.md"
FRONTIER = ROOT / "docs" / "frontier.md"
TREEBANK = UD / "UD_English-GUM" / "en_gum-ud-test.conllu"
SENTENCES = 16
#: The attack every setting runs (after the treebank and the probes).
COMMON = (
    "--method", "coco", "--search", "beam", "--budget", "2", "--query-budget", "200",
    "--limit", str(SENTENCES), "--quiet",
)  # fmt: skip
#: Each setting: its row's label and its own options. The first is the reference the
#: others' output is compared with.
SETTINGS = (
    ("float32 (`-o dtype=float32`), `--no-grade`", ("-o", "dtype=float32", "--no-grade")),
    ("bfloat16 (the default on a CPU with bfloat16 units), `--no-grade`", ("--no-grade",)),
    ("bfloat16, graded (the default run)", ()),
)
#: Bytes in a gigabyte, for the peak resident memory.
GB = 1e9
#: coCO's target: CPU-seconds a sentence of the default (graded) run, loading included.
TARGET = 5.0


class Run(TypedDict):
    """One setting's run."""

    label: str
    cpu_s: float  # user + system CPU seconds of the run, its threads included
    wall_s: float
    peak_rss_bytes: int
    others_cpu_s: float  # the other processes' CPU seconds while it ran
    output: str  # "reference", "the same bytes", "the same perturbations" or "differs"


def _perturbed(path: Path) -> list[tuple[str, ...]]:
    """Each sentence's words in an attack's ``adversarial.conllu``."""
    return [tuple(s.forms) for s in iter_conllu(path)]


def measure(work: Path) -> list[Run]:
    """Run every setting into ``work/K`` (afresh) and return its figures."""
    # deferred: the demo's probes load only when the script measures
    from brittle.engine.demo import prepare_demo, train_demo_probes

    plan = prepare_demo()
    train_demo_probes(plan)
    probes = [x for p in plan.probes for x in ("--probe", str(p))]
    brittle_exe = str(Path(sys.executable).parent / "brittle")
    runs: list[Run] = []
    reference: Path | None = None
    for k, (label, options) in enumerate(SETTINGS):
        out = work / str(k)
        shutil.rmtree(out, ignore_errors=True)
        cmd = [brittle_exe, "attack", str(TREEBANK), *probes, *COMMON, *options, "--out", str(out)]
        print("$ " + " ".join(cmd[1:]), file=sys.stderr, flush=True)
        busy, start = busy_cpu_seconds(), time.perf_counter()
        usage = child_usage(cmd)
        wall = time.perf_counter() - start
        cpu = usage.ru_utime + usage.ru_stime
        adversarial = out / "adversarial.conllu"
        if reference is None:
            reference, output = adversarial, "reference"
        elif adversarial.read_bytes() == reference.read_bytes():
            output = "the same bytes"
        elif _perturbed(adversarial) == _perturbed(reference):
            output = "the same perturbations"
        else:
            output = "differs"
        runs.append(
            Run(
                label=label,
                cpu_s=round(cpu, 1),
                wall_s=round(wall, 1),
                peak_rss_bytes=usage.ru_maxrss * 1024,  # KiB on Linux
                others_cpu_s=round(max(busy_cpu_seconds() - busy - cpu, 0.0), 1),
                output=output,
            )
        )
    return runs


def blocks(runs: list[Run]) -> dict[str, str]:
    """docs/performance.md's block ``coco-precision``: per setting, the run's CPU
    seconds (in all and per sentence), wall seconds, peak memory and its output against
    the float32 run's, then the other processes' share."""
    lines = [
        "| coCO's language model | CPU-s | per sentence | wall s | peak RSS | "
        "`adversarial.conllu` |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in runs:
        output = "" if r["output"] == "reference" else r["output"]
        lines.append(
            f"| {r['label']} | {r['cpu_s']:.1f} | {r['cpu_s'] / SENTENCES:.1f} | "
            f"{r['wall_s']:.1f} | {r['peak_rss_bytes'] / GB:.1f} GB | {output} |"
        )
    others = ", ".join(f"{r['others_cpu_s']:.1f}" for r in runs)
    lines += [
        "",
        f"The first {SENTENCES} sentences of {TREEBANK.name}, one run after another, the "
        f"models' loading included; the other processes took {others} CPU-seconds "
        "during the three runs.",
    ]
    graded, reference = runs[-1], runs[0]
    per = graded["cpu_s"] / SENTENCES
    met = "met" if per <= TARGET else "not met"
    cost = (
        f"The default run takes {graded['cpu_s']:.1f} CPU-seconds graded, {per:.1f} a "
        f"sentence with the models' loading ({reference['cpu_s']:.1f} in float32): the "
        f"target of {TARGET:g} is {met}; its perturbations against float32's: "
        f"{graded['output']}.\n"
    )
    return {"coco-precision": "\n".join(lines) + "\n", "coco-cost": cost}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("coco-precision"))
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    runs: list[Run] = kept_figures(args, lambda: measure(args.work))
    rendered = blocks(runs)
    publish({"coco-precision": rendered["coco-precision"]}, DOC, write=args.write_doc)
    publish({"coco-cost": rendered["coco-cost"]}, FRONTIER, write=args.write_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
