"""Batched, cached parsing of perturbation candidates against one spaCy call per sentence.

A thin call of ``brittle bench``'s ``parsing`` and ``syntax_check`` stages
(:mod:`brittle.engine.bench.stages`): coPOS draws b = 20 candidates of tau = 2 words
for each of the first sentences of EWT test (the built-in treebank when EWT is absent);
the same spaCy model then parses the originals and candidates one call per sentence and
as ``brittle perturb`` and ``attack`` do (one call per chunk of 64 sentences,
deduplicated and cached). ``syntax_check`` then times the syntax constraint's short
cuts against computing every distance, and says how often each path is taken.

Run as ``python bench/bench_parsing.py [--quick]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from brittle.engine.bench import BenchConfig, run_bench  # noqa: E402

from support import EWT_TEST  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="30 sentences, 2 repeats")
    args = parser.parse_args()
    treebank = str(EWT_TEST) if EWT_TEST.exists() else None
    config = BenchConfig(treebank=treebank, quick=args.quick, stages=("parsing", "syntax_check"))
    print(run_bench(config).markdown())


if __name__ == "__main__":
    main()
