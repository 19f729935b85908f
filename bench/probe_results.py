"""docs/probes.md's "Results on UD English": every probe task on MiniLM's hidden states
2 (-5) and 6 (-1), linear and MLP, on GloVe and on the random-vector control, beside
the Path and Majority trees.

Every probe is trained on LinES train + EWT dev, early-stopped on LinES dev, seed 0 and
default settings, then all are scored in one ``brittle evaluate`` on EWT test. The
probes ``make reproduce`` trains in other steps are reused where they are the same
probe: the linear distance and perceptron probes of the layer sweeps
(``WORK/sweeps/{minilm,glove}-{distance,perceptron}``, trained here when missing) and
the linear depth, root, POS and tree-depth probes on MiniLM hidden state 2 and GloVe of
``reproduce_fragility.py`` (``WORK/fragility/probes``); the others are trained into
``WORK/probe-results``. A probe already trained is not trained again, and the
evaluation is kept in ``WORK/probe-results/evaluate.json``.

The figures go to ``docs/probe-results.json`` (``--measured``: each row's metrics and
the baselines); ``--write-doc`` writes the three tables (structure, depth, and root,
POS and tree depth side by side) into docs/probes.md's generated blocks
``probe-structure``, ``probe-depth`` and ``probe-other``. Training takes most of an
hour on 2 cores (the MLP probes).

Usage::

    python bench/probe_results.py [--work reproduce] [--write-doc]
    python bench/probe_results.py --render [--write-doc]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reproduce_common import (
    DEV,
    TEST,
    TRAIN,
    add_doc_options,
    brittle,
    ensure_sweep,
    kept_figures,
    publish,
)

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ROOT / "docs" / "probe-results.json"
DOC = ROOT / "docs" / "probes.md"
TASKS = ("distance", "perceptron", "depth", "root", "pos", "tree-depth")
#: The representations of the tables: label, ``train-probe`` options, architectures.
REPRESENTATIONS: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("MiniLM -5", ("--layer", "2"), ("linear", "mlp")),
    ("MiniLM -1", ("--layer", "6"), ("linear", "mlp")),
    ("GloVe 50d", ("--model", "glove"), ("linear",)),
    ("random:384", ("--model", "random:384"), ("linear",)),
)


@dataclass(frozen=True)
class Row:
    """One probe of the tables.

    Attributes:
        representation: its label (a key of :data:`REPRESENTATIONS`).
        task: the probe task.
        architecture: ``linear`` or ``mlp``.
    """

    representation: str
    task: str
    architecture: str


ROWS = tuple(
    Row(label, task, arch)
    for label, _, archs in REPRESENTATIONS
    for arch in archs
    for task in TASKS
)


def probe_dir(work: Path, row: Row) -> Path:
    """Where ``row``'s probe is (module docstring), trained when missing."""
    options = {label: opts for label, opts, _ in REPRESENTATIONS}[row.representation]
    if row.architecture == "linear" and row.task in ("distance", "perceptron"):
        if row.representation == "MiniLM -5":
            return ensure_sweep(work, "minilm", row.task) / "layer2"
        if row.representation == "MiniLM -1":
            return ensure_sweep(work, "minilm", row.task) / "layer6"
        if row.representation == "GloVe 50d":
            return ensure_sweep(work, "glove", row.task) / "layer0"
    shared = {"MiniLM -5": "minilm2", "GloVe 50d": "glove"}.get(row.representation)
    if row.architecture == "linear" and shared is not None:
        out = work / "fragility" / "probes" / f"{shared}-{row.task}"
    else:
        name = row.representation.lower().replace(" ", "").replace(":", "")
        out = work / "probe-results" / f"{name}-{row.task}-{row.architecture}"
    if not (out / "probe.json").exists():
        brittle(
            "train-probe", *TRAIN, "--dev", DEV, *options, "--task", row.task,
            "--arch", row.architecture, "--quiet", "--out", out,
        )  # fmt: skip
    return out


def measure(work: Path) -> dict[str, Any]:
    """Every row's metrics on EWT test and the baselines'."""
    paths = {row: probe_dir(work, row) for row in ROWS}
    found = work / "probe-results" / "evaluate.json"
    if not found.exists():
        found.parent.mkdir(parents=True, exist_ok=True)
        brittle(
            "evaluate", TEST, *[x for p in paths.values() for x in ("--probe", p)],
            "--quiet", "--json", found,
        )  # fmt: skip
    results = json.loads(found.read_text())
    by_path = {str(Path(p["path"]).resolve()): p for p in results["probes"].values()}
    rows = []
    for row, path in paths.items():
        probe = by_path[str(path.resolve())]
        rows.append(
            {
                "representation": row.representation,
                "task": row.task,
                "architecture": row.architecture,
                "metrics": probe["metrics"],
            }
        )
    return {
        "treebank": Path(results["treebank"]).name,
        "sentences": results["sentences"],
        "rows": rows,
        "baselines": results["baselines"],
    }


def _f(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _baseline_rows(base: dict[str, dict[str, float]], metrics: tuple[str, ...]) -> list[str]:
    """The Path and Majority trees' rows of a table showing ``metrics``."""
    return [
        f"| *{name.capitalize()} baseline* | tree | "
        + " | ".join(f"{base[name][k]:.3f}" for k in metrics)
        + " |"
        for name in ("path", "majority")
    ]


def blocks(data: dict[str, Any]) -> dict[str, str]:
    """docs/probes.md's blocks: ``probe-structure`` (distance and perceptron; UUAS in
    bold where it beats both tree baselines), ``probe-depth`` and ``probe-other`` (root,
    POS and tree depth side by side)."""
    rows: list[dict[str, Any]] = data["rows"]
    base = data["baselines"]
    order = [label for label, _, _ in REPRESENTATIONS]

    def of(task: str) -> list[dict[str, Any]]:
        mine = [r for r in rows if r["task"] == task]
        return sorted(mine, key=lambda r: (order.index(r["representation"]), r["architecture"]))

    beat = max(base["path"]["uuas"], base["majority"]["uuas"])
    structure = [
        "| representation | probe | uuas | dspr | dspr_prim | sdr |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for label in order:
        for r in sorted(
            (r for r in rows if r["representation"] == label and r["task"] in TASKS[:2]),
            key=lambda r: (TASKS.index(r["task"]), r["architecture"]),
        ):
            m = r["metrics"]
            uuas = f"**{m['uuas']:.3f}**" if m["uuas"] > beat else f"{m['uuas']:.3f}"
            structure.append(
                f"| {label} | {r['task']} ({r['architecture']}) | {uuas} | {_f(m.get('dspr'))} "
                f"| {_f(m.get('dspr_prim'))} | {_f(m.get('sdr'))} |"
            )
    structure += _baseline_rows(base, ("uuas", "dspr", "dspr_prim", "sdr"))
    depth = [
        "| representation | probe | depth_spearman | depth_acc | root_acc |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for r in of("depth"):
        m = r["metrics"]
        depth.append(
            f"| {r['representation']} | depth ({r['architecture']}) "
            f"| {m['depth_spearman']:.3f} | {m['depth_acc']:.3f} | {m['root_acc']:.3f} |"
        )
    depth += _baseline_rows(base, ("depth_spearman", "depth_acc", "root_acc"))
    other = [
        "| representation | probe | root_acc | | probe | pos_acc | | probe | tree_depth_acc "
        "| tree_depth_mae |",
        "| --- | --- | ---: | --- | --- | ---: | --- | --- | ---: | ---: |",
    ]
    for root, pos, tree in zip(of("root"), of("pos"), of("tree-depth"), strict=True):
        arch = root["architecture"]
        other.append(
            f"| {root['representation']} | root ({arch}) | {root['metrics']['root_acc']:.3f} "
            f"| | pos ({arch}) | {pos['metrics']['pos_acc']:.3f} | | tree-depth ({arch}) "
            f"| {tree['metrics']['tree_depth_acc']:.3f} | {tree['metrics']['tree_depth_mae']:.3f} |"
        )
    other.append(
        f"| *Path / Majority* | tree | {base['path']['root_acc']:.3f} / "
        f"{base['majority']['root_acc']:.3f} | | | | | | | |"
    )
    return {
        "probe-structure": "\n".join(structure) + "\n",
        "probe-depth": "\n".join(depth) + "\n",
        "probe-other": "\n".join(other) + "\n",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("reproduce"))
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    data = kept_figures(args, lambda: measure(args.work.resolve()))
    publish(blocks(data), DOC, write=args.write_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
