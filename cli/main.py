"""The ``brittle`` command: a thin click layer over typed library functions.

Each sub-command lives in its own module of this package and registers itself on
:data:`main`; this module only builds the group and turns library errors into clean
messages and exit codes (2 for bad input or options, 1 for a missing resource).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from brittle import __version__
from brittle.engine.errors import (
    BrittleError,
    BrittleInputError,
    ConfigError,
    ResourceMissingError,
)

#: Modules that define sub-commands, imported when the group is built.
COMMAND_MODULES: tuple[str, ...] = (
    "brittle.cli.stats",
    "brittle.cli.resources",
    "brittle.cli.listing",
    "brittle.cli.demo",
    "brittle.cli.attack",
    "brittle.cli.perturb",
    "brittle.cli.compare_methods",
    "brittle.cli.train_probe",
    "brittle.cli.evaluate",
)


class BrittleGroup(click.Group):
    """A click group that prints brittle's own errors without a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (BrittleInputError, ConfigError) as err:
            click.echo(f"error: {err}", err=True)
            ctx.exit(2)
        except ResourceMissingError as err:
            click.echo(f"error: {err}", err=True)
            ctx.exit(1)
        except BrittleError as err:
            click.echo(f"error: {err}", err=True)
            ctx.exit(1)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)


@click.group(cls=BrittleGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="brittle")
def main() -> None:
    """brittle: worst-case, syntax-preserving perturbations of treebank sentences.

    Reads Universal Dependencies CoNLL-U, perturbs sentences while keeping their
    syntax (WordNet synonyms, LM substitutions, pseudowords, reorderings), and measures
    how much the perturbations damage probes trained on a model's representations.

    Start with `brittle demo`, which runs the whole job on a built-in treebank.
    """


def _load_commands() -> None:
    for name in COMMAND_MODULES:
        importlib.import_module(name)


_load_commands()


def run() -> None:  # pragma: no cover - console entry point
    """Entry point that never shows a traceback for brittle's own errors."""
    sys.exit(main())
