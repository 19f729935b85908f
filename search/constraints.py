"""Constraints: which candidate perturbations of one sentence are admissible.

Every constraint takes a whole :class:`CandidateBatch` (one original sentence and its
candidate perturbations, applied) and returns a :class:`ConstraintResult`: a boolean
mask of the candidates it keeps plus the value it measured for each one. One candidate
is a batch of one.

- ``budget`` (cheap): at most ``tau`` words changed, measured as the Hamming distance
  between the original and the candidate FORM sequences. Generators also use ``tau``
  to draw at most that many positions, so this mostly guards and reports.
- ``pos`` (needs a parser): the parser's UPOS of every changed word in the candidate
  equals the original UPOS of that word (gold column, or the parser's tag on the
  original); the value is the share of changed words that keep their tag. Always
  measured; it only rejects when ``enforce`` is on.
- ``syntax`` (expensive, needs a parser): the normalised tree edit distance between
  the parse of the original and the parse of the candidate is at most a threshold.
  The original and all candidates go to the parser in one batch; its cache keeps them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

import numpy as np

from brittle.engine.core.errors import ConfigError
from brittle.engine.core.perturbation import Perturbation, apply_perturbation
from brittle.engine.core.registry import Registry
from brittle.scorers.distance import normalized_tree_edit_distance_batch
from brittle.scorers.hamming import hamming_batch

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from brittle.engine.core.sentence import Sentence
    from brittle.scorers.parsers.base import Parse, Parser

__all__ = [
    "CONSTRAINTS",
    "BudgetConstraint",
    "CandidateBatch",
    "Constraint",
    "ConstraintContext",
    "ConstraintOutcome",
    "ConstraintResult",
    "ConstraintSpec",
    "PosConstraint",
    "SyntaxConstraint",
    "TreeLabels",
    "build_constraints",
    "changed_words",
    "check_all",
]

TreeLabels = Literal["none", "deprel", "upos"]
PosReference = Literal["gold", "parsed"]


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


@dataclass(frozen=True)
class ConstraintContext:
    """What a constraint named on the command line may be built from.

    Attributes:
        tau: the run's budget (most words changed).
        parser: the parser that re-parses candidates (built on demand, once, so a
            constraint list without a parser-based constraint loads no parser).
        max_syntax_distance: the threshold ``syntax`` takes when none is given.
    """

    tau: int
    parser: Callable[[], Parser]
    max_syntax_distance: float = 0.2


class Constraint(ABC):
    """A filter over candidate batches: which candidates are admissible, and the value
    it measured on each.

    Subclasses register in :data:`CONSTRAINTS` and are built from a command-line
    spec ``NAME[:VALUE]`` by :meth:`from_spec`. ``cheap`` ones (no parser, no model)
    run before the expensive ones.
    """

    #: Registered name, the key of its values in reports.
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
    "constraints", contract=Constraint, packages=("brittle.search.constraints",)
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


def _number(value: str | None, what: str, default: float) -> float:
    if value is None or value == "":
        return default
    try:
        return float(value)
    except ValueError:
        raise ConfigError(f"{what}: expected a number, got {value!r}") from None


@CONSTRAINTS.register(
    "budget", help="at most tau words changed (Hamming <= tau); budget:K sets tau"
)
@dataclass(frozen=True)
class BudgetConstraint(Constraint):
    """Hamming distance between FORM sequences at most ``tau`` (cheap; no parser).

    Attributes:
        tau: the most words a candidate may change (>= 0).
    """

    name: ClassVar[str] = "budget"
    cheap: ClassVar[bool] = True
    spec_value: ClassVar[str] = "most words changed (default: the run's budget)"

    tau: int

    def __post_init__(self) -> None:
        if self.tau < 0:
            raise ConfigError(f"budget tau must be >= 0, got {self.tau}")

    @classmethod
    def from_spec(cls, value: str | None, context: ConstraintContext) -> BudgetConstraint:
        cls.check_spec(value)
        return cls(int(_number(value, "budget", context.tau)))

    @classmethod
    def check_spec(cls, value: str | None) -> None:
        tau = _number(value, "budget", 0)
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
            return _empty(self.name)
        d = hamming_batch(batch.original.forms, [s.forms for s in batch.sentences])
        values = d.astype(np.float64)
        return ConstraintResult(self.name, values <= self.tau, values)


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

    name: ClassVar[str] = "pos"
    spec_value: ClassVar[str] = "least share of changed words keeping their tag (enforced)"

    @classmethod
    def from_spec(cls, value: str | None, context: ConstraintContext) -> PosConstraint:
        cls.check_spec(value)
        if value is None:
            return cls(context.parser())
        return cls(context.parser(), min_rate=_number(value, "pos", 1.0), enforce=True)

    @classmethod
    def check_spec(cls, value: str | None) -> None:
        rate = _number(value, "pos", 1.0)
        if not 0.0 <= rate <= 1.0:
            raise ConfigError(f"pos min_rate must lie in [0, 1], got {rate}")

    def __post_init__(self) -> None:
        if self.reference not in ("gold", "parsed"):
            raise ConfigError(f"pos reference must be gold or parsed, got {self.reference!r}")
        if not 0.0 <= self.min_rate <= 1.0:
            raise ConfigError(f"pos min_rate must lie in [0, 1], got {self.min_rate}")

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
        if len(batch) == 0:
            return _empty(self.name, enforced=self.enforce)
        parses = self.parser.parse([batch.original, *batch.sentences])
        reference = batch.original.upos if self.reference == "gold" else parses[0].upos
        values = np.array(
            [
                pos_agreement(reference, parse, p)
                for parse, p in zip(parses[1:], batch.perturbations, strict=True)
            ],
            dtype=np.float64,
        )
        if self.enforce:
            mask = np.isnan(values) | (values >= self.min_rate)
        else:
            mask = np.ones(len(values), dtype=bool)
        return ConstraintResult(self.name, mask, values, enforced=self.enforce)


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
        limit = _number(value, "syntax", context.max_syntax_distance)
        return cls(context.parser(), max_distance=limit)

    @classmethod
    def check_spec(cls, value: str | None) -> None:
        limit = _number(value, "syntax", 0.0)
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
                out.append(_empty(self.name))
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


def _empty(name: str, *, enforced: bool = True) -> ConstraintResult:
    return ConstraintResult(
        name, np.zeros(0, dtype=bool), np.zeros(0, dtype=np.float64), enforced=enforced
    )


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


def check_all(batch: CandidateBatch, constraints: Sequence[Constraint]) -> ConstraintOutcome:
    """Run every constraint on the whole batch (values for all candidates) and AND masks.

    Cheap constraints should come first in ``constraints``; every constraint still
    measures every candidate, so reports can describe rejected candidates too.
    """
    m = len(batch)
    mask = np.ones(m, dtype=bool)
    results = []
    for c in constraints:
        r = c.check(batch)
        if r.mask.shape != (m,):
            raise RuntimeError(f"constraint {c.name} returned {r.mask.shape} for {m} candidates")
        results.append(r)
        mask &= r.mask
    mask.setflags(write=False)
    return ConstraintOutcome(tuple(results), mask)
