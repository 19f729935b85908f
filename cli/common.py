"""Shared click options and output helpers for the sub-commands."""

from __future__ import annotations

from rich.console import Console

#: Console for human-readable output (tables, progress) on stdout.
console = Console(highlight=False, soft_wrap=True)
#: Console for warnings and notes on stderr.
err_console = Console(stderr=True, highlight=False, soft_wrap=True)
