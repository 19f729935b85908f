"""Throughput of the scorer kernels against their slow references, in one run.

Run as ``python bench/bench_kernels.py`` (``--quick`` for smaller batches). Every line
shows the kernel's throughput, the reference's, their ratio and the target. Kernels are
warmed up (compiled) before timing; the numbers are the best of a few repeats.
Exits with status 0 whether or not a target is met: it measures, it does not judge.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from scorers_reference import (  # noqa: E402
    EWT_TEST,
    apted_distance,
    dnd_ref,
    hamming_ref,
    idc_ref,
    networkx_tree_weight,
    random_heads,
)

from brittle.scorers.distance import tree_edit_distance, tree_edit_distance_batch  # noqa: E402
from brittle.scorers.hamming import hamming_batch_ids  # noqa: E402
from brittle.scorers.metrics import (  # noqa: E402
    aggregate_distance,
    score_depths,
    score_depths_many,
    score_distances,
    score_distances_many,
)
from brittle.scorers.mst import minimum_spanning_tree  # noqa: E402
from brittle.scorers.order import char_permutation_batch, order_scores_batch  # noqa: E402
from brittle.scorers.rank import spearman_rows  # noqa: E402


def best_time(fn: Callable[[], object], repeat: int = 3) -> float:
    """Best wall time of ``repeat`` calls, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def best_cpu(fn: Callable[[], object], repeat: int = 3) -> float:
    """Best process CPU time (all threads) of ``repeat`` calls, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def report(name: str, items: int, ours: float, ref_items: int, ref: float, target: str) -> None:
    rate = items / ours
    ref_rate = ref_items / ref
    print(f"{name:<34} {rate:>14,.0f}/s {ref_rate:>12,.0f}/s {rate / ref_rate:>9,.0f}x   {target}")


def load_trees(lo: int, hi: int) -> tuple[list[np.ndarray], str]:
    if EWT_TEST.exists():
        from brittle.engine.core.conllu import read_conllu

        trees = [np.asarray(s.heads, dtype=np.int64) for s in read_conllu(EWT_TEST)]
        return [t for t in trees if lo <= len(t) <= hi], "EWT test"
    rng = np.random.default_rng(0)
    return [random_heads(rng, int(rng.integers(lo, hi + 1))) for _ in range(600)], "random"


def bench_ted(quick: bool) -> None:
    trees, source = load_trees(10, 30)
    ref_pairs = 20 if quick else 60
    many = trees if not quick else trees[:200]
    anchors = trees[:: max(1, len(trees) // (2 if quick else 5))][: 2 if quick else 5]
    tree_edit_distance_batch(anchors[0], many[:4])  # compile
    ours = 0.0
    ours_cpu = 0.0
    for a in anchors:
        ours += best_time(partial(tree_edit_distance_batch, a, many))
        ours_cpu += best_cpu(partial(tree_edit_distance_batch, a, many))
    sample = many[:: max(1, len(many) // ref_pairs)][:ref_pairs]  # same distribution
    ref = 0.0
    ref_cpu = 0.0
    for a in anchors:
        t0, c0 = time.perf_counter(), time.process_time()
        for b in sample:
            apted_distance(a, b)
        ref += time.perf_counter() - t0
        ref_cpu += time.process_time() - c0
    n_ours = len(anchors) * len(many)
    n_ref = len(anchors) * len(sample)
    report(f"TED batch ({source}, 10-30 words)", n_ours, ours, n_ref, ref, ">= 500x apted")
    report("  same, CPU time of all threads", n_ours, ours_cpu, n_ref, ref_cpu, "(load-proof)")
    # single small call, after warm-up
    small_a = random_heads(np.random.default_rng(1), 10)
    small_b = random_heads(np.random.default_rng(2), 10)
    tree_edit_distance(small_a, small_b)
    calls = 2000 if quick else 20000
    t = best_time(lambda: [tree_edit_distance(small_a, small_b) for _ in range(calls)])
    name = "TED single call (10 words)"
    print(f"{name:<34} {t / calls * 1e6:>13.1f} us {'':>12} {'':>10}   < 50 us")


def bench_hamming(quick: bool) -> None:
    rng = np.random.default_rng(0)
    m, k = (200_000 if quick else 1_000_000), 20
    original = rng.integers(0, 50, k)
    cands = np.repeat(original[None, :], m, axis=0)
    flip = rng.random((m, k)) < 0.2
    cands[flip] = rng.integers(0, 50, int(flip.sum()))
    hamming_batch_ids(original, cands[:10])
    ours = best_time(lambda: hamming_batch_ids(original, cands))
    ref_m = 20_000
    orig_list = original.tolist()
    cand_lists = cands[:ref_m].tolist()
    ref = best_time(lambda: [hamming_ref(orig_list, c) for c in cand_lists], repeat=1)
    report("Hamming batch (20 tokens)", m, ours, ref_m, ref, ">= 1,000,000 pairs/s")


def bench_order(quick: bool) -> None:
    rng = np.random.default_rng(0)
    m, k = (200_000 if quick else 1_000_000), 100
    perms = np.argsort(rng.random((m, k)), axis=1).astype(np.int64)
    order_scores_batch(perms[:10])
    ours = best_time(lambda: order_scores_batch(perms))
    ref_m = 5_000
    lists = perms[:ref_m].tolist()
    ref = best_time(lambda: [(dnd_ref(p), idc_ref(p)) for p in lists], repeat=1)
    report("DND+IDC batch (100 chars)", m, ours, ref_m, ref, ">= 1,000,000 pairs/s")
    # the same from texts: recover the permutations, then score
    alphabet = np.array(list("abcdefghijklmnopqrstuvwxyz     .,"))
    text = "".join(rng.choice(alphabet, k))
    tm = 2_000 if quick else 10_000  # tiling a thoroughly shuffled text is O(k^2) or more
    shuffled = ["".join(text[i] for i in p) for p in perms[:tm]]
    char_permutation_batch(text, shuffled[:10])
    ours = best_time(lambda: order_scores_batch(char_permutation_batch(text, shuffled)))
    from scorers_reference import tile_permutation_ref

    ref_m = 20

    def ref_text() -> None:
        for s in shuffled[:ref_m]:
            p = tile_permutation_ref(text, s)
            assert p is not None
            dnd_ref(p), idc_ref(p)

    ref = best_time(ref_text, repeat=1)
    report("DND+IDC from 100-char texts", tm, ours, ref_m, ref, "(end to end)")


def bench_mst_spearman(quick: bool) -> None:
    rng = np.random.default_rng(0)
    n = 20
    mats = [rng.random((n, n)) for _ in range(200 if quick else 2000)]
    mats = [w + w.T for w in mats]
    minimum_spanning_tree(mats[0])
    ours = best_time(lambda: [minimum_spanning_tree(w) for w in mats])
    ref_m = 50
    ref = best_time(lambda: [networkx_tree_weight(w) for w in mats[:ref_m]], repeat=1)
    report("Prim MST (20 x 20)", len(mats), ours, ref_m, ref, "vs networkx")
    import scipy.stats

    a = rng.random((20_000, n))
    b = rng.integers(0, 8, (20_000, n)).astype(float)
    ours = best_time(lambda: spearman_rows(a, b))
    ref_m = 2_000
    pairs = list(zip(a[:ref_m], b[:ref_m], strict=True))
    ref = best_time(lambda: [scipy.stats.spearmanr(x, y) for x, y in pairs], 1)
    report("Spearman rows (20 values)", a.shape[0], ours, ref_m, ref, "vs scipy")


def bench_metrics(quick: bool) -> None:
    trees, source = load_trees(5, 40)
    trees = trees[: 200 if quick else 1000]
    rng = np.random.default_rng(0)
    from brittle.engine.core.tree import distance_matrix

    preds = [distance_matrix(h) + rng.normal(0, 0.5, (len(h), len(h))) for h in trees]
    aggregate_distance(score_distances_many(preds[:1], trees[:1]))
    t = best_time(lambda: aggregate_distance(score_distances_many(preds, trees)), repeat=1)
    print(f"{f'distance metrics ({source}, 5-40)':<34} {len(trees) / t:>14,.0f}/s sentences")


def bench_probe_scores(quick: bool) -> None:
    """Batched distance/depth-probe scores against per-sentence ``score_distances``."""
    from brittle.engine.core.tree import depths, distance_matrix

    trees, source = load_trees(10, 30)
    trees = trees[: 200 if quick else 1000]
    rng = np.random.default_rng(0)
    preds = [distance_matrix(h) + rng.normal(0, 0.5, (len(h), len(h))) for h in trees]
    masks = [rng.random(len(h)) < 0.1 for h in trees]
    score_distances_many(preds[:2], trees[:2], punct=masks[:2])  # compile
    ref_m = 100 if quick else 300

    def ref_loop(ps: list[np.ndarray], hs: list[np.ndarray], ms: list[np.ndarray]) -> None:
        for p, h, m in zip(ps, hs, ms, strict=True):
            score_distances(p, h, punct=m)

    ours = best_time(lambda: score_distances_many(preds, trees, punct=masks))
    ref = best_time(lambda: ref_loop(preds[:ref_m], trees[:ref_m], masks[:ref_m]), repeat=2)
    report(f"Distance scores ({source}, 10-30)", len(trees), ours, ref_m, ref, "vs score_distances")
    # an attack: many candidates scored against one gold sentence
    h, m = trees[0], masks[0]
    n = len(h)
    cands = [distance_matrix(h) + rng.normal(0, 0.5, (n, n)) for _ in range(len(trees))]
    hs, ms = [h] * len(cands), [m] * len(cands)
    ours = best_time(lambda: score_distances_many(cands, hs, punct=ms))
    ref = best_time(lambda: ref_loop(cands[:ref_m], hs[:ref_m], ms[:ref_m]), repeat=2)
    report(f"  same, one gold ({n} words)", len(cands), ours, ref_m, ref, "vs score_distances")
    dpreds = [depths(h) + rng.normal(0, 0.5, n) for _ in range(len(trees))]
    score_depths_many(dpreds[:2], hs[:2], punct=ms[:2])  # compile
    ours = best_time(lambda: score_depths_many(dpreds, hs, punct=ms))
    ref = best_time(
        lambda: [score_depths(p, h, punct=m) for p in dpreds[:ref_m]],
        repeat=2,
    )
    report(f"Depth scores, one gold ({n} words)", len(dpreds), ours, ref_m, ref, "vs score_depths")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller batches")
    args = parser.parse_args()
    import os

    import numba

    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"numba {numba.__version__}, {numba.get_num_threads()} threads, load {load}")
    print(f"{'kernel':<34} {'ours':>16} {'reference':>14} {'ratio':>10}   target")
    bench_ted(args.quick)
    bench_hamming(args.quick)
    bench_order(args.quick)
    bench_mst_spearman(args.quick)
    bench_probe_scores(args.quick)
    bench_metrics(args.quick)


if __name__ == "__main__":
    main()
