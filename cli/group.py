"""The ``brittle`` click group, which applies the one exit-code policy.

Every sub-command module registers itself on :data:`main` (this module imports none of
them; :mod:`brittle.cli.main` imports them all). :class:`BrittleGroup` turns what a
command raises into an exit status and at most one line on stderr:

- 0: success.
- 2: a user or environment problem: bad input, a bad option or usage, a missing
  resource, probe or model, an output that cannot be written. One line,
  ``error: <message>``, no traceback.
- 130: Ctrl-C, or SIGTERM (what ``timeout``, Slurm and ``docker stop`` send), which
  takes the same way: every command stops as on Ctrl-C (an attack says how far it got
  and how to resume). The line is the interruption's own message, else ``interrupted``.
- 1: an internal error (a bug): the traceback, then one line asking to report it with
  the command line.
"""

from __future__ import annotations

import contextlib
import shlex
import signal
import sys
import threading
import traceback
from collections.abc import Iterator
from importlib import metadata
from types import FrameType
from typing import Any, NoReturn

import click

from brittle import __version__
from brittle.engine.core.errors import BrittleError

__all__ = [
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USER",
    "BrittleGroup",
    "Terminated",
    "issue_tracker",
    "main",
    "terminate_as_interrupt",
]

EXIT_OK = 0
#: A user or environment problem (bad input or option, missing resource, unwritable output).
EXIT_USER = 2
#: Ctrl-C.
EXIT_INTERRUPTED = 130
#: An internal error: a bug in brittle.
EXIT_INTERNAL = 1

_ARGV = "brittle.argv"  # key of the command line in the root context's meta
#: The "error" click raises to print the help of a command given no arguments (click
#: 8.2 and later; earlier versions print it without raising).
_SHOWS_HELP: tuple[type[Exception], ...] = tuple(
    e for e in (getattr(click.exceptions, "NoArgsIsHelpError", None),) if e is not None
)


def issue_tracker() -> str:
    """Where to report a bug: the issue-tracker URL of the package's metadata, if any."""
    try:
        entries = metadata.metadata("brittle").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        entries = []
    urls = {}
    for entry in entries:
        label, _, url = entry.partition(",")
        urls[label.strip().lower()] = url.strip()
    for label in ("issues", "bug tracker", "bugs", "tracker"):
        if urls.get(label):
            return urls[label]
    return "brittle's issue tracker"


def _say(message: str) -> None:
    """``message`` as one line on stderr: its lines joined, no blank line before it."""
    click.echo(" ".join(part.strip() for part in message.splitlines() if part.strip()), err=True)


def _command_line(ctx: click.Context) -> str:
    argv = ctx.find_root().meta.get(_ARGV)
    words = argv if isinstance(argv, list) else ["brittle", *sys.argv[1:]]
    return shlex.join(str(w) for w in words)


class BrittleGroup(click.Group):
    """A click group that applies brittle's exit-code policy (see the module)."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        argv = ["brittle", *args]  # as typed, whatever name the group was called by
        try:
            ctx = super().make_context(info_name, args, parent=parent, **extra)
        except _SHOWS_HELP:
            raise  # `brittle` alone: click prints the help
        except click.ClickException as err:  # a bad option of the group itself
            _say(f"error: {_click_message(err)}")
            raise click.exceptions.Exit(EXIT_USER) from None
        ctx.meta[_ARGV] = argv
        return ctx

    def invoke(self, ctx: click.Context) -> object:
        try:
            with terminate_as_interrupt():
                return super().invoke(ctx)
        except BrittleError as err:
            _say(f"error: {err}")
            ctx.exit(EXIT_USER)
        except click.exceptions.Exit:
            raise
        except click.Abort:  # click's own Ctrl-C (in a prompt)
            _interrupted(ctx, None)
        except _SHOWS_HELP:
            raise
        except click.ClickException as err:
            _say(f"error: {_click_message(err)}")
            ctx.exit(EXIT_USER)
        except KeyboardInterrupt as err:
            _interrupted(ctx, err)
        except Exception:
            traceback.print_exc()
            _say(
                f"brittle {__version__} hit an internal error (a bug, not your input). "
                f"Please report it at {issue_tracker()} with the traceback above and "
                f"the command line: {_command_line(ctx)}"
            )
            ctx.exit(EXIT_INTERNAL)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C's :class:`KeyboardInterrupt` would be."""


def _on_terminate(signum: int, frame: FrameType | None) -> None:
    raise Terminated("terminated (SIGTERM)")


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` (a :class:`KeyboardInterrupt`) while the block
    runs, so that a command stopped by ``timeout``, Slurm or ``docker stop`` cleans up and
    reports as on Ctrl-C; the previous handler is put back afterwards. Outside the main
    thread (where no handler can be set) it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _on_terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupted(ctx: click.Context, err: BaseException | None) -> NoReturn:
    message = str(err).strip() if err is not None else ""
    _say(message or "interrupted")
    ctx.exit(EXIT_INTERRUPTED)


def _click_message(err: click.ClickException) -> str:
    """click's message for a usage error, on one line, with where to find help."""
    message = " ".join(err.format_message().split())
    if isinstance(err, click.UsageError) and err.ctx is not None:
        help_option = (err.ctx.help_option_names or ["--help"])[-1]
        message = f"{message.rstrip('.')} (see '{err.ctx.command_path} {help_option}')"
    return message


@click.group(cls=BrittleGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="brittle")
def main() -> None:
    """brittle: worst-case, syntax-preserving perturbations of treebank sentences.

    Reads Universal Dependencies CoNLL-U, perturbs sentences while keeping their
    syntax (WordNet synonyms, LM substitutions, pseudowords, reorderings), and measures
    how much the perturbations damage probes trained on a model's representations.

    Start with `brittle demo`, which runs the whole job on a built-in treebank.
    Exit status: 0 success, 2 bad input or options, a missing resource or an output
    that cannot be written (one line `error: ...`), 130 interrupted, 1 a bug.
    """
