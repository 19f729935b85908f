"""The word tables of ``search/generators/inflection.py``, shipped as package data
(``inflection_*.tsv`` in ``brittle.search.generators.data``): pyproject.toml declares
every file of that folder, and every table is clean (one row per line, no blanks, no
repeats, lowercase words)."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

import pytest

from brittle.search.generators import inflection

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "search" / "generators" / "data"


def test_pyproject_ships_every_table() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = config["tool"]["setuptools"]["package-data"]["brittle.search.generators.data"]
    tables = sorted(p.name for p in DATA.iterdir() if p.suffix == ".tsv")
    assert tables, "no tables found"
    assert all(any(fnmatch.fnmatch(name, g) for g in globs) for name in tables), tables


@pytest.mark.parametrize("path", sorted(DATA.glob("inflection_*.tsv")), ids=lambda p: p.name)
def test_table_is_clean(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n") and not text.endswith("\n\n")
    header, *rows = text.splitlines()
    width = len(header.split("\t"))
    assert rows and all(len(row.split("\t")) == width for row in rows)
    assert all(field and field == field.strip() for row in rows for field in row.split("\t"))
    assert len(set(rows)) == len(rows)
    if width == 1:
        assert all(row.isascii() and row.islower() for row in rows)


def test_tables_load_into_immutable_structures() -> None:
    assert isinstance(inflection.UNCOUNTABLE, frozenset) and "information" in inflection.UNCOUNTABLE
    assert isinstance(inflection.INVARIANT, frozenset) and "sheep" in inflection.INVARIANT
    with pytest.raises(TypeError):
        inflection._TABLE[("ox", "NNS")] = "oxes"  # type: ignore[index]
    assert inflection._TABLE[("ox", "NNS")] == "oxen"
