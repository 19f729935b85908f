"""Record the fixed workload of ``brittle bench``'s attack stages.

Writes ``data/bench-tables.json``: coPOS's substitution tables (the bench's options, 5
per position) for the first 64 sentences of the built-in treebank and of EWT test, and
``data/bench-pool-tables.json``: La Malfa et al.'s every-sense coPOS pool (20 options
per position) for the same sentences (``brittle.engine.bench.workload``). Run it only
to move the workload on purpose: every figure of docs/performance.md measured on the
old file is then stale.

Run: ``python bench/record_tables.py [--ewt PATH]``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from brittle.data import bench_pool_tables_path, bench_tables_path, default_treebank_path
from brittle.engine.bench.workload import (
    EVERY_SENSE_COPOS,
    EVERY_SENSE_OPTIONS,
    record_bench_tables,
)
from brittle.engine.core.conllu import read_conllu

EWT_TEST = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "data"
    / "ud"
    / "UD_English-EWT"
    / "en_ewt-ud-test.conllu"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ewt", type=Path, default=EWT_TEST, help="EWT test CoNLL-U")
    args = parser.parse_args()
    treebanks = [read_conllu(default_treebank_path()), read_conllu(args.ewt)]
    options = record_bench_tables(treebanks, bench_tables_path())
    print(f"{bench_tables_path()}: {options} options recorded")
    pool = record_bench_tables(
        treebanks,
        bench_pool_tables_path(),
        options=EVERY_SENSE_OPTIONS,
        copos=EVERY_SENSE_COPOS,
    )
    print(f"{bench_pool_tables_path()}: {pool} options recorded")


if __name__ == "__main__":
    main()
