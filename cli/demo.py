"""``brittle demo``: the main job end to end on the built-in treebank."""

from __future__ import annotations

from pathlib import Path

import click

from brittle.cli.attack import print_summary, run_with_progress
from brittle.cli.common import console, quiet_option, verbose_option
from brittle.cli.group import main
from brittle.cli.probe_progress import RichReporter
from brittle.engine.demo import check_demo_out, demo_config, prepare_demo, train_demo_probes


@main.command("demo")
@click.option(
    "--out",
    default="brittle-demo",
    show_default=True,
    type=click.Path(path_type=Path),
    help="Where the reports go (replaced).",
)
@click.option("--limit", type=int, default=None, help="Attack only the first N sentences.")
@quiet_option
@verbose_option
def demo_command(out: Path, limit: int | None, quiet: bool, verbose: bool) -> None:
    """Run the whole job on brittle's built-in UD English treebank, offline.

    Trains two linear probes (structural distance and POS) on layer -5 of the bundled
    MiniLM from the first 80 sentences (cached in the data home after the first run),
    then searches, for each of the last 24 sentences, the coPOS synonym substitution of
    at most 2 words that most damages them while the spaCy re-parse stays within a
    normalised tree edit distance of 0.2 and the sentence stays English (the
    similarity, fluency and word-similarity constraints). Prints the worst-case drop
    per task and
    writes adversarial.conllu, results.jsonl, summary.json, summary.md, plots/ and
    report.html (open it in a browser) to OUT.

    Training prints one line per probe (--verbose: also one per epoch; --quiet: one
    line for all, and no progress bars).
    """
    reporter = RichReporter(quiet=quiet, verbose=verbose)
    plan = prepare_demo()
    config = demo_config(plan, limit=limit)  # checks --limit before any training
    check_demo_out(out)
    console.print(f"[bold]brittle demo[/] · built-in treebank, splits in {plan.home}")
    with reporter:
        trained = train_demo_probes(plan, reporter=reporter)
    if not trained:
        console.print("reusing cached probes: " + ", ".join(p.name for p in plan.probes))
    elif quiet:  # otherwise each probe had its line
        console.print(f"trained {len(trained)} probe(s): " + ", ".join(p.name for p in trained))
    summary = run_with_progress(
        config, out, resume=False, overwrite=True, label="attack", quiet=quiet
    )
    print_summary(summary)
    console.print(
        f"reports written to {out}/ (summary.md, adversarial.conllu, plots/); "
        f"open {out / 'report.html'} in a browser"
    )
