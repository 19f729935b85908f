"""A dependency parser as an attack's target: its attachment score against the gold tree.

A perturbation that keeps the gold tree (the ``tree`` and ``grammatical`` presets keep it
by construction) leaves the parser nothing to get wrong that it got right before; the
search looks for the one that most lowers the parser's unlabelled attachment score.
UAS here is the share of words (punctuation included, as in the CoNLL 2018 shared
task's evaluation) whose predicted head is the gold head the perturbation kept. Only
UAS is measured: spaCy's English pipelines label with their own scheme, not UD's, so a
labelled score against UD gold would not mean what it says.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from brittle.engine.core.errors import ConfigError
from brittle.engine.core.json_types import JSONValue
from brittle.engine.core.sentence import Sentence
from brittle.scorers.parsers.base import PARSERS, Parser
from brittle.search.scoring import Evaluation, Request

__all__ = ["PARSER_PREFIX", "ParserTarget", "attachment_scores", "target_parser"]

#: The column prefix of a parser target (``parser.uas``).
PARSER_PREFIX = "parser"


def target_parser(spec: str) -> str:
    """The registered parser ``--target parser:NAME`` names.

    Raises:
        ConfigError: not of that form, or no such parser (the message lists them).
    """
    kind, _, name = spec.partition(":")
    if kind != PARSER_PREFIX or not name:
        raise ConfigError(f"--target {spec!r}: expected parser:NAME (e.g. parser:spacy)")
    PARSERS.get(name)  # an unknown name fails here, with the known ones listed
    return name


def attachment_scores(
    predicted: Sequence[NDArray[np.int32]], gold: Sequence[NDArray[np.int32]]
) -> NDArray[np.float64]:
    """Unlabelled attachment score of each sentence, shape (m,): the share of its words
    whose predicted 1-based head (0: the root) is the gold one (1.0 for no word)."""
    out = np.ones(len(predicted), dtype=np.float64)
    for i, (p, g) in enumerate(zip(predicted, gold, strict=True)):
        if p.shape != g.shape:
            raise ValueError(f"a parse of {p.shape[0]} words for a sentence of {g.shape[0]}")
        if g.size:
            out[i] = float(np.count_nonzero(p == g)) / g.size
    return out


class ParserTarget:
    """The :class:`~brittle.search.scoring.TaskEvaluator` of a parser: one column,
    ``parser.uas``, against each candidate's own gold heads (the original's, carried
    over; renumbered for a reordering). It measures no representation, so its L2 and
    cosine are NaN.

    Args:
        parser: gives the parser at the first call (an attack shares the parse-based
            constraints' parser when it is the same one, and with it their parses).
        name: the parser's registered name, for the reports.
    """

    tasks: tuple[str, ...] = (f"{PARSER_PREFIX}.uas",)
    primary: tuple[str, ...] = (f"{PARSER_PREFIX}.uas",)

    def __init__(self, parser: Callable[[], Parser], name: str) -> None:
        self.parser = parser
        self.name = name

    def evaluate(
        self,
        original: Sentence,
        candidates: Sequence[Sentence],
        alignments: Sequence[NDArray[np.int64] | None],
    ) -> Evaluation:
        """UAS of each candidate, shape (m, 1); L2 and cosine NaN."""
        return self.evaluate_many([(original, candidates, alignments)])[0]

    def predictions(self, sentences: Sequence[Sentence]) -> list[dict[str, JSONValue]]:
        """The parser's heads on each sentence, ``{"parser": {"heads": [...]}}`` (1-based,
        0 for the root), as a row stores a probe's tree: the HTML report draws it."""
        parses = self.parser().parse(sentences) if sentences else []
        return [{PARSER_PREFIX: {"heads": [int(h) for h in p.heads]}} for p in parses]

    def forget_predictions(self) -> None:
        """Nothing to forget: the parses are the parser's own cache's."""

    def evaluate_many(self, requests: Sequence[Request]) -> list[Evaluation]:
        """:meth:`evaluate` of several requests, every candidate parsed in one call."""
        candidates = [c for _, cands, _ in requests for c in cands]
        parses = self.parser().parse(candidates) if candidates else []
        scores = attachment_scores([p.heads for p in parses], [c.heads for c in candidates])
        out: list[Evaluation] = []
        start = 0
        for _, cands, _ in requests:
            m = len(cands)
            none = np.full(m, np.nan)
            out.append(Evaluation(scores[start : start + m, None], none, none.copy()))
            start += m
        return out
