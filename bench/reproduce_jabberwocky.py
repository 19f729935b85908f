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
        [--smollm2-layer 30] [--json OUT.json] [--write-doc]
    python bench/reproduce_jabberwocky.py --render [--write-doc]

The figures go to ``docs/jabberwocky.json`` (``--measured``); ``--write-doc`` puts the
three tables into docs/reproductions.md between their ``<!-- generated: jabberwocky-*
-->`` and ``<!-- end generated -->`` lines.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from reproduce_common import (
    TEST,
    add_doc_options,
    add_smollm2_layer,
    brittle,
    ensure_smollm2_probe,
    ensure_sweep,
    kept_figures,
    publish,
    sweep_layers,
)

ROOT = Path(__file__).resolve().parents[1]
#: The tables' figures, as the last run wrote them (the page is rendered from it).
MEASURED = ROOT / "docs" / "jabberwocky.json"
DOC = ROOT / "docs" / "reproductions.md"

TASKS = ("distance", "perceptron")
#: The paper's pseudowords: short monosyllabic nonwords, in the slots of its footnote 4
#: (the generator's defaults, n-gram stems in every content slot, stay an option).
PAPER_OPTIONS = ("-o", "stems=syllable", "-o", "slots=paper")
#: The tree metrics of the tables.
METRICS = ("uuas", "dspr")


def measure(work: Path, resamples: int, smollm2_layer: int) -> dict[str, Any]:
    """Build the corpus, train and evaluate what is missing, and return the tables'
    figures: ``dev_loss`` per task and MiniLM hidden state, the ``best_layer`` kept per
    task, ``sentences``, ``evaluate --paired``'s ``rows`` per probe and baseline, and
    each probe's ``lead_over_majority`` per metric (plain, Jabberwocky, shrink or None
    where there is no lead to shrink)."""
    work.mkdir(parents=True, exist_ok=True)
    jab = work / "ewt-test-jabberwocky-paper.conllu"
    if not jab.exists():
        brittle(
            "perturb", TEST, "--method", "jabberwocky", *PAPER_OPTIONS, "--budget", "all",
            "-b", "1", "--parser", "gold", "-d", "inf", "--no-quality", "--quiet",
            "--out", jab, "--report", work / "ewt-test-jabberwocky-paper.json",
        )  # fmt: skip
    dev_loss: dict[str, dict[str, float]] = {}
    chosen: dict[str, Path] = {}  # probe name in the tables -> probe directory
    best: dict[str, int] = {}
    for task in TASKS:
        layers = sweep_layers(ensure_sweep(work, "minilm", task))
        dev_loss[task] = {str(n): loss for n, (_, loss) in sorted(layers.items())}
        best[task] = min((loss, n) for n, (_, loss) in layers.items())[1]
        for n in sorted({0, best[task]}):
            chosen[f"minilm{n}-{task}"] = layers[n][0]
        for static in ("glove", "glove+pos"):
            (vectors,) = sweep_layers(ensure_sweep(work, static, task)).values()
            chosen[f"{static}-{task}"] = vectors[0]
        if smollm2_layer >= 0:
            n = smollm2_layer
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
            "--resamples", resamples, "--quiet", "--json", paired,
        )  # fmt: skip
    report: dict[str, Any] = json.loads(paired.read_text())
    rows = report["rows"]
    maj = rows["majority"]["metrics"]
    leads: dict[str, dict[str, dict[str, float | None]]] = {}
    for name, row in rows.items():
        if name in ("path", "majority"):
            continue
        for metric in METRICS:
            m = row["metrics"][metric]
            lead_p = m["plain"] - maj[metric]["plain"]
            lead_j = m["perturbed"] - maj[metric]["perturbed"]
            # a lead under a point is no lead to shrink (the ratio would be noise)
            ratio = 1 - lead_j / lead_p if lead_p >= 0.01 else None
            leads.setdefault(name, {})[metric] = {
                "plain": lead_p,
                "jabberwocky": lead_j,
                "shrink": ratio,
            }
    return {
        "dev_loss": dev_loss,
        "best_layer": best,
        "sentences": report["sentences"],
        "rows": rows,
        "lead_over_majority": leads,
    }


def blocks(data: dict[str, Any]) -> dict[str, str]:
    """The three generated blocks of docs/reproductions.md (``jabberwocky-*``)."""
    dev_loss: dict[str, dict[str, float]] = data["dev_loss"]
    layers_seen = sorted({int(n) for by_layer in dev_loss.values() for n in by_layer})
    losses = [
        "| task | " + " | ".join(f"layer {n}" for n in layers_seen) + " | kept |",
        "| --- |" + " ---: |" * (len(layers_seen) + 1),
    ]
    for task, by_layer in dev_loss.items():
        cells = " | ".join(f"{by_layer[str(n)]:.4f}" for n in layers_seen)
        losses.append(f"| {task} | {cells} | {data['best_layer'][task]} |")
    drops = [
        f"EWT test, plain vs Jabberwocky ({data['sentences']} sentences):",
        "",
        "| probe | metric | plain | Jabberwocky | drop | 95% CI of the drop |",
        "| --- | --- | ---: | ---: | ---: | --- |",
    ]
    for name, row in data["rows"].items():
        for metric in METRICS:
            m = row["metrics"].get(metric)
            if m is None:
                continue
            ci = "–" if m["ci_low"] is None else f"[{m['ci_low']:+.3f}, {m['ci_high']:+.3f}]"
            drops.append(
                f"| {name} | {metric} | {m['plain']:.3f} | {m['perturbed']:.3f} "
                f"| {m['drop']:+.3f} | {ci} |"
            )
    leads = [
        "| probe | metric | lead (plain) | lead (Jabberwocky) | shrink |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for name, by_metric in data["lead_over_majority"].items():
        for metric, lead in by_metric.items():
            ratio = lead["shrink"]
            shrink = "– (no lead)" if ratio is None else f"{ratio:.0%}"
            leads.append(
                f"| {name} | {metric} | {lead['plain']:+.3f} | {lead['jabberwocky']:+.3f} "
                f"| {shrink} |"
            )
    return {
        "jabberwocky-dev-loss": "\n".join(losses) + "\n",
        "jabberwocky-drops": "\n".join(drops) + "\n",
        "jabberwocky-leads": "\n".join(leads) + "\n",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("reproduce-jabberwocky"))
    parser.add_argument("--resamples", type=int, default=1000)
    add_smollm2_layer(parser, "MiniLM and GloVe")
    parser.add_argument("--json", type=Path, default=None, help="write the tables here")
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    data = kept_figures(args, lambda: measure(args.work, args.resamples, args.smollm2_layer))
    publish(blocks(data), DOC, write=args.write_doc)
    if args.json is not None:
        args.json.write_text(json.dumps(data, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
