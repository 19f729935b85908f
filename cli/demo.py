"""``brittle demo``: the main job end to end on the built-in treebank."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import click
from rich.table import Table

from brittle.cli.attack import print_summary, run_with_progress
from brittle.cli.common import console, quiet_option, verbose_option
from brittle.cli.group import main
from brittle.cli.probe_progress import RichReporter
from brittle.engine.demo import (
    TREE_DIR,
    check_demo_out,
    demo_config,
    prepare_demo,
    train_demo_probes,
    tree_config,
)
from brittle.engine.reports.report import LEVELS, Summary, changed_sentences
from brittle.search.presets import PRESETS


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
    then searches, for each of the last 24 sentences, the synonym substitution of at
    most 2 words that most damages them under the meaning validity preset (coPOS
    synonyms of each word's sense in its sentence, each changed word and the sentence
    close in meaning, and brittle's judges grading it meaning-kept). Prints the worst-case drop
    per task and writes adversarial.conllu, results.jsonl, summary.json, summary.md,
    plots/ and report.html (open it in a browser) to OUT. Then runs the same search
    with the tree validity preset (Jabberwocky nonwords, which keep the gold tree by
    construction) into OUT/tree and prints both presets' rows side by side.

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
        config, out, resume=False, overwrite=True, label="attack", quiet=quiet, grade=True
    )
    print_summary(summary)
    tree = run_with_progress(
        tree_config(plan, limit=limit),
        out / TREE_DIR,
        resume=False,
        overwrite=True,
        label="tree preset",
        quiet=quiet,
        grade=True,
    )
    print_presets({"meaning": summary, "tree": tree})
    console.print(
        f"reports written to {out}/ (summary.md, adversarial.conllu, plots/; the tree "
        f"preset's in {out / TREE_DIR}/); open {out / 'report.html'} in a browser"
    )


def print_presets(summaries: Mapping[str, Summary]) -> None:
    """The presets side by side: what each keeps by construction, how many sentences it
    changed, the share of its kept perturbations graded valid at each level, and each
    task's mean worst-case drop."""
    tasks = sorted({t for s in summaries.values() for t in s["tasks"]})
    table = Table(title="Mean worst-case drop by validity preset")
    table.add_column("")
    for name in summaries:
        table.add_column(name, justify="right")
    table.add_row("keeps", *(PRESETS.get(name).level for name in summaries))
    changed = [f"{changed_sentences(s)}/{s['sentences']}" for s in summaries.values()]
    table.add_row("sentences changed", *changed)
    for level, label in zip(LEVELS, ("tree-valid", "grammatical", "meaning kept"), strict=True):
        table.add_row(f"graded {label}", *(_validity_share(s, level) for s in summaries.values()))
    for task in tasks:
        drops = [
            s["tasks"][task]["mean_drop"] if task in s["tasks"] else None
            for s in summaries.values()
        ]
        table.add_row(task, *("–" if d is None else f"{d:.3f}" for d in drops))
    console.print(table)


def _validity_share(summary: Summary, level: str) -> str:
    """The share of the kept perturbations graded valid at ``level`` (``–``: none
    graded)."""
    validity = summary.get("validity")
    if validity is None or not validity["graded"]:
        return "–"
    return f"{validity['shares'][level]:.0%}"
