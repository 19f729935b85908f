"""``brittle agreement``: subject-verb agreement under attractors (Chaves & Richter).

Sub-commands: ``stimuli`` writes the controlled design as CoNLL-U with gold trees,
``score`` measures which verb form language models prefer, ``attack`` searches the
grammar for the stimuli that mislead a model most, ``probe`` runs trained probes on
stimuli. The logic lives in :mod:`brittle.engine.agreement`.
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from brittle.cli.common import (
    console,
    message_console,
    probes_option,
    progress_bar,
    quiet_option,
    search_option,
)
from brittle.cli.group import main
from brittle.engine.agreement.lexicon import VERB_PAIRS
from brittle.engine.agreement.probing import probe_stimuli, write_probe_outputs
from brittle.engine.agreement.run import (
    attack_models,
    read_stimuli,
    score_models,
    write_attack_outputs,
    write_score_outputs,
    write_stimuli,
)
from brittle.engine.core.atomic import check_output
from brittle.engine.core.errors import ConfigError
from brittle.engine.core.overlap import check_no_overlap, named
from brittle.search.strategies.base import STRATEGIES

_VERBS = [p.singular for p in VERB_PAIRS]
_MODEL_HELP = (
    "A language model: a local directory, a hub id, or smollm2 (the bundled SmolLM2-135M, "
    "the default). Repeat for several; masked LMs (BERT-style, with their MLM head) are "
    "read with the verb slot masked and the whole sentence visible, causal LMs from the "
    "left context only."
)


@main.group("agreement")
def agreement() -> None:
    """Subject-verb agreement under attractors (after Chaves & Richter).

    \b
    A typical session:
      brittle agreement stimuli agreement.conllu          # the 2x2x5 and 2x3x4 designs
      brittle agreement score agreement.conllu --out agr/ # accuracies, t-tests, tables
      brittle agreement attack --out agr-attack/          # worst-case stimuli per item
      brittle agreement probe agreement.conllu --probe probes/distance

    The stimuli are ordinary CoNLL-U (gold trees, Number features), so every other
    brittle command reads them too. docs/agreement.md describes the design.
    """


@agreement.command("stimuli")
@click.argument("out", type=click.Path(path_type=Path, allow_dash=True))
@click.option(
    "--experiment",
    "experiments",
    type=click.Choice(["1", "2"]),
    multiple=True,
    help="1: local agreement (target next to the verb, attractors in E0-E4 embeddings "
    "before it); 2: long-distance agreement (an it-cleft across E1-E4 embeddings). "
    "Repeat for both (the default).",
)
@click.option(
    "--items",
    default=20,
    show_default=True,
    type=click.IntRange(min=1),
    help="Lexical frames per verb pair, each realised in every condition.",
)
@click.option(
    "--verb",
    "verbs",
    type=click.Choice(_VERBS),
    multiple=True,
    help="Experiment-1 verb pairs by their singular form (repeatable; default all seven). "
    "Experiment 2 always uses was/were.",
)
@click.option("--seed", default=0, show_default=True, help="Seed of the lexical draws.")
@quiet_option
def stimuli_command(
    out: Path,
    experiments: tuple[str, ...],
    items: int,
    verbs: tuple[str, ...],
    seed: int,
    quiet: bool,
) -> None:
    """Write the agreement stimuli to OUT as CoNLL-U (`-`: standard output).

    Every sentence carries a gold UD tree, UPOS/XPOS and FEATS (Number on nouns,
    pronouns and the agreeing verb, which is written in its agreeing form), MISC
    Agreement=Target|Verb|Attractor on the words that matter, and `# agreement_*`
    comments (experiment, condition, verb pair, item). The same seed writes the same
    file byte for byte.
    """
    check_output(out)
    n = write_stimuli(
        out,
        experiments=tuple(int(e) for e in experiments) or (1, 2),
        items=items,
        seed=seed,
        verbs=list(verbs) or None,
    )
    if not quiet:
        message_console(out).print(f"wrote {n:,} stimuli to {out}")


@agreement.command("score")
@click.argument("stimuli", type=click.Path(path_type=Path))
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Output directory.")
@click.option("--model", "models", multiple=True, metavar="MODEL", help=_MODEL_HELP)
@click.option(
    "--kind",
    type=click.Choice(["auto", "causal", "masked"]),
    default="auto",
    show_default=True,
    help="How to read the models: auto (from each model's config), causal or masked.",
)
@click.option("--batch-size", default=32, show_default=True, type=click.IntRange(min=1))
@click.option("--device", default=None, help="cpu, cuda, cuda:N (default: cuda when available).")
@quiet_option
def score_command(
    stimuli: Path,
    out: Path,
    models: tuple[str, ...],
    kind: str,
    batch_size: int,
    device: str | None,
    quiet: bool,
) -> None:
    """Surprisal of the singular and plural verb form in every stimulus of STIMULI.

    S(w) = -log2 p(w) at the verb slot; an item is correct when the agreeing form has
    the lower surprisal. Writes to --out: scores.tsv (one line per item and model),
    summary.json and report.md (accuracy per condition, verb and depth; one-tailed
    paired t-tests of S(correct) < S(wrong) per condition and per verb; accuracy at E4
    with mismatching attractors per verb and model).
    """
    check_no_overlap(named("STIMULI", stimuli), named("--out", out))
    check_output(out, directory=True)
    items = read_stimuli(stimuli)
    names: list[str | None] = list(models) or [None]
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with progress_bar(*columns, quiet=quiet) as bar:
        tasks: dict[str, object] = {}

        def advance(label: str, n: int, total: int) -> None:
            if label not in tasks:
                tasks[label] = bar.add_task(f"scoring with {label}", total=None)
            bar.advance(tasks[label], n)  # type: ignore[arg-type]

        run = score_models(
            items,
            names,
            kind=kind,  # type: ignore[arg-type]
            device=device,
            batch_size=batch_size,
            progress=advance,
        )
    config: dict[str, object] = {
        "stimuli": str(stimuli),
        "models": [m or "smollm2" for m in names],
        "kind": kind,
        "batch_size": batch_size,
    }
    write_score_outputs(run, out, config=config)
    if not quiet:
        for model in run.summary.models:
            acc = [s.correct for s in run.scores if s.model == model]
            console.print(
                f"{model} ({run.kinds[model]}): accuracy {sum(acc) / len(acc):.3f} "
                f"over {len(acc):,} items"
            )
        console.print(f"wrote {out}/scores.tsv, summary.json and report.md")


@agreement.command("attack")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Output directory.")
@click.option("--model", "models", multiple=True, metavar="MODEL", help=_MODEL_HELP)
@click.option(
    "--kind",
    type=click.Choice(["auto", "causal", "masked"]),
    default="auto",
    show_default=True,
    help="How to read the models: auto (from each model's config), causal or masked.",
)
@click.option(
    "--experiment",
    "experiments",
    type=click.Choice(["1", "2"]),
    multiple=True,
    help="Which experiment's stimuli to attack (repeatable; default 1).",
)
@click.option(
    "--verb",
    "verbs",
    type=click.Choice(_VERBS),
    multiple=True,
    help="Experiment-1 verb pairs (repeatable; default all seven).",
)
@click.option(
    "--items",
    default=5,
    show_default=True,
    type=click.IntRange(min=1),
    help="Design frames attacked per verb pair (each with both target numbers).",
)
@search_option("A search strategy: sample, greedy, beam (`brittle list strategies`).")
@click.option(
    "--budget",
    default=3,
    show_default=True,
    type=click.IntRange(min=1),
    help="Most choices changed from the starting stimulus (tau): an attractor noun and "
    "its number, the pronoun, an embedding verb, the depth, the matrix subject.",
)
@click.option(
    "--queries",
    default=200,
    show_default=True,
    type=click.IntRange(min=1),
    help="Most distinct sentences scored per attacked item.",
)
@click.option("--beam-width", default=4, show_default=True, type=click.IntRange(min=1))
@click.option(
    "--candidates",
    default=100,
    show_default=True,
    type=click.IntRange(min=1),
    help="Random stimuli drawn per item by --search sample.",
)
@click.option("--seed", default=0, show_default=True, help="Seed of the design and the search.")
@click.option("--batch-size", default=32, show_default=True, type=click.IntRange(min=1))
@click.option("--device", default=None, help="cpu, cuda, cuda:N (default: cuda when available).")
@quiet_option
def attack_command(
    out: Path,
    models: tuple[str, ...],
    kind: str,
    experiments: tuple[str, ...],
    verbs: tuple[str, ...],
    items: int,
    search: str,
    budget: int,
    queries: int,
    beam_width: int,
    candidates: int,
    seed: int,
    batch_size: int,
    device: str | None,
    quiet: bool,
) -> None:
    """Search the stimulus grammar for the stimuli that mislead a model most.

    Starts from the design's hardest cells (depth 4 with attractors of the other
    number; experiment 2: the complex matrix subject) and changes up to --budget
    choices to maximise the error margin S(correct) - S(wrong), with the registered
    search strategies. The target noun, its number, the verb and (experiment 1) the
    words from the target to the verb never change, and the target stays the subject of
    the verb in the gold tree. Writes to --out: worst.conllu (the worst stimulus per
    item and model), summary.json and report.md (how far the margin moves against the
    starting cell and against the item's worst design cell).

    Example: brittle agreement attack --experiment 1 --experiment 2 --items 2
    --search beam --budget 3 --queries 250 --out agr-attack/
    """
    if search not in STRATEGIES:
        raise ConfigError(f"unknown search {search!r} (known: {', '.join(STRATEGIES.names())})")
    check_output(out, directory=True)
    names: list[str | None] = list(models) or [None]
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with progress_bar(*columns, quiet=quiet) as bar:
        tasks: dict[str, object] = {}

        def advance(label: str, done: int, total: int) -> None:
            if label not in tasks:
                tasks[label] = bar.add_task(f"attacking {label}", total=total)
            bar.update(tasks[label], completed=done)  # type: ignore[arg-type]

        run = attack_models(
            names,
            experiments=tuple(int(e) for e in experiments) or (1,),
            verbs=list(verbs) or None,
            items=items,
            seed=seed,
            search=search,
            budget=budget,
            queries=queries,
            parameters={"beam_width": beam_width, "candidates": candidates},
            kind=kind,  # type: ignore[arg-type]
            device=device,
            batch_size=batch_size,
            progress=advance,
        )
    write_attack_outputs(run, out)
    if not quiet:
        for label, r in run.summary().items():
            console.print(
                f"{label}: margin {r['base_margin']:+.2f} -> {r['found_margin']:+.2f} bits "
                f"(design worst {r['design_worst_margin']:+.2f}); accuracy "
                f"{r['base_accuracy']:.2f} -> {r['found_accuracy']:.2f} over {r['items']} items"
            )
        console.print(f"wrote {out}/worst.conllu, summary.json and report.md")


@agreement.command("probe")
@click.argument("stimuli", type=click.Path(path_type=Path))
@probes_option("A probe directory from train-probe; repeat for several.")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Output directory.")
@click.option(
    "--device", default=None, help="cpu, cuda, cuda:N or mps (default: cuda when available)."
)
@quiet_option
def probe_command(
    stimuli: Path, probes: tuple[Path, ...], out: Path, device: str | None, quiet: bool
) -> None:
    """Run trained probes on the agreement STIMULI, per verb pair and depth.

    Each probe's per-sentence metrics (UUAS, DSpr, accuracy, ... as its task defines)
    are averaged per experiment, verb pair and embedding depth. A distance probe also
    gives a predicted tree (minimum spanning tree of its distances, punctuation left
    out): verb_attractor is the share of stimuli whose verb it joins directly to an
    attractor, verb_target the share joined to the target, attractor_instead the share
    joined to an attractor and not to the target, closer_attractor the share with an
    attractor nearer the verb than the target (the table shows them as v-attr,
    attr-only, v-target and closer). Writes probes.json and report.md to --out.
    (`brittle evaluate STIMULI --probe DIR` gives the overall metrics beside the
    baselines.)
    """
    check_no_overlap([*named("STIMULI", stimuli), *named("--probe", probes)], named("--out", out))
    check_output(out, directory=True)
    for p in probes:
        if not (p / "probe.json").is_file():
            raise ConfigError(f"{p} is not a probe directory (no probe.json): see train-probe")
    items = read_stimuli(stimuli)
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with progress_bar(*columns, quiet=quiet) as bar:
        tasks: dict[str, object] = {}

        def advance(name: str, n: int) -> None:
            if name not in tasks:
                tasks[name] = bar.add_task(f"vectors for {name}", total=len(items))
            bar.advance(tasks[name], n)  # type: ignore[arg-type]

        rows = probe_stimuli(items, probes, device=device, progress=advance)
    write_probe_outputs(
        rows, out, config={"stimuli": str(stimuli), "probes": [str(p) for p in probes]}
    )
    if not quiet:
        table = Table(title="probes on the stimuli (all depths)")
        shown = {
            "verb_attractor": "v-attr",
            "attractor_instead": "attr-only",
            "verb_target": "v-target",
            "closer_attractor": "closer",
        }
        table.add_column("probe", overflow="fold")
        for col in ("exp", "verb", "n"):
            table.add_column(col, no_wrap=True)
        firsts = [k for r in rows for k in list(r.metrics)[:1]]
        names = [*dict.fromkeys(firsts), *(k for k in shown if any(k in r.metrics for r in rows))]
        for k in names:
            table.add_column(shown.get(k, k), justify="right", no_wrap=True)
        for r in rows:
            if r.depth < 0:
                cells = [
                    f"{r.metrics[k]:.3f}" if k in r.metrics and r.metrics[k] == r.metrics[k] else ""
                    for k in names
                ]
                table.add_row(r.probe, str(r.experiment), r.verb, str(r.n), *cells)
        console.print(table)
        console.print(f"wrote {out}/probes.json and report.md")
