"""``brittle demo``: the main job end to end on the built-in treebank."""

from __future__ import annotations

from pathlib import Path

import click

from brittle.cli.attack import print_summary, run_with_progress
from brittle.cli.common import console
from brittle.cli.group import main
from brittle.cli.probe_progress import RichReporter
from brittle.engine.demo import demo_config, prepare_demo, train_demo_probes


@main.command("demo")
@click.option(
    "--out",
    default="brittle-demo",
    show_default=True,
    type=click.Path(path_type=Path),
    help="Where the reports go (replaced).",
)
@click.option("--limit", type=int, default=None, help="Attack only the first N sentences.")
def demo_command(out: Path, limit: int | None) -> None:
    """Run the whole job on brittle's built-in UD English treebank, offline.

    Trains two linear probes (structural distance and POS) on layer -5 of the bundled
    MiniLM from the first 80 sentences (cached in the data home after the first run),
    then searches, for each of the last 24 sentences, the coPOS synonym substitution of
    at most 2 words that most damages them while the spaCy re-parse stays within a
    normalised tree edit distance of 0.2. Prints the worst-case drop per task and
    writes adversarial.conllu, results.jsonl, summary.json, summary.md and plots/ to OUT.
    """
    plan = prepare_demo()
    console.print(f"[bold]brittle demo[/] · built-in treebank, splits in {plan.home}")
    with RichReporter(quiet=False) as reporter:
        trained = train_demo_probes(plan, reporter=reporter)
    if trained:
        console.print(f"trained {len(trained)} probe(s): " + ", ".join(p.name for p in trained))
    else:
        console.print("reusing cached probes: " + ", ".join(p.name for p in plan.probes))
    summary = run_with_progress(
        demo_config(plan, limit=limit), out, resume=False, overwrite=True, label="attack"
    )
    print_summary(summary)
    console.print(f"reports written to {out}/ (summary.md, adversarial.conllu, plots/)")
