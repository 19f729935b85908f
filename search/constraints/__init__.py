"""Constraints: which candidate perturbations of one sentence are admissible.

Every constraint takes a whole :class:`CandidateBatch` (one original sentence and its
candidate perturbations, applied) and returns a :class:`ConstraintResult`: a boolean
mask of the candidates it keeps plus the value it measured for each one. One candidate
is a batch of one. The contract, the registry and the helpers that run a list of
constraints live in :mod:`.base`; each built-in constraint has a module of its own,
found by the registry without a list of them anywhere:

- ``budget`` (:mod:`.budget`, cheap): at most ``tau`` words changed (FORM Hamming).
- ``pos`` (:mod:`.tags`, needs a parser): the share of changed words whose re-tag equals
  their original UPOS; measured only, unless given a rate.
- ``retag`` (:mod:`.tags`, needs a parser): ``pos`` against the gold UPOS, enforced
  (by default every changed word keeps its tag).
- ``syntax`` (:mod:`.syntax`, needs a parser): the normalised tree edit distance between
  the parses of original and candidate is at most a threshold.
- ``fluency`` (:mod:`.fluency`, needs the causal LM): the LM's mean surprisal rises by
  at most a bound, in bits per word.
- ``similarity`` (:mod:`.similarity`, needs the sentence encoder): the cosine of the
  MiniLM sentence embeddings of original and candidate is at least a bound.
- ``word-similarity`` (:mod:`.word_similarity`, needs the sentence encoder): every
  changed word's MiniLM vector in context keeps at least a cosine with the original
  word's.
- ``judged`` (:mod:`.judged`, needs a parser, the causal LM and the sentence encoder):
  brittle's own judges grade the candidate valid at a level (``tree``,
  ``grammatical``, ``meaning``; docs/validity.md).

Models and parsers load at the first check that needs them, so a list of constraints
without them loads nothing. The default bounds of ``fluency``, ``similarity``,
``word-similarity`` and ``retag`` were chosen by measurement (docs/constraints.md).
"""

from __future__ import annotations

from brittle.search.constraints.base import (
    CONSTRAINTS,
    CandidateBatch,
    Constraint,
    ConstraintContext,
    ConstraintOutcome,
    ConstraintResult,
    ConstraintSpec,
    build_constraints,
    changed_words,
    check_all,
    check_batches,
    empty_result,
    spec_number,
)
from brittle.search.constraints.budget import BudgetConstraint
from brittle.search.constraints.fluency import (
    DEFAULT_MAX_PER_CHANGED,
    DEFAULT_MAX_SURPRISAL_INCREASE,
    FluencyConstraint,
    surprisal_increase,
)
from brittle.search.constraints.similarity import (
    DEFAULT_MIN_SIMILARITY,
    SimilarityConstraint,
    sentence_similarity,
)
from brittle.search.constraints.syntax import SyntaxConstraint, TreeLabels, parse_distances
from brittle.search.constraints.tags import (
    PosConstraint,
    PosReference,
    RetagConstraint,
    pos_agreement,
)
from brittle.search.constraints.word_similarity import (
    DEFAULT_MIN_WORD_SIMILARITY,
    WordSimilarityConstraint,
    word_similarity,
)

__all__ = [
    "CONSTRAINTS",
    "DEFAULT_MAX_PER_CHANGED",
    "DEFAULT_MAX_SURPRISAL_INCREASE",
    "DEFAULT_MIN_SIMILARITY",
    "DEFAULT_MIN_WORD_SIMILARITY",
    "BudgetConstraint",
    "CandidateBatch",
    "Constraint",
    "ConstraintContext",
    "ConstraintOutcome",
    "ConstraintResult",
    "ConstraintSpec",
    "FluencyConstraint",
    "PosConstraint",
    "PosReference",
    "RetagConstraint",
    "SimilarityConstraint",
    "SyntaxConstraint",
    "TreeLabels",
    "WordSimilarityConstraint",
    "build_constraints",
    "changed_words",
    "check_all",
    "check_batches",
    "empty_result",
    "parse_distances",
    "pos_agreement",
    "sentence_similarity",
    "spec_number",
    "surprisal_increase",
    "word_similarity",
]
