"""Markdown tables of ``brittle evaluate --json`` results (as in docs/probes.md).

One table per group of tasks that show the same columns (each probe task declares its
``columns``; distance and perceptron share theirs), titled by the tasks. Probe names are
expected as ``<model><layer>-<task>-<arch>`` (how the commands in docs/probes.md name
them); the Path and Majority baselines join the tables whose metrics they have.

With ``--layers`` it prints layer curves instead: one table per task family and sweep
(the probes of one ``train-probe --layer ...`` directory, named by it), a row per hidden
state, the highest value of the task's first column in bold, and whether that value
beats both tree baselines.

Usage::

    python bench/probes_markdown.py [--layers] RESULTS.json [MORE.json ...]
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from brittle.engine.core.errors import ConfigError
from brittle.scorers.probe_tasks import task_for


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.3f}"


def _representation(probe: dict[str, Any]) -> str:
    key = probe.get("representation", {})
    if key.get("backend") == "transformer":
        return f"{key['model']} {key['layer_from_output']}"
    return str(key.get("model", "?"))


def _columns(task: str, probes: dict[str, dict[str, Any]]) -> tuple[str, ...]:
    """The columns ``task`` declares; for a task this brittle does not know, the metrics
    its probes reported."""
    try:
        return task_for(task).columns
    except ConfigError:
        return tuple(next(p["metrics"] for p in probes.values() if p["task"] == task))


def tables(results: list[dict[str, Any]]) -> str:
    """Markdown for the merged results."""
    probes: dict[str, dict[str, Any]] = {}
    baselines: dict[str, dict[str, float]] = {}
    for r in results:
        probes.update(r.get("probes", {}))
        baselines.update(r.get("baselines", {}))
    families: dict[tuple[str, ...], list[str]] = {}  # columns -> tasks showing them
    for task in sorted({p["task"] for p in probes.values()}):
        families.setdefault(_columns(task, probes), []).append(task)
    out: list[str] = []
    for metrics, tasks in families.items():
        rows = [(n, p) for n, p in probes.items() if p["task"] in tasks]
        base = [(n, m) for n, m in baselines.items() if any(k in m for k in metrics)]
        out.append(f"### {', '.join(tasks)}\n")
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


def _sweep(name: str, probe: dict[str, Any]) -> str:
    """The sweep a probe belongs to: its directory's parent for ``layerN`` probes."""
    path = Path(str(probe.get("path", name)))
    return path.parent.name if path.name.startswith("layer") else path.name


def layer_tables(results: list[dict[str, Any]]) -> str:
    """Markdown layer curves of the merged results (see the module doc)."""
    probes: dict[str, dict[str, Any]] = {}
    baselines: dict[str, dict[str, float]] = {}
    for r in results:
        probes.update(r.get("probes", {}))
        baselines.update(r.get("baselines", {}))
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for name, p in probes.items():
        groups.setdefault((p["task"], _sweep(name, p)), []).append(p)
    out: list[str] = []
    for (task, sweep), members in sorted(groups.items()):
        metrics = _columns(task, {str(i): p for i, p in enumerate(members)})
        first = metrics[0]
        members.sort(key=lambda p: int(p["representation"]["layer"]))
        best = max(float(p["metrics"].get(first, math.nan)) for p in members)
        base = [(n, m) for n, m in baselines.items() if first in m]
        out.append(f"{sweep}: {task} ({members[0]['architecture']})\n")
        out.append(
            "| hidden state | layer | " + " | ".join(metrics) + " | beats Path and Majority |"
        )
        out.append("| ---: | ---: | " + " | ".join("---:" for _ in metrics) + " | --- |")
        for p in members:
            key = p["representation"]
            cells = []
            for k in metrics:
                cell = _fmt(p["metrics"].get(k))
                cells.append(f"**{cell}**" if k == first and p["metrics"].get(k) == best else cell)
            value = p["metrics"].get(first, math.nan)
            beats = "yes" if base and all(value > m[first] for _, m in base) else "no"
            out.append(
                f"| {key['layer']} | {key['layer_from_output']} | "
                + " | ".join(cells)
                + f" | {beats} |"
            )
        for name, m in base:
            cells = [_fmt(m.get(k)) for k in metrics]
            out.append(f"| *{name} baseline* | | " + " | ".join(cells) + " | |")
        out.append("")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--layers", action="store_true", help="print layer curves")
    args = parser.parse_args()
    results = [json.loads(p.read_text()) for p in args.results]
    print(layer_tables(results) if args.layers else tables(results))


if __name__ == "__main__":
    main()
