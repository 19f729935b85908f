"""docs/compare-methods.md: its tables are ``brittle compare-methods``'s own, from the
run ``bench/reproduce_compare.py`` keeps.

The tables are rendered again from ``docs/compare-methods.json`` (the command's JSON,
read back with :meth:`CompareResult.from_dict`) by the command's own writers and must
equal the page's generated blocks byte for byte; the run is today's default
configuration on the documented subset.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from support import generated_blocks, tables_outside_blocks

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import reproduce_compare as rc  # noqa: E402

from brittle.cli.main import main  # noqa: E402
from brittle.engine.compare.compare_run import CompareConfig  # noqa: E402


def kept() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(rc.MEASURED.read_text(encoding="utf-8"))
    return data


def test_the_page_holds_the_commands_tables() -> None:
    page = generated_blocks(rc.DOC.read_text(encoding="utf-8"))
    assert page == rc.blocks(kept())


def test_the_run_is_todays_default_configuration() -> None:
    """Every setting but the documented ``--limit`` is the command's default."""
    config = kept()["config"]
    defaults = CompareConfig(methods=tuple(config["methods"]))
    assert config["limit"] == rc.LIMIT
    assert config["budgets"] == list(defaults.budgets)
    assert config["candidates"] == defaults.candidates
    assert config["parser"] == defaults.parser
    assert config["seed"] == defaults.seed
    assert config["quality"] is defaults.quality
    assert config["tree_labels"] == defaults.tree_labels
    command = main.get_command(click.Context(main), "compare-methods")
    assert command is not None
    (methods,) = (p for p in command.params if p.name == "methods")
    assert config["methods"] == str(methods.default).split(",")


def test_every_table_of_the_page_is_generated() -> None:
    """No Markdown table outside a generated block (command examples aside)."""
    assert tables_outside_blocks(rc.DOC.read_text(encoding="utf-8")) == []
