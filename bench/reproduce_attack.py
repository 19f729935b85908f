"""The opening tables of docs/attack.md, regenerated with today's defaults.

Probes: the linear structural distance and POS probes on MiniLM hidden state 2 (layer
-5) that ``reproduce_fragility.py`` trains on LinES train + EWT dev (trained here when
missing, with the same command). Data: the first 60 sentences of EWT test.

1. **The three searches** (the first table): ``brittle attack`` with coPOS and its
   default constraints, ``--search sample`` (b = 100), ``greedy`` and ``beam`` (width 4,
   10 options a position), ``--budget 1,2,3``, query budget 100, seed 0.
2. **The pools** (the second table): beam at tau 1-3 and sample at tau 1 again with
   La Malfa et al.'s pool (every lemma of every WordNet sense, words of any polysemy,
   no usage checks) and with today's coPOS pool, both under ``--constraint syntax:0.2``
   alone, beside the default runs of step 1 (today's pool and its default
   constraints). Each kept set is measured with
   :func:`brittle.search.quality.quality_of_files` (SmolLM2 surprisal increase, MiniLM
   similarity, spaCy re-tag agreement) and carries the attack's own validity grades.

Every run's directory is kept under ``--work``; a run whose summaries exist is not run
again. The figures go to ``docs/attack.json`` (``--measured``), the tables to stdout
and, with ``--write-doc``, into the generated blocks of docs/attack.md and the README
(``<!-- generated: NAME -->`` ... ``<!-- end generated -->``), which a test renders
again from the JSON. The brittle commands are printed on stderr.

Usage::

    python bench/reproduce_attack.py [--work reproduce/attack]
        [--probes reproduce/fragility/probes] [--write-doc] [--render]
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reproduce_common import (
    DEV,
    TEST,
    TRAIN,
    add_doc_options,
    brittle,
    kept_figures,
    publish,
    write_doc,
)

if TYPE_CHECKING:
    from brittle.search.quality import QualityMeter

ROOT = Path(__file__).resolve().parents[1]
#: The figures the page's tables are rendered from, and the page.
MEASURED = ROOT / "docs" / "attack.json"
DOC = ROOT / "docs" / "attack.md"
README = ROOT / "README.md"
BUDGETS = (1, 2, 3)
SEARCHES = ("sample", "greedy", "beam")
LIMIT = 60
#: The pools of the second table, each with its generator options and constraints
#: (``None``: the generator's default constraints).
POOLS: dict[str, tuple[tuple[str, ...], tuple[str, ...] | None]] = {
    "every sense": (
        (
            "--sense", "all", "-o", "min_count=0", "-o", "max_senses=0",
            "-o", "max_substitute_senses=0", "-o", "usage_checks=false",
        ),
        ("syntax:0.2",),
    ),
    "default, syntax:0.2 only": ((), ("syntax:0.2",)),
    "default": ((), None),
}  # fmt: skip
TASKS = ("distance.uuas", "pos.pos_acc")


def ensure_probes(probes: Path) -> list[Path]:
    """The MiniLM layer-2 distance and POS probes, trained when missing."""
    out = []
    for task in ("distance", "pos"):
        path = probes / f"minilm2-{task}"
        if not (path / "probe.json").exists():
            brittle(
                "train-probe", *TRAIN, "--dev", DEV, "--layer", "2", "--task", task,
                "--quiet", "--out", path,
            )  # fmt: skip
        out.append(path)
    return out


def attack(
    out: Path,
    probes: Sequence[Path],
    search: str,
    budgets: Sequence[int],
    *,
    options: Sequence[str] = (),
    constraints: Sequence[str] | None = None,
) -> dict[int, Path]:
    """One ``brittle attack`` over ``budgets`` into ``out`` (skipped when every budget's
    summary exists); each budget's run directory."""
    runs = {t: out / f"tau={t}" if len(budgets) > 1 else out for t in budgets}
    if all((run / "summary.json").exists() for run in runs.values()):
        return runs
    candidates = 100 if search == "sample" else 10
    brittle(
        "attack", TEST, *[x for p in probes for x in ("--probe", p)], "--method", "copos",
        *options, *[x for c in constraints or () for x in ("--constraint", c)],
        "--search", search, "--beam-width", 4, "--budget", ",".join(map(str, budgets)),
        "--candidates", candidates, "--query-budget", 100, "--limit", LIMIT, "--seed", 0,
        "--quiet", *(("--resume",) if out.exists() else ()), "--out", out,
    )  # fmt: skip
    return runs


def summary_row(run: Path) -> dict[str, Any]:
    """The figures of one run's ``summary.json`` the tables show."""
    s = json.loads((run / "summary.json").read_text())
    tasks = s["tasks"]
    validity = s.get("validity") or {}
    return {
        "tasks": {k: tasks[k] for k in (*TASKS, "distance.dspr")},
        "objective": sum(tasks[k]["mean_drop"] for k in TASKS) / len(TASKS),
        "success": s["success_rate"],
        "no_eligible": s["no_eligible"],
        "sentences": s["sentences"],
        "queries": s["queries_per_sentence"],
        "budget_hits": s["query_budget_hits"],
        "negative": s["negative_worst_cases"],
        "epsilon": (s["epsilon_l2"], s["epsilon_cosine"]),
        "validity": validity.get("shares"),
        "graded": validity.get("graded"),
    }


@functools.cache
def _meter() -> QualityMeter:
    """The quality models and the spaCy tagger, loaded once for every run measured."""
    from brittle.scorers.parsers.base import PARSERS
    from brittle.search.quality import QualityMeter

    return QualityMeter(parser=PARSERS.get("spacy")())


def quality_row(run: Path) -> dict[str, Any]:
    """Surprisal increase, similarity and re-tag agreement of the kept perturbations."""
    from brittle.search.quality import quality_of_files

    q = quality_of_files(TEST, run / "adversarial.conllu", meter=_meter())
    return {"changed": q.changed, **q.summary.to_json()}


def task_cell(cell: dict[str, float]) -> str:
    """A task's clean and perturbed score with its mean drop and spread."""
    return (
        f"{cell['clean']:.3f} → {cell['perturbed']:.3f} "
        f"({cell['mean_drop']:.3f} ± {cell['std_drop']:.3f})"
    )


def _shares(row: dict[str, Any]) -> str:
    shares = row["validity"]
    if not shares:
        return "–"
    return " / ".join(f"{shares[k]:.0%}" for k in ("tree", "grammatical", "meaning"))


def searches_table(rows: dict[str, dict[int, dict[str, Any]]]) -> list[str]:
    lines = [
        "| search | tau | distance UUAS clean → perturbed (drop ± sd) | POS acc clean → "
        "perturbed (drop ± sd) | DSpr drop | objective (mean drop) | success | no eligible "
        "| queries / sentence | epsilon L2 / cosine | graded valid (tree / grammatical / "
        "meaning) |",
        "| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for search, by_tau in rows.items():
        for tau, r in by_tau.items():
            t = r["tasks"]
            l2, cos = r["epsilon"]
            lines.append(
                f"| {search} | {tau} | {task_cell(t['distance.uuas'])} "
                f"| {task_cell(t['pos.pos_acc'])} "
                f"| {t['distance.dspr']['mean_drop']:.3f} | {r['objective']:.3f} "
                f"| {r['success']:.2f} | {r['no_eligible']} | {r['queries']:.1f} "
                f"| {l2:.1f} / {cos:.3f} | {_shares(r)} |"
            )
    return lines


def pools_table(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| search | tau | pool | constraints | UUAS drop | POS drop | sentences changed "
        "| surprisal increase (bits/word) | similarity | re-tag agreement | graded valid "
        "(tree / grammatical / meaning) |",
        "| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        t, q = r["tasks"], r["quality"]
        lines.append(
            f"| {r['search']} | {r['tau']} | {r['pool']} | {r['constraints']} "
            f"| {t['distance.uuas']['mean_drop']:.3f} | {t['pos.pos_acc']['mean_drop']:.3f} "
            f"| {q['changed']} | {q['mean_surprisal_increase']:+.2f} "
            f"| {q['mean_similarity']:.3f} | {q['retag_agreement']:.1%} | {_shares(r)} |"
        )
    return lines


def readme_table(rows: list[dict[str, Any]]) -> list[str]:
    """The README's summary: the pools' beam rows."""
    lines = [
        "| pool | constraints | tau | UUAS drop | POS drop | sentences changed | graded "
        "valid (tree / grammatical / meaning) |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        if r["search"] != "beam":
            continue
        t = r["tasks"]
        lines.append(
            f"| {r['pool']} | {r['constraints']} | {r['tau']} "
            f"| {t['distance.uuas']['mean_drop']:.3f} | {t['pos.pos_acc']['mean_drop']:.3f} "
            f"| {r['quality']['changed']} / {r['sentences']} | {_shares(r)} |"
        )
    return lines


def blocks(figures: dict[str, Any]) -> dict[str, str]:
    """The generated blocks of docs/attack.md, by name, from the figures."""
    return {
        "attack-searches": "\n".join(searches_table(figures["searches"])) + "\n",
        "attack-pools": "\n".join(pools_table(figures["pools"])) + "\n",
    }


def readme_blocks(figures: dict[str, Any]) -> dict[str, str]:
    """The generated block of the README, by name, from the figures."""
    return {"attack-summary": "\n".join(readme_table(figures["pools"])) + "\n"}


def collect(work: Path, probes: Sequence[Path]) -> dict[str, Any]:
    """Run (or read back) every attack and measure its kept perturbations."""
    searched: dict[str, dict[str, dict[str, Any]]] = {}
    default_runs: dict[str, dict[int, Path]] = {}
    for search in SEARCHES:
        runs = attack(work / search, probes, search, BUDGETS)
        default_runs[search] = runs
        searched[search] = {str(t): summary_row(run) for t, run in runs.items()}
    pooled: list[dict[str, Any]] = []
    for pool, (options, constraints) in POOLS.items():
        for search, budgets in (("sample", (1,)), ("beam", BUDGETS)):
            if constraints is None:
                runs = {t: default_runs[search][t] for t in budgets}
            else:
                slug = pool.split(",")[0].replace(" ", "-")
                out = work / f"{search}-{slug}-syntax"
                runs = attack(
                    out, probes, search, budgets, options=options, constraints=constraints
                )
            for tau, run in runs.items():
                pooled.append(
                    {
                        "search": search,
                        "tau": tau,
                        "pool": pool.split(",")[0],
                        "constraints": "default" if constraints is None else ", ".join(constraints),
                        **summary_row(run),
                        "quality": quality_row(run),
                    }
                )
    # JSON's own types, so the page renders the same from the file as from the run
    figures: dict[str, Any] = json.loads(json.dumps({"searches": searched, "pools": pooled}))
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("reproduce/attack"))
    parser.add_argument("--probes", type=Path, default=Path("reproduce/fragility/probes"))
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    figures = kept_figures(args, lambda: collect(args.work, ensure_probes(args.probes)))
    publish(blocks(figures), DOC, write=args.write_doc)
    if args.write_doc:
        write_doc(README, readme_blocks(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
