"""Clouatre et al.'s table: DND and IDC of each reordering at word, subword and character level.

For every sentence of a treebank (default: UD English EWT test) each reorder generator
(``shuffle``; ``phrase-shuffle`` and ``neighbour-flip`` at rho 0.1 ... 0.5) draws one
reordering with seed 0 at each level (words, the bundled MiniLM's WordPiece tokens,
characters). Two pairs of scores are reported, as means over the sentences that could be
reordered:

- ``DND/IDC (units)``: over the units the generator moved (what ``brittle perturb``
  reports for word-level reorderings);
- ``DND/IDC (chars)``: over the characters of the text, as Clouatre et al. measure
  them. The character permutation is exact, expanded from the unit permutation: every
  unit carries its characters (a WordPiece ``##`` piece without the marker) and the
  space before it, when there is one, travels with it.

Usage::

    python bench/reproduce_word_order.py [TREEBANK] [--json OUT.json] [--limit N]

Prints a Markdown table. Same seed, same table.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.sentence import Sentence
from brittle.scorers.order import order_scores_batch
from brittle.search.generators.base import GENERATORS
from brittle.search.generators.order import Reordering, TextReordering

DEFAULT = (
    Path(__file__).resolve().parents[2] / "shared/data/ud/UD_English-EWT/en_ewt-ud-test.conllu"
)
RHOS = (0.1, 0.2, 0.3, 0.4, 0.5)
LEVELS = ("word", "subword", "character")


def configurations() -> list[tuple[str, dict[str, float]]]:
    """(generator, options) of every row: full shuffle, then each rho of the other two."""
    out: list[tuple[str, dict[str, float]]] = [("shuffle", {})]
    for method in ("phrase-shuffle", "neighbour-flip"):
        out.extend((method, {"rho": rho}) for rho in RHOS)
    return out


def unit_chars(r: TextReordering) -> list[int]:
    """Characters of each unit in the text, the space before it included (k,)."""
    if r.level == "character":
        return [1] * len(r.units)
    lengths = []
    for j, unit in enumerate(r.units):
        if r.level == "subword" and unit.startswith("##"):
            lengths.append(len(unit) - 2)
        else:
            lengths.append(len(unit) + (1 if j > 0 else 0))
    return lengths


def char_permutation_of(r: TextReordering) -> NDArray[np.int64]:
    """The character permutation of a unit reordering (exact; see the module docstring)."""
    if r.level == "character":
        return np.asarray(r.permutation, dtype=np.int64)
    lengths = np.asarray(unit_chars(r), dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    parts = [np.arange(starts[i], starts[i] + lengths[i]) for i in r.permutation]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def measure(
    sentences: Sequence[Sentence], method: str, options: dict[str, float], level: str, seed: int
) -> dict[str, float]:
    """Mean DND and IDC over units and over characters of one generator at one level."""
    cls = GENERATORS.get(method)
    assert issubclass(cls, Reordering), method
    gen = cls(level=level, **options)  # type: ignore[arg-type]
    drawn = [rs[0] for rs in gen.reorder(sentences, b=1, seed=seed) if rs]
    perms = [char_permutation_of(r) for r in drawn]
    cdnd, cidc = order_scores_batch(perms) if perms else (np.zeros(0), np.zeros(0))
    return {
        "sentences": len(drawn),
        "dnd_units": float(np.mean([r.dnd for r in drawn])) if drawn else float("nan"),
        "idc_units": float(np.mean([r.idc for r in drawn])) if drawn else float("nan"),
        "dnd_chars": float(cdnd.mean()) if perms else float("nan"),
        "idc_chars": float(cidc.mean()) if perms else float("nan"),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("treebank", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    parser.add_argument("--limit", type=int, help="only the first N sentences")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    sentences = read_conllu(args.treebank)[: args.limit]
    rows = []
    for method, options in configurations():
        for level in LEVELS:
            row = {"method": method, "rho": options.get("rho"), "level": level}
            row.update(measure(sentences, method, options, level, args.seed))
            rows.append(row)
    print(f"{args.treebank.name}: {len(sentences)} sentences, seed {args.seed}\n")
    print(
        "| perturbation | rho | level | DND (chars) | IDC (chars) "
        "| DND (units) | IDC (units) | sentences |"
    )
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        rho = "–" if r["rho"] is None else f"{r['rho']:.1f}"
        print(
            f"| {r['method']} | {rho} | {r['level']} | {r['dnd_chars']:.3f} | {r['idc_chars']:.3f}"
            f" | {r['dnd_units']:.3f} | {r['idc_units']:.3f} | {r['sentences']} |"
        )
    if args.json is not None:
        args.json.write_text(json.dumps({"treebank": str(args.treebank), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
