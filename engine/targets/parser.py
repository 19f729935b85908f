"""A dependency parser as an attack's target: its attachment score against the gold tree.

A perturbation that keeps the gold tree (the ``tree`` and ``grammatical`` presets keep it
by construction) leaves the parser nothing to get wrong that it got right before; the
search looks for the one that most lowers the parser's unlabelled attachment score.
UAS here is the share of words (punctuation included, as in the CoNLL 2018 shared
task's evaluation) whose predicted head is the gold head the perturbation kept. Only
UAS is measured for a parser whose labels are not UD's (spaCy's English pipeline): a
labelled score against UD gold would not mean what it says. A parser whose
``ud_labels`` says its labels are UD's (``spacy-ud``, ``stanza``, ``gold``) also gets
``parser.las``: head and universal relation (the label before any ``:`` subtype, as
the CoNLL 2018 scorer compares them) both right.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from brittle.engine.core.errors import ConfigError
from brittle.engine.core.json_types import JSONValue
from brittle.engine.core.sentence import Sentence
from brittle.engine.reports.report import RelationBreaks
from brittle.engine.reports.results import ResultRow
from brittle.scorers.parsers.base import PARSERS, Parser
from brittle.search.scoring import Evaluation, Request

__all__ = [
    "PARSER_PREFIX",
    "ParserTarget",
    "attachment_scores",
    "parser_columns",
    "relation_breaks",
    "target_labels",
    "target_parser",
]

#: The column prefix of a parser target (``parser.uas``).
PARSER_PREFIX = "parser"


def relation_breaks(
    rows: Iterable[tuple[ResultRow, Sentence | None]],
) -> dict[str, RelationBreaks]:
    """Per gold universal relation, the words the parser attached right in the clean
    sentence and, of those, the ones it attached wrong in the kept perturbation, over
    the rows that kept a substitution and recorded the parser's heads
    (``predictions.parser``) beside their treebank sentence."""
    attached: dict[str, int] = {}
    broken: dict[str, int] = {}
    for row, sentence in rows:
        found = (row.predictions or {}).get(PARSER_PREFIX)
        if sentence is None or not row.success or row.order is not None:
            continue
        if not isinstance(found, Mapping):
            continue
        clean, perturbed = _heads(found.get("clean")), _heads(found.get("perturbed"))
        if clean is None or perturbed is None or not len(clean) == len(perturbed) == len(sentence):
            continue
        for gold, rel, before, after in zip(
            sentence.heads.tolist(), sentence.deprels, clean, perturbed, strict=True
        ):
            if before != gold:
                continue
            name = rel.split(":")[0]
            attached[name] = attached.get(name, 0) + 1
            broken[name] = broken.get(name, 0) + (after != gold)
    return {
        rel: {"attached": n, "broken": broken[rel], "share": round(broken[rel] / n, 6)}
        for rel, n in sorted(attached.items())
    }


def _heads(entry: object) -> list[int] | None:
    """The ``heads`` list of one prediction entry (``None``: not one)."""
    if not isinstance(entry, Mapping):
        return None
    heads = entry.get("heads")
    if not isinstance(heads, list) or not all(isinstance(h, int) for h in heads):
        return None
    return [int(h) for h in heads]


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


def target_labels(spec: str) -> bool:
    """Whether the parser ``--target parser:NAME`` names labels with UD's relations,
    from the parser built but not loaded; one whose trained model is missing (spacy-ud
    before ``brittle resources --train-ud-parser``) raises here, before anything runs.

    Raises:
        ConfigError: a malformed target or an unknown parser.
        ResourceMissingError: the parser's model is not there.
    """
    return PARSERS.get(target_parser(spec))().ud_labels


def attachment_scores(
    predicted: Sequence[NDArray[np.int32]],
    gold: Sequence[NDArray[np.int32]],
    labels: Sequence[tuple[Sequence[str], Sequence[str]]] | None = None,
) -> NDArray[np.float64]:
    """Attachment score of each sentence, shape (m,): the share of its words whose
    predicted 1-based head (0: the root) is the gold one (1.0 for no word); with
    ``labels`` (per sentence: predicted and gold relations) whose universal relation is
    right too (labelled)."""
    out = np.ones(len(predicted), dtype=np.float64)
    for i, (p, g) in enumerate(zip(predicted, gold, strict=True)):
        if p.shape != g.shape:
            raise ValueError(f"a parse of {p.shape[0]} words for a sentence of {g.shape[0]}")
        if not g.size:
            continue
        right = p == g
        if labels is not None:
            said, meant = labels[i]
            right &= np.array(
                [a.split(":")[0] == b.split(":")[0] for a, b in zip(said, meant, strict=True)]
            )
        out[i] = float(np.count_nonzero(right)) / g.size
    return out


def parser_columns(ud_labels: bool) -> tuple[str, ...]:
    """The columns a parser target gives: ``parser.uas``, and ``parser.las`` for a
    parser whose labels are UD's."""
    uas = f"{PARSER_PREFIX}.uas"
    return (uas, f"{PARSER_PREFIX}.las") if ud_labels else (uas,)


class ParserTarget:
    """The :class:`~brittle.search.scoring.TaskEvaluator` of a parser: ``parser.uas``
    (and ``parser.las`` for a UD-labelled one: :func:`parser_columns`) against each
    candidate's own gold tree (the original's, carried over; renumbered for a
    reordering); UAS is the primary column. It measures no representation, so its L2
    and cosine are NaN.

    Args:
        parser: gives the parser at the first call (an attack shares the parse-based
            constraints' parser when it is the same one, and with it their parses).
        ud_labels: whether its labels are UD's (``Parser.ud_labels``; then LAS too).
    """

    primary: tuple[str, ...] = (f"{PARSER_PREFIX}.uas",)

    def __init__(self, parser: Callable[[], Parser], *, ud_labels: bool) -> None:
        self.parser = parser
        self.tasks = parser_columns(ud_labels)

    def evaluate(
        self,
        original: Sentence,
        candidates: Sequence[Sentence],
        alignments: Sequence[NDArray[np.int64] | None],
    ) -> Evaluation:
        """UAS (and LAS) of each candidate, shape (m, columns); L2 and cosine NaN."""
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
        heads = [p.heads for p in parses], [c.heads for c in candidates]
        columns = [attachment_scores(*heads)]
        if len(self.tasks) > 1:
            labels = [(p.deprels, c.deprels) for p, c in zip(parses, candidates, strict=True)]
            columns.append(attachment_scores(*heads, labels))
        scores = np.column_stack(columns)
        out: list[Evaluation] = []
        start = 0
        for _, cands, _ in requests:
            m = len(cands)
            none = np.full(m, np.nan)
            out.append(Evaluation(scores[start : start + m], none, none.copy()))
            start += m
        return out
