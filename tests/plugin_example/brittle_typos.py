"""A third-party brittle plug-in in one file: a generator, a constraint and a strategy.

This is the worked example of CONTRIBUTING.md. Importing the module registers both
components; nothing else in brittle names them. A package ships it to users through
the ``brittle.components`` entry-point group::

    [project.entry-points."brittle.components"]
    typos = "brittle_typos"

- ``typo`` (generator): keyboard slips, each eligible word with two adjacent inner
  letters swapped ("house" -> "huose"), a classic robustness probe of subword models.
- ``keep-capitalised`` (constraint): words that start with a capital letter (names,
  the first word) are never changed.
- ``first-k`` (strategy): scores the first k single substitutions and keeps the most
  damaging feasible one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from brittle.engine.core.sentence import Sentence
from brittle.search.constraints import (
    CONSTRAINTS,
    CandidateBatch,
    Constraint,
    ConstraintContext,
    ConstraintResult,
    changed_words,
)
from brittle.search.generators.base import GENERATORS, SubstitutionGenerator
from brittle.search.problem import Outcome, SearchProblem, first_feasible
from brittle.search.strategies.base import STRATEGIES, Strategy
from brittle.search.table import Candidate, SubstitutionTable


@GENERATORS.register("typo", help="two adjacent inner letters swapped (house -> huose)")
@dataclass(frozen=True, kw_only=True)
class Typos(SubstitutionGenerator):
    """Every eligible word of at least four letters, with two inner letters swapped.

    Options are ranked left to right; the lemma of a typo is unknown (``_``).
    """

    requires: ClassVar[frozenset[str]] = frozenset({"form", "upos"})  # CoNLL-U columns

    def candidates(
        self, sentences: Sequence[Sentence], *, top_k: int | None = None
    ) -> list[SubstitutionTable]:
        k = self._k(top_k)

        def options_at(sentence: Sentence, i: int) -> list[Candidate]:
            word = sentence.forms[i]
            swaps = [
                word[:j] + word[j + 1] + word[j] + word[j + 2 :] for j in range(1, len(word) - 2)
            ]
            return [(s, "_") for s in dict.fromkeys(swaps) if s != word][:k]

        return self.tables_by_word(sentences, options_at)


@CONSTRAINTS.register("keep-capitalised", help="words starting with a capital letter stay")
@dataclass(frozen=True)
class KeepCapitalised(Constraint):
    """Rejects candidates that change a word starting with a capital letter.

    Values: how many such words each candidate changes (float64, (m,)).
    """

    cheap: ClassVar[bool] = True  # checked before the parser's

    @classmethod
    def from_spec(cls, value: str | None, context: ConstraintContext) -> KeepCapitalised:
        return cls()  # `--constraint keep-capitalised`

    def check(self, batch: CandidateBatch) -> ConstraintResult:
        forms = batch.original.forms
        values = np.array(
            [sum(forms[i][:1].isupper() for i in changed_words(p)[1]) for p in batch.perturbations],
            dtype=np.float64,
        )
        return ConstraintResult(self.name, values == 0, values)

    def describe(self) -> dict[str, object]:
        return {"name": self.name}


@STRATEGIES.register(
    "first-k", help="score the first k single substitutions, keep the worst feasible"
)
@dataclass(frozen=True, kw_only=True)
class FirstK(Strategy):
    """Scores the first ``candidates`` single substitutions; keeps the worst feasible."""

    candidates: int = 20  # filled from --candidates

    def search(self, problem: SearchProblem, *, rng: np.random.Generator) -> Outcome:
        pool = problem.expand(problem.empty())[: self.candidates]
        damages = problem.score(pool)  # counted and cached for you
        pool = pool[: damages.size]  # the query budget may cut it
        found, checked = first_feasible(problem, pool, damages)
        if not found:
            return Outcome(problem.empty(), 0.0, len(pool), checked)
        return Outcome(pool[found[0]], float(damages[found[0]]), len(pool), checked)
