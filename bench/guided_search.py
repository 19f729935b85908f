"""Guided search against beam and greedy search at equal query budgets.

The table of docs/attack.md's "Guided search" section: the first 60 sentences of EWT
test, La Malfa et al.'s every-sense coPOS pool as recorded in
``data/bench-pool-tables.json`` (20 options per position), tau 2, spaCy syntax check at
0.2, the demo's MiniLM layer -5 distance and POS probes, the objective their mean
drop, no grading. Each strategy runs at query budgets of 60, 100 and 200; guided search
also without its gradient estimates (the same search on the generator's own ranking),
which says what the gradient adds. Runs one after the other in one process, models
loaded and every code path run once on 4 sentences before the first is timed.

Run: ``python bench/guided_search.py [--ewt PATH] [--sentences 60]`` (about 5 minutes
on 2 cores).
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
from pathlib import Path

from record_tables import EWT_TEST

from brittle.data import bench_pool_tables_path
from brittle.engine.attack import AttackConfig, build_components, run_attack
from brittle.engine.bench.workload import EVERY_SENSE_OPTIONS
from brittle.engine.demo import prepare_demo, train_demo_probes
from brittle.engine.reports.results import read_rows

#: (label, strategy, query budget, with the gradient estimates)
RUNS = (
    ("beam", "beam", 60, True),
    ("beam", "beam", 100, True),
    ("beam", "beam", 200, True),
    ("greedy", "greedy", 60, True),
    ("greedy", "greedy", 200, True),
    ("guided", "guided", 60, True),
    ("guided", "guided", 100, True),
    ("guided", "guided", 200, True),
    ("guided, no gradient", "guided", 60, False),
    ("guided, no gradient", "guided", 100, False),
)


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
        for k, (label, search, queries, gradient) in enumerate(RUNS):
            config = dataclasses.replace(base, search=search, query_budget=queries)
            comps = build_components(config, reuse=comps)
            used = comps if gradient else dataclasses.replace(comps, estimator=None)
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
