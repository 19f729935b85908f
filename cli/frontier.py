"""``brittle frontier``: damage against validity, one row per preset or generator."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from brittle.cli.attack import run_with_progress
from brittle.cli.common import console, err_console, probes_option, quiet_option, search_option
from brittle.cli.group import main
from brittle.engine.attack import AttackComponents, AttackConfig
from brittle.engine.attack.preflight import preflight
from brittle.engine.core.overlap import check_no_overlap, named
from brittle.engine.frontier import (
    HEADER,
    LEGEND,
    FrontierEntry,
    entries_of,
    row_cells,
    run_frontier,
    write_frontier,
)
from brittle.engine.reports.report import Summary
from brittle.scorers.representations import check_device


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


@main.command("frontier")
@click.argument("treebank", type=click.Path(path_type=Path))
@probes_option()
@click.option(
    "--presets",
    default="tree,grammatical,meaning",
    show_default=True,
    help="Validity presets to attack with, comma-separated (`brittle list presets`).",
)
@click.option(
    "--methods",
    default="",
    help="Plain generators to set beside them, comma-separated, each with its default "
    "constraints (e.g. random,neighbours).",
)
@search_option("Search strategy of every attack.")
@click.option("--beam-width", default=4, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--budget",
    "-t",
    default=2,
    show_default=True,
    type=click.IntRange(min=1),
    help="tau: the most words a perturbation may change.",
)
@click.option(
    "--candidates",
    "-b",
    default=10,
    show_default=True,
    type=click.IntRange(min=1),
    help="Options per position the generators propose.",
)
@click.option(
    "--query-budget",
    default=200,
    show_default=True,
    type=click.IntRange(min=1),
    help="Most candidates scored per sentence (the summary counts the searches it stops).",
)
@click.option(
    "--limit", type=click.IntRange(min=1), default=None, help="Only the first N sentences."
)
@click.option("--seed", default=0, show_default=True)
@click.option("--device", default=None, help="cpu, cuda, cuda:N or mps.")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Output directory.")
@click.option("--resume", is_flag=True, help="Continue the entries an earlier run left.")
@quiet_option
def frontier_command(
    treebank: Path,
    probes: tuple[Path, ...],
    presets: str,
    methods: str,
    search: str,
    beam_width: int,
    budget: int,
    candidates: int,
    query_budget: int,
    limit: int | None,
    seed: int,
    device: str | None,
    out: Path,
    resume: bool,
    quiet: bool,
) -> None:
    """Attack TREEBANK with each validity preset (and plain generator) and set the
    worst-case drop beside how valid the kept perturbations are.

    Each entry is a whole attack into OUT/NAME with every kept perturbation graded
    (tree-valid, grammatical, meaning kept; docs/validity.md) and its surprisal increase
    measured. Writes OUT/frontier.md, .json, .png (drop against the share tree-valid
    and against the surprisal increase) and .html, and prints the table.

    Example:

    \b
      brittle frontier en_gum-ud-test.conllu --probe probes/distance \\
          --probe probes/pos --methods random,neighbours --limit 60 --out frontier-gum
    """
    device = check_device(device)
    base = AttackConfig(
        treebank=str(treebank),
        probes=tuple(str(p) for p in probes),
        search=search,
        beam_width=beam_width,
        budget=budget,
        candidates=candidates,
        query_budget=query_budget,
        limit=limit,
        seed=seed,
    )
    entries = entries_of(base, _names(presets), _names(methods))
    check_no_overlap([*named("TREEBANK", treebank), *named("--probe", probes)], named("--out", out))
    # every entry's checks (treebank, probes, the generator's columns) before loading
    checks = {entry.name: preflight(entry.config, out / entry.name) for entry in entries}
    total = checks[entries[0].name].total
    settings = (
        f"`{treebank}`, {total} sentences; probes {', '.join(p.name for p in probes)}; "
        f"`--search {search}` (beam width {beam_width}), tau {budget}, {candidates} options, "
        f"query budget {query_budget}, seed {seed}"
    )

    def announce(entry: FrontierEntry) -> None:
        if not quiet:
            err_console.print(f"frontier: {entry.name} ({entry.config.method})", markup=False)

    def attack(
        config: AttackConfig,
        out: Path,
        *,
        resume: bool,
        overwrite: bool,
        components: AttackComponents,
        quality: bool,
        grade: bool,
        device: str | None,
    ) -> Summary:
        return run_with_progress(
            config,
            out,
            resume=resume,
            overwrite=overwrite,
            label=out.name,
            components=components,
            checked=checks[out.name],
            quiet=quiet,
            quality=quality,
            grade=grade,
            device=device,
        )

    rows = run_frontier(entries, out, resume=resume, device=device, on_entry=announce, run=attack)
    paths = write_frontier(rows, settings, out)
    table = Table(title="Damage against validity")
    for k, head in enumerate(HEADER):
        table.add_column(head, justify="left" if k < 2 else "right")
    for row in rows:
        table.add_row(*row_cells(row))
    console.print(table)
    console.print(LEGEND, markup=False)
    console.print("wrote " + ", ".join(str(p) for p in paths), markup=False)
