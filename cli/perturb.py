"""``brittle perturb``: one syntax-preserving perturbation per sentence (Algorithm 1)."""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from brittle.cli.common import (
    DASH_HELP,
    RegistryChoice,
    console,
    dtype_option,
    generator_options_option,
    is_stdout,
    lm_and_sense_options,
    message_console,
    parser_option,
    progress_bar,
    quality_options,
    quiet_option,
    shown,
    validity_option,
    workers_options,
)
from brittle.cli.group import main
from brittle.engine.core.overlap import check_no_overlap, named
from brittle.engine.perturb.perturb_html import perturb_to_files
from brittle.engine.perturb.perturb_run import (
    BUDGET_ALL,
    DEFAULT_MAX_SYNTAX_DISTANCE,
    PerturbConfig,
    PerturbSummary,
    check_perturb_outputs,
    summary_lines,
)
from brittle.engine.runs.run_options import make_executor, resolve_generator
from brittle.scorers.representations import check_dtype
from brittle.search.generators.base import GENERATORS


def describe_constraints(constraints: Sequence[Mapping[str, object]]) -> str:
    """The applied constraints in one line, e.g. ``budget (tau=2) · syntax (...)``."""

    def settings(d: Mapping[str, object]) -> str:
        return ", ".join(f"{k}={v}" for k, v in d.items() if k not in ("name", "parser"))

    return " · ".join(f"{d['name']} ({settings(d)})" for d in constraints)


def print_perturb_summary(
    summary: PerturbSummary,
    method: str,
    constraints: Sequence[Mapping[str, object]] = (),
    *,
    on: Console = console,
) -> None:
    """The run's counts and means as a table (and the constraints it applied), on ``on``."""
    table = Table(title=f"perturb --method {method} ({summary['sentences']} sentences)")
    table.add_column("what")
    table.add_column("value", justify="right")
    for what, value in summary_lines(summary):
        table.add_row(what, value)
    on.print(table)
    if constraints:
        on.print(f"constraints: {describe_constraints(constraints)}", markup=False)


class BudgetType(click.ParamType):
    """``--budget``: a positive integer, or ``all`` (:data:`BUDGET_ALL`)."""

    name = "INTEGER|all"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif str(value).strip().lower() == "all":
            return BUDGET_ALL
        else:
            try:
                number = int(str(value))
            except ValueError:
                self.fail(f"{value!r} is neither a whole number nor 'all'", param, ctx)
        if number < 1:
            self.fail(f"{number} is smaller than 1", param, ctx)
        return number


def budget_label(budget: int) -> str:
    """``all`` for :data:`BUDGET_ALL`, else the number."""
    return "all" if budget == BUDGET_ALL else str(budget)


@main.command("perturb")
@click.argument("treebank", type=click.Path(path_type=Path))
@click.option(
    "--method",
    default=None,
    type=RegistryChoice(GENERATORS),
    help="How words change (`brittle list generators` says what each does); or give "
    "--validity for a preset.",
)
@validity_option
@click.option(
    "--budget",
    "-t",
    default="1",
    show_default=True,
    type=BudgetType(),
    help="tau: the most words a perturbation may change (its Hamming distance); `all` "
    "changes every eligible word (a Jabberwocky corpus: --method jabberwocky --budget all).",
)
@click.option(
    "--candidates",
    "-b",
    default=20,
    show_default=True,
    type=click.IntRange(min=1),
    help="b: random perturbations drawn per sentence; the best admissible one is kept.",
)
@click.option(
    "--max-syntax-distance",
    "-d",
    default=DEFAULT_MAX_SYNTAX_DISTANCE,
    show_default=True,
    type=click.FloatRange(min=0.0),
    help="Largest normalised tree edit distance between the parse of the original and "
    "the parse of a candidate (0 = identical parse; 'inf' turns the check off); the "
    "threshold of a `syntax` constraint given without a value. Tighter than attack's "
    "0.2: perturb keeps the least disturbing candidate to build a test set.",
)
@parser_option(
    "Re-parses original and candidates for the syntax and POS checks "
    "(gold: no re-parse, the treebank's own annotation)."
)
@click.option(
    "--constraint",
    "constraints",
    multiple=True,
    metavar="NAME[:VALUE]",
    help="A constraint every kept perturbation satisfies, e.g. budget, pos, syntax:0.2, "
    "fluency (LM surprisal increase, fluency:0.7,12/changed), similarity (MiniLM "
    "sentence cosine, similarity:0.8), word-similarity (MiniLM cosine of each changed "
    "word in context, word-similarity:0.6), retag (repeat for several; `brittle list "
    "constraints`, docs/constraints.md). Default: budget at --budget, pos (measured "
    "only) and syntax at --max-syntax-distance; for copos and coco, which mean to keep "
    "the meaning, also similarity, fluency and word-similarity.",
)
@click.option(
    "--enforce-pos",
    is_flag=True,
    help="Also reject candidates whose changed words get another UPOS from the tagger "
    "(a `pos` constraint without a value is enforced; always measured and reported).",
)
@generator_options_option
@lm_and_sense_options
@quality_options
@click.option(
    "--grade/--no-grade",
    default=True,
    show_default=True,
    help="Grade each chosen perturbation's validity with brittle's judges (tree-valid: the "
    "gold tree still its analysis; grammatical; meaning kept; docs/validity.md): "
    "Validity=LEVEL in the MISC of its changed words, the shares in the summary, the "
    "verdicts and failed checks in --report. Loads spaCy, SmolLM2 and MiniLM.",
)
@dtype_option
@click.option("--seed", default=0, show_default=True, help="Same seed, byte-identical output.")
@click.option(
    "--out",
    required=True,
    metavar="FILE",
    type=click.Path(path_type=Path, allow_dash=True),
    help=f"Output CoNLL-U (written atomically, together with --report and --html). {DASH_HELP}",
)
@click.option(
    "--report",
    metavar="FILE",
    type=click.Path(path_type=Path, allow_dash=True),
    help="Also write a JSON report: counts, means, per-sentence records (with the "
    f"parser's parses of original and perturbation), config, versions. {DASH_HELP}",
)
@click.option(
    "--html",
    metavar="FILE",
    type=click.Path(path_type=Path, allow_dash=True),
    help="Also write an HTML page that works offline: the summary, a sortable table of "
    "the sentences and, per sentence, original and perturbed text with the gold tree and "
    "the parser's parses of both (docs/report.md). "
    f"{DASH_HELP}",
)
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N sentences.")
@workers_options
@quiet_option
def perturb_command(
    treebank: Path,
    method: str | None,
    validity: str | None,
    budget: int,
    candidates: int,
    max_syntax_distance: float,
    parser: str,
    constraints: tuple[str, ...],
    enforce_pos: bool,
    seed: int,
    out: Path,
    report: Path | None,
    html: Path | None,
    limit: int | None,
    quiet: bool,
    generator_options: tuple[str, ...],
    lm: str | None,
    lm_kind: str | None,
    sense: str | None,
    quality: bool,
    grade: bool,
    device: str | None,
    dtype: str | None,
    workers: int | None,
    ray_address: str | None,
) -> None:
    """Perturb every sentence of TREEBANK while keeping its syntax, and write CoNLL-U.

    For each sentence, --candidates random perturbations of at most --budget words are
    drawn with --method (or the preset --validity names: `tree`, nonwords that keep the
    gold tree by construction; `grammatical`, real words of the slot's class, frame
    and count; `meaning`, in-sense synonyms under the meaning checks).
    Candidates that fail a constraint are rejected (by default, a re-parse by --parser
    further than --max-syntax-distance from the parse of the original); of the rest,
    the one changing the most words and, among those, disturbing the parse least is
    kept (La Malfa et al., Algorithm 1). The constraints applied are printed first.

    The output keeps every gold column but FORM (and LEMMA, `_` when unknown), marks
    changed words in MISC (OrigForm=movie|Perturbation=copos), updates `# text` and
    adds `# perturbation = ...`. Sentences without candidates (nothing eligible,
    or no draw within the budget) and sentences whose candidates all fail the
    constraints are written unchanged and counted apart.

    --out, --report and --html are written as a set: all of them, or (when one cannot
    be written) none, and files already there are left as they were. The --html page
    draws, per sentence, the gold tree and the parser's parses of the original and of
    the perturbation (the trees the syntax constraint compared), edges that differ
    marked.

    Example:

    \b
      brittle perturb en_ewt-ud-test.conllu --method copos --budget 2 \\
          --candidates 20 --out ewt-copos.conllu --report ewt-copos.json \\
          --html ewt-copos.html
    """
    dtype = check_dtype(dtype, device)  # before anything loads
    if validity is None and method is None:
        raise click.UsageError("give --method, or --validity for a preset")
    method, constraints, generator_options = resolve_generator(
        validity, method, constraints, generator_options, lm=lm, lm_kind=lm_kind, sense=sense,
        dtype=dtype,
    )  # fmt: skip
    config = PerturbConfig(
        method=method,
        budget=budget,
        candidates=candidates,
        max_syntax_distance=max_syntax_distance,
        parser=parser,
        seed=seed,
        limit=limit,
        enforce_pos=enforce_pos,
        constraints=constraints,
        generator_options=generator_options,
        quality=quality,
        grade=grade,
        device=device,
        dtype=dtype,
    )
    outputs = [*named("--out", out), *named("--report", report), *named("--html", html)]
    check_no_overlap(named("TREEBANK", treebank), outputs)
    check_perturb_outputs(out, report=report, html=html)
    columns = (
        TextColumn(f"[bold]{method}[/] tau={budget_label(budget)}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    say = message_console(out, report, html)
    if not quiet:
        applied = config.constraints or config.default_constraints
        say.print(f"perturb {method}: constraints {', '.join(applied)}", markup=False)
    # Local workers start at the first chunk, once the treebank has been checked.
    executor = make_executor(workers, ray_address)
    with contextlib.ExitStack() as stack, progress_bar(*columns, on=say, quiet=quiet) as bar:
        if executor is not None:
            stack.enter_context(executor)
        task = bar.add_task(f"perturb {method} tau={budget_label(budget)}", total=None)
        # Streamed: the sentences go to the files a chunk at a time (committed together).
        result = perturb_to_files(
            treebank,
            config,
            out,
            report=report,
            html=html,
            on_start=lambda total: bar.update(task, total=total),
            progress=lambda done: bar.advance(task, done),
            executor=executor,
        )
    print_perturb_summary(result.summary(), method, result.constraints, on=say)
    written = [shown(p) for p in (out, report, html) if p is not None]
    say.print(
        f"wrote {', '.join(written[:-1])} and {written[-1]}"
        if len(written) > 1
        else f"wrote {written[0]}",
        markup=False,
    )
    if not is_stdout(out) and not quiet and not grade:
        say.print(
            f"how valid each perturbation is (tree, grammar, meaning): brittle grade "
            f"{shlex.quote(str(treebank))} {shlex.quote(str(out))} --json GRADES.jsonl",
            markup=False,
        )
