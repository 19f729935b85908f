"""docs/performance.md's compare-methods memory table: the peak memory of one
``compare-methods`` run on the first 100 sentences of EWT test and on all of them.

``brittle compare-methods en_ewt-ud-test.conllu --methods copos,random,jabberwocky
--budget 1,2,3 --no-quality``, run as a whole command, once with ``--limit 100`` and
once on the whole file, one after the other, each command's peak resident memory from
``os.wait4`` (:func:`reproduce_common.child_usage`) and its wall time around it. The
comparison keeps every sentence's measures until its report, so what may grow with the
treebank is that and nothing else; the target is the whole file's peak within 10% of
the first 100's (bench/perturb_memory.py's for ``perturb``).

Each run's output and figures are kept under ``--work``; a run with its figures is not
run again. The figures go to ``docs/compare-memory.json`` (``--measured``);
``--write-doc`` puts the table into docs/performance.md's generated block
``compare-memory``. Run it with nothing else running.

Usage::

    python bench/compare_memory.py [--work reproduce/compare-memory] [--write-doc]
    python bench/compare_memory.py --render [--write-doc]
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import TypedDict

from perturb_memory import Run, measured_runs, peak_table
from reproduce_common import TEST, add_doc_options, kept_figures, publish

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ROOT / "docs" / "compare-memory.json"
DOC = ROOT / "docs" / "performance.md"
#: The command's options, but for the limit and the output.
OPTIONS: tuple[str, ...] = (
    "--methods", "copos,random,jabberwocky", "--budget", "1,2,3", "--no-quality",
)  # fmt: skip


class Figures(TypedDict):
    """What :func:`measure` keeps."""

    treebank: str
    command: str
    runs: list[Run]


def _sentences(treebank: Path, limit: int | None) -> int:
    """How many sentences a run with ``limit`` compares."""
    total = sum(1 for line in treebank.open(encoding="utf-8") if line.startswith("# sent_id"))
    return total if limit is None else min(limit, total)


def measure(work: Path) -> Figures:
    """Every run of :data:`perturb_memory.LIMITS` (skipped where its figures are kept)."""
    runs, _ = measured_runs(
        work, "compare", "compare-methods", OPTIONS, count=lambda limit, _: _sentences(TEST, limit)
    )
    return {
        "treebank": TEST.name,
        "command": shlex.join(["brittle", "compare-methods", TEST.name, *OPTIONS]),
        "runs": runs,
    }


def blocks(data: Figures) -> dict[str, str]:
    """docs/performance.md's generated block ``compare-memory``."""
    lines, verdict = peak_table(data["command"], data["runs"])
    return {"compare-memory": "\n".join([*lines, "", verdict]) + "\n"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("reproduce/compare-memory"))
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    data: Figures = kept_figures(args, lambda: measure(args.work))
    publish(blocks(data), DOC, write=args.write_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
