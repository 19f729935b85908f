"""docs/probes.md: its results and layer tables are their scripts' output.

The results on UD English (``bench/probe_results.py``), the MiniLM layer table
(``bench/layer_linear_info.py``) and SmolLM2's layer curves
(``bench/probe_layers_smollm2.py``) are rendered again from the JSON each script keeps
in docs/ and must equal the page's generated blocks byte for byte.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from support import generated_blocks

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import layer_linear_info as lli  # noqa: E402
import probe_layers_smollm2 as pls  # noqa: E402
import probe_results as pr  # noqa: E402

DOC = ROOT / "docs" / "probes.md"


def kept(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_the_page_holds_the_scripts_tables() -> None:
    page = generated_blocks(DOC.read_text(encoding="utf-8"))
    assert page == {
        **pr.blocks(kept(pr.MEASURED)),
        **lli.blocks(kept(lli.MEASURED)),
        **pls.blocks_of(kept(pls.MEASURED)),
    }


def test_the_results_cover_every_task_on_every_representation_on_ewt_test() -> None:
    data = kept(pr.MEASURED)
    assert data["treebank"] == "en_ewt-ud-test.conllu" and data["sentences"] == 2077
    assert [(r["representation"], r["task"], r["architecture"]) for r in data["rows"]] == [
        (row.representation, row.task, row.architecture) for row in pr.ROWS
    ]
    assert set(data["baselines"]) == {"path", "majority"}


def test_the_layer_table_covers_every_hidden_state_of_minilm() -> None:
    data = kept(lli.MEASURED)
    assert data["sentences"] == 600 and data["treebank"] == "en_lines-ud-dev.conllu"
    assert [r["layer"] for r in data["layers"]] == list(range(7))
    assert [r["from_out"] for r in data["layers"]] == list(range(-7, 0))


def test_the_smollm2_curves_are_every_third_hidden_state() -> None:
    probes = kept(pls.MEASURED)["probes"].values()
    std = sorted(
        int(p["representation"]["layer"]) for p in probes if p["path"].startswith("smollm2-depth")
    )
    assert std == list(range(0, pls.LAYERS + 1, 3))
