"""The constraint contract: candidate batches, results, specs and the registry.

Every constraint takes a whole :class:`CandidateBatch` (one original sentence and its
candidate perturbations, applied) and returns a :class:`ConstraintResult`: a boolean
mask of the candidates it keeps plus the value it measured for each one. One candidate
is a batch of one. :func:`check_batches` runs a list of constraints over the batches of
several sentences (one call per constraint) and gives each sentence's
:class:`ConstraintOutcome`: every result, the joint mask and how many candidates each
constraint rejected.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from brittle.engine.core.errors import ConfigError
from brittle.engine.core.perturbation import Perturbation, apply_perturbation
from brittle.engine.core.registry import Registry

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from brittle.engine.core.sentence import Sentence
    from brittle.scorers.parsers.base import Parse, Parser

__all__ = [
    "CONSTRAINTS",
    "CandidateBatch",
    "Constraint",
    "ConstraintContext",
    "ConstraintOutcome",
    "ConstraintResult",
    "ConstraintSpec",
    "build_constraints",
    "changed_words",
    "check_all",
    "check_batches",
    "empty_result",
    "parse_batches",
    "spec_number",
]


def changed_words(p: Perturbation) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Where the changed words are: (0-based index in the candidate, index in the original).

    A substitution changes its ``positions`` in place; a reordering changes every word
    that moved, found at ``j`` in the candidate and at ``order[j]`` in the original.
    """
    if p.order is None:
        return p.positions, p.positions
    moved = [(j, i) for j, i in enumerate(p.order) if i != j]
    return tuple(j for j, _ in moved), tuple(i for _, i in moved)


@dataclass(frozen=True)
class CandidateBatch:
    """One original sentence and m candidate perturbations of it, applied.

    Attributes:
        original: the unperturbed sentence.
        perturbations: m perturbations of ``original``.
        sentences: ``apply_perturbation(original, p)`` for each, same order.
    """

    original: Sentence
    perturbations: tuple[Perturbation, ...]
    sentences: tuple[Sentence, ...]

    @classmethod
    def build(cls, original: Sentence, perturbations: Sequence[Perturbation]) -> CandidateBatch:
        """Apply every perturbation to ``original``."""
        ps = tuple(perturbations)
        return cls(original, ps, tuple(apply_perturbation(original, p) for p in ps))

    def __len__(self) -> int:
        return len(self.perturbations)

    def subset(self, keep: NDArray[np.bool_] | Sequence[int]) -> CandidateBatch:
        """The candidates selected by a mask (m,) or a list of indices."""
        idx = np.flatnonzero(keep) if isinstance(keep, np.ndarray) else np.asarray(keep, int)
        return CandidateBatch(
            self.original,
            tuple(self.perturbations[int(i)] for i in idx),
            tuple(self.sentences[int(i)] for i in idx),
        )


@dataclass(frozen=True, eq=False)
class ConstraintResult:
    """What one constraint found on a batch of m candidates.

    Attributes:
        name: the constraint's registry name.
        mask: bool array (m,): candidates it keeps.
        values: float64 array (m,): the measured value (Hamming words, share of tags
            kept, normalised tree edit distance); NaN where it does not apply.
        enforced: ``False`` when the constraint only measures (its mask is all True).
    """

    name: str
    mask: NDArray[np.bool_]
    values: NDArray[np.float64]
    enforced: bool = True

    def __post_init__(self) -> None:
        if self.mask.shape != self.values.shape or self.mask.ndim != 1:
            raise ValueError(f"mask {self.mask.shape} and values {self.values.shape} differ")
        self.mask.setflags(write=False)
        self.values.setflags(write=False)

    @property
    def rejected(self) -> int:
        """How many candidates this constraint rejects (0 when it only measures)."""
        return int(self.mask.size - np.count_nonzero(self.mask))


@dataclass(frozen=True)
class ConstraintContext:
    """What a constraint named on the command line may be built from.

    Attributes:
        tau: the run's budget (most words changed).
        parser: the parser that re-parses candidates (built on demand, once, so a
            constraint list without a parser-based constraint loads no parser).
        max_syntax_distance: the threshold ``syntax`` takes when none is given.
        device: torch device of the model-based constraints (``fluency``,
            ``similarity``); ``None``: ``cuda`` when available, else ``cpu``.
        dtype: precision of the model-based constraints' models (``float32``,
            ``float16``, ``bfloat16``); ``None``: each model's own.
    """

    tau: int
    parser: Callable[[], Parser]
    max_syntax_distance: float = 0.2
    device: str | None = None
    dtype: str | None = None


class Constraint(ABC):
    """A filter over candidate batches: which candidates are admissible, and the value
    it measured on each.

    Subclasses register in :data:`CONSTRAINTS` and are built from a command-line
    spec ``NAME[:VALUE]`` by :meth:`from_spec`. ``cheap`` ones (no parser, no model)
    run before the expensive ones.
    """

    #: Registered name, the key of its values in reports; registering the class in
    #: :data:`CONSTRAINTS` sets it (a subclass leaves it unset).
    name: ClassVar[str] = ""
    #: Whether it is cheap to check (no parser, no model).
    cheap: ClassVar[bool] = False
    #: What ``VALUE`` means in ``NAME:VALUE`` (empty: the constraint takes none).
    spec_value: ClassVar[str] = ""

    @classmethod
    @abstractmethod
    def from_spec(cls, value: str | None, context: ConstraintContext) -> Constraint:
        """The constraint for ``NAME[:VALUE]``; :class:`ConfigError` for a bad value."""

    @classmethod
    def check_spec(cls, value: str | None) -> None:
        """Refuse (``ConfigError``) a ``VALUE`` that :meth:`from_spec` would refuse,
        building nothing (runs check specs before any model or parser loads)."""
        return None

    @abstractmethod
    def check(self, batch: CandidateBatch) -> ConstraintResult:
        """Mask and values for every candidate of ``batch``."""

    def check_many(self, batches: Sequence[CandidateBatch]) -> list[ConstraintResult]:
        """:meth:`check` of several sentences' batches (parsing constraints make one
        parser call for all of them)."""
        return [self.check(b) for b in batches]

    @abstractmethod
    def describe(self) -> dict[str, object]:
        """The constraint's name and settings, for reports."""


#: Constraints by name (classes; :func:`build_constraints` turns specs into instances).
CONSTRAINTS: Registry[type[Constraint]] = Registry(
    "constraints",
    contract=Constraint,
    packages=("brittle.search.constraints",),
    name_attr="name",
)


@dataclass(frozen=True)
class ConstraintSpec:
    """``NAME[:VALUE]`` as given to ``--constraint``."""

    name: str
    value: str | None = None

    @classmethod
    def parse(cls, text: str) -> ConstraintSpec:
        """``syntax:0.2`` -> ``ConstraintSpec("syntax", "0.2")``; the name is checked."""
        name, sep, value = text.strip().partition(":")
        if not name:
            raise ConfigError(f"constraint {text!r}: expected NAME or NAME:VALUE")
        spec = cls(name, value if sep else None)
        CONSTRAINTS.get(name).check_spec(spec.value)
        return spec

    def __str__(self) -> str:
        return self.name if self.value is None else f"{self.name}:{self.value}"


def build_constraints(
    specs: Sequence[str | ConstraintSpec], context: ConstraintContext
) -> list[Constraint]:
    """The constraints named by ``specs``, cheap ones first (otherwise in the order given)."""
    parsed = [s if isinstance(s, ConstraintSpec) else ConstraintSpec.parse(s) for s in specs]
    names = [s.name for s in parsed]
    if len(set(names)) != len(names):
        raise ConfigError(f"a constraint is named twice: {', '.join(names)}")
    built = [CONSTRAINTS.get(s.name).from_spec(s.value, context) for s in parsed]
    return sorted(built, key=lambda c: not c.cheap)


def spec_number(value: str | None, what: str, default: float) -> float:
    """The number ``VALUE`` of a spec (``default`` when none is given).

    Raises:
        ConfigError: ``VALUE`` is not a number, or is NaN.
    """
    if value is None or value == "":
        return default
    try:
        number = float(value)
    except ValueError:
        raise ConfigError(f"{what}: expected a number, got {value!r}") from None
    if math.isnan(number):
        raise ConfigError(f"{what}: expected a number, got {value!r}")
    return number


def empty_result(name: str, *, enforced: bool = True) -> ConstraintResult:
    """The result of a constraint on a batch of no candidates."""
    return ConstraintResult(
        name, np.zeros(0, dtype=bool), np.zeros(0, dtype=np.float64), enforced=enforced
    )


def parse_batches(
    parser: Parser, batches: Sequence[CandidateBatch]
) -> list[tuple[Parse, Sequence[Parse]] | None]:
    """The parses of every batch with one parser call: per batch, the parse of its
    original and those of its candidates (in order), or ``None`` for an empty batch."""
    sentences = [s for b in batches if len(b) for s in (b.original, *b.sentences)]
    parses = parser.parse(sentences) if sentences else []
    out: list[tuple[Parse, Sequence[Parse]] | None] = []
    start = 0
    for b in batches:
        if len(b) == 0:
            out.append(None)
            continue
        out.append((parses[start], parses[start + 1 : start + 1 + len(b)]))
        start += 1 + len(b)
    return out


@dataclass(frozen=True, eq=False)
class ConstraintOutcome:
    """Every constraint's result on one batch, and their conjunction.

    Attributes:
        results: one result per constraint, in the order given.
        mask: bool array (m,): candidates every enforced constraint keeps.
    """

    results: tuple[ConstraintResult, ...]
    mask: NDArray[np.bool_]

    def values(self, name: str) -> NDArray[np.float64] | None:
        """The values measured by the constraint called ``name`` (None if absent)."""
        for r in self.results:
            if r.name == name:
                return r.values
        return None

    def rejected(self) -> dict[str, int]:
        """How many candidates each constraint rejected, by name, in the order given.

        When every constraint judged every candidate (:func:`check_batches`' default), a
        candidate two constraints reject counts for both; when each judged only what the
        ones before it admitted (``every=False``), a candidate counts for the first
        constraint that rejected it. Constraints that only measure reject none.
        """
        return {r.name: r.rejected for r in self.results}


def check_batches(
    batches: Sequence[CandidateBatch],
    constraints: Sequence[Constraint],
    *,
    every: bool = True,
) -> list[ConstraintOutcome]:
    """The constraints on the batches of several sentences, one
    :meth:`Constraint.check_many` call per constraint; one outcome per batch.

    Cheap constraints should come first in ``constraints``. With ``every`` each
    constraint measures every candidate, so reports can describe rejected candidates
    too; without it, each measures only the candidates every constraint before it
    admitted (a search needs no more: the conjunction is the same), and the others get
    its value NaN and pass its mask, so that :meth:`ConstraintOutcome.rejected` counts
    each candidate for the first constraint that rejected it. A constraint none of
    whose candidates are left is not called.
    """
    masks = [np.ones(len(b), dtype=bool) for b in batches]
    results: list[list[ConstraintResult]] = [[] for _ in batches]
    for c in constraints:
        if every:
            found = _checked(c, batches)
        else:
            left = [np.flatnonzero(m) for m in masks]
            if any(len(k) for k in left):
                measured = _checked(c, [b.subset(m) for b, m in zip(batches, masks, strict=True)])
            else:
                measured = [empty_result(c.name) for _ in batches]
            found = [_spread(r, k, len(b)) for r, k, b in zip(measured, left, batches, strict=True)]
        for k, r in enumerate(found):
            results[k].append(r)
            masks[k] &= r.mask
    for mask in masks:
        mask.setflags(write=False)
    return [ConstraintOutcome(tuple(rs), mask) for rs, mask in zip(results, masks, strict=True)]


def _checked(c: Constraint, batches: Sequence[CandidateBatch]) -> list[ConstraintResult]:
    """``c.check_many(batches)``, its results checked against the batches' sizes."""
    found = c.check_many(batches)
    if len(found) != len(batches):
        raise RuntimeError(
            f"constraint {c.name} returned {len(found)} results for {len(batches)} batches"
        )
    for batch, r in zip(batches, found, strict=True):
        if r.mask.shape != (len(batch),):
            raise RuntimeError(
                f"constraint {c.name} returned {r.mask.shape} for {len(batch)} candidates"
            )
    return found


def _spread(result: ConstraintResult, at: NDArray[np.intp], size: int) -> ConstraintResult:
    """``result``, measured on the candidates ``at`` of a batch of ``size``, as a result
    on the whole batch: the others NaN, admitted."""
    mask = np.ones(size, dtype=bool)
    values = np.full(size, np.nan, dtype=np.float64)
    mask[at] = result.mask
    values[at] = result.values
    return ConstraintResult(result.name, mask, values, enforced=result.enforced)


def check_all(batch: CandidateBatch, constraints: Sequence[Constraint]) -> ConstraintOutcome:
    """:func:`check_batches` of one batch: every constraint on every candidate, masks
    ANDed."""
    return check_batches([batch], constraints)[0]
