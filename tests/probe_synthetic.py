"""Synthetic treebanks whose word vectors encode the tree exactly, for probe tests.

Word ``i`` of a sentence gets the sum of one fixed direction per edge on its path to the
root (so squared distances are tree distances and squared norms are depths), plus a
direction for its tag and one flagging the root word, plus a little noise.
"""

from __future__ import annotations

import numpy as np

from brittle.engine.probes.probe_data import ProbeData
from brittle.scorers.probe_gold import Gold

TAGS = ("NOUN", "VERB", "DET", "ADJ", "PUNCT")


def random_heads(n: int, rng: np.random.Generator) -> np.ndarray:
    """A random tree over n words (HEAD array), by attaching words in a random order."""
    order = rng.permutation(n)
    heads = np.zeros(n, dtype=np.int64)
    for k in range(1, n):
        child = order[k]
        heads[child] = order[rng.integers(0, k)] + 1
    return heads


def synthetic(
    n_sentences: int, *, seed: int, dim: int = 48, max_len: int = 12, noise: float = 0.01
) -> ProbeData:
    """A :class:`ProbeData` of random trees with tree-encoding vectors (see module doc)."""
    rng = np.random.default_rng(seed)
    basis = np.linalg.qr(np.random.default_rng(1234).standard_normal((dim, dim)))[0]
    edge_dirs = basis[:max_len]
    tag_dirs = basis[max_len : max_len + len(TAGS)]
    root_dir = basis[max_len + len(TAGS)]
    golds: list[Gold] = []
    blocks: list[np.ndarray] = []
    for _ in range(n_sentences):
        n = int(rng.integers(3, max_len + 1))
        heads = random_heads(n, rng)
        tags = [TAGS[int(t)] for t in rng.integers(0, len(TAGS), n)]
        tags[int(np.flatnonzero(heads == 0)[0])] = "VERB"
        gold = Gold.from_arrays(heads, upos=tags, xpos=tags)
        vecs = np.zeros((n, dim))
        for i in range(n):
            node = i
            while heads[node] != 0:
                vecs[i] += edge_dirs[node]
                node = int(heads[node]) - 1
            vecs[i] += tag_dirs[TAGS.index(tags[i])] * 2.0
        vecs[gold.root] += root_dir * 3.0
        vecs += rng.standard_normal(vecs.shape) * noise
        golds.append(gold)
        blocks.append(vecs.astype(np.float32))
    offsets = np.zeros(n_sentences + 1, dtype=np.int64)
    np.cumsum([b.shape[0] for b in blocks], out=offsets[1:])
    return ProbeData(np.concatenate(blocks), offsets, tuple(golds))
