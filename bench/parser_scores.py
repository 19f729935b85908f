"""Clean attachment scores of the parsers an attack can target, on EWT test and GUM test.

The table of docs/attack.md's "Attacking a parser": every sentence of each test set
parsed pre-tokenized (as an attack parses), UAS over every word (punctuation included,
as the CoNLL 2018 scorer counts), LAS on the universal relation for the UD-labelled
parser only, and UPOS accuracy. ``spacy-ud`` must have been trained first
(``brittle resources --train-ud-parser UD_DIR``).

Run: ``python bench/parser_scores.py [--ud DIR]`` (about a minute on 2 cores).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from brittle.engine.core.conllu import read_conllu
from brittle.engine.targets.parser import attachment_scores
from brittle.scorers.parsers import make_parser

UD = Path(__file__).resolve().parents[2] / "shared" / "data" / "ud"
TESTS = ("UD_English-EWT/en_ewt-ud-test.conllu", "UD_English-GUM/en_gum-ud-test.conllu")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ud", type=Path, default=UD, help="folder of UD_English-* treebanks")
    args = parser.parse_args()
    print("| parser | test set | sentences | words | UAS | LAS | UPOS |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for name in ("spacy", "spacy-ud"):
        model = make_parser(name, helpers=0)
        for test in TESTS:
            sentences = read_conllu(args.ud / test)
            parses = model.parse(sentences)
            words = np.array([len(s) for s in sentences], dtype=np.float64)
            heads = [p.heads for p in parses], [s.heads for s in sentences]
            uas = attachment_scores(*heads) @ words / words.sum()
            las = "—"
            if model.ud_labels:
                labels = [(p.deprels, s.deprels) for p, s in zip(parses, sentences, strict=True)]
                las = f"{attachment_scores(*heads, labels) @ words / words.sum():.3f}"
            tags = sum(
                sum(a == b for a, b in zip(p.upos, s.upos, strict=True))
                for p, s in zip(parses, sentences, strict=True)
            )
            print(
                f"| {name} | {Path(test).stem} | {len(sentences):,} | {int(words.sum()):,} "
                f"| {uas:.3f} | {las} | {tags / words.sum():.3f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
