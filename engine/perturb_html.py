"""``perturb --html``: one self-contained page of a ``perturb`` run, readable offline.

The page is built like an attack's ``report.html`` (:mod:`brittle.engine.html_report`:
the same head, style, script and tree drawing), with perturb's content:

- the overview, static HTML: treebank, method, budget, candidates, parser and seed;
  the summary table (counts, candidates each constraint rejected, means, quality); the
  constraints' settings; configuration, parser, quality models and versions;
- the sentence table: status, words changed, syntax distance and quality, sortable and
  filterable;
- the sentence view, on demand: original and perturbed text with the changed words
  marked, the gold tree, and the run's parser's parse of the original and of the
  perturbation (the trees the ``syntax`` constraint compared, recorded in each
  :class:`~brittle.engine.perturb_run.SentenceRecord`), edges that differ marked. With
  ``--parser gold`` nothing is re-parsed, and the page says so.

The page is a function of the run's result: the same seed gives the same bytes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from html import escape

from brittle.engine.core.atomic import output_set
from brittle.engine.core.json_types import JSONObject, JSONValue
from brittle.engine.core.sentence import Sentence
from brittle.engine.html_report import Column, LabelIndex, html_table, write_sentence_page
from brittle.engine.perturb_run import (
    GOLD_PARSER,
    PerturbResult,
    SentenceRecord,
    decode_parse,
    summary_lines,
    write_perturb_outputs,
)

__all__ = [
    "PERTURB_FILTERS",
    "PERTURB_OUTCOMES",
    "PerturbRecords",
    "perturb_columns",
    "write_perturb_page",
    "write_perturb_set",
]

#: Outcome codes of a perturb page (a record's ``ok``): the colours of an attack's
#: failed, successful and nothing-to-perturb sentences.
PERTURB_OUTCOMES = ("rejected", "perturbed", "unchanged")
_CODE = {name: code for code, name in enumerate(PERTURB_OUTCOMES)}
PERTURB_FILTERS = (
    (1, "perturbed", "perturbed"),
    (0, "rejected", "rejected by the constraints"),
    (2, "unchanged", "unchanged (no candidate drawn)"),
)


def perturb_columns(quality: bool) -> tuple[Column, ...]:
    """The sentence table's columns (the quality ones when the run measured quality)."""
    columns = [
        Column("#", "i", "int", "c-i num"),
        Column("sentence", "id", "id", "c-id"),
        Column("perturbed text", None, "text", "c-text"),
        Column("changed", "h", "int"),
        Column("syntax dist.", "sd", "3"),
    ]
    if quality:
        columns += [Column("surprisal +", "si", "2"), Column("similarity", "sim", "3")]
    columns += [Column("admissible", "ad", "int"), Column("status", "ok", "ok", "c-ok")]
    return tuple(columns)


def _rounded(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


class PerturbRecords(LabelIndex):
    """Turns a run's records and sentences into the page's compact records (labels
    interned, see :class:`~brittle.engine.html_report.LabelIndex`).

    Args:
        constraints: the run's constraint names (a record's ``rj`` follows them).
    """

    def __init__(self, constraints: list[str]) -> None:
        super().__init__()
        self.constraints = constraints

    def _parse(self, text: str | None) -> JSONValue:
        if text is None:
            return None
        heads, rels = decode_parse(text)
        return [list(heads), [self._label(r) for r in rels]]

    def record(
        self, index: int, record: SentenceRecord, original: Sentence | None, output: Sentence
    ) -> JSONObject:
        """The record of sentence ``index`` (``original``: its input sentence, when kept)."""
        words = original.forms if original is not None else output.forms
        perturbed = output.forms
        rec: JSONObject = {
            "i": index,
            "id": record.sent_id,
            "ok": _CODE[record.status],
            "h": record.hamming,
            "sd": _rounded(record.syntax),
            "si": record.surprisal_increase,
            "sim": record.similarity,
            "rt": record.retag,
            "dnd": record.dnd,
            "idc": record.idc,
            "dr": record.drawn,
            "ad": record.admissible,
            "rj": [record.rejected.get(name, 0) for name in self.constraints],
            "pd": record.perturbation,
            "w": list(words),
            "c": [[k, b] for k, (a, b) in enumerate(zip(words, perturbed, strict=False)) if a != b],
        }
        order = _order(output)
        if order is not None:
            rec["o"] = order
        if original is not None:
            rec.update(self.gold_tree(original))
        if record.parse_original is not None:
            rec["po"] = self._parse(record.parse_original)
        if record.parse_perturbed is not None:
            rec["pp"] = self._parse(record.parse_perturbed)
        return rec


def _order(output: Sentence) -> list[JSONValue] | None:
    """For a reordered sentence, the original (0-based) index of each of its words, from
    MISC ``OrigPosition``; ``None`` when no word moved."""
    moved = [t.misc_dict.get("OrigPosition") for t in output.words]
    if not any(moved):
        return None
    ids = [t.id for t in output.words]
    first = {i: k for k, i in enumerate(ids)}
    return [first.get(m or i, k) for k, (m, i) in enumerate(zip(moved, ids, strict=True))]


def _overview(result: PerturbResult) -> str:
    """The overview section: the run, its summary table, constraints and settings."""
    cfg = result.config
    summary = result.summary()
    parts = ['<section id="overview">', "<h2>Overview</h2>"]
    parser = str(result.parser.get("parser", cfg.parser))
    tau = "all" if cfg.budget >= 1_000_000 else str(cfg.budget)
    parts.append(
        f"<p>{summary['sentences']} sentences of <code>{_e(result.treebank or '(in memory)')}"
        f"</code>, method <code>{_e(cfg.method)}</code>, budget &tau; = {_e(tau)}, "
        f"b = {cfg.candidates} candidates per sentence, parser <code>{_e(parser)}</code>, "
        f"seed {cfg.seed}.</p>"
    )
    if parser == GOLD_PARSER:
        parts.append(
            '<p class="hint">With the gold parser nothing is re-parsed: the constraints read '
            "the treebank's own trees, and the sentence views draw the gold tree only.</p>"
        )
    parts.append("<h3>Summary</h3>")
    parts.append(html_table(["what", "value"], summary_lines(summary), numeric=1))
    if result.constraints:
        parts.append("<h3>Constraints</h3>")
        rows = [
            [
                str(c.get("name", "?")),
                ", ".join(f"{k}={_value(v)}" for k, v in c.items() if k != "name"),
            ]
            for c in result.constraints
        ]
        parts.append(html_table(["constraint", "settings"], rows))
    parts.append("<details><summary>Configuration and versions</summary>")
    config = cfg.to_dict()
    parts.append(html_table(["setting", "value"], _settings(config)))
    parts.append(html_table(["parser", "value"], _settings(result.parser)))
    if result.quality:
        parts.append(html_table(["quality", "value"], _settings(result.quality)))
    versions = sorted(result.versions.items())
    parts.append(html_table(["package", "version"], [[k, v] for k, v in versions]))
    parts.append("</details>")
    parts.append("</section>")
    return "\n".join(parts)


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _value(v: object) -> str:
    return json.dumps(v, sort_keys=True, default=str) if not isinstance(v, str) else v


def _settings(values: Mapping[str, object]) -> list[list[str]]:
    return [[k, _value(values[k])] for k in sorted(values)]


def write_perturb_page(result: PerturbResult, path: str | os.PathLike[str]) -> None:
    """Write the HTML page of a perturb run (atomically; inside an
    :func:`~brittle.engine.core.atomic.output_set` it joins the set).

    The gold trees come from ``result.originals`` (without them the page shows the
    words and the parses only)."""
    names = [str(c.get("name", "?")) for c in result.constraints]
    records = PerturbRecords(names)
    originals = result.originals if len(result.originals) == len(result.records) else None
    parser = str(result.parser.get("parser", result.config.parser))

    def rows() -> Iterator[JSONObject]:
        for k, (record, output) in enumerate(zip(result.records, result.sentences, strict=True)):
            yield records.record(k, record, originals[k] if originals else None, output)

    treebank = os.path.basename(result.treebank) if result.treebank else "sentences"
    write_sentence_page(
        os.fspath(path),
        title=f"brittle perturb: {treebank}, {result.config.method}",
        overview=_overview(result),
        columns=perturb_columns(bool(result.quality)),
        filters=PERTURB_FILTERS,
        meta={
            "page": "perturb",
            "method": result.config.method,
            "outcomes": list(PERTURB_OUTCOMES),
            "parser": parser,
            "constraints": list(names),
        },
        records=rows(),
        labels=records.labels,
    )


def write_perturb_set(
    result: PerturbResult,
    out: str | os.PathLike[str],
    *,
    report: str | os.PathLike[str] | None = None,
    html: str | os.PathLike[str] | None = None,
) -> None:
    """Write perturb's outputs as one set: the CoNLL-U, the JSON report and the HTML
    page (:func:`~brittle.engine.perturb_run.write_perturb_outputs` and
    :func:`write_perturb_page`): all of them, or, when one cannot be written, none.

    Raises:
        OutputError: an output cannot be written.
    """
    with output_set():
        write_perturb_outputs(result, out, report=report)
        if html is not None:
            write_perturb_page(result, html)
