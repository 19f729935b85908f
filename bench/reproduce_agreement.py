"""Chaves & Richter's agreement experiments 1 and 2 with brittle's own commands, the
worst-case search over their grammar and a structural probe on their stimuli.

1. ``brittle agreement stimuli`` writes the default design (seed 0: 2,800 stimuli of
   experiment 1, 480 of experiment 2; docs/agreement.md);
2. ``brittle agreement score`` scores them with the bundled causal SmolLM2-135M (the
   paper's causal side used GPT-2 small and medium; no masked LM with its MLM head is
   available offline, so the BERT side is not run);
3. ``brittle agreement attack --experiment 1 --experiment 2 --items 1 --budget 3
   --queries 200 --batch-size 64`` searches the 16 hardest cells of the first frame of
   each verb pair under SmolLM2, once with ``--search beam`` (width 4) and once with
   ``--search sample --candidates 100``;
4. ``brittle train-probe`` trains the page's MiniLM structural probe (LinES train + EWT
   dev, early stopping on GUM dev, ``--layer -5 --task distance --epochs 15``) and
   ``brittle agreement probe`` runs it on the stimuli of step 1.

It prints, per experiment, how many conditions pass the paper's one-tailed paired
t-test (S(correct) < S(wrong), p < 0.05), experiment 2's accuracy per condition, the
paper's Table 4 cell (E4, mismatching context) per verb, each search's means and what it
changed, and the probe per depth. Steps whose output exists are skipped; the wall time
of each search and of the probe run is kept beside its output (``WORK/NAME.seconds``)
and in the figures.

The figures are kept in ``docs/agreement.json`` (``--measured``; ``--render`` prints the
tables from it and runs nothing), and ``--write-doc`` writes docs/agreement.md's blocks:
the two accuracy grids (``agreement-exp1-accuracy``: experiment 1 per target, attractors
and depth; ``agreement-exp2-accuracy``: experiment 2 per target, matrix subject and
depth), the beam search's mean margins and accuracies (``agreement-search``) and its
worst stimulus per experiment and target number (``agreement-search-worst``), the
probe's figures per verb (``agreement-probe``), and the example tables below.

``--examples`` prints only docs/agreement.md's two example tables (item 0 of the
default design, seed 0; no model runs) and, with ``--write-doc``, writes them into the
page between ``<!-- generated: agreement-exp1-example -->`` / ``agreement-exp2-example``
and ``<!-- end generated -->`` (``make docs`` does; a test renders them again).

Usage::

    python bench/reproduce_agreement.py [--work DIR] [--json OUT.json] [--write-doc]
    python bench/reproduce_agreement.py --render [--write-doc]
    python bench/reproduce_agreement.py --examples [--write-doc]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TypedDict

from reproduce_common import TRAIN, UD, add_doc_options, brittle, kept_figures, publish

from brittle.engine.agreement.stimuli import build_sentence, design_frames

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "agreement.md"
#: The figures the page's generated tables are rendered from.
MEASURED = ROOT / "docs" / "agreement.json"
#: The paper's significance level for a condition.
ALPHA = 0.05
#: ``brittle agreement attack``'s cells and limits on the page: the first frame of each
#: verb pair of both experiments, at most 3 choices changed, 200 sentences scored per cell.
ATTACK = (
    "--experiment", 1, "--experiment", 2, "--items", 1, "--budget", 3, "--queries", 200,
    "--batch-size", 64,
)  # fmt: skip
#: The searches run on those cells: beam (of width 4, the default; the page's tables) and
#: 100 random stimuli (the page's comparison).
SEARCHES: dict[str, tuple[object, ...]] = {
    "beam": ("--search", "beam"),
    "sample": ("--search", "sample", "--candidates", 100),
}
#: The structural probe run on the stimuli: MiniLM hidden state -5, early stopping on
#: GUM dev, 15 epochs at most.
PROBE = "minilm-5-distance"
PROBE_DEV = UD / "UD_English-GUM/en_gum-ud-dev.conllu"
PROBE_ARGS = ("--layer", -5, "--task", "distance", "--epochs", 15)


class ScoredCell(TypedDict):
    """What ``agreement score``'s ``summary.json`` gives each cell it scores: the model,
    the experiment, the items, the accuracy, the mean surprisals of the right and the
    wrong form and their margin, and the t-test."""

    model: str
    experiment: str
    n: int
    accuracy: float
    s_correct: float
    s_wrong: float
    margin: float
    t: float | None
    df: int | None
    p: float | None


class ConditionRow(ScoredCell):
    """One condition of ``agreement score``'s ``summary.json`` (``by_condition``)."""

    condition: str


class HardestRow(ScoredCell):
    """One verb's cell of the paper's Table 4 (``summary.json``'s ``hardest``)."""

    verb: str


class AttackItem(TypedDict):
    """One searched cell of ``agreement attack``'s ``summary.json`` (``items``): its
    starting stimulus's id, the margins (bits) of the starting cell, of the item's worst
    design cell and of the worst stimulus found, the choices changed and its text."""

    model: str
    base: str
    base_margin: float
    worst_margin: float
    design_worst_margin: float
    changes: list[str]
    queries: int
    text: str


class SearchFigures(TypedDict):
    """One search of the cells: the attack's resolved options, its time (``None``: not
    timed) and its cells."""

    config: dict[str, object]
    seconds: float | None
    items: list[AttackItem]


class ProbeRow(TypedDict):
    """A row of ``agreement probe``'s ``probes.json``: the probe's means over one
    experiment, verb pair (``all``) and depth (``-1``: all depths); the attachment
    shares are over the stimuli with attractors (``None``: there are none)."""

    experiment: int
    verb: str
    depth: int
    n: int
    uuas: float
    verb_target: float
    verb_attractor: float | None
    attractor_instead: float | None
    closer_attractor: float | None


class ProbeFigures(TypedDict):
    """The structural probe: its name, its dev UUAS, the time ``agreement probe`` took
    on the stimuli (``None``: not timed) and its rows."""

    name: str
    dev_uuas: float
    seconds: float | None
    rows: list[ProbeRow]


class Figures(TypedDict):
    """What ``docs/agreement.json`` keeps: the scored model, the significant conditions
    per experiment, ``score``'s conditions and Table 4 cells, the searches by name and
    the probe."""

    model: str
    counts: dict[str, dict[str, int]]
    by_condition: list[ConditionRow]
    hardest: list[HardestRow]
    searches: dict[str, SearchFigures]
    probe: ProbeFigures


def significant(row: ConditionRow) -> bool:
    """Whether a condition's one-tailed paired t-test rejects at ``ALPHA``."""
    return row["p"] is not None and row["p"] < ALPHA


def example_blocks() -> dict[str, str]:
    """docs/agreement.md's example tables: item 0 of ``is/are`` in experiment 1 (target
    singular, attractors plural, E0-E4) and of experiment 2 (target plural, E4, every
    matrix subject), from the default design (``brittle agreement stimuli``, seed 0)."""
    frames = design_frames(seed=0)
    exp1 = [
        f
        for f in frames
        if f.experiment == 1
        and f.verb == "is"
        and f.item == 0
        and f.target_number == "sg"
        and f.numbers[0] == "pl"
    ]
    exp2 = [
        f
        for f in frames
        if f.experiment == 2 and f.item == 0 and f.target_number == "pl" and f.depth == 4
    ]
    one = ["| depth | item 0 of `is/are`, target sg, attractors pl (seed 0) |", "| --- | --- |"]
    one += [f"| E{f.depth} | {build_sentence(f).text} |" for f in exp1]
    two = ["| matrix | item 0, target pl, E4 (seed 0) |", "| --- | --- |"]
    two += [f"| {f.matrix} | {build_sentence(f).text} |" for f in exp2]
    return {
        "agreement-exp1-example": "\n".join(one) + "\n",
        "agreement-exp2-example": "\n".join(two) + "\n",
    }


def accuracy_blocks(table: Figures) -> dict[str, str]:
    """docs/agreement.md's accuracy grids: experiment 1 per target and attractors
    number (rows) and depth E0-E4 (columns), experiment 2 per target and matrix subject
    and depth E1-E4, from the conditions' rows (``target-context-E<depth>``)."""
    cells: dict[str, dict[tuple[str, str], dict[str, float]]] = {"1": {}, "2": {}}
    for r in table["by_condition"]:
        target, context, depth = str(r["condition"]).split("-")
        row = cells[str(r["experiment"])].setdefault((target, context), {})
        row[depth] = float(r["accuracy"])
    out: dict[str, str] = {}
    for experiment, (name, heading, digits) in {
        "1": ("agreement-exp1-accuracy", "attractors", 3),
        "2": ("agreement-exp2-accuracy", "matrix subject", 2),
    }.items():
        rows = cells[experiment]
        depths = sorted({d for row in rows.values() for d in row})
        lines = [
            f"| target | {heading} | " + " | ".join(depths) + " |",
            "| --- | --- |" + " ---: |" * len(depths),
        ]
        for (target, context), row in rows.items():
            values = " | ".join(f"{row[d]:.{digits}f}" for d in depths)
            lines.append(f"| {target} | {context} | {values} |")
        out[name] = "\n".join(lines) + "\n"
    return out


def cell(item: AttackItem) -> tuple[str, str]:
    """The experiment (``1``, ``2``) and target number (``sg``, ``pl``) of a searched
    cell, from its starting stimulus's id (``agr<experiment>-<verb>-<item>-<target>-...``)."""
    experiment, _, _, target = item["base"].split("-")[:4]
    return experiment.removeprefix("agr"), target


def _margins(items: Sequence[AttackItem]) -> str:
    """``| start | design worst | found | accuracies |`` of a group of cells: the mean
    margins and the share of cells whose margin is below 0 (the agreeing form wins)."""

    def mean(values: list[float]) -> float:
        return sum(values) / len(values)

    columns = [
        [i["base_margin"] for i in items],
        [i["design_worst_margin"] for i in items],
        [i["worst_margin"] for i in items],
    ]
    margins = " | ".join(f"{mean(c):+.2f}" for c in columns)
    right = " / ".join(f"{mean([float(m < 0) for m in c]):.2f}" for c in columns)
    return f"{margins} | {right}"


def search_blocks(search: SearchFigures) -> dict[str, str]:
    """docs/agreement.md's tables of a search: the mean margins and accuracies over all
    cells, experiment 1 per target number and experiment 2 (``agreement-search``), and
    the worst stimulus found per experiment and target number, the margin its
    starting cell had and the choices changed (``agreement-search-worst``)."""
    items = search["items"]
    groups: dict[tuple[str, str], list[AttackItem]] = {}
    for i in items:
        groups.setdefault(cell(i), []).append(i)
    exp2 = [i for i in items if cell(i)[0] == "2"]
    rows = [(f"all {len(items)}", items)]
    rows += [
        (f"exp. 1, {target} target ({len(group)})", group)
        for target in ("sg", "pl")
        if (group := groups.get(("1", target), []))
    ]
    rows += [(f"exp. 2 ({len(exp2)})", exp2)] if exp2 else []
    table = [
        "| cells | starting cell | design worst | found | accuracy start / design worst / found |",
        "| --- | ---: | ---: | ---: | ---: |",
        *(f"| {label} | {_margins(group)} |" for label, group in rows),
    ]
    worst = ["| margin | changes | stimulus |", "| --- | --- | --- |"]
    for key in sorted(groups, key=lambda k: (k[0], k[1] != "sg")):
        w = max(groups[key], key=lambda i: i["worst_margin"])
        worst.append(
            f"| {w['base_margin']:+.2f} -> {w['worst_margin']:+.2f} "
            f"| {' '.join(w['changes']) or '-'} | {w['text']} |"
        )
    return {
        "agreement-search": "\n".join(table) + "\n",
        "agreement-search-worst": "\n".join(worst) + "\n",
    }


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def probe_block(probe: ProbeFigures) -> dict[str, str]:
    """docs/agreement.md's table of the probe on experiment 1, per verb pair over all
    depths: UUAS and the attachment shares of the verb (``agreement-probe``)."""
    lines = [
        "| verb | UUAS | verb_target | closer_attractor | verb_attractor |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for r in probe["rows"]:
        if r["experiment"] == 1 and r["depth"] < 0 and r["verb"] != "all":
            lines.append(
                f"| {r['verb']} | {r['uuas']:.3f} | {r['verb_target']:.3f} "
                f"| {_share(r['closer_attractor'])} | {_share(r['verb_attractor'])} |"
            )
    return {"agreement-probe": "\n".join(lines) + "\n"}


def page_blocks(table: Figures) -> dict[str, str]:
    """Every generated block of docs/agreement.md, from the kept figures (and the
    default design, for the examples)."""
    return {
        **accuracy_blocks(table),
        **search_blocks(table["searches"]["beam"]),
        **probe_block(table["probe"]),
        **example_blocks(),
    }


def timed(seconds: Path, *args: object) -> None:
    """Run one brittle command and keep its wall time (seconds) in ``seconds``."""
    start = time.monotonic()
    brittle(*args)
    seconds.write_text(f"{time.monotonic() - start:.1f}\n")


def kept_seconds(seconds: Path) -> float | None:
    """The time :func:`timed` kept (``None``: the step was not timed)."""
    return float(seconds.read_text()) if seconds.exists() else None


def measure_search(work: Path, name: str) -> SearchFigures:
    """``brittle agreement attack`` on the page's cells with the search ``name`` (a key
    of :data:`SEARCHES`), in ``WORK/attack-NAME`` unless it is there."""
    out = work / f"attack-{name}"
    if not (out / "summary.json").exists():
        timed(
            work / f"attack-{name}.seconds", "agreement", "attack", *ATTACK, *SEARCHES[name],
            "--out", out, "--quiet",
        )  # fmt: skip
    summary = json.loads((out / "summary.json").read_text())
    return {
        "config": summary["config"],
        "seconds": kept_seconds(work / f"attack-{name}.seconds"),
        "items": summary["items"],
    }


def measure_probe(work: Path, stimuli: Path) -> ProbeFigures:
    """The page's MiniLM structural probe (trained in ``WORK/probes/minilm-5-distance``
    unless it is there) run on ``stimuli`` by ``brittle agreement probe`` (``WORK/probe``)."""
    probe = work / "probes" / PROBE
    if not (probe / "probe.json").exists():
        brittle("train-probe", *TRAIN, "--dev", PROBE_DEV, *PROBE_ARGS, "--quiet", "--out", probe)
    out = work / "probe"
    if not (out / "probes.json").exists():
        timed(
            work / "probe.seconds", "agreement", "probe", stimuli, "--probe", probe,
            "--out", out, "--quiet",
        )  # fmt: skip
    rows = json.loads((out / "probes.json").read_text())["rows"]
    return {
        "name": PROBE,
        "dev_uuas": json.loads((probe / "probe.json").read_text())["dev_metrics"]["uuas"],
        "seconds": kept_seconds(work / "probe.seconds"),
        "rows": [
            {
                "experiment": r["experiment"],
                "verb": r["verb"],
                "depth": r["depth"],
                "n": r["n"],
                "uuas": r["uuas"],
                "verb_target": r["verb_target"],
                "verb_attractor": r["verb_attractor"],
                "attractor_instead": r["attractor_instead"],
                "closer_attractor": r["closer_attractor"],
            }
            for r in rows
        ],
    }


def measure(work: Path) -> Figures:
    """The default design scored by SmolLM2, searched and probed (module docstring),
    steps whose output exists skipped."""
    work.mkdir(parents=True, exist_ok=True)
    stimuli = work / "agreement.conllu"
    if not stimuli.exists():
        brittle("agreement", "stimuli", stimuli, "--quiet")
    scores = work / "score"
    if not (scores / "summary.json").exists():
        brittle("agreement", "score", stimuli, "--out", scores, "--batch-size", 64, "--quiet")
    summary = json.loads((scores / "summary.json").read_text())
    rows: list[ConditionRow] = summary["by_condition"]
    (model,) = summary["models"]
    counts: dict[str, dict[str, int]] = {}
    for experiment in sorted({r["experiment"] for r in rows}):
        mine = [r for r in rows if r["experiment"] == experiment]
        counts[experiment] = {"conditions": len(mine), "significant": sum(map(significant, mine))}
    return {
        "model": model,
        "counts": counts,
        "by_condition": rows,
        "hardest": summary["hardest"],
        "searches": {name: measure_search(work, name) for name in SEARCHES},
        "probe": measure_probe(work, stimuli),
    }


def print_tables(table: Figures) -> None:
    """The conditions passing the paper's test per experiment, experiment 2 per
    condition and the paper's Table 4 cell per verb, on stdout."""
    rows = table["by_condition"]
    print(f"{table['model']}: conditions with S(correct) < S(wrong) at p < {ALPHA} (one-tailed):\n")
    print("| experiment | conditions | significant | accuracy min–max |")
    print("| --- | ---: | ---: | --- |")
    for experiment, count in table["counts"].items():
        acc = [r["accuracy"] for r in rows if r["experiment"] == experiment]
        print(
            f"| {experiment} | {count['conditions']} | {count['significant']} "
            f"| {min(acc):.3f}–{max(acc):.3f} |"
        )
    exp2 = [r for r in rows if r["experiment"] == "2"]
    print("\nExperiment 2 (was/were), accuracy per condition (target-matrix-depth):\n")
    print("| condition | n | accuracy | t | p |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for r in exp2:
        t = "–" if r["t"] is None else f"{r['t']:.1f}"
        p = "–" if r["p"] is None else f"{r['p']:.2g}"
        print(f"| {r['condition']} | {r['n']} | {r['accuracy']:.2f} | {t} | {p} |")
    print("\nTable 4 (E4, mismatching context), accuracy per verb:\n")
    print("| experiment | verb | n | accuracy |")
    print("| --- | --- | ---: | ---: |")
    for h in table["hardest"]:
        print(f"| {h['experiment']} | {h['verb']} | {h['n']} | {h['accuracy']:.3f} |")
    print()
    for name, search in table["searches"].items():
        print_search(name, search)
    print_probe(table["probe"])


def _took(seconds: float | None) -> str:
    return "not timed" if seconds is None else f"{int(seconds) // 60} min {int(seconds) % 60} s"


def print_search(name: str, search: SearchFigures) -> None:
    """What the page's prose says of a search, on stdout: its time, the mean shifts of
    the margin, the cells it improved, the experiment-1 cells it turned into errors among
    those whose every design cell is right, and how often it changed each kind of
    choice."""
    items = search["items"]
    n = len(items)
    base = sum(i["worst_margin"] - i["base_margin"] for i in items) / n
    design = sum(i["worst_margin"] - i["design_worst_margin"] for i in items) / n
    right = [i for i in items if cell(i)[0] == "1" and i["design_worst_margin"] < 0]
    turned = sum(i["worst_margin"] >= 0 for i in right)
    slots = Counter(s for i in items for s in {c.split("=")[0].split(".")[0] for c in i["changes"]})
    print(f"Search {name} ({_took(search['seconds'])}), {n} cells:\n")
    print(f"- found margin {sum(i['worst_margin'] for i in items) / n:+.2f} bits: {base:+.2f} ")
    print(f"  against the starting cell, {design:+.2f} against the design worst;")
    print(f"- {sum(bool(i['changes']) for i in items)} of {n} cells improved, mean queries ")
    print(f"  {sum(i['queries'] for i in items) / n:.0f};")
    print(f"- {turned} of the {len(right)} experiment-1 cells whose design cells are all right ")
    print("  turned into errors;")
    print(
        "- cells changing each kind of choice: "
        + ", ".join(f"{k} {v}" for k, v in slots.most_common())
    )
    print()


def print_probe(probe: ProbeFigures) -> None:
    """The probe per depth (both experiments) and its verb-to-attractor joins, on
    stdout."""
    print(f"Probe {probe['name']} (dev UUAS {probe['dev_uuas']:.3f}; {_took(probe['seconds'])}):\n")
    print("| experiment | depth | n | UUAS | verb_target | verb_attractor | closer_attractor |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    joined = 0.0
    with_attractors = 0
    for r in probe["rows"]:
        if r["verb"] != "all":
            continue
        if r["experiment"] == 1 and r["verb_attractor"] is not None:
            joined += r["verb_attractor"] * r["n"]
            with_attractors += r["n"]
        print(
            f"| {r['experiment']} | E{r['depth']} | {r['n']} | {r['uuas']:.3f} "
            f"| {r['verb_target']:.3f} | {_share(r['verb_attractor'])} "
            f"| {_share(r['closer_attractor'])} |"
        )
    print(f"\nexperiment 1: the verb joined to an attractor in {joined:.0f} of {with_attractors}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("reproduce-agreement"))
    parser.add_argument("--json", type=Path, default=None, help="write the tables here")
    parser.add_argument(
        "--examples", action="store_true", help="only the page's example tables (no model)"
    )
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    if args.examples:
        publish(example_blocks(), DOC, write=args.write_doc)
        return 0
    table = kept_figures(args, lambda: measure(args.work))
    print_tables(table)
    if args.json is not None:
        args.json.write_text(json.dumps(table, indent=2) + "\n")
    publish(page_blocks(table), DOC, write=args.write_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
