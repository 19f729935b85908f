"""``brittle grade``: the validity of a perturbed CoNLL-U file against its original.

:func:`grade_files` reads the two files, pairs every sentence of the perturbed file with
the original of the same ``sent_id``, grades the pairs that change a word
(:mod:`brittle.search.validity`, in batches) and returns a :class:`GradingRun`:
one :class:`~brittle.search.validity.Grade` per changed sentence, in file order, and a
:class:`GradeSummary` (the share valid per level, per method named in MISC).
:func:`write_grades` writes the grades as JSON Lines, atomically.

Input mistakes are :class:`~brittle.engine.core.errors.BrittleInputError` naming the file
and line: a file that is not CoNLL-U, a perturbed sentence without ``# sent_id`` or
whose id the original lacks, and one whose word count differs from the original's
(unless ``skip_mismatched``, which reports it as not graded, for sets made elsewhere). A
reordered sentence is reported as not graded, with the reason.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass

from brittle.engine.core.atomic import atomic_write
from brittle.engine.core.conllu import iter_conllu
from brittle.engine.core.errors import BrittleInputError
from brittle.engine.core.sentence import Sentence
from brittle.search.validity import LEVELS, Grade, Grader
from brittle.search.validity.grade import changed_words_of

__all__ = [
    "GradeSummary",
    "GradingRun",
    "MethodSummary",
    "grade_files",
    "read_pairs",
    "summarize_grades",
    "write_grades",
]


@dataclass(frozen=True)
class MethodSummary:
    """The grades of one method (or of all, ``method="all"``).

    Attributes:
        method: the ``Perturbation=`` method.
        graded: changed sentences graded.
        not_graded: sentences that could not be graded (reordered, other word count).
        valid: per level (``tree``, ``grammatical``, ``meaning``), graded sentences
            valid at that level.
    """

    method: str
    graded: int
    not_graded: int
    valid: tuple[tuple[str, int], ...]

    def share(self, level: str) -> float | None:
        """Share of the graded sentences valid at ``level`` (``None``: none graded)."""
        if not self.graded:
            return None
        return dict(self.valid)[level] / self.graded

    def to_json(self) -> dict[str, object]:
        """JSON-ready mapping with counts and shares."""
        share = {level: self.share(level) for level, _ in self.valid}
        return {
            "method": self.method,
            "graded": self.graded,
            "not_graded": self.not_graded,
            "valid": dict(self.valid),
            "share_valid": {k: None if v is None else round(v, 4) for k, v in share.items()},
        }


@dataclass(frozen=True)
class GradeSummary:
    """Per method, then over all of them; and the sentences left unchanged."""

    methods: tuple[MethodSummary, ...]
    overall: MethodSummary
    unchanged: int

    def to_json(self) -> dict[str, object]:
        """JSON-ready mapping."""
        return {
            "unchanged": self.unchanged,
            "overall": self.overall.to_json(),
            "methods": [m.to_json() for m in self.methods],
        }


def summarize_grades(grades: Sequence[Grade], *, unchanged: int = 0) -> GradeSummary:
    """Count the graded, ungraded and valid sentences per method and overall."""

    def one(method: str, group: Sequence[Grade]) -> MethodSummary:
        graded = [g for g in group if g.graded]
        valid = tuple((level, sum(bool(g.level(level)) for g in graded)) for level in LEVELS)
        return MethodSummary(method, len(graded), len(group) - len(graded), valid)

    methods = sorted({g.method for g in grades})
    return GradeSummary(
        methods=tuple(one(m, [g for g in grades if g.method == m]) for m in methods),
        overall=one("all", grades),
        unchanged=unchanged,
    )


@dataclass(frozen=True)
class GradingRun:
    """What ``brittle grade`` found.

    Attributes:
        original, perturbed: the two files.
        grades: one per changed (or ungradable) sentence of the perturbed file, in order.
        summary: the counts and shares.
        grader: the parser and models used.
        timings: seconds per stage (``parse``, ``lm``, ``encoder``, ``checks``, ``load``).
    """

    original: str
    perturbed: str
    grades: tuple[Grade, ...]
    summary: GradeSummary
    grader: dict[str, object]
    timings: dict[str, float]


def read_pairs(
    original_path: str | os.PathLike[str],
    perturbed_path: str | os.PathLike[str],
    *,
    skip_mismatched: bool = False,
) -> list[tuple[Sentence, Sentence]]:
    """Every sentence of the perturbed file with the original of the same ``sent_id``.

    Raises:
        BrittleInputError: a file is not valid CoNLL-U; a perturbed sentence has no
            ``# sent_id``, an id the original lacks, or (unless ``skip_mismatched``)
            another number of words than its original.
    """
    by_id = {s.sent_id: s for s in iter_conllu(original_path)}
    shown = os.fspath(perturbed_path)
    pairs: list[tuple[Sentence, Sentence]] = []
    for sentence in iter_conllu(perturbed_path):
        where = sentence.line or None
        if "sent_id" not in sentence.metadata:
            raise BrittleInputError(
                shown, where, "sentence has no '# sent_id': it cannot be paired with an original"
            )
        original = by_id.get(sentence.sent_id)
        if original is None:
            raise BrittleInputError(
                shown,
                where,
                f"sentence {sentence.sent_id!r} is not in {os.fspath(original_path)}",
            )
        if len(original) != len(sentence) and not skip_mismatched:
            raise BrittleInputError(
                shown,
                where,
                f"sentence {sentence.sent_id!r} has {len(sentence)} words but the original "
                f"has {len(original)} (--skip-mismatched reports such sentences as not graded)",
            )
        pairs.append((original, sentence))
    return pairs


def grade_files(
    original_path: str | os.PathLike[str],
    perturbed_path: str | os.PathLike[str],
    *,
    grader: Grader | None = None,
    batch_size: int = 256,
    skip_mismatched: bool = False,
) -> GradingRun:
    """Grade every changed sentence of ``perturbed_path`` against ``original_path``.

    Args:
        original_path: the treebank with the gold trees.
        perturbed_path: the perturbed sentences (as ``brittle perturb`` writes them, or
            made elsewhere with the same ``sent_id``s).
        grader: the judges' parser and models (default: spaCy, SmolLM2, MiniLM).
        batch_size: pairs graded at once (one parser, LM and encoder call each).
        skip_mismatched: report sentences with another word count as not graded instead
            of refusing the file.

    Raises:
        BrittleInputError: see :func:`read_pairs`.
    """
    grader = grader or Grader()
    pairs = read_pairs(original_path, perturbed_path, skip_mismatched=skip_mismatched)
    kept: list[tuple[Sentence, Sentence]] = []
    unchanged = 0
    for original, perturbed in pairs:
        diff = changed_words_of(original, perturbed)
        if isinstance(diff, tuple) and not diff:
            unchanged += 1
        else:
            kept.append((original, perturbed))
    grades: list[Grade] = []
    for start in range(0, len(kept), batch_size):
        chunk = kept[start : start + batch_size]
        grades.extend(grader.grade([o for o, _ in chunk], [p for _, p in chunk]))
    return GradingRun(
        original=os.fspath(original_path),
        perturbed=os.fspath(perturbed_path),
        grades=tuple(grades),
        summary=summarize_grades(grades, unchanged=unchanged),
        grader=grader.describe(),
        timings=dict(grader.timings),
    )


def write_grades(grades: Sequence[Grade], path: str | os.PathLike[str]) -> None:
    """One JSON object per grade and line (JSON Lines), written atomically (``-``:
    standard output)."""
    with atomic_write(path) as handle:
        for grade in grades:
            handle.write(json.dumps(grade.to_json(), ensure_ascii=False) + "\n")
