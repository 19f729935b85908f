"""Hall Maudslay & Cotterell's Jabberwocky experiment with brittle's own commands.

1. ``brittle perturb --method jabberwocky --budget all`` turns EWT test into its
   Jabberwocky version (every eligible open-class word replaced by a pseudoword with the
   same fine tag and features; the gold tree kept, ``--parser gold``).
2. ``brittle train-probe`` trains the linear structural (``distance``) probe and the
   perceptron probe on plain data (LinES train + EWT dev, early stopping on LinES dev)
   at each MiniLM hidden state of ``--layers``; the layer kept per task is the one with
   the lowest dev loss, beside layer 0 (the embedding layer).
3. ``brittle evaluate JABBERWOCKY --paired PLAIN`` scores every probe on both files, with
   the drop and its paired bootstrap interval, beside Path and Majority.

Steps whose output exists are skipped, so a rerun only prints the tables. Prints the
commands it runs and Markdown tables.

Usage::

    python bench/reproduce_jabberwocky.py [--work DIR] [--layers 0,2] [--resamples 1000]
        [--epochs TASK=N ...]
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

UD = Path(__file__).resolve().parents[2] / "shared" / "data" / "ud"
TRAIN = (
    UD / "UD_English-LinES/en_lines-ud-train.conllu",
    UD / "UD_English-EWT/en_ewt-ud-dev.conllu",
)
DEV = UD / "UD_English-LinES/en_lines-ud-dev.conllu"
TEST = UD / "UD_English-EWT/en_ewt-ud-test.conllu"
TASKS = ("distance", "perceptron")


def brittle(*args: object) -> None:
    """Run one brittle command (printed first), failing loudly."""
    cmd = [str(Path(sys.executable).parent / "brittle"), *map(str, args)]
    print("$ " + shlex.join(["brittle", *cmd[1:]]), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("reproduce-jabberwocky"))
    parser.add_argument("--layers", default="0,2", help="MiniLM hidden states to train on")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument(
        "--epochs",
        action="append",
        default=[],
        metavar="TASK=N",
        help="most training epochs of a task's probes (default: train-probe's)",
    )
    args = parser.parse_args(argv)
    epochs = dict(x.split("=", 1) for x in args.epochs)
    work: Path = args.work
    work.mkdir(parents=True, exist_ok=True)
    layers = [int(x) for x in args.layers.split(",")]

    jab = work / "ewt-test-jabberwocky.conllu"
    if not jab.exists():
        brittle(
            "perturb", TEST, "--method", "jabberwocky", "--budget", "all", "-b", "1",
            "--parser", "gold", "-d", "inf", "--no-quality", "--quiet",
            "--out", jab, "--report", work / "ewt-test-jabberwocky.json",
        )  # fmt: skip
    dev_loss: dict[tuple[str, int], float] = {}
    for task in TASKS:
        for layer in layers:
            out = work / "probes" / f"minilm{layer}-{task}-linear"
            if not (out / "probe.json").exists():
                brittle(
                    "train-probe", *TRAIN, "--dev", DEV, "--layer", layer, "--task", task,
                    "--threads", "2", "--quiet", "--out", out,
                    *(("--epochs", epochs[task]) if task in epochs else ()),
                )  # fmt: skip
            dev_loss[task, layer] = float(json.loads((out / "probe.json").read_text())["dev_loss"])
    best = {t: min((dev_loss[t, n], n) for n in layers)[1] for t in TASKS}
    chosen = sorted({(t, best[t]) for t in TASKS} | {(t, 0) for t in TASKS if 0 in layers})
    probes = [work / "probes" / f"minilm{n}-{t}-linear" for t, n in chosen]
    paired = work / "paired.json"
    if not paired.exists():
        brittle(
            "evaluate", jab, "--paired", TEST, *[x for p in probes for x in ("--probe", p)],
            "--resamples", args.resamples, "--quiet", "--json", paired,
        )  # fmt: skip

    print("Dev loss (LinES dev) per task and hidden state:\n")
    print("| task | " + " | ".join(f"layer {n}" for n in layers) + " | kept |")
    print("| --- |" + " ---: |" * (len(layers) + 1))
    for t in TASKS:
        cells = " | ".join(f"{dev_loss[t, n]:.4f}" for n in layers)
        print(f"| {t} | {cells} | {best[t]} |")
    report: dict[str, Any] = json.loads(paired.read_text())
    rows = report["rows"]
    print(f"\nEWT test, plain vs Jabberwocky ({report['sentences']} sentences):\n")
    print("| probe | metric | plain | Jabberwocky | drop | 95% CI of the drop |")
    print("| --- | --- | ---: | ---: | ---: | --- |")
    for name, row in rows.items():
        for metric in ("uuas", "dspr"):
            m = row["metrics"].get(metric)
            if m is None:
                continue
            ci = "–" if m["ci_low"] is None else f"[{m['ci_low']:+.3f}, {m['ci_high']:+.3f}]"
            print(
                f"| {name} | {metric} | {m['plain']:.3f} | {m['perturbed']:.3f} "
                f"| {m['drop']:+.3f} | {ci} |"
            )
    maj = rows["majority"]["metrics"]
    print("\nLead over Majority, plain vs Jabberwocky (shrink = 1 - lead_J / lead_plain):\n")
    print("| probe | metric | lead (plain) | lead (Jabberwocky) | shrink |")
    print("| --- | --- | ---: | ---: | ---: |")
    for name, row in rows.items():
        if name in ("path", "majority"):
            continue
        for metric in ("uuas", "dspr"):
            m = row["metrics"][metric]
            lead_p = m["plain"] - maj[metric]["plain"]
            lead_j = m["perturbed"] - maj[metric]["perturbed"]
            shrink = f"{1 - lead_j / lead_p:.0%}" if lead_p > 0 else "– (no lead)"
            print(f"| {name} | {metric} | {lead_p:+.3f} | {lead_j:+.3f} | {shrink} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
