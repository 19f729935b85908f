"""``brittle attack``: the worst-case search and its reports (``brittle report`` is in
:mod:`brittle.cli.report`)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path

import click
from click.core import ParameterSource
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from brittle.cli.common import (
    RegistryChoice,
    console,
    dtype_option,
    err_console,
    generator_options_option,
    lm_and_sense_options,
    parse_budgets,
    parser_option,
    probes_option,
    search_option,
    validity_option,
    workers_options,
)
from brittle.cli.group import main
from brittle.engine.attack import (
    AttackComponents,
    AttackConfig,
    attack_config,
    build_components,
    check_out_dir,
    run_attack,
)
from brittle.engine.attack import (
    Progress as AttackProgress,
)
from brittle.engine.attack.preflight import Preflight, check_out_path, preflight
from brittle.engine.core.atomic import remove_stale_temporaries
from brittle.engine.core.lock import check_unlocked, locked_directory
from brittle.engine.reports.html_report import REPORT_HTML, write_budget_index
from brittle.engine.reports.report import (
    DROP_VS_BUDGET,
    PLOTS,
    Summary,
    bound_lines,
    plot_drop_vs_budget,
)
from brittle.engine.runs.run_options import make_executor
from brittle.engine.runs.shards import ShardExecutor, ShardFailed
from brittle.scorers.representations import check_device, check_dtype
from brittle.search.generators.base import GENERATORS


def print_summary(summary: Summary) -> None:
    """The summary table of an attack, as the terminal shows it."""
    table = Table(title=f"Worst-case drop per task ({summary['sentences']} sentences)")
    table.add_column("task")
    for col in ("clean", "perturbed", "mean drop", "std drop"):
        table.add_column(col, justify="right")

    def fmt(x: float | None) -> str:
        return "–" if x is None else f"{x:.3f}"

    for task, v in summary["tasks"].items():
        table.add_row(
            task, fmt(v["clean"]), fmt(v["perturbed"]), fmt(v["mean_drop"]), fmt(v["std_drop"])
        )
    console.print(table)
    console.print(
        f"success rate {fmt(summary['success_rate'])} · queries/sentence "
        f"{summary['queries_per_sentence']:.1f} · epsilon L2 {fmt(summary['epsilon_l2'])} · "
        f"epsilon cosine {fmt(summary['epsilon_cosine'])}"
    )
    for line in bound_lines(summary)[:-1]:
        console.print(line, markup=False)
    validity = summary.get("validity")
    if validity is not None:
        shares = validity["shares"]
        console.print(
            f"validity of the {validity['graded']} kept perturbations: tree-valid "
            f"{fmt(shares['tree'])} · grammatical {fmt(shares['grammatical'])} · meaning "
            f"kept {fmt(shares['meaning'])}",
            markup=False,
        )


class PlainProgress:
    """Progress as plain lines, for logs: one every ``every`` seconds, and the last."""

    def __init__(self, label: str, *, every: float = 30.0) -> None:
        self.label = label
        self.every = every
        self.started: float | None = None
        self.last = 0.0

    def __call__(self, progress: AttackProgress, total: int) -> None:
        now = time.perf_counter()
        if self.started is None:
            self.started, self.last = now, now
            err_console.print(f"{self.label}: {progress.done}/{total} sentences done, starting")
            return
        if now - self.last < self.every and progress.done < total:
            return
        self.last = now
        rate = progress.done / max(now - self.started, 1e-9)
        err_console.print(
            f"{self.label}: {progress.done}/{total} sentences, {rate:.2f} sent/s, "
            f"success {progress.success_rate:.0%}, mean drop {progress.mean_drop:.3f}"
        )


class BarProgress:
    """A live progress bar on a terminal; it appears with the first sentence count."""

    def __init__(self, label: str) -> None:
        columns = (
            TextColumn(f"[bold]{label}[/]"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn(
                "{task.fields[rate]} sent/s · success {task.fields[success]} · "
                "mean drop {task.fields[drop]}"
            ),
            TimeElapsedColumn(),
        )
        self.bar = Progress(*columns, console=console, transient=False)
        self.task = self.bar.add_task(label, total=None, rate="–", success="–", drop="–")
        self.started: tuple[float, int] | None = None

    def __call__(self, progress: AttackProgress, total: int) -> None:
        now = time.perf_counter()
        if self.started is None:
            self.bar.start()
            self.started = (now, progress.done)
        elapsed = now - self.started[0]
        new = progress.done - self.started[1]
        rate = f"{new / elapsed:.2f}" if elapsed > 0 and new else "–"
        self.bar.update(
            self.task,
            total=total,
            completed=progress.done,
            rate=rate,
            success=f"{progress.success_rate:.0%}",
            drop=f"{progress.mean_drop:.3f}",
        )

    def stop(self) -> None:
        if self.started is not None:
            self.bar.stop()


def run_with_progress(
    config: AttackConfig,
    out: Path,
    *,
    resume: bool,
    overwrite: bool,
    label: str = "attack",
    components: AttackComponents | None = None,
    checked: Preflight | None = None,
    quiet: bool = False,
    quality: bool = False,
    grade: bool = False,
    executor: ShardExecutor | None = None,
    device: str | None = None,
) -> Summary:
    """Run one attack with its progress shown: a live bar on a terminal, a plain line
    every 30 s otherwise (logs), nothing with ``quiet``. Ctrl-C ends it with the count
    of finished sentences and how to resume (exit status 130); so does a shard that
    failed on every attempt (exit status 1). ``executor``: the workers to shard the
    sentences over (``None``: this process, with ``components``)."""
    seen: list[tuple[int, int]] = [(0, checked.total if checked is not None else 0)]
    bar: BarProgress | None = None
    show: Callable[[AttackProgress, int], None] | None = None
    if not quiet:
        if console.is_terminal:
            bar = BarProgress(label)
            show = bar
        else:
            show = PlainProgress(label)

    def update(progress: AttackProgress, total: int) -> None:
        seen[0] = (progress.done, total)
        if show is not None:
            show(progress, total)

    try:
        return run_attack(
            config,
            out,
            resume=resume,
            overwrite=overwrite,
            on_sentence=update,
            components=components,
            checked=checked,
            quality=quality,
            grade=grade,
            executor=executor,
            device=device,
        )
    except ShardFailed as exc:
        if bar is not None:
            bar.stop()
            bar = None
        done, total = seen[0]
        err_console.print(
            f"error: {exc}; {done}/{total} sentences are done, rerun with --resume to finish"
        )
        raise click.exceptions.Exit(1) from None
    except KeyboardInterrupt:
        if bar is not None:
            bar.stop()
            bar = None
        done, total = seen[0]
        err_console.print(
            f"interrupted after {done}/{total} sentences; rerun with --resume to finish"
        )
        raise click.exceptions.Exit(130) from None
    finally:
        if bar is not None:
            bar.stop()


@main.command("attack")
@click.argument("treebank", type=click.Path(path_type=Path))
@probes_option(
    "Probe directory from `brittle train-probe` (repeat for several tasks); optional "
    "with --target.",
    required=False,
)
@click.option(
    "--target",
    default=None,
    metavar="parser:NAME",
    help="Also attack a dependency parser (`brittle list parsers`): its attachment score "
    "against the gold tree the perturbation keeps, column parser.uas (and parser.las for "
    "a UD-labelled parser: spacy-ud, trained once by `brittle resources "
    "--train-ud-parser`), beside the probes' on the same perturbations (or alone, "
    "without --probe). Use it with a preset that keeps the gold tree (--validity tree or "
    "grammatical) and --objective parser to lower the parser's score.",
)
@click.option(
    "--method",
    default="copos",
    show_default=True,
    type=RegistryChoice(GENERATORS),
    help="Candidate generator (`brittle list generators` says what each does). "
    "Reorderings (shuffle, phrase-shuffle, neighbour-flip) need --search sample.",
)
@validity_option
@search_option()
@click.option("--beam-width", default=4, show_default=True, help="Beam width for --search beam.")
@click.option(
    "--guided-batch",
    type=int,
    default=None,
    help="--search guided: candidates scored per round (default 8; the first round's are "
    "scored in two, the 2 best-estimated first, so that a first find comes sooner). "
    "Smaller rounds follow the gradient more closely; larger ones batch better on a GPU.",
)
@click.option(
    "--guided-warmup",
    type=float,
    default=None,
    help="--search guided: share of the query budget spent on single substitutions "
    "before any is extended (0 to 1, default 0.8; docs/attack.md measures it).",
)
@click.option(
    "--budget",
    "-t",
    default="3",
    show_default=True,
    help="Most words substituted (tau); a list like 1,2,3 runs each into OUT/tau=K.",
)
@click.option(
    "--candidates",
    "-b",
    default=20,
    show_default=True,
    help="sample: random perturbations drawn (b); greedy, beam and guided: options per position.",
)
@click.option(
    "--check-all",
    is_flag=True,
    help="sample: check the constraints on every candidate drawn, not only until the "
    "most damaging feasible one. The perturbation kept is the same; epsilon then covers "
    "every feasible candidate (Algorithm 2), and each task's own worst drop among them "
    "is recorded (Algorithm 1 per task: `worst` in results.jsonl, a column in the "
    "summary). Costs a parse of every candidate.",
)
@click.option(
    "--max-syntax-distance",
    "-d",
    default=0.2,
    show_default=True,
    help="Largest normalised tree edit distance between the parses of the original "
    "and the perturbation (the default syntax constraint). Looser than perturb's 0.1: "
    "an attack keeps the most damaging candidate, perturb the least disturbing one.",
)
@parser_option("Parser of the parse-based constraints (gold: no re-parse).")
@click.option(
    "--constraint",
    "constraints",
    multiple=True,
    metavar="NAME[:VALUE]",
    help="A constraint every kept perturbation satisfies, e.g. syntax:0.2, pos:1, budget, "
    "similarity:0.8, fluency:0.7,12/changed, word-similarity:0.6, retag (repeat for "
    "several; `brittle list "
    "constraints`, docs/constraints.md). Default: syntax at --max-syntax-distance; "
    "for copos and coco, which mean to keep the meaning, also similarity, fluency and "
    "word-similarity (as perturb). The applied list is printed at start.",
)
@click.option(
    "--query-budget",
    type=int,
    default=None,
    help="Most model evaluations per sentence (default: unlimited).",
)
@click.option(
    "--time-budget",
    type=float,
    default=None,
    metavar="SECONDS",
    help="Most wall-clock seconds per sentence: its search scores no new candidate "
    "after that (default: unlimited). Unlike every other option it makes the results "
    "depend on the machine's speed and load, not only on --seed; the rows and summary "
    "count the sentences that ran out of time.",
)
@click.option(
    "--anytime",
    is_flag=True,
    help="Also record in each row how the best drop grew: [queries, seconds, drop] each "
    "time the search admits a candidate more damaging than every one before (the "
    "seconds, like each row's own, differ from run to run).",
)
@click.option(
    "--objective",
    default="",
    help="Comma-separated probe tasks (distance: its primary metric) or metrics "
    "(distance.uuas, pos.pos_acc; parser with --target) whose mean drop is maximised "
    "(default: each probe's primary metric, and the parser's UAS). A name the probes "
    "do not give is refused with the valid ones.",
)
@generator_options_option
@lm_and_sense_options
@click.option(
    "--quality",
    is_flag=True,
    help="Also measure each kept perturbation: surprisal increase (bundled SmolLM2), "
    "sentence similarity (MiniLM), re-tag agreement; in results.jsonl and the summary.",
)
@click.option(
    "--grade/--no-grade",
    default=True,
    show_default=True,
    help="Grade each kept perturbation's validity with brittle's judges (tree-valid: the "
    "gold tree still its analysis; grammatical; meaning kept; docs/validity.md): in "
    "results.jsonl, Validity=LEVEL in adversarial.conllu's MISC, and the summary, which "
    "gives the drop of the valid perturbations beside the drop of all. Loads spaCy, "
    "SmolLM2 and MiniLM; costs about one SmolLM2 pass per kept perturbation "
    "(docs/performance.md). --no-grade leaves the validity unmeasured.",
)
@workers_options
@click.option(
    "--device",
    default=None,
    help="Torch device of the models: cpu, cuda, cuda:N or mps (default: cuda when "
    "available). Representations keep the dtype each probe was trained with unless "
    "--dtype names one.",
)
@dtype_option
@click.option("--seed", default=0, show_default=True)
@click.option("--limit", type=int, default=None, help="Attack only the first N sentences.")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Output directory.")
@click.option("--resume", is_flag=True, help="Continue an interrupted run in OUT.")
@click.option("--overwrite", is_flag=True, help="Discard earlier results in OUT.")
@click.option(
    "--quiet",
    is_flag=True,
    help="No progress (the summary is still printed). Progress goes to a live bar on a "
    "terminal and to a plain line every 30 s otherwise.",
)
def attack_command(
    treebank: Path,
    probes: tuple[Path, ...],
    target: str | None,
    method: str,
    validity: str | None,
    search: str,
    beam_width: int,
    guided_batch: int | None,
    guided_warmup: float | None,
    budget: str,
    candidates: int,
    check_all: bool,
    max_syntax_distance: float,
    parser: str,
    constraints: tuple[str, ...],
    query_budget: int | None,
    time_budget: float | None,
    anytime: bool,
    objective: str,
    seed: int,
    limit: int | None,
    out: Path,
    resume: bool,
    overwrite: bool,
    quiet: bool,
    generator_options: tuple[str, ...],
    lm: str | None,
    lm_kind: str | None,
    sense: str | None,
    quality: bool,
    grade: bool,
    workers: int | None,
    ray_address: str | None,
    device: str | None,
    dtype: str | None,
) -> None:
    """Find, per sentence of TREEBANK, the syntax-preserving perturbation that most
    damages the probes, and report how much they drop.

    Writes to OUT: adversarial.conllu (the worst perturbation of each sentence),
    results.jsonl (one line per sentence), summary.json and summary.md (worst-case drop
    per task, epsilon, success rate, queries, configuration, versions) and plots/.

    Example:

      brittle attack en_ewt-ud-test.conllu --probe probes/distance --probe probes/pos
      --method copos --search beam --budget 3 --out attack-ewt

    On several cores, --workers 4 searches four chunks of sentences at a time in four
    processes (four copies of the models in memory); on a Ray cluster, --ray auto
    --workers 8 runs eight actors. The files are the same as with one process.
    """
    if resume and overwrite:
        raise click.UsageError("--resume continues OUT and --overwrite discards it: give one")
    budgets = parse_budgets(budget)
    chosen = click.get_current_context().get_parameter_source("method")
    # with a preset, --method only when given (it must then be the preset's)
    generator = None if validity is not None and chosen is ParameterSource.DEFAULT else method
    device = check_device(device)
    dtype = check_dtype(dtype, device)
    configs = {
        tau: attack_config(
            str(treebank),
            [str(p) for p in probes],
            method=generator,
            validity=validity,
            search=search,
            budget=tau,
            candidates=candidates,
            beam_width=beam_width,
            max_syntax_distance=max_syntax_distance,
            parser=parser,
            query_budget=query_budget,
            seed=seed,
            limit=limit,
            objective=objective.split(","),
            constraints=constraints,
            generator_options=generator_options,
            lm=lm,
            lm_kind=lm_kind,
            sense=sense,
            check_all=check_all,
            dtype=dtype,
            time_budget=time_budget,
            anytime=anytime,
            target=target,
            guided_batch=guided_batch,
            guided_warmup=guided_warmup,
        )
        for tau in budgets
    }
    targets = {tau: out if len(budgets) == 1 else out / f"tau={tau}" for tau in budgets}
    # Every cheap check before anything loads: the treebank (read once), the probes,
    # the objective, the output directories and any clash with earlier results.
    first = configs[budgets[0]]
    checked = preflight(first, out)
    for warning in checked.warnings:
        err_console.print(f"warning: {warning}")
    if not quiet:
        err_console.print(
            f"attack {first.method}: constraints {', '.join(first.constraint_specs)}", markup=False
        )
    check_unlocked(out)  # a second run into OUT is refused before the models load
    for tau in budgets:
        check_out_path(targets[tau])
        check_unlocked(targets[tau])
        if targets[tau].is_dir() and not overwrite:
            check_out_dir(targets[tau], configs[tau], resume=resume, overwrite=False)
    with contextlib.ExitStack() as stack:
        if len(budgets) > 1:  # each budget's run locks its own directory
            stack.enter_context(locked_directory(out, "brittle attack"))
            # what a killed run left of the budget index, now that no one else writes it
            remove_stale_temporaries(out, (REPORT_HTML,))
            remove_stale_temporaries(out / PLOTS, (DROP_VS_BUDGET,))
        # Workers start after every check; they serve every budget, models loaded once.
        executor = make_executor(workers, ray_address)
        if executor is not None:
            stack.enter_context(executor)
            if not quiet:
                err_console.print(f"searching on {executor.describe()}")
        summaries = {}
        components: AttackComponents | None = None
        for tau in budgets:
            config, out_dir = configs[tau], targets[tau]
            # The budget does not change probes, generator or parser: they load once.
            if executor is None:
                with console.status("loading probes, model, generator and parser"):
                    components = build_components(
                        config, reuse=components, device=device, remember_tables=len(budgets) > 1
                    )
            summaries[tau] = run_with_progress(
                config,
                out_dir,
                resume=resume,
                overwrite=overwrite,
                label=f"tau={tau}",
                components=components,
                checked=checked,
                quiet=quiet,
                quality=quality,
                grade=grade,
                executor=executor,
                device=device,
            )
            print_summary(summaries[tau])
        if len(budgets) > 1:
            plot_drop_vs_budget(summaries, out / PLOTS / DROP_VS_BUDGET)
            write_budget_index(out, summaries)
    console.print(f"reports written to {out}; open {out / REPORT_HTML} in a browser")
