"""``brittle grade``: how many perturbations of a file are still valid, and why not."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from brittle.cli.common import DASH_HELP, message_console, parser_option
from brittle.cli.group import main
from brittle.engine.core.atomic import check_output
from brittle.engine.core.overlap import check_no_overlap, named
from brittle.engine.grading import GradingRun, grade_files, write_grades
from brittle.scorers.representations import check_device
from brittle.search.validity import LEVELS, Grader


def render_summary(run: GradingRun, *, on: Console) -> None:
    """The share of graded sentences valid at each level, per method and overall."""
    table = Table(title=f"Validity of {run.perturbed} against {run.original}")
    table.add_column("method")
    table.add_column("graded", justify="right")
    table.add_column("not graded", justify="right")
    for level in LEVELS:
        table.add_column(f"{level} valid", justify="right")
    rows = [*run.summary.methods, run.summary.overall]
    for k, summary in enumerate(rows):
        shares = []
        for level in LEVELS:
            share = summary.share(level)
            shares.append("–" if share is None else f"{share:.0%} ({dict(summary.valid)[level]})")
        table.add_row(
            summary.method,
            str(summary.graded),
            str(summary.not_graded),
            *shares,
            end_section=k == len(rows) - 2,
        )
    on.print(table)
    on.print(f"{run.summary.unchanged} sentence(s) unchanged, not graded")
    graded = run.summary.overall.graded
    if graded:
        seconds = sum(run.timings.values())
        on.print(f"{seconds / graded * 1000:.0f} ms per graded sentence, loading included")


@main.command("grade")
@click.argument("original", type=click.Path(path_type=Path))
@click.argument("perturbed", type=click.Path(path_type=Path))
@click.option(
    "--json",
    "json_path",
    metavar="FILE",
    type=click.Path(path_type=Path, allow_dash=True),
    help=f"Write one JSON object per changed sentence here (JSON Lines, atomically). {DASH_HELP}",
)
@parser_option("Re-parses the perturbed sentences (and the originals, to know where it errs).")
@click.option(
    "--skip-mismatched",
    is_flag=True,
    help="Report sentences whose word count differs from the original's as not graded "
    "instead of refusing the file (for sets made elsewhere).",
)
@click.option("--device", default=None, help="Torch device of the LM and the encoder.")
@click.option(
    "--batch-size",
    default=256,
    show_default=True,
    type=click.IntRange(min=1),
    help="Sentences graded at once (one parser, LM and encoder call each).",
)
def grade_command(
    original: Path,
    perturbed: Path,
    json_path: Path | None,
    parser: str,
    skip_mismatched: bool,
    device: str | None,
    batch_size: int,
) -> None:
    """Grade each changed sentence of PERTURBED against its gold tree in ORIGINAL.

    Sentences are paired by sent_id. A perturbation is tree-valid when the original
    gold tree (heads, relations, UPOS) is still its analysis, grammatical when it is
    also well-formed English, and meaning-kept when it is also a paraphrase
    (docs/validity.md says how each is judged). Prints the share valid per level and
    per method (MISC Perturbation=); --json writes the verdicts and the evidence of
    every check per sentence.

    Example: brittle grade en_ewt-ud-test.conllu ewt-copos.conllu --json grades.jsonl
    """
    check_no_overlap(
        [*named("ORIGINAL", original), *named("PERTURBED", perturbed)], named("--json", json_path)
    )
    if json_path is not None:
        check_output(json_path)
    grader = Grader(parser=parser, device=check_device(device))
    run = grade_files(
        original, perturbed, grader=grader, batch_size=batch_size, skip_mismatched=skip_mismatched
    )
    if json_path is not None:
        write_grades(run.grades, json_path)
    render_summary(run, on=message_console(json_path))
