"""docs/performance.md's table of ``evaluate`` and ``compare-methods`` with workers is
bench/workers_evaluate_compare.py's output.

It is rendered again from ``docs/workers-evaluate-compare.json`` and must equal the
page's generated block byte for byte; the kept runs are every command in one process
and on two workers, and the workers' run wrote the output of the one-process run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from support import generated_blocks

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import workers_evaluate_compare as wec  # noqa: E402


def kept() -> wec.Figures:
    data: wec.Figures = json.loads(wec.MEASURED.read_text(encoding="utf-8"))
    return data


def test_the_page_holds_the_table() -> None:
    page = generated_blocks(wec.DOC.read_text(encoding="utf-8"))
    assert page[wec.BLOCK] == wec.blocks(kept())[wec.BLOCK]


def test_every_command_ran_in_both_settings_and_wrote_the_same_output() -> None:
    data = kept()
    assert [r["name"] for r in data["rows"]] == [c["name"] for c in wec.COMMANDS]
    for row in data["rows"]:
        assert [r["options"] for r in row["runs"]] == [list(o) for o in wec.SETTINGS]
        assert all(r["same"] and r["seconds"] > 0 for r in row["runs"])
        assert all(len(r["times"]) == wec.REPEATS for r in row["runs"])
    assert [r["sentences"] for r in data["rows"]] == [2077, wec.LIMIT, wec.LIMIT, 300]


def test_a_run_that_wrote_other_output_says_so() -> None:
    data: wec.Figures = {
        "treebank": "t.conllu",
        "cores": 2,
        "rows": [
            {
                "name": "compare-60",
                "command": "compare-methods",
                "sentences": 60,
                "runs": [
                    {"options": [], "seconds": 60.0, "times": [60.0], "same": True},
                    {
                        "options": ["--workers", "2"],
                        "seconds": 30.0,
                        "times": [30.0],
                        "same": False,
                    },
                ],
            },
            {
                "name": "evaluate-all",
                "command": "evaluate",
                "sentences": 2077,
                "runs": [
                    {"options": [], "seconds": 20.0, "times": [20.0], "same": True},
                    {"options": ["--workers", "2"], "seconds": 40.0, "times": [40.0], "same": True},
                ],
            },
        ],
    }
    lines = wec.blocks(data)[wec.BLOCK].splitlines()
    assert lines[2] == (
        "| `compare-methods --methods copos,random,jabberwocky --budget 1,2,3 --no-quality`, "
        "60 sentences (one shard) | 60.0 s (1.0 sentences/s) | 30.0 s (2.0 sentences/s) "
        "| 2.00x | different |"
    )
    assert lines[3].startswith(
        "| `evaluate`, the demo's two MiniLM layer -5 probes, `--no-cache --no-baselines`, "
        "2,077 sentences (9 shards) | 20.0 s (103.8 sentences/s) "
    )
    assert lines[3].endswith("| 0.50x | the same |")


def test_outputs_differing_only_in_wall_time_count_as_the_same(tmp_path: Path) -> None:
    def run(name: str, seconds: float, table: str) -> Path:
        out = tmp_path / name
        out.mkdir()
        (out / "compare-methods.md").write_text(table)
        rows = [{"method": "random", "tau": 1, "seconds": seconds, "ted": 0.5}]
        (out / "compare-methods.json").write_text(json.dumps({"rows": rows}))
        return out

    one = run("one", 1.0, "a")
    assert wec.same_output("compare-methods", run("two", 2.5, "a"), one)
    assert not wec.same_output("compare-methods", run("three", 1.0, "b"), one)


def test_evaluate_outputs_are_compared_byte_for_byte(tmp_path: Path) -> None:
    for name, text in (("one", "{}"), ("two", "{}"), ("three", '{"a": 1}')):
        (tmp_path / name).mkdir()
        (tmp_path / name / "evaluate.json").write_text(text)
    assert wec.same_output("evaluate", tmp_path / "two", tmp_path / "one")
    assert not wec.same_output("evaluate", tmp_path / "three", tmp_path / "one")
