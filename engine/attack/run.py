"""The attack's run loop: stream the treebank in chunks, search each chunk, write rows.

Reading: the treebank is read once up front without keeping anything (every sentence
is checked and counted, so a bad one is reported with its line before any search
starts), then once more a chunk at a time for the run itself.

Batching: the searches of a chunk's sentences run side by side in lock-step rounds
(:mod:`brittle.engine.runs.rounds`), so each round scores every waiting candidate of every
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

import contextlib
import itertools
import json
import os
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from brittle.engine.attack.assembly import AttackComponents, build_components
from brittle.engine.attack.chunk_search import (
    AttackShards,
    ChunkSearch,
    Searched,
    attack_grader,
    mark_validity,
)
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
from brittle.engine.attack.sentence_search import SentenceSearch
from brittle.engine.core.atomic import atomic_write, remove_stale_temporaries, write_json
from brittle.engine.core.conllu import write_conllu
from brittle.engine.core.errors import BrittleInputError, ConfigError
from brittle.engine.core.json_types import JSONObject
from brittle.engine.core.lock import DirectoryInUse, held, holder, locked_directory
from brittle.engine.core.overlap import Named, check_no_overlap, named
from brittle.engine.core.perturbation import Perturbation, apply_perturbation
from brittle.engine.core.sentence import Sentence
from brittle.engine.core.versions import versions
from brittle.engine.reports.html_report import PLOT_FILES, REPORT_HTML, write_html_report
from brittle.engine.reports.report import (
    CONFIG_JSON,
    PLOTS,
    SUMMARY_JSON,
    SUMMARY_MD,
    Digest,
    Summary,
    render_reports,
)
from brittle.engine.reports.results import RESULTS, ResultRow, read_rows, repair_results
from brittle.engine.runs.shards import LocalProcesses, Shard, ShardExecutor, run_shards
from brittle.engine.targets.parser import relation_breaks
from brittle.search.quality import QualityMeter
from brittle.search.scoring import Objective

ADVERSARIAL = "adversarial.conllu"
#: The files an attack (re)writes in its output directory, besides ``results.jsonl``.
OUTPUTS = (ADVERSARIAL, CONFIG_JSON, INPUTS_JSON, SUMMARY_JSON, SUMMARY_MD, REPORT_HTML)


def sweep_left_overs(out_dir: Path) -> list[Path]:
    """Remove the temporaries a killed run left of the attack's outputs (in ``out_dir``
    and its ``plots/``); the paths removed. Only while holding ``out_dir``'s lock."""
    return [
        *remove_stale_temporaries(out_dir, OUTPUTS),
        *remove_stale_temporaries(out_dir / PLOTS, PLOT_FILES),
    ]


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
        search: searches the chunks in this process (``None``: ``sharded`` does).
        sharded: the workers the chunks go to, as shards, and their task (``None``: this
            process searches them).
        on_sentence: called with the running totals and the number of sentences, once
            before the first search and after each finished sentence (each finished
            shard, when sharded).
        chunk_size: sentences searched side by side.
    """

    def __init__(
        self,
        config: AttackConfig,
        out_dir: Path,
        *,
        search: ChunkSearch | None,
        sharded: tuple[ShardExecutor, AttackShards] | None = None,
        on_sentence: Callable[[Progress, int], None] | None,
        chunk_size: int,
    ) -> None:
        if (search is None) == (sharded is None):
            raise ValueError("an attack runs either in this process or sharded, not both")
        self.config = config
        self.out_dir = out_dir
        self.search = search
        self.sharded = sharded
        self.on_sentence = on_sentence
        self.chunk_size = chunk_size
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
        # The search runs here, a chunk at a time: each sentence's worst perturbation is
        # written as its chunk finishes (its row already appended to results.jsonl), and
        # the file appears whole, or not at all, when the last one is written.
        with atomic_write(self.out_dir / ADVERSARIAL) as adversarial:
            for sentence in self._adversarial(previous, digest):
                adversarial.write(sentence.to_conllu())
        return digest

    def _chunks(self) -> Iterator[tuple[int, list[Sentence]]]:
        """The treebank's chunks with the index of their first sentence, streamed."""
        sentences = stream_sentences(self.config)
        for start in itertools.count(0, self.chunk_size):
            chunk = list(itertools.islice(sentences, self.chunk_size))
            if not chunk:
                return
            yield start, chunk

    def _adversarial(self, done: set[int], digest: Digest) -> Iterator[Sentence]:
        """Every sentence's worst perturbation, in order, searching what is not done."""
        results = self.out_dir / RESULTS
        saved = read_rows(results)
        # A sharded run's results, in order; the workers read ahead of this loop.
        ordered = self._sharded(done) if self.sharded is not None else None
        fd = os.open(results, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            for start, chunk in self._chunks():
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
                        yield mark_validity(
                            apply_perturbation(sentence, _checked(row, sentence, self.config)), row
                        )
                    continue
                # A chunk is searched whole, even when a crash left some of its rows: its
                # sentences share batches, so a resumed run batches exactly as a fresh one.
                for _ in (i for i in indices if i in done):
                    next(saved)
                if ordered is not None:
                    shard, searched = next(ordered)
                    assert shard.start == start, (shard.start, start)
                else:
                    assert self.search is not None
                    searches = self.search.searches(chunk, start)
                    searched = self.search.finish(searches, self._search_chunk(searches, done))
                for row, perturbed in searched:
                    digest.add(row)
                    if row.index not in done:
                        os.write(fd, row.to_line())  # one write per row: a crash tears a tail
                        os.fsync(fd)
                    yield perturbed
        finally:
            if ordered is not None:
                ordered.close()
            saved.close()
            os.close(fd)

    def _sharded(
        self, done: set[int]
    ) -> Generator[tuple[Shard[list[Sentence]], Searched], None, None]:
        """The searched chunks that are not done, from the workers, in order; the bar
        moves as each shard comes back."""
        assert self.sharded is not None
        executor, task = self.sharded
        shards = (
            Shard(number, start, start + len(chunk), chunk)
            for number, (start, chunk) in enumerate(
                (start, chunk)
                for start, chunk in self._chunks()
                if not all(i in done for i in range(start, start + len(chunk)))
            )
        )

        def finished(shard: Shard[list[Sentence]], searched: Searched) -> None:
            for row, _ in searched:
                if row.index not in done:
                    self.progress.count(row)
            self._report()

        return run_shards(executor, task, shards, on_done=finished)

    def _search_chunk(self, searches: Sequence[SentenceSearch], done: set[int]) -> list[ResultRow]:
        """The rows of one chunk, in order; the bar moves as each sentence finishes."""
        assert self.search is not None

        def finished(row: ResultRow) -> None:
            if row.index not in done:
                self.progress.count(row)
                self._report()

        return self.search.search(searches, finished)


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
    grade: bool = False,
    workers: int = 1,
    executor: ShardExecutor | None = None,
    device: str | None = None,
) -> Summary:
    """Attack every sentence of ``config.treebank`` and write the reports to ``out``.

    The treebank is streamed ``chunk_size`` sentences at a time and every finished
    sentence goes straight to ``results.jsonl``, so memory does not grow with the
    treebank: besides the scores cache (at most ``cache_size`` rows of a few floats),
    the reports keep a few floats per sentence (see
    :class:`~brittle.engine.reports.report.Digest`). ``out`` is locked for the run: a second
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
            (:mod:`brittle.engine.runs.rounds`); off: one sentence at a time.
        quality: measure the kept perturbations (surprisal increase, sentence
            similarity, re-tag agreement with the attack's parser; see
            :mod:`brittle.search.quality`) into their rows and the summary; loads the
            causal LM and the sentence encoder.
        grade: grade each kept perturbation's validity (tree-valid, grammatical,
            meaning kept: :mod:`brittle.search.validity`) into its row, the summary and
            the MISC of ``adversarial.conllu`` (``Validity=LEVEL``); loads spaCy, the
            causal LM and the sentence encoder.
        workers: search the chunks in this many local processes (1: in this one); each
            loads its own copy of the models. The files are the same as with one.
        executor: the workers to search the chunks on (local processes or Ray actors,
            :mod:`brittle.engine.runs.shards`), kept open by the caller across runs;
            overrides ``workers``. Each chunk is one shard, searched exactly as in one
            process, and the rows are written in treebank order.
        device: torch device of the models (probes' encoder, model-based constraints;
            ``None``: ``cuda`` when available, else ``cpu``), in this process or in
            each worker; ignored with pre-built ``components``. Their precision is
            ``config.dtype``, which the workers get with the configuration.

    Returns:
        The summary (also written to ``summary.json``).
    """
    if chunk_size < 1:
        raise ConfigError(f"chunk size must be at least 1, got {chunk_size}")
    sharded = executor is not None or workers > 1
    if sharded and components is not None:
        raise ConfigError("pre-built components run in this process; workers build their own")
    out_dir = Path(out)
    if checked is None and (components is None or sharded):
        checked = preflight(config, out_dir)
    total = checked.total if checked is not None else count_sentences(config)
    inputs = checked.inputs(config) if checked is not None else treebank_inputs(config, total)
    with locked_directory(out_dir, "brittle attack"), contextlib.ExitStack() as stack:
        check_out_dir(out_dir, config, resume=resume, overwrite=overwrite)
        sweep_left_overs(out_dir)  # of a run killed before it could remove them
        if resume:
            check_inputs(out_dir, inputs)
        if sharded:
            assert checked is not None
            if executor is None:
                executor = stack.enter_context(LocalProcesses(workers))
            task = AttackShards(
                config,
                cache_size=cache_size,
                lockstep=lockstep,
                quality=quality,
                device=device,
                grade=grade,
            )
            # The workers resolve the objective as preflight did, from the same probes.
            objective = Objective.mean_of(list(checked.objective))
            run = AttackRun(
                config,
                out_dir,
                search=None,
                sharded=(executor, task),
                on_sentence=on_sentence,
                chunk_size=chunk_size,
            )
        else:
            comps = (
                components if components is not None else build_components(config, device=device)
            )
            search = ChunkSearch(
                config,
                comps,
                cache_size=cache_size,
                lockstep=lockstep,
                quality=(
                    QualityMeter(parser=comps.parser(), device=device, dtype=config.dtype)
                    if quality
                    else None
                ),
                grader=attack_grader(config, comps, device=device) if grade else None,
            )
            objective = search.objective
            run = AttackRun(
                config, out_dir, search=search, on_sentence=on_sentence, chunk_size=chunk_size
            )
        # The objective as resolved against the probes, for the reports.
        inputs = {**inputs, "objective": list(objective.weights)}
        write_json(out_dir / CONFIG_JSON, config.to_dict(), sort_keys=True)
        write_json(out_dir / INPUTS_JSON, inputs, sort_keys=True)
        return _render(out_dir, run.run(total), config, inputs, total)


def rerender(out: str | os.PathLike[str]) -> Summary:
    """Render summary.json, summary.md, plots and adversarial.conllu again from
    ``results.jsonl`` and the treebank; ``results.jsonl`` is only read.

    The directory is locked while its files are written: a directory an attack is
    running in (or, for a budget's ``tau=K``, the multi-budget directory above it) is
    refused.

    Raises:
        ConfigError: not an attack directory, or one in use.
        BrittleInputError: a malformed ``results.jsonl`` or configuration (file, line).
    """
    out_dir = Path(out)
    saved = out_dir / CONFIG_JSON
    if not saved.exists():
        raise ConfigError(f"{out_dir} has no {CONFIG_JSON}: not an attack output directory")
    if not (out_dir / RESULTS).exists():
        raise ConfigError(f"{out_dir} has no {RESULTS}: not an attack output directory")
    above = out_dir.resolve().parent
    if out_dir.resolve().name.startswith("tau=") and held(above):
        raise _in_use(above, holder(above))
    try:
        with locked_directory(out_dir, "brittle report"):
            sweep_left_overs(out_dir)
            return _rerender_locked(out_dir, saved)
    except DirectoryInUse as busy:
        raise _in_use(out_dir, busy.holder) from None


def _in_use(directory: Path, who: str) -> ConfigError:
    """The refusal of ``brittle report`` in a directory another run holds."""
    running = "an attack is running there" if "attack" in who else "another run is writing it"
    return ConfigError(
        f"{directory} is in use by {who}: {running}; run brittle report once it has finished"
    )


def _rerender_locked(out_dir: Path, saved: Path) -> Summary:
    """:func:`rerender` once ``out_dir`` is locked."""
    try:
        config = AttackConfig.from_dict(_json_object(saved))
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{saved}: not an attack configuration ({exc})") from None
    written = (ADVERSARIAL, SUMMARY_JSON, SUMMARY_MD, REPORT_HTML, PLOTS)
    check_no_overlap(
        named("the attack's treebank", config.treebank),
        [Named(name, out_dir / name) for name in written],
    )
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
    breaks = None
    if config.target is not None:  # per gold relation, the parser's attachments broken
        breaks = relation_breaks(_rows_with_sentences(config, out_dir / RESULTS))
    summary = render_reports(
        out_dir,
        digest,
        config=config.to_dict(),
        versions=versions(),
        inputs=inputs,
        total=total,
        objective=objective,
        parser_breaks=breaks,
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
        yield mark_validity(apply_perturbation(sentence, _checked(row, sentence, config)), row)
        row = following()
    if row is not None:
        raise ConfigError(
            f"{config.treebank} has fewer sentences than the results (no sentence {row.index})"
        )
