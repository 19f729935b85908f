"""Clouatre et al.'s table: DND and IDC of each reordering at word, subword and character level.

For every sentence of a treebank (default: UD English EWT test) each configuration draws
one reordering with seed 0 at its levels (words, the bundled MiniLM's WordPiece tokens,
characters). Two grids (:func:`configurations`):

- ``paper``: Clouatre et al.'s own perturbations (their Appendix A): at every level the
  full shuffle, the phrase shuffle with rho 0.66 and the neighbour flip with rho 0.5; at
  character level also phrase shuffles with rho 0.5, 0.4, 0.3, 0.2, 0.15 and neighbour
  flips with rho 0.4, 0.3, 0.2, 0.15, 0.1. Their phrase shuffle cuts the text between
  two tokens with probability rho and shuffles all the pieces: brittle's
  ``phrase-shuffle`` with ``segmentation=random``, ``boundary=rho`` and ``rho=1``.
- ``brittle``: brittle's tree-phrase variant (``phrase-shuffle``'s default: the
  dependency subtrees under the root move, each with probability rho 0.1 ... 0.5) and
  neighbour flips with rho 0.1 ... 0.4 at word and subword level.

Two pairs of scores are reported, as means over the sentences that could be
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
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray
from reproduce_common import add_doc_options, write_doc

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
#: Clouatre et al., Appendix A: rho of the phrase shuffle at every level, and the extra
#: character-level rhos of the phrase shuffle and of the neighbour flip.
PAPER_PHRASE_RHO = 0.66
PAPER_FLIP_RHO = 0.5
PAPER_CHAR_PHRASE_RHOS = (0.5, 0.4, 0.3, 0.2, 0.15)
PAPER_CHAR_FLIP_RHOS = (0.4, 0.3, 0.2, 0.15, 0.1)


class Config(NamedTuple):
    """One row group: a generator with its options, at some levels, of one grid."""

    grid: str  # "paper" (Clouatre et al.'s Appendix A) or "brittle"
    method: str
    options: Mapping[str, object] = MappingProxyType({})
    levels: tuple[str, ...] = LEVELS

    @property
    def label(self) -> str:
        """What the tables call it, with rho in the paper's sense where it has one."""
        o = self.options
        if self.method == "phrase-shuffle" and o.get("segmentation") == "random":
            return f"phrase-shuffle, random cuts, rho {o['boundary']:g}"
        if self.method == "phrase-shuffle":
            return f"phrase-shuffle, tree phrases, rho {o['rho']:g}"
        if "rho" in o:
            return f"{self.method}, rho {o['rho']:g}"
        return self.method


def random_phrases(rho: float) -> dict[str, object]:
    """Clouatre et al.'s phrase shuffle: cut with probability rho, shuffle every piece."""
    return {"segmentation": "random", "boundary": rho, "rho": 1.0}


def configurations() -> list[Config]:
    """Every row group: the paper's grid, then brittle's (see the module doc)."""
    char = ("character",)
    out = [
        Config("paper", "shuffle"),
        Config("paper", "phrase-shuffle", random_phrases(PAPER_PHRASE_RHO)),
        Config("paper", "neighbour-flip", {"rho": PAPER_FLIP_RHO}),
    ]
    out += [
        Config("paper", "phrase-shuffle", random_phrases(r), char) for r in PAPER_CHAR_PHRASE_RHOS
    ]
    out += [Config("paper", "neighbour-flip", {"rho": r}, char) for r in PAPER_CHAR_FLIP_RHOS]
    out += [Config("brittle", "phrase-shuffle", {"rho": r}) for r in RHOS]
    out += [Config("brittle", "neighbour-flip", {"rho": r}, ("word", "subword")) for r in RHOS[:-1]]
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
    sentences: Sequence[Sentence], method: str, options: Mapping[str, object], level: str, seed: int
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


#: The two grids, in the page's order, with their titles.
GRIDS = (
    ("paper", "Clouatre et al.'s perturbations (their Appendix A)"),
    ("brittle", "brittle's tree-phrase shuffle and further neighbour-flip rhos"),
)
ROOT = Path(__file__).resolve().parents[1]
#: The rows, as the last run wrote them (the page is rendered from it).
MEASURED = ROOT / "docs" / "word-order.json"
DOC = ROOT / "docs" / "reproductions.md"


def render(rows: Sequence[Mapping[str, Any]], grid: str) -> str:
    """The Markdown table of one grid."""
    lines = [
        "| perturbation | level | DND (chars) | IDC (chars) | DND (units) | IDC (units) "
        "| sentences |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        if r["grid"] == grid:
            lines.append(
                f"| {r['perturbation']} | {r['level']} | {r['dnd_chars']:.3f} "
                f"| {r['idc_chars']:.3f} | {r['dnd_units']:.3f} | {r['idc_units']:.3f} "
                f"| {r['sentences']} |"
            )
    return "\n".join(lines) + "\n"


def blocks(rows: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """The generated blocks of docs/reproductions.md: ``word-order-GRID``."""
    return {f"word-order-{grid}": render(rows, grid) for grid, _ in GRIDS}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("treebank", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    parser.add_argument("--limit", type=int, help="only the first N sentences")
    parser.add_argument("--seed", type=int, default=0)
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    if args.render:
        data = json.loads(args.measured.read_text())
    else:
        sentences = read_conllu(args.treebank)[: args.limit]
        rows: list[dict[str, object]] = []
        for config in configurations():
            for level in config.levels:
                row: dict[str, object] = {
                    "grid": config.grid,
                    "perturbation": config.label,
                    "method": config.method,
                    "options": dict(config.options),
                    "level": level,
                }
                row.update(measure(sentences, config.method, config.options, level, args.seed))
                rows.append(row)
        data = {
            "treebank": args.treebank.name,
            "sentences": len(sentences),
            "seed": args.seed,
            "rows": rows,
        }
        text = json.dumps(data, indent=1)
        if args.limit is None:
            args.measured.write_text(text + "\n")
        if args.json is not None:
            args.json.write_text(text)
    print(f"{data['treebank']}: {data['sentences']} sentences, seed {data['seed']}\n")
    rendered = blocks(data["rows"])
    for grid, title in GRIDS:
        print(f"{title}:\n")
        print(rendered[f"word-order-{grid}"])
    if args.write_doc:
        write_doc(DOC, rendered)
    return 0


if __name__ == "__main__":
    sys.exit(main())
