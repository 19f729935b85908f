"""``fluency``: a candidate may not read much worse than the original to a causal LM.

The value is how much more surprising the candidate is than the original, in bits:
``-log2 P(candidate) + log2 P(original)`` divided by

- the sentence's number of words (``fluency:B``): the increase of the LM's mean
  surprisal per word; or
- the number of words the candidate changes (``fluency:B/changed``): the increase per
  changed word, which does not fade in long sentences (a substitution of several words
  is also measured one word at a time and the worse value counts, so that a harmless
  change cannot hide a bad one); or
- both (``fluency:B,C/changed``): kept when both bounds hold.

Both count words, not the LM's subword tokens, so the tokenisation does not change the
unit (see :mod:`brittle.search.sentence_models` for what text the LM reads). A bare
``fluency`` holds both defaults, chosen by measurement (docs/constraints.md):
:data:`DEFAULT_MAX_SURPRISAL_INCREASE` bits per word, which catches the odd word of a
short sentence, and :data:`DEFAULT_MAX_PER_CHANGED` bits per changed word, which
catches the one odd word of a long sentence that the mean spreads thin ("spend the
nighttime"). A spec with values holds only the bounds it names. It applies alike to
substitutions and reorderings (a reordering changes the words it moves).

The LM (the bundled SmolLM2 unless told otherwise) loads at the first check, once per
process and device; an original is scored once however many candidates it meets, and
so is a candidate sentence met again (coCO's re-rank leaves the single substitutions it
scored for this check). The substitutions of a sentence changed from the same word on
are scored together, the text before that word run once
(:meth:`~brittle.search.sentence_models.SurprisalModel.logprobs` with groups).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

import numpy as np

from brittle.engine.core.errors import ConfigError
from brittle.engine.core.perturbation import Perturbation, apply_perturbation
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
    "DEFAULT_MAX_PER_CHANGED",
    "DEFAULT_MAX_SURPRISAL_INCREASE",
    "FluencyConstraint",
    "SurprisalUnit",
    "surprisal_increase",
]

#: What the surprisal increase is divided by: the sentence's words or the changed ones.
SurprisalUnit = Literal["word", "changed"]

#: Largest increase of the mean surprisal, bits per word (see docs/constraints.md).
DEFAULT_MAX_SURPRISAL_INCREASE = 0.7

#: Largest increase per changed word, bits, of a bare ``fluency`` (docs/constraints.md).
DEFAULT_MAX_PER_CHANGED = 12.0

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
    word of the sentence (``per="word"``) or per changed word (``per="changed"``: see
    :func:`_increases`).

    One LM call for every text of every batch (texts already scored come from the
    model's cache).
    """
    per_word, per_changed = _increases(
        batches, singles=per == "changed", model=model, device=device, dtype=dtype
    )
    return per_changed if per == "changed" else per_word


def _increases(
    batches: Sequence[CandidateBatch],
    *,
    singles: bool,
    model: str | None,
    device: str | None,
    dtype: str | None,
) -> tuple[list[NDArray[np.float64]], list[NDArray[np.float64]]]:
    """Per batch, two float64 (m,) arrays of each candidate's surprisal increase: bits
    per word of the sentence, and bits per changed word.

    Per changed word is the whole increase divided by the words changed; with
    ``singles``, a substitution of several words also counts each of its words alone
    (the increase of the original with only that word substituted, in bits) and the
    larger value is kept, so that a harmless change cannot hide a bad one beside it
    ("nearly two hours ... spend the nighttime").
    """
    lm = surprisal_model(model, device=device, dtype=dtype)
    first: list[str] = []
    second: list[str] = []
    anchors: list[str | None] = []  # substitutions: the original's text
    words: list[int] = []
    changed: list[int] = []
    # (candidate, original, one word alone, words): a substitution's each word
    alone: list[tuple[int, str, str, int]] = []
    for b in batches:
        for sentence, p in zip(b.sentences, b.perturbations, strict=True):
            a, c = pair_texts(b.original, sentence, p)
            if singles and p.order is None and p.size > 1:
                for single in _single_words(p):
                    x, y = pair_texts(b.original, apply_perturbation(b.original, single), single)
                    alone.append((len(first), x, y, len(b.original)))
            first.append(a)
            second.append(c)
            # A substitution is the original with words replaced: it is scored on the
            # original's key/value cache, from its first changed word on.
            substituted = p.order is None and bool(p.positions)
            anchors.append(a if substituted else None)
            words.append(len(b.original))
            changed.append(max(p.size, 1))
    if not first:
        empty = [np.zeros(0, dtype=np.float64) for _ in batches]
        return empty, [e.copy() for e in empty]
    increase = lm.bits_per_word(second, words, anchors=anchors) - lm.bits_per_word(first, words)
    n = np.asarray(words, dtype=np.float64)
    per_changed = increase * n / np.asarray(changed, dtype=np.float64)
    if alone:
        counts = [row[3] for row in alone]
        own = lm.bits_per_word(
            [row[2] for row in alone], counts, anchors=[row[1] for row in alone]
        ) - lm.bits_per_word([row[1] for row in alone], counts)
        for row, value in zip(alone, own * np.asarray(counts), strict=True):
            per_changed[row[0]] = max(per_changed[row[0]], float(value))
    out_word: list[NDArray[np.float64]] = []
    out_changed: list[NDArray[np.float64]] = []
    start = 0
    for b in batches:
        out_word.append(increase[start : start + len(b)].copy())
        out_changed.append(per_changed[start : start + len(b)].copy())
        start += len(b)
    return out_word, out_changed


def _single_words(p: Perturbation) -> list[Perturbation]:
    """Each word of substitution ``p`` alone, as a perturbation of its own."""
    return [
        Perturbation(
            p.sentence_id,
            p.method,
            (i,),
            (p.replacements[k],),
            (p.lemmas[k],) if p.lemmas else (),
        )
        for k, i in enumerate(p.positions)
    ]


def _parse(value: str | None) -> tuple[float, SurprisalUnit, float]:
    """A spec as (bound, its unit, bound per changed word beside it).

    ``None``/empty: both defaults; ``B``: B per word; ``C/changed``: C per changed word;
    ``B,C/changed``: both. :class:`ConfigError` when malformed.
    """
    if not value:
        return DEFAULT_MAX_SURPRISAL_INCREASE, "word", DEFAULT_MAX_PER_CHANGED
    parts = [p.strip() for p in value.split(",")]
    per_word = [p for p in parts if not p.endswith(PER_CHANGED)]
    per_changed = [p.removesuffix(PER_CHANGED) for p in parts if p.endswith(PER_CHANGED)]
    if len(per_word) > 1 or len(per_changed) > 1 or any(not p for p in parts):
        raise ConfigError(f"fluency: expected B, C/changed or B,C/changed (numbers), got {value!r}")
    bounds = []
    for text in (*per_word, *per_changed):
        if not text:
            raise ConfigError("fluency: expected B/changed with a number B")
        bound = spec_number(text, "fluency", DEFAULT_MAX_SURPRISAL_INCREASE)
        if bound == -math.inf:
            raise ConfigError(f"fluency: the bound must be a number above -inf, got {value!r}")
        bounds.append(bound)
    if per_word and per_changed:
        return bounds[0], "word", bounds[1]
    if per_changed:
        return bounds[0], "changed", math.inf
    return bounds[0], "word", math.inf


@CONSTRAINTS.register(
    "fluency",
    help="the causal LM's surprisal rises by at most B bits per word (fluency:B), C per "
    "changed word (fluency:C/changed), or both (fluency:B,C/changed; a bare fluency: "
    f"{DEFAULT_MAX_SURPRISAL_INCREASE:g},{DEFAULT_MAX_PER_CHANGED:g}/changed)",
)
@dataclass(frozen=True)
class FluencyConstraint(Constraint):
    """Increase of the causal LM's surprisal at most ``max_increase``.

    Attributes:
        max_increase: the largest increase kept, in bits per ``per`` (``inf``: only
            measure); its values are the ones reported.
        per: ``word`` divides by the sentence's words (the mean per-word surprisal),
            ``changed`` by the words the candidate changes.
        max_per_changed: with ``per="word"``, also the largest increase per changed
            word (``inf``: no such bound).
        model: the causal LM (``None``: the bundled SmolLM2).
        device: torch device (``None``: ``cuda`` when available, else ``cpu``).
        dtype: precision of the LM (``None``: float32).
    """

    max_increase: float = DEFAULT_MAX_SURPRISAL_INCREASE
    per: SurprisalUnit = "word"
    max_per_changed: float = DEFAULT_MAX_PER_CHANGED
    model: str | None = None
    device: str | None = None
    dtype: str | None = None

    spec_value: ClassVar[str] = (
        "largest surprisal increase in bits per word, B, per changed word, C/changed, or "
        f"both, B,C/changed (default {DEFAULT_MAX_SURPRISAL_INCREASE:g},"
        f"{DEFAULT_MAX_PER_CHANGED:g}/changed)"
    )

    @classmethod
    def from_spec(cls, value: str | None, context: ConstraintContext) -> FluencyConstraint:
        bound, per, changed = _parse(value)
        return cls(
            max_increase=bound,
            per=per,
            max_per_changed=changed,
            device=context.device,
            dtype=context.dtype,
        )

    @classmethod
    def check_spec(cls, value: str | None) -> None:
        _parse(value)

    def __post_init__(self) -> None:
        for bound in (self.max_increase, self.max_per_changed):
            if math.isnan(bound) or bound == -math.inf:
                raise ConfigError(f"{self.name}: bad bound {bound}")
        if self.per not in ("word", "changed"):
            raise ConfigError(f"{self.name}: per must be word or changed, got {self.per!r}")

    def describe(self) -> dict[str, object]:
        out: dict[str, object] = {
            "name": self.name,
            "max_increase": self.max_increase,
            "unit": "bits per word" if self.per == "word" else "bits per changed word",
        }
        if self._both:
            out["max_increase_per_changed_word"] = self.max_per_changed
        out["model"] = self.model or "smollm2"
        return out

    @property
    def _both(self) -> bool:
        """Whether a bound per changed word holds beside the one per word."""
        return self.per == "word" and self.max_per_changed != math.inf

    def check(self, batch: CandidateBatch) -> ConstraintResult:
        """Values: surprisal increase in bits per ``per``, float64 (m,); mask: within
        the bound (and, with ``max_per_changed``, within that bound per changed word)."""
        return self.check_many([batch])[0]

    def check_many(self, batches: Sequence[CandidateBatch]) -> list[ConstraintResult]:
        """:meth:`check` of several sentences' batches with one LM call."""
        per_word, per_changed = _increases(
            batches,
            singles=self.per == "changed" or self._both,
            model=self.model,
            device=self.device,
            dtype=self.dtype,
        )
        out = []
        for word, changed in zip(per_word, per_changed, strict=True):
            if not len(word):
                out.append(empty_result(self.name))
                continue
            values = changed if self.per == "changed" else word
            mask = values <= self.max_increase
            if self._both:
                mask &= changed <= self.max_per_changed
            out.append(ConstraintResult(self.name, mask, values))
        return out
