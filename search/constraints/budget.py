"""``budget``: at most tau words changed (cheap; no parser, no model).

The value is the Hamming distance between the original and the candidate FORM
sequences. Generators also use ``tau`` to draw at most that many positions, so this
mostly guards and reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from brittle.engine.core.errors import ConfigError
from brittle.engine.core.perturbation import counted_forms
from brittle.scorers.hamming import hamming_batch
from brittle.search.constraints.base import (
    CONSTRAINTS,
    CandidateBatch,
    Constraint,
    ConstraintContext,
    ConstraintResult,
    empty_result,
    spec_number,
)

__all__ = ["BudgetConstraint"]


@CONSTRAINTS.register(
    "budget", help="at most tau words changed (Hamming <= tau); budget:K sets tau"
)
@dataclass(frozen=True)
class BudgetConstraint(Constraint):
    """Hamming distance between FORM sequences at most ``tau`` (cheap; no parser).

    Attributes:
        tau: the most words a candidate may change (>= 0).
    """

    cheap: ClassVar[bool] = True
    spec_value: ClassVar[str] = "most words changed (default: the run's budget)"

    tau: int

    def __post_init__(self) -> None:
        if self.tau < 0:
            raise ConfigError(f"budget tau must be >= 0, got {self.tau}")

    @classmethod
    def from_spec(cls, value: str | None, context: ConstraintContext) -> BudgetConstraint:
        cls.check_spec(value)
        return cls(int(spec_number(value, "budget", context.tau)))

    @classmethod
    def check_spec(cls, value: str | None) -> None:
        tau = spec_number(value, "budget", 0)
        if tau != int(tau):
            raise ConfigError(f"budget: expected a whole number of words, got {value!r}")
        if tau < 0:
            raise ConfigError(f"budget tau must be >= 0, got {value}")

    def describe(self) -> dict[str, object]:
        return {"name": self.name, "tau": self.tau}

    def allows_size(self, size: int) -> bool:
        """Whether a perturbation of ``size`` words can pass (pruning before generation)."""
        return size <= self.tau

    def check(self, batch: CandidateBatch) -> ConstraintResult:
        """Values: words changed, float64 (m,); mask: values <= tau."""
        if len(batch) == 0:
            return empty_result(self.name)
        d = hamming_batch(  # an a/an repaired with a substitution is not counted
            batch.original.forms,
            [
                counted_forms(batch.original, p, s)
                for p, s in zip(batch.perturbations, batch.sentences, strict=True)
            ],
        )
        values = d.astype(np.float64)
        return ConstraintResult(self.name, values <= self.tau, values)
