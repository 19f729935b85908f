"""The stages ``brittle bench`` measures, each beside a reference timed in the same run.

Every stage is a function registered in :data:`STAGES`; it receives the run's
:class:`BenchContext` and returns one or more :class:`StageResult` (the generator stage
returns one per generator, ``end_to_end`` two). Workloads come from the run's sentences
(a fixed sample of the treebank), so the figures describe real trees and real text.

A stage times the engine's code as the engine calls it (batched, cached, compiled:
kernels are compiled and models loaded before the clock starts) and its reference
either as the obvious alternative (one call per sentence, the bare model forward) or as
a slow, obviously right implementation (:mod:`brittle.scorers.reference`).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from brittle.data import bench_pool_tables_path, bench_tables_path
from brittle.engine.bench.measure import PeakRSS, best_time, kernel_use
from brittle.engine.bench.records import StageResult, with_kernel_use
from brittle.engine.bench.startup import MARKER
from brittle.engine.bench.workload import (
    BENCH_COPOS,
    EVERY_SENSE_COPOS,
    EVERY_SENSE_OPTIONS,
    recorded_tables,
)
from brittle.engine.core.perturbation import apply_perturbation
from brittle.engine.core.registry import Registry
from brittle.engine.core.sentence import Sentence
from brittle.engine.core.tree import distance_matrix
from brittle.scorers.reference import apted_distance, dnd_ref, hamming_ref, idc_ref, random_heads

if TYPE_CHECKING:
    from brittle.engine.attack import AttackComponents, AttackConfig
    from brittle.engine.runs.shards import ShardExecutor

__all__ = ["STAGES", "BenchContext", "Stage"]


@dataclass(frozen=True, slots=True)
class BenchContext:
    """What every stage may use.

    Attributes:
        sentences: the fixed sample of the treebank (input order).
        treebank: where they come from (for the report).
        quick: smaller workloads (``--quick``).
        seed: seeds every random draw of the workloads.
        device: torch device of the model stages (``None``: CUDA when available).
        end_to_end_sentences: sentences the end-to-end attack runs on.
    """

    sentences: tuple[Sentence, ...]
    treebank: str
    quick: bool = False
    seed: int = 0
    device: str | None = None
    end_to_end_sentences: int = 60

    @property
    def repeat(self) -> int:
        """Repeats of each timing (the best is kept)."""
        return 2 if self.quick else 3


@runtime_checkable
class Stage(Protocol):
    """A registered stage: measures, returns its results (the first named as the stage)."""

    def __call__(self, ctx: BenchContext) -> tuple[StageResult, ...]: ...


STAGES: Registry[Stage] = Registry(
    "bench-stages", contract=Stage, packages=("brittle.engine.bench.stages",), item="stage"
)


def _trees(ctx: BenchContext, lo: int, hi: int, count: int) -> list[np.ndarray]:
    """HEAD arrays of the sample's sentences of ``lo``..``hi`` words (random trees of
    the same sizes fill up when the sample has too few)."""

    trees = [np.asarray(s.heads, dtype=np.int64) for s in ctx.sentences if lo <= len(s) <= hi]
    rng = np.random.default_rng(ctx.seed)
    while len(trees) < count:
        trees.append(random_heads(rng, int(rng.integers(lo, hi + 1))))
    return trees[:count]


@STAGES.register("tree_edit_distance", help="batched tree edit distance against apted")
def tree_edit_distance(ctx: BenchContext) -> tuple[StageResult, ...]:
    # deferred: Numba kernels compile and load only when their stage runs
    from brittle.scorers.distance import tree_edit_distance_batch

    trees = _trees(ctx, 10, 30, 200 if ctx.quick else 600)
    anchors = trees[:: len(trees) // 4][:4]
    tree_edit_distance_batch(anchors[0], trees[:4])  # compile
    with PeakRSS() as peak:
        # one batch takes a few milliseconds: each is timed for at least a quarter second
        ours = sum(
            best_time(partial(tree_edit_distance_batch, a, trees), ctx.repeat, at_least=0.25)
            for a in anchors
        )
    sample = trees[:: max(1, len(trees) // (20 if ctx.quick else 60))]

    def reference() -> None:
        for a in anchors:
            for b in sample:
                apted_distance(a, b)

    ref = best_time(reference, 1 if ctx.quick else 2)
    return (
        StageResult(
            "tree_edit_distance",
            len(anchors) * len(trees) / ours,
            "pairs/s",
            "apted (Python)",
            len(anchors) * len(sample) / ref,
            peak.peak_mb,
            "unlabelled dependency trees of 10-30 words from the sample",
        ),
    )


def _distances_from_first(trees: Sequence[np.ndarray]) -> list[float]:
    """Tree edit distance from the first tree to each other one, one call per pair."""
    # deferred: Numba kernels compile and load only when their stage runs
    from brittle.scorers.distance import tree_edit_distance

    return [tree_edit_distance(trees[0], b) for b in trees[1:]]


@STAGES.register("ted_scaling", help="tree edit distance time against tree size, to 150 words")
def ted_scaling(ctx: BenchContext) -> tuple[StageResult, ...]:
    # deferred: Numba kernels compile and load only when their stage runs
    from brittle.scorers.distance import tree_edit_distance

    rng = np.random.default_rng(ctx.seed)
    sizes = (10, 20, 40, 80, 150)
    pairs = 10 if ctx.quick else 30
    seconds: list[float] = []
    with PeakRSS() as peak:
        for n in sizes:
            trees = [random_heads(rng, n) for _ in range(pairs + 1)]
            tree_edit_distance(trees[0], trees[1])  # compile
            seconds.append(best_time(partial(_distances_from_first, trees), 2) / pairs)
    # growth rate: slope of log time against log size between the two largest sizes
    slope = float(np.polyfit(np.log(sizes[2:]), np.log(seconds[2:]), 1)[0])
    timings = ", ".join(f"{n} words {1e3 * t:.2f} ms" for n, t in zip(sizes, seconds, strict=True))
    return (
        StageResult(
            "ted_scaling", 1.0 / seconds[-1], "pairs/s", None, None, peak.peak_mb,
            f"random trees, one pair at a time: {timings}; time grows as size^{slope:.1f} "
            "from 40 to 150 words (Zhang-Shasha: at most size^4, size^2 x depth^2 typical)",
        ),
    )  # fmt: skip


@STAGES.register("hamming", help="batched Hamming distance against a Python loop")
def hamming(ctx: BenchContext) -> tuple[StageResult, ...]:
    # deferred: Numba kernels compile and load only when their stage runs
    from brittle.scorers.hamming import hamming_batch_ids

    rng = np.random.default_rng(ctx.seed)
    m, k = (200_000 if ctx.quick else 1_000_000), 20
    original = rng.integers(0, 50, k)
    cands = np.repeat(original[None, :], m, axis=0)
    flip = rng.random((m, k)) < 0.2
    cands[flip] = rng.integers(0, 50, int(flip.sum()))
    hamming_batch_ids(original, cands[:10])  # compile
    with PeakRSS() as peak:
        ours = best_time(lambda: hamming_batch_ids(original, cands), ctx.repeat)
    ref_m = 20_000
    first, rows = original.tolist(), cands[:ref_m].tolist()
    ref = best_time(lambda: [hamming_ref(first, c) for c in rows], 1)
    return (
        StageResult(
            "hamming", m / ours, "pairs/s", "Python loop", ref_m / ref, peak.peak_mb,
            f"{m:,} candidates of {k} tokens against one original",
        ),
    )  # fmt: skip


@STAGES.register("order_metrics", help="DND and IDC of permutations against Python")
def order_metrics(ctx: BenchContext) -> tuple[StageResult, ...]:
    # deferred: Numba kernels compile and load only when their stage runs
    from brittle.scorers.order import order_scores_batch

    rng = np.random.default_rng(ctx.seed)
    m, k = (200_000 if ctx.quick else 1_000_000), 100
    perms = np.argsort(rng.random((m, k)), axis=1).astype(np.int64)
    order_scores_batch(perms[:10])  # compile
    with PeakRSS() as peak:
        ours = best_time(lambda: order_scores_batch(perms), ctx.repeat)
    ref_m = 5_000
    lists = perms[:ref_m].tolist()
    ref = best_time(lambda: [(dnd_ref(p), idc_ref(p)) for p in lists], 1)
    return (
        StageResult(
            "order_metrics", m / ours, "permutations/s", "Python loop", ref_m / ref,
            peak.peak_mb, f"{m:,} random permutations of {k} units, DND and IDC",
        ),
    )  # fmt: skip


def _candidates(ctx: BenchContext, count: int) -> list[tuple[Sentence, list[Sentence]]]:
    """Each of the first ``count`` sentences with its distinct coPOS candidates
    (tau 2, b 20), as the perturb and attack runs see them."""
    # deferred: WordNet, spaCy and torch load only when a stage needs them
    from brittle.engine.perturb.perturb_run import make_generator

    sentences = list(ctx.sentences[:count])
    drawn = make_generator("copos", **BENCH_COPOS).perturb(sentences, b=20, seed=ctx.seed, tau=2)
    return [
        (s, [apply_perturbation(s, p) for p in dict.fromkeys(ps)])
        for s, ps in zip(sentences, drawn, strict=True)
    ]


@STAGES.register("parsing", help="batched, cached spaCy parsing against one call per sentence")
def parsing(ctx: BenchContext) -> tuple[StageResult, ...]:
    # deferred: spaCy loads only when the parsing stage runs
    from brittle.scorers.parsers import CachedParser, WordParser
    from brittle.scorers.parsers.helpers import SplitBackend, auto_helpers

    # deferred: as above
    from brittle.scorers.parsers.spacy_backend import SpacyBackend

    work = _candidates(ctx, 30 if ctx.quick else 100)
    n = sum(len(c) for _, c in work)
    backend = SpacyBackend()
    backend.prepare()
    backend.parse_words([s.forms for s, _ in work[:8]])  # warm up
    # As a run parses: beside helper processes when the machine has cores to spare,
    # started and loaded before the clock, as this process's model is.
    helpers = auto_helpers()
    ours_backend: WordParser = backend
    if helpers:
        split = SplitBackend(backend, SpacyBackend(), helpers=helpers)
        helpers = split.wait_ready()
        ours_backend = split

    def one_by_one() -> None:
        for s, cands in work:
            backend.parse_one(s.forms)
            for c in cands:
                backend.parse_one(c.forms)

    def batched() -> None:
        parser = CachedParser(ours_backend)  # cold cache, as at the start of a run
        for start in range(0, len(work), 64):
            parser.parse([w for s, cands in work[start : start + 64] for w in (s, *cands)])

    with PeakRSS() as peak:
        ours = best_time(batched, ctx.repeat)
    ref = best_time(one_by_one, ctx.repeat)
    if isinstance(ours_backend, SplitBackend):
        ours_backend.close()
    return (
        StageResult(
            "parsing", n / ours, "candidates/s", "one spaCy call per sentence", n / ref,
            peak.peak_mb,
            f"{len(work)} sentences and {n} distinct coPOS candidates (tau 2); "
            f"{helpers} helper process{'es' if helpers != 1 else ''} beside the parsing one",
        ),
    )  # fmt: skip


@STAGES.register("syntax_check", help="the syntax constraint's short cuts against exact distances")
def syntax_check(ctx: BenchContext) -> tuple[StageResult, ...]:
    # deferred: spaCy loads only when a parsing stage runs
    from brittle.scorers.parsers.spacy_backend import SpacyBackend
    from brittle.search.constraints.syntax import DistancePaths, parse_distances

    work = _candidates(ctx, 30 if ctx.quick else 100)
    backend = SpacyBackend()
    backend.prepare()
    parsed = [
        (parses[0], parses[1:])
        for parses in (backend.parse_words([w.forms for w in (s, *c)]) for s, c in work if c)
    ]
    n = sum(len(others) for _, others in parsed)
    paths = DistancePaths()

    def bounded() -> None:
        for reference, others in parsed:
            parse_distances(reference, others, bound=0.2)

    def exact() -> None:
        for reference, others in parsed:
            parse_distances(reference, others)

    for reference, others in parsed:
        parse_distances(reference, others, bound=0.2, paths=paths)
    with PeakRSS() as peak:
        ours = best_time(bounded, ctx.repeat)
    ref = best_time(exact, ctx.repeat)
    share = {
        k: getattr(paths, k) / max(paths.total, 1) for k in ("identical", "bounded", "computed")
    }
    return (
        StageResult(
            "syntax_check", n / ours, "candidates/s", "exact distance of every candidate",
            n / ref, peak.peak_mb,
            f"{n} coPOS candidates re-parsed by spaCy, threshold 0.2: "
            f"{share['identical']:.0%} identical parse, {share['bounded']:.0%} rejected by "
            f"the lower bound, {share['computed']:.0%} computed",
        ),
    )  # fmt: skip


@STAGES.register("representations", help="representation extraction against the bare forward")
def representations(ctx: BenchContext) -> tuple[StageResult, ...]:
    import torch

    # deferred: torch and transformers load only when a model stage runs
    from brittle.scorers.transformer_backend import TransformerEncoder

    sentences = [s.forms for s in ctx.sentences[: 100 if ctx.quick else 300]]
    encoder = TransformerEncoder(device=ctx.device)
    layers = (-1, -5)
    rows, offsets, _ = encoder.plan(sentences)
    batches = [encoder.collate(rows, index, offsets)[:2] for index in encoder.batches(rows)]

    def bare() -> None:
        with torch.inference_mode():
            for ids, mask in batches:
                encoder.net(input_ids=ids, attention_mask=mask, output_hidden_states=True)

    def full() -> None:
        encoder.encode_flat(sentences, layers=layers)

    bare()  # warm up
    full()
    with PeakRSS() as peak:
        ours = best_time(full, ctx.repeat)
    ref = best_time(bare, ctx.repeat)
    n = len(sentences)
    return (
        StageResult(
            "representations", n / ours, "sentences/s", "bare model forward, same batches",
            n / ref, peak.peak_mb,
            f"{n} sentences, bundled MiniLM, layers {list(layers)}, mean pooling",
        ),
    )  # fmt: skip


#: Sentence length buckets of the ``length_scaling`` stage, in words (upper bound open).
LENGTH_BUCKETS: tuple[tuple[int, int], ...] = ((5, 10), (10, 20), (20, 40), (40, 10_000))


@STAGES.register("length_scaling", help="encoder and parser throughput by sentence length")
def length_scaling(ctx: BenchContext) -> tuple[StageResult, ...]:
    # deferred: torch, transformers and spaCy load only when a model stage runs
    from brittle.scorers.parsers.spacy_backend import SpacyBackend
    from brittle.scorers.transformer_backend import TransformerEncoder

    encoder = TransformerEncoder(device=ctx.device)
    parser = SpacyBackend()
    parser.prepare()
    per = 20 if ctx.quick else 50
    parts: list[str] = []
    rates: list[float] = []
    with PeakRSS() as peak:
        for lo, hi in LENGTH_BUCKETS:
            group = [s.forms for s in ctx.sentences if lo <= len(s) < hi][:per]
            if not group:
                continue
            encoder.encode_flat(group[:2], layers=(-5,))  # warm up
            encode = best_time(partial(encoder.encode_flat, group, layers=(-5,)), ctx.repeat)
            parse = best_time(partial(parser.parse_words, group), ctx.repeat)
            label = f"{lo}-{hi - 1}" if hi < 10_000 else f"{lo}+"
            rate = len(group) / encode
            rates.append(rate)
            parts.append(
                f"{label} words ({len(group)} sentences): encoder {rate:,.0f}/s, "
                f"spaCy {len(group) / parse:,.0f}/s"
            )
    return (
        StageResult(
            "length_scaling", min(rates) if rates else 0.0, "sentences/s", None, None,
            peak.peak_mb,
            "sentences per second by length (the figure is the slowest bucket's encoder "
            "rate): " + "; ".join(parts),
        ),
    )  # fmt: skip


@STAGES.register("probe_scoring", help="batched probe metrics against one call per sentence")
def probe_scoring(ctx: BenchContext) -> tuple[StageResult, ...]:
    # deferred: Numba kernels compile and load only when their stage runs
    from brittle.scorers.metrics import score_distances, score_distances_many

    trees = _trees(ctx, 5, 40, 200 if ctx.quick else 1000)
    rng = np.random.default_rng(ctx.seed)
    preds = [distance_matrix(h) + rng.normal(0, 0.5, (len(h), len(h))) for h in trees]
    masks = [rng.random(len(h)) < 0.1 for h in trees]
    score_distances_many(preds[:2], trees[:2], punct=masks[:2])  # compile
    with PeakRSS() as peak:
        ours = best_time(lambda: score_distances_many(preds, trees, punct=masks), ctx.repeat)
    ref_m = min(len(trees), 300)

    def loop() -> None:
        for p, h, m in zip(preds[:ref_m], trees[:ref_m], masks[:ref_m], strict=True):
            score_distances(p, h, punct=m)

    ref = best_time(loop, 2)
    return (
        StageResult(
            "probe_scoring", len(trees) / ours, "sentences/s", "score_distances per sentence",
            ref_m / ref, peak.peak_mb,
            "UUAS, DSpr, Spearman and root scores of noisy gold distances, 5-40 words",
        ),
    )  # fmt: skip


@STAGES.register("generators", help="candidates drawn per second by every generator")
def generators(ctx: BenchContext) -> tuple[StageResult, ...]:
    # deferred: every generator's libraries load only when this stage runs
    from brittle.engine.perturb.perturb_run import make_generator
    from brittle.search.generators.base import GENERATORS

    out: list[StageResult] = []
    for name in GENERATORS.names():
        if name == "recorded":  # replays a tables file: it proposes nothing of its own
            continue
        # coCO runs the causal LM over every proposal (minutes per few sentences on a
        # laptop CPU): it gets a small workload of its own, and none with --quick.
        lm = name == "coco"
        if lm and ctx.quick:
            continue
        count = 3 if lm else 30 if ctx.quick else 100
        b = 5 if lm else 20
        sentences = list(ctx.sentences[:count])
        generator = make_generator(name)
        generator.prepare()
        generator.perturb(sentences[:1], b=2, seed=ctx.seed, tau=2)  # models, caches, kernels
        with PeakRSS() as peak:
            start = time.perf_counter()
            drawn = generator.perturb(sentences, b=b, seed=ctx.seed, tau=2)
            seconds = time.perf_counter() - start
        n = sum(len(ps) for ps in drawn)
        out.append(
            StageResult(
                f"generator.{name}", len(sentences) / seconds, "sentences/s", None, None,
                peak.peak_mb, f"b {b}, tau 2, {len(sentences)} sentences, {n} candidates",
            )
        )  # fmt: skip
    return tuple(out)


def attack_workload(
    sentences: Sequence[Sentence], *, every_sense: bool = False
) -> tuple[str, tuple[str, ...], int]:
    """The generator, its options and the options per position an attack stage searches
    on ``sentences``: the recorded tables when they hold every sentence (the bench's
    pool, or with ``every_sense`` La Malfa et al.'s), else coPOS as it stands with the
    same options."""
    copos, options = (EVERY_SENSE_COPOS, EVERY_SENSE_OPTIONS) if every_sense else (BENCH_COPOS, 5)
    path = bench_pool_tables_path() if every_sense else bench_tables_path()
    tables = recorded_tables(sentences, path)
    if tables is not None:
        return "recorded", (f"tables={tables}",), options
    return "copos", tuple(f"{k}={v}" for k, v in copos.items()), options


def _attack_config(ctx: BenchContext, count: int, *, every_sense: bool = False) -> AttackConfig:
    """The measured attack: the demo's probes (trained on first use), beam search
    (width 2, tau 2, 5 options) on the first ``count`` sentences, spaCy syntax check, on
    the recorded coPOS tables (:mod:`brittle.engine.bench.workload`) when they hold
    these sentences, else on coPOS as it stands (:func:`workload_of` says which).
    ``every_sense``: La Malfa et al.'s every-sense pool, 20 options per position."""
    # deferred: the demo's probes and the attack load only when a stage runs an attack
    from brittle.engine.attack import AttackConfig
    from brittle.engine.demo import prepare_demo, train_demo_probes

    plan = prepare_demo()
    train_demo_probes(plan)
    method, generator_options, options = attack_workload(
        ctx.sentences[:count], every_sense=every_sense
    )
    return AttackConfig(
        treebank=ctx.treebank,
        probes=tuple(str(p) for p in plan.probes),
        method=method,
        search="beam",
        budget=2,
        candidates=options,
        beam_width=2,
        parser="spacy",
        constraints=("syntax:0.2",),  # pinned: the workload stays the one measured before
        limit=count,
        generator_options=generator_options,
    )


def workload_of(config: AttackConfig) -> str:
    """How an attack stage's candidates were made, for its detail line."""
    options = dict(o.split("=", 1) for o in config.generator_options)
    if config.method == "recorded" and options.get("tables") == str(bench_pool_tables_path()):
        return "coPOS's every-sense pool recorded in data/bench-pool-tables.json"
    if config.method == "recorded":
        return "coPOS tables recorded in data/bench-tables.json"
    if options.get("sense") == "all":
        return "coPOS's every-sense pool as it stands (no recorded tables for these sentences)"
    return "coPOS as it stands (no recorded tables for these sentences)"


def _in_fresh_process(name: str, ctx: BenchContext) -> tuple[StageResult, ...]:
    """Run the attack stage ``name`` in a new Python process, as a ``brittle attack``
    runs: the models, caches and heap of the stages measured before it in this process
    do not weigh on it (in one process the end-to-end ratio came out 0.63 after every
    other stage and 0.76 alone)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(_measured_stage, name, ctx).result()


def _measured_stage(name: str, ctx: BenchContext) -> tuple[StageResult, ...]:
    """Attack stage ``name`` with its own process's kernel time and page faults."""
    before = kernel_use()
    return with_kernel_use(_ATTACK_STAGES[name](ctx), kernel_use() - before)


@STAGES.register("end_to_end", help="a whole attack against the bare forward on its candidates")
def end_to_end(ctx: BenchContext) -> tuple[StageResult, ...]:
    return _in_fresh_process("end_to_end", ctx)


def _end_to_end(ctx: BenchContext) -> tuple[StageResult, ...]:
    import dataclasses
    import tempfile
    from pathlib import Path

    # deferred: the attack's models and libraries load only when this stage runs
    from brittle.engine.attack import build_components, run_attack
    from brittle.engine.bench.recording import (
        RecordingEvaluator,
        bare_forward_seconds,
        encoder_of,
    )

    # deferred: as above
    from brittle.search.sentence_models import forget_texts

    count = min(len(ctx.sentences), 15 if ctx.quick else ctx.end_to_end_sentences)
    config = _attack_config(ctx, count)
    comps = build_components(config)
    encoder, top = encoder_of(comps.evaluator)
    engine: list[float] = []
    shallow: list[float] = []
    full: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        # A first pass over the same sentences compiles the kernels and loads the
        # models, as an earlier run would; the texts kept in memory are then forgotten
        # before each timed run. Each timed run is followed by its references on the
        # candidates it scored, so a change of the machine's speed hits both alike; the
        # medians are reported, with the spread of the per-run ratios.
        run_attack(config, Path(tmp) / "warm", components=comps)
        peak_mb = 0.0
        for k in range(ctx.repeat):
            forget_texts()
            recording = RecordingEvaluator(comps.evaluator)
            timed = dataclasses.replace(comps, evaluator=recording)
            with PeakRSS() as peak:
                start = time.perf_counter()
                run_attack(config, Path(tmp) / f"run{k}", components=timed)
                engine.append(time.perf_counter() - start)
            peak_mb = max(peak_mb, peak.peak_mb)
            shallow.append(bare_forward_seconds(encoder, recording.batches, top))
            full.append(bare_forward_seconds(encoder, recording.batches, None))
    n = sum(len(b) for b in recording.batches)
    detail = (
        f"beam search (width 2, tau 2) on {count} sentences over {workload_of(config)}, "
        f"{n} candidates scored, spaCy syntax constraint, demo probes on hidden state "
        f"{top}, every cache cold; median of {ctx.repeat} runs, each beside its "
        f"references; ratio per run {_spread(shallow, engine)} (every block: "
        f"{_spread(full, engine)})"
    )
    rate = n / statistics.median(engine)
    return (
        StageResult(
            "end_to_end", rate, "candidates/s", f"bare forward through blocks 1-{top}",
            n / statistics.median(shallow), peak_mb, detail,
        ),
        StageResult(
            "end_to_end_full", rate, "candidates/s", "bare forward through every block",
            n / statistics.median(full), peak_mb, detail,
        ),
    )  # fmt: skip


def _spread(reference_s: Sequence[float], engine_s: Sequence[float]) -> str:
    """The lowest and highest of the per-run ratios (reference time over engine time)."""
    ratios = [r / e for r, e in zip(reference_s, engine_s, strict=True)]
    return f"{min(ratios):.2f}x to {max(ratios):.2f}x"


@STAGES.register("workers", help="an attack on 2 local worker processes against one process")
def workers(ctx: BenchContext) -> tuple[StageResult, ...]:
    return _in_fresh_process("workers", ctx)


def _workers(ctx: BenchContext) -> tuple[StageResult, ...]:
    import tempfile
    from pathlib import Path

    # deferred: the attack's models and libraries load only when this stage runs
    from brittle.engine.attack import build_components, run_attack
    from brittle.engine.runs.shards import LocalProcesses, available_cpus

    count = min(len(ctx.sentences), 32 if ctx.quick else 64)
    config = _attack_config(ctx, count)
    n_workers = 2

    def timed(
        out: Path,
        components: AttackComponents | None = None,
        executor: ShardExecutor | None = None,
    ) -> float:
        start = time.perf_counter()
        run_attack(config, out, components=components, executor=executor)
        return time.perf_counter() - start

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        comps = build_components(config)
        # Each side first runs the same sentences once: models loaded, kernels
        # compiled, the sense choice's embeddings in each setting's on-disk store.
        timed(root / "one-warm", components=comps)
        one: list[float] = []
        many: list[float] = []
        with PeakRSS() as peak, LocalProcesses(n_workers) as pool:
            timed(root / "many-warm", executor=pool)
            for k in range(ctx.repeat):  # alternately, so a change of speed hits both
                one.append(timed(root / f"one{k}", components=comps))
                many.append(timed(root / f"many{k}", executor=pool))
            threads = pool.threads
        same = (root / "one0" / "adversarial.conllu").read_bytes() == (
            root / "many0" / "adversarial.conllu"
        ).read_bytes()
    one_s, many_s = statistics.median(one), statistics.median(many)
    shards = -(-count // 16)
    detail = (
        f"the end-to-end attack on {count} sentences ({shards} shards of 16) over "
        f"{workload_of(config)}, warm: "
        f"{n_workers} local processes with {threads} torch thread(s) each against one "
        f"process with {available_cpus()} CPUs and its parse helper; median of "
        f"{ctx.repeat} runs each way, alternating, ratio per run {_spread(one, many)}; "
        f"adversarial.conllu {'identical' if same else 'DIFFERENT'}; peak RSS is the parent's"
    )
    return (
        StageResult(
            "workers", count / many_s, "sentences/s", "one process", count / one_s,
            peak.peak_mb, detail,
        ),
    )  # fmt: skip


@STAGES.register("grading", help="grading the kept perturbations against the attack itself")
def grading(ctx: BenchContext) -> tuple[StageResult, ...]:
    return _in_fresh_process("grading", ctx)


#: Sentences of the ``tree`` preset's attack in the grading stage (full run, --quick):
#: the end-to-end search settings (beam width 2, tau 2, 5 options), so about 0.15 s a
#: sentence on 2 cores.
GRADING_TREE_SENTENCES = (16, 4)
#: Sentences of the ``meaning`` preset's attack in the grading stage (full run, --quick):
#: coPOS generating in the run, its constraints and ``judged:meaning``, about 0.25 s a
#: sentence on 2 cores.
GRADING_MEANING_SENTENCES = (16, 4)


#: The least share of the attack's time the grading stages report grading to cost: a
#: smaller difference between two medians of whole attacks is the timing's noise.
GRADING_FLOOR = 0.005


def grading_cost(plain_s: float, graded_s: float) -> float:
    """Seconds grading adds to an attack of ``plain_s`` seconds that took ``graded_s``
    graded, at least :data:`GRADING_FLOOR` of ``plain_s`` (a smaller or negative
    difference is the timing's noise, and dividing by it would report any rate)."""
    return max(graded_s - plain_s, GRADING_FLOOR * plain_s)


def _grading(ctx: BenchContext) -> tuple[StageResult, ...]:
    """What grading adds to an attack (``attack --grade``, the default): each attack
    timed with and without grading its kept perturbations (spaCy re-parse, LM surprisal,
    MiniLM similarity, the lexical checks). Three workloads: the end-to-end attack
    (recorded coPOS tables, a small pool: a few queries a sentence, no generation in the
    run, so the attack itself is the cheapest there is), the ``tree`` preset
    (Jabberwocky nonwords, the pool of a search that finds damage) and the ``meaning``
    preset as a user runs it (coPOS generating its synonyms in the run, its constraints
    and ``judged:meaning``, whose grades of the candidates the final grading finds
    already made). A first graded run loads every
    model (the parser and its helper process too); each timed run then starts its
    caches as a new run's chunk does (scores and parses; a new grader; the sentence
    texts forgotten). The ratio is the attack's time over grading's: 4 or more means
    grading costs at most a quarter of the attack's time; a cost under
    :data:`GRADING_FLOOR` of the attack's time is reported as that share."""
    import tempfile
    from pathlib import Path

    # deferred: the attack's models and libraries load only when this stage runs
    from brittle.engine.attack import build_components, run_attack
    from brittle.search.presets import PRESETS

    # deferred: as above
    from brittle.search.sentence_models import forget_texts

    n_tree = GRADING_TREE_SENTENCES[1 if ctx.quick else 0]
    n_meaning = GRADING_MEANING_SENTENCES[1 if ctx.quick else 0]
    base = _attack_config(ctx, min(len(ctx.sentences), 15 if ctx.quick else 32))
    tree = _attack_config(ctx, min(len(ctx.sentences), n_tree)).with_preset(PRESETS.get("tree"))
    meaning = _attack_config(ctx, min(len(ctx.sentences), n_meaning)).with_preset(
        PRESETS.get("meaning")
    )
    workloads = (
        ("grading", base, ctx.repeat, f"the end-to-end attack over {workload_of(base)}"),
        ("grading.tree", tree, ctx.repeat, "the tree preset (Jabberwocky, beam width 2, tau 2)"),
        (
            "grading.meaning",
            meaning,
            ctx.repeat,
            "the meaning preset (coPOS generating in the run, beam width 2, tau 2)",
        ),
    )
    out: list[StageResult] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, config, repeat, what in workloads:
            plain: list[float] = []
            graded: list[float] = []
            comps = build_components(config)
            run_attack(config, root / f"{name}-warm", components=comps, grade=True)
            with PeakRSS() as peak:
                for k in range(repeat):  # alternately, so a change of speed hits both
                    forget_texts()
                    start = time.perf_counter()
                    run_attack(config, root / f"{name}-plain{k}", components=comps)
                    plain.append(time.perf_counter() - start)
                    forget_texts()
                    start = time.perf_counter()
                    summary = run_attack(
                        config, root / f"{name}-graded{k}", components=comps, grade=True
                    )
                    graded.append(time.perf_counter() - start)
            validity = summary.get("validity")
            kept = validity["graded"] if validity is not None else 0
            count = config.limit or 0
            plain_s, graded_s = statistics.median(plain), statistics.median(graded)
            cost = grading_cost(plain_s, graded_s)
            shares = [max(g - p, 0.0) / p for p, g in zip(plain, graded, strict=True)]
            detail = (
                f"{what} on {count} sentences, {kept} kept perturbations graded (median of "
                f"{repeat} run(s) each way, alternating, models loaded): {graded_s:.1f} s "
                f"graded against {plain_s:.1f} s, grading {cost / plain_s:.0%} of the "
                f"attack's time ({min(shares):.0%} to {max(shares):.0%} over the runs)"
            )
            out.append(
                StageResult(
                    name, count / cost, "sentences/s", "the attack without grading",
                    count / plain_s, peak.peak_mb, detail,
                )
            )  # fmt: skip
    return tuple(out)


@STAGES.register(
    "anytime", help="mean drop against wall-clock time for sample, greedy, beam and guided"
)
def anytime(ctx: BenchContext) -> tuple[StageResult, ...]:
    return _in_fresh_process("anytime", ctx)


#: Strategies the anytime stage runs, its query budget, and its time and query grids.
ANYTIME_SEARCHES = ("sample", "greedy", "beam", "guided")
ANYTIME_QUERIES = 100
ANYTIME_SECONDS = (0.25, 0.5, 1.0, 2.0, 4.0)
ANYTIME_AT = 1.0
ANYTIME_QUERY_GRID = (10, 25, 50, 100)


def mean_drop_by(
    records: Sequence[Sequence[tuple[int, float, float]]], limit: float, *, axis: int
) -> float:
    """Mean over sentences of the best damage each had reached within ``limit`` (queries
    when ``axis`` is 0, seconds when 1) by its anytime record (0 before any)."""
    if not records:
        return 0.0
    best = [max((step[2] for step in r if step[axis] <= limit), default=0.0) for r in records]
    return float(sum(best) / len(best))


def _anytime(ctx: BenchContext) -> tuple[StageResult, ...]:
    """Each strategy's anytime records on the end-to-end sentences over the every-sense
    coPOS pool, at a query budget of :data:`ANYTIME_QUERIES` (sample draws as many), in
    lock-step rounds as an attack runs; a row's figure is the mean drop (the objective's
    damage) reached within :data:`ANYTIME_AT` seconds of each sentence's search, its
    reference beam's."""
    import dataclasses
    import tempfile
    from pathlib import Path

    # deferred: the attack's models and libraries load only when this stage runs
    from brittle.engine.attack import build_components, run_attack
    from brittle.engine.reports.results import read_rows

    count = min(len(ctx.sentences), 15 if ctx.quick else ctx.end_to_end_sentences)
    base = dataclasses.replace(
        _attack_config(ctx, count, every_sense=True), query_budget=ANYTIME_QUERIES, anytime=True
    )
    curves: dict[str, list[tuple[tuple[int, float, float], ...]]] = {}
    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp, PeakRSS() as peak:
        comps = None
        for search in ANYTIME_SEARCHES:
            config = dataclasses.replace(
                base,
                search=search,
                candidates=ANYTIME_QUERIES if search == "sample" else base.candidates,
            )
            comps = build_components(config, reuse=comps)
            warm = dataclasses.replace(config, limit=min(count, 4))  # code paths run once
            run_attack(warm, Path(tmp) / f"{search}-warm", components=comps)
            start = time.perf_counter()
            run_attack(config, Path(tmp) / search, components=comps)
            seconds[search] = time.perf_counter() - start
            rows = list(read_rows(Path(tmp) / search / "results.jsonl"))
            curves[search] = [r.anytime or () for r in rows]
    reference = mean_drop_by(curves["beam"], ANYTIME_AT, axis=1)
    out: list[StageResult] = []
    for search in ANYTIME_SEARCHES:
        by_time = ", ".join(
            f"{t:g} s {mean_drop_by(curves[search], t, axis=1):.4f}" for t in ANYTIME_SECONDS
        )
        by_queries = ", ".join(
            f"{q} {mean_drop_by(curves[search], q, axis=0):.4f}" for q in ANYTIME_QUERY_GRID
        )
        detail = (
            f"{search} on {count} sentences over {workload_of(base)}, tau 2, query budget "
            f"{ANYTIME_QUERIES}, warm, lock-step rounds ({seconds[search]:.1f} s in all); "
            f"mean drop within {by_time}; within {by_queries} queries"
        )
        out.append(
            StageResult(
                f"anytime.{search}", mean_drop_by(curves[search], ANYTIME_AT, axis=1),
                f"drop in {ANYTIME_AT:g} s", "beam" if search != "beam" else None,
                reference if search != "beam" else None, peak.peak_mb, detail,
            )
        )  # fmt: skip
    return tuple(out)


#: The attack stages, each measured in a fresh process (:func:`_in_fresh_process`).
_ATTACK_STAGES: dict[str, Callable[[BenchContext], tuple[StageResult, ...]]] = {
    "end_to_end": _end_to_end,
    "workers": _workers,
    "grading": _grading,
    "anytime": _anytime,
}


@STAGES.register("startup", help="process start to the first candidate scored")
def startup(ctx: BenchContext) -> tuple[StageResult, ...]:
    import subprocess
    import sys

    def once(code: str) -> float:
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        if MARKER not in done.stdout:  # pragma: no cover - the child failed to score
            raise RuntimeError(f"startup probe printed no marker:\n{done.stderr[-2000:]}")
        return time.perf_counter() - start

    import resource

    once("from brittle.engine.bench.startup import main; main()")  # warm caches
    # best of ctx.repeat runs, as every other stage: one start-up moves by half a second
    # from run to run on a shared machine
    before = kernel_use(children=True)
    ours = min(
        once("from brittle.engine.bench.startup import main; main()") for _ in range(ctx.repeat)
    )
    child = kernel_use(children=True) - before  # the children's, over ctx.repeat starts
    interpreter = min(once(f"print({MARKER!r})") for _ in range(2))
    child_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**10  # KiB on Linux
    imports = min(once(_LIBRARY_IMPORTS) for _ in range(ctx.repeat))
    return (
        StageResult(
            "startup", ours, "s", None, None, child_peak,
            "the demo's attack configuration, caches warm, from process start until its "
            f"first candidate is scored (a bare interpreter start takes {interpreter:.2f} s); "
            "kernel time and page faults: one start's",
            kernel_s=child.kernel_s / ctx.repeat,
            minor_faults=child.minor_faults // ctx.repeat,
        ),
        StageResult(
            "startup_imports", imports, "s", None, None, child_peak,
            "a bare interpreter importing only the libraries the demo's attack needs "
            "before its first candidate (torch, transformers' BERT, spaCy, NLTK as brittle "
            "imports it, Numba): the floor of the startup stage without a resident process",
        ),
    )  # fmt: skip


#: What the ``startup_imports`` child runs: the third-party imports of the demo's attack.
_LIBRARY_IMPORTS = (
    "from brittle.engine.core import heap\n"
    "from brittle.engine.core.resources.wordnet import _import_nltk\n"
    "with heap.loading():\n"  # as the attack loads them (no full collections)
    "    import torch, spacy, numba\n"
    "    import transformers.models.bert.modeling_bert\n"
    "    _import_nltk()\n"
    f"print({MARKER!r})"
)
