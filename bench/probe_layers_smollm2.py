"""Linear distance and depth probes on every third hidden state of SmolLM2-135M (docs/probes.md).

The bundled causal LM (``brittle resources``: ``causal-lm``, converted to a model
directory under the data home) is probed like any encoder: ``train-probe --model DIR``.
Its middle layers carry a few dimensions thousands of times larger than the rest, so
the probes standardise their input (``--standardize``); one distance probe on hidden
state 15 without it shows what happens otherwise.

SmolLM2 runs about 6 times slower per token than MiniLM, so on a 2-core machine the
data are capped (``--train``, ``--dev``, ``--test`` sentences): the first sentences of
EWT dev for training, the last ones of EWT dev for early stopping, the first ones of
EWT test for the tables. The caps are written as CoNLL-U files into ``WORK`` (copied
sentence blocks, unchanged). Then:

1. ``brittle train-probe TRAIN --dev DEV --model SMOLLM2 --layer 0,3,...,30 --task T
   --standardize`` for T in distance, depth (one extraction of the layers, cached);
2. ``brittle train-probe ... --layer 15 --task distance`` without ``--standardize``;
3. ``brittle evaluate TEST --probe ...`` over all of them, with the Path and Majority
   baselines, into ``WORK/evaluate.json``;
4. ``probes_markdown.py --layers`` prints the layer curve.

Steps whose output exists are skipped.

Usage::

    python bench/probe_layers_smollm2.py [--work reproduce/smollm2] [--train 1000]
        [--dev 250] [--test 500] [--step 3] [--write-doc]
    python bench/probe_layers_smollm2.py --render [--write-doc]

The evaluation (each probe's task, architecture, hidden state and metrics, the
baselines) goes to ``docs/smollm2-layers.json`` (``--measured``); ``--write-doc`` puts
the tables into docs/probes.md between ``<!-- generated: smollm2-layers -->`` and
``<!-- end generated -->``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import probes_markdown
from reproduce_common import UD, add_doc_options, brittle, kept_figures, publish

from brittle.engine.core.resources import data_home

EWT_DEV = UD / "UD_English-EWT/en_ewt-ud-dev.conllu"
EWT_TEST = UD / "UD_English-EWT/en_ewt-ud-test.conllu"
#: SmolLM2-135M: 30 layers, so hidden states 0 (embeddings) to 30.
LAYERS = 30
ROOT = Path(__file__).resolve().parents[1]
#: The evaluation behind the page's tables, as the last run wrote it.
MEASURED = ROOT / "docs" / "smollm2-layers.json"
DOC = ROOT / "docs" / "probes.md"


def blocks(path: Path) -> list[str]:
    """The sentence blocks of a CoNLL-U file, each with its trailing blank line."""
    text = path.read_text(encoding="utf-8")
    return [b.strip("\n") + "\n\n" for b in text.split("\n\n") if b.strip()]


def write_subset(source: Path, out: Path, start: int, stop: int | None) -> Path:
    """Sentences ``start:stop`` of ``source`` copied to ``out`` (unless it exists)."""
    if not out.exists():
        out.write_text("".join(blocks(source)[start:stop]), encoding="utf-8")
    return out


def model_dir() -> Path:
    """Where ``brittle resources --provision`` converted the bundled SmolLM2."""
    return data_home() / "models" / "smollm2-135m"


def measure(work: Path, train_n: int, dev_n: int, test_n: int, step: int) -> dict[str, Any]:
    """Train and evaluate what is missing; the evaluation's figures (each probe's
    ``path`` made relative to ``work``, the sweep it belongs to)."""
    work.mkdir(parents=True, exist_ok=True)
    n_dev = len(blocks(EWT_DEV))
    if train_n + dev_n > n_dev:
        raise SystemExit(f"--train + --dev must not exceed the {n_dev} sentences of EWT dev")
    train = write_subset(EWT_DEV, work / "train.conllu", 0, train_n)
    dev = write_subset(EWT_DEV, work / "dev.conllu", n_dev - dev_n, None)
    test = write_subset(EWT_TEST, work / "test.conllu", 0, test_n)
    model = model_dir()
    layers = ",".join(str(n) for n in range(0, LAYERS + 1, step))
    common = (train, "--dev", dev, "--model", model, "--quiet")
    probes = []
    for task in ("distance", "depth"):
        out = work / f"smollm2-{task}-std"
        if not (out / "done").exists():
            brittle("train-probe", *common, "--layer", layers, "--task", task,
                    "--standardize", "--out", out)  # fmt: skip
            (out / "done").touch()
        probes.append(out)
    raw = work / "smollm2-distance-raw" / "layer15"
    if not (raw / "probe.json").exists():
        brittle("train-probe", *common, "--layer", "15", "--task", "distance", "--out", raw)
    probes.append(raw.parent)
    report = work / "evaluate.json"
    if not report.exists():
        brittle(
            "evaluate", test, *[x for p in probes for x in ("--probe", p)],
            "--quiet", "--json", report,
        )  # fmt: skip
    data: dict[str, Any] = json.loads(report.read_text())
    kept = ("task", "architecture", "representation", "metrics")
    return {
        "sentences": data["sentences"],
        "probes": {
            name: {
                **{k: p[k] for k in kept},
                "path": str(Path(p["path"]).resolve().relative_to(work.resolve())),
            }
            for name, p in data["probes"].items()
        },
        "baselines": data["baselines"],
    }


def blocks_of(data: dict[str, Any]) -> dict[str, str]:
    """The generated block of docs/probes.md (``smollm2-layers``): the layer curves."""
    return {"smollm2-layers": probes_markdown.layer_tables([data])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("reproduce/smollm2"))
    parser.add_argument("--train", type=int, default=1000, help="EWT dev sentences to train on")
    parser.add_argument("--dev", type=int, default=250, help="last EWT dev sentences (dev loss)")
    parser.add_argument("--test", type=int, default=500, help="EWT test sentences scored")
    parser.add_argument("--step", type=int, default=3, help="every STEP-th hidden state")
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    data = kept_figures(
        args, lambda: measure(args.work, args.train, args.dev, args.test, args.step)
    )
    publish(blocks_of(data), DOC, write=args.write_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
