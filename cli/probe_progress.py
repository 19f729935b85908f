"""Display helpers of the probe commands: progress of long stages (extraction, training)
and the formatting of metric values.

:class:`RichReporter` shows a job's stages three ways, chosen once per run:

- on a terminal, a live bar per stage (removed when the stage ends, kept with
  ``--verbose``);
- elsewhere (a log file, a pipe, a CI job), no bars, whose redraws logs cut or drop, but
  plain lines: one every ``interval`` seconds (30 by default) or every ``every`` units
  while a stage runs, and a closing line for each stage that printed one (for every
  stage with ``--verbose``);
- with ``--quiet``, nothing: the command's results and errors only.

Training epochs get one line each only with ``--verbose``; notes (e.g. one line per
trained probe) show unless ``--quiet``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING

from rich.console import Console
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
from rich.text import Text

from brittle.cli.common import err_console
from brittle.engine.core.errors import ConfigError

if TYPE_CHECKING:
    from brittle.engine.probes.probe_training import EpochLog

__all__ = ["RichReporter", "format_metric", "format_seconds"]

#: Seconds between two plain progress lines of a stage.
PLAIN_INTERVAL = 30.0


def format_metric(value: float | None, *, digits: int = 3) -> str:
    """A metric value for a table cell: ``digits`` decimals, ``-`` when absent or NaN."""
    if value is None or math.isnan(value):
        return "-"
    return f"{value:.{digits}f}"


def format_seconds(seconds: float) -> str:
    """A duration for a progress line: ``4.2 s``, ``3m05s``, ``1h02m``."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    whole = int(seconds)
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


@dataclass
class _Stage:
    """The stage under way: what it is, how far it got and when it last printed."""

    what: str
    total: int | None
    started: float
    last_time: float
    done: int = 0
    last_done: int = 0
    lines: int = 0
    detail: str = ""
    task: TaskID | None = None


class RichReporter:
    """A :class:`~brittle.engine.probes.probe_jobs.Reporter` for the CLI, writing to stderr.

    Use as a context manager. See the module docstring for what each mode shows.

    Args:
        quiet: show nothing: no bars, lines, epochs or notes.
        verbose: also a closing line per stage and one line per training epoch.
        console: where to write (default: the CLI's stderr console).
        live: draw bars (default: when ``console`` is a terminal, not a dumb one).
        interval: seconds between plain lines of a stage (default
            :data:`PLAIN_INTERVAL`, 30).
        every: also a plain line every ``every`` units of a stage (``None``: by time only).
        clock: seconds, monotonic (tests pass a fake one).

    Raises:
        ConfigError: ``quiet`` and ``verbose`` together.
    """

    def __init__(
        self,
        *,
        quiet: bool = False,
        verbose: bool = False,
        console: Console | None = None,
        live: bool | None = None,
        interval: float | None = None,
        every: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if quiet and verbose:
            raise ConfigError("--quiet and --verbose exclude each other; give one")
        if every is not None and every < 1:
            raise ConfigError(f"progress lines every {every} units: give at least 1")
        self.quiet = quiet
        self.verbose = verbose
        self.console = console if console is not None else err_console
        if live is None:  # asked now: the console's stream may have been swapped
            live = self.console.is_terminal and not self.console.is_dumb_terminal
        self.live = live and not quiet
        self.interval = PLAIN_INTERVAL if interval is None else interval
        self.every = every
        self.clock = clock
        self.progress: Progress | None = None  # started with the first bar
        self.stage: _Stage | None = None

    def __enter__(self) -> RichReporter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.finish()
        self.stage = None
        if self.progress is not None:
            self.progress.stop()
            self.progress = None

    # ------------------------------------------------------------------ stages
    def _bars(self) -> Progress:
        if self.progress is None:
            self.progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}", markup=False),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=self.console,
                transient=False,
            )
            self.progress.start()
        return self.progress

    def start(self, what: str, total: int | None) -> None:
        """A new stage: a bar (a spinner when ``total`` is None) or, in logs, nothing
        until it has run for ``interval`` seconds."""
        self.finish()
        now = self.clock()
        stage = _Stage(what, total, started=now, last_time=now)
        if self.live:
            stage.task = self._bars().add_task(what, total=total)
        self.stage = stage

    def advance(self, n: int) -> None:
        """Move the current stage; in logs, a line when one is due."""
        stage = self.stage
        if stage is None:
            return
        stage.done += n
        if self.quiet:
            return
        if stage.task is not None and self.progress is not None:
            self.progress.advance(stage.task, n)
            return
        now = self.clock()
        due = now - stage.last_time >= self.interval
        if self.every is not None and stage.done - stage.last_done >= self.every:
            due = True
        if due:
            self._line(self._heartbeat(stage, now))
            stage.last_time, stage.last_done = now, stage.done
            stage.lines += 1

    def finish(self) -> None:
        """End the current stage: complete (and, unless verbose, remove) its bar; in
        logs, a closing line when the stage printed any (always when verbose)."""
        stage, self.stage = self.stage, None
        if stage is None or self.quiet:
            return
        if stage.task is not None and self.progress is not None:
            total = stage.total if stage.total is not None else max(stage.done, 1)
            self.progress.update(stage.task, total=total, completed=total)
            if not self.verbose:
                self.progress.remove_task(stage.task)
                self.progress.refresh()
            return
        if self.verbose or stage.lines:
            self._line(self._closing(stage, self.clock()))

    def epoch(self, log: EpochLog) -> None:
        """Remember the epoch for the stage's line; one line per epoch when verbose."""
        detail = f"epoch {log.epoch}, dev loss {log.dev_loss:.4f}"
        stage = self.stage
        if stage is not None:
            stage.detail = detail
            if stage.task is not None and self.progress is not None:
                self.progress.update(stage.task, description=f"{stage.what} · {detail}")
        if self.verbose:
            self._line(
                f"  epoch {log.epoch:>3}  train loss {log.train_loss:.4f}  "
                f"dev loss {log.dev_loss:.4f}  lr {log.lr:.2g}  {log.seconds:.1f} s"
            )

    def note(self, message: str) -> None:
        """One line, unless quiet."""
        if not self.quiet:
            self._line(message)

    # ------------------------------------------------------------------ lines
    def _line(self, text: str) -> None:
        """A plain line: no markup or highlighting, whatever the text holds."""
        self.console.print(Text(text), soft_wrap=True)

    @staticmethod
    def _counts(stage: _Stage) -> str:
        if stage.total is None:
            return f"{stage.done:,}"
        share = stage.done / stage.total if stage.total else 1.0
        return f"{stage.done:,}/{stage.total:,} ({share:.0%})"

    def _heartbeat(self, stage: _Stage, now: float) -> str:
        detail = f" · {stage.detail}" if stage.detail else ""
        took = format_seconds(now - stage.started)
        return f"{stage.what}: {self._counts(stage)}{detail} · {took}"

    def _closing(self, stage: _Stage, now: float) -> str:
        detail = f" · {stage.detail}" if stage.detail else ""
        took = format_seconds(now - stage.started)
        return f"{stage.what}: done in {took}, {self._counts(stage)}{detail}"
