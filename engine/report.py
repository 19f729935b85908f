"""Robustness reports from ``results.jsonl``: summary.json, summary.md and plots.

Reports are data first: :func:`summarize` turns the result rows into one JSON-ready
mapping and the writers only read it. Every file is written atomically, so
``brittle report OUT`` can re-render everything from ``results.jsonl`` at any time.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from brittle.engine.conllu import atomic_write
from brittle.engine.errors import BrittleInputError

RESULTS = "results.jsonl"
SUMMARY_JSON = "summary.json"
SUMMARY_MD = "summary.md"
CONFIG_JSON = "config.json"
PLOTS = "plots"


def read_results(path: str | os.PathLike[str], *, repair: bool = False) -> list[dict[str, Any]]:
    """Result rows of a ``results.jsonl``.

    A trailing line without its newline (an interrupted write) is dropped; with
    ``repair`` the file is also truncated to its last complete line. Any other malformed
    line is a :class:`BrittleInputError` naming the line.
    """
    p = Path(path)
    if not p.exists():
        return []
    data = p.read_bytes()
    complete = data[: data.rfind(b"\n") + 1]
    if repair and len(complete) != len(data):
        with p.open("r+b") as handle:
            handle.truncate(len(complete))
    rows = []
    for lineno, line in enumerate(complete.decode("utf-8").splitlines(), start=1):
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise BrittleInputError(p, lineno, f"not a JSON result row ({exc.msg})") from None
    return rows


def _mean(values: Sequence[float | None]) -> float | None:
    vals = [v for v in values if v is not None and not math.isnan(v)]
    return float(np.mean(vals)) if vals else None


def _std(values: Sequence[float | None]) -> float | None:
    vals = [v for v in values if v is not None and not math.isnan(v)]
    return float(np.std(vals)) if vals else None


def _round(x: float | None, digits: int = 6) -> float | None:
    return None if x is None else round(x, digits)


def summarize(
    rows: Sequence[Mapping[str, Any]],
    *,
    config: Mapping[str, Any],
    versions: Mapping[str, str],
) -> dict[str, Any]:
    """The summary of an attack (Algorithms 2 and 3 of La Malfa et al.).

    ``tasks`` maps each task to its mean clean and perturbed metric and the mean and
    standard deviation of the worst-case drop per sentence; ``epsilon_l2`` is the mean
    over sentences of the farthest L2 distance between the representation of the
    original and of a perturbation, ``epsilon_cosine`` the mean lowest cosine
    similarity; ``success_rate`` is the share of sentences with a feasible perturbation.
    """
    tasks: dict[str, dict[str, float | None]] = {}
    names: list[str] = []
    for row in rows:
        for t in row.get("tasks", {}):
            if t not in names:
                names.append(t)
    for t in names:
        clean = [r["tasks"][t]["clean"] for r in rows if t in r.get("tasks", {})]
        pert = [r["tasks"][t]["perturbed"] for r in rows if t in r.get("tasks", {})]
        drop = [r["tasks"][t]["drop"] for r in rows if t in r.get("tasks", {})]
        tasks[t] = {
            "clean": _round(_mean(clean)),
            "perturbed": _round(_mean(pert)),
            "mean_drop": _round(_mean(drop)),
            "std_drop": _round(_std(drop)),
        }
    n = len(rows)
    return {
        "sentences": n,
        "tasks": tasks,
        "epsilon_l2": _round(_mean([r.get("epsilon_l2") for r in rows if r.get("success")])),
        "epsilon_cosine": _round(
            _mean([r.get("epsilon_cosine") for r in rows if r.get("success")])
        ),
        "success_rate": _round(sum(1 for r in rows if r.get("success")) / n if n else 0.0),
        "queries_per_sentence": _round(_mean([r.get("queries", 0) for r in rows]) or 0.0),
        "mean_syntax_distance": _round(
            _mean([r["syntax_distance"] for r in rows if r.get("syntax_distance") is not None])
        ),
        "mean_hamming": _round(_mean([r.get("hamming", 0) for r in rows if r.get("success")])),
        "config": dict(config),
        "versions": dict(versions),
    }


def _fmt(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def render_markdown(summary: Mapping[str, Any]) -> str:
    """``summary.md``: the tables a reader wants first, then configuration and versions."""
    cfg = summary["config"]
    lines = [
        "# brittle attack summary",
        "",
        f"{summary['sentences']} sentences of `{cfg.get('treebank', '?')}`, method "
        f"`{cfg.get('method', '?')}`, search `{cfg.get('search', '?')}`, budget "
        f"tau = {cfg.get('budget', '?')}, seed {cfg.get('seed', '?')}.",
        "",
        "## Worst-case drop per task (Algorithm 3)",
        "",
        "| task | clean | perturbed | mean drop | std drop |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for task, v in summary["tasks"].items():
        lines.append(
            f"| {task} | {_fmt(v['clean'])} | {_fmt(v['perturbed'])} | "
            f"{_fmt(v['mean_drop'])} | {_fmt(v['std_drop'])} |"
        )
    lines += [
        "",
        "## Representation distance (Algorithm 2)",
        "",
        "| epsilon (farthest L2) | epsilon (lowest cosine) |",
        "| ---: | ---: |",
        f"| {_fmt(summary['epsilon_l2'])} | {_fmt(summary['epsilon_cosine'])} |",
        "",
        "## Search",
        "",
        "| success rate | queries per sentence | mean syntax distance | mean words changed |",
        "| ---: | ---: | ---: | ---: |",
        f"| {_fmt(summary['success_rate'])} | {_fmt(summary['queries_per_sentence'], 1)} | "
        f"{_fmt(summary['mean_syntax_distance'])} | {_fmt(summary['mean_hamming'], 2)} |",
        "",
        "## Configuration",
        "",
        "```json",
        json.dumps(cfg, indent=2, sort_keys=True),
        "```",
        "",
        "## Versions",
        "",
        "| package | version |",
        "| --- | --- |",
    ]
    lines += [f"| {k} | {v} |" for k, v in sorted(summary["versions"].items())]
    return "\n".join(lines) + "\n"


def plot_clean_vs_perturbed(rows: Sequence[Mapping[str, Any]], path: Path) -> None:
    """Per task, each sentence's clean metric against its perturbed metric (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names: list[str] = []
    for r in rows:
        for t in r.get("tasks", {}):
            if t not in names:
                names.append(t)
    cols = max(1, min(3, len(names)))
    nrows = max(1, math.ceil(len(names) / cols))
    fig, axes = plt.subplots(nrows, cols, figsize=(4 * cols, 4 * nrows), squeeze=False)
    for ax, t in zip(axes.flat, names, strict=False):
        clean = [r["tasks"][t]["clean"] for r in rows if t in r.get("tasks", {})]
        pert = [r["tasks"][t]["perturbed"] for r in rows if t in r.get("tasks", {})]
        ax.scatter(clean, pert, s=10, alpha=0.6)
        lo = min([*clean, *pert, 0.0])
        hi = max([*clean, *pert, 1.0])
        ax.plot([lo, hi], [lo, hi], color="grey", linewidth=1, linestyle="--")
        ax.set_title(t)
        ax.set_xlabel("clean")
        ax.set_ylabel("perturbed")
    for ax in list(axes.flat)[len(names) :]:
        ax.axis("off")
    fig.tight_layout()
    _save(fig, path)


def plot_drop_vs_budget(summaries: Mapping[int, Mapping[str, Any]], path: Path) -> None:
    """Mean worst-case drop per task against the budget tau, one line per task (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    budgets = sorted(summaries)
    tasks: list[str] = []
    for b in budgets:
        for t in summaries[b]["tasks"]:
            if t not in tasks:
                tasks.append(t)
    fig, ax = plt.subplots(figsize=(5, 4))
    for t in tasks:
        ys = [summaries[b]["tasks"].get(t, {}).get("mean_drop") for b in budgets]
        ax.plot(budgets, [np.nan if y is None else y for y in ys], marker="o", label=t)
    ax.set_xlabel("budget tau (words)")
    ax.set_ylabel("mean worst-case drop")
    ax.set_xticks(budgets)
    ax.legend(fontsize="small")
    fig.tight_layout()
    _save(fig, path)


def _save(fig: Any, path: Path) -> None:
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    # Fixed metadata keeps PNGs byte-identical across runs.
    with atomic_write(path, mode="wb") as handle:
        fig.savefig(handle, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)


def write_json(path: Path, data: Any) -> None:
    """JSON with sorted keys and a final newline, written atomically."""
    with atomic_write(path) as handle:
        json.dump(data, handle, indent=2, sort_keys=True)
        handle.write("\n")


def render_reports(
    out: Path,
    rows: Sequence[Mapping[str, Any]],
    *,
    config: Mapping[str, Any],
    versions: Mapping[str, str],
) -> dict[str, Any]:
    """Write summary.json, summary.md and plots/ for one attack directory."""
    summary = summarize(rows, config=config, versions=versions)
    write_json(out / SUMMARY_JSON, summary)
    with atomic_write(out / SUMMARY_MD) as handle:
        handle.write(render_markdown(summary))
    if rows:
        plot_clean_vs_perturbed(rows, out / PLOTS / "clean_vs_perturbed.png")
    return summary


def iter_budget_runs(out: Path) -> Iterable[tuple[int, Path]]:
    """Sub-directories ``tau=K`` of a multi-budget attack, by budget."""
    for child in sorted(out.glob("tau=*")):
        try:
            yield int(child.name.split("=", 1)[1]), child
        except ValueError:
            continue
