"""docs/performance.md's table of coCO's precision is bench/coco_precision.py's output.

It is rendered again from ``docs/coco-precision.json`` and must equal the page's
generated block byte for byte; the kept runs are the script's settings in its order,
the first the reference the others' output is compared with.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from support import generated_blocks

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import coco_precision as cp  # noqa: E402


def kept() -> list[cp.Run]:
    data: list[cp.Run] = json.loads(cp.MEASURED.read_text(encoding="utf-8"))
    return data


def test_the_pages_hold_the_table_and_the_cost() -> None:
    rendered = cp.blocks(kept())
    page = generated_blocks(cp.DOC.read_text(encoding="utf-8"))
    frontier = generated_blocks(cp.FRONTIER.read_text(encoding="utf-8"))
    assert page["coco-precision"] == rendered["coco-precision"]
    assert frontier["coco-cost"] == rendered["coco-cost"]


def test_the_runs_are_the_scripts_settings() -> None:
    runs = kept()
    assert [r["label"] for r in runs] == [label for label, _ in cp.SETTINGS]
    assert runs[0]["output"] == "reference"
    assert all(r["output"] != "differs" for r in runs)
    assert all(r["cpu_s"] > 0 and r["wall_s"] > 0 and r["peak_rss_bytes"] > 0 for r in runs)


def test_the_block_follows_the_figures() -> None:
    def run(label: str, cpu: float, output: str) -> cp.Run:
        return cp.Run(
            label=label,
            cpu_s=cpu,
            wall_s=10.0,
            peak_rss_bytes=2_500_000_000,
            others_cpu_s=0.5,
            output=output,
        )

    runs = [
        run("f", 96.0, "reference"),
        run("b", 64.0, "the same bytes"),
        run("g", 80.0, "the same perturbations"),
    ]
    text = cp.blocks(runs)["coco-precision"]
    assert "| f | 96.0 | 6.0 | 10.0 | 2.5 GB |  |" in text
    assert "| b | 64.0 | 4.0 | 10.0 | 2.5 GB | the same bytes |" in text
    cost = cp.blocks(runs)["coco-cost"]
    assert "80.0 CPU-seconds graded, 5.0 a sentence" in cost and "96.0 in float32" in cost
    assert "the target of 5 is met" in cost
    over = cp.blocks([run("f", 96.0, "reference"), run("b", 64.0, "x"), run("g", 81.0, "x")])
    assert "the target of 5 is not met" in over["coco-cost"]
