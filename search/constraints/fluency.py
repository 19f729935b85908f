"""``fluency``: a candidate may not read much worse than the original to a causal LM.

The value is how much more surprising the candidate is than the original, in bits:
``-log2 P(candidate) + log2 P(original)`` divided by

- the sentence's number of words (``fluency:B``): the increase of the LM's mean
  surprisal per word; or
- the number of words the candidate changes (``fluency:B/changed``): the increase per
  changed word, which does not fade in long sentences.

Both count words, not the LM's subword tokens, so the tokenisation does not change the
unit (see :mod:`brittle.search.sentence_models` for what text the LM reads). A
candidate is kept when the value is at most the bound ``B`` (default
:data:`DEFAULT_MAX_SURPRISAL_INCREASE` bits per word, chosen by measurement:
docs/constraints.md). It applies alike to substitutions and reorderings (a reordering
changes the words it moves).

The LM (the bundled SmolLM2 unless told otherwise) loads at the first check, once per
process and device; an original is scored once however many candidates it meets.
"""

from __future__ import annotations

import math
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
    empty_result,
    spec_number,
)
from brittle.search.sentence_models import pair_texts, surprisal_model

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "DEFAULT_MAX_SURPRISAL_INCREASE",
    "FluencyConstraint",
    "SurprisalUnit",
    "surprisal_increase",
]

#: What the surprisal increase is divided by: the sentence's words or the changed ones.
SurprisalUnit = Literal["word", "changed"]

#: Largest increase of the mean surprisal, bits per word (see docs/constraints.md).
DEFAULT_MAX_SURPRISAL_INCREASE = 0.7

#: The suffix of a bound per changed word: ``fluency:8/changed``.
PER_CHANGED = "/changed"


def surprisal_increase(
    batches: Sequence[CandidateBatch],
    *,
    per: SurprisalUnit = "word",
    model: str | None = None,
    device: str | None = None,
    dtype: str | None = None,
) -> list[NDArray[np.float64]]:
    """Per batch, each candidate's surprisal minus the original's, float64 (m,): bits per
    word of the sentence (``per="word"``) or per changed word (``per="changed"``).

    One LM call for every text of every batch (texts already scored come from the
    model's cache).
    """
    lm = surprisal_model(model, device=device, dtype=dtype)
    first: list[str] = []
    second: list[str] = []
    words: list[int] = []
    changed: list[int] = []
    for b in batches:
        for sentence, p in zip(b.sentences, b.perturbations, strict=True):
            a, c = pair_texts(b.original, sentence, p)
            first.append(a)
            second.append(c)
            words.append(len(b.original))
            changed.append(max(p.size, 1))
    if not first:
        return [np.zeros(0, dtype=np.float64) for _ in batches]
    increase = lm.bits_per_word(second, words) - lm.bits_per_word(first, words)
    if per == "changed":
        increase = increase * np.asarray(words, dtype=np.float64) / np.asarray(changed)
    out = []
    start = 0
    for b in batches:
        out.append(increase[start : start + len(b)].copy())
        start += len(b)
    return out


def _parse(value: str | None) -> tuple[float, SurprisalUnit]:
    """``B`` or ``B/changed`` as (bound, unit); :class:`ConfigError` when malformed."""
    text = value or ""
    per: SurprisalUnit = "word"
    if text.endswith(PER_CHANGED):
        text, per = text.removesuffix(PER_CHANGED), "changed"
        if not text:
            raise ConfigError("fluency: expected B/changed with a number B")
    bound = spec_number(text, "fluency", DEFAULT_MAX_SURPRISAL_INCREASE)
    if bound == -math.inf:
        raise ConfigError(f"fluency: the bound must be a number above -inf, got {value!r}")
    return bound, per


@CONSTRAINTS.register(
    "fluency",
    help="the causal LM's surprisal rises by at most B bits per word (fluency:B; default "
    f"{DEFAULT_MAX_SURPRISAL_INCREASE}) or per changed word (fluency:B/changed)",
)
@dataclass(frozen=True)
class FluencyConstraint(Constraint):
    """Increase of the causal LM's surprisal at most ``max_increase``.

    Attributes:
        max_increase: the largest increase kept, in bits per ``per`` (``inf``: only
            measure).
        per: ``word`` divides by the sentence's words (the mean per-word surprisal),
            ``changed`` by the words the candidate changes.
        model: the causal LM (``None``: the bundled SmolLM2).
        device: torch device (``None``: ``cuda`` when available, else ``cpu``).
        dtype: precision of the LM (``None``: float32).
    """

    max_increase: float = DEFAULT_MAX_SURPRISAL_INCREASE
    per: SurprisalUnit = "word"
    model: str | None = None
    device: str | None = None
    dtype: str | None = None

    name: ClassVar[str] = "fluency"
    spec_value: ClassVar[str] = (
        "largest surprisal increase in bits per word, B (default "
        f"{DEFAULT_MAX_SURPRISAL_INCREASE}), or per changed word, B/changed"
    )

    @classmethod
    def from_spec(cls, value: str | None, context: ConstraintContext) -> FluencyConstraint:
        bound, per = _parse(value)
        return cls(max_increase=bound, per=per, device=context.device, dtype=context.dtype)

    @classmethod
    def check_spec(cls, value: str | None) -> None:
        _parse(value)

    def __post_init__(self) -> None:
        if math.isnan(self.max_increase) or self.max_increase == -math.inf:
            raise ConfigError(f"{self.name}: bad bound {self.max_increase}")
        if self.per not in ("word", "changed"):
            raise ConfigError(f"{self.name}: per must be word or changed, got {self.per!r}")

    def describe(self) -> dict[str, object]:
        return {
            "name": self.name,
            "max_increase": self.max_increase,
            "unit": "bits per word" if self.per == "word" else "bits per changed word",
            "model": self.model or "smollm2",
        }

    def check(self, batch: CandidateBatch) -> ConstraintResult:
        """Values: surprisal increase in bits per ``per``, float64 (m,); mask: <= bound."""
        return self.check_many([batch])[0]

    def check_many(self, batches: Sequence[CandidateBatch]) -> list[ConstraintResult]:
        """:meth:`check` of several sentences' batches with one LM call."""
        found = surprisal_increase(
            batches, per=self.per, model=self.model, device=self.device, dtype=self.dtype
        )
        return [
            ConstraintResult(self.name, values <= self.max_increase, values)
            if len(values)
            else empty_result(self.name)
            for values in found
        ]
