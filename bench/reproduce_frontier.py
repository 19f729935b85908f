"""docs/frontier.md's table and figure: ``brittle frontier`` on the first 60 GUM test sentences.

Runs, with the demo's probes (linear structural distance and POS probes on MiniLM layer
-5, trained on the built-in treebank by ``brittle demo``; trained here when missing)::

    brittle frontier $UD/UD_English-GUM/en_gum-ud-test.conllu \\
        --probe P/minilm-5-distance --probe P/minilm-5-pos \\
        --methods random,neighbours,coco --limit 60 --out WORK

every validity preset and the three plain generators, beam search, tau 2, 10 options,
query budget 200, seed 0 (the command's defaults). The rows go to ``docs/frontier.json``
(``--measured``); ``--write-doc`` puts the table into docs/frontier.md between its
``<!-- generated: frontier-gum -->`` and ``<!-- end generated -->`` lines and the figure
into ``docs/img/frontier-gum.png``; ``--render`` prints the table from the JSON alone
(what the test of the page checks). An interrupted run continues (``--resume``).

Usage::

    python bench/reproduce_frontier.py [--work reproduce/frontier] [--write-doc]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from reproduce_common import UD, add_doc_options, brittle, kept_figures, publish

from brittle.engine.demo import prepare_demo, train_demo_probes
from brittle.engine.frontier import HEADER, FrontierRow, row_cells

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ROOT / "docs" / "frontier.json"
DOC = ROOT / "docs" / "frontier.md"
FIGURE = ROOT / "docs" / "img" / "frontier-gum.png"
TREEBANK = UD / "UD_English-GUM" / "en_gum-ud-test.conllu"
#: The plain generators set beside the presets.
METHODS = ("random", "neighbours", "coco")
LIMIT = 60


def run(work: Path) -> dict[str, Any]:
    """Run (or finish) the frontier into ``work``; its ``frontier.json``."""
    plan = prepare_demo()
    train_demo_probes(plan)
    done = work / "frontier.json"
    if not done.exists():
        resume = ("--resume",) if work.exists() else ()
        brittle(
            "frontier", TREEBANK, *[x for p in plan.probes for x in ("--probe", p)],
            "--methods", ",".join(METHODS), "--limit", LIMIT, "--quiet", "--out", work,
            *resume,
        )  # fmt: skip
    data: dict[str, Any] = json.loads(done.read_text())
    return data


def render(data: dict[str, Any]) -> str:
    """The Markdown table of the rows, as ``brittle frontier`` writes it."""
    lines = [
        "| " + " | ".join(HEADER) + " |",
        "| --- | --- | " + " | ".join("---:" for _ in HEADER[2:]) + " |",
    ]
    for row in data["rows"]:
        lines.append("| " + " | ".join(row_cells(FrontierRow(**row))) + " |")
    return "\n".join(lines) + "\n"


def blocks(data: dict[str, Any]) -> dict[str, str]:
    """The generated blocks of docs/frontier.md."""
    return {"frontier-gum": render(data)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("reproduce/frontier"))
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    data = kept_figures(args, lambda: run(args.work))
    publish(blocks(data), DOC, write=args.write_doc)
    if args.write_doc and not args.render:
        shutil.copyfile(args.work / "frontier.png", FIGURE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
