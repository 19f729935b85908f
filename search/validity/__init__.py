"""Validity grading: is a perturbed sentence still analysed by its original gold tree?

Three levels, each stricter than the last (see ``docs/validity.md``):

- **tree-valid**: the original gold tree (heads, relations, UPOS) is still the right
  analysis of the perturbed sentence (:mod:`.tree` re-parses it and compares with the
  gold tree; :mod:`.lexical` checks the new words against the slots they fill);
- **grammatical**: tree-valid, and well-formed English (:mod:`.grammar`: verb frames,
  agreement, count nouns, known words; :mod:`.surprisal`: the causal LM's surprise
  where the changed words' constructions continue);
- **meaning kept**: grammatical, and a paraphrase (:mod:`.meaning`: WordNet synonymy of
  the changed words, sentence-embedding similarity).

:func:`grade_pairs` grades many pairs at once (one parser call, one LM call, one
encoder call; the models only where their level is still open) and returns one
immutable :class:`Grade` per pair, with the evidence of every check.
"""

from __future__ import annotations

from brittle.search.validity.grade import Grader, grade_pairs
from brittle.search.validity.records import (
    LEVELS,
    ChangedWord,
    Check,
    Grade,
    Level,
)

__all__ = ["LEVELS", "ChangedWord", "Check", "Grade", "Grader", "Level", "grade_pairs"]
