"""``brittle demo``: the main job end to end on the built-in treebank."""

from __future__ import annotations

import click

from brittle.cli.common import console
from brittle.cli.main import main
from brittle.cli.stats import render_stats
from brittle.data import default_treebank_path
from brittle.engine.stats import treebank_stats


@main.command("demo")
def demo_command() -> None:
    """Run brittle on its built-in UD English treebank.

    Needs no arguments and no network: everything comes from the offline defaults.
    """
    path = default_treebank_path()
    console.print(f"[bold]brittle demo[/] on the built-in treebank {path.name}")
    render_stats(treebank_stats([path]))
    click.echo("done")
