"""Probes and other targets scored on the same candidates, as one evaluator.

The attack searches one objective over the columns of every part (``distance.uuas``,
``pos.pos_acc``, ``parser.uas``...), so a parser and the probes are compared on the
very perturbations the search kept. The representation distances (epsilon) come from
the first part that measures them (the probes); without probes they are NaN and the
rows say nothing of epsilon.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from brittle.engine.core.json_types import JSONValue
from brittle.engine.core.sentence import Sentence
from brittle.engine.reports.predictions import PredictingEvaluator
from brittle.search.scoring import Evaluation, Request, TaskEvaluator

__all__ = ["CombinedEvaluator", "CombinedPredictor"]


class CombinedEvaluator:
    """The columns of several evaluators side by side, in order.

    Args:
        parts: the evaluators (at least one); their column names must not overlap.
    """

    def __init__(self, parts: Sequence[TaskEvaluator]) -> None:
        if not parts:
            raise ValueError("a combined evaluator needs at least one part")
        self.parts = tuple(parts)
        names = [t for p in self.parts for t in p.tasks]
        if len(set(names)) != len(names):
            raise ValueError(f"the parts' columns overlap: {names}")

    @property
    def tasks(self) -> tuple[str, ...]:
        """Every part's columns, in part order."""
        return tuple(t for p in self.parts for t in p.tasks)

    @property
    def primary(self) -> tuple[str, ...]:
        """Every part's primary columns, in part order."""
        return tuple(t for p in self.parts for t in p.primary)

    def evaluate(
        self,
        original: Sentence,
        candidates: Sequence[Sentence],
        alignments: Sequence[NDArray[np.int64] | None],
    ) -> Evaluation:
        """Every part's metrics of the candidates, side by side (m, tasks)."""
        return self.evaluate_many([(original, candidates, alignments)])[0]

    def evaluate_many(self, requests: Sequence[Request]) -> list[Evaluation]:
        """Each part's :meth:`evaluate_many` on the same requests, joined per request;
        L2 and cosine of the first part whose are not NaN."""
        per_part = [p.evaluate_many(requests) for p in self.parts]
        out: list[Evaluation] = []
        for k in range(len(requests)):
            found = [evaluations[k] for evaluations in per_part]
            metrics = np.concatenate([e.metrics for e in found], axis=1)
            measured = [e for e in found if e.l2.size and not np.isnan(e.l2).all()]
            source = measured[0] if measured else found[0]
            out.append(Evaluation(metrics, source.l2, source.cosine))
        return out


class CombinedPredictor:
    """What several predictors predict, each under its own keys, merged per sentence."""

    def __init__(self, parts: Sequence[PredictingEvaluator]) -> None:
        self.parts = tuple(parts)

    def predictions(self, sentences: Sequence[Sentence]) -> list[dict[str, JSONValue]]:
        """Per sentence, every part's entries (the probes' first)."""
        merged: list[dict[str, JSONValue]] = [{} for _ in sentences]
        for part in self.parts:
            for into, found in zip(merged, part.predictions(sentences), strict=True):
                into.update(found)
        return merged

    def forget_predictions(self) -> None:
        """Every part forgets."""
        for part in self.parts:
            part.forget_predictions()
