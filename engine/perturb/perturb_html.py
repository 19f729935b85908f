"""``perturb --html``: one self-contained page of a ``perturb`` run, readable offline.

The page is built like an attack's ``report.html`` (:mod:`brittle.engine.reports.html_report`:
the same head, style, script and tree drawing), with perturb's content:

- the overview, static HTML: treebank, method, budget, candidates, parser and seed;
  the summary table (counts, candidates each constraint rejected, means, quality); the
  constraints' settings; configuration, parser, quality models and versions;
- the sentence table: status, words changed, syntax distance and quality, sortable and
  filterable;
- the sentence view, on demand: original and perturbed text with the changed words
  marked, the gold tree, and the run's parser's parse of the original and of the
  perturbation (the trees the ``syntax`` constraint compared, recorded in each
  :class:`~brittle.engine.perturb.perturb_run.SentenceRecord`), edges that differ marked. With
  ``--parser gold`` nothing is re-parsed, and the page says so.

The page is a function of the run's result: the same seed gives the same bytes.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from html import escape
from pathlib import Path
from typing import IO

from brittle.engine.core.atomic import output_set, write_json
from brittle.engine.core.conllu import write_conllu
from brittle.engine.core.json_types import JSONObject, JSONValue
from brittle.engine.core.sentence import Sentence
from brittle.engine.perturb.perturb_run import (
    GOLD_PARSER,
    PerturbConfig,
    PerturbJob,
    PerturbResult,
    PerturbRun,
    ProgressFn,
    SentenceRecord,
    decode_parse,
    summary_lines,
    write_perturb_outputs,
)
from brittle.engine.reports.html_report import (
    VALIDITY_COLUMN,
    Column,
    LabelIndex,
    html_table,
    write_sentence_page,
)
from brittle.engine.runs.shards import ShardExecutor

__all__ = [
    "PERTURB_FILTERS",
    "PERTURB_OUTCOMES",
    "PerturbRecords",
    "constraint_names",
    "perturb_columns",
    "perturb_to_files",
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


def perturb_columns(quality: bool, graded: bool = False) -> tuple[Column, ...]:
    """The sentence table's columns (the quality ones when the run measured quality, the
    validity one when it graded)."""
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
    if graded:
        columns.append(VALIDITY_COLUMN)
    return tuple(columns)


def _rounded(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


class PerturbRecords(LabelIndex):
    """Turns a run's records and sentences into the page's compact records (labels
    interned, see :class:`~brittle.engine.reports.html_report.LabelIndex`).

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
        if record.validity is not None:
            rec["v"] = record.validity.level
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


def _overview(result: PerturbRun) -> str:
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
    records = PerturbRecords(constraint_names(result.constraints))
    originals = result.originals if len(result.originals) == len(result.records) else None

    def rows() -> Iterator[JSONObject]:
        for k, (record, output) in enumerate(zip(result.records, result.sentences, strict=True)):
            yield records.record(k, record, originals[k] if originals else None, output)

    _write_page(result, path, rows(), records.labels)


def constraint_names(constraints: Iterable[Mapping[str, object]]) -> list[str]:
    """The names of a run's constraints, from their descriptions (a page record's
    ``rj`` follows them)."""
    return [str(c.get("name", "?")) for c in constraints]


def _write_page(
    run: PerturbRun, path: str | os.PathLike[str], rows: Iterable[JSONObject], labels: list[str]
) -> None:
    """The page of ``run`` with its sentences' records ``rows`` (consumed once; they
    intern their labels into ``labels``)."""
    parser = str(run.parser.get("parser", run.config.parser))
    treebank = os.path.basename(run.treebank) if run.treebank else "sentences"
    write_sentence_page(
        os.fspath(path),
        title=f"brittle perturb: {treebank}, {run.config.method}",
        overview=_overview(run),
        columns=perturb_columns(bool(run.quality), run.config.grade),
        filters=PERTURB_FILTERS,
        meta={
            "page": "perturb",
            "method": run.config.method,
            "outcomes": list(PERTURB_OUTCOMES),
            "parser": parser,
            "constraints": list(constraint_names(run.constraints)),
        },
        records=rows,
        labels=labels,
    )


def write_perturb_set(
    result: PerturbResult,
    out: str | os.PathLike[str],
    *,
    report: str | os.PathLike[str] | None = None,
    html: str | os.PathLike[str] | None = None,
) -> None:
    """Write perturb's outputs as one set: the CoNLL-U, the JSON report and the HTML
    page (:func:`~brittle.engine.perturb.perturb_run.write_perturb_outputs` and
    :func:`write_perturb_page`): all of them, or, when one cannot be written, none.

    Raises:
        OutputError: an output cannot be written.
    """
    with output_set():
        write_perturb_outputs(result, out, report=report)
        if html is not None:
            write_perturb_page(result, html)


class _PageRows:
    """The page records of a streamed run's sentences, made as each chunk comes and
    kept in a temporary file until the page, whose overview needs every record, is
    written."""

    def __init__(self, constraints: list[str], spool: IO[str]) -> None:
        self.records = PerturbRecords(constraints)
        self.spool = spool
        self.count = 0

    def add(
        self,
        originals: Sequence[Sentence],
        outputs: Sequence[Sentence],
        records: Sequence[SentenceRecord],
    ) -> None:
        """Take the next sentences (input, output and record of each, in order)."""
        for original, output, record in zip(originals, outputs, records, strict=True):
            row = self.records.record(self.count, record, original, output)
            self.spool.write(json.dumps(row) + "\n")
            self.count += 1

    def rows(self) -> Iterator[JSONObject]:
        """The records, in order, read back from the file."""
        self.spool.seek(0)
        for line in self.spool:
            row: JSONObject = json.loads(line)
            yield row


def perturb_to_files(
    path: str | os.PathLike[str],
    config: PerturbConfig,
    out: str | os.PathLike[str],
    *,
    report: str | os.PathLike[str] | None = None,
    html: str | os.PathLike[str] | None = None,
    generator_options: Mapping[str, object] | None = None,
    parser_options: Mapping[str, object] | None = None,
    progress: ProgressFn | None = None,
    on_start: Callable[[int], None] | None = None,
    executor: ShardExecutor | None = None,
) -> PerturbRun:
    """Perturb a treebank into its files, streamed: ``brittle perturb``.

    The run (a :class:`~brittle.engine.perturb.perturb_run.PerturbJob`) reads the treebank a
    chunk at a time, and each chunk's output sentences go to ``out`` as they come, so
    memory does not grow with the treebank: what is kept is each sentence's record (a
    few hundred bytes: the JSON report and the summary need every one), and the HTML
    page's records wait in a temporary file. The files are those that
    :func:`~brittle.engine.perturb.perturb_run.perturb_treebank` and :func:`write_perturb_set`
    write, byte for byte, and as one set: all of them, or, when one cannot be written
    (or the run fails), none.

    Args:
        path: the CoNLL-U file.
        config: the run's settings (``config.limit`` is applied here).
        out, report, html: the perturbed CoNLL-U, the JSON report and the HTML page
            (``-``: standard output; ``None``: not written).
        generator_options, parser_options, progress, on_start, executor: as
            :func:`~brittle.engine.perturb.perturb_run.perturb_treebank` takes them.

    Returns:
        The run's records and provenance (its summary, what the report holds).

    Raises:
        BrittleInputError: the treebank cannot be read.
        ConfigError: an unknown name, a bad option, a missing column.
        ResourceMissingError: a model or lexicon is not installed.
        OutputError: an output cannot be written.
    """
    job = PerturbJob(
        path,
        config,
        generator_options=generator_options,
        parser_options=parser_options,
        executor=executor,
    )
    records: list[SentenceRecord] = []
    with contextlib.ExitStack() as stack:
        page = None
        if html is not None:
            spool = stack.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8"))
            page = _PageRows(constraint_names(c.describe() for c in job.checks), spool)

        def outputs() -> Iterator[Sentence]:
            for chunk, chunk_out, chunk_records in job.chunks(progress, on_start):
                if page is not None:
                    page.add(chunk, chunk_out, chunk_records)
                records.extend(chunk_records)
                yield from chunk_out

        with output_set():
            write_conllu(outputs(), out)
            run = job.run(records)
            if report is not None:
                write_json(Path(report), run.report(), sort_keys=True)
            if html is not None and page is not None:
                _write_page(run, html, page.rows(), page.records.labels)
    return run
