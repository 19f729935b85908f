"""``pos`` and ``retag``: the parser's tags of the changed words (needs a parser).

Both re-tag every candidate and compare, at every changed word (a substituted word, or
a word a reordering moved, found where it now stands), the parser's UPOS with the
original's; the value is the share of changed words that keep their tag (NaN when a
candidate changes nothing).

- ``pos`` compares with the gold UPOS or with the parser's own tags on the original;
  it only measures unless given a rate (``pos:R`` rejects below share R).
- ``retag`` compares with the gold UPOS and always rejects: by default every changed
  word must keep its tag (``retag:R`` accepts a share of at least R).

The original and all candidates of every sentence go to the parser in one call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

import numpy as np

from brittle.engine.core.errors import ConfigError
from brittle.search.constraints.base import (
    CONSTRAINTS,
    CandidateBatch,
    Constraint,
    ConstraintContext,
    ConstraintResult,
    changed_words,
    empty_result,
    parse_batches,
    spec_number,
)

if TYPE_CHECKING:
    from brittle.engine.core.perturbation import Perturbation
    from brittle.scorers.parsers.base import Parse, Parser

__all__ = ["PosConstraint", "PosReference", "RetagConstraint", "pos_agreement"]

PosReference = Literal["gold", "parsed"]


@CONSTRAINTS.register(
    "pos",
    help="the parser's tags of changed words match the original UPOS; pos:R rejects below "
    "share R (measured only without R)",
)
@dataclass(frozen=True)
class PosConstraint(Constraint):
    """Share of changed words whose tag in the candidate equals their original UPOS.

    Attributes:
        parser: tags the candidates (its ``upos``).
        reference: ``gold`` compares with the treebank's UPOS column; ``parsed`` with
            the same parser's tags on the original (tagger errors cancel out).
        min_rate: the least share kept when enforced (1.0: every changed word).
        enforce: reject candidates below ``min_rate``; otherwise only measure.
    """

    parser: Parser
    reference: PosReference = "gold"
    min_rate: float = 1.0
    enforce: bool = False

    spec_value: ClassVar[str] = "least share of changed words keeping their tag (enforced)"

    @classmethod
    def from_spec(cls, value: str | None, context: ConstraintContext) -> PosConstraint:
        cls.check_spec(value)
        if value is None:
            return cls(context.parser())
        return cls(context.parser(), min_rate=spec_number(value, cls.name, 1.0), enforce=True)

    @classmethod
    def check_spec(cls, value: str | None) -> None:
        rate = spec_number(value, cls.name, 1.0)
        if not 0.0 <= rate <= 1.0:
            raise ConfigError(f"{cls.name} min_rate must lie in [0, 1], got {rate}")

    def __post_init__(self) -> None:
        if self.reference not in ("gold", "parsed"):
            raise ConfigError(
                f"{self.name} reference must be gold or parsed, got {self.reference!r}"
            )
        if not 0.0 <= self.min_rate <= 1.0:
            raise ConfigError(f"{self.name} min_rate must lie in [0, 1], got {self.min_rate}")

    def describe(self) -> dict[str, object]:
        return {
            "name": self.name,
            "parser": self.parser.name,
            "reference": self.reference,
            "min_rate": self.min_rate,
            "enforce": self.enforce,
        }

    def check(self, batch: CandidateBatch) -> ConstraintResult:
        """Values: share of changed words keeping their tag, float64 (m,), NaN if none."""
        return self.check_many([batch])[0]

    def check_many(self, batches: Sequence[CandidateBatch]) -> list[ConstraintResult]:
        """:meth:`check` of several sentences' batches with one parser call."""
        out: list[ConstraintResult] = []
        for b, parsed in zip(batches, parse_batches(self.parser, batches), strict=True):
            if parsed is None:
                out.append(empty_result(self.name, enforced=self.enforce))
                continue
            original, others = parsed
            reference = b.original.upos if self.reference == "gold" else original.upos
            values = np.array(
                [
                    pos_agreement(reference, parse, p)
                    for parse, p in zip(others, b.perturbations, strict=True)
                ],
                dtype=np.float64,
            )
            if self.enforce:
                mask = np.isnan(values) | (values >= self.min_rate)
            else:
                mask = np.ones(len(values), dtype=bool)
            out.append(ConstraintResult(self.name, mask, values, enforced=self.enforce))
        return out


@CONSTRAINTS.register(
    "retag",
    help="the parser's UPOS at every changed (or moved) word equals the gold UPOS; "
    "retag:R keeps candidates with share >= R (default 1)",
)
@dataclass(frozen=True)
class RetagConstraint(PosConstraint):
    """``pos`` against the gold UPOS, always enforced: by default a candidate is kept
    only when the parser tags every changed word as the treebank tags the original.

    Attributes:
        parser: tags the candidates.
        min_rate: the least share of changed words keeping their gold tag (1.0: all).
    """

    reference: PosReference = "gold"
    min_rate: float = 1.0
    enforce: bool = True

    spec_value: ClassVar[str] = (
        "least share of changed words re-tagged as their gold UPOS (default 1)"
    )

    @classmethod
    def from_spec(cls, value: str | None, context: ConstraintContext) -> RetagConstraint:
        cls.check_spec(value)
        return cls(context.parser(), min_rate=spec_number(value, cls.name, 1.0))


def pos_agreement(reference: Sequence[str], parse: Parse, p: Perturbation) -> float:
    """Share of the words ``p`` changes whose tag in ``parse`` equals ``reference``.

    ``reference`` holds the original sentence's tags (n,); ``parse`` is the candidate's.
    NaN when ``p`` changes nothing.
    """
    new_idx, old_idx = changed_words(p)
    if not new_idx:
        return float("nan")
    same = sum(parse.upos[j] == reference[i] for j, i in zip(new_idx, old_idx, strict=True))
    return same / len(new_idx)
