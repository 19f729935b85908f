"""recorded: substitution tables read from a file, as another generator once made them.

A run with ``--method recorded -o tables=FILE`` searches exactly the options ``FILE``
holds for each sentence, whatever the generators of the day would propose: a fixed
workload. ``brittle bench`` measures its attack stages on such a file
(``data/bench-tables.json``), so that a change to coPOS does not change what the
engine is timed on; a study can likewise attack two models on one candidate set.

:func:`write_tables` writes the file from tables in memory. It is JSON::

    {"format": "brittle-tables/1",
     "tables": [{"sent_id": ID, "forms": [FORM, ...], "method": NAME,
                 "options": [[POSITION, [[FORM, LEMMA], ...]], ...]}, ...]}

A sentence is matched by its ``sent_id`` and its forms, so a file made on another
version of a treebank does not silently apply; a sentence the file does not hold gets
no options (:meth:`RecordedTables.coverage` says how many are held). The file is data:
reading it runs no code, and a malformed one is refused in one line that names the
file and the problem.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from brittle.engine.core.atomic import write_json
from brittle.engine.core.errors import BrittleInputError, ConfigError
from brittle.engine.core.sentence import Sentence
from brittle.search.generators.base import GENERATORS, SubstitutionGenerator
from brittle.search.generators.eligibility import Eligibility
from brittle.search.table import Candidate, SubstitutionTable

__all__ = ["TABLES_FORMAT", "RecordedTables", "read_tables", "write_tables"]

#: The ``format`` field of a tables file.
TABLES_FORMAT = "brittle-tables/1"

#: A recorded table's key: the sentence's id and forms.
TableKey = tuple[str, tuple[str, ...]]


def write_tables(
    path: str | os.PathLike[str],
    sentences: Sequence[Sentence],
    tables: Sequence[SubstitutionTable],
) -> None:
    """Write ``tables`` (one per sentence, in order) as a tables file, atomically."""
    if len(sentences) != len(tables):
        raise ValueError(f"{len(tables)} tables for {len(sentences)} sentences")
    records = []
    for s, t in zip(sentences, tables, strict=True):
        if t.sentence_id != s.sent_id:
            raise ValueError(f"table of {t.sentence_id!r} given for sentence {s.sent_id!r}")
        records.append(
            {
                "sent_id": s.sent_id,
                "forms": list(s.forms),
                "method": t.method,
                "options": [[i, [list(c) for c in opts]] for i, opts in t.entries],
            }
        )
    write_json(path, {"format": TABLES_FORMAT, "tables": records})


def read_tables(path: str | os.PathLike[str]) -> dict[TableKey, SubstitutionTable]:
    """The tables of a tables file, by sentence id and forms.

    Raises:
        BrittleInputError: the file cannot be read or is not a tables file.
    """
    path = Path(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise BrittleInputError(path, None, f"cannot read the tables: {exc.strerror}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BrittleInputError(path, None, f"not a JSON tables file ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != TABLES_FORMAT:
        raise BrittleInputError(path, None, f"not a tables file: format is not {TABLES_FORMAT!r}")
    records = data.get("tables")
    if not isinstance(records, list):
        raise BrittleInputError(path, None, "'tables' is not a list")
    out: dict[TableKey, SubstitutionTable] = {}
    for k, record in enumerate(records):
        try:
            key, table = _table(record)
        except (KeyError, TypeError, ValueError) as exc:
            raise BrittleInputError(path, None, f"table {k + 1}: {exc}") from None
        out[key] = table
    return out


def _table(record: object) -> tuple[TableKey, SubstitutionTable]:
    """One table record (raises KeyError, TypeError or ValueError when malformed)."""
    if not isinstance(record, dict):
        raise TypeError("a table is not an object")
    sent_id, forms, method = record["sent_id"], record["forms"], record["method"]
    if not isinstance(sent_id, str) or not isinstance(method, str):
        raise TypeError("sent_id and method must be strings")
    if not isinstance(forms, list) or not all(isinstance(f, str) for f in forms):
        raise TypeError("forms must be a list of strings")
    options: dict[int, list[Candidate]] = {}
    for entry in record["options"]:
        position, candidates = entry
        if not isinstance(position, int) or position in options:
            raise ValueError(f"bad or repeated position {position!r}")
        pairs: list[Candidate] = []
        for pair in candidates:
            form, lemma = pair
            if not isinstance(form, str) or not isinstance(lemma, str) or not form:
                raise TypeError(f"an option at position {position} is not [form, lemma]")
            pairs.append((form, lemma))
        options[position] = pairs
    table = SubstitutionTable.from_mapping(sent_id, method, len(forms), options)
    return (sent_id, tuple(forms)), table


@GENERATORS.register("recorded", help="the options a tables file holds (-o tables=FILE)")
@dataclass(frozen=True, kw_only=True)
class RecordedTables(SubstitutionGenerator):
    """Substitution tables read from a tables file (see the module docstring).

    Attributes:
        tables: the tables file (written by :func:`write_tables`).
    """

    requires: ClassVar[frozenset[str]] = frozenset({"form"})

    tables: str = ""
    eligibility: Eligibility = field(default_factory=Eligibility)
    _read: dict[str, dict[TableKey, SubstitutionTable]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.tables:
            raise ConfigError("the recorded generator needs its file: -o tables=FILE")

    def _recorded(self) -> dict[TableKey, SubstitutionTable]:
        if "tables" not in self._read:
            self._read["tables"] = read_tables(self.tables)
        return self._read["tables"]

    def prepare(self) -> None:
        """Read the tables file (a malformed one fails here, before the first sentence)."""
        self._recorded()

    def coverage(self, sentences: Iterable[Sentence]) -> tuple[int, int]:
        """How many of ``sentences`` the file holds, and how many there are."""
        recorded = self._recorded()
        keys = [(s.sent_id, tuple(s.forms)) for s in sentences]
        return sum(k in recorded for k in keys), len(keys)

    def candidates(
        self, sentences: Sequence[Sentence], *, top_k: int | None = None
    ) -> list[SubstitutionTable]:
        """Each sentence's recorded table, cut to ``top_k`` options per position (a
        sentence the file does not hold: no options)."""
        k = self._k(top_k)
        recorded = self._recorded()
        out: list[SubstitutionTable] = []
        for s in sentences:
            table = recorded.get((s.sent_id, tuple(s.forms)))
            if table is None:
                out.append(SubstitutionTable(s.sent_id, self.method, len(s)))
            else:
                out.append(table.truncated(k))
        return out
