"""Markdown tables of ``brittle evaluate --json`` results (as in docs/probes.md).

One table per task family: structural (distance, perceptron), depth, POS, root and tree
depth. Probe names are expected as ``<model><layer>-<task>-<arch>`` (how the commands in
docs/probes.md name them); the Path and Majority baselines join the tables whose
metrics they have.

Usage::

    python bench/probes_markdown.py RESULTS.json [MORE.json ...]
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

FAMILIES: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("Structure", ("distance", "perceptron"), ("uuas", "dspr", "dspr_prim", "sdr")),
    ("Depth", ("depth",), ("depth_spearman", "depth_acc", "root_acc")),
    ("Root", ("root",), ("root_acc",)),
    ("Part of speech", ("pos",), ("pos_acc",)),
    ("Tree depth", ("tree-depth",), ("tree_depth_acc", "tree_depth_mae")),
)


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.3f}"


def _representation(probe: dict[str, Any]) -> str:
    key = probe.get("representation", {})
    if key.get("backend") == "transformer":
        return f"{key['model']} {key['layer_from_output']}"
    return str(key.get("model", "?"))


def tables(results: list[dict[str, Any]]) -> str:
    """Markdown for the merged results."""
    probes: dict[str, dict[str, Any]] = {}
    baselines: dict[str, dict[str, float]] = {}
    for r in results:
        probes.update(r.get("probes", {}))
        baselines.update(r.get("baselines", {}))
    out: list[str] = []
    for title, tasks, metrics in FAMILIES:
        rows = [(n, p) for n, p in probes.items() if p["task"] in tasks]
        base = [(n, m) for n, m in baselines.items() if any(k in m for k in metrics)]
        if not rows:
            continue
        out.append(f"### {title}\n")
        out.append("| representation | probe | " + " | ".join(metrics) + " |")
        out.append("| --- | --- | " + " | ".join("---:" for _ in metrics) + " |")
        for _, p in sorted(rows, key=lambda r: (_representation(r[1]), r[1]["task"], r[0])):
            cells = [_fmt(p["metrics"].get(k)) for k in metrics]
            out.append(
                f"| {_representation(p)} | {p['task']} ({p['architecture']}) | "
                + " | ".join(cells)
                + " |"
            )
        for name, m in base:
            cells = [_fmt(m.get(k)) for k in metrics]
            out.append(f"| *{name} baseline* | tree | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", nargs="+", type=Path)
    args = parser.parse_args()
    print(tables([json.loads(p.read_text()) for p in args.results]))


if __name__ == "__main__":
    main()
