"""``brittle resources``: what is available offline, what is missing and how to fix it."""

from __future__ import annotations

import json

import click
from rich.table import Table

from brittle.cli.common import console
from brittle.cli.group import main
from brittle.engine.core import resources

_STYLE = {"ok": "[green]ok[/]", "provision": "[yellow]provision[/]", "missing": "[red]missing[/]"}


@main.command("resources")
@click.option(
    "--provision",
    is_flag=True,
    help="Do the one-time work first: copy WordNet into the data home, convert the "
    "bundled causal LM (about half a minute) and cache the GloVe vocabulary.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the statuses as JSON.")
@click.pass_context
def resources_command(ctx: click.Context, provision: bool, as_json: bool) -> None:
    """Models and data brittle uses, where they are, and the fix for each missing one.

    Everything resolves offline first; the data home is $BRITTLE_HOME
    (default ~/.cache/brittle). Exits with status 2 when something is missing.
    """
    statuses = resources.provision() if provision else resources.check_all()
    if as_json:
        click.echo(json.dumps([s.to_dict() for s in statuses], indent=2))
    else:
        table = Table(title=f"Resources (data home: {resources.data_home()})")
        table.add_column("resource")
        table.add_column("status")
        table.add_column("where")
        table.add_column("fix")
        for s in statuses:
            table.add_row(s.name, _STYLE[s.state], f"{s.location}\n{s.detail}".strip(), s.fix)
        console.print(table)
    missing = [s.name for s in statuses if s.state == "missing"]
    if missing:
        if not as_json:
            console.print(f"[red]missing:[/] {', '.join(missing)}")
        ctx.exit(2)
