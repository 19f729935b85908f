"""End-to-end attack throughput against the bare encoder forward on the same candidates.

Runs ``brittle attack`` (coPOS, beam search, spaCy syntax constraint, the demo's MiniLM
layer -5 distance and POS probes) on treebank sentences and records every candidate
sentence the engine sends to the model. Then it feeds exactly those candidate
sentences, in the same groups, to the bare ``model(...)`` forward (tokenized and padded,
nothing else) and reports candidates scored per second for both and their ratio.
Everything the engine does besides the forward (generation, WordNet, parsing, tree
edit distance, probes, metrics, search, writing results) is in the engine's time.

The bare forward tokenizes each group the engine scored, sorts it by length and runs
it in batches of the engine's batch size (the engine pads no more than this). Two
references: the bare forward through every layer (what running the model costs)
and the bare forward through only the blocks below the probed layer (the engine stops
there too, so this ratio is the engine's own overhead).

Usage::

    python bench/bench_attack.py [CONLLU] [--sentences 20] [--search beam] [--threads 2]
        [--json FIGURES.json]

``--json`` also writes the run's figures (:class:`Measurement`);
``bench/reproduce_bench_attack.py`` runs this script on 20 and 60 sentences and writes
docs/attack.md's speed table from them.

``brittle bench --stage end_to_end`` measures the same with the sense chosen in
context; this script keeps the docs' configuration (every sense) and its options.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import TypedDict

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support import EWT_TEST  # noqa: E402

DEFAULT_TREEBANK = EWT_TEST


class Measurement(TypedDict):
    """One run's figures: what the engine and the two bare forwards took on the same
    candidates."""

    sentences: int
    search: str
    lockstep: bool
    threads: int
    #: candidate sentences sent to the model, and the model calls they came in
    candidates: int
    batches: int
    #: the deepest hidden state the probes read, of ``layers`` blocks
    probed_layer: int
    layers: int
    #: seconds: the engine's run, the bare forward through every block, through the
    #: blocks up to ``probed_layer`` only
    engine_seconds: float
    full_seconds: float
    shallow_seconds: float


def measure(
    treebank: Path, sentences: int, *, search: str, threads: int, lockstep: bool
) -> Measurement:
    """Run the attack on the first ``sentences`` of ``treebank``, then the bare forward
    on the candidates it scored (module docstring)."""
    import torch

    from brittle.engine.attack import AttackConfig, build_components, run_attack
    from brittle.engine.bench.recording import (
        RecordingEvaluator,
        bare_forward_seconds,
        encoder_of,
    )
    from brittle.engine.demo import prepare_demo, train_demo_probes

    torch.set_num_threads(threads)
    plan = prepare_demo()
    train_demo_probes(plan)
    config = AttackConfig(
        treebank=str(treebank),
        probes=tuple(str(p) for p in plan.probes),
        method="copos",
        search=search,
        budget=2,
        candidates=5,
        beam_width=2,
        parser="spacy",
        constraints=("syntax:0.2",),  # pinned: the workload stays the one measured before
        limit=sentences,
        # Every lemma of every WordNet sense, as docs/attack.md's speed table was
        # measured: the engine's throughput, not the sense choice (which adds one
        # encoder pass per sentence) nor coPOS's SemCor and polysemy filters.
        generator_options=(
            "sense=all",
            "min_count=0",
            "max_senses=0",
            "max_substitute_senses=0",
            "usage_checks=false",
        ),
    )
    comps = build_components(config)
    # Warm-up: WordNet, spaCy, the model and Numba kernels load outside the timing.
    warm = AttackConfig(**{**config.__dict__, "limit": 1})
    with tempfile.TemporaryDirectory() as tmp:
        run_attack(warm, Path(tmp) / "warm", components=comps)
        recording = RecordingEvaluator(comps.evaluator)
        timed = dataclasses.replace(comps, evaluator=recording)
        start = time.perf_counter()
        run_attack(config, Path(tmp) / "run", components=timed, lockstep=lockstep)
        engine_s = time.perf_counter() - start

    encoder, top = encoder_of(comps.evaluator)
    return {
        "sentences": sentences,
        "search": search,
        "lockstep": lockstep,
        "threads": threads,
        "candidates": sum(len(b) for b in recording.batches),
        "batches": len(recording.batches),
        "probed_layer": top,
        "layers": encoder.n_layers,
        "engine_seconds": engine_s,
        "full_seconds": bare_forward_seconds(encoder, recording.batches, None),
        "shallow_seconds": bare_forward_seconds(encoder, recording.batches, top),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("treebank", nargs="?", type=Path, default=DEFAULT_TREEBANK)
    parser.add_argument("--sentences", type=int, default=20)
    parser.add_argument("--search", default="beam", choices=("sample", "greedy", "beam"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--one-at-a-time",
        action="store_true",
        help="search one sentence at a time instead of a chunk's sentences in lock-step",
    )
    parser.add_argument("--json", type=Path, help="also write the run's figures to this file")
    args = parser.parse_args()

    m = measure(
        args.treebank,
        args.sentences,
        search=args.search,
        threads=args.threads,
        lockstep=not args.one_at_a_time,
    )
    n, top = m["candidates"], m["probed_layer"]
    engine_s, full_s, shallow_s = m["engine_seconds"], m["full_seconds"], m["shallow_seconds"]
    print(
        f"{m['sentences']} sentences, {n} candidate sentences scored, "
        f"{m['batches']} model batches, search {m['search']}"
        f"{' (lock-step rounds)' if m['lockstep'] else ' (one sentence at a time)'}, "
        f"{m['threads']} thread(s); probes read hidden state {top} of {m['layers']}"
    )
    print(f"engine (search, parsing, probes, reports): {n / engine_s:8.1f} candidates/s")
    print(f"bare forward, every layer:               {n / full_s:8.1f} candidates/s")
    print(f"bare forward, layers up to {top} only:       {n / shallow_s:8.1f} candidates/s")
    print(f"engine / bare (every layer):   {full_s / engine_s:.2f} (target >= 0.80)")
    print(f"engine / bare (same layers):   {shallow_s / engine_s:.2f}")
    if args.json is not None:
        args.json.write_text(json.dumps(m, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
