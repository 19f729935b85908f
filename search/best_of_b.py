"""Best-of-b sampling (La Malfa et al., Algorithm 1).

Draw ``b`` random perturbations of at most ``tau`` words, keep those every constraint
admits, and return the one that changes the most words (largest Hamming distance) and,
among those, disturbs the parse least (smallest syntax distance). Remaining ties go to
the candidate with the smallest seeded tie-break key, so a seed fixes the choice.

This is the selection ``brittle perturb`` makes, with no probe in the loop (the attack
strategies in :mod:`brittle.search.strategies` rank by probe damage instead). It
receives the problem as arguments (the b perturbations a generator drew, the
constraints, a seeded generator for ties) and returns a :class:`SampleOutcome`; it
holds no state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from brittle.search.constraints import CandidateBatch, Constraint, ConstraintOutcome, check_all

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from brittle.engine.core.perturbation import Perturbation
    from brittle.engine.core.sentence import Sentence

__all__ = ["SampleOutcome", "best_of_b", "best_of_batch", "distinct_candidates", "select_best"]


def select_best(
    *,
    hamming: ArrayLike,
    syntax: ArrayLike,
    admissible: ArrayLike,
    tiebreak: ArrayLike,
) -> int | None:
    """Index of the Algorithm 1 choice, or ``None`` when nothing is admissible.

    Args:
        hamming: words changed per candidate, shape (m,).
        syntax: syntax distance per candidate, shape (m,) (NaN counts as +inf).
        admissible: bool (m,): candidates that pass every constraint.
        tiebreak: distinct keys (m,), e.g. a seeded permutation; smallest wins a tie.

    Returns:
        The admissible candidate with the largest Hamming distance, then the smallest
        syntax distance, then the smallest tie-break key.
    """
    h = np.asarray(hamming, dtype=np.float64)
    s = np.nan_to_num(np.asarray(syntax, dtype=np.float64), nan=np.inf)
    ok = np.asarray(admissible, dtype=bool)
    t = np.asarray(tiebreak)
    if not (h.shape == s.shape == ok.shape == t.shape) or h.ndim != 1:
        raise ValueError(
            f"shapes differ: hamming {h.shape}, syntax {s.shape}, "
            f"admissible {ok.shape}, tiebreak {t.shape}"
        )
    idx = np.flatnonzero(ok)
    if idx.size == 0:
        return None
    # np.lexsort sorts by the last key first.
    order = np.lexsort((t[idx], s[idx], -h[idx]))
    return int(idx[order[0]])


@dataclass(frozen=True, eq=False)
class SampleOutcome:
    """What best-of-b sampling did for one sentence.

    Attributes:
        original: the sentence.
        batch: the distinct candidates drawn (possibly none), applied.
        outcome: every constraint's result on ``batch``.
        chosen: index into ``batch`` of the choice, ``None`` when nothing was drawn or
            nothing passed the constraints.
    """

    original: Sentence
    batch: CandidateBatch
    outcome: ConstraintOutcome
    chosen: int | None

    @property
    def perturbation(self) -> Perturbation | None:
        """The chosen perturbation, if any."""
        return None if self.chosen is None else self.batch.perturbations[self.chosen]

    @property
    def sentence(self) -> Sentence:
        """The chosen perturbed sentence, or the original when there is no choice."""
        return self.original if self.chosen is None else self.batch.sentences[self.chosen]

    def value(self, name: str) -> float | None:
        """The chosen candidate's value for the constraint ``name`` (None if absent)."""
        values = self.outcome.values(name)
        if self.chosen is None or values is None:
            return None
        return float(values[self.chosen])

    @property
    def drawn(self) -> int:
        """Number of distinct candidates drawn."""
        return len(self.batch)

    @property
    def admissible(self) -> int:
        """Number of candidates that passed every constraint."""
        return int(self.outcome.mask.sum())


def best_of_b(
    original: Sentence,
    drawn: Sequence[Perturbation],
    *,
    constraints: Sequence[Constraint],
    rng: np.random.Generator,
    hamming_name: str = "budget",
    syntax_name: str = "syntax",
) -> SampleOutcome:
    """Algorithm 1's choice among ``drawn`` for one sentence.

    Args:
        original: the sentence to perturb.
        drawn: the b random perturbations of ``original`` (a generator's draw);
            duplicates and identities are dropped, order is kept.
        constraints: checked on all distinct candidates in one batch (cheap ones first).
        rng: seeded generator for the tie-break keys.
        hamming_name, syntax_name: the constraints whose values rank the candidates;
            without a Hamming constraint the perturbation sizes rank them, without a
            syntax constraint every candidate ranks equal on syntax.
    """
    return best_of_batch(
        distinct_candidates(original, drawn),
        constraints=constraints,
        rng=rng,
        hamming_name=hamming_name,
        syntax_name=syntax_name,
    )


def distinct_candidates(original: Sentence, drawn: Sequence[Perturbation]) -> CandidateBatch:
    """The batch of distinct, non-identity perturbations in ``drawn`` (order kept)."""
    return CandidateBatch.build(
        original, list(dict.fromkeys(p for p in drawn if not p.is_identity))
    )


def best_of_batch(
    batch: CandidateBatch,
    *,
    constraints: Sequence[Constraint],
    rng: np.random.Generator,
    hamming_name: str = "budget",
    syntax_name: str = "syntax",
) -> SampleOutcome:
    """:func:`best_of_b` on an already built batch of distinct candidates."""
    outcome = check_all(batch, constraints)
    m = len(batch)
    tiebreak = rng.permutation(m)
    if m == 0:
        return SampleOutcome(batch.original, batch, outcome, None)
    hamming = outcome.values(hamming_name)
    if hamming is None:
        hamming = np.array([p.size for p in batch.perturbations], dtype=np.float64)
    syntax = outcome.values(syntax_name)
    if syntax is None:
        syntax = np.zeros(m, dtype=np.float64)
    chosen = select_best(hamming=hamming, syntax=syntax, admissible=outcome.mask, tiebreak=tiebreak)
    return SampleOutcome(batch.original, batch, outcome, chosen)
