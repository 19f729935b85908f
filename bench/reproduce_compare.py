"""docs/compare-methods.md's tables and figure: ``brittle compare-methods`` with today's
defaults on the first 100 sentences of EWT test.

Runs ``brittle compare-methods TEST --limit 100 --out WORK/compare-ewt`` (every default
generator, tau 1-3, b = 10, spaCy, quality measured) unless its output is there, keeps
its ``compare-methods.json`` as ``docs/compare-methods.json`` and its plot as
``docs/compare-methods.png``, and renders the page's two tables with the command's own
writers (``brittle.engine.compare.compare_report``), so the page shows exactly what the
command prints.

Usage::

    python bench/reproduce_compare.py [--work DIR] [--write-doc]
    python bench/reproduce_compare.py --render [--write-doc]

``--write-doc`` puts the tables into docs/compare-methods.md between their
``<!-- generated: compare-distance -->`` / ``compare-quality`` and
``<!-- end generated -->`` lines; ``--render`` prints them from the kept JSON alone
(what the page's test checks).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from reproduce_common import TEST, add_doc_options, brittle, kept_figures, publish

from brittle.engine.compare.compare_report import (
    JSON_NAME,
    PLOT_NAME,
    markdown_table,
    quality_table,
)
from brittle.engine.compare.compare_run import CompareResult

ROOT = Path(__file__).resolve().parents[1]
#: The command's JSON, as the last run wrote it (the page is rendered from it).
MEASURED = ROOT / "docs" / "compare-methods.json"
DOC = ROOT / "docs" / "compare-methods.md"
FIGURE = ROOT / "docs" / PLOT_NAME
#: The documented subset: coCO is the slowest method (its LM runs per proposal).
LIMIT = 100


def measure(work: Path) -> dict[str, Any]:
    """Run the comparison unless ``WORK/compare-ewt`` holds it; its JSON, the figure
    copied beside the page."""
    out = work / "compare-ewt"
    if not (out / JSON_NAME).exists():
        brittle("compare-methods", TEST, "--limit", LIMIT, "--quiet", "--out", out)
    shutil.copyfile(out / PLOT_NAME, FIGURE)
    data: dict[str, Any] = json.loads((out / JSON_NAME).read_text())
    return data


def blocks(data: dict[str, Any]) -> dict[str, str]:
    """The generated blocks of docs/compare-methods.md: the parse distances per method
    and tau (``compare-distance``) and the drawn perturbations' quality
    (``compare-quality``), as ``compare-methods.md`` of the run writes them."""
    result = CompareResult.from_dict(data)
    return {"compare-distance": markdown_table(result), "compare-quality": quality_table(result)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("reproduce-compare"))
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    data = kept_figures(args, lambda: measure(args.work))
    publish(blocks(data), DOC, write=args.write_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
