"""Candidates per second of every generator on EWT test sentences.

Run as ``python bench/bench_generators.py`` (``--sentences N`` to change the batch,
``--skip coco`` to leave out slow ones). For substitution generators a "candidate" is
one ``(form, lemma)`` option at one position (``top_k`` per position at most); for
reorderings it is one reordering (``b`` per sentence). Each generator is timed twice:
``cold`` includes loading its resources (WordNet, GloVe, the language model, training
the character model), ``warm`` is a second call on the same sentences with everything
loaded. It measures, it does not judge: the exit status is always 0.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from brittle.engine.core.sentence import Sentence
    from brittle.search.generators import Reordering, SubstitutionGenerator

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support import EWT_TEST  # noqa: E402


def timed(fn: Callable[[], int]) -> tuple[float, int]:
    """Wall time in seconds and the count ``fn`` returns."""
    t0 = time.perf_counter()
    count = fn()
    return time.perf_counter() - t0, count


def count_options(gen: SubstitutionGenerator, sentences: list[Sentence], top_k: int) -> int:
    """Options proposed over all positions of all sentences."""
    return sum(t.size for t in gen.candidates(sentences, top_k=top_k))


def count_reorderings(gen: Reordering, sentences: list[Sentence], b: int) -> int:
    """Reorderings drawn over all sentences."""
    return sum(len(r) for r in gen.reorder(sentences, b=b, seed=0))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sentences", type=int, default=100, help="EWT test sentences")
    parser.add_argument("--top-k", type=int, default=10, help="options per position")
    parser.add_argument("--b", type=int, default=10, help="reorderings per sentence")
    parser.add_argument("--coco-sentences", type=int, default=20, help="sentences for coco")
    parser.add_argument("--skip", nargs="*", default=[], help="generator names to skip")
    args = parser.parse_args(argv)

    from brittle.engine.core.conllu import read_conllu
    from brittle.search.generators import (
        CoCO,
        CoPOS,
        Jabberwocky,
        NeighbourFlip,
        Neighbours,
        PhraseShuffle,
        RandomWords,
        Shuffle,
    )

    if not EWT_TEST.exists():
        print(f"{EWT_TEST} is not available")
        return 0
    sentences = read_conllu(EWT_TEST)[: args.sentences]
    words = sum(len(s) for s in sentences)
    print(f"{len(sentences)} EWT test sentences, {words} words; top_k={args.top_k}, b={args.b}")

    k, b = args.top_k, args.b
    coco_batch = sentences[: args.coco_sentences]
    jobs: list[tuple[str, int, Callable[[], int]]] = [
        ("copos", len(sentences), partial(count_options, CoPOS(), sentences, k)),
        ("random", len(sentences), partial(count_options, RandomWords(), sentences, k)),
        ("neighbours", len(sentences), partial(count_options, Neighbours(), sentences, k)),
        ("jabberwocky", len(sentences), partial(count_options, Jabberwocky(), sentences, k)),
        ("coco", len(coco_batch), partial(count_options, CoCO(), coco_batch, k)),
        (
            "coco +rerank",
            len(coco_batch),
            partial(count_options, CoCO(rerank=True), coco_batch, k),
        ),
        ("shuffle word", len(sentences), partial(count_reorderings, Shuffle(), sentences, b)),
        (
            "phrase-shuffle word",
            len(sentences),
            partial(count_reorderings, PhraseShuffle(rho=0.5), sentences, b),
        ),
        (
            "neighbour-flip word",
            len(sentences),
            partial(count_reorderings, NeighbourFlip(rho=0.5), sentences, b),
        ),
        (
            "shuffle subword",
            len(sentences),
            partial(count_reorderings, Shuffle(level="subword"), sentences, b),
        ),
        (
            "phrase-shuffle character",
            len(sentences),
            partial(count_reorderings, PhraseShuffle(level="character", rho=0.5), sentences, b),
        ),
        (
            "neighbour-flip character",
            len(sentences),
            partial(count_reorderings, NeighbourFlip(level="character", rho=0.5), sentences, b),
        ),
    ]
    header = f"{'generator':<26}{'sent':>6}{'cands':>8}{'cold s':>9}{'warm s':>9}{'cands/s':>11}"
    print(header)
    print("-" * len(header))
    for name, n_sent, job in jobs:
        if name.split()[0] in args.skip:
            continue
        cold, n = timed(job)
        warm, _ = timed(job)
        rate = n / warm if warm > 0 else float("inf")
        print(f"{name:<26}{n_sent:>6}{n:>8}{cold:>9.2f}{warm:>9.2f}{rate:>11.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
