"""``brittle stats``: counts, length histogram, UPOS and tree checks of treebanks."""

from __future__ import annotations

import warnings
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from brittle.cli.common import DASH_HELP, console, err_console, message_console
from brittle.cli.group import main
from brittle.engine.core.atomic import check_output
from brittle.engine.core.overlap import check_no_overlap, named
from brittle.engine.evaluate.stats import TreebankStats, treebank_stats, write_stats_json


def render_stats(stats: TreebankStats, *, on: Console = console) -> None:
    """Print statistics as rich tables on ``on`` (problems go to stderr)."""
    overview = Table(title="Treebank", show_header=False)
    overview.add_column("what")
    overview.add_column("value", justify="right")
    overview.add_row("files", "\n".join(stats.files))
    overview.add_row("sentences", f"{stats.sentences:,}")
    overview.add_row("tokens (words)", f"{stats.tokens:,}")
    overview.add_row("multiword tokens", f"{stats.multiword_tokens:,}")
    overview.add_row("empty nodes", f"{stats.empty_nodes:,}")
    overview.add_row("mean / max length", f"{stats.mean_length:.1f} / {stats.max_length}")
    overview.add_row("non-projective trees", f"{stats.non_projective:,}")
    overview.add_row("validation problems", f"{len(stats.problems):,}")
    on.print(overview)

    hist = Table(title="Sentence length")
    hist.add_column("words")
    hist.add_column("sentences", justify="right")
    hist.add_column("")
    top = max(stats.length_histogram.values(), default=0) or 1
    for label, count in stats.length_histogram.items():
        hist.add_row(label, f"{count:,}", "█" * round(30 * count / top))
    on.print(hist)

    upos = Table(title="UPOS")
    upos.add_column("tag")
    upos.add_column("count", justify="right")
    upos.add_column("share", justify="right")
    for tag, count in stats.upos_counts.items():
        upos.add_row(tag, f"{count:,}", f"{100 * count / max(stats.tokens, 1):.1f}%")
    on.print(upos)
    for problem in stats.problems:
        err_console.print(f"[yellow]skipped:[/] {problem}")


@main.command("stats")
@click.argument("treebanks", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--skip-invalid",
    is_flag=True,
    help="Skip sentences with errors (listed at the end) instead of stopping at the first.",
)
@click.option(
    "--json",
    "json_path",
    metavar="FILE",
    type=click.Path(path_type=Path, allow_dash=True),
    help=f"Also write the statistics as JSON here (atomically). {DASH_HELP}",
)
def stats_command(treebanks: tuple[Path, ...], skip_invalid: bool, json_path: Path | None) -> None:
    """Sentences, tokens, length histogram, UPOS counts and tree checks of TREEBANKS.

    Example: brittle stats ../shared/data/ud/UD_English-EWT/en_ewt-ud-test.conllu
    """
    check_no_overlap(named("TREEBANKS", treebanks), named("--json", json_path))
    if json_path is not None:
        check_output(json_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stats = treebank_stats(list(treebanks), skip_invalid=skip_invalid)
    render_stats(stats, on=message_console(json_path))
    if stats.problems:
        err_console.print(f"[yellow]{len(stats.problems)} invalid sentence(s) skipped[/]")
    if json_path is not None:
        write_stats_json(stats, json_path)
