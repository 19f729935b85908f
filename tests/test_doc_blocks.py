"""The Python blocks of README.md and CONTRIBUTING.md are code that runs.

- CONTRIBUTING's blocks (a generator, a constraint, a strategy) are excerpts of
  ``tests/plugin_example/brittle_typos.py``, word for word; ``tests/test_plugins.py``
  installs that file as a package would and runs its components.
- The README's blocks run as they stand: the API example in ``tests/test_api.py``, the
  records and grading examples here, one after the other in one namespace, in a
  directory holding ``en_ewt-ud-test.conllu`` (EWT test) and ``ewt-tree.conllu``, made
  as the README says (``brittle perturb --validity tree``, on the first sentences).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from brittle.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "tests" / "plugin_example" / "brittle_typos.py"


def python_blocks(name: str) -> list[str]:
    """The ```python blocks of a Markdown file of the repository, in order."""
    return re.findall(r"```python\n(.*?)```", (ROOT / name).read_text(), re.S)


def test_contributing_blocks_are_the_plugin_example_word_for_word() -> None:
    source = PLUGIN.read_text()
    blocks = python_blocks("CONTRIBUTING.md")
    assert len(blocks) >= 3
    for block in blocks:
        assert block in source, f"CONTRIBUTING.md's block is not in {PLUGIN.name}:\n{block}"


def test_the_readme_records_and_grading_examples_run(
    ewt_test: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocks = python_blocks("README.md")
    records = [b for b in blocks if b.startswith("from brittle.engine.core.conllu import")]
    grading = [b for b in blocks if b.startswith("from brittle.search.validity.grade import")]
    assert len(records) == len(grading) == 1
    shutil.copy(ewt_test, tmp_path / "en_ewt-ud-test.conllu")
    monkeypatch.chdir(tmp_path)
    args = [
        "perturb", "en_ewt-ud-test.conllu", "--validity", "tree", "--parser", "gold",
        "--no-quality", "--no-grade", "--limit", "4", "--quiet", "--out", "ewt-tree.conllu",
    ]  # fmt: skip
    made = CliRunner().invoke(main, args)
    assert made.exit_code == 0, made.output
    names: dict[str, object] = {}
    exec(compile(records[0], "README.md", "exec"), names)
    # "atomic; byte-identical round trip"
    assert (tmp_path / "copy.conllu").read_bytes() == ewt_test.read_bytes()
    exec(compile(grading[0], "README.md", "exec"), names)
    grades = names["grades"]
    assert isinstance(grades, list) and len(grades) == 4
    changed = [g for g in grades if g.changed]
    assert changed, "the tree preset changed none of the first sentences"
    assert all(g.tree_valid for g in changed)  # nonwords that keep the gold tree
    assert {s.sent_id for s in names["perturbed"]} == {g.sent_id for g in grades}  # type: ignore[attr-defined]
    assert sorted(os.listdir(tmp_path)) == [
        "copy.conllu",
        "en_ewt-ud-test.conllu",
        "ewt-tree.conllu",
    ]
