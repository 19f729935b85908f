"""docs/performance.md's attack memory table is bench/attack_memory.py's output.

It is rendered again from ``docs/attack-memory.json`` and must equal the page's
generated block byte for byte; the kept runs are the first 100 sentences of EWT test
and the whole file, and the whole run's ``adversarial.conllu`` begins with the shorter
run's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from support import generated_blocks

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import attack_memory as am  # noqa: E402
import perturb_memory as pm  # noqa: E402


def kept() -> pm.Figures:
    data: pm.Figures = json.loads(am.MEASURED.read_text(encoding="utf-8"))
    return data


def test_the_page_holds_the_table() -> None:
    page = generated_blocks(am.DOC.read_text(encoding="utf-8"))
    assert page["attack-memory"] == pm.blocks(kept(), "attack-memory")["attack-memory"]


def test_the_runs_are_the_first_100_sentences_and_the_whole_file() -> None:
    data = kept()
    assert [r["sentences"] for r in data["runs"]] == [100, 2077]
    assert data["treebank"] == am.TEST.name and data["same_start"]
    assert data["command"].startswith("brittle attack ") and "$P/minilm-5-pos" in data["command"]
    assert all(r["peak_bytes"] > 0 and r["seconds"] > 0 for r in data["runs"])


def test_a_directory_run_is_counted_by_its_adversarial_conllu(tmp_path: Path) -> None:
    out = tmp_path / "attack"
    out.mkdir()
    assert pm.written(out) == out / "adversarial.conllu"
    assert pm.written(tmp_path / "perturbed.conllu") == tmp_path / "perturbed.conllu"
