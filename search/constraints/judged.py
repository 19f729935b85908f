"""``judged``: brittle's own judges grade the candidate valid at a level.

The judges of :mod:`brittle.search.validity` (the re-parse against the gold tree, the
lexical and grammatical checks, the surprisal where the changed words' constructions
continue, WordNet synonymy and sentence similarity; docs/validity.md) grade each
candidate against its original, and ``judged:LEVEL`` keeps the candidates valid at
``LEVEL`` and every level below it:

- ``judged:tree``: the gold heads, relations and UPOS still hold;
- ``judged`` or ``judged:grammatical``: and the sentence is grammatical English;
- ``judged:meaning``: and it means what the original means.

Each level is the same verdict ``attack --grade`` reports for the kept perturbation, so
a run constrained by ``judged:L`` keeps only perturbations it grades valid at L (what
the judges miss, a reader still finds: docs/validity.md gives their agreement with
read sentences). The value is 1.0 for a valid candidate, 0.0 for one that is not, and
NaN for one the judges cannot grade (a reordering moves words), which is rejected: a
level nobody checked is not vouched for.

Cost: the re-parse (answered by the parser's cache when ``syntax`` parsed the
candidates already), one pass of the bundled causal LM over the candidates whose
grammatical level the cheaper checks left open, and for ``meaning`` one pass of the
sentence encoder. Put it last, after the constraints that reject the most.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from brittle.engine.core.errors import ConfigError
from brittle.search.constraints.base import (
    CONSTRAINTS,
    CandidateBatch,
    Constraint,
    ConstraintContext,
    ConstraintResult,
    empty_result,
)
from brittle.search.validity.grade import Grader
from brittle.search.validity.records import LEVELS, Grade, Level

if TYPE_CHECKING:
    from brittle.scorers.parsers.base import Parser

__all__ = ["DEFAULT_LEVEL", "JudgedConstraint", "level_holds"]

#: The level a bare ``judged`` asks for: valid in brittle's sense (docs/validity.md).
DEFAULT_LEVEL: Level = "grammatical"


def level_holds(grade: Grade, level: Level) -> bool | None:
    """Whether ``grade`` is valid at ``level`` (``None``: the pair was not graded)."""
    verdicts: dict[Level, bool | None] = {
        "tree": grade.tree_valid,
        "grammatical": grade.grammatical,
        "meaning": grade.meaning_kept,
    }
    return verdicts[level]


def _level(value: str | None) -> Level:
    """The level named by a spec's ``VALUE``; :class:`ConfigError` for another word."""
    if value is None or value == "":
        return DEFAULT_LEVEL
    for level in LEVELS:
        if value == level:
            return level
    raise ConfigError(f"judged: unknown level {value!r} (one of {', '.join(LEVELS)})")


@CONSTRAINTS.register(
    "judged",
    help="brittle's judges grade the candidate valid: judged:tree, judged (grammatical), "
    "judged:meaning (docs/validity.md)",
)
@dataclass(frozen=True)
class JudgedConstraint(Constraint):
    """Keeps the candidates the judges grade valid at ``level``.

    Attributes:
        grader: grades (original, candidate) pairs; its parser re-parses them.
        level: ``tree``, ``grammatical`` or ``meaning`` (each includes those below).
    """

    grader: Grader
    level: Level = DEFAULT_LEVEL

    spec_value: ClassVar[str] = "level: tree, grammatical (the default) or meaning"

    @classmethod
    def from_spec(cls, value: str | None, context: ConstraintContext) -> JudgedConstraint:
        level = _level(value)
        run_parser = context.parser()
        # the gold trees cannot re-parse a candidate: spaCy does, as for `attack --grade`
        parser: Parser | str = "spacy" if run_parser.name == "gold" else run_parser
        return cls(Grader(parser=parser, device=context.device, dtype=context.dtype), level)

    @classmethod
    def check_spec(cls, value: str | None) -> None:
        _level(value)

    def describe(self) -> dict[str, object]:
        return {"name": self.name, "level": self.level, **self.grader.describe()}

    def check(self, batch: CandidateBatch) -> ConstraintResult:
        """Values: 1.0 valid at the level, 0.0 not, NaN not gradable; float64 (m,)."""
        return self.check_many([batch])[0]

    def check_many(self, batches: Sequence[CandidateBatch]) -> list[ConstraintResult]:
        """:meth:`check` of several sentences' batches, graded in one call."""
        originals = [b.original for b in batches for _ in b.sentences]
        perturbed = [s for b in batches for s in b.sentences]
        grades = iter(self.grader.grade(originals, perturbed) if perturbed else [])
        out: list[ConstraintResult] = []
        for b in batches:
            if len(b) == 0:
                out.append(empty_result(self.name))
                continue
            verdicts = [level_holds(next(grades), self.level) for _ in b.sentences]
            values = np.array(
                [np.nan if v is None else float(v) for v in verdicts], dtype=np.float64
            )
            out.append(ConstraintResult(self.name, values == 1.0, values))
        return out
