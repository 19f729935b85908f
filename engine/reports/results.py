"""The attack's result rows: one typed record per sentence, one schema to write and read.

``results.jsonl`` holds one JSON object per attacked sentence, in treebank order, with
sorted keys. :class:`ResultRow` is the only thing that writes a line
(:meth:`ResultRow.to_line`) and the only thing a line is read back into
(:func:`read_rows`), so the attack, ``brittle report`` and the digests agree on every
field.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brittle.engine.core.errors import BrittleInputError
from brittle.engine.core.json_types import JSONObject, JSONValue
from brittle.engine.core.perturbation import Perturbation
from brittle.engine.core.sentence import Sentence

if TYPE_CHECKING:
    from brittle.search.validity.records import Grade

__all__ = [
    "RESULTS",
    "ResultRow",
    "RowValidity",
    "TaskScores",
    "iter_result_lines",
    "read_rows",
    "repair_results",
    "with_validity",
]

#: File name of the rows inside an attack's output directory.
RESULTS = "results.jsonl"


@dataclass(frozen=True, slots=True)
class TaskScores:
    """One probing task's metric on the clean and on the perturbed sentence.

    ``drop`` is ``clean - perturbed`` (positive: the perturbation hurt the probe).
    ``worst`` is the largest drop of this task alone over every feasible candidate the
    search scored, when the search checked every candidate (``sample`` with
    ``check_all``): La Malfa et al.'s Algorithm 1 run per task on the same candidates
    (0 when no candidate was feasible: the sentence is kept). ``best`` is the smallest
    drop over the same candidates; its negative is the largest gain, the null a worst
    drop is read against (if the changes did nothing to the task on average, the
    largest drop and the largest gain among the same draws would be alike). ``None``
    otherwise (and not written).
    """

    clean: float | None
    perturbed: float | None
    drop: float | None
    worst: float | None = None
    best: float | None = None

    def to_json(self) -> JSONObject:
        data: JSONObject = {"clean": self.clean, "perturbed": self.perturbed, "drop": self.drop}
        if self.worst is not None:
            data["worst"] = self.worst
        if self.best is not None:
            data["best"] = self.best
        return data


@dataclass(frozen=True, slots=True)
class ResultRow:
    """What the attack found for one sentence (see docs/attack.md, "Output files").

    Word positions are 0-based. ``seconds`` is the only field that differs between two
    runs with the same seed. ``dnd`` and ``idc`` (Clouatre et al.'s displacement
    scores of the word order, 0 = unchanged) are set for reorderings only, and only
    then written.

    The optional fields are written only when set, and rows without them (older
    files) read back with ``None``:

    - ``rejected``: per constraint, how many candidates it rejected during the search
      (each for the first constraint that rejected it: the later ones do not judge it);
    - ``surprisal_increase`` (bits per word), ``similarity`` (MiniLM cosine) and
      ``retag`` (share of changed words the parser tags with their gold UPOS): the
      quality of the kept perturbation (:mod:`brittle.search.quality`);
    - ``predictions``: per probe (keyed by its column prefix), what it predicts on the
      clean and on the perturbed sentence, ``{"clean": ..., "perturbed": ...}``
      (``perturbed`` left out when no word changed), in the compact form of
      :mod:`brittle.engine.reports.predictions`; the HTML report draws them;
    - ``time_budget_hit``: with ``--time-budget``, whether the search stopped scoring
      because the sentence's time had run out (its drop is then a lower bound);
    - ``anytime``: with ``--anytime``, ``[queries, seconds, damage]`` each time the search
      admitted a candidate more damaging than every one before (queries so far, seconds
      since the sentence's search began, the objective's drop): how the best drop grew.
    """

    index: int
    sent_id: str
    success: bool
    method: str
    positions: tuple[int, ...]
    original_words: tuple[str, ...]
    perturbed_words: tuple[str, ...]
    lemmas: tuple[str, ...]
    order: tuple[int, ...] | None
    words: tuple[str, ...]
    perturbed: tuple[str, ...]
    tasks: Mapping[str, TaskScores]
    damage: float
    syntax_distance: float | None
    hamming: int
    eligible_positions: int
    queries: int
    evaluated: int
    syntax_checked: int
    epsilon_l2: float | None
    epsilon_cosine: float | None
    seconds: float
    dnd: float | None = None
    idc: float | None = None
    rejected: Mapping[str, int] | None = None
    surprisal_increase: float | None = None
    similarity: float | None = None
    retag: float | None = None
    predictions: Mapping[str, JSONValue] | None = None
    validity: RowValidity | None = None
    time_budget_hit: bool | None = None
    anytime: tuple[tuple[int, float, float], ...] | None = None

    @property
    def nothing_eligible(self) -> bool:
        """Whether the sentence offered nothing to perturb: no eligible position and no
        candidate evaluated (reorderings record no positions, so a reordering counts
        here only when no reordering of it was drawn either)."""
        return self.eligible_positions == 0 and self.evaluated == 0

    @property
    def perturbation(self) -> Perturbation:
        """The perturbation the row records (the identity when nothing was found)."""
        return Perturbation(
            self.sent_id,
            self.method,
            positions=self.positions,
            replacements=self.perturbed_words,
            lemmas=self.lemmas,
            order=self.order,
        )

    def to_json(self) -> JSONObject:
        """The row as a JSON-ready mapping (tuples as lists)."""
        data: JSONObject = {
            "index": self.index,
            "sent_id": self.sent_id,
            "success": self.success,
            "method": self.method,
            "positions": list(self.positions),
            "original_words": list(self.original_words),
            "perturbed_words": list(self.perturbed_words),
            "lemmas": list(self.lemmas),
            "order": None if self.order is None else list(self.order),
            "words": list(self.words),
            "perturbed": list(self.perturbed),
            "tasks": {t: s.to_json() for t, s in self.tasks.items()},
            "damage": self.damage,
            "syntax_distance": self.syntax_distance,
            "hamming": self.hamming,
            "eligible_positions": self.eligible_positions,
            "queries": self.queries,
            "evaluated": self.evaluated,
            "syntax_checked": self.syntax_checked,
            "epsilon_l2": self.epsilon_l2,
            "epsilon_cosine": self.epsilon_cosine,
            "seconds": self.seconds,
        }
        if self.dnd is not None:
            data["dnd"], data["idc"] = self.dnd, self.idc
        if self.rejected is not None:
            data["rejected"] = dict(self.rejected)
        quality = {
            "surprisal_increase": self.surprisal_increase,
            "similarity": self.similarity,
            "retag": self.retag,
        }
        data.update({k: v for k, v in quality.items() if v is not None})
        if self.predictions is not None:
            data["predictions"] = dict(self.predictions)
        if self.validity is not None:
            data["validity"] = self.validity.to_json()
        if self.time_budget_hit is not None:
            data["time_budget_hit"] = self.time_budget_hit
        if self.anytime is not None:
            data["anytime"] = [list(step) for step in self.anytime]
        return data

    def to_line(self) -> bytes:
        """The row as one ``results.jsonl`` line (sorted keys, UTF-8, final newline)."""
        return (json.dumps(self.to_json(), sort_keys=True, ensure_ascii=False) + "\n").encode()

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ResultRow:  # Any: decoded JSON
        """The row of a decoded line.

        Raises:
            KeyError: naming the first missing field; ValueError/TypeError: a field of
                the wrong kind (:func:`read_rows` turns both into a line error).
        """
        missing = [f for f in cls.__slots__ if f not in data and f not in _OPTIONAL]
        if missing:
            raise KeyError(", ".join(missing))
        order = data["order"]
        return cls(
            index=int(data["index"]),
            sent_id=str(data["sent_id"]),
            success=bool(data["success"]),
            method=str(data["method"]),
            positions=tuple(int(p) for p in data["positions"]),
            original_words=tuple(data["original_words"]),
            perturbed_words=tuple(data["perturbed_words"]),
            lemmas=tuple(data["lemmas"]),
            order=None if order is None else tuple(int(i) for i in order),
            words=tuple(data["words"]),
            perturbed=tuple(data["perturbed"]),
            tasks={
                str(t): TaskScores(
                    v["clean"],
                    v["perturbed"],
                    v["drop"],
                    _optional_float(v.get("worst")),
                    _optional_float(v.get("best")),
                )
                for t, v in data["tasks"].items()
            },
            damage=_finite(data["damage"], "damage"),
            syntax_distance=data["syntax_distance"],
            hamming=int(data["hamming"]),
            eligible_positions=int(data["eligible_positions"]),
            queries=int(data["queries"]),
            evaluated=int(data["evaluated"]),
            syntax_checked=int(data["syntax_checked"]),
            epsilon_l2=data["epsilon_l2"],
            epsilon_cosine=data["epsilon_cosine"],
            seconds=_finite(data["seconds"], "seconds"),
            dnd=_optional_float(data.get("dnd")),
            idc=_optional_float(data.get("idc")),
            rejected=_optional_counts(data.get("rejected")),
            surprisal_increase=_optional_float(data.get("surprisal_increase")),
            similarity=_optional_float(data.get("similarity")),
            retag=_optional_float(data.get("retag")),
            predictions=_optional_predictions(data.get("predictions")),
            validity=RowValidity.from_json(data.get("validity")),
            time_budget_hit=(
                None if data.get("time_budget_hit") is None else bool(data["time_budget_hit"])
            ),
            anytime=(
                None
                if data.get("anytime") is None
                else tuple((int(q), float(t), float(d)) for q, t, d in data["anytime"])
            ),
        )


#: Fields a row may lack (written only when set; older files have none of them).
_OPTIONAL = frozenset(
    {
        "dnd",
        "idc",
        "rejected",
        "surprisal_increase",
        "similarity",
        "retag",
        "predictions",
        "validity",
        "time_budget_hit",
        "anytime",
    }
)


@dataclass(frozen=True, slots=True)
class RowValidity:
    """How valid a kept perturbation is, as brittle's judges graded it
    (:mod:`brittle.search.validity`).

    Attributes:
        tree_valid: the gold tree is still the right analysis (``None``: not graded).
        grammatical: tree-valid and good English (``None``: not graded).
        meaning_kept: grammatical and the meaning kept (``None``: not graded).
        failed: the names of the checks that failed, in order.
    """

    tree_valid: bool | None
    grammatical: bool | None
    meaning_kept: bool | None
    failed: tuple[str, ...] = ()

    @property
    def level(self) -> str:
        """The strictest level reached: ``meaning``, ``grammatical``, ``tree``, ``none``
        (no level), or ``unknown`` (not graded)."""
        if self.tree_valid is None:
            return "unknown"
        for name, holds in (
            ("meaning", self.meaning_kept),
            ("grammatical", self.grammatical),
            ("tree", self.tree_valid),
        ):
            if holds:
                return name
        return "none"

    @classmethod
    def of(cls, grade: Grade) -> RowValidity | None:
        """The verdicts of a judges' grade (``None`` when the pair could not be graded:
        a reordering, whose gold tree no longer lines up)."""
        if not grade.graded:
            return None
        return cls(grade.tree_valid, grade.grammatical, grade.meaning_kept, grade.failed_checks())

    def at(self, level: str) -> bool | None:
        """The verdict at ``level`` (``tree``, ``grammatical`` or ``meaning``)."""
        verdicts = {
            "tree": self.tree_valid,
            "grammatical": self.grammatical,
            "meaning": self.meaning_kept,
        }
        return verdicts[level]

    def to_json(self) -> JSONObject:
        """The ``validity`` field of a row."""
        return {
            "tree_valid": self.tree_valid,
            "grammatical": self.grammatical,
            "meaning_kept": self.meaning_kept,
            "failed": list(self.failed),
        }

    @classmethod
    def from_json(cls, value: object) -> RowValidity | None:
        """``None`` stays ``None`` (rows of runs that did not grade).

        Raises:
            TypeError: not a mapping of the three verdicts (booleans or null).
        """
        if value is None:
            return None
        if not isinstance(value, dict):  # decoded JSON: any value
            raise TypeError(f"expected a validity mapping, got {value!r}")
        verdicts = [value.get(k) for k in ("tree_valid", "grammatical", "meaning_kept")]
        if any(v is not None and not isinstance(v, bool) for v in verdicts):
            raise TypeError(f"validity verdicts must be true, false or null: {value!r}")
        failed = value.get("failed", [])
        if not isinstance(failed, list):
            raise TypeError(f"validity failed must be a list: {failed!r}")
        return cls(verdicts[0], verdicts[1], verdicts[2], tuple(str(f) for f in failed))


def with_validity(
    sentence: Sentence, positions: Iterable[int], validity: RowValidity | None
) -> Sentence:
    """``sentence`` (a perturbation applied) with ``Validity=LEVEL`` in the MISC of each
    word at ``positions`` (0-based, the changed words), the strictest level its grade
    reached (:attr:`RowValidity.level`); unchanged without a grade."""
    if validity is None:
        return sentence
    level = validity.level
    words = {i: sentence.words[i].with_misc(Validity=level) for i in positions}
    return sentence.with_words(words) if words else sentence


def _finite(value: object, field: str) -> float:
    """``value`` as a finite number (the attack never writes NaN or an infinity).

    Raises:
        ValueError: naming ``field``, when ``value`` is no finite number.
    """
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"{field} is not a number: {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{field} is {value!r}, not a finite number")
    return number


def _optional_float(value: object) -> float | None:
    """``None`` stays ``None``; anything else must be a number."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a number, got {value!r}")
    return float(value)


def _optional_counts(value: object) -> dict[str, int] | None:
    """``None`` stays ``None``; anything else must map names to whole numbers."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise TypeError(f"expected a mapping of counts, got {value!r}")
    return {str(k): int(v) for k, v in value.items()}


def _optional_predictions(value: object) -> dict[str, JSONValue] | None:
    """``None`` stays ``None``; anything else must map probe names to mappings."""
    if value is None:
        return None
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise TypeError(f"expected a mapping of probe predictions, got {value!r}")
    return {str(k): v for k, v in value.items()}


def iter_result_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, JSONValue]]:
    """``(line number, decoded value)`` of every complete line of a ``results.jsonl``.

    A trailing line without its newline (an interrupted write) is skipped; a missing
    file has no lines. Any other malformed line is a :class:`BrittleInputError`.
    """
    p = Path(path)
    if not p.exists():
        return
    with p.open("rb") as handle:
        for lineno, raw in enumerate(handle, start=1):
            if not raw.endswith(b"\n"):
                return
            try:
                yield lineno, json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                reason = exc.msg if isinstance(exc, json.JSONDecodeError) else exc.reason
                raise BrittleInputError(p, lineno, f"not a JSON result row ({reason})") from None


def read_rows(path: str | os.PathLike[str]) -> Generator[ResultRow, None, None]:
    """Stream the rows of a ``results.jsonl``, one line at a time.

    Raises:
        BrittleInputError: a line that is not JSON, lacks a field or has a field of
            the wrong kind (naming the file, the line and the field).
    """
    for lineno, data in iter_result_lines(path):
        try:
            if not isinstance(data, dict):
                raise TypeError("not a JSON object")
            yield ResultRow.from_json(data)
        except KeyError as exc:
            raise BrittleInputError(Path(path), lineno, f"result row lacks {exc.args[0]}") from None
        except (TypeError, ValueError, AttributeError) as exc:
            raise BrittleInputError(Path(path), lineno, f"malformed result row ({exc})") from None


def repair_results(path: str | os.PathLike[str]) -> None:
    """Truncate ``results.jsonl`` to its last complete line (drops a torn last write)."""
    p = Path(path)
    if not p.exists():
        return
    size = p.stat().st_size
    if size == 0:
        return
    with p.open("r+b") as handle:
        # Only the tail can be torn: look back in growing windows for the last newline.
        window = 4096
        while True:
            start = max(0, size - window)
            handle.seek(start)
            tail = handle.read(size - start)
            cut = tail.rfind(b"\n")
            if cut >= 0:
                keep = start + cut + 1
                break
            if start == 0:
                keep = 0
                break
            window *= 4
        if keep != size:
            handle.truncate(keep)
