"""Shared click options and output helpers for the sub-commands."""

from __future__ import annotations

from collections.abc import Callable, Collection
from pathlib import Path
from typing import TypeVar

import click
from click.shell_completion import CompletionItem
from rich.console import Console

from brittle.engine.core.registry import Registry

F = TypeVar("F", bound=Callable[..., object])

#: Console for human-readable output (tables, progress) on stdout.
console = Console(highlight=False, soft_wrap=True)
#: Console for warnings and notes on stderr.
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def representation_run_options(command: F) -> F:
    """``--threads``, ``--cache-dir``, ``--no-cache`` and ``--quiet``, for the commands
    that compute representations (``train-probe``, ``evaluate``)."""
    for option in reversed(
        [
            click.option("--threads", default=None, type=int, help="CPU threads for torch."),
            click.option(
                "--cache-dir",
                default=None,
                type=click.Path(path_type=Path),
                help="Representation cache (default: <data home>/representations).",
            ),
            click.option("--no-cache", is_flag=True, help="Do not cache vectors on disk."),
            click.option("--quiet", is_flag=True, help="No progress bars."),
        ]
    ):
        command = option(command)
    return command


class RegistryChoice(click.ParamType):
    """A component name, checked against its registry when the command runs.

    The help shows every registered name (third-party plug-ins included), read from the
    registry when the help is rendered, so no command lists component names by hand.
    ``exclude`` hides names that make no sense for the command.
    """

    def __init__(self, registry: Registry[object], *, exclude: Collection[str] = ()) -> None:
        self.registry = registry
        self.exclude = frozenset(exclude)
        self.name = registry.kind

    def choices(self) -> list[str]:
        """The names offered, sorted."""
        return [n for n in self.registry.names() if n not in self.exclude]

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str | None:
        return "[" + "|".join(self.choices()) + "]"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> str:
        name = str(value)
        if name not in self.choices():
            self.fail(
                f"unknown {self.registry.item} {name!r} (known: {', '.join(self.choices())})",
                param,
                ctx,
            )
        return name

    def shell_complete(
        self, ctx: click.Context, param: click.Parameter, incomplete: str
    ) -> list[CompletionItem]:
        return [CompletionItem(n) for n in self.choices() if n.startswith(incomplete)]
