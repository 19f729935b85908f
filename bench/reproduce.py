"""The measured tables of docs/ and the README, regenerated in one run (``make
reproduce``).

Runs, in order, with one work directory so that probes are trained once and shared:

1. ``reproduce_probe_parser.py``: structural probe vs perceptron parser at every MiniLM
   hidden state and on GloVe (trains the layer sweeps in ``WORK/sweeps``);
2. ``reproduce_jabberwocky.py``: plain vs Jabberwocky EWT test (reuses the sweeps);
3. ``reproduce_fragility.py``: worst-case drops of coPOS, coCO and random words at
   tau 1-3, MiniLM, GloVe and SmolLM2 (trains a probe per task), and MiniLM with La
   Malfa et al.'s sentence probe on treebanks cut to 20 words;
4. ``reproduce_attack.py``: the opening tables of docs/attack.md (coPOS attacks with
   today's defaults, three searches, and La Malfa's pool beside today's; the MiniLM
   layer-2 distance and POS probes of step 3);
5. ``parser_scores.py``, ``reproduce_parser_attack.py`` and ``reproduce_frontier.py``:
   the parsers' clean scores in docs/attack.md (trains ``spacy-ud`` when missing), each
   parser attacked under the presets that keep the tree, and docs/frontier.md's table and
   figure (``brittle frontier`` on the first 60 GUM test sentences with the demo's
   probes);
6. ``reproduce_compare.py``: docs/compare-methods.md's tables and figure
   (``brittle compare-methods`` with today's defaults on the first 100 EWT test
   sentences, about 35 minutes);
7. ``reproduce_word_order_damage.py``: which of DND and IDC predicts the damage (the
   MiniLM layer-2 distance and POS probes of step 3, the first 300 sentences);
8. ``reproduce_word_order.py``: DND and IDC of every reordering at every level;
9. ``reproduce_agreement.py``: Chaves & Richter's experiments 1 and 2 under SmolLM2,
   the beam and random searches over their grammar (16 cells, about 12 minutes) and a
   MiniLM structural probe on their stimuli (trained on the sweeps' data with early
   stopping on GUM dev, about 9 minutes);
10. ``reproduce_papers.py``: each paper's numbers beside brittle's, with a verdict per
    claim, from the JSON of steps 1-9 (writes ``docs/reproductions.json`` and the
    comparison tables of ``docs/reproductions.md``);
11. ``constraint_shares.py`` and ``labelled_pairs.py``: docs/constraints.md's tables of
    the candidates and sentences each constraint keeps (coPOS on the first 200 EWT test
    sentences) and of what the model constraints measure on the labelled pairs;
12. ``guided_search.py``: docs/attack.md's tables of the searches at equal query
    budgets and of the damage each finds within a number of queries (beam, greedy,
    sample and guided search on La Malfa's recorded pool, 60 EWT test sentences);
13. ``sense_choice.py``, ``probe_results.py`` and ``quality_table.py``:
    docs/substitutions.md's table of how well each way of choosing coPOS synonyms keeps
    the sense (400 WordNet example cases), docs/probes.md's results of every probe task
    on MiniLM, GloVe and the random control (reusing the sweeps of step 1 and the probes
    of step 3), and docs/substitutions.md's table of how natural each method's
    perturbations read (300 EWT test sentences);
14. ``reproduce_workers.py``: the README's table of one attack in one process, on two
    local workers and on two Ray actors (run it with nothing else running);
15. ``reproduce_bench.py``: docs/performance.md's bench tables and the README's
    summary (three full ``brittle bench`` runs on EWT test; run it with nothing else
    running);
16. ``perturb_memory.py``: docs/performance.md's table of ``perturb``'s peak memory on
    the first 100 sentences of EWT test and on all of them (run it with nothing else
    running);
17. ``reproduce_bench_attack.py``: docs/attack.md's speed table (``bench_attack.py``'s
    engine against the bare model forward on the first 20 and the first 60 sentences of
    EWT test; run it with nothing else running);
18. ``coco_rerank.py``: docs/performance.md's table of coCO's re-rank (the generator
    alone without a re-rank, with one word of right context and with the whole
    sentence, on the first 16 sentences of GUM test; run it with nothing else running);
19. ``workers_evaluate_compare.py``: docs/performance.md's table of ``evaluate`` and
    ``compare-methods`` in one process and on two local workers (EWT test; run it with
    nothing else running);
20. ``coco_precision.py``: docs/performance.md's table of coCO's attack with its
    language model in float32 and in bfloat16, and docs/frontier.md's sentence of its
    cost (the first 16 sentences of GUM test; run it with nothing else running);
21. ``attack_memory.py``: docs/performance.md's attack memory table (a coPOS attack's
    peak memory on the first 100 sentences of EWT test and on all of them);
22. ``compare_memory.py``: docs/performance.md's compare-methods memory table (the same
    two runs of ``compare-methods``).

Every step writes its tables into the docs itself (``--write-doc``), each from a JSON
of its figures kept beside the page (``docs/*.json``: ``probe-parser``,
``jabberwocky``, ``fragility``, ``attack``, ``parser-scores``, ``parser-attack``,
``frontier``, ``compare-methods``, ``word-order-damage``, ``word-order``,
``agreement``, ``reproductions``, ``constraint-shares``, ``labelled-pairs``,
``guided-search``, ``sense-choice``, ``probe-results``, ``quality``, ``workers``,
``bench``, ``perturb-memory``, ``bench-attack``, ``coco-rerank``,
``workers-evaluate-compare``, ``coco-precision``, ``attack-memory``,
``compare-memory``); a test renders every
generated block again from that JSON.

Two scripts are not steps, for what they need beside this machine: ``textattack_loop.py``
(TextAttack installed beside the project; docs/performance.md's and the README's
comparison with a plain TextAttack loop, kept in ``docs/textattack.json``) and
``reproduce_bench_gpu.py`` (a CUDA device; the GPU rows of docs/performance.md and the
README, kept in ``docs/bench-gpu.json``). Each renders its kept figures with
``--render --write-doc``.

Each script's tables go to ``WORK/tables/NAME.md`` (and its JSON beside them); the
brittle commands they run are printed on stderr. Every step skips what exists, so an
interrupted run continues where it stopped; delete ``WORK`` to start over. From
scratch it takes about two hours on a 2-core machine.

Usage::

    python bench/reproduce.py [--work reproduce] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Callable
from pathlib import Path

import attack_memory
import coco_precision
import coco_rerank
import compare_memory
import constraint_shares
import guided_search
import labelled_pairs
import parser_scores
import perturb_memory
import probe_results
import quality_table
import reproduce_agreement
import reproduce_attack
import reproduce_bench
import reproduce_bench_attack
import reproduce_compare
import reproduce_fragility
import reproduce_frontier
import reproduce_jabberwocky
import reproduce_papers
import reproduce_parser_attack
import reproduce_probe_parser
import reproduce_word_order
import reproduce_word_order_damage
import reproduce_workers
import sense_choice
import workers_evaluate_compare
from reproduce_common import TEST


def steps(work: Path) -> dict[str, tuple[Callable[[list[str]], int], list[str]]]:
    """Each step's ``main`` and its arguments, in the order they run."""
    tables = work / "tables"
    fragility = work / "fragility"
    probes = fragility / "probes"
    # the page's figure is drawn in place
    plot = ["--plot", str(reproduce_fragility.ROOT / "docs" / "img" / "fragility.png")]
    damage_probes = [
        "--probe",
        str(probes / "minilm2-distance"),
        "--probe",
        str(probes / "minilm2-pos"),
    ]
    return {
        "probe_parser": (
            reproduce_probe_parser.main,
            [
                "--work",
                str(work),
                "--json",
                str(tables / "probe_parser.json"),
                "--write-doc",
            ],
        ),
        "jabberwocky": (
            reproduce_jabberwocky.main,
            [
                "--work",
                str(work),
                "--json",
                str(tables / "jabberwocky.json"),
                "--write-doc",
            ],
        ),
        "fragility": (
            reproduce_fragility.main,
            [
                "--work",
                str(fragility),
                "--json",
                str(tables / "fragility.json"),
                *plot,
                "--write-doc",
            ],
        ),
        "attack": (
            reproduce_attack.main,
            [
                "--work",
                str(work / "attack"),
                "--probes",
                str(probes),
                "--write-doc",
            ],
        ),
        "parser_scores": (parser_scores.main, ["--write-doc"]),
        "parser_attack": (
            reproduce_parser_attack.main,
            ["--work", str(work / "parser-attack"), "--probes", str(probes), "--write-doc"],
        ),
        "frontier": (
            reproduce_frontier.main,
            ["--work", str(work / "frontier"), "--write-doc"],
        ),
        "compare": (
            reproduce_compare.main,
            ["--work", str(work / "compare"), "--write-doc"],
        ),
        "word_order_damage": (
            reproduce_word_order_damage.main,
            [
                str(TEST),
                "--limit",
                "300",
                *damage_probes,
                "--json",
                str(tables / "damage.json"),
                "--write-doc",
            ],
        ),
        "word_order": (
            reproduce_word_order.main,
            [str(TEST), "--json", str(tables / "word_order.json"), "--write-doc"],
        ),
        "agreement": (
            reproduce_agreement.main,
            [
                "--work",
                str(work / "agreement"),
                "--json",
                str(tables / "agreement.json"),
                "--write-doc",
            ],
        ),
        "papers": (reproduce_papers.main, ["--work", str(work), "--write-doc"]),
        "constraint_shares": (constraint_shares.main, ["--write-doc"]),
        "labelled_pairs": (labelled_pairs.main, ["--write-doc"]),
        "searches": (guided_search.main, ["--write-doc"]),
        "sense_choice": (sense_choice.main, ["--write-doc"]),
        "probe_results": (probe_results.main, ["--work", str(work), "--write-doc"]),
        "quality": (quality_table.main, ["--out", str(work / "quality"), "--write-doc"]),
        "workers": (
            reproduce_workers.main,
            ["--work", str(work / "workers"), "--write-doc"],
        ),
        "bench": (
            reproduce_bench.main,
            ["--work", str(work / "bench"), "--write-doc"],
        ),
        "perturb_memory": (
            perturb_memory.main,
            ["--work", str(work / "perturb-memory"), "--write-doc"],
        ),
        "bench_attack": (
            reproduce_bench_attack.main,
            ["--work", str(work / "bench-attack"), "--write-doc"],
        ),
        "coco_rerank": (coco_rerank.main, ["--write-doc"]),
        "workers_evaluate_compare": (
            workers_evaluate_compare.main,
            ["--work", str(work / "workers-evaluate-compare"), "--write-doc"],
        ),
        "coco_precision": (
            coco_precision.main,
            ["--work", str(work / "coco-precision"), "--write-doc"],
        ),
        "attack_memory": (
            attack_memory.main,
            ["--work", str(work / "attack-memory"), "--write-doc"],
        ),
        "compare_memory": (
            compare_memory.main,
            ["--work", str(work / "compare-memory"), "--write-doc"],
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("reproduce"))
    parser.add_argument(
        "--only", action="append", default=[], help="run only this step (repeatable)"
    )
    args = parser.parse_args(argv)
    work: Path = args.work.resolve()
    (work / "tables").mkdir(parents=True, exist_ok=True)
    todo = steps(work)
    unknown = [n for n in args.only if n not in todo]
    if unknown:
        parser.error(f"unknown step(s) {', '.join(unknown)} (steps: {', '.join(todo)})")
    for name, (run, step_args) in todo.items():
        if args.only and name not in args.only:
            continue
        start = time.monotonic()
        print(f"== {name}", file=sys.stderr, flush=True)
        table = work / "tables" / f"{name}.md"
        partial = table.with_suffix(".md.part")
        with partial.open("w") as out, contextlib.redirect_stdout(out):
            code = run(step_args)
        if code:
            print(f"{name} failed (exit {code})", file=sys.stderr)
            return code
        partial.replace(table)
        minutes = (time.monotonic() - start) / 60
        print(f"== {name}: {minutes:.1f} min, tables in {table}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
