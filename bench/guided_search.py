"""Guided search against beam, greedy and sample search at equal query budgets.

The tables of docs/attack.md's "Beam and greedy against sample" and "Guided search"
sections: the first 60 sentences of EWT test, La Malfa et al.'s every-sense coPOS pool
as recorded in ``data/bench-pool-tables.json`` (20 options per position), tau 2, spaCy
syntax check at 0.2, the demo's MiniLM layer -5 distance and POS probes, the objective
their mean drop, no grading. Beam, greedy and guided search run at query budgets of 60,
100 and 200, sample at 100 (b = 100 draws); guided search also without its gradient
estimates (the same search on the generator's own ranking), which says what the gradient
adds, without its warm-up (extending what it finds from its first batch on), which says
what that adds, and without composing pairs from their scored parts (pairs ranked by the
sum of the parts' damages); and at 60 and 100 queries with two oracles in place of the
estimates, which say what a better estimate could add at most: each option's damage as
the probes score it, and each position's mean of those damages (scored by a pass of
their own, not counted as queries). Every row keeps its anytime record, and for each
search at 100 queries the second table gives the mean best damage found within 10, 25,
50 and 100 queries. Runs one after the other in one process, models loaded and every
code path run once on 4 sentences before the first is timed. A held-out check follows:
beam search at 60, 100 and 200 queries and guided search at 60 and 100 (and at 60
without composition) on the first 200 sentences of EWT dev, coPOS generating the same
every-sense pool in the run. Every table pairs each sentence's result with beam search's
at 200 queries (mean difference and its standard error).

Usage::

    python bench/guided_search.py [--ewt PATH] [--sentences 60] [--heldout PATH]
        [--heldout-sentences 200] [--write-doc]
    python bench/guided_search.py --render [--write-doc]

(about 12 minutes on 2 cores). The figures go to ``docs/guided-search.json``
(``--measured``); ``--write-doc`` puts the tables into docs/attack.md's generated
blocks ``guided-search``, ``guided-search-heldout`` and ``anytime-queries``.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from record_tables import EWT_TEST
from reproduce_common import add_doc_options, kept_figures, publish

from brittle.data import bench_pool_tables_path
from brittle.engine.attack import AttackConfig, build_components, run_attack
from brittle.engine.bench.stages import ANYTIME_QUERY_GRID, mean_drop_by
from brittle.engine.bench.workload import EVERY_SENSE_COPOS, EVERY_SENSE_OPTIONS
from brittle.engine.core.perturbation import Perturbation
from brittle.engine.core.sentence import Sentence
from brittle.engine.demo import prepare_demo, train_demo_probes
from brittle.engine.reports.results import read_rows
from brittle.search.problem import Estimates
from brittle.search.scoring import CachedScorer, Objective, TaskEvaluator
from brittle.search.strategies import GuidedSearch
from brittle.search.table import SubstitutionTable

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ROOT / "docs" / "guided-search.json"
DOC = ROOT / "docs" / "attack.md"

#: What guided search ranks by: the probes' gradient ("gradient"; "no warm-up": extending
#: from its first batch on, ``guided_warmup=0``; "no composition": pairs ranked
#: by the sum of their parts' damages, ``AttackComponents(composer=None)``), nothing
#: ("none"), or an oracle: each option's scored damage ("scored") or its position's mean
#: ("position").
Guide = Literal["gradient", "no warm-up", "no composition", "none", "scored", "position"]

#: (label, strategy, query budget, guide)
RUNS: tuple[tuple[str, str, int, Guide], ...] = (
    ("beam", "beam", 60, "gradient"),
    ("beam", "beam", 100, "gradient"),
    ("beam", "beam", 200, "gradient"),
    ("greedy", "greedy", 60, "gradient"),
    ("greedy", "greedy", 100, "gradient"),
    ("greedy", "greedy", 200, "gradient"),
    ("sample (b = 100)", "sample", 100, "gradient"),
    ("guided", "guided", 60, "gradient"),
    ("guided", "guided", 100, "gradient"),
    ("guided", "guided", 200, "gradient"),
    ("guided, no warm-up", "guided", 60, "no warm-up"),
    ("guided, no warm-up", "guided", 100, "no warm-up"),
    ("guided, no warm-up", "guided", 200, "no warm-up"),
    ("guided, no composition", "guided", 60, "no composition"),
    ("guided, no composition", "guided", 100, "no composition"),
    ("guided, no gradient", "guided", 60, "none"),
    ("guided, no gradient", "guided", 100, "none"),
    ("guided, oracle: each position's mean damage", "guided", 60, "position"),
    ("guided, oracle: each position's mean damage", "guided", 100, "position"),
    ("guided, oracle: each option's damage", "guided", 60, "scored"),
    ("guided, oracle: each option's damage", "guided", 100, "scored"),
)


#: The held-out check: beam at 60, 100 and 200 queries, guided at 60 and 100 (and at 60
#: without composition), on EWT dev with coPOS generating the same every-sense pool in
#: the run.
HELDOUT_RUNS: tuple[tuple[str, str, int, Guide], ...] = (
    ("beam", "beam", 60, "gradient"),
    ("beam", "beam", 100, "gradient"),
    ("beam", "beam", 200, "gradient"),
    ("guided", "guided", 60, "gradient"),
    ("guided", "guided", 100, "gradient"),
    ("guided, no composition", "guided", 60, "no composition"),
)
EWT_DEV = EWT_TEST.with_name("en_ewt-ud-dev.conllu")


@dataclass(frozen=True)
class ScoredEstimates:
    """Estimates that are not estimates: each option's damage as the probes score it
    (``by_position``: its position's mean), from a scorer of their own, so that the
    search's queries are still counted in full. What a perfect predictor of single
    substitutions (or of positions) would hand guided search.

    Attributes:
        evaluator: the attack's probes' evaluator.
        by_position: give every option of a position that position's mean damage.
    """

    evaluator: TaskEvaluator
    by_position: bool

    def substitution_estimates_many(
        self, requests: Sequence[tuple[Sentence, SubstitutionTable, Mapping[str, float]]]
    ) -> list[Estimates | None]:
        """Each request's options' damages, shape (options,) per position."""
        return [self._estimates(*request) for request in requests]

    def _estimates(
        self, original: Sentence, table: SubstitutionTable, weights: Mapping[str, float]
    ) -> Estimates:
        session = CachedScorer(self.evaluator).session(original, Objective(dict(weights)))
        out: dict[int, np.ndarray] = {}
        for position, options in table.entries:
            damage = session(
                [
                    Perturbation(
                        table.sentence_id,
                        table.method,
                        positions=(position,),
                        replacements=(form,),
                        lemmas=(lemma,),
                    )
                    for form, lemma in options
                ]
            )
            out[position] = np.full(damage.size, damage.mean()) if self.by_position else damage
        return out


def measure(
    treebank: Path,
    sentences: int,
    runs: tuple[tuple[str, str, int, Guide], ...] = RUNS,
    *,
    recorded: bool = True,
) -> dict[str, Any]:
    """Every run of ``runs`` on the first ``sentences`` of ``treebank``: per run its
    label, strategy, query budget and guide, the means over the sentences of the UUAS
    drop, the POS accuracy drop, the damage and the queries spent, each sentence's UUAS
    drop and damage (treebank order, for paired differences), and its wall time in
    seconds. ``recorded``: the every-sense pool as recorded in
    ``data/bench-pool-tables.json`` (EWT test); else coPOS generates it in the run with
    the same options (any treebank)."""
    plan = prepare_demo()
    train_demo_probes(plan)
    options: tuple[str, ...]
    if recorded:
        method, options = "recorded", (f"tables={bench_pool_tables_path()}",)
    else:
        method = "copos"
        options = tuple(f"{k}={str(v).lower()}" for k, v in EVERY_SENSE_COPOS.items())
    base = AttackConfig(
        treebank=str(treebank),
        probes=tuple(str(p) for p in plan.probes),
        method=method,
        generator_options=options,
        budget=2,
        candidates=EVERY_SENSE_OPTIONS,
        parser="spacy",
        constraints=("syntax:0.2",),
        limit=sentences,
        anytime=True,
    )
    out: list[dict[str, Any]] = []
    comps = None
    with tempfile.TemporaryDirectory() as tmp:
        for k, (label, search, queries, guide) in enumerate(runs):
            config = dataclasses.replace(
                base,
                search=search,
                query_budget=queries,
                candidates=queries if search == "sample" else base.candidates,
            )
            comps = build_components(config, reuse=comps, remember_tables=not recorded)
            used = comps
            if guide == "no warm-up":
                used = dataclasses.replace(comps, strategy=GuidedSearch(guided_warmup=0.0))
            elif guide == "no composition":
                used = dataclasses.replace(comps, composer=None)
            elif guide == "none":
                used = dataclasses.replace(comps, estimator=None)
            elif guide in ("scored", "position"):
                oracle = ScoredEstimates(comps.evaluator, by_position=guide == "position")
                used = dataclasses.replace(comps, estimator=oracle)
            if k == 0:
                warm = dataclasses.replace(config, limit=4, search="guided")
                run_attack(warm, Path(tmp) / "warm", components=used)
            start = time.perf_counter()
            run_attack(config, Path(tmp) / str(k), components=used)
            seconds = time.perf_counter() - start
            rows = sorted(read_rows(Path(tmp) / str(k) / "results.jsonl"), key=lambda r: r.index)
            n = len(rows)
            uuas = [r.tasks["distance.uuas"].drop or 0.0 for r in rows]
            out.append(
                {
                    "label": label,
                    "search": search,
                    "query_budget": queries,
                    "guide": guide,
                    "sentences": n,
                    "uuas_drop": sum(uuas) / n,
                    "pos_drop": sum(r.tasks["pos.pos_acc"].drop or 0.0 for r in rows) / n,
                    "damage": sum(r.damage for r in rows) / n,
                    "queries": sum(r.queries for r in rows) / n,
                    "seconds": round(seconds, 2),
                    "per_sentence": {"uuas_drop": uuas, "damage": [r.damage for r in rows]},
                    "within_queries": {
                        str(q): mean_drop_by([r.anytime or () for r in rows], q, axis=0)
                        for q in ANYTIME_QUERY_GRID
                        if q <= queries
                    },
                }
            )
            print(f"{label} at {queries}: done in {seconds:.0f} s", file=sys.stderr, flush=True)
    return {"treebank": treebank.name, "sentences": sentences, "runs": out}


def paired(run: dict[str, Any], reference: dict[str, Any], key: str) -> tuple[float, float]:
    """Mean and standard error over the sentences of ``run``'s per-sentence ``key``
    (``uuas_drop`` or ``damage``) minus ``reference``'s on the same sentence."""
    a = np.asarray(run["per_sentence"][key], dtype=np.float64)
    b = np.asarray(reference["per_sentence"][key], dtype=np.float64)
    d = a - b
    se = float(d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else 0.0
    return float(d.mean()), se


def _table(runs: list[dict[str, Any]]) -> str:
    """One row per run, with its paired difference from beam search at 200 queries."""
    reference = next(r for r in runs if r["search"] == "beam" and r["query_budget"] == 200)
    lines = [
        "| search | query budget | mean UUAS drop | mean POS drop | mean damage "
        "| UUAS drop - beam at 200 | damage - beam at 200 | queries / sentence | seconds |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in runs:
        cells = []
        for key in ("uuas_drop", "damage"):
            mean, se = paired(r, reference, key)
            cells.append("-" if r is reference else f"{mean:+.4f} ± {se:.4f}")
        lines.append(
            f"| {r['label']} | {r['query_budget']} | {r['uuas_drop']:.4f} | {r['pos_drop']:.4f} "
            f"| {r['damage']:.4f} | {cells[0]} | {cells[1]} | {r['queries']:.1f} "
            f"| {r['seconds']:.0f} |"
        )
    return "\n".join(lines) + "\n"


def blocks(data: dict[str, Any]) -> dict[str, str]:
    """The generated blocks of docs/attack.md: every run (``guided-search``), the
    held-out runs (``guided-search-heldout``) and, for each search at a query budget of
    100, the mean best damage found within 10, 25, 50 and 100 queries
    (``anytime-queries``)."""
    grid = [str(q) for q in ANYTIME_QUERY_GRID]
    curve = [
        "| search | " + " | ".join(f"{q} queries" for q in grid) + " |",
        "| --- |" + " ---: |" * len(grid),
    ]
    for r in data["runs"]:
        if r["query_budget"] == max(ANYTIME_QUERY_GRID) and r["guide"] == "gradient":
            cells = " | ".join(f"{r['within_queries'][q]:.4f}" for q in grid)
            curve.append(f"| {r['label']} | {cells} |")
    return {
        "guided-search": _table(data["runs"]),
        "guided-search-heldout": _table(data["heldout"]["runs"]),
        "anytime-queries": "\n".join(curve) + "\n",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ewt", type=Path, default=EWT_TEST, help="EWT test CoNLL-U")
    parser.add_argument("--sentences", type=int, default=60)
    parser.add_argument("--heldout", type=Path, default=EWT_DEV, help="EWT dev CoNLL-U")
    parser.add_argument("--heldout-sentences", type=int, default=200)
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)

    def both() -> dict[str, Any]:
        data = measure(args.ewt, args.sentences)
        data["heldout"] = measure(
            args.heldout, args.heldout_sentences, HELDOUT_RUNS, recorded=False
        )
        return data

    data = kept_figures(args, both)
    publish(blocks(data), DOC, write=args.write_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
