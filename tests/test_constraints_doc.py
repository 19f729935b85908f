"""docs/constraints.md quotes today's default bounds: its table's last column against
the constants the constraints use, so a default changed in the code without the page
fails here."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from brittle.search.constraints.fluency import (
    DEFAULT_MAX_PER_CHANGED,
    DEFAULT_MAX_SURPRISAL_INCREASE,
)
from brittle.search.constraints.judged import DEFAULT_LEVEL
from brittle.search.constraints.similarity import DEFAULT_MIN_SIMILARITY
from brittle.search.constraints.word_similarity import DEFAULT_MIN_WORD_SIMILARITY

DOC = Path(__file__).resolve().parents[1] / "docs" / "constraints.md"


def default_bounds() -> dict[str, str]:
    """The table's default bound per constraint (its first cell, as written)."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index("| constraint | value measured per candidate | kept when | default bound |")
    rows = {}
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]
        rows[cells[0]] = cells[-1]
    return rows


def test_the_default_bounds_are_todays() -> None:
    bounds = default_bounds()
    assert bounds["`fluency` (bare), `fluency:B,C/changed`"] == (
        f"B = {DEFAULT_MAX_SURPRISAL_INCREASE:g}, C = {DEFAULT_MAX_PER_CHANGED:g}"
    )
    assert bounds["`similarity[:S]`"] == f"{DEFAULT_MIN_SIMILARITY:g}"
    assert bounds["`word-similarity[:W]`"] == f"{DEFAULT_MIN_WORD_SIMILARITY:g}"
    assert bounds["`judged[:L]`"] == f"L = {DEFAULT_LEVEL}"


def test_the_shares_table_is_the_scripts_rendering_of_todays_rows() -> None:
    """The table of how many candidates and sentences each constraint keeps is
    bench/constraint_shares.py's rendering of ``docs/constraint-shares.json``, measured
    with the rows (and so the default bounds) the script names today."""
    sys.path.insert(0, str(DOC.parents[1] / "bench"))
    import constraint_shares as cs

    data = json.loads(cs.MEASURED.read_text(encoding="utf-8"))
    assert [(r["label"], tuple(r["specs"])) for r in data["rows"]] == list(cs.ROWS)
    block = re.search(
        r"<!-- generated: constraint-shares -->\n(.*?)<!-- end generated -->",
        DOC.read_text(encoding="utf-8"),
        re.S,
    )
    assert block is not None and block.group(1) == cs.blocks(data)["constraint-shares"]
    # nothing keeps more than coPOS alone offers
    first = data["rows"][0]
    assert all(r["sentences"] <= first["sentences"] for r in data["rows"])


def test_the_labelled_pairs_table_is_the_scripts_rendering_of_the_fixtures() -> None:
    """bench/labelled_pairs.py's rendering of ``docs/labelled-pairs.json``, measured on
    every pair of the fixtures, in their order; the default fluency bound rejects every
    bad pair as measured."""
    sys.path.insert(0, str(DOC.parents[1] / "bench"))
    import labelled_pairs as lp

    from brittle.engine.core.conllu import read_conllu

    data = json.loads(lp.MEASURED.read_text(encoding="utf-8"))
    fixtures = read_conllu(lp.FIXTURES / "quality_original.conllu")
    assert [(r["label"], r["text"]) for r in data["pairs"]] == [
        (s.metadata["quality"], s.text) for s in fixtures
    ]
    block = re.search(
        r"<!-- generated: labelled-pairs -->\n(.*?)<!-- end generated -->",
        DOC.read_text(encoding="utf-8"),
        re.S,
    )
    assert block is not None and block.group(1) == lp.blocks(data)["labelled-pairs"]
    for r in data["pairs"]:
        if r["label"] == "bad":
            assert (
                r["bits_per_word"] > DEFAULT_MAX_SURPRISAL_INCREASE
                or r["bits_per_changed_word"] > DEFAULT_MAX_PER_CHANGED
            )
