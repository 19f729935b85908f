"""Markdown tables of ``brittle evaluate --json`` results (as in docs/probes.md).

One table per group of tasks that show the same columns (each probe task declares its
``columns``; distance and perceptron share theirs), titled by the tasks. Probe names are
expected as ``<model><layer>-<task>-<arch>`` (how the commands in docs/probes.md name
them); the Path and Majority baselines join the tables whose metrics they have.

Usage::

    python bench/probes_markdown.py RESULTS.json [MORE.json ...]
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", nargs="+", type=Path)
    args = parser.parse_args()
    print(tables([json.loads(p.read_text()) for p in args.results]))


if __name__ == "__main__":
    main()
