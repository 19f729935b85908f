"""Whether the causal LM's sense of a noun's countability would judge the count-noun
slots of the reading tables better than the vocabulary's frequencies do.

The ``count-noun`` check (:func:`~brittle.search.validity.grammar.count_check`) asks two
things of a noun: can it be a count noun (``is_countable``: its plural is in use, read
from GloVe's frequency ranks), and is it a count noun only (``count_only``: its plural
is common against its singular). This script measures a second source for both: how
much more SmolLM2 expects the noun with the indefinite article than as a mass noun, in
bits, the mean over :data:`TEMPLATES` of ``log2 P(count frame) - log2 P(mass frame)``
(the noun's own tokens are in both frames, so its frequency cancels).

1. Calibration, on nouns the reading tables do not choose: the package's list of mass
   nouns (``search/generators/data/inflection_uncountable.tsv``) against
   :data:`COUNT_NOUNS`, concrete count nouns written here. It prints each list's
   spread and the area under the ROC curve, and takes the thresholds from them: a
   noun is a count noun only from the count list's 10th percentile up, and can be a
   count noun above the mass list's 90th percentile.
2. The reading tables of docs/validity.md graded again with those thresholds in place
   of the frequencies (``count_only``, ``is_countable`` or both, swapped in the
   ``grammar`` module for the run), and the agreement at the grammatical level over
   all tabled pairs and over the ``random`` and ``neighbours`` ones printed beside
   today's.

Usage::

    python bench/validity_countability.py [--doc docs/validity.md]
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
from validity_agreement import (
    ROOT,
    agreement,
    grade_letters,
    read_tables,
    rebuild,
    treebank_sentences,
)
from validity_lm_features import auc

from brittle.engine.core.articles import indefinite_article

#: Pairs of frames, the noun with the indefinite article (``{a}``) and as a mass noun.
TEMPLATES = (
    ("I need {a} {noun}.", "I need more {noun}."),
    ("There is {a} {noun} here.", "There is too much {noun} here."),
    ("We talked about {a} {noun}.", "We talked about {noun}."),
)
#: Concrete count nouns, the calibration's other side.
COUNT_NOUNS = (
    "chair", "dog", "table", "car", "book", "house", "tree", "bottle", "cup", "window",
    "door", "phone", "computer", "teacher", "student", "river", "mountain", "city",
    "village", "road", "bridge", "boat", "horse", "bird", "apple", "shoe", "hat", "key",
    "pen", "letter", "box", "bag", "camera", "picture", "song", "game", "ticket",
    "meeting", "question", "problem", "idea", "friend", "doctor", "engine", "tower",
    "island", "lake", "garden", "kitchen", "bed", "pillow", "lamp", "clock", "coin",
    "knife", "plate",
)  # fmt: skip
MASS_LIST = ROOT / "search" / "generators" / "data" / "inflection_uncountable.tsv"
#: The variants graded: which of the two questions the LM answers.
VARIANTS = ("count_only", "is_countable", "both")


def frames(noun: str) -> list[str]:
    """The texts scored for ``noun``: each template's count frame (with the article the
    noun takes, :func:`~brittle.engine.core.articles.indefinite_article`; *a* where it
    is disputed), then its mass frame."""
    article = indefinite_article(noun) or "a"
    out: list[str] = []
    for count, mass in TEMPLATES:
        out += [count.format(a=article, noun=noun), mass.format(noun=noun)]
    return out


def gaps(logprobs: Sequence[float], nouns: int) -> list[float]:
    """Per noun, the mean over the templates of count frame minus mass frame, in bits,
    from the natural-log probabilities of every noun's :func:`frames` in order."""
    per = 2 * len(TEMPLATES)
    if len(logprobs) != per * nouns:
        raise ValueError(f"{len(logprobs)} log-probabilities for {nouns} nouns")
    values = np.asarray(logprobs, dtype=np.float64).reshape(nouns, len(TEMPLATES), 2)
    return [float(v) for v in ((values[:, :, 0] - values[:, :, 1]) / math.log(2)).mean(axis=1)]


def noun_gaps(nouns: Sequence[str]) -> dict[str, float]:
    """:func:`gaps` of each noun (its last hyphenated part) under the bundled SmolLM2."""
    # deferred: the LM loads only when the script runs
    from brittle.search.generators.lm_causal import sentence_logprobs
    from brittle.search.sentence_models import surprisal_model

    heads = sorted({n.lower().rsplit("-", 1)[-1] for n in nouns})
    texts = [t for n in heads for t in frames(n)]
    found = gaps(list(sentence_logprobs(surprisal_model().lm, texts)), len(heads))
    return dict(zip(heads, found, strict=True))


def thresholds(mass: Sequence[float], count: Sequence[float]) -> tuple[float, float]:
    """(count only from, countable above): the count list's 10th percentile and the
    mass list's 90th."""
    return float(np.percentile(count, 10)), float(np.percentile(mass, 90))


def judged_by(
    gap: Callable[[str], float], only: float, above: float
) -> dict[str, Callable[[str], bool]]:
    """The two questions answered from ``gap``: ``count_only`` from ``only`` up,
    ``is_countable`` above ``above``."""
    return {
        "count_only": lambda lemma: gap(lemma) >= only,
        "is_countable": lambda lemma: gap(lemma) > above,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--doc", type=Path, default=ROOT / "docs" / "validity.md")
    args = parser.parse_args(argv)

    # deferred: the judges load only when the script runs
    from brittle.search.sentence_models import forget_texts
    from brittle.search.validity import grammar
    from brittle.search.validity.grade import grade_pairs

    mass_nouns = MASS_LIST.read_text(encoding="utf-8").split()[1:]
    known = noun_gaps([*mass_nouns, *COUNT_NOUNS])
    mass = [known[n] for n in mass_nouns]
    count = [known[n] for n in COUNT_NOUNS]
    only, above = thresholds(mass, count)
    print(
        f"mass nouns ({len(mass)}): 10th/50th/90th percentile "
        f"{' / '.join(f'{v:+.2f}' for v in np.percentile(mass, [10, 50, 90]))} bits; "
        f"count nouns ({len(count)}): "
        f"{' / '.join(f'{v:+.2f}' for v in np.percentile(count, [10, 50, 90]))} bits; "
        f"AUC {auc([*mass, *count], [True] * len(mass) + [False] * len(count)):.3f}; "
        f"count only from {only:+.2f}, countable above {above:+.2f}"
    )

    pairs = read_tables(args.doc.read_text(encoding="utf-8"))
    built = [b for b in rebuild(pairs, treebank_sentences({p.sent_id for p in pairs})) if b]
    cache: dict[str, float] = {}

    def gap(lemma: str) -> float:
        head = lemma.lower().rsplit("-", 1)[-1]
        if head not in cache:
            cache.update(noun_gaps([head]))
        return cache[head]

    lm_answers = judged_by(gap, only, above)
    today: Mapping[str, object] = {k: getattr(grammar, k) for k in ("count_only", "is_countable")}
    print("| count-noun knowledge | grammatical, all pairs | grammatical, random and neighbours |")
    print("| --- | ---: | ---: |")
    for variant in ("today", *VARIANTS):
        swapped = {k: lm_answers[k] if variant in (k, "both") else today[k] for k in today}
        for name, fn in swapped.items():
            setattr(grammar, name, fn)
        forget_texts()  # the grades kept from the variant before
        try:
            grades = grade_pairs([b[1] for b in built], [b[2] for b in built])
        finally:
            for name, fn in today.items():
                setattr(grammar, name, fn)
        rows = [(b[0], grade_letters(g)) for b, g in zip(built, grades, strict=True)]
        some = [r for r in rows if "random" in r[0].table or "neighbours" in r[0].table]
        label = "GloVe frequencies (today)" if variant == "today" else f"SmolLM2: {variant}"
        print(
            f"| {label} | {agreement(rows)['gram']:.1%} ({len(rows)}) | "
            f"{agreement(some)['gram']:.1%} ({len(some)}) |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
