"""How well each way of choosing coPOS synonyms keeps the word's sense.

WordNet's example sentences are sense-tagged for free: "he booked their seats in
advance" illustrates ``seat.n.01``, so a right-sense replacement of *seat* there is
another lemma of ``seat.n.01``, and a lemma of any other sense of *seat* is wrong.
For a seeded sample of such (sentence, word, sense) cases this script ranks the word's
single-word synonyms from every sense in several ways and reports:

- ``cover``: share of cases where the method offers anything;
- ``P@1``: share of cases (offering something) whose first offer has the right sense;
- ``P@1 freq``: the same, each case weighted by how often the word has that sense in
  SemCor (count + 0.5): WordNet illustrates rare senses as often as frequent ones,
  running text does not;
- ``right share``: mean share of right-sense synonyms among all the method offers
  (what a uniform draw from its offers gets).

The sentence being tested is left out of the gloss it is compared with. Methods:
WordNet order (``all``), first sense (``first``), gloss choice with a sense-frequency
prior of weight lambda (``context``; brittle's default lambda is 0.05), and the ranking of
the substituted sentences by sentence similarity and by the bundled causal LM's
log-probability (slow: ``--lm-cases`` limits it).

Usage::

    python bench/sense_choice.py [--cases 400] [--lm-cases 40] [--write-doc]
    python bench/sense_choice.py --render [--write-doc]

The figures go to ``docs/sense-choice.json`` (``--measured``); ``--write-doc`` puts the
table, each method named as docs/substitutions.md names it (:data:`LABELS`, the
default's row in bold), into the page's generated block ``sense-choice``. A test holds
the default's row to coPOS's default options.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from reproduce_common import add_doc_options, kept_figures, publish

from brittle.engine.core.resources import load_wordnet
from brittle.search.generators.copos import CoPOS
from brittle.search.generators.lm import LoadedLM, load_lm
from brittle.search.generators.lm_causal import sentence_logprobs
from brittle.search.generators.sense import Sense, choose_senses
from brittle.search.sentence_models import sentence_encoder

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import Synset, WordNetCorpusReader

LAMBDAS = (0.0, 0.02, 0.05, 0.1, 0.2)
DEFAULT_LAMBDA = 0.05
MAX_SENSES = (6, 10, 12, 15)  # 12: the default
MIN_LEADS = (0.05, 0.1, 0.2)
DEFAULT_MAX_SENSES = 12
DEFAULT_NAME = f"context, lambda {DEFAULT_LAMBDA}, min_count 1, max_senses {DEFAULT_MAX_SENSES}"
#: coPOS's default options, as the default's row measures them.
DEFAULTS = {
    "sense": "context",
    "prior_weight": DEFAULT_LAMBDA,
    "min_count": 1,
    "max_senses": DEFAULT_MAX_SENSES,
    "max_substitute_senses": 12,
    "min_lead": 0.1,
    "min_sense_count": 0,
}
#: The row of coPOS's defaults (bold in the page).
DEFAULT_ROW = f"{DEFAULT_NAME}, max_substitute_senses 12, min_lead 0.1"
ROOT = Path(__file__).resolve().parents[1]
MEASURED = ROOT / "docs" / "sense-choice.json"
DOC = ROOT / "docs" / "substitutions.md"
#: Each method's name in the page, in the page's order.
LABELS: tuple[tuple[str, str], ...] = (
    ("all (WordNet order)", "`all`: every sense, WordNet order"),
    ("first sense", "`first`: first sense only"),
    ("context, lambda 0.0", "gloss choice, no frequency prior"),
    ("context, lambda 0.02", "gloss choice, prior weight 0.02"),
    (
        "context, lambda 0.05",
        "`context` sense choice: gloss choice, prior weight 0.05, every lemma of the sense "
        "(`-o min_count=0 -o max_senses=0 -o max_substitute_senses=0`)",
    ),
    (
        DEFAULT_NAME,
        "the same, only synonyms SemCor tags in the sense (`min_count` 1), words of at most "
        "12 senses (`max_senses` 12)",
    ),
    ("context, lambda 0.05, min_count 1", "the same, `min_count` 1 alone (no cap)"),
    ("context, lambda 0.05, min_count 1, max_senses 6", "the same, `min_count` 1, `max_senses` 6"),
    (
        "context, lambda 0.05, min_count 1, max_senses 10",
        "the same, `min_count` 1, `max_senses` 10",
    ),
    (
        "context, lambda 0.05, min_count 1, max_senses 15",
        "the same, `min_count` 1, `max_senses` 15",
    ),
    (
        f"{DEFAULT_NAME}, max_substitute_senses 12",
        "the same, `min_count` 1, `max_senses` 12, synonyms of at most 12 senses "
        "(`max_substitute_senses` 12)",
    ),
    (f"{DEFAULT_NAME}, max_substitute_senses 12, min_lead 0.05", "the same, and `min_lead` 0.05"),
    (DEFAULT_ROW, "`context` default: the same, and `min_lead` 0.1"),
    (f"{DEFAULT_NAME}, max_substitute_senses 12, min_lead 0.2", "the same, and `min_lead` 0.2"),
    (
        f"{DEFAULT_NAME}, max_substitute_senses 12, min_lead 0.1, min_sense_count 1",
        "the default, and `min_sense_count` 1",
    ),
    ("context, lambda 0.1", "gloss choice, prior weight 0.1"),
    ("context, lambda 0.2", "gloss choice, prior weight 0.2"),
    (
        "rank by sentence similarity",
        "all senses ranked by sentence similarity of the substituted sentence",
    ),
    (
        "rank by causal LM",
        "all senses ranked by the causal LM's log-probability of the substituted sentence",
    ),
)
_TOKEN = re.compile(r"[A-Za-z']+|[^\sA-Za-z']")


@dataclass(frozen=True)
class Case:
    """One word in one WordNet example sentence, with its sense's right synonyms."""

    tokens: tuple[str, ...]
    index: int
    lemma: str
    pos: str
    synset: str
    example: str
    right: frozenset[str]
    count: int


def _single(name: str) -> bool:
    return "_" not in name and name.isalpha() and name.islower()


def find_cases(n: int, seed: int) -> list[Case]:
    """Up to ``n`` cases whose word has right- and wrong-sense synonyms."""
    wn = load_wordnet()
    synsets = sorted(wn.all_synsets(), key=lambda s: s.name())
    random.Random(seed).shuffle(synsets)
    out: list[Case] = []
    for synset in synsets:
        pos = "a" if synset.pos() == "s" else synset.pos()
        for example in synset.examples():
            tokens = tuple(_TOKEN.findall(example))
            case = _case(wn, synset, pos, example, tokens)
            if case is not None:
                out.append(case)
                break
        if len(out) >= n:
            break
    return out


def _case(
    wn: WordNetCorpusReader, synset: Synset, pos: str, example: str, tokens: tuple[str, ...]
) -> Case | None:
    for lemma in synset.lemmas():
        word = lemma.name()
        if not _single(word) or word not in tokens:
            continue
        offered = {n for s in wn.synsets(word, pos=pos) for n in s.lemma_names() if _single(n)}
        offered.discard(word)
        right = frozenset(n for n in synset.lemma_names() if n != word)
        if offered & right and offered - right:
            return Case(
                tokens, tokens.index(word), word, pos, synset.name(), example, right, lemma.count()
            )
    return None


def run(cases: Sequence[Case], lm_cases: int) -> dict[str, list[tuple[list[str], Case]]]:
    """Each method's offers, per case."""
    copos = CoPOS(sense="all", min_count=0)
    counted = CoPOS(sense="all", min_count=1)
    encoder = sentence_encoder()
    found: dict[str, list[tuple[list[str], Case]]] = {}

    def add(name: str, offers: list[str], case: Case) -> None:
        found.setdefault(name, []).append((offers, case))

    lm: LoadedLM | None = None
    for k, case in enumerate(cases):
        senses = [
            s if case.example not in s.gloss else _without(s, case.example)
            for s in copos.senses(case.lemma, case.pos)
        ]
        every = list(dict.fromkeys(w for s in senses for w in s.synonyms if _single(w)))
        add("all (WordNet order)", every, case)
        add("first sense", [w for w in senses[0].synonyms if _single(w)], case)
        text = " ".join(case.tokens)
        for weight in LAMBDAS:
            [choice] = choose_senses([text], [senses], encoder, margin=0.0, prior_weight=weight)
            kept = choice.senses
            offers = [w for s in kept for w in s.synonyms if _single(w)]
            add(f"context, lambda {weight}", offers, case)
            if weight == DEFAULT_LAMBDA:
                common = {s.name: s.synonyms for s in counted.senses(case.lemma, case.pos)}
                offers = [w for s in kept for w in common[s.name] if _single(w)]
                add(f"context, lambda {weight}, min_count 1", offers, case)
                for cap in MAX_SENSES:
                    capped = offers if len(senses) <= cap else []
                    add(f"context, lambda {weight}, min_count 1, max_senses {cap}", capped, case)
                capped = offers if len(senses) <= DEFAULT_MAX_SENSES else []
                plain = [w for w in capped if _few_senses(w, case.pos)]
                add(f"{DEFAULT_NAME}, max_substitute_senses 12", plain, case)
                for lead in MIN_LEADS:
                    [sure] = choose_senses(
                        [text], [senses], encoder, margin=0.0, prior_weight=weight, min_lead=lead
                    )
                    led = plain if sure.sure else []
                    add(f"{DEFAULT_NAME}, max_substitute_senses 12, min_lead {lead}", led, case)
                attested = [x for x in senses if x.count >= 1]
                [seen] = choose_senses(
                    [text], [attested], encoder, margin=0.0, prior_weight=weight, min_lead=0.1
                )
                chosen = seen.senses if seen.sure else ()
                offers = [w for x in chosen for w in common[x.name] if _single(w)]
                offers = offers if len(senses) <= DEFAULT_MAX_SENSES else []
                offers = [w for w in offers if _few_senses(w, case.pos)]
                add(
                    f"{DEFAULT_NAME}, max_substitute_senses 12, min_lead 0.1, min_sense_count 1",
                    offers,
                    case,
                )
        subs = [
            " ".join((*case.tokens[: case.index], w, *case.tokens[case.index + 1 :])) for w in every
        ]
        sim = encoder.similarity([text] * len(subs), subs)
        add(
            "rank by sentence similarity", [every[j] for j in np.argsort(-sim, kind="stable")], case
        )
        if k < lm_cases:
            lm = lm or load_lm(None)
            lp = sentence_logprobs(lm, subs, batch_size=32)
            add("rank by causal LM", [every[j] for j in np.argsort(-lp, kind="stable")], case)
    return found


def _few_senses(word: str, pos: str) -> bool:
    """Whether ``word`` has at most :data:`DEFAULT_MAX_SENSES` senses for ``pos``."""
    return len(load_wordnet().synsets(word, pos=pos)) <= DEFAULT_MAX_SENSES


def _without(sense: Sense, example: str) -> Sense:
    parts = [p for p in sense.gloss.split("; ") if p != example]
    return replace(sense, gloss="; ".join(parts))


def measures(found: dict[str, list[tuple[list[str], Case]]]) -> list[dict[str, Any]]:
    """Per method, the measures named in the module docstring."""
    out = []
    for name, rows in found.items():
        offered = [(o, c) for o, c in rows if o]
        weights = np.array([c.count + 0.5 for _, c in offered])
        hits = np.array([o[0] in c.right for o, c in offered], dtype=float)
        out.append(
            {
                "method": name,
                "cases": len(rows),
                "cover": len(offered) / len(rows),
                "p1": float(hits.mean()),
                "p1_freq": float((hits * weights).sum() / weights.sum()),
                "right_share": float(
                    np.mean([np.mean([w in c.right for w in o]) for o, c in offered])
                ),
            }
        )
    return out


def blocks(data: dict[str, Any]) -> dict[str, str]:
    """The generated block of docs/substitutions.md (``sense-choice``): every method
    of :data:`LABELS`, in its order, the default's row and its precisions in bold."""
    by_name = {r["method"]: r for r in data["methods"]}
    lines = [
        "| method | cases | offers anything | P@1 | P@1, frequency-weighted "
        "| right share of offers |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, label in LABELS:
        r = by_name[name]
        bold = "**" if name == DEFAULT_ROW else ""
        lines.append(
            f"| {bold}{label}{bold} | {r['cases']} | {r['cover']:.3f} "
            f"| {bold}{r['p1']:.3f}{bold} | {bold}{r['p1_freq']:.3f}{bold} "
            f"| {bold}{r['right_share']:.3f}{bold} |"
        )
    return {"sense-choice": "\n".join(lines) + "\n"}


def measure(n: int, lm_cases: int, seed: int) -> dict[str, Any]:
    """Every method's measures on ``n`` cases drawn with ``seed``."""
    start = time.perf_counter()
    cases = find_cases(n, seed)
    methods = measures(run(cases, lm_cases))
    print(f"{len(cases)} cases, {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return {"cases": len(cases), "lm_cases": lm_cases, "seed": seed, "methods": methods}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=400)
    parser.add_argument("--lm-cases", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    data = kept_figures(args, lambda: measure(args.cases, args.lm_cases, args.seed))
    publish(blocks(data), DOC, write=args.write_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
