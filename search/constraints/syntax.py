"""``syntax``: the re-parse of a candidate stays close to the parse of the original.

The value is the normalised tree edit distance between the two parses (expensive,
needs a parser). The original and all candidates go to the parser in one batch; its
cache keeps them.

The constraint only asks whether the distance is within its bound, so the exact
distance is computed only when it can matter (:class:`DistancePaths` counts each path):

- ``identical``: the candidate's parse has the original's heads and labels (most
  substitutions keep the tree): the distance is 0, nothing is computed;
- ``bounded``: a lower bound already exceeds the threshold: the candidate is rejected
  and its value is that lower bound (so a rejected candidate's value is at most its true
  distance, still above the threshold). With unit costs every edit changes the label
  multiset by at most two, so the distance is at least half the L1 distance between the
  two parses' label histograms, and at least the difference of their word counts;
- ``computed``: the Zhang-Shasha kernel runs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
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
    parse_batches,
    spec_number,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from brittle.scorers.parsers.base import Parse, Parser

__all__ = ["DistancePaths", "SyntaxConstraint", "TreeLabels", "parse_distances"]

TreeLabels = Literal["none", "deprel", "upos"]


@dataclass(slots=True)
class DistancePaths:
    """How many candidates took each path of :func:`parse_distances` (see the module
    docstring): ``identical`` parse, rejected by a lower ``bound``, or ``computed``."""

    identical: int = 0
    bounded: int = 0
    computed: int = 0

    def add(self, other: DistancePaths) -> None:
        self.identical += other.identical
        self.bounded += other.bounded
        self.computed += other.computed

    @property
    def total(self) -> int:
        return self.identical + self.bounded + self.computed


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
    paths: DistancePaths = field(default_factory=DistancePaths, compare=False, repr=False)

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
        out: list[ConstraintResult] = []
        for parsed in parse_batches(self.parser, batches):
            if parsed is None:
                out.append(empty_result(self.name))
                continue
            reference, others = parsed
            values = parse_distances(
                reference,
                others,
                labels=self.labels,
                by=self.by,
                bound=self.max_distance,
                paths=self.paths,
            )
            out.append(ConstraintResult(self.name, values <= self.max_distance, values))
        return out


def parse_distances(
    reference: Parse,
    others: Sequence[Parse],
    *,
    labels: TreeLabels = "deprel",
    by: Literal["max", "sum"] = "max",
    bound: float = float("inf"),
    paths: DistancePaths | None = None,
) -> NDArray[np.float64]:
    """Normalised tree edit distance from ``reference`` to each parse, float64 (m,).

    Parses identical to ``reference`` get 0 without computation. With a finite
    ``bound``, a parse whose lower bound exceeds it gets that lower bound instead of its
    distance (see the module docstring); every value at most ``bound`` is exact.
    ``paths``, when given, counts the paths taken.
    """
    found = DistancePaths()
    values = np.zeros(len(others), dtype=np.float64)
    field_name = {"deprel": "deprels", "upos": "upos"}.get(labels)

    def labels_of(p: Parse) -> tuple[str, ...] | None:
        return None if field_name is None else tuple(getattr(p, field_name))

    ref_labels = labels_of(reference)
    ref_heads = np.asarray(reference.heads)
    n_ref = len(ref_heads)
    ref_counts = Counter(ref_labels or ())
    todo: list[int] = []
    for t, parse in enumerate(others):
        other_labels = labels_of(parse)
        if other_labels == ref_labels and np.array_equal(np.asarray(parse.heads), ref_heads):
            found.identical += 1
            continue
        if np.isfinite(bound):
            n = len(parse.heads)
            norm = float(max(n_ref, n) if by == "max" else n_ref + n)
            lower = abs(n - n_ref)
            if other_labels is not None:
                diff = ref_counts.copy()
                diff.subtract(Counter(other_labels))
                lower = max(lower, -(-sum(abs(v) for v in diff.values()) // 2))
            if norm > 0 and lower / norm > bound:
                values[t] = lower / norm
                found.bounded += 1
                continue
        todo.append(t)
    found.computed = len(todo)
    if todo:
        heads = [others[t].heads for t in todo]
        if labels == "none":
            exact = normalized_tree_edit_distance_batch(reference.heads, heads, by=by)
        else:
            exact = normalized_tree_edit_distance_batch(
                reference.heads,
                heads,
                list(ref_labels or ()),
                [list(labels_of(others[t]) or ()) for t in todo],
                by=by,
            )
        values[todo] = exact
    if paths is not None:
        paths.add(found)
    return values
