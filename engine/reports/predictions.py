"""What each probe predicts on a sentence, in the compact form result rows store.

The HTML report draws the probes' predicted trees, depths and tags on the clean and on
the perturbed sentence. An attack computes them once per sentence, after its search,
and stores them in the sentence's ``results.jsonl`` row (``predictions``), so
``brittle report`` rebuilds the page without loading the model. One value per probe
task (see :func:`compact_prediction`):

===========================  =================================================
probe task                   stored value
===========================  =================================================
distance, perceptron         ``heads`` of the minimum spanning tree of the
                             predicted distances: int (n,), 1-based, 0 for the
                             tree's root, -1 for punctuation (left out of the
                             tree, as UUAS leaves it out)
depth                        ``depths``: predicted depth of each word (n,),
                             rounded to 2 decimals
pos                          ``tags``: predicted tag of each word (n,)
root                         ``root``: 0-based index of the most likely root
tree-depth                   ``tree_depth``: the predicted class label
===========================  =================================================

The spanning tree is the one UUAS scores (Prim over the non-punctuation words),
rooted at the gold root word when it is not punctuation, else at the first word kept;
its edges are undirected, the rooting only makes them a heads array.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from brittle.engine.core.json_types import JSONObject, JSONValue
from brittle.engine.core.sentence import Sentence
from brittle.scorers.mst import minimum_spanning_tree

__all__ = [
    "PredictingEvaluator",
    "compact_prediction",
    "row_predictions",
    "spanning_tree_heads",
]

#: Decimals kept of predicted depths.
DEPTH_DECIMALS = 2


@runtime_checkable
class PredictingEvaluator(Protocol):
    """An evaluator that can say what its probes predict (the attack's probes can),
    reusing what it predicted while scoring."""

    def predictions(self, sentences: Sequence[Sentence]) -> list[dict[str, JSONValue]]:
        """Per sentence, each probe's compact prediction keyed by the probe's column
        prefix (``distance``, ``pos``, ``distance#2``...)."""
        ...

    def forget_predictions(self) -> None:
        """Drop the predictions kept from scoring (at the start of every chunk)."""
        ...


def spanning_tree_heads(
    distances: NDArray[np.floating], punct: NDArray[np.bool_], root: int
) -> list[int]:
    """The minimum spanning tree of predicted distances as a heads array.

    Args:
        distances: float (n, n) predicted (squared) distances.
        punct: bool (n,) words left out of the tree.
        root: 0-based word the tree is rooted at when it is kept.

    Returns:
        n ints: 1-based head of each kept word, 0 for the root, -1 for a word left out.
    """
    n = int(distances.shape[0])
    keep = np.flatnonzero(~np.asarray(punct, dtype=bool))
    heads = [-1] * n
    if keep.shape[0] == 0:
        return heads
    if keep.shape[0] == 1:
        heads[int(keep[0])] = 0
        return heads
    d = np.asarray(distances, dtype=np.float64)
    d = np.nan_to_num(d[np.ix_(keep, keep)], nan=0.0, posinf=1e30, neginf=0.0)
    parent = minimum_spanning_tree(d)
    neighbours: dict[int, list[int]] = {int(k): [] for k in keep}
    for c in np.flatnonzero(parent >= 0):
        a, b = int(keep[c]), int(keep[parent[c]])
        neighbours[a].append(b)
        neighbours[b].append(a)
    start = root if root in neighbours else int(keep[0])
    heads[start] = 0
    queue = deque([start])
    while queue:
        u = queue.popleft()
        for v in sorted(neighbours[u]):
            if heads[v] == -1 and v != start:
                heads[v] = u + 1
                queue.append(v)
    return heads


def compact_prediction(
    task: str,
    prediction: NDArray[np.floating] | NDArray[np.integer],
    sentence: Sentence,
    labels: Sequence[str],
) -> JSONValue:
    """One probe's prediction on ``sentence`` as stored in a result row (module doc);
    ``None`` for a task the report does not draw.

    Args:
        task: the probe's task name.
        prediction: what :meth:`~brittle.scorers.probe.Probe.predict` returned for the
            sentence (distances (n, n), depths (n,), tag ids (n,), root probabilities
            (n,) or class probabilities (classes,)).
        sentence: the sentence predicted (its gold tree roots the spanning tree).
        labels: the probe's labels (tags of a pos probe, classes of a tree-depth one).
    """
    p = np.asarray(prediction)
    if task in ("distance", "perceptron") and p.ndim == 2:
        punct = np.fromiter((u == "PUNCT" for u in sentence.upos), dtype=bool, count=len(sentence))
        heads: list[JSONValue] = [*spanning_tree_heads(p, punct, sentence.root_index())]
        return {"heads": heads}
    if task == "depth" and p.ndim == 1:
        depths: list[JSONValue] = [round(float(x), DEPTH_DECIMALS) for x in p.tolist()]
        return {"depths": depths}
    if task == "pos" and p.ndim == 1:
        tags: list[JSONValue] = [labels[int(i)] if 0 <= int(i) < len(labels) else "?" for i in p]
        return {"tags": tags}
    if task == "root" and p.ndim == 1 and p.size:
        return {"root": int(np.argmax(p))}
    if task == "tree-depth" and p.ndim == 1 and p.size:
        k = int(np.argmax(p))
        return {"tree_depth": labels[k] if k < len(labels) else str(k)}
    return None


def row_predictions(
    evaluator: PredictingEvaluator, pairs: Sequence[tuple[Sentence, Sentence]]
) -> list[JSONObject]:
    """The ``predictions`` field of the rows of ``(clean, perturbed)`` sentence pairs.

    Each probe maps to ``{"clean": ..., "perturbed": ...}``; ``perturbed`` is left out
    when the perturbed sentence has the clean one's words (nothing was changed). Every
    sentence goes through the model in one batched call.
    """
    sentences: list[Sentence] = []
    for clean, perturbed in pairs:
        sentences.append(clean)
        if perturbed.forms != clean.forms:
            sentences.append(perturbed)
    predicted = iter(evaluator.predictions(sentences))
    out: list[JSONObject] = []
    for clean, perturbed in pairs:
        before = next(predicted)
        after = next(predicted) if perturbed.forms != clean.forms else None
        row: JSONObject = {}
        for name, value in before.items():
            entry: JSONObject = {"clean": value}
            if after is not None:
                entry["perturbed"] = after.get(name)
            row[name] = entry
        out.append(row)
    return out
