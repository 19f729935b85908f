"""``brittle bench``: every stage of the engine beside its reference, in one run."""

from __future__ import annotations

from pathlib import Path

import click

from brittle.cli.common import DASH_HELP, err_console, message_console
from brittle.cli.group import main
from brittle.engine.bench.records import StageResult
from brittle.engine.bench.run import DEFAULT_STAGES, BenchConfig, run_bench, write_bench_json
from brittle.engine.core.atomic import atomic_write, check_output
from brittle.engine.core.overlap import check_no_overlap, named


@main.command("bench")
@click.option(
    "--treebank",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="CoNLL-U to take the sample from (default: the built-in treebank).",
)
@click.option("--quick", is_flag=True, help="Smaller workloads: every stage in under two minutes.")
@click.option(
    "--stage",
    "stages",
    multiple=True,
    metavar="NAME",
    help=f"Run only this stage (repeat for several). Stages: {', '.join(DEFAULT_STAGES)}.",
)
@click.option(
    "--sentences",
    type=click.IntRange(min=1),
    help="Size of the sample: the treebank's first N sentences (default 300; 100 with --quick).",
)
@click.option(
    "--end-to-end-sentences",
    type=click.IntRange(min=1),
    default=60,
    show_default=True,
    help="Sentences the end-to-end attack runs on (15 with --quick).",
)
@click.option("--device", help="Torch device of the model stages (default: cuda when available).")
@click.option(
    "--json",
    "json_path",
    metavar="FILE",
    type=click.Path(path_type=Path, allow_dash=True),
    help=f"Also write the results as JSON here (atomically). {DASH_HELP}",
)
@click.option(
    "--markdown",
    "markdown_path",
    metavar="FILE",
    type=click.Path(path_type=Path, allow_dash=True),
    help=f"Also write the Markdown table here (atomically). {DASH_HELP}",
)
def bench_command(
    treebank: Path | None,
    quick: bool,
    stages: tuple[str, ...],
    sentences: int | None,
    end_to_end_sentences: int,
    device: str | None,
    json_path: Path | None,
    markdown_path: Path | None,
) -> None:
    """Measure every stage of the engine beside its reference, on a fixed sample.

    Each stage times brittle's code as a run calls it (compiled, batched, cached, models
    loaded before the clock starts) and a reference measured in the same run: the
    `apted` package for tree edit distance, plain Python for Hamming and DND/IDC, one
    spaCy call per sentence for parsing, the bare model forward for representations and
    for a whole attack (end_to_end: the forward through the blocks the probes read;
    end_to_end_full: through every block). The ratio is ours over the reference: above
    1 is faster. `generator.*` stages have no reference; `startup` is seconds from
    process start to the first candidate scored in the demo's attack.

    A full run takes 4-10 minutes on 2 cores; --quick 1-2 (it leaves out
    generator.coco, which runs the causal LM over every proposal).

    Examples:

      brittle bench --quick

      brittle bench --treebank en_ewt-ud-test.conllu --json bench.json
    """
    check_no_overlap(
        named("--treebank", treebank),
        [*named("--json", json_path), *named("--markdown", markdown_path)],
    )
    for path in (json_path, markdown_path):
        if path is not None:
            check_output(path)
    config = BenchConfig(
        treebank=str(treebank) if treebank else None,
        quick=quick,
        stages=stages,
        sentences=sentences,
        end_to_end_sentences=end_to_end_sentences,
        device=device,
    )
    on = message_console(json_path, markdown_path)

    def told(name: str, results: tuple[StageResult, ...] | None) -> None:
        if results is None:
            err_console.print(f"[dim]bench: {name}...[/]")
            return
        for r in results:
            ratio = "" if r.ratio is None else f"  ({r.ratio:,.2f}x {r.reference})"
            err_console.print(f"[dim]bench: {r.name}: {r.throughput:,.4g} {r.unit}{ratio}[/]")

    report = run_bench(config, on_stage=told)
    on.print(report.markdown(), markup=False, highlight=False)
    if json_path is not None:
        write_bench_json(report, json_path)
    if markdown_path is not None:
        with atomic_write(markdown_path) as handle:
            handle.write(report.markdown() + "\n")
