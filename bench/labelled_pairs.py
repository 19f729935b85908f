"""docs/constraints.md's table of the labelled pairs: what each model constraint
measures on bad and good substitutions.

The pairs are the test fixtures ``tests/fixtures/quality_original.conllu`` and
``quality_perturbed.conllu`` (``# quality = bad|good``). For each, with today's
models: the increase of the bundled SmolLM2's surprisal per word and per changed word
(``fluency``, bits), the MiniLM sentence cosine (``similarity``) and the share of the
changed words spaCy tags with their gold UPOS (``retag``). The figures go to
``docs/labelled-pairs.json`` (``--measured``); ``--write-doc`` writes the table into
the page's generated block ``labelled-pairs``. A few seconds after the models load.

Usage::

    python bench/labelled_pairs.py [--write-doc]
    python bench/labelled_pairs.py --render [--write-doc]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from reproduce_common import add_doc_options, kept_figures, publish

from brittle.engine.core.conllu import read_conllu
from brittle.scorers.parsers import make_parser
from brittle.search.constraints.base import CandidateBatch
from brittle.search.constraints.fluency import FluencyConstraint
from brittle.search.constraints.similarity import SimilarityConstraint
from brittle.search.constraints.tags import RetagConstraint
from brittle.search.quality import recover_perturbation

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
MEASURED = ROOT / "docs" / "labelled-pairs.json"
DOC = ROOT / "docs" / "constraints.md"


def measure() -> dict[str, Any]:
    """Every labelled pair's label, text, changes and measures."""
    originals = read_conllu(FIXTURES / "quality_original.conllu")
    perturbed = read_conllu(FIXTURES / "quality_perturbed.conllu")
    changes = [recover_perturbation(o, p) for o, p in zip(originals, perturbed, strict=True)]
    batches = [CandidateBatch.build(o, [p]) for o, p in zip(originals, changes, strict=True)]
    parser = make_parser("spacy")
    measures = {
        "bits_per_word": FluencyConstraint(max_increase=math.inf, max_per_changed=math.inf),
        "bits_per_changed_word": FluencyConstraint(max_increase=math.inf, per="changed"),
        "similarity": SimilarityConstraint(min_similarity=-1.0),
        "retag": RetagConstraint(parser, min_rate=0.0),
    }
    values = {
        name: [float(r.values[0]) for r in constraint.check_many(batches)]
        for name, constraint in measures.items()
    }
    rows = []
    for k, (o, p) in enumerate(zip(originals, changes, strict=True)):
        swaps = [f"{o.forms[i]} → {w}" for i, w in zip(p.positions, p.replacements, strict=True)]
        rows.append(
            {
                "label": o.metadata["quality"],
                "text": o.text,
                "changes": swaps,
                "words": len(o),
                **{name: v[k] for name, v in values.items()},
            }
        )
    return {"pairs": rows}


def blocks(data: dict[str, Any]) -> dict[str, str]:
    """The generated block of docs/constraints.md (``labelled-pairs``)."""
    lines = [
        "| label | original → perturbed | words | bits/word | bits/changed word | similarity "
        "| retag |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in data["pairs"]:
        lines.append(
            f'| {r["label"]} | "{r["text"]}" ({", ".join(r["changes"])}) | {r["words"]} '
            f"| {r['bits_per_word']:+.2f} | {r['bits_per_changed_word']:+.1f} "
            f"| {r['similarity']:.3f} | {r['retag']:.0%} |"
        )
    return {"labelled-pairs": "\n".join(lines) + "\n"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    data = kept_figures(args, measure)
    publish(blocks(data), DOC, write=args.write_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
