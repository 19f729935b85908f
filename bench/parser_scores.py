"""Clean attachment scores of the parsers an attack can target, on EWT test and GUM test.

The table of docs/attack.md's "Attacking a parser": every sentence of each test set
parsed pre-tokenized (as an attack parses), UAS over every word (punctuation included,
as the CoNLL 2018 scorer counts), LAS on the universal relation for the UD-labelled
parser only, and UPOS accuracy. ``spacy-ud`` is trained first when it is missing
(``brittle resources --train-ud-parser UD_DIR``, about 6 minutes).

Run: ``python bench/parser_scores.py [--ud DIR] [--write-doc]`` (about a minute on 2
cores): the rows go to ``docs/parser-scores.json`` and, with ``--write-doc``, the table
into docs/attack.md between ``<!-- generated: parser-scores -->`` and ``<!-- end
generated -->``; ``--render`` prints it from the JSON alone (what the page's test checks).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np
from reproduce_common import add_doc_options, brittle, kept_figures, publish

from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.resources.ud_parser import ud_parser_dir
from brittle.engine.targets.parser import attachment_scores
from brittle.scorers.parsers import make_parser

ROOT = Path(__file__).resolve().parents[1]
UD = ROOT.parent / "shared" / "data" / "ud"
TESTS = ("UD_English-EWT/en_ewt-ud-test.conllu", "UD_English-GUM/en_gum-ud-test.conllu")
PARSERS = ("spacy", "spacy-ud")
#: The figures of the table, as the last run wrote them (the doc is rendered from it).
MEASURED = ROOT / "docs" / "parser-scores.json"
DOC = ROOT / "docs" / "attack.md"


def measure(ud: Path) -> list[dict[str, Any]]:
    """One row per parser and test set: sentences, words, UAS, LAS (``None`` for a
    parser without UD relations) and UPOS accuracy."""
    if not (ud_parser_dir() / "config.cfg").is_file():
        brittle("resources", "--train-ud-parser", ud)
    rows: list[dict[str, Any]] = []
    for name in PARSERS:
        model = make_parser(name, helpers=0)
        for test in TESTS:
            sentences = read_conllu(ud / test)
            parses = model.parse(sentences)
            words = np.array([len(s) for s in sentences], dtype=np.float64)
            heads = [p.heads for p in parses], [s.heads for s in sentences]
            las = None
            if model.ud_labels:
                labels = [(p.deprels, s.deprels) for p, s in zip(parses, sentences, strict=True)]
                las = float(attachment_scores(*heads, labels) @ words / words.sum())
            tags = sum(
                sum(a == b for a, b in zip(p.upos, s.upos, strict=True))
                for p, s in zip(parses, sentences, strict=True)
            )
            rows.append(
                {
                    "parser": name,
                    "test": Path(test).stem,
                    "sentences": len(sentences),
                    "words": int(words.sum()),
                    "uas": float(attachment_scores(*heads) @ words / words.sum()),
                    "las": las,
                    "upos": float(tags / words.sum()),
                }
            )
    return rows


def render(rows: list[dict[str, Any]]) -> str:
    """The Markdown table of docs/attack.md's "Attacking a parser"."""
    lines = [
        "| parser | test set | sentences | words | UAS | LAS | UPOS |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        las = "—" if r["las"] is None else f"{r['las']:.3f}"
        lines.append(
            f"| {r['parser']} | {r['test']} | {r['sentences']:,} | {r['words']:,} "
            f"| {r['uas']:.3f} | {las} | {r['upos']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def blocks(rows: list[dict[str, Any]]) -> dict[str, str]:
    """The generated blocks of docs/attack.md this script owns."""
    return {"parser-scores": render(rows)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ud", type=Path, default=UD, help="folder of UD_English-* treebanks")
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    rows = kept_figures(args, lambda: measure(args.ud))
    publish(blocks(rows), DOC, write=args.write_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
