"""docs/performance.md's table of coCO's re-rank is bench/coco_rerank.py's output.

It is rendered again from ``docs/coco-rerank.json`` and must equal the page's generated
block byte for byte; the kept figures are the three settings of the first 16 sentences
of GUM test, in the table's order, each proposing the same number of options.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from support import generated_blocks

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import coco_rerank as cr  # noqa: E402


def kept() -> cr.Figures:
    data: cr.Figures = json.loads(cr.MEASURED.read_text(encoding="utf-8"))
    return data


def test_the_page_holds_the_table() -> None:
    page = generated_blocks(cr.DOC.read_text(encoding="utf-8"))
    assert page["coco-rerank"] == cr.blocks(kept())["coco-rerank"]


def test_the_settings_are_the_scripts_on_the_same_sentences() -> None:
    data = kept()
    assert data["treebank"] == cr.TREEBANK.name
    assert (data["sentences"], data["top_k"]) == (cr.SENTENCES, cr.TOP_K)
    assert data["common"] == list(cr.COMMON)
    assert [(s["label"], s["options"]) for s in data["settings"]] == [
        (label, [*cr.COMMON, *own]) for label, own in cr.SETTINGS
    ]
    assert len({s["proposed"] for s in data["settings"]}) == 1
    assert all(s["cpu_seconds"] > 0 and s["wall_seconds"] > 0 for s in data["settings"])


def test_the_block_follows_the_figures() -> None:
    def setting(label: str, proposed: int, cpu: float) -> cr.Setting:
        return {
            "label": label,
            "options": [],
            "proposed": proposed,
            "cpu_seconds": cpu,
            "wall_seconds": 10.0,
            "other_cpu_seconds": 1.0,
        }

    def figures(*settings: cr.Setting) -> cr.Figures:
        return {
            "treebank": "t.conllu",
            "sentences": 4,
            "top_k": 20,
            "common": ["dtype=float32"],
            "threads": 2,
            "cores": 2,
            "load_before": 0.5,
            "load_after": 1.5,
            "settings": list(settings),
        }

    same = cr.blocks(figures(setting("a", 1000, 4.0), setting("b", 1000, 12.4)))
    text = same["coco-rerank"]
    assert "| a | 1.0 | 1.0x | 1,000 |" in text and "| b | 3.1 | 3.1x | 1,000 |" in text
    assert "propose the same 1,000 options" in text and "`-o dtype=float32`" in text
    assert "(20 s), other processes took 10% of one core" in text
    differ = cr.blocks(figures(setting("a", 1000, 4.0), setting("b", 999, 8.0)))
    assert "not the same number of options (1,000, 999)" in differ["coco-rerank"]
