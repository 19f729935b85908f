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


def missing_sentence_models() -> str | None:
    """Why the bundled sentence encoder or causal LM cannot be used here (``None``: both
    can), for the tests of the model-based constraints and quality measures."""
    from brittle.engine.core import resources
    from brittle.engine.core.errors import ResourceMissingError

    try:
        resources.default_encoder_path()
        resources.causal_lm_path()
    except ResourceMissingError as err:
        return str(err)
    return None
