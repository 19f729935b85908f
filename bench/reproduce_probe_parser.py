"""Hall Maudslay et al.'s "A tale of a probe and a parser" with brittle's own commands.

The structural probe (``--task distance``) against the perceptron parser probe
(``--task perceptron``) at every hidden state of the bundled MiniLM, on GloVe, and at
one hidden state of the causal SmolLM2-135M (``--smollm2-layer``, its last by default,
inputs standardised; ``WORK/smollm2-probes``):

1. ``brittle train-probe --layer all`` trains each probe on every hidden state from one
   pass of the model (LinES train + EWT dev, early stopping on LinES dev) into
   ``WORK/sweeps``; GloVe has one layer, so its sweep has one probe;
2. ``brittle evaluate TEST --probe SWEEP ...`` evaluates every probe of the sweeps on EWT
   test (UUAS and DSpr), beside the Path and Majority baselines;
3. per layer, the perceptron's lead over the structural probe on UUAS, on DSpr and on
   DSpr after Prim + Floyd-Warshall (``dspr_prim``: the Spearman correlation of the gold
   distances with the path lengths in the predicted tree, the paper's DSpr_P+FW), with a
   95% paired bootstrap interval over sentences (both probes scored on the same
   resampled sentences).

Steps whose output exists are skipped (an interrupted sweep resumes), so a rerun only
prints the tables.

Usage::

    python bench/reproduce_probe_parser.py [--work DIR] [--resamples 1000]
        [--smollm2-layer 30] [--json OUT.json] [--write-doc]
    python bench/reproduce_probe_parser.py --render [--write-doc]

The figures go to ``docs/probe-parser.json`` (``--measured``); ``--write-doc`` puts the
table into docs/reproductions.md between its ``<!-- generated: probe-parser -->`` and
``<!-- end generated -->`` lines.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reproduce_common import (
    MODELS,
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

from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.sentence import Sentence
from brittle.engine.evaluate.paired_evaluation import paired_bootstrap
from brittle.engine.probes.probe_data import encode_split_layers
from brittle.engine.probes.probe_jobs import default_cache
from brittle.scorers.metrics import DistanceScores, aggregate_distance, score_distances_many
from brittle.scorers.probe import Probe
from brittle.scorers.probe_gold import golds_of
from brittle.scorers.representations import reopen_backend

ROOT = Path(__file__).resolve().parents[1]
#: The table's figures, as the last run wrote them (the page is rendered from it).
MEASURED = ROOT / "docs" / "probe-parser.json"
DOC = ROOT / "docs" / "reproductions.md"
TASKS = ("distance", "perceptron")
#: The tree metrics compared: UUAS, DSpr and DSpr after Prim + Floyd-Warshall.
METRICS = ("uuas", "dspr", "dspr_prim")


def per_sentence(probe_dir: Path, sentences: Sequence[Sentence]) -> list[DistanceScores]:
    """The probe's per-sentence tree scores on ``sentences`` (vectors from the cache)."""
    probe = Probe.load(probe_dir)
    backend = reopen_backend(probe.backend)
    try:
        (data,) = encode_split_layers(
            sentences,
            backend,
            layers=[probe.key.layer],
            cache=default_cache(backend, None),
            sources=(TEST,),
        )
    finally:
        backend.close()
    golds = golds_of(sentences)
    preds = probe.predict(data)
    return score_distances_many(preds, [g.heads for g in golds], punct=[g.punct for g in golds])


def lead(
    parser_scores: list[DistanceScores], probe_scores: list[DistanceScores], resamples: int
) -> dict[str, tuple[float, float, float]]:
    """Perceptron minus structural probe on each of ``METRICS``: (difference, low, high)."""

    def diff(idx: Sequence[int] | None) -> dict[str, float]:
        a = parser_scores if idx is None else [parser_scores[i] for i in idx]
        b = probe_scores if idx is None else [probe_scores[i] for i in idx]
        ma, mb = aggregate_distance(a), aggregate_distance(b)
        return {m: ma[m] - mb[m] for m in METRICS}

    point = diff(None)
    ci = paired_bootstrap(
        len(parser_scores), lambda idx: diff(idx.tolist()), resamples=resamples, seed=0
    )
    return {m: (point[m], *ci.get(m, (float("nan"), float("nan")))) for m in point}


def evaluated(out: Path, probes: Sequence[Path]) -> dict[str, Any]:
    """``brittle evaluate TEST`` of ``probes`` (sweep or probe directories) into ``out``,
    unless it is there."""
    if not out.exists():
        brittle(
            "evaluate", TEST, *[x for p in probes for x in ("--probe", p)],
            "--quiet", "--json", out,
        )  # fmt: skip
    report: dict[str, Any] = json.loads(out.read_text())
    return report


def measure(work: Path, resamples: int, smollm2_layer: int) -> dict[str, Any]:
    """Train what is missing, evaluate, and return the table's figures: ``sentences``,
    one row per representation and hidden state (``model``, ``layer``, the probe's and
    the parser's metrics, the parser's ``lead`` as ``[difference, low, high]`` per
    metric) and the Path and Majority ``baselines``."""
    work.mkdir(parents=True, exist_ok=True)
    sweeps = {(m, t): ensure_sweep(work, m, t) for m in MODELS for t in TASKS}
    report = evaluated(work / "evaluate.json", list(sweeps.values()))
    # per representation and hidden state: (structural probe, perceptron parser)
    pairs: dict[str, dict[int, tuple[Path, Path]]] = {}
    for model in MODELS:
        layers = sweep_layers(sweeps[model, "distance"])
        parser_layers = sweep_layers(sweeps[model, "perceptron"])
        pairs[model] = {i: (layers[i][0], parser_layers[i][0]) for i in sorted(layers)}
    reports = [report]
    if smollm2_layer >= 0:
        n = smollm2_layer
        probe, perceptron = (ensure_smollm2_probe(work, t, n) for t in TASKS)
        pairs["smollm2"] = {n: (probe, perceptron)}
        reports.append(evaluated(work / f"evaluate-smollm2-{n}.json", [probe, perceptron]))
    metrics = {
        Path(p["path"]).resolve(): p["metrics"] for r in reports for p in r["probes"].values()
    }
    sentences = read_conllu(TEST)

    table: list[dict[str, Any]] = []
    for model, by_layer in pairs.items():
        for index, (probe_dir, parser_dir) in by_layer.items():
            d = lead(
                per_sentence(parser_dir, sentences),
                per_sentence(probe_dir, sentences),
                resamples,
            )
            table.append(
                {
                    "model": model,
                    "layer": index,
                    "probe": metrics[probe_dir.resolve()],
                    "parser": metrics[parser_dir.resolve()],
                    "lead": {m: list(v) for m, v in d.items()},
                }
            )
    return {"sentences": report["sentences"], "rows": table, "baselines": report["baselines"]}


def blocks(data: dict[str, Any]) -> dict[str, str]:
    """The generated block of docs/reproductions.md (``probe-parser``)."""
    names = {"uuas": "UUAS", "dspr": "DSpr", "dspr_prim": "DSpr P+FW"}
    head = " | ".join(
        f"{names[m]} probe | {names[m]} parser | {names[m]} lead [95% CI]" for m in METRICS
    )
    lines = [
        f"EWT test ({data['sentences']} sentences); lead = perceptron - structural probe",
        "",
        f"| representation | hidden state | {head} |",
        "| --- | ---: |" + " ---: | ---: | --- |" * len(METRICS),
    ]
    for row in data["rows"]:
        p, q, ld = row["probe"], row["parser"], row["lead"]
        cells = []
        for m in METRICS:
            v, lo, hi = ld[m]
            cells.append(f"{p[m]:.3f} | {q[m]:.3f} | {v:+.3f} [{lo:+.3f}, {hi:+.3f}]")
        lines.append(f"| {row['model']} | {row['layer']} | " + " | ".join(cells) + " |")
    for name in ("path", "majority"):
        b = data["baselines"][name]
        scores = " | ".join(f"{b[m]:.3f} | | " for m in METRICS)
        lines.append(f"| {name} (baseline) | – | {scores}|")
    return {"probe-parser": "\n".join(lines) + "\n"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("reproduce-probe-parser"))
    parser.add_argument("--resamples", type=int, default=1000)
    add_smollm2_layer(parser, "the sweeps")
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
