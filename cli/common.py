"""Shared click options and output helpers for the sub-commands."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import click
from rich.console import Console

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
