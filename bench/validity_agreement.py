"""Grade again the pairs read in docs/validity.md, and measure how far today's judges
agree with the reading.

docs/validity.md ("The reading") holds every pair read one by one: the sentence id,
the original and the perturbed sentence (words separated by spaces, changed words in
bold), the reading (tree-valid, grammatical, meaning kept, ``y``/``n``) and the grade the
judges gave when the pair was read. This script rebuilds each pair from the treebank
(EWT test or dev, GUM test or dev, found by ``sent_id``; the perturbed sentence is the
original with the differing words replaced, lemma unknown), grades all of them with
today's judges in one call (:func:`brittle.search.validity.grade.grade_pairs`), and
prints per table:

- ``pairs``: the pairs rebuilt (a pair whose original is not the treebank's sentence
  word for word is left out and counted);
- ``tree``, ``gram``, ``meaning``, ``whole``: the share of pairs where today's grade
  equals the reading at that level (``whole``: at all three);
- ``as read``: the share whose grade today is the grade the table records, so a
  change of the judges shows as a change of this column.

The page's agreement table (its ``<!-- generated: agreement -->`` block) is
:func:`agreement_block` of its reading tables: each pair's recorded grade against its
reading. A test grades every pair again and requires today's grade to be the recorded
one, so the table is today's judges' agreement; ``--write-doc`` writes it into the page,
and docs/frontier.md's table of the presets' attacks read one by one
(:func:`presets_block`) into that page.

Usage::

    python bench/validity_agreement.py [--doc docs/validity.md] [--json OUT.json]
        [--write-doc]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from brittle.engine.core.conllu import iter_conllu
from brittle.engine.core.perturbation import Perturbation, apply_perturbation
from brittle.engine.core.sentence import Sentence
from brittle.search.validity.records import Grade

ROOT = Path(__file__).resolve().parents[1]
UD = ROOT.parent / "shared" / "data" / "ud"
#: Where the read sentences come from.
TREEBANKS = (
    UD / "UD_English-EWT" / "en_ewt-ud-test.conllu",
    UD / "UD_English-GUM" / "en_gum-ud-test.conllu",
    UD / "UD_English-GUM" / "en_gum-ud-dev.conllu",
    UD / "UD_English-EWT" / "en_ewt-ud-dev.conllu",
)
LEVELS = ("tree", "gram", "meaning")


@dataclass(frozen=True)
class ReadPair:
    """One row of a reading table."""

    table: str
    sent_id: str
    original: tuple[str, ...]
    perturbed: tuple[str, ...]
    reading: str  # e.g. "yyn"
    recorded: str  # the grade the table records, e.g. "yyy"


def _words(cell: str) -> tuple[str, ...]:
    return tuple(cell.replace("**", "").split(" "))


def read_tables(markdown: str) -> list[ReadPair]:
    """Every row of the reading tables (after the ``## The reading`` heading), each with
    the ``####`` heading of its table."""
    text = markdown[markdown.index("\n## The reading\n") :]
    out: list[ReadPair] = []
    table = ""
    for line in text.splitlines():
        if line.startswith("#### ") or line.startswith("### "):
            table = line.lstrip("#").strip() if line.startswith("#### ") else table
            continue
        if not line.startswith("| ") or line.startswith("| sentence") or line.startswith("| ---"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) != 6:
            continue
        sent_id, original, perturbed, reading, _reason, recorded = cells
        out.append(
            ReadPair(
                table,
                sent_id,
                _words(original),
                _words(perturbed),
                reading.strip(),
                recorded.replace("≠", "").strip(),
            )
        )
    return out


def rebuild(
    pairs: Sequence[ReadPair], sentences: dict[str, Sentence]
) -> list[tuple[ReadPair, Sentence, Sentence] | None]:
    """Each pair as (read pair, original, perturbed sentence), or ``None`` when its
    original is not the treebank's sentence word for word."""
    out: list[tuple[ReadPair, Sentence, Sentence] | None] = []
    for pair in pairs:
        original = sentences.get(pair.sent_id)
        if original is None or tuple(original.forms) != pair.original:
            out.append(None)
            continue
        if len(pair.perturbed) != len(pair.original):
            out.append(None)
            continue
        positions = tuple(
            i for i, (a, b) in enumerate(zip(pair.original, pair.perturbed, strict=True)) if a != b
        )
        p = Perturbation(
            original.sent_id,
            "read",
            positions,
            tuple(pair.perturbed[i] for i in positions),
            ("_",) * len(positions),
        )
        out.append((pair, original, apply_perturbation(original, p)))
    return out


def treebank_sentences(wanted: set[str]) -> dict[str, Sentence]:
    """The sentences of :data:`TREEBANKS` whose id is in ``wanted``. The tables name
    EWT's sentences without the source prefix of their ids (``weblog-blogspot.com_
    zentelligence_...`` is read as ``zentelligence_...``), so either form matches."""
    found: dict[str, Sentence] = {}
    for path in TREEBANKS:
        for s in iter_conllu(path):
            for key in (s.sent_id, s.sent_id.split("_", 1)[-1]):
                if key in wanted:
                    found[key] = s
    return found


def grade_letters(grade: Grade) -> str:
    """A grade as the tables write it: ``y``/``n`` for tree-valid, grammatical and
    meaning kept (``yyn``)."""
    levels = (grade.tree_valid, grade.grammatical, grade.meaning_kept)
    return "".join("y" if v else "n" for v in levels)


def agreement(rows: Sequence[tuple[ReadPair, str]]) -> dict[str, float]:
    """Shares of ``(pair, today's grade)`` rows agreeing with the reading per level,
    at all three (``whole``), and with the recorded grade (``as read``)."""
    n = max(len(rows), 1)
    out = {level: sum(g[k] == p.reading[k] for p, g in rows) / n for k, level in enumerate(LEVELS)}
    out["whole"] = sum(g == p.reading for p, g in rows) / n
    out["as read"] = sum(g == p.recorded for p, g in rows) / n
    return out


def agreement_block(markdown: str) -> str:
    """The agreement table of docs/validity.md from its reading tables: per table, then
    over every pair, the pairs and the share whose recorded grade agrees with the
    reading at each level and at all three (``whole``)."""
    by_table: dict[str, list[tuple[ReadPair, str]]] = {}
    for pair in read_tables(markdown):
        by_table.setdefault(pair.table, []).append((pair, pair.recorded))
    every = [row for rows in by_table.values() for row in rows]
    lines = [
        "| reading table | pairs | tree | grammatical | meaning | whole |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for table, rows in [*by_table.items(), ("every tabled pair", every)]:
        shares = agreement(rows)
        cells = " | ".join(f"{shares[k]:.0%}" for k in (*LEVELS, "whole"))
        lines.append(f"| {table} | {len(rows)} | {cells} |")
    return "\n".join(lines) + "\n"


#: docs/frontier.md's reading of the presets: each row's preset and text, the level the
#: preset promises (an index into :data:`LEVELS`) and the docs/validity.md table that
#: reads its attack.
PRESET_TABLES = (
    ("`tree`", 0, "`--validity tree` (attack, beam, tau 2)"),
    ("`grammatical`", 1, "`--validity grammatical` (attack, beam, tau 2)"),
    ("`meaning`", 2, "`--validity meaning` today (GUM test, first 60, attack, beam, tau 2)"),
    (
        "`meaning`, GUM dev (held out)",
        2,
        "`--validity meaning` today (GUM dev, first 60, attack, beam, tau 2)",
    ),
    (
        "`meaning`, EWT test (held out)",
        2,
        "`--validity meaning` today (EWT test, first 60, attack, beam, tau 2)",
    ),
    (
        "`meaning`, GUM test 61-120 (held out)",
        2,
        "`--validity meaning` today (GUM test, sentences 61-120, attack, beam, tau 2, held out)",
    ),
    (
        "`tree`, EWT dev (held out)",
        0,
        "`--validity tree` (EWT dev, first 60, attack, beam, tau 2, held out)",
    ),
    (
        "`grammatical`, EWT dev (held out)",
        1,
        "`--validity grammatical` (EWT dev, first 60, attack, beam, tau 2, held out)",
    ),
    (
        "`meaning`, EWT dev (held out)",
        2,
        "`--validity meaning` (EWT dev, first 60, attack, beam, tau 2, held out)",
    ),
)
#: The page that shows the presets' readings beside their grades.
FRONTIER = ROOT / "docs" / "frontier.md"


def valid_at(letters: str, level: int) -> bool:
    """Whether ``letters`` (T/G/M, ``y``/``n``) are valid at ``level`` and every level
    below it."""
    return all(c == "y" for c in letters[: level + 1])


def presets_block(markdown: str) -> str:
    """docs/frontier.md's table of the presets' attacks read one by one: per preset, how
    many kept perturbations the reading finds valid at the preset's level and how many
    the judges grade so (the recorded grades, which a test holds to today's judges),
    from docs/validity.md's reading tables :data:`PRESET_TABLES`."""
    by_table: dict[str, list[ReadPair]] = {}
    for pair in read_tables(markdown):
        by_table.setdefault(pair.table, []).append(pair)
    lines = [
        "| preset | read valid at its level | graded valid at its level | reading table |",
        "| --- | ---: | ---: | --- |",
    ]
    for preset, level, table in PRESET_TABLES:
        rows = by_table.get(table)
        if not rows:
            raise ValueError(f"docs/validity.md has no reading table {table!r}")
        read = sum(valid_at(p.reading, level) for p in rows)
        graded = sum(valid_at(p.recorded, level) for p in rows)
        lines.append(f"| {preset} | {read} of {len(rows)} | {graded} of {len(rows)} | {table} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--doc", type=Path, default=ROOT / "docs" / "validity.md")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures")
    parser.add_argument(
        "--write-doc", action="store_true", help="also write the page's agreement table"
    )
    args = parser.parse_args(argv)

    # deferred: the judges' models load only when the script runs
    from brittle.search.validity.grade import grade_pairs

    pairs = read_tables(args.doc.read_text(encoding="utf-8"))
    built = rebuild(pairs, treebank_sentences({p.sent_id for p in pairs}))
    usable = [b for b in built if b is not None]
    grades = grade_pairs([b[1] for b in usable], [b[2] for b in usable])
    today = [grade_letters(g) for g in grades]
    by_table: dict[str, list[tuple[ReadPair, str]]] = {}
    for (pair, _, _), grade in zip(usable, today, strict=True):
        by_table.setdefault(pair.table, []).append((pair, grade))
    missing: dict[str, int] = {}
    for pair, b in zip(pairs, built, strict=True):
        if b is None:
            missing[pair.table] = missing.get(pair.table, 0) + 1
    figures = {t: {"pairs": len(rows), **agreement(rows)} for t, rows in by_table.items()}
    every = [row for rows in by_table.values() for row in rows]
    figures["all"] = {"pairs": len(every), **agreement(every)}
    print("| table | pairs | left out | tree | gram | meaning | whole | as read |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for table, f in figures.items():
        cells = " | ".join(f"{f[k]:.0%}" for k in (*LEVELS, "whole", "as read"))
        print(f"| {table} | {f['pairs']} | {missing.get(table, 0)} | {cells} |")
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    if args.write_doc:
        # deferred: reproduce_common is bench's, and this script also runs alone
        sys.path.insert(0, str(Path(__file__).parent))
        from reproduce_common import write_doc

        text = args.doc.read_text(encoding="utf-8")
        write_doc(args.doc, {"agreement": agreement_block(text)})
        write_doc(FRONTIER, {"presets-reading": presets_block(text)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
