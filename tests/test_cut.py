"""Sentences cut to their first words (``brittle cut``), with a tree over what is kept."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st
from scorers_reference import examples, heads_arrays

from brittle.cli.main import main
from brittle.engine.core import tree
from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.cut import CutCount, cut_heads, cut_sentence, cut_treebank

from support import EWT_TEST, FIXTURES


def ancestors(heads: np.ndarray, i: int) -> list[int]:
    """1-based ancestors of 0-based word ``i``, nearest first (0 excluded)."""
    out = []
    up = int(heads[i])
    while up:
        out.append(up)
        up = int(heads[up - 1])
    return out


@examples(400)
@given(heads=heads_arrays(min_words=1, max_words=14), words=st.integers(1, 16))
def test_a_cut_is_a_tree_that_keeps_every_arc_it_can(heads: np.ndarray, words: int) -> None:
    cut = cut_heads(heads, words)
    k = min(words, heads.shape[0])
    assert cut.heads.shape == (k,)
    assert tree.tree_problems(cut.heads) == []
    root = tree.root_index(heads)
    for i in range(k):
        kept = [a for a in ancestors(heads, i) if a <= k]
        if heads[i] <= k:  # the head is kept: the arc is too
            assert cut.heads[i] == heads[i] and not cut.reattached[i]
        elif kept:  # hung from the nearest kept ancestor
            assert cut.heads[i] == kept[0] and cut.reattached[i]
        else:  # every ancestor was cut: under the new root, or the new root itself
            assert root >= k
            new_root = tree.root_index(cut.heads)
            assert cut.heads[i] == (0 if i == new_root else new_root + 1)
    if root < k:
        assert tree.root_index(cut.heads) == root
    else:  # the new root is the shallowest word whose every ancestor was cut
        depth = tree.depths(heads)
        orphans = [i for i in range(k) if not [a for a in ancestors(heads, i) if a <= k]]
        assert tree.root_index(cut.heads) == min(orphans, key=lambda i: (depth[i], i))


def test_a_cut_keeps_at_least_one_word() -> None:
    with pytest.raises(ValueError, match="at least one word"):
        cut_heads(np.array([0]), 0)


def test_real_sentences_cut_to_valid_conllu(tmp_path: Path, ewt_test: Path) -> None:
    """Every EWT test sentence cut to 8 words reads back as a valid tree whose words,
    columns and multiword tokens are the original's first 8."""
    original = read_conllu(ewt_test)
    count = CutCount()
    out = tmp_path / "cut.conllu"
    runner = CliRunner()
    result = runner.invoke(main, ["cut", str(ewt_test), "--words", "8", "--out", str(out)])
    assert result.exit_code == 0, result.output
    back = read_conllu(out)
    list(cut_treebank(original, 8, count))
    assert f"{count.cut:,} cut to 8 words" in result.output
    assert count.new_roots > 0 and count.reattached > count.new_roots
    assert len(back) == len(original) == count.sentences
    for before, after in zip(original, back, strict=True):
        assert after.sent_id == before.sent_id
        k = min(len(before), 8)
        assert after.forms == before.forms[:k]
        assert after.upos == before.upos[:k]
        if len(before) <= 8:
            assert after.to_conllu() == before.to_conllu()
            continue
        assert after.metadata["cut_from"] == str(len(before))
        assert after.metadata["text"] == after.surface_text()
        assert before.text.startswith(after.metadata["text"].rstrip(" "))
        assert all(t.span[1] <= 8 and t.kind != "empty" for t in after.rows)
        for i, (h, rel) in enumerate(zip(after.heads, after.deprels, strict=True)):
            if before.heads[i] <= 8:
                assert (h, rel) == (before.heads[i], before.deprels[i])
            else:
                assert rel in ("dep", "root")


def test_a_short_sentence_is_the_same_object(ewt_test: Path) -> None:
    sentence = read_conllu(ewt_test)[0]
    assert cut_sentence(sentence, len(sentence)) is sentence


def test_cut_refuses_to_replace_its_input(tmp_path: Path) -> None:
    treebank = tmp_path / "t.conllu"
    treebank.write_bytes(EWT_TEST.read_bytes()[:4000].rsplit(b"\n\n", 1)[0] + b"\n\n")
    before = treebank.read_bytes()
    result = CliRunner().invoke(main, ["cut", str(treebank), "--out", str(treebank)])
    assert result.exit_code == 2
    assert "--out" in result.output and "Traceback" not in result.output
    assert treebank.read_bytes() == before


def test_multiword_tokens_and_empty_nodes_at_the_cut() -> None:
    """A multiword token split by the cut goes and its first word stays; empty nodes and
    DEPS go (their enhanced arcs could point past the cut)."""
    first, second, _ = read_conllu(FIXTURES / "mwt_empty.conllu")
    one = cut_sentence(first, 2)
    assert [t.id for t in one.rows] == ["1", "2"]
    assert one.heads.tolist() == [0, 1]  # "like" was the root: "I" takes its place
    assert one.deprels == ("root", "dep")
    assert one.metadata["text"] == "I do"
    kept = cut_sentence(first, 4)
    assert [t.id for t in kept.rows] == ["1", "2-3", "2", "3", "4"]
    assert kept.metadata["text"] == "I don't like"
    two = cut_sentence(second, 6)
    assert all(t.kind == "word" and t.deps == "_" for t in two.rows)
    assert two.heads.tolist() == second.heads.tolist()[:6]
    assert two.metadata["cut_from"] == "7"
