"""``brittle evaluate``: metrics of trained probes on a treebank, beside the baselines."""

from __future__ import annotations

import math
from pathlib import Path

import click
from rich.table import Table

from brittle.cli.common import console, err_console
from brittle.cli.main import main

#: Metric columns of the table, in order; a column shows only when some row has it.
COLUMNS: tuple[str, ...] = (
    "uuas",
    "sdr",
    "dspr",
    "dspr_prim",
    "root_acc",
    "depth_spearman",
    "depth_acc",
    "pos_acc",
    "tree_depth_acc",
    "tree_depth_mae",
)


def _fmt(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.3f}"


@main.command("evaluate")
@click.argument("treebank", type=click.Path(path_type=Path))
@click.option(
    "--probe",
    "probes",
    multiple=True,
    type=click.Path(path_type=Path),
    help="A probe directory from train-probe; repeat for several.",
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(path_type=Path),
    help="Also write the results as JSON here.",
)
@click.option(
    "--majority-from",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Training treebank(s) for the Majority baseline (default: the probes' training files).",
)
@click.option("--no-baselines", is_flag=True, help="Skip the Path and Majority baselines.")
@click.option("--device", default=None, help="cuda or cpu (default: cuda when available).")
@click.option("--threads", default=None, type=int, help="CPU threads for torch.")
@click.option(
    "--cache-dir",
    default=None,
    type=click.Path(path_type=Path),
    help="Representation cache (default: <data home>/representations).",
)
@click.option("--no-cache", is_flag=True, help="Do not cache vectors on disk.")
@click.option("--quiet", is_flag=True, help="No progress bars.")
def evaluate_command(
    treebank: Path,
    probes: tuple[Path, ...],
    json_path: Path | None,
    majority_from: tuple[Path, ...],
    no_baselines: bool,
    device: str | None,
    threads: int | None,
    cache_dir: Path | None,
    no_cache: bool,
    quiet: bool,
) -> None:
    """Every applicable metric of each --probe on TREEBANK, plus Path and Majority trees.

    Example: brittle evaluate en_ewt-ud-test.conllu --probe probes/dist-1
    --probe probes/pos-1 --json results.json
    """
    from brittle.cli.probe_progress import RichReporter
    from brittle.engine.evaluation import evaluate_probes, write_report_json

    if not probes and no_baselines:
        raise click.UsageError("nothing to do: give --probe or drop --no-baselines")
    if threads is not None:
        import torch

        torch.set_num_threads(max(1, threads))
    with RichReporter(quiet=quiet) as reporter:
        report = evaluate_probes(
            treebank,
            list(probes),
            majority_from=list(majority_from),
            baselines=not no_baselines,
            cache_dir=cache_dir,
            use_cache=not no_cache,
            device=device,
            reporter=reporter,
        )
    rows: list[tuple[str, str, dict[str, float]]] = [
        (p.name, f"{p.task} ({p.arch}) on {p.representation}", p.metrics) for p in report.probes
    ]
    rows += [(name, "baseline tree", m) for name, m in report.baselines.items()]
    shown = [c for c in COLUMNS if any(c in m for _, _, m in rows)]
    table = Table(title=f"{Path(report.treebank).name}: {report.sentences:,} sentences")
    table.add_column("probe", overflow="fold")
    for c in shown:
        table.add_column(c, justify="right", no_wrap=True)
    for name, _, metrics in rows:
        table.add_row(name, *(_fmt(metrics.get(c)) for c in shown))
    table.caption = "; ".join(f"{name}: {what}" for name, what, _ in rows)
    console.print(table)
    for note in report.notes:
        err_console.print(f"[yellow]note:[/] {note}")
    if json_path is not None:
        write_report_json(report, json_path)
        console.print(f"wrote {json_path}")
