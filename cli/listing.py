"""``brittle list``: every registered component, by kind."""

from __future__ import annotations

import click
from rich.table import Table

from brittle.cli.common import console
from brittle.cli.main import main
from brittle.engine.plugins import load_components
from brittle.engine.registry import REGISTRIES


@main.command("list")
@click.argument("kind", required=False)
def list_command(kind: str | None) -> None:
    """Registered components (generators, constraints, parsers, probes, strategies...).

    Give KIND to list one kind only.
    """
    load_components()
    kinds = sorted(REGISTRIES) if kind is None else [kind]
    if kind is not None and kind not in REGISTRIES:
        raise click.BadParameter(
            f"unknown kind {kind!r} (known: {', '.join(sorted(REGISTRIES)) or 'none'})"
        )
    if not kinds:
        console.print("No components are registered.")
        return
    table = Table(title="Registered components")
    table.add_column("kind")
    table.add_column("name")
    table.add_column("what it does")
    for k in kinds:
        for entry in REGISTRIES[k].entries():
            table.add_row(k, entry.name, entry.help)
    console.print(table)
