"""``brittle compare-methods``: how much each method disturbs the parse (Figure 7 check)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import click
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

from brittle.cli.common import (
    RegistryChoice,
    console,
    dtype_option,
    lm_and_sense_options,
    parse_budgets,
    parser_option,
    progress_bar,
    quality_options,
    quiet_option,
    workers_options,
)
from brittle.cli.group import main
from brittle.engine.compare.compare_report import markdown_table, write_compare_outputs
from brittle.engine.compare.compare_run import compare_methods
from brittle.engine.core.atomic import check_output
from brittle.engine.core.overlap import check_no_overlap, named
from brittle.engine.core.registry import Registry
from brittle.engine.runs.run_options import make_executor, shorthand_generator_options
from brittle.scorers.representations import check_dtype
from brittle.search.generators.base import GENERATORS
from brittle.search.generators.options import parse_options


class RegistryList(click.ParamType):
    """Comma-separated component names, each checked against one registry.

    The help lists the registry's names (read when the help is rendered, like
    :class:`~brittle.cli.common.RegistryChoice`); converts to a tuple of distinct names
    in the order given.
    """

    def __init__(self, registry: Registry[object]) -> None:
        self.choice = RegistryChoice(registry)
        self.name = f"{registry.kind} list"

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str | None:
        return f"{self.choice.get_metavar(param, ctx)},..."

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[str, ...]:
        if isinstance(value, tuple):
            return value
        names = [n.strip() for n in str(value).split(",") if n.strip()]
        if not names:
            self.fail("give at least one name", param, ctx)
        return tuple(dict.fromkeys(self.choice.convert(n, param, ctx) for n in names))


@main.command("compare-methods")
@click.argument("treebank", type=click.Path(path_type=Path))
@click.option(
    "--methods",
    default="copos,coco,random,jabberwocky",
    show_default=True,
    type=RegistryList(GENERATORS),
    help="Comma-separated generators to compare (`brittle list generators`).",
)
@click.option(
    "--budget",
    "-t",
    "--budgets",
    "budgets",
    default="1,2,3",
    show_default=True,
    help="Comma-separated tau values (most words changed per perturbation), as in "
    "`brittle attack --budget` (--budgets is accepted too).",
)
@click.option(
    "--candidates",
    "-b",
    default=10,
    show_default=True,
    type=click.IntRange(min=1),
    help="Random perturbations drawn per sentence, method and tau (fewer than perturb's "
    "20: this is drawn for every method and tau).",
)
@parser_option("Parses originals and perturbations.")
@click.option("--seed", default=0, show_default=True, help="Seeds every draw and the pairs.")
@click.option(
    "--limit",
    type=click.IntRange(min=2),
    help="Only the first N sentences (coco with the bundled LM is the slowest method).",
)
@click.option(
    "--out",
    required=True,
    metavar="DIR",
    type=click.Path(path_type=Path),
    help="Directory for compare-methods.md, .json and .png (created if needed; the "
    "three files are written together, or none of them).",
)
@lm_and_sense_options
@quality_options
@dtype_option
@workers_options
@quiet_option
def compare_methods_command(
    treebank: Path,
    methods: tuple[str, ...],
    budgets: str,
    candidates: int,
    parser: str,
    seed: int,
    limit: int | None,
    out: Path,
    quiet: bool,
    lm: str | None,
    lm_kind: str | None,
    sense: str | None,
    quality: bool,
    device: str | None,
    dtype: str | None,
    workers: int | None,
    ray_address: str | None,
) -> None:
    """Measure how far each method moves the parse, against random sentence pairs.

    For every method and tau, each sentence of TREEBANK gets --candidates random
    perturbations (no constraint applied); the original and each perturbation are
    parsed, and the normalised tree edit distance between the two parses is averaged.
    The reference is the same distance between the parses of two different sentences
    of the treebank (any length, and same length). POS preservation is reported too.
    Writes a Markdown table, JSON and a PNG plot into OUT.

    With --workers N (or --ray), the sentences are measured in N processes, one chunk
    of 64 sentences at a time each, every method and tau of a chunk in one shard; the
    table and files are those of one process (the wall times apart).

    Example:

    \b
      brittle compare-methods en_ewt-ud-test.conllu --methods copos,coco,random \\
          --budget 1,2,3 --limit 300 --out compare-ewt
    """
    budget_list = parse_budgets(budgets)
    dtype = check_dtype(dtype, device)  # before anything loads
    shorthands = shorthand_generator_options(
        methods, lm=lm, lm_kind=lm_kind, sense=sense, dtype=dtype
    )
    options = {m: parse_options(GENERATORS.get(m), specs) for m, specs in shorthands.items()}
    check_no_overlap(named("TREEBANK", treebank), named("--out", out))
    check_output(out, directory=True)
    columns = (
        TextColumn("[bold]{task.description}[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    # Local workers start at the first chunk, once the treebank has been checked.
    executor = make_executor(workers, ray_address)
    with contextlib.ExitStack() as stack, progress_bar(*columns, quiet=quiet) as bar:
        if executor is not None:
            stack.enter_context(executor)
        tasks = {m: bar.add_task(m, total=None) for m in methods}

        def update(method: str, done: int, total: int) -> None:
            bar.update(tasks[method], completed=done, total=total)

        result = compare_methods(
            treebank,
            methods=methods,
            budgets=budget_list,
            candidates=candidates,
            parser=parser,
            seed=seed,
            limit=limit,
            generator_options=options,
            quality=quality,
            device=device,
            dtype=dtype,
            progress=update,
            executor=executor,
        )
    paths = write_compare_outputs(result, out)
    console.print(markdown_table(result), markup=False)
    console.print("wrote " + ", ".join(str(p) for p in paths))
