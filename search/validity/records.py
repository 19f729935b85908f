"""Immutable records of a grade: the changed words, each check's evidence, the verdicts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["LEVELS", "ChangedWord", "Check", "Grade", "Level", "Value"]

#: The three validity levels, each stricter than the last.
Level = Literal["tree", "grammatical", "meaning"]
LEVELS: tuple[Level, ...] = ("tree", "grammatical", "meaning")

#: What a check measured: a number, a word, a list of them, or nothing.
Value = float | int | str | bool | tuple[float | int | str | None, ...] | None


@dataclass(frozen=True)
class ChangedWord:
    """One substituted word.

    Attributes:
        index: 0-based position in the sentence (the CoNLL-U ID is ``index + 1``).
        original: the original FORM.
        new: the perturbed FORM.
        new_lemma: the perturbed LEMMA (``_`` when the file gives none).
    """

    index: int
    original: str
    new: str
    new_lemma: str = "_"

    def to_json(self) -> dict[str, object]:
        """JSON-ready mapping (``position`` is the 1-based CoNLL-U ID)."""
        return {"position": self.index + 1, "original": self.original, "new": self.new}


@dataclass(frozen=True)
class Check:
    """The evidence of one check of one grade.

    Attributes:
        name: the check (``retag``, ``attachment``, ``closed-class``, ``surprisal``...).
        level: the validity level it decides.
        measured: what it measured, in words (with the unit).
        value: the measurement.
        threshold: the bound it is compared with (``None``: a yes/no check).
        passed: ``True`` passed, ``False`` failed, ``None`` unknown (the evidence cannot
            decide, e.g. the parser already errs on the original there); unknown does
            not fail a level.
        failed: which part failed and why (``None`` unless ``passed`` is ``False``).
    """

    name: str
    level: Level
    measured: str
    value: Value
    threshold: Value = None
    passed: bool | None = True
    failed: str | None = None

    @classmethod
    def of_slots(
        cls, name: str, level: Level, measured: str, checked: Sequence[str], bad: Sequence[str]
    ) -> Check:
        """A check of slots: its value the slots ``checked``, failed when any is ``bad``
        (the reasons joined), unknown when no slot was checked."""
        return cls(
            name=name,
            level=level,
            measured=measured,
            value=tuple(checked),
            passed=None if not checked else not bad,
            failed=None if not bad else "; ".join(bad),
        )

    def to_json(self) -> dict[str, object]:
        """JSON-ready mapping (floats rounded to 4 digits)."""
        return {
            "level": self.level,
            "measured": self.measured,
            "value": _rounded(self.value),
            "threshold": _rounded(self.threshold),
            "passed": self.passed,
            "failed": self.failed,
        }


def _rounded(value: Value) -> object:
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, tuple):
        return [round(v, 4) if isinstance(v, float) else v for v in value]
    return value


@dataclass(frozen=True)
class Grade:
    """The validity of one perturbed sentence against its original.

    Attributes:
        sent_id: the sentence.
        method: the perturbation method (MISC ``Perturbation=``; ``unknown`` without one).
        changed: the substituted words, in sentence order.
        checks: the evidence, in the order the levels are decided.
        graded: whether the pair could be graded (``False``: see ``reason``).
        reason: why it was not graded (``None`` when graded).
    """

    sent_id: str
    method: str
    changed: tuple[ChangedWord, ...]
    checks: tuple[Check, ...] = ()
    graded: bool = True
    reason: str | None = None

    def _level_holds(self, level: Level) -> bool | None:
        if not self.graded:
            return None
        upto = LEVELS[: LEVELS.index(level) + 1]
        return all(c.passed is not False for c in self.checks if c.level in upto)

    @property
    def tree_valid(self) -> bool | None:
        """No tree check failed (``None``: not graded)."""
        return self._level_holds("tree")

    @property
    def grammatical(self) -> bool | None:
        """Tree-valid and no grammar check failed (``None``: not graded)."""
        return self._level_holds("grammatical")

    @property
    def meaning_kept(self) -> bool | None:
        """Grammatical and no meaning check failed (``None``: not graded)."""
        return self._level_holds("meaning")

    def level(self, level: Level) -> bool | None:
        """Whether the pair is valid at ``level`` (``None``: not graded)."""
        return self._level_holds(level)

    def failed_checks(self) -> tuple[str, ...]:
        """The names of the checks that failed, in order."""
        return tuple(c.name for c in self.checks if c.passed is False)

    def to_json(self) -> dict[str, object]:
        """One JSON Lines record: verdicts, changed words and the evidence per check."""
        data: dict[str, object] = {
            "sent_id": self.sent_id,
            "method": self.method,
            "graded": self.graded,
            "tree_valid": self.tree_valid,
            "grammatical": self.grammatical,
            "meaning_kept": self.meaning_kept,
            "changed": [w.to_json() for w in self.changed],
        }
        if not self.graded:
            data["reason"] = self.reason
        data["failed"] = list(self.failed_checks())
        data["evidence"] = {c.name: c.to_json() for c in self.checks}
        return data
