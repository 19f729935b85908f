"""``syntax``: the re-parse of a candidate stays close to the parse of the original.

The value is the normalised tree edit distance between the two parses (expensive,
needs a parser). The original and all candidates go to the parser in one batch; its
cache keeps them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

import numpy as np

from brittle.engine.core.errors import ConfigError
from brittle.scorers.distance import normalized_tree_edit_distance_batch
from brittle.search.constraints.base import (
    CONSTRAINTS,
    CandidateBatch,
    Constraint,
    ConstraintContext,
    ConstraintResult,
    empty_result,
    spec_number,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from brittle.scorers.parsers.base import Parse, Parser

__all__ = ["SyntaxConstraint", "TreeLabels", "parse_distances"]

TreeLabels = Literal["none", "deprel", "upos"]


@CONSTRAINTS.register(
    "syntax", help="normalised tree edit distance of the re-parse <= threshold (syntax:0.2)"
)
@dataclass(frozen=True)
class SyntaxConstraint(Constraint):
    """Normalised tree edit distance between the parses of original and candidate.

    Attributes:
        parser: parses the original and every candidate (one batch per call).
        max_distance: the largest distance kept (``inf``: only measure).
        labels: node labels for the edit distance: ``deprel`` (the parser's relations),
            ``upos`` or ``none`` (tree shape only).
        by: normalisation: ``max`` divides by the larger word count, ``sum`` by both.
    """

    parser: Parser
    max_distance: float = float("inf")
    labels: TreeLabels = "deprel"
    by: Literal["max", "sum"] = "max"

    name: ClassVar[str] = "syntax"
    spec_value: ClassVar[str] = "largest normalised tree edit distance (default: 0.2)"

    @classmethod
    def from_spec(cls, value: str | None, context: ConstraintContext) -> SyntaxConstraint:
        cls.check_spec(value)
        limit = spec_number(value, "syntax", context.max_syntax_distance)
        return cls(context.parser(), max_distance=limit)

    @classmethod
    def check_spec(cls, value: str | None) -> None:
        limit = spec_number(value, "syntax", 0.0)
        if not limit >= 0:
            raise ConfigError(f"max syntax distance must be >= 0, got {limit}")

    def __post_init__(self) -> None:
        if not self.max_distance >= 0:
            raise ConfigError(f"max syntax distance must be >= 0, got {self.max_distance}")
        if self.labels not in ("none", "deprel", "upos"):
            raise ConfigError(f"tree labels must be none, deprel or upos, got {self.labels!r}")

    def describe(self) -> dict[str, object]:
        return {
            "name": self.name,
            "parser": self.parser.name,
            "max_distance": self.max_distance,
            "labels": self.labels,
            "by": self.by,
        }

    def check(self, batch: CandidateBatch) -> ConstraintResult:
        """Values: normalised tree edit distance, float64 (m,); mask: <= max_distance."""
        return self.check_many([batch])[0]

    def check_many(self, batches: Sequence[CandidateBatch]) -> list[ConstraintResult]:
        """:meth:`check` of several sentences' batches with one parser call."""
        sentences = [s for b in batches if len(b) for s in (b.original, *b.sentences)]
        parses = self.parser.parse(sentences) if sentences else []
        out: list[ConstraintResult] = []
        start = 0
        for b in batches:
            if len(b) == 0:
                out.append(empty_result(self.name))
                continue
            reference, others = parses[start], parses[start + 1 : start + 1 + len(b)]
            values = parse_distances(reference, others, labels=self.labels, by=self.by)
            out.append(ConstraintResult(self.name, values <= self.max_distance, values))
            start += 1 + len(b)
        return out


def parse_distances(
    reference: Parse,
    others: Sequence[Parse],
    *,
    labels: TreeLabels = "deprel",
    by: Literal["max", "sum"] = "max",
) -> NDArray[np.float64]:
    """Normalised tree edit distance from ``reference`` to each parse, float64 (m,)."""
    if not others:
        return np.zeros(0, dtype=np.float64)
    heads = [p.heads for p in others]
    if labels == "none":
        return normalized_tree_edit_distance_batch(reference.heads, heads, by=by)
    field = "deprels" if labels == "deprel" else "upos"
    return normalized_tree_edit_distance_batch(
        reference.heads,
        heads,
        getattr(reference, field),
        [getattr(p, field) for p in others],
        by=by,
    )
