"""Slow, obviously right references of the scorer kernels.

The tests compare every kernel of :mod:`brittle.scorers` with one of these on many
random inputs, and ``brittle bench`` measures each kernel beside its reference in the
same run. They are plain Python on purpose: each follows its definition line by line,
so that agreeing with it means being right. The tree edit distance reference is the
``apted`` package (Pawlik & Augsten's algorithm), installed with the ``bench`` extra.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeAlias

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "Heads",
    "apted_distance",
    "apted_tree",
    "dnd_ref",
    "hamming_ref",
    "idc_ref",
    "random_heads",
]

#: A HEAD array: a list of ints or an integer array (0 = root, words 1..n).
Heads: TypeAlias = "Sequence[int] | NDArray[np.integer]"


def random_heads(rng: np.random.Generator, n: int) -> NDArray[np.int64]:
    """A random single-rooted HEAD array of ``n`` words, int64 (n,)."""
    order = rng.permutation(n) + 1
    heads = np.zeros(n, dtype=np.int64)
    for pos in range(1, n):
        heads[order[pos] - 1] = order[rng.integers(0, pos)]
    return heads


def hamming_ref(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Positions where two equally long sequences differ."""
    count = 0
    for i in range(len(a)):
        if a[i] != b[i]:
            count += 1
    return count


def idc_ref(p: Sequence[int]) -> float:
    """Index displacement count of a permutation: sum of |p[j] - j| over k squared."""
    k = len(p)
    if k == 0:
        return 0.0
    return sum(abs(p[j] - j) for j in range(k)) / (k * k)


def dnd_ref(p: Sequence[int]) -> float:
    """Displacement of neighbours: share of adjacent pairs no longer adjacent in order."""
    k = len(p)
    if k <= 1:
        return 0.0
    return sum(1 for j in range(k - 1) if p[j + 1] - p[j] != 1) / (k - 1)


class _Node:
    """A node of the ordered tree handed to ``apted``."""

    def __init__(self, label: Hashable) -> None:
        self.label = label
        self.children: list[_Node] = []


def apted_tree(heads: Heads, labels: Sequence[Hashable] | None) -> _Node:
    """The ordered tree of a HEAD array: artificial root, children in word order."""
    root = _Node(("<artificial root>",))
    nodes = [root] + [
        _Node(("w", labels[i] if labels is not None else None)) for i in range(len(heads))
    ]
    for i, h in enumerate(heads):
        nodes[int(h)].children.append(nodes[i + 1])
    return root


def apted_distance(
    heads_a: Heads,
    heads_b: Heads,
    labels_a: Sequence[Hashable] | None = None,
    labels_b: Sequence[Hashable] | None = None,
    delete: float = 1.0,
    insert: float = 1.0,
    rename: float = 1.0,
) -> float:
    """Unnormalised tree edit distance of two labelled dependency trees, by ``apted``.

    Raises:
        ModuleNotFoundError: ``apted`` is not installed.
    """
    from apted import APTED, Config  # the reference implementation, imported on use

    class _Costs(Config):  # type: ignore[misc]
        valuecls = float

        def delete(self, node: _Node) -> float:
            return delete

        def insert(self, node: _Node) -> float:
            return insert

        def rename(self, a: _Node, b: _Node) -> float:
            return 0.0 if a.label == b.label else rename

        def children(self, node: _Node) -> list[_Node]:
            return node.children

    tree_a = apted_tree(heads_a, labels_a)
    tree_b = apted_tree(heads_b, labels_b)
    return float(APTED(tree_a, tree_b, _Costs()).compute_edit_distance())
