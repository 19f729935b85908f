"""Whether the causal LM's acceptability measures separate the grammatical pairs of the
`random` and `neighbours` readings from the ungrammatical ones.

docs/validity.md's reading tables of the two generators hold every pair read one by
one with its reading at the grammatical level. This script rebuilds the pairs
(:mod:`validity_agreement`), grades them with today's judges, and scores each with
SmolLM2's per-word surprisal (bits, :func:`~brittle.search.validity.surprisal.word_surprisals`),
perturbed minus original:

- ``whole``: summed over the sentence;
- ``slor``: ``whole`` less the changed words' own rise in surprisal read alone after
  the start token (SLOR's unigram term, the LM's own estimate of a word's frequency);
- ``window``: over the changed words and the two words after the last one;
- ``window-slor``: ``window`` less the same unigram term;
- ``after``: over every unchanged word after the first change;
- ``next``: over the unchanged words among the two after each change.

For each it prints the area under the ROC curve (the chance that an ungrammatical pair
costs more than a grammatical one) over all pairs and over those the judges pass as
grammatical, where their errors are.

Usage::

    python bench/validity_lm_features.py [--doc docs/validity.md]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from validity_agreement import ROOT, grade_letters, read_tables, rebuild, treebank_sentences

from brittle.engine.core.sentence import Sentence, Token

FEATURES = ("whole", "slor", "window", "window-slor", "after", "next")


def auc(costs: Sequence[float], grammatical: Sequence[bool]) -> float:
    """The chance that an ungrammatical pair costs more than a grammatical one (ties
    half); NaN without both kinds."""
    good = np.array([c for c, g in zip(costs, grammatical, strict=True) if g])
    bad = np.array([c for c, g in zip(costs, grammatical, strict=True) if not g])
    if not good.size or not bad.size:
        return float("nan")
    above = (bad[:, None] > good[None, :]).sum() + 0.5 * (bad[:, None] == good[None, :]).sum()
    return float(above) / (good.size * bad.size)


def features(
    original: Sentence, perturbed: Sentence, so: np.ndarray, sp: np.ndarray, alone: dict[str, float]
) -> dict[str, float]:
    """The module docstring's measures of one pair from both sentences' word surprisals."""
    changed = [
        i for i, (a, b) in enumerate(zip(original.forms, perturbed.forms, strict=True)) if a != b
    ]
    first, last, n = changed[0], changed[-1], len(so)
    rise = sp - so
    unigram = sum(alone[perturbed.forms[i]] - alone[original.forms[i]] for i in changed)
    window = float(rise[first : min(last + 3, n)].sum())
    near = {j for i in changed for j in (i + 1, i + 2) if j < n} - set(changed)
    return {
        "whole": float(rise.sum()),
        "slor": float(rise.sum()) - unigram,
        "window": window,
        "window-slor": window - unigram,
        "after": float(sum(rise[j] for j in range(first + 1, n) if j not in changed)),
        "next": float(sum(rise[j] for j in near)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--doc", type=Path, default=ROOT / "docs" / "validity.md")
    args = parser.parse_args(argv)

    # deferred: the models load only when the script runs
    from brittle.search.sentence_models import surprisal_model
    from brittle.search.validity.grade import grade_pairs
    from brittle.search.validity.surprisal import word_surprisals

    pairs = [
        p
        for p in read_tables(args.doc.read_text(encoding="utf-8"))
        if "random" in p.table or "neighbours" in p.table
    ]
    built = [b for b in rebuild(pairs, treebank_sentences({p.sent_id for p in pairs})) if b]
    originals, perturbed = [b[1] for b in built], [b[2] for b in built]
    passed = [grade_letters(g)[1] == "y" for g in grade_pairs(originals, perturbed)]
    read = [b[0].reading[1] == "y" for b in built]
    lm = surprisal_model().lm
    words = sorted({w for s in (*originals, *perturbed) for w in s.forms})
    single = [Sentence(f"w{i}", (), (Token("1", w),)) for i, w in enumerate(words)]
    alone = {w: float(s[0]) for w, s in zip(words, word_surprisals(lm, single), strict=True)}
    rows = [
        features(o, p, so, sp, alone)
        for o, p, so, sp in zip(
            originals,
            perturbed,
            word_surprisals(lm, originals),
            word_surprisals(lm, perturbed),
            strict=True,
        )
    ]
    kept = [i for i, ok in enumerate(passed) if ok]
    agree = sum(r == p for r, p in zip(read, passed, strict=True))
    print(
        f"{len(built)} pairs, {sum(read)} read grammatical; the judges agree on {agree}, "
        f"pass {len(kept)}, of which {sum(not read[i] for i in kept)} read ungrammatical"
    )
    print("| measure | AUC, all pairs | AUC, pairs the judges pass |")
    print("| --- | ---: | ---: |")
    for name in FEATURES:
        every = auc([r[name] for r in rows], read)
        among = auc([rows[i][name] for i in kept], [read[i] for i in kept])
        print(f"| {name} | {every:.3f} | {among:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
