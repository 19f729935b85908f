"""The attack's run loop: stream the treebank in chunks, search each chunk, write rows.

Reading: the treebank is read once up front without keeping anything (every sentence
is checked and counted, so a bad one is reported with its line before any search
starts), then once more a chunk at a time for the run itself.

Batching: the searches of a chunk's sentences run side by side in lock-step rounds
(:mod:`brittle.engine.rounds`), so each round scores every waiting candidate of every
sentence in one padded model pass and checks every waiting candidate with one call per
constraint.

Reliability: each finished chunk is appended to ``results.jsonl`` one line per
sentence, one write per line; ``--resume`` drops a torn last line and searches again
only the chunks that are not complete (whole, so that their batches are the same as in
an uninterrupted run), and the final files equal those of an uninterrupted run (every
sentence draws from its own seeded generator). ``adversarial.conllu`` is written while
the run goes (atomically: it appears when the run ends), and the reports are rendered
from a digest of ``results.jsonl``, so Ctrl-C leaves every file valid.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from brittle.engine.attack.assembly import AttackComponents, build_components
from brittle.engine.attack.config import AttackConfig
from brittle.engine.attack.preflight import (
    INPUTS_JSON,
    Preflight,
    check_inputs,
    count_sentences,
    preflight,
    stream_sentences,
    treebank_inputs,
)
from brittle.engine.attack.sentence_search import RoundServices, SentenceSearch
from brittle.engine.core.conllu import write_conllu
from brittle.engine.core.errors import BrittleInputError, ConfigError
from brittle.engine.core.json_types import JSONObject
from brittle.engine.core.lock import locked_directory
from brittle.engine.core.perturbation import Perturbation, apply_perturbation
from brittle.engine.core.sentence import Sentence
from brittle.engine.core.versions import versions
from brittle.engine.html_report import write_html_report
from brittle.engine.predictions import PredictingEvaluator, row_predictions
from brittle.engine.probe_eval import ProbeColumns
from brittle.engine.report import CONFIG_JSON, Digest, Summary, render_reports, write_json
from brittle.engine.results import RESULTS, ResultRow, read_rows, repair_results
from brittle.engine.rounds import Direct, run_rounds
from brittle.search.quality import QualityMeter
from brittle.search.scoring import CachedScorer, Objective
from brittle.search.table import SubstitutionTable

ADVERSARIAL = "adversarial.conllu"


@dataclass
class Progress:
    """Running totals shown by the progress bar; like the summary, success and drop
    leave out the sentences that offered nothing to perturb."""

    done: int = 0
    successes: int = 0
    drop_sum: float = 0.0
    no_eligible: int = 0

    @property
    def mean_drop(self) -> float:
        searched = self.done - self.no_eligible
        return self.drop_sum / searched if searched else 0.0

    @property
    def success_rate(self) -> float:
        searched = self.done - self.no_eligible
        return self.successes / searched if searched else 0.0

    def count(self, row: ResultRow) -> None:
        """Take a finished sentence into account."""
        self.done += 1
        if row.nothing_eligible:
            self.no_eligible += 1
            return
        self.successes += bool(row.success)
        self.drop_sum += float(row.damage)


def check_out_dir(out: Path, config: AttackConfig, *, resume: bool, overwrite: bool) -> None:
    """Refuse to mix results: ``out`` must be new, resumed with the same settings or
    overwritten (then its results are removed). Raises :class:`ConfigError` otherwise."""
    results = out / RESULTS
    saved = out / CONFIG_JSON
    if results.exists() and results.stat().st_size > 0:
        if resume:
            if saved.exists():
                previous = json.loads(saved.read_text())
                current = config.to_dict()
                if previous != current:
                    changed = sorted(
                        k for k in set(previous) | set(current) if previous.get(k) != current.get(k)
                    )
                    raise ConfigError(
                        f"{out} holds an attack with other settings ({', '.join(changed)}); "
                        "resume with the same options or choose another --out"
                    )
        elif overwrite:
            results.unlink()
        else:
            raise ConfigError(
                f"{out} already holds results; add --resume to continue them or "
                "--overwrite to start again"
            )


class AttackRun:
    """One attack over a treebank into one output directory.

    Args:
        config: the attack settings.
        out_dir: the output directory (exists).
        components: generator, strategy, constraints and evaluator.
        on_sentence: called with the running totals and the number of sentences, once
            before the first search and after each finished sentence.
        chunk_size: sentences searched side by side.
        cache_size: candidate rows kept by the scores cache.
        lockstep: batch the model and parser work of a chunk's sentences together;
            off: one sentence at a time (same results, more model calls).
        quality: measures the kept perturbations of each chunk, in one call, before
            their rows are written (``None``: not measured).
    """

    def __init__(
        self,
        config: AttackConfig,
        out_dir: Path,
        components: AttackComponents,
        *,
        on_sentence: Callable[[Progress, int], None] | None,
        chunk_size: int,
        cache_size: int,
        lockstep: bool,
        quality: QualityMeter | None = None,
    ) -> None:
        self.config = config
        self.quality = quality
        self.out_dir = out_dir
        self.components = components
        self.on_sentence = on_sentence
        self.chunk_size = chunk_size
        self.lockstep = lockstep
        self.scorer = CachedScorer(components.evaluator, cache_size=cache_size)
        evaluator = components.evaluator
        probes = tuple(name.rpartition(".")[0] for name in evaluator.primary)
        columns = ProbeColumns(probes, evaluator.tasks, evaluator.primary)
        tasks = columns.objective(config.objective) or self.scorer.tasks
        self.objective = Objective.mean_of(list(tasks))
        self.services = RoundServices(components, self.scorer)
        self.progress = Progress()
        self.total = 0

    def _report(self) -> None:
        if self.on_sentence is not None:
            self.on_sentence(self.progress, self.total)

    def run(self, total: int) -> Digest:
        """Search every sentence not in ``results.jsonl`` yet; write
        ``adversarial.conllu`` and return the digest of every row."""
        self.total = total
        results = self.out_dir / RESULTS
        repair_results(results)
        previous: set[int] = set()
        for row in read_rows(results):
            previous.add(row.index)
            self.progress.count(row)
        self._report()
        digest = Digest()
        write_conllu(self._adversarial(previous, digest), self.out_dir / ADVERSARIAL)
        return digest

    def _adversarial(self, done: set[int], digest: Digest) -> Iterator[Sentence]:
        """Every sentence's worst perturbation, in order, searching what is not done."""
        results = self.out_dir / RESULTS
        saved = read_rows(results)
        sentences = stream_sentences(self.config)
        fd = os.open(results, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            for start in itertools.count(0, self.chunk_size):
                chunk = list(itertools.islice(sentences, self.chunk_size))
                if not chunk:
                    break
                indices = range(start, start + len(chunk))
                if all(i in done for i in indices):
                    for index, sentence in zip(indices, chunk, strict=True):
                        row = next(saved)
                        if row.index != index:
                            raise ConfigError(
                                f"{results}: expected the row of sentence {index}, found "
                                f"{row.index}; brittle writes rows in order, so the file was "
                                "edited"
                            )
                        digest.add(row)
                        yield apply_perturbation(sentence, _checked(row, sentence, self.config))
                    continue
                # A chunk is searched whole, even when a crash left some of its rows: its
                # sentences share batches, so a resumed run batches exactly as a fresh one.
                for _ in (i for i in indices if i in done):
                    next(saved)
                searches = self._searches(chunk, start)
                rows = self._with_quality(searches, self._search_chunk(searches, done))
                rows = self._with_predictions(searches, rows)
                for search, row in zip(searches, rows, strict=True):
                    digest.add(row)
                    if row.index not in done:
                        os.write(fd, row.to_line())  # one write per row: a crash tears a tail
                        os.fsync(fd)
                    yield search.perturbed
        finally:
            saved.close()
            os.close(fd)

    def _with_quality(
        self, searches: Sequence[SentenceSearch], rows: Sequence[ResultRow]
    ) -> list[ResultRow]:
        """``rows`` with the quality of their kept perturbations (one meter call)."""
        if self.quality is None:
            return list(rows)
        kept = [k for k, row in enumerate(rows) if row.success]
        measured = self.quality.measure(
            [searches[k].sentence for k in kept],
            [searches[k].perturbed for k in kept],
            [rows[k].perturbation for k in kept],
        )
        out = list(rows)
        for k, q in zip(kept, measured, strict=True):
            out[k] = dataclasses.replace(
                rows[k],
                surprisal_increase=round(q.surprisal_increase, 6),
                similarity=round(q.similarity, 6),
                retag=None if q.retag is None else round(q.retag, 6),
            )
        return out

    def _with_predictions(
        self, searches: Sequence[SentenceSearch], rows: Sequence[ResultRow]
    ) -> list[ResultRow]:
        """``rows`` with what the probes predict on their clean and perturbed sentences
        (one batched model call; unchanged when the evaluator cannot say)."""
        evaluator = self.components.evaluator
        if not isinstance(evaluator, PredictingEvaluator):
            return list(rows)
        pairs = [(search.sentence, search.perturbed) for search in searches]
        predicted = row_predictions(evaluator, pairs)
        return [
            dataclasses.replace(row, predictions=p) for row, p in zip(rows, predicted, strict=True)
        ]

    def _searches(self, chunk: Sequence[Sentence], start: int) -> list[SentenceSearch]:
        generator = self.components.substitutions
        if generator is None:
            tables = [SubstitutionTable(s.sent_id, self.config.method, len(s)) for s in chunk]
        else:
            tables = generator.candidates(list(chunk), top_k=generator.top_k)
        return [
            SentenceSearch(
                sentence,
                index=start + k,
                table=table,
                config=self.config,
                components=self.components,
                scorer=self.scorer,
                objective=self.objective,
            )
            for k, (sentence, table) in enumerate(zip(chunk, tables, strict=True))
        ]

    def _search_chunk(self, searches: Sequence[SentenceSearch], done: set[int]) -> list[ResultRow]:
        """The rows of one chunk, in order; the bar moves as each sentence finishes."""

        def finished(row: ResultRow) -> None:
            if row.index not in done:
                self.progress.count(row)
                self._report()

        handlers = self.services.handlers()
        if not self.lockstep:
            direct = Direct(handlers)
            rows = []
            for search in searches:
                rows.append(search(direct))
                finished(rows[-1])
            return rows
        return run_rounds(list(searches), handlers, on_done=lambda _, row: finished(row))


def _checked(row: ResultRow, sentence: Sentence, config: AttackConfig) -> Perturbation:
    """The row's perturbation, once its sentence is known to be the row's."""
    if row.sent_id != sentence.sent_id:
        raise ConfigError(
            f"{config.treebank} changed since the attack: sentence {row.index} is "
            f"{sentence.sent_id!r}, the results have {row.sent_id!r}"
        )
    return row.perturbation


def run_attack(
    config: AttackConfig,
    out: str | os.PathLike[str],
    *,
    resume: bool = False,
    overwrite: bool = False,
    components: AttackComponents | None = None,
    checked: Preflight | None = None,
    on_sentence: Callable[[Progress, int], None] | None = None,
    chunk_size: int = 16,
    cache_size: int = 100_000,
    lockstep: bool = True,
    quality: bool = False,
) -> Summary:
    """Attack every sentence of ``config.treebank`` and write the reports to ``out``.

    The treebank is streamed ``chunk_size`` sentences at a time and every finished
    sentence goes straight to ``results.jsonl``, so memory does not grow with the
    treebank: besides the scores cache (at most ``cache_size`` rows of a few floats),
    the reports keep a few floats per sentence (see
    :class:`~brittle.engine.report.Digest`). ``out`` is locked for the run: a second
    run into it is refused with the name of the first.

    Args:
        config: the attack settings.
        out: output directory (created).
        resume: continue an interrupted run in ``out``.
        overwrite: discard earlier results in ``out``.
        components: pre-built components (tests, benchmarks, several budgets); built
            from ``config`` otherwise.
        checked: the result of :func:`~brittle.engine.attack.preflight.preflight` when
            the caller ran it already (the CLI does, before loading anything); run here
            otherwise (with ``components`` given, only the treebank is checked).
        on_sentence: called after each sentence with the running totals and the total
            number of sentences (progress bars).
        chunk_size: sentences whose candidate tables are generated in one batch and
            whose searches run side by side.
        cache_size: candidate scores kept by the scorer's LRU cache.
        lockstep: batch the model and parser work of a chunk's sentences together
            (:mod:`brittle.engine.rounds`); off: one sentence at a time.
        quality: measure the kept perturbations (surprisal increase, sentence
            similarity, re-tag agreement with the attack's parser; see
            :mod:`brittle.search.quality`) into their rows and the summary; loads the
            causal LM and the sentence encoder.

    Returns:
        The summary (also written to ``summary.json``).
    """
    if chunk_size < 1:
        raise ConfigError(f"chunk size must be at least 1, got {chunk_size}")
    out_dir = Path(out)
    if checked is None and components is None:
        checked = preflight(config, out_dir)
    total = checked.total if checked is not None else count_sentences(config)
    inputs = checked.inputs(config) if checked is not None else treebank_inputs(config, total)
    with locked_directory(out_dir, "brittle attack"):
        check_out_dir(out_dir, config, resume=resume, overwrite=overwrite)
        if resume:
            check_inputs(out_dir, inputs)
        comps = components if components is not None else build_components(config)
        run = AttackRun(
            config,
            out_dir,
            comps,
            on_sentence=on_sentence,
            chunk_size=chunk_size,
            cache_size=cache_size,
            lockstep=lockstep,
            quality=QualityMeter(parser=comps.parser()) if quality else None,
        )
        # The objective as resolved against the probes, for the reports.
        inputs = {**inputs, "objective": list(run.objective.weights)}
        write_json(out_dir / CONFIG_JSON, config.to_dict())
        write_json(out_dir / INPUTS_JSON, inputs)
        return _render(out_dir, run.run(total), config, inputs, total)


def rerender(out: str | os.PathLike[str]) -> Summary:
    """Render summary.json, summary.md, plots and adversarial.conllu again from
    ``results.jsonl`` and the treebank; ``results.jsonl`` is only read."""
    out_dir = Path(out)
    saved = out_dir / CONFIG_JSON
    if not saved.exists():
        raise ConfigError(f"{out_dir} has no {CONFIG_JSON}: not an attack output directory")
    if not (out_dir / RESULTS).exists():
        raise ConfigError(f"{out_dir} has no {RESULTS}: not an attack output directory")
    try:
        config = AttackConfig.from_dict(_json_object(saved))
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{saved}: not an attack configuration ({exc})") from None
    digest = Digest()
    total = [0]
    write_conllu(_replayed(config, out_dir / RESULTS, digest, total), out_dir / ADVERSARIAL)
    recorded = out_dir / INPUTS_JSON
    inputs = _json_object(recorded) if recorded.exists() else {}
    return _render(out_dir, digest, config, inputs, total[0])


def _json_object(path: Path) -> JSONObject:
    """The JSON object in ``path``; a file that holds something else is an input error
    naming the file and the line."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise BrittleInputError(path, exc.lineno, f"not JSON ({exc.msg})") from None
    except UnicodeDecodeError as exc:
        raise BrittleInputError(path, None, f"not UTF-8 text ({exc.reason})") from None
    if not isinstance(data, dict):
        raise BrittleInputError(path, 1, "not a JSON object")
    return data


def _render(
    out_dir: Path, digest: Digest, config: AttackConfig, inputs: JSONObject, total: int
) -> Summary:
    """The reports of a run, the same whether it just ran or is rendered again: the
    objective comes from ``inputs.json``, where the run recorded it as resolved."""
    resolved = inputs.get("objective")
    objective = [str(t) for t in resolved] if isinstance(resolved, list) else []
    summary = render_reports(
        out_dir,
        digest,
        config=config.to_dict(),
        versions=versions(),
        inputs=inputs,
        total=total,
        objective=objective,
    )
    write_html_report(out_dir, summary, _rows_with_sentences(config, out_dir / RESULTS))
    return summary


def _rows_with_sentences(
    config: AttackConfig, results: Path
) -> Iterator[tuple[ResultRow, Sentence | None]]:
    """Every row of ``results`` with its treebank sentence, both streamed in order (a
    row whose sentence is not found, or is another one, comes with ``None``)."""
    sentences = enumerate(stream_sentences(config))
    current = next(sentences, None)
    for row in read_rows(results):
        while current is not None and current[0] < row.index:
            current = next(sentences, None)
        match = current is not None and current[0] == row.index
        sentence = current[1] if match and current is not None else None
        if sentence is not None and sentence.sent_id != row.sent_id:
            sentence = None
        yield row, sentence


def _replayed(
    config: AttackConfig, results: Path, digest: Digest, total: list[int]
) -> Iterator[Sentence]:
    """The perturbed sentence of every row, treebank and rows read side by side;
    ``total[0]`` counts the treebank's sentences (up to the limit)."""
    rows = read_rows(results)
    last = -1

    def following() -> ResultRow | None:
        row = next(rows, None)
        if row is not None and row.index <= last:
            raise ConfigError(
                f"{results}: rows are not in sentence order (sentence {row.index} after "
                f"{last}); brittle writes them in order, so the file was edited"
            )
        return row

    row = following()
    for index, sentence in enumerate(stream_sentences(config)):
        total[0] = index + 1
        if row is None:
            continue
        if row.index != index:
            continue
        digest.add(row)
        last = row.index
        yield apply_perturbation(sentence, _checked(row, sentence, config))
        row = following()
    if row is not None:
        raise ConfigError(
            f"{config.treebank} has fewer sentences than the results (no sentence {row.index})"
        )
