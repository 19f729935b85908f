"""The fixed workload of ``brittle bench``'s attack stages: coPOS tables recorded once.

The attack stages (``end_to_end``, ``workers``, ``grading``) search substitution
tables read from ``data/bench-tables.json`` (the ``recorded`` generator), not coPOS as
it stands today: when coPOS changed its pool, the end-to-end stage went from 609
candidates scored to 348, and its ratio moved with the workload rather than with the
engine. :func:`record_bench_tables` (``python bench/record_tables.py``) writes the
file from coPOS with the bench's options, for the first :data:`RECORDED_SENTENCES`
sentences of the built-in treebank and of EWT test. A treebank the file does not hold
falls back to coPOS as it stands, and the stage's detail line says which was used.

The ``anytime`` stage compares search strategies, which small pools cannot tell apart
(a search that scores every option finds the same worst case as any other), so it
searches a second file, ``data/bench-pool-tables.json``: La Malfa et al.'s coPOS pool
(every WordNet sense, every lemma of each: :data:`EVERY_SENSE_COPOS`) for the same
sentences, recorded the same way.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from brittle.data import bench_tables_path
from brittle.engine.core.sentence import Sentence

__all__ = [
    "BENCH_COPOS",
    "EVERY_SENSE_COPOS",
    "EVERY_SENSE_OPTIONS",
    "RECORDED_OPTIONS",
    "RECORDED_SENTENCES",
    "record_bench_tables",
    "recorded_tables",
]

#: coPOS options of every stage that draws coPOS candidates: the bench times the engine
#: on a fixed workload, so it keeps the pool its figures were first measured with (no
#: abstaining on unsure senses, no cap on the synonyms' own polysemy, no usage checks).
BENCH_COPOS: dict[str, object] = {
    "min_lead": 0.0,
    "max_substitute_senses": 0,
    "usage_checks": False,
}

#: La Malfa et al.'s coPOS pool: every lemma of every WordNet sense of the word's part of
#: speech, no frequency, polysemy or usage filter (the pool where searches differ).
EVERY_SENSE_COPOS: dict[str, object] = {
    "sense": "all",
    "min_count": 0,
    "max_senses": 0,
    "max_substitute_senses": 0,
    "usage_checks": False,
}

#: Options per position recorded of that pool (an attack's default, ``--candidates``).
EVERY_SENSE_OPTIONS = 20

#: Sentences recorded per treebank (the most any attack stage runs: ``workers``).
RECORDED_SENTENCES = 64

#: Options per position recorded (the attack stages search 5).
RECORDED_OPTIONS = 5


def recorded_tables(sentences: Sequence[Sentence], path: Path | None = None) -> Path | None:
    """The tables file (``path``, by default the bench's) when it holds every one of
    ``sentences``, else ``None``."""
    # deferred: the generators load only when an attack stage runs
    from brittle.search.generators.recorded import RecordedTables

    path = path or bench_tables_path()
    if not path.exists():
        return None
    held, total = RecordedTables(tables=str(path)).coverage(sentences)
    return path if held == total else None


def record_bench_tables(
    treebanks: Sequence[Sequence[Sentence]],
    path: str | os.PathLike[str],
    *,
    options: int = RECORDED_OPTIONS,
    copos: Mapping[str, object] = BENCH_COPOS,
) -> int:
    """Record coPOS's tables (generator options ``copos``, ``options`` per position;
    the bench's by default) for the first :data:`RECORDED_SENTENCES` sentences of each
    treebank into one tables file; returns the number of options recorded."""
    # deferred: as above
    from brittle.search.generators.base import GENERATORS, Generator
    from brittle.search.generators.recorded import write_tables

    build: Callable[..., Generator] = GENERATORS.get("copos")  # options typed by its fields
    generator = build(top_k=options, **copos)
    generator.prepare()
    tabled = generator.substitution_tables()
    assert tabled is not None  # coPOS proposes per-position options
    sentences: list[Sentence] = []
    for treebank in treebanks:
        sentences.extend(treebank[:RECORDED_SENTENCES])
    tables = tabled.candidates(sentences, top_k=options)
    write_tables(path, sentences, tables)
    return sum(len(opts) for t in tables for _, opts in t.entries)
