"""The readings of docs/validity.md are data the judges are checked against.

``bench/validity_agreement.py`` rebuilds every pair read one by one in docs/validity.md
from EWT and GUM test and grades them all again. Two things must hold: every table row
is rebuilt (its original is the treebank's sentence word for word), and today's judges
give each pair the grade its row records, so the agreement figures the page quotes are
those of the judges as they stand. A change to a judge that moves a grade fails here,
and the page's grades and figures are updated with it.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import re
import sys
from pathlib import Path

import pytest

from support import SHARED_UD

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "validity.md"
_spec = importlib.util.spec_from_file_location(
    "validity_agreement", ROOT / "bench" / "validity_agreement.py"
)
assert _spec is not None and _spec.loader is not None
readings = importlib.util.module_from_spec(_spec)
sys.modules["validity_agreement"] = readings  # dataclasses look their module up
_spec.loader.exec_module(readings)


def test_the_tables_parse_into_read_pairs() -> None:
    pairs = readings.read_tables(DOC.read_text(encoding="utf-8"))
    assert len(pairs) >= 300
    assert all(len(p.reading) == 3 and set(p.reading) <= {"y", "n"} for p in pairs)
    assert all(len(p.recorded) == 3 and set(p.recorded) <= {"y", "n"} for p in pairs)
    assert all(p.original != p.perturbed for p in pairs)
    # agreement of a reading with itself is complete
    same = readings.agreement([(p, p.reading) for p in pairs])
    assert same["whole"] == 1.0 and same["tree"] == 1.0


def test_the_agreement_table_is_computed_from_the_reading_tables() -> None:
    """The page's agreement table is its reading tables' recorded grades against their
    readings (which the next test holds to today's judges), as the script renders it."""
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"<!-- generated: agreement -->\n(.*?)<!-- end generated -->", text, re.S)
    assert block is not None
    assert block.group(1) == readings.agreement_block(text)
    last = block.group(1).splitlines()[-1]
    assert last.startswith(f"| every tabled pair | {len(readings.read_tables(text))} |")


def test_the_frontier_page_shows_the_presets_reading_tables() -> None:
    """docs/frontier.md's table of the presets' attacks is counted from docs/validity.md's
    reading tables (their readings and recorded grades), as the script renders it."""
    text = DOC.read_text(encoding="utf-8")
    page = (ROOT / "docs" / "frontier.md").read_text(encoding="utf-8")
    block = re.search(
        r"<!-- generated: presets-reading -->\n(.*?)<!-- end generated -->", page, re.S
    )
    assert block is not None
    assert block.group(1) == readings.presets_block(text)
    assert len(block.group(1).splitlines()) == 2 + len(readings.PRESET_TABLES)


def test_the_presets_table_counts_validity_at_and_below_each_level() -> None:
    """A pair counts at a level only when it is valid there and at every level below:
    a meaning-kept reading of an ungrammatical sentence does not count for meaning."""
    assert readings.valid_at("yyn", 1) and not readings.valid_at("yyn", 2)
    assert not readings.valid_at("yny", 2) and readings.valid_at("ynn", 0)
    pair = readings.ReadPair(
        table=readings.PRESET_TABLES[0][2],
        sent_id="s1",
        original=("a", "cat"),
        perturbed=("a", "dog"),
        reading="nyy",
        recorded="yyy",
    )
    rows = [dataclasses.replace(pair, table=t) for _, _, t in readings.PRESET_TABLES]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(readings, "read_tables", lambda _: rows)
        body = readings.presets_block("")
    assert "| `tree` | 0 of 1 | 1 of 1 |" in body
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(readings, "read_tables", lambda _: rows[1:])
        with pytest.raises(ValueError, match="no reading table"):
            readings.presets_block("")


@pytest.mark.needs("spacy-model", "glove")
@pytest.mark.slow
def test_todays_judges_give_every_read_pair_its_recorded_grade() -> None:
    if not all(path.exists() for path in readings.TREEBANKS):
        pytest.skip(f"the UD treebanks under {SHARED_UD} are not available")
    from brittle.search.validity.grade import grade_pairs

    pairs = readings.read_tables(DOC.read_text(encoding="utf-8"))
    built = readings.rebuild(pairs, readings.treebank_sentences({p.sent_id for p in pairs}))
    left_out = [p.sent_id for p, b in zip(pairs, built, strict=True) if b is None]
    assert not left_out, left_out
    usable = [b for b in built if b is not None]
    grades = grade_pairs([b[1] for b in usable], [b[2] for b in usable])
    today = [readings.grade_letters(g) for g in grades]
    moved = [
        (pair.table, pair.sent_id, pair.recorded, grade)
        for (pair, _, _), grade in zip(usable, today, strict=True)
        if grade != pair.recorded
    ]
    assert not moved, moved
