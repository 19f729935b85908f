"""Shared by the tests: paths of the real treebanks (when present) and the fixtures."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED_UD = ROOT.parent / "shared" / "data" / "ud"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
EWT_TEST = SHARED_UD / "UD_English-EWT" / "en_ewt-ud-test.conllu"


def shared_treebanks() -> list[Path]:
    """Every CoNLL-U file of ../shared/data/ud (empty when it is absent)."""
    if not SHARED_UD.is_dir():
        return []
    return sorted(SHARED_UD.glob("*/*.conllu"))
