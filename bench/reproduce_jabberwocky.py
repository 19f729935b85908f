"""Hall Maudslay & Cotterell's Jabberwocky experiment with brittle's own commands.

1. ``brittle perturb --method jabberwocky -o stems=syllable -o slots=paper --budget
   all`` turns EWT test into its Jabberwocky version as the paper builds it: every
   common noun, regular verb form but the past ones, adjective and -ly adverb replaced
   by a short monosyllabic nonword with the same fine tag and features (its footnote
   4); the gold tree kept, ``--parser gold``.
2. ``brittle train-probe --layer all`` trains the linear structural (``distance``) probe
   and the perceptron probe on plain data (LinES train + EWT dev, early stopping on
   LinES dev) at every MiniLM hidden state, and on GloVe (shared with
   ``reproduce_probe_parser.py`` in ``WORK/sweeps``). Per task the layer with the lowest
   dev loss is kept, beside layer 0 (the embedding layer), GloVe, and GloVe with MiniLM's
   position embeddings appended (``glove+pos``, the paper's Fast+Pos control); and one hidden
   state of the causal SmolLM2-135M (``--smollm2-layer``, its last by default, inputs
   standardised; shared with ``reproduce_probe_parser.py`` in ``WORK/smollm2-probes``).
3. ``brittle evaluate JABBERWOCKY --paired PLAIN`` scores every kept probe on both files,
   with the drop and its paired bootstrap interval, beside Path and Majority.

Steps whose output exists are skipped, so a rerun only prints the tables. Prints the
commands it runs and Markdown tables.

Usage::

    python bench/reproduce_jabberwocky.py [--work DIR] [--resamples 1000]
        [--smollm2-layer 30] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from reproduce_common import (
    TEST,
    add_smollm2_layer,
    brittle,
    ensure_smollm2_probe,
    ensure_sweep,
    sweep_layers,
)

TASKS = ("distance", "perceptron")
#: The paper's pseudowords: short monosyllabic nonwords, in the slots of its footnote 4
#: (the generator's defaults, n-gram stems in every content slot, stay an option).
PAPER_OPTIONS = ("-o", "stems=syllable", "-o", "slots=paper")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("reproduce-jabberwocky"))
    parser.add_argument("--resamples", type=int, default=1000)
    add_smollm2_layer(parser, "MiniLM and GloVe")
    parser.add_argument("--json", type=Path, default=None, help="write the tables here")
    args = parser.parse_args(argv)
    work: Path = args.work
    work.mkdir(parents=True, exist_ok=True)

    jab = work / "ewt-test-jabberwocky-paper.conllu"
    if not jab.exists():
        brittle(
            "perturb", TEST, "--method", "jabberwocky", *PAPER_OPTIONS, "--budget", "all",
            "-b", "1", "--parser", "gold", "-d", "inf", "--no-quality", "--quiet",
            "--out", jab, "--report", work / "ewt-test-jabberwocky-paper.json",
        )  # fmt: skip
    dev_loss: dict[tuple[str, int], float] = {}
    chosen: dict[str, Path] = {}  # probe name in the tables -> probe directory
    best: dict[str, int] = {}
    for task in TASKS:
        layers = sweep_layers(ensure_sweep(work, "minilm", task))
        dev_loss.update({(task, n): loss for n, (_, loss) in layers.items()})
        best[task] = min((loss, n) for n, (_, loss) in layers.items())[1]
        for n in sorted({0, best[task]}):
            chosen[f"minilm{n}-{task}"] = layers[n][0]
        for static in ("glove", "glove+pos"):
            (vectors,) = sweep_layers(ensure_sweep(work, static, task)).values()
            chosen[f"{static}-{task}"] = vectors[0]
        if args.smollm2_layer >= 0:
            n = args.smollm2_layer
            chosen[f"smollm2-{n}-{task}"] = ensure_smollm2_probe(work, task, n)
    # evaluate names each probe by its directory: link the kept ones under their names
    named = work / "kept-probes"
    named.mkdir(exist_ok=True)
    probes = []
    for name, path in chosen.items():
        link = named / name
        if not link.exists():
            link.symlink_to(path.resolve(), target_is_directory=True)
        probes.append(link)
    paired = work / "paired-paper.json"
    if paired.exists() and not set(chosen) <= set(json.loads(paired.read_text())["rows"]):
        paired.unlink()  # a probe was added since: score them all again, side by side
    if not paired.exists():
        brittle(
            "evaluate", jab, "--paired", TEST, *[x for p in probes for x in ("--probe", p)],
            "--resamples", args.resamples, "--quiet", "--json", paired,
        )  # fmt: skip

    layers_seen = sorted({n for _, n in dev_loss})
    print("Dev loss (LinES dev) per task and MiniLM hidden state:\n")
    print("| task | " + " | ".join(f"layer {n}" for n in layers_seen) + " | kept |")
    print("| --- |" + " ---: |" * (len(layers_seen) + 1))
    for t in TASKS:
        cells = " | ".join(f"{dev_loss[t, n]:.4f}" for n in layers_seen)
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
    leads: dict[str, dict[str, dict[str, float | None]]] = {}
    for name, row in rows.items():
        if name in ("path", "majority"):
            continue
        for metric in ("uuas", "dspr"):
            m = row["metrics"][metric]
            lead_p = m["plain"] - maj[metric]["plain"]
            lead_j = m["perturbed"] - maj[metric]["perturbed"]
            # a lead under a point is no lead to shrink (the ratio would be noise)
            ratio = 1 - lead_j / lead_p if lead_p >= 0.01 else None
            shrink = "– (no lead)" if ratio is None else f"{ratio:.0%}"
            print(f"| {name} | {metric} | {lead_p:+.3f} | {lead_j:+.3f} | {shrink} |")
            leads.setdefault(name, {})[metric] = {
                "plain": lead_p,
                "jabberwocky": lead_j,
                "shrink": ratio,
            }
    if args.json is not None:
        table = {
            "best_layer": best,
            "sentences": report["sentences"],
            "rows": rows,
            "lead_over_majority": leads,
        }
        args.json.write_text(json.dumps(table, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
