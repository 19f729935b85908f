"""The ``brittle`` click group, which turns library errors into clean messages.

Every sub-command module registers itself on :data:`main` (this module imports none of
them; :mod:`brittle.cli.main` imports them all). Exit codes: 2 for bad input or
options, 1 for a missing resource, 130 for Ctrl-C.
"""

from __future__ import annotations

import click

from brittle import __version__
from brittle.engine.core.errors import (
    BrittleError,
    BrittleInputError,
    ConfigError,
    ResourceMissingError,
)


class BrittleGroup(click.Group):
    """A click group that prints brittle's own errors without a traceback."""

    def invoke(self, ctx: click.Context) -> object:
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
