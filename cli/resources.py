"""``brittle resources``: what is available offline, what is missing and how to fix it."""

from __future__ import annotations

import click
from rich.table import Table

from brittle.cli.common import console
from brittle.cli.main import main


@main.command("resources")
@click.option(
    "--provision",
    is_flag=True,
    help="Do the one-time work first: copy WordNet into the data home and convert the "
    "bundled causal LM (about a minute).",
)
def resources_command(provision: bool) -> None:
    """Models and data brittle uses, where they are, and the fix for each missing one.

    Everything resolves offline first; the data home is $BRITTLE_HOME
    (default ~/.cache/brittle).
    """
    from brittle.engine import resources

    statuses = resources.provision() if provision else resources.check_all()
    table = Table(title=f"Resources (data home: {resources.data_home()})")
    table.add_column("resource")
    table.add_column("status")
    table.add_column("where / fix")
    missing = 0
    for status in statuses:
        if status.available:
            table.add_row(status.name, "[green]ok[/]", status.detail)
        else:
            missing += 1
            table.add_row(status.name, "[red]missing[/]", f"{status.detail}\nfix: {status.fix}")
    console.print(table)
    if missing:
        console.print(f"[yellow]{missing} resource(s) missing[/]")
