"""``brittle stats`` on untrusted input: one ``error:`` line and status 2 for a file the
reader refuses, the bad sentences counted under ``--skip-invalid``, and the same counts
as always on the real treebanks."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_conllu_structure import BASE_LINES, REJECTED

from brittle.cli.main import main
from brittle.engine.core.conllu import MAX_LINE_BYTES
from brittle.engine.evaluate.stats import treebank_stats

from support import SHARED_UD

GOOD = "\n".join(BASE_LINES) + "\n"


def _stats(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["stats", *args])
    return result.exit_code, result.output


def test_a_negative_head_is_one_error_line_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "neg.conllu"
    path.write_text(GOOD.replace("\t2\tpunct\t2:punct", "\t-1\tpunct\t2:punct"))
    code, output = _stats(str(path))
    assert code == 2
    assert output == f"error: {path}:19: HEAD '-1' is not a non-negative integer\n"


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_dev_zero_stops_at_the_line_limit() -> None:
    code, output = _stats("/dev/zero")
    assert (code, output) == (2, f"error: /dev/zero:1: line longer than {MAX_LINE_BYTES} bytes\n")


def test_a_gzip_file_says_so(tmp_path: Path) -> None:
    path = tmp_path / "ewt.conllu.gz"
    path.write_bytes(gzip.compress(GOOD.encode()))
    code, output = _stats(str(path))
    assert code == 2
    assert output.startswith(f"error: {path}:1: file is gzip-compressed") and "gunzip" in output


def _blocks(text: str) -> list[str]:
    """The sentence blocks of a file's text, each ending with its blank line."""
    return [block + "\n\n" for block in text.strip("\n").split("\n\n")]


def test_skip_invalid_counts_every_kind_of_bad_structure(tmp_path: Path) -> None:
    """One file with the first, bad sentence of every rejected case (each renamed so
    that IDs do not repeat) between good ones: only the good ones are counted."""
    bad = []
    for k, (name, text, line, _) in enumerate(REJECTED):
        if name == "repeated sent_id":
            continue
        block = _blocks(text)[0 if line < 15 else 1]  # the second sentence starts on 15
        bad.append(re.sub(r"# sent_id = s[12]", f"# sent_id = bad-{k}", block))
    first, second = _blocks(GOOD)
    again = second.replace("# sent_id = s2", "# sent_id = s1")
    path = tmp_path / "mixed.conllu"
    path.write_text("".join([first, *bad, second, again]))
    with pytest.warns(UserWarning, match="skipped invalid sentence"):
        stats = treebank_stats([path], skip_invalid=True)
    assert stats.sentences == 2
    assert len(stats.problems) == len(bad) + 1  # and the repeated s1 at the end
    assert stats.problems[-1].endswith("sent_id 's1' repeats the one on line 1")
    code, output = _stats("--skip-invalid", "--json", str(tmp_path / "s.json"), str(path))
    assert code == 0, output
    assert f"{len(bad) + 1} invalid sentence(s) skipped" in output
    data = json.loads((tmp_path / "s.json").read_text())
    assert data["sentences"] == 2 and data["problems"] == list(stats.problems)
    code, output = _stats(str(path))
    assert code == 2 and output.count("\n") == 1 and output.startswith("error: ")


# What `brittle stats` reported on the shared treebanks before the reader checked UD
# structure: sentences, words, multiword tokens, empty nodes, non-projective trees.
SHARED_COUNTS = {
    "UD_English-EWT/en_ewt-ud-dev.conllu": (2001, 25147, 359, 4, 31),
    "UD_English-EWT/en_ewt-ud-test.conllu": (2077, 25094, 354, 2, 26),
    "UD_English-GUM/en_gum-ud-dev.conllu": (1575, 28119, 517, 12, 54),
    "UD_English-GUM/en_gum-ud-test.conllu": (1464, 28397, 411, 15, 45),
    "UD_English-LinES/en_lines-ud-dev.conllu": (1118, 21637, 250, 0, 89),
    "UD_English-LinES/en_lines-ud-test.conllu": (1121, 19984, 228, 0, 47),
    "UD_English-LinES/en_lines-ud-train.conllu": (3457, 64684, 690, 0, 185),
}


@pytest.mark.shared
@pytest.mark.parametrize("name", sorted(SHARED_COUNTS))
def test_the_shared_treebanks_read_with_the_same_counts(name: str) -> None:
    path = SHARED_UD / name
    if not path.exists():
        pytest.skip("the shared UD treebanks are not available")
    stats = treebank_stats([path])
    found = (
        stats.sentences,
        stats.tokens,
        stats.multiword_tokens,
        stats.empty_nodes,
        stats.non_projective,
    )
    assert found == SHARED_COUNTS[name]
    assert stats.problems == ()
