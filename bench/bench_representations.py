"""Representation extraction throughput against the bare model forward on the same batches.

A thin call of ``brittle bench``'s ``representations`` stage
(:mod:`brittle.engine.bench.stages`): the bundled encoder runs over the first sentences
of EWT dev (the built-in treebank when EWT is absent), alternating

- the bare forward: the padded batches the backend builds, fed straight to
  ``model(...)`` with ``output_hidden_states=True`` (nothing else);
- ``TransformerEncoder.encode_flat`` on the same sentences (tokenization, alignment,
  windows, batching, forward, pooling of layers -1 and -5, copy to numpy).

The ratio is the engine's throughput over the bare forward's (1 would be free).

Run as ``python bench/bench_representations.py [--quick]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from brittle.engine.bench import BenchConfig, run_bench  # noqa: E402

from support import SHARED_UD  # noqa: E402

DEFAULT_TREEBANK = SHARED_UD / "UD_English-EWT" / "en_ewt-ud-dev.conllu"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="100 sentences, 2 repeats")
    args = parser.parse_args()
    treebank = str(DEFAULT_TREEBANK) if DEFAULT_TREEBANK.exists() else None
    config = BenchConfig(treebank=treebank, quick=args.quick, stages=("representations",))
    print(run_bench(config).markdown())


if __name__ == "__main__":
    main()
