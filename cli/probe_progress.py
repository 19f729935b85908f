"""Display helpers of the probe commands: rich progress (extraction bars, one line per
epoch) and the formatting of metric values."""

from __future__ import annotations

import math
from types import TracebackType
from typing import TYPE_CHECKING

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from brittle.cli.common import err_console

if TYPE_CHECKING:
    from brittle.engine.probe_training import EpochLog


def format_metric(value: float | None, *, digits: int = 3) -> str:
    """A metric value for a table cell: ``digits`` decimals, ``-`` when absent or NaN."""
    if value is None or math.isnan(value):
        return "-"
    return f"{value:.{digits}f}"


class RichReporter:
    """A :class:`~brittle.engine.probe_jobs.Reporter` drawing on stderr.

    Use as a context manager; with ``quiet=True`` there are no bars, only notes and one
    line per epoch.
    """

    def __init__(self, *, quiet: bool = False) -> None:
        self.quiet = quiet
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=err_console,
            transient=False,
            disable=quiet,
        )
        self.task: TaskID | None = None

    def __enter__(self) -> RichReporter:
        self.progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.progress.stop()

    def start(self, what: str, total: int | None) -> None:
        """A new bar (a spinner when ``total`` is None)."""
        self.finish()
        self.task = self.progress.add_task(what, total=total)

    def advance(self, n: int) -> None:
        """Move the current bar."""
        if self.task is not None:
            self.progress.advance(self.task, n)

    def finish(self) -> None:
        """Complete the current bar."""
        if self.task is not None:
            task = self.progress.tasks[self.task] if self.task < len(self.progress.tasks) else None
            if task is not None and task.total is not None:
                self.progress.update(self.task, completed=task.total)
            else:
                self.progress.update(self.task, total=1, completed=1)
            self.task = None

    def epoch(self, log: EpochLog) -> None:
        """One line per epoch (also when quiet)."""
        self.progress.console.print(
            f"  epoch {log.epoch:>3}  train loss {log.train_loss:.4f}  "
            f"dev loss {log.dev_loss:.4f}  lr {log.lr:.2g}  {log.seconds:.1f} s"
        )

    def note(self, message: str) -> None:
        """A dimmed note."""
        self.progress.console.print(f"[dim]{message}[/]")
