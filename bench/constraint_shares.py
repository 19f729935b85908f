"""How many of coPOS's candidates, and of the sentences, each constraint keeps
(docs/constraints.md, "how many sentences keep a perturbation").

The first 200 sentences of EWT test, coPOS with today's defaults, tau 2, b = 20 draws
per sentence (seed 0), each sentence's distinct candidates checked by every
constraint of :data:`ROWS` (one spec list per row; every constraint measures every
candidate, and the models score a text once however many rows meet it). Per row: the
share of all candidates kept, the share of the sentences that keep at least one, and
the share that keep one within perturb's default syntax bound (``syntax:0.1``, spaCy).

Usage::

    python bench/constraint_shares.py [--limit 200] [--write-doc]
    python bench/constraint_shares.py --render [--write-doc]

The figures go to ``docs/constraint-shares.json`` (``--measured``); ``--write-doc``
puts the table into docs/constraints.md between ``<!-- generated: constraint-shares
-->`` and ``<!-- end generated -->``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np
from reproduce_common import TEST, add_doc_options, kept_figures, publish

from brittle.engine.core.conllu import read_conllu
from brittle.scorers.parsers import make_parser
from brittle.search.constraints.base import (
    CandidateBatch,
    ConstraintContext,
    build_constraints,
    check_batches,
)
from brittle.search.constraints.fluency import (
    DEFAULT_MAX_PER_CHANGED,
    DEFAULT_MAX_SURPRISAL_INCREASE,
)
from brittle.search.constraints.similarity import DEFAULT_MIN_SIMILARITY
from brittle.search.constraints.word_similarity import DEFAULT_MIN_WORD_SIMILARITY
from brittle.search.generators.base import GENERATORS

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ROOT / "docs" / "constraint-shares.json"
DOC = ROOT / "docs" / "constraints.md"
#: The rows: a label and the constraint specs it applies (a bare name is its defaults).
ROWS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("none (coPOS alone)", ()),
    ("`fluency:0.5`", ("fluency:0.5",)),
    ("`fluency:0.7`", ("fluency:0.7",)),
    ("`fluency:1`", ("fluency:1",)),
    ("`fluency:2`", ("fluency:2",)),
    ("`fluency:8/changed`", ("fluency:8/changed",)),
    ("`fluency:12/changed`", ("fluency:12/changed",)),
    ("`fluency:16/changed`", ("fluency:16/changed",)),
    (
        f"**`fluency`** (default: {DEFAULT_MAX_SURPRISAL_INCREASE:g} and "
        f"{DEFAULT_MAX_PER_CHANGED:g}/changed)",
        ("fluency",),
    ),
    ("`similarity:0.7`", ("similarity:0.7",)),
    (f"**`similarity`** (default: {DEFAULT_MIN_SIMILARITY:g})", ("similarity",)),
    ("`similarity:0.9`", ("similarity:0.9",)),
    ("`word-similarity:0.5`", ("word-similarity:0.5",)),
    (
        f"**`word-similarity`** (default: {DEFAULT_MIN_WORD_SIMILARITY:g})",
        ("word-similarity",),
    ),
    ("`word-similarity:0.7`", ("word-similarity:0.7",)),
    ("**`retag`** (every changed word)", ("retag",)),
    (
        "**`fluency` + `similarity` + `word-similarity`** (perturb's default for coPOS)",
        ("fluency", "similarity", "word-similarity"),
    ),
    (
        "the three + `retag`",
        ("fluency", "similarity", "word-similarity", "retag"),
    ),
)
#: perturb's default syntax bound (``--max-syntax-distance``).
SYNTAX = "syntax:0.1"


def measure(limit: int) -> dict[str, Any]:
    """The shares of every row on the first ``limit`` sentences of EWT test."""
    sentences = read_conllu(TEST)[:limit]
    generator = GENERATORS.get("copos")()
    generator.prepare()
    drawn = generator.perturb(sentences, b=20, seed=0, tau=2)
    batches = [
        CandidateBatch.build(s, list(dict.fromkeys(p for p in ps if not p.is_identity)))
        for s, ps in zip(sentences, drawn, strict=True)
    ]
    parser = make_parser("spacy")
    context = ConstraintContext(tau=2, parser=lambda: parser)
    (syntax,) = build_constraints([SYNTAX], context)
    within = [o.mask for o in check_batches(batches, [syntax])]
    candidates = sum(len(b) for b in batches)
    rows = []
    for label, specs in ROWS:
        if specs:
            outcomes = check_batches(batches, build_constraints(list(specs), context))
            masks = [o.mask for o in outcomes]
        else:
            masks = [np.ones(len(b), dtype=bool) for b in batches]
        kept = sum(int(m.sum()) for m in masks)
        rows.append(
            {
                "label": label,
                "specs": list(specs),
                "candidates": kept,
                "sentences": sum(bool(m.any()) for m in masks),
                "sentences_within_syntax": sum(
                    bool((m & w).any()) for m, w in zip(masks, within, strict=True)
                ),
            }
        )
    return {
        "treebank": TEST.name,
        "sentences": len(sentences),
        "candidates": candidates,
        "rows": rows,
    }


def blocks(data: dict[str, Any]) -> dict[str, str]:
    """The generated block of docs/constraints.md (``constraint-shares``)."""
    n, total = data["sentences"], max(data["candidates"], 1)
    lines = [
        "| constraint | candidates kept | sentences that keep one | ... within `syntax:0.1` |",
        "| --- | ---: | ---: | ---: |",
    ]
    for row in data["rows"]:
        lines.append(
            f"| {row['label']} | {row['candidates'] / total:.1%} | {row['sentences'] / n:.1%} "
            f"| {row['sentences_within_syntax'] / n:.1%} |"
        )
    return {"constraint-shares": "\n".join(lines) + "\n"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=200, help="the first N sentences")
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    data = kept_figures(args, lambda: measure(args.limit))
    publish(blocks(data), DOC, write=args.write_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
