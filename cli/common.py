"""Shared click options and output helpers for the sub-commands."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import click
from click.shell_completion import CompletionItem
from rich.console import Console
from rich.progress import Progress, ProgressColumn, TaskID

from brittle.engine.core.atomic import STDOUT
from brittle.engine.core.errors import ConfigError
from brittle.engine.core.registry import Registry
from brittle.engine.runs.shards import parse_ray_address
from brittle.scorers.parsers.base import PARSERS
from brittle.scorers.representations import DTYPES
from brittle.search.presets import PRESETS
from brittle.search.strategies.base import STRATEGIES

F = TypeVar("F", bound=Callable[..., object])

#: Console for human-readable output (tables, progress) on stdout.
console = Console(highlight=False, soft_wrap=True)
#: Console for warnings and notes on stderr.
err_console = Console(stderr=True, highlight=False, soft_wrap=True)

#: Help text fragment of the file options that accept ``-``.
DASH_HELP = "`-` writes to standard output (the messages then go to stderr)."


def is_stdout(path: str | os.PathLike[str] | None) -> bool:
    """Whether an output option names standard output: ``-``, or a path to what
    standard output is (``/dev/stdout``, or the file it is redirected to)."""
    if path is None:
        return False
    name = os.fspath(path)
    if name == STDOUT:
        return True
    try:
        return os.path.samestat(os.stat(name), os.fstat(sys.stdout.fileno()))
    except (OSError, ValueError, AttributeError):  # no such file; stdout has no descriptor
        return False


def message_console(*outputs: str | os.PathLike[str] | None) -> Console:
    """Where a command prints tables and notes: stderr when one of its ``outputs`` is
    standard output, so that stdout carries only the data."""
    return err_console if any(is_stdout(p) for p in outputs) else console


def shown(path: str | os.PathLike[str]) -> str:
    """An output path for messages (``-`` is standard output)."""
    return "standard output" if os.fspath(path) == STDOUT else os.fspath(path)


@dataclass
class _LogTask:
    description: str
    total: float | None
    done: float = 0.0
    shown: float = field(default_factory=time.perf_counter)


class LogProgress:
    """Progress for logs (output that is not a terminal): a plain line per task every
    ``every`` seconds and when it completes; the same calls as a rich ``Progress``."""

    def __init__(self, on: Console, *, every: float = 30.0) -> None:
        self.on = on
        self.every = every
        self.tasks: list[_LogTask] = []

    def __enter__(self) -> LogProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def add_task(self, description: str, total: float | None = None) -> TaskID:
        self.tasks.append(_LogTask(description, total))
        return TaskID(len(self.tasks) - 1)

    def update(
        self, task: TaskID, *, total: float | None = None, completed: float | None = None
    ) -> None:
        if total is not None:
            self.tasks[task].total = total
        if completed is not None:
            self._moved(self.tasks[task], completed)

    def advance(self, task: TaskID, advance: float = 1) -> None:
        self._moved(self.tasks[task], self.tasks[task].done + advance)

    def _moved(self, task: _LogTask, done: float) -> None:
        task.done = done
        now = time.perf_counter()
        finished = task.total is not None and done >= task.total
        if finished or now - task.shown >= self.every:
            task.shown = now
            of = "" if task.total is None else f"/{task.total:g}"
            self.on.print(f"{task.description}: {done:g}{of}", markup=False, highlight=False)


def progress_bar(
    *columns: str | ProgressColumn, on: Console = console, quiet: bool = False
) -> Progress | LogProgress:
    """Progress on ``on``: a transient rich bar on an interactive terminal, a plain line
    every 30 s elsewhere (logs), nothing with ``quiet``."""
    if quiet:
        return Progress(*columns, console=on, disable=True)
    if on.is_interactive:
        return Progress(*columns, console=on, transient=True)
    return LogProgress(on)


def parse_budgets(text: str) -> list[int]:
    """The word budgets of ``--budget``: ``3`` or ``1,2,3`` (sorted, each once).

    Raises:
        click.BadParameter: an item that is empty (``1,,2``) or not a positive integer.
    """
    items = [item.strip() for item in text.split(",")]
    if not all(item.isdigit() for item in items):
        raise click.BadParameter(
            f"expected positive integers like 3 or 1,2,3, got {text!r}", param_hint="--budget"
        )
    budgets = sorted({int(item) for item in items})
    if budgets[0] < 1:
        raise click.BadParameter(
            f"budgets must be positive integers, got {text!r}", param_hint="--budget"
        )
    return budgets


def probes_option(
    help: str = "Probe directory from `brittle train-probe` (repeat for several tasks).",
    *,
    required: bool = True,
) -> Callable[[F], F]:
    """``--probe DIR`` (repeatable; required unless ``required`` is false) into the
    ``probes`` parameter."""
    return click.option(
        "--probe",
        "probes",
        multiple=True,
        required=required,
        type=click.Path(path_type=Path),
        help=help,
    )


def parser_option(help: str) -> Callable[[F], F]:
    """``--parser NAME``: a registered parser (``brittle list parsers``), spaCy by default;
    ``help`` says what the command parses with it."""
    return click.option(
        "--parser", default="spacy", show_default=True, type=RegistryChoice(PARSERS), help=help
    )


def search_option(
    help: str = "Search strategy (`brittle list strategies`).",
) -> Callable[[F], F]:
    """``--search NAME``: a registered search strategy, beam by default."""
    return click.option(
        "--search", default="beam", show_default=True, type=RegistryChoice(STRATEGIES), help=help
    )


def validity_option(command: F) -> F:
    """``--validity NAME``: a generator with the options and constraints that keep what
    the preset is named for (:data:`~brittle.search.presets.PRESETS`)."""
    option = click.option(
        "--validity",
        default=None,
        type=RegistryChoice(PRESETS),
        help="A generator with options and constraints valid by construction, instead "
        "of --method: "
        + "; ".join(f"{e.name}: {e.help}" for e in PRESETS.entries())
        + " (`brittle list presets`, docs/presets.md). Extra --constraint and -o options "
        "are added to the preset's.",
    )
    return option(command)


def representation_run_options(command: F) -> F:
    """``--threads``, ``--cache-dir``, ``--no-cache`` and ``--quiet``, for the commands
    that compute representations (``train-probe``, ``evaluate``)."""
    for option in reversed(
        [
            click.option(
                "--threads",
                default=None,
                type=click.IntRange(min=1),
                help="CPU threads for torch.",
            ),
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


def quiet_option(command: F) -> F:
    """``--quiet``: no progress and no notes, only results and errors (for commands
    that do not take :func:`representation_run_options`, which has it)."""
    option = click.option(
        "--quiet", is_flag=True, help="No progress bars or notes; results and errors only."
    )
    return option(command)


def generator_options_option(command: F) -> F:
    """``-o/--option NAME=VALUE`` (repeatable): the generator's own options, for the
    commands that build one generator (``attack``, ``perturb``)."""
    option = click.option(
        "--option",
        "-o",
        "generator_options",
        multiple=True,
        metavar="NAME=VALUE",
        help="An option of the generator (repeat for several): e.g. -o level=character "
        "-o rho=0.3 for reorderings, -o kind=masked -o model=DIR for coco, "
        "-o eligibility.include_upos=NOUN,ADJ. `brittle list generators` lists each "
        "generator's options.",
    )
    return option(command)


def lm_and_sense_options(command: F) -> F:
    """``--lm``, ``--lm-kind`` and ``--sense``: the language model of ``coco`` and the
    sense mode of ``copos``, as flags (each is a shorthand for ``-o NAME=VALUE`` on
    every generator of the run that has the option)."""
    options = [
        click.option(
            "--lm",
            "lm",
            metavar="MODEL",
            help="Language model of coco: a local directory or hub id (default: the bundled "
            "SmolLM2, causal). Short for -o model=MODEL.",
        ),
        click.option(
            "--lm-kind",
            "lm_kind",
            type=click.Choice(["auto", "causal", "masked"]),
            help="How coco uses --lm: causal (proposes from the left context, then ranks by "
            "the whole sentence's log-probability) or masked (the word masked, the whole "
            "sentence visible). Default auto: from the model's config. Short for -o kind=.",
        ),
        click.option(
            "--sense",
            type=click.Choice(["context", "first", "all"]),
            help="Which WordNet senses copos draws synonyms from: context (default: the "
            "sense the word has in its sentence, chosen by gloss similarity and sense "
            "frequency, docs/substitutions.md), first (the most frequent sense only) or all "
            "(every sense, in WordNet order). Short for -o sense=.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def quality_options(command: F) -> F:
    """``--quality/--no-quality`` and ``--device``: measure how natural the perturbations
    are (causal LM surprisal, MiniLM sentence similarity, re-tag agreement), and where
    the models of the constraints and of that measurement run."""
    options = [
        click.option(
            "--quality/--no-quality",
            default=True,
            show_default=True,
            help="Measure the kept perturbations: surprisal increase (bits per word, bundled "
            "SmolLM2), sentence similarity (MiniLM cosine), re-tag agreement; loads both "
            "models (--no-quality is faster).",
        ),
        click.option(
            "--device",
            help="Torch device of the model-based constraints and quality models "
            "(default: cuda when available, else cpu).",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def dtype_option(command: F) -> F:
    """``--dtype float32|float16|bfloat16``: the precision of every torch model the
    command runs (``None`` when not given: each model keeps its own). Check it with
    :func:`~brittle.scorers.representations.check_dtype` before anything loads."""
    option = click.option(
        "--dtype",
        type=click.Choice(DTYPES),
        default=None,
        help="Precision of every torch model the command runs (default: each probe's and "
        "model's own, float32 for the bundled ones but coCO's language model, which runs "
        "bfloat16 on a CPU with bfloat16 units). float16 and bfloat16 halve their "
        "memory on a GPU; float16 needs a GPU, bfloat16 also runs on CPU. Results may "
        "differ slightly from float32.",
    )
    return option(command)


def workers_options(command: F) -> F:
    """``--workers N`` and ``--ray auto|local|ADDRESS``: shard the sentences over local
    processes or Ray actors (:mod:`brittle.engine.runs.shards`)."""
    options = [
        click.option(
            "--workers",
            type=click.IntRange(min=1),
            default=None,
            help="Work on the sentences in N processes (default 1: this one), one chunk of "
            "the run at a time each, with the CPUs' torch threads divided between them. "
            "Every worker loads its own copy of the models: memory grows about N-fold. The "
            "files are byte for byte those of one process. With --ray: the number of actors "
            "(default: one per GPU, or per node).",
        ),
        click.option(
            "--ray",
            "ray_address",
            metavar="auto|local|ADDRESS",
            default=None,
            callback=_checked_ray_address,
            help="Run the workers as Ray actors that hold the models (one GPU each when the "
            "cluster has GPUs): auto joins the cluster this machine belongs to, local starts "
            "one here, HOST:PORT (or ray://HOST:PORT, Ray Client) joins that one, checked to "
            "answer within 5 s. Needs `pip install 'brittle[ray]'`; the probe directories "
            "must be readable at the same path on every node.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _checked_ray_address(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> str | None:
    """``--ray``'s value, its form checked while the options are parsed."""
    if value is not None:
        try:
            parse_ray_address(value)
        except ConfigError as err:
            raise click.BadParameter(str(err), ctx=ctx, param=param) from None
    return value


def verbose_option(command: F) -> F:
    """``--verbose``: every stage and every training epoch, one line each."""
    option = click.option(
        "--verbose", is_flag=True, help="One line per stage and per training epoch."
    )
    return option(command)


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
