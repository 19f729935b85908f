"""Guided search against beam and greedy search at equal query budgets.

The table of docs/attack.md's "Guided search" section: the first 60 sentences of EWT
test, La Malfa et al.'s every-sense coPOS pool as recorded in
``data/bench-pool-tables.json`` (20 options per position), tau 2, spaCy syntax check at
0.2, the demo's MiniLM layer -5 distance and POS probes, the objective their mean
drop, no grading. Each strategy runs at query budgets of 60, 100 and 200; guided search
also without its gradient estimates (the same search on the generator's own ranking),
which says what the gradient adds, and without its warm-up (a first batch of 8 like the
others), which says what that adds; and at 60 and 100 queries with two oracles in place of
the estimates, which say what a better estimate could add at most: each option's damage
as the probes score it, and each position's mean of those damages (scored by a pass of
their own, not counted as queries). Runs one after the other in one process, models
loaded and every code path run once on 4 sentences before the first is timed.

Run: ``python bench/guided_search.py [--ewt PATH] [--sentences 60]`` (about 7 minutes
on 2 cores).
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from record_tables import EWT_TEST

from brittle.data import bench_pool_tables_path
from brittle.engine.attack import AttackConfig, build_components, run_attack
from brittle.engine.bench.workload import EVERY_SENSE_OPTIONS
from brittle.engine.core.perturbation import Perturbation
from brittle.engine.core.sentence import Sentence
from brittle.engine.demo import prepare_demo, train_demo_probes
from brittle.engine.reports.results import read_rows
from brittle.search.problem import Estimates
from brittle.search.scoring import CachedScorer, Objective, TaskEvaluator
from brittle.search.strategies import GuidedSearch
from brittle.search.table import SubstitutionTable

#: What guided search ranks by: the probes' gradient ("gradient"; "no warm-up": with a
#: first batch of 8 like the others, ``guided_warmup=0``), nothing ("none"), or an
#: oracle: each option's scored damage ("scored") or its position's mean ("position").
Guide = Literal["gradient", "no warm-up", "none", "scored", "position"]

#: (label, strategy, query budget, guide)
RUNS: tuple[tuple[str, str, int, Guide], ...] = (
    ("beam", "beam", 60, "gradient"),
    ("beam", "beam", 100, "gradient"),
    ("beam", "beam", 200, "gradient"),
    ("greedy", "greedy", 60, "gradient"),
    ("greedy", "greedy", 200, "gradient"),
    ("guided", "guided", 60, "gradient"),
    ("guided", "guided", 100, "gradient"),
    ("guided", "guided", 200, "gradient"),
    ("guided, no warm-up", "guided", 60, "no warm-up"),
    ("guided, no warm-up", "guided", 100, "no warm-up"),
    ("guided, no warm-up", "guided", 200, "no warm-up"),
    ("guided, no gradient", "guided", 60, "none"),
    ("guided, no gradient", "guided", 100, "none"),
    ("guided, oracle: each position's mean damage", "guided", 60, "position"),
    ("guided, oracle: each position's mean damage", "guided", 100, "position"),
    ("guided, oracle: each option's damage", "guided", 60, "scored"),
    ("guided, oracle: each option's damage", "guided", 100, "scored"),
)


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

    def substitution_estimates(
        self, original: Sentence, table: SubstitutionTable, weights: Mapping[str, float]
    ) -> Estimates:
        """Each option's damage, shape (options,) per position."""
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ewt", type=Path, default=EWT_TEST, help="EWT test CoNLL-U")
    parser.add_argument("--sentences", type=int, default=60)
    args = parser.parse_args()
    plan = prepare_demo()
    train_demo_probes(plan)
    base = AttackConfig(
        treebank=str(args.ewt),
        probes=tuple(str(p) for p in plan.probes),
        method="recorded",
        generator_options=(f"tables={bench_pool_tables_path()}",),
        budget=2,
        candidates=EVERY_SENSE_OPTIONS,
        parser="spacy",
        constraints=("syntax:0.2",),
        limit=args.sentences,
    )
    print(
        "| search | query budget | mean UUAS drop | mean POS drop | mean damage "
        "| queries / sentence | seconds |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    comps = None
    with tempfile.TemporaryDirectory() as tmp:
        for k, (label, search, queries, guide) in enumerate(RUNS):
            config = dataclasses.replace(base, search=search, query_budget=queries)
            comps = build_components(config, reuse=comps)
            used = comps
            if guide == "no warm-up":
                used = dataclasses.replace(comps, strategy=GuidedSearch(guided_warmup=0.0))
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
            rows = list(read_rows(Path(tmp) / str(k) / "results.jsonl"))
            n = len(rows)
            uuas = sum(r.tasks["distance.uuas"].drop or 0.0 for r in rows) / n
            pos = sum(r.tasks["pos.pos_acc"].drop or 0.0 for r in rows) / n
            damage = sum(r.damage for r in rows) / n
            spent = sum(r.queries for r in rows) / n
            print(
                f"| {label} | {queries} | {uuas:.4f} | {pos:.4f} | {damage:.4f} "
                f"| {spent:.1f} | {seconds:.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
