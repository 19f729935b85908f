"""Sentences cut to their first words, with a tree over the words kept.

La Malfa et al. feed their probes a fixed-size input: each sentence is cut to its first
20 words or padded to 20 (their appendix B). Padding belongs to the probe (the
``sentence`` architecture pads its input); cutting changes the data, so it is done here,
on the treebank, and every command then reads the cut file as any other.

A cut keeps the kept words' own arcs wherever it can. A word whose head was cut away is
attached to its nearest kept ancestor, with the relation ``dep`` (the original relation
named an arc that no longer exists). When the root itself was cut away, the kept words
whose every ancestor was cut hang under one of them, the shallowest (the first of equal
depth), which becomes the root. The result is a tree: every new head is an ancestor in
the original tree, or the new root.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from brittle.engine.core import tree
from brittle.engine.core.sentence import Sentence, Token

__all__ = ["CutCount", "CutTree", "cut_heads", "cut_sentence", "cut_treebank"]

#: The relation of a word attached to an ancestor other than its head.
REATTACHED = "dep"


@dataclass(frozen=True)
class CutTree:
    """The tree over a sentence's first words.

    Attributes:
        heads: HEAD of each kept word, shape (k,), int32, 1-based, 0 for the root.
        reattached: shape (k,), bool; True where the head is not the original one.
    """

    heads: NDArray[np.int32]
    reattached: NDArray[np.bool_]


def cut_heads(heads: NDArray[np.integer], words: int) -> CutTree:
    """The tree over the first ``words`` words of a tree (see the module docstring).

    Args:
        heads: HEAD array of a valid tree, shape (n,), 1-based, 0 for the root.
        words: how many words to keep, at least 1.

    Returns:
        The kept words' heads; the same heads when ``words >= n``.
    """
    if words < 1:
        raise ValueError(f"a cut keeps at least one word, got {words}")
    h = tree.validate_heads(heads)
    k = min(words, int(h.shape[0]))
    out = np.empty(k, dtype=np.int32)
    orphans: list[int] = []
    for i in range(k):
        up = int(h[i])
        while up > k:  # climb until a kept ancestor or the (cut) root
            up = int(h[up - 1])
        out[i] = up
        if up == 0 and h[i] != 0:
            orphans.append(i)
    if orphans:  # the root was cut away: the shallowest orphan becomes the root
        depth = tree.depths(h)
        new_root = min(orphans, key=lambda i: (int(depth[i]), i))
        for i in orphans:
            out[i] = 0 if i == new_root else new_root + 1
    return CutTree(out, out != h[:k])


def cut_sentence(sentence: Sentence, words: int) -> Sentence:
    """``sentence`` cut to its first ``words`` words (itself when it has no more).

    Word lines past the cut go, with the multiword tokens that reach past it and every
    empty node (their enhanced arcs may point past the cut; ``DEPS`` is cleared for the
    same reason). Reattached words get the relation ``dep``, a new root ``root``. The
    ``# text`` comment, where there is one, is rebuilt from the tokens kept, and
    ``# cut_from`` records the original length in words.

    Raises:
        ValueError: ``words`` is below 1.
    """
    if words < 1:
        raise ValueError(f"a cut keeps at least one word, got {words}")
    if len(sentence) <= words:
        return sentence
    return _with_cut(sentence, cut_heads(sentence.heads, words), words)


def _with_cut(sentence: Sentence, cut: CutTree, words: int) -> Sentence:
    """``sentence`` (longer than ``words``) rewritten over ``cut``, its first words' tree."""
    rows: list[Token] = []
    word = 0
    for tok in sentence.rows:
        kind = tok.kind
        if kind == "empty" or tok.span[1] > words:
            continue
        if kind == "word":
            head = int(cut.heads[word])
            deprel = tok.deprel
            if cut.reattached[word]:
                deprel = "root" if head == 0 else REATTACHED
            tok = replace(tok, head=str(head), deprel=deprel, deps="_")
            word += 1
        rows.append(tok)
    out = Sentence(sentence.sent_id, sentence.comments, tuple(rows), sentence.source, sentence.line)
    items = {"cut_from": str(len(sentence))}
    if "text" in sentence.metadata:
        items = {"text": out.surface_text(), **items}
    return out.with_metadata_items(items)


@dataclass
class CutCount:
    """What :func:`cut_treebank` did, filled as it streams.

    Attributes:
        sentences: sentences read.
        cut: sentences longer than the cut.
        reattached: kept words whose head was cut away (new roots included).
        new_roots: sentences whose root was cut away.
    """

    sentences: int = 0
    cut: int = 0
    reattached: int = 0
    new_roots: int = 0


def cut_treebank(
    sentences: Iterable[Sentence], words: int, count: CutCount | None = None
) -> Iterator[Sentence]:
    """:func:`cut_sentence` over a stream of sentences, counting into ``count``."""
    if words < 1:
        raise ValueError(f"a cut keeps at least one word, got {words}")
    tally = count if count is not None else CutCount()
    for sentence in sentences:
        tally.sentences += 1
        if len(sentence) <= words:
            yield sentence
            continue
        cut = cut_heads(sentence.heads, words)
        tally.cut += 1
        tally.reattached += int(cut.reattached.sum())
        tally.new_roots += int(sentence.root_index() >= words)
        yield _with_cut(sentence, cut, words)
