"""Batched, cached parsing of perturbation candidates against parsing them one by one.

Run as ``python bench/bench_parsing.py`` (``--quick`` for fewer sentences). A generator
(``copos`` by default) draws ``b`` candidates of ``tau`` words for each of the first N
sentences of EWT test (the built-in treebank when EWT is absent). The same spaCy model
then parses them four ways:

- ``one by one, per check``: every candidate check parses the original and the
  candidate with a separate ``nlp(doc)`` call each (a per-candidate constraint);
- ``one by one``: the original once per sentence, then each candidate alone;
- ``batched, raw``: the same docs through ``nlp.pipe`` (batch 64), no cache;
- ``batched + cache``: what ``brittle perturb`` does: one parser call per chunk of 64
  sentences (originals and candidates), deduplicated and cached (cold at start).

Times are the best of a few interleaved repeats. The headline ratio is
``one by one, per check`` over ``batched + cache``; ``one by one`` over ``batched, raw``
isolates the effect of batching alone.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from brittle.data import default_treebank_path  # noqa: E402
from brittle.engine.core.perturbation import apply_perturbation  # noqa: E402
from brittle.engine.core.sentence import Sentence  # noqa: E402
from brittle.engine.perturb_run import make_generator, read_treebank  # noqa: E402
from brittle.scorers.parsers import CachedParser  # noqa: E402
from brittle.scorers.parsers.spacy_backend import SpacyBackend  # noqa: E402

from support import EWT_TEST  # noqa: E402


def best_time(fn: Callable[[], object], repeat: int) -> float:
    """Best wall time of ``repeat`` calls, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sentences", type=int, default=120)
    ap.add_argument("--method", default="copos")
    ap.add_argument("--budget", type=int, default=1)
    ap.add_argument("--candidates", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="40 sentences, 2 repeats")
    args = ap.parse_args()
    if args.quick:
        args.sentences, args.repeat = 40, 2

    path = EWT_TEST if EWT_TEST.exists() else default_treebank_path()
    sentences = read_treebank(path, limit=args.sentences)
    generator = make_generator(args.method)
    drawn = generator.perturb(sentences, b=args.candidates, seed=0, tau=args.budget)
    work: list[tuple[Sentence, list[Sentence]]] = [
        (s, [apply_perturbation(s, p) for p in dict.fromkeys(ps)])
        for s, ps in zip(sentences, drawn, strict=True)
    ]
    n_cand = sum(len(c) for _, c in work)
    backend = SpacyBackend()
    backend.prepare()
    backend.parse_words([s.forms for s in sentences[:16]])  # warm up

    def per_check() -> None:
        for s, cands in work:
            for c in cands:
                backend.parse_one(s.forms)
                backend.parse_one(c.forms)

    def one_by_one() -> None:
        for s, cands in work:
            backend.parse_one(s.forms)
            for c in cands:
                backend.parse_one(c.forms)

    def batched_raw() -> None:
        backend.parse_words([w.forms for s, cands in work for w in (s, *cands)])

    def batched_cached() -> None:
        parser = CachedParser(backend)
        for start in range(0, len(work), 64):
            chunk = work[start : start + 64]
            parser.parse([w for s, cands in chunk for w in (s, *cands)])

    times = dict.fromkeys(("per_check", "one_by_one", "batched_raw", "batched_cached"), 1e9)
    fns = {
        "per_check": per_check,
        "one_by_one": one_by_one,
        "batched_raw": batched_raw,
        "batched_cached": batched_cached,
    }
    for _ in range(args.repeat):
        for name, fn in fns.items():
            times[name] = min(times[name], best_time(fn, 1))

    print(
        f"{len(sentences)} sentences of {path.name}, {n_cand} distinct {args.method} candidates "
        f"(tau={args.budget}, b={args.candidates}), spaCy {backend.describe()['model']}"
    )
    parses = {
        "per_check": 2 * n_cand,
        "one_by_one": n_cand + len(sentences),
        "batched_raw": n_cand + len(sentences),
        "batched_cached": n_cand + len(sentences),
    }
    labels = {
        "per_check": "one by one, per check",
        "one_by_one": "one by one",
        "batched_raw": "batched, raw",
        "batched_cached": "batched + cache",
    }
    for name, seconds in times.items():
        rate = n_cand / seconds
        print(
            f"  {labels[name]:<22} {seconds:7.2f} s  {parses[name]:6d} parses  "
            f"{rate:7.0f} candidates/s"
        )
    headline = times["per_check"] / times["batched_cached"]
    print(f"ratio one by one (per check) / batched + cache: {headline:.2f}x (target >= 3x)")
    print(
        f"ratio one by one / batched + cache:             "
        f"{times['one_by_one'] / times['batched_cached']:.2f}x"
    )
    print(
        f"ratio one by one / batched, raw (batching only): "
        f"{times['one_by_one'] / times['batched_raw']:.2f}x"
    )


if __name__ == "__main__":
    main()
