"""``brittle evaluate``: metrics of trained probes on a treebank, beside the baselines."""

from __future__ import annotations

import contextlib
import math
from pathlib import Path

import click
from rich.table import Table

from brittle.cli.common import (
    console,
    err_console,
    representation_run_options,
    verbose_option,
    workers_options,
)
from brittle.cli.group import main
from brittle.cli.probe_progress import RichReporter, format_metric
from brittle.engine.evaluate.evaluation import (
    EvaluationReport,
    check_evaluation,
    evaluate_probes,
    write_report_json,
)
from brittle.engine.evaluate.paired_evaluation import (
    PairedReport,
    evaluate_paired,
    write_paired_json,
)
from brittle.engine.runs.run_options import make_executor
from brittle.engine.runs.shards import ShardExecutor


def render_report(report: EvaluationReport) -> None:
    """One table per group of probes sharing columns (each task says which metrics it
    shows); baselines join the tables they fit.

    Narrow terminals stay readable: no table has more than a handful of columns.
    """
    groups: dict[tuple[str, ...], list[tuple[str, dict[str, float]]]] = {}
    for p in report.probes:
        label = f"{p.name}  [dim]{p.task} ({p.arch}), {p.representation}[/]"
        groups.setdefault(p.columns or tuple(p.metrics), []).append((label, p.metrics))
    if report.baselines and not groups:
        first = next(iter(report.baselines.values()))
        groups[tuple(first)] = []
    console.print(f"[bold]{Path(report.treebank).name}[/]: {report.sentences:,} sentences")
    for cols, rows in groups.items():
        rows = list(rows)
        for name, metrics in report.baselines.items():
            if any(c in metrics for c in cols):
                rows.append((f"{name}  [dim]baseline tree[/]", metrics))
        table = Table()
        table.add_column("probe", overflow="fold")
        for c in cols:
            table.add_column(c, justify="right", no_wrap=True)
        for label, metrics in rows:
            table.add_row(label, *(format_metric(metrics.get(c)) for c in cols))
        console.print(table)


@main.command("evaluate")
@click.argument("treebank", type=click.Path(path_type=Path))
@click.option(
    "--probe",
    "probes",
    multiple=True,
    type=click.Path(path_type=Path),
    help="A probe directory from train-probe, or a directory of them (each probe one "
    "level down, as `train-probe --layer all` writes them: all are evaluated, layer2 "
    "before layer10); repeat for several.",
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
@click.option(
    "--paired",
    "paired",
    type=click.Path(path_type=Path),
    help="The plain treebank TREEBANK was perturbed from (same sentences, in order): show "
    "each metric on both, the drop and its paired bootstrap 95% interval.",
)
@click.option(
    "--resamples",
    default=1000,
    show_default=True,
    type=click.IntRange(min=0),
    help="Bootstrap resamples of --paired (0: no interval).",
)
@click.option("--seed", default=0, show_default=True, help="Seeds the bootstrap of --paired.")
@click.option(
    "--device", default=None, help="cpu, cuda, cuda:N or mps (default: cuda when available)."
)
@representation_run_options
@workers_options
@verbose_option
def evaluate_command(
    treebank: Path,
    probes: tuple[Path, ...],
    json_path: Path | None,
    majority_from: tuple[Path, ...],
    no_baselines: bool,
    paired: Path | None,
    resamples: int,
    seed: int,
    device: str | None,
    threads: int | None,
    cache_dir: Path | None,
    no_cache: bool,
    quiet: bool,
    workers: int | None,
    ray_address: str | None,
    verbose: bool,
) -> None:
    """Every applicable metric of each --probe on TREEBANK, plus Path and Majority trees.

    Example: brittle evaluate en_ewt-ud-test.conllu --probe probes/dist-1
    --probe probes/pos-1 --json results.json

    With --paired PLAIN, TREEBANK is a perturbed copy of PLAIN (as `brittle perturb`
    writes it) and every metric is shown on both, with the drop (plain - perturbed)
    and its 95% interval from a paired bootstrap over sentences.

    The device, the treebanks and --json are checked before anything loads. Progress
    goes to stderr: bars on a terminal, a plain line every 30 s in logs.

    With --workers N (or --ray), the word vectors are computed in N processes, 256
    sentences a shard, each loading the model once; the probes and the metrics run
    here over every sentence, so the tables and --json are those of one process.
    """
    if not probes and no_baselines:
        raise click.UsageError("nothing to do: give --probe or drop --no-baselines")
    reporter = RichReporter(quiet=quiet, verbose=verbose)
    check_evaluation(
        treebank,
        majority_from=majority_from,
        device=device,
        json_path=json_path,
        probes=probes,
        paired=paired,
    )
    if threads is not None:
        import torch

        torch.set_num_threads(max(1, threads))
    with contextlib.ExitStack() as stack:
        # Workers start at the first shard, once the treebank and probes were read.
        executor = make_executor(workers, ray_address, threads=threads)
        if executor is not None:
            stack.enter_context(executor)
        if paired is not None:
            _evaluate_paired(
                treebank,
                paired,
                probes,
                majority_from,
                no_baselines,
                resamples,
                seed,
                device,
                cache_dir,
                no_cache,
                reporter,
                json_path,
                executor,
            )
            return
        with reporter:
            report = evaluate_probes(
                treebank,
                list(probes),
                majority_from=list(majority_from),
                baselines=not no_baselines,
                cache_dir=cache_dir,
                use_cache=not no_cache,
                device=device,
                reporter=reporter,
                executor=executor,
            )
    render_report(report)
    for note in report.notes:
        err_console.print(f"[yellow]note:[/] {note}")
    if json_path is not None:
        write_report_json(report, json_path)
        console.print(f"wrote {json_path}")


def render_paired(report: PairedReport) -> None:
    """One table: a row per probe (or baseline) and metric, plain beside perturbed."""
    console.print(
        f"[bold]{Path(report.perturbed).name}[/] against [bold]{Path(report.plain).name}[/]: "
        f"{report.sentences:,} sentence pairs, {report.resamples} bootstrap resamples"
    )
    table = Table()
    for col, justify in (
        ("probe", "left"),
        ("metric", "left"),
        ("plain", "right"),
        ("perturbed", "right"),
        ("drop", "right"),
        ("95% CI", "right"),
    ):
        table.add_column(col, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for row in report.rows:
        for j, (k, m) in enumerate(row.metrics.items()):
            ci = "–" if math.isnan(m.low) else f"[{m.low:+.3f}, {m.high:+.3f}]"
            label = f"{row.name}\n[dim]{row.kind}[/]" if j == 0 else ""
            table.add_row(
                label,
                k,
                format_metric(m.plain),
                format_metric(m.perturbed),
                f"{m.drop:+.3f}",
                ci,
                end_section=j == len(row.metrics) - 1,
            )
    console.print(table)


def _evaluate_paired(
    treebank: Path,
    plain: Path,
    probes: tuple[Path, ...],
    majority_from: tuple[Path, ...],
    no_baselines: bool,
    resamples: int,
    seed: int,
    device: str | None,
    cache_dir: Path | None,
    no_cache: bool,
    reporter: RichReporter,
    json_path: Path | None,
    executor: ShardExecutor | None,
) -> None:
    with reporter:
        report = evaluate_paired(
            treebank,
            plain,
            list(probes),
            majority_from=list(majority_from),
            baselines=not no_baselines,
            resamples=resamples,
            seed=seed,
            cache_dir=cache_dir,
            use_cache=not no_cache,
            device=device,
            reporter=reporter,
            executor=executor,
        )
    render_paired(report)
    if json_path is not None:
        write_paired_json(report, json_path)
        console.print(f"wrote {json_path}")
