"""The README's scaling-out table is bench/reproduce_workers.py's output.

It is rendered again from ``docs/workers.json`` and must equal the README's generated
block byte for byte; the kept runs are the three settings, and each wrote the files of
the one-process run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from support import generated_blocks

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import reproduce_workers as rw  # noqa: E402


def kept() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(rw.MEASURED.read_text(encoding="utf-8"))
    return data


def test_the_readme_holds_the_table() -> None:
    readme = generated_blocks(rw.DOC.read_text(encoding="utf-8"))
    assert readme["workers"] == rw.blocks(kept())["workers"]


def test_every_setting_ran_and_wrote_the_same_files() -> None:
    data = kept()
    assert [r["options"] for r in data["runs"]] == [list(o) for _, o in rw.RUNS]
    assert data["sentences"] == rw.LIMIT
    assert all(r["same"] and r["seconds"] > 0 for r in data["runs"])


def test_a_run_that_wrote_other_files_says_so() -> None:
    data = {
        "sentences": 60,
        "runs": [
            {"label": "one", "options": [], "seconds": 100.0, "same": True},
            {"label": "two", "options": ["--workers", "2"], "seconds": 50.0, "same": False},
        ],
    }
    lines = rw.blocks(data)["workers"].splitlines()
    assert lines[2] == "| one | 100 s | 0.60 | 1.00x | the same |"
    assert lines[3] == "| two | 50 s | 1.20 | 2.00x | different |"


def test_runs_differing_only_in_wall_time_count_as_the_same(tmp_path: Path) -> None:
    def run(name: str, seconds: float, word: str) -> Path:
        out = tmp_path / name
        out.mkdir()
        (out / "adversarial.conllu").write_text(word)
        (out / "summary.json").write_text("{}")
        row = {"sentence_id": "s1", "seconds": seconds, "damage": 0.5}
        (out / "results.jsonl").write_text(json.dumps(row) + "\n")
        return out

    one = run("one", 1.0, "a")
    assert rw._same(run("two", 2.5, "a"), one)
    assert not rw._same(run("three", 1.0, "b"), one)
