"""Shared by the tests: paths of the real treebanks (when present) and the fixtures."""

from __future__ import annotations

import re
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


def train_static_probe(base: Path) -> Path:
    """A real root probe trained on a three-word static vectors file in ``base`` (a
    couple of seconds, data home under ``base``): what a probe directory holds, for
    the tests of commands that read one. Returns the probe directory."""
    from click.testing import CliRunner

    from brittle.cli.main import main

    vectors = base / "v.txt"
    vectors.write_text("3 4\nthe 1 0 0 0\ncat 0 1 0 0\nsat 0 0 1 0\n")
    out = base / "root"
    treebank = str(ROOT / "data" / "default.conllu")
    args = ["train-probe", treebank, "--dev", treebank, "--out", str(out)]
    args += ["--model", str(vectors), "--task", "root", "--epochs", "1", "--quiet"]
    result = CliRunner(env={"BRITTLE_HOME": str(base / "home")}).invoke(main, args)
    assert result.exit_code == 0, result.output
    return out


#: A generated block of a page: ``<!-- generated: NAME -->`` ... ``<!-- end generated -->``.
GENERATED_BLOCK = re.compile(r"<!-- generated: (\S+) -->\n(.*?)<!-- end generated -->", re.S)


def generated_blocks(text: str) -> dict[str, str]:
    """The generated blocks of a Markdown page, by name."""
    return dict(GENERATED_BLOCK.findall(text))


def tables_outside_blocks(text: str) -> list[str]:
    """The Markdown table rows of a page outside its generated blocks and code fences."""
    rest = re.sub(r"```.*?```", "", GENERATED_BLOCK.sub("", text), flags=re.S)
    return [line for line in rest.splitlines() if re.fullmatch(r"\s*\|.*\|\s*", line)]
