"""The embedded default treebank: well-formed CoNLL-U, valid UD, usable trees."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import conllu
import pytest

from brittle.data import default_treebank_path


def _sentences() -> list[conllu.TokenList]:
    text = default_treebank_path().read_text(encoding="utf-8")
    return conllu.parse(text)


def _words(sentence: conllu.TokenList) -> list[dict]:
    """Syntactic words only: no multiword-token ranges, no empty nodes."""
    return [tok for tok in sentence if isinstance(tok["id"], int)]


def _space_after(tok: dict) -> bool:
    misc = tok.get("misc") or {}
    return misc.get("SpaceAfter") != "No"


def _reconstruct(sentence: conllu.TokenList) -> str:
    """Surface text from the forms and SpaceAfter=No; an MWT line stands for its words."""
    out: list[str] = []
    skip_until = 0
    for tok in sentence:
        tid = tok["id"]
        if isinstance(tid, tuple):
            if tid[1] == "-":
                out.append(tok["form"])
                if _space_after(tok):
                    out.append(" ")
                skip_until = tid[2]
            continue  # empty nodes have no surface form
        if tid <= skip_until:
            continue
        out.append(tok["form"])
        if _space_after(tok):
            out.append(" ")
    return "".join(out).rstrip(" ")


def test_file_is_clean_utf8_lf_with_one_trailing_blank_line() -> None:
    raw = default_treebank_path().read_bytes()
    assert not raw.startswith(b"\xef\xbb\xbf"), "no byte-order mark"
    assert b"\r" not in raw, "LF line endings only"
    raw.decode("utf-8")
    assert raw.endswith(b"\n\n") and not raw.endswith(b"\n\n\n")


def test_parses_with_enough_sentences_and_unique_ids() -> None:
    sentences = _sentences()
    assert len(sentences) >= 100
    ids = []
    for sentence in sentences:
        assert "sent_id" in sentence.metadata
        assert sentence.metadata.get("text")
        ids.append(sentence.metadata["sent_id"])
    assert len(ids) == len(set(ids))


def test_all_ten_columns_are_filled() -> None:
    for sentence in _sentences():
        for tok in _words(sentence):
            for field in ("form", "lemma", "upos", "xpos", "deprel"):
                assert tok[field], (sentence.metadata["sent_id"], tok["id"], field)
            assert tok["head"] is not None


def test_text_matches_forms_and_spaceafter() -> None:
    for sentence in _sentences():
        assert _reconstruct(sentence) == sentence.metadata["text"], sentence.metadata["sent_id"]


def test_every_tree_has_one_root_and_no_cycles() -> None:
    for sentence in _sentences():
        sid = sentence.metadata["sent_id"]
        words = _words(sentence)
        heads = {tok["id"]: tok["head"] for tok in words}
        assert sorted(heads) == list(range(1, len(words) + 1)), sid
        roots = [i for i, h in heads.items() if h == 0]
        assert len(roots) == 1, sid
        assert next(t for t in words if t["id"] == roots[0])["deprel"] == "root", sid
        for start in heads:
            seen: set[int] = set()
            node = start
            while node != 0:
                assert node not in seen, f"{sid}: cycle through {node}"
                assert node in heads, f"{sid}: head {node} does not exist"
                seen.add(node)
                node = heads[node]


def _udvalidate() -> str | None:
    local = Path(sys.executable).parent / "udvalidate"
    if local.exists():
        return str(local)
    return shutil.which("udvalidate")


def test_passes_the_ud_validator_at_level_2() -> None:
    exe = _udvalidate()
    if exe is None:
        pytest.skip("udvalidate is not installed")
    proc = subprocess.run(
        [exe, "--lang", "en", "--level", "2", str(default_treebank_path())],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
