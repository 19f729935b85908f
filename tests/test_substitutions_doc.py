"""docs/substitutions.md: its sense-choice and quality tables are their scripts' output.

The tables are rendered again from ``docs/sense-choice.json`` (``bench/sense_choice.py``)
and ``docs/quality.json`` (``bench/quality_table.py``) and must equal the page's
generated blocks byte for byte; the sense-choice row shown in bold is coPOS's defaults
as they are today.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from support import generated_blocks, tables_outside_blocks

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import quality_table as qt  # noqa: E402
import sense_choice as sc  # noqa: E402

from brittle.search.generators.copos import CoPOS  # noqa: E402


def kept(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_the_page_holds_the_scripts_tables() -> None:
    page = generated_blocks(sc.DOC.read_text(encoding="utf-8"))
    assert page == {**sc.blocks(kept(sc.MEASURED)), **qt.blocks(kept(qt.MEASURED))}


def test_the_bold_row_is_copos_as_it_comes() -> None:
    defaults = {f.name: f.default for f in dataclasses.fields(CoPOS) if f.name in sc.DEFAULTS}
    assert defaults == sc.DEFAULTS
    table = sc.blocks(kept(sc.MEASURED))["sense-choice"]
    bold = [line for line in table.splitlines() if "**" in line]
    assert len(bold) == 1 and "`context` default" in bold[0]


def test_every_method_was_measured_on_every_case() -> None:
    data = kept(sc.MEASURED)
    assert sorted(r["method"] for r in data["methods"]) == sorted(name for name, _ in sc.LABELS)
    for r in data["methods"]:
        expected = data["lm_cases"] if r["method"] == "rank by causal LM" else data["cases"]
        assert r["cases"] == expected


def test_the_quality_table_is_todays_four_methods_at_tau_2() -> None:
    rows = kept(qt.MEASURED)["rows"]
    assert [(r["method"], r["tau"], r["version"]) for r in rows] == [
        (m, 2, "after") for m in qt.METHODS
    ]
    assert all(r["sentences"] == 300 for r in rows)


def test_no_measured_table_is_left_outside_a_block_in_the_quality_section() -> None:
    text = sc.DOC.read_text(encoding="utf-8")
    start = text.index("## Quality of each method")
    end = text.find("\n## ", start + 1)
    assert tables_outside_blocks(text[start : end if end > 0 else None]) == []
