"""``brittle list``: every registered component, by kind."""

from __future__ import annotations

import click
from rich.table import Table

# Each of these modules defines the registry of one kind of component.
import brittle.scorers.parsers.base
import brittle.scorers.probe_tasks
import brittle.scorers.representations
import brittle.search.constraints
import brittle.search.generators.base
import brittle.search.strategies.base  # noqa: F401
from brittle.cli.common import console, err_console
from brittle.cli.group import main
from brittle.engine.core.registry import PLUGIN_ERRORS, REGISTRIES, load_components
from brittle.search.generators.options import option_help


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
            text = entry.help
            if k == "generators" and isinstance(entry.obj, type):
                names = option_help(entry.obj)
                if names:
                    text += f"\noptions (-o NAME=VALUE): {', '.join(names)}"
            table.add_row(k, entry.name, text)
    console.print(table)
    for plugin, error in PLUGIN_ERRORS:
        err_console.print(f"warning: the plug-in {plugin} failed to load: {error}")
