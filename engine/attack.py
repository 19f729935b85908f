"""The attack run: for each sentence, the syntax-preserving perturbation that most
damages the probes, streamed to ``results.jsonl`` and rendered into reports.

The run owns the pieces and hands each strategy a :class:`~brittle.search.problem.
SearchProblem`: candidates from the generator, probe damage from the one
:class:`~brittle.engine.scoring.CachedScorer`, the syntax constraint checked lazily.

Batching: the treebank is streamed in chunks; the searches of a chunk's sentences run
side by side in lock-step rounds (:mod:`brittle.engine.rounds`), so each round scores
every waiting candidate of every sentence in one padded model pass and parses every
waiting syntax check in one parser call.

Reliability: each finished chunk is appended to ``results.jsonl`` one line per
sentence, one write per line; ``--resume`` drops a torn last line and searches again
only the chunks that are not complete (whole, so that their batches are the same as in
an uninterrupted run), and the final files equal those of an uninterrupted run (every
sentence draws from its own seeded generator). Reports are rendered from
``results.jsonl`` and written atomically, so Ctrl-C leaves every file valid.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from brittle.engine.conllu import atomic_write, iter_conllu, write_conllu
from brittle.engine.errors import ConfigError
from brittle.engine.perturbation import Perturbation, apply_perturbation
from brittle.engine.registry import registry
from brittle.engine.report import (
    CONFIG_JSON,
    RESULTS,
    Digest,
    iter_results,
    render_reports,
    repair_results,
    write_json,
)
from brittle.engine.rounds import Direct, Handler, Requester, run_rounds
from brittle.engine.scoring import CachedScorer, Objective, Request, TaskEvaluator
from brittle.engine.sentence import Sentence
from brittle.search.problem import SearchProblem

ADVERSARIAL = "adversarial.conllu"
#: Methods that reorder words instead of substituting them (sample search only).
REORDER_METHODS = frozenset({"shuffle", "phrase-shuffle", "neighbour-flip"})


@dataclass(frozen=True)
class AttackConfig:
    """Everything that decides an attack's results (timings and paths of outputs aside).

    Attributes:
        treebank: the CoNLL-U file attacked.
        probes: probe directories (their tasks make the objective).
        method: generator name (``copos``, ``coco``, ``random``, ...).
        search: strategy name (``sample``, ``greedy``, ``beam``).
        budget: tau, the most words substituted.
        candidates: b random perturbations for ``sample``; options per position for
            ``greedy`` and ``beam``.
        beam_width: kept perturbations per step for ``beam``.
        max_syntax_distance: largest normalised tree edit distance between the parses of
            the original and of the perturbation.
        parser: parser for the syntax constraint (``spacy``, ``stanza``, ``gold``).
        query_budget: most model evaluations per sentence (None: unlimited).
        seed: seed of every random draw.
        limit: attack only the first ``limit`` sentences.
        objective: tasks whose mean drop is maximised (empty: every task).
    """

    treebank: str
    probes: tuple[str, ...]
    method: str = "copos"
    search: str = "beam"
    budget: int = 3
    candidates: int = 20
    beam_width: int = 4
    max_syntax_distance: float = 0.2
    parser: str = "spacy"
    query_budget: int | None = None
    seed: int = 0
    limit: int | None = None
    objective: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if self.budget < 1:
            raise ConfigError(f"--budget must be at least 1, got {self.budget}")
        if self.candidates < 1:
            raise ConfigError(f"--candidates must be at least 1, got {self.candidates}")
        if self.beam_width < 1:
            raise ConfigError(f"--beam-width must be at least 1, got {self.beam_width}")
        if self.query_budget is not None and self.query_budget < 2:
            raise ConfigError("--query-budget must be at least 2 (the clean sentence + one)")
        if self.max_syntax_distance < 0:
            raise ConfigError("--max-syntax-distance must be >= 0")
        if self.method in REORDER_METHODS and self.search != "sample":
            raise ConfigError(
                f"method {self.method} reorders words; only --search sample applies to it"
            )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping (tuples become lists)."""
        data = asdict(self)
        data["probes"] = list(self.probes)
        data["objective"] = list(self.objective)
        return data


#: A syntax check's result on m candidates: the mask (m,) and the distances (m,).
Checked = tuple[NDArray[np.bool_], NDArray[np.float64]]
Feasibility = Callable[[Sentence, Sequence[Perturbation]], Checked]


@dataclass(frozen=True)
class AttackComponents:
    """The live objects an attack uses; built once by :func:`build_components`."""

    evaluator: TaskEvaluator
    generator: Any
    feasibility: Feasibility
    strategy: Callable[..., Any]
    #: The syntax check of several sentences' batches in one parser call (optional:
    #: ``feasibility`` one batch at a time otherwise).
    feasibility_many: (
        Callable[[Sequence[tuple[Sentence, Sequence[Perturbation]]]], list[Checked]] | None
    ) = None

    def check_many(
        self, requests: Sequence[tuple[Sentence, Sequence[Perturbation]]]
    ) -> list[Checked]:
        """Syntax checks of a round's requests (one per sentence)."""
        if self.feasibility_many is not None:
            return self.feasibility_many(requests)
        return [self.feasibility(o, p) for o, p in requests]


def versions() -> dict[str, str]:
    """Versions of brittle and the packages that decide its numbers."""
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str] = {}
    for pkg in ("brittle", "numpy", "numba", "torch", "transformers", "spacy", "nltk"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            continue
    return out


def build_components(config: AttackConfig) -> AttackComponents:
    """Load probes, generator, parser and strategy named by ``config`` (checked up front)."""
    from brittle.engine.plugins import load_components
    from brittle.engine.probe_eval import ProbeEvaluator
    from brittle.scorers.parsers import make_parser
    from brittle.search.constraints import CandidateBatch, SyntaxConstraint

    load_components()
    strategy: Callable[..., Any] = registry("strategies").get(config.search)  # type: ignore[assignment]
    gen_cls: Callable[..., Any] = registry("generators").get(config.method)  # type: ignore[assignment]
    generator = (
        gen_cls()
        if config.method in REORDER_METHODS
        else gen_cls(
            top_k=config.candidates if config.search != "sample" else max(config.candidates, 10)
        )
    )
    prepare = getattr(generator, "prepare", None)
    if prepare is not None:
        prepare()
    evaluator = ProbeEvaluator.from_dirs(config.probes)
    parser = make_parser(config.parser)
    parser.prepare()
    # Load the tree edit distance kernels now rather than during the first sentence.
    import brittle.scorers._ted_kernels  # noqa: F401

    syntax = SyntaxConstraint(parser, max_distance=config.max_syntax_distance)

    def feasibility(
        original: Sentence, perts: Sequence[Perturbation]
    ) -> tuple[NDArray[np.bool_], NDArray[np.float64]]:
        result = syntax.check(CandidateBatch.build(original, perts))
        return np.asarray(result.mask), np.asarray(result.values)

    def feasibility_many(
        requests: Sequence[tuple[Sentence, Sequence[Perturbation]]],
    ) -> list[Checked]:
        results = syntax.check_many([CandidateBatch.build(o, p) for o, p in requests])
        return [(np.asarray(r.mask), np.asarray(r.values)) for r in results]

    return AttackComponents(evaluator, generator, feasibility, strategy, feasibility_many)


@dataclass
class Progress:
    """Running totals shown by the progress bar."""

    done: int = 0
    successes: int = 0
    drop_sum: float = 0.0

    @property
    def mean_drop(self) -> float:
        return self.drop_sum / self.done if self.done else 0.0

    @property
    def success_rate(self) -> float:
        return self.successes / self.done if self.done else 0.0


def attack_sentence(
    sentence: Sentence,
    *,
    index: int,
    config: AttackConfig,
    components: AttackComponents,
    scorer: CachedScorer,
    objective: Objective,
    options: dict[int, tuple[tuple[str, str], ...]],
    client: Requester,
) -> dict[str, Any]:
    """Search one sentence and return its result row (JSON-ready).

    Scoring, syntax checks and reorder sampling are requests to ``client`` (see
    :func:`_handlers`): served at once by a :class:`~brittle.engine.rounds.Direct`, or
    in lock-step rounds batched across the sentences of a chunk.
    """
    from brittle.search.generators.base import sentence_rng

    start = time.perf_counter()

    def rows(request: Request) -> tuple[NDArray[np.float64], int]:
        return client.request("score", request)  # type: ignore[no-any-return]

    session = scorer.session(sentence, objective, query_budget=config.query_budget, rows=rows)
    distances: dict[Perturbation, float] = {}

    def feasible(perts: Sequence[Perturbation]) -> NDArray[np.bool_]:
        mask, values = client.request("syntax", (sentence, list(perts)))
        for p, v in zip(perts, values.tolist(), strict=True):
            distances[p] = float(v)
        return mask

    sampler = None
    if config.method in REORDER_METHODS:

        def sampler(count: int, rng: np.random.Generator) -> list[Perturbation]:
            seed = int(rng.integers(2**31 - 1))
            return client.request("sample", (sentence, count, seed))  # type: ignore[no-any-return]

    problem = SearchProblem(
        sentence.sent_id,
        config.method,
        options,
        config.budget,
        session,
        feasible,
        session.is_exhausted,
        sampler,
    )
    outcome = components.strategy(
        problem,
        rng=sentence_rng(config.seed, sentence.sent_id),
        candidates=config.candidates,
        beam_width=config.beam_width,
    )
    best: Perturbation = outcome.best
    after = session.metrics_of(best)
    perturbed = apply_perturbation(sentence, best)
    tasks = {
        t: {
            "clean": round(float(c), 6),
            "perturbed": round(float(a), 6),
            "drop": round(float(c - a), 6),
        }
        for t, c, a in zip(scorer.tasks, session.clean, after, strict=True)
    }
    changed = [
        i for i, (a, b) in enumerate(zip(sentence.forms, perturbed.forms, strict=True)) if a != b
    ]
    return {
        "index": index,
        "sent_id": sentence.sent_id,
        "success": outcome.success,
        "method": config.method,
        "positions": list(best.positions),
        "original_words": [sentence.forms[i] for i in best.positions],
        "perturbed_words": list(best.replacements),
        "lemmas": list(best.lemmas),
        "order": None if best.order is None else list(best.order),
        "words": list(sentence.forms),
        "perturbed": list(perturbed.forms),
        "tasks": tasks,
        "damage": round(float(outcome.damage), 6),
        "syntax_distance": None if best.is_identity else round(distances.get(best, 0.0), 6),
        "hamming": len(changed),
        "eligible_positions": len(problem.positions),
        "queries": session.queries,
        "evaluated": outcome.evaluated,
        "syntax_checked": outcome.feasible_checked,
        "epsilon_l2": round(session.max_l2, 6) if session.scored else None,
        "epsilon_cosine": round(session.min_cosine, 6) if session.scored else None,
        "seconds": round(time.perf_counter() - start, 4),
    }


def perturbation_of(row: dict[str, Any]) -> Perturbation:
    """The perturbation a result row records."""
    return Perturbation(
        row["sent_id"],
        row["method"],
        positions=tuple(row["positions"]),
        replacements=tuple(row["perturbed_words"]),
        lemmas=tuple(row["lemmas"]),
        order=None if row["order"] is None else tuple(row["order"]),
    )


def _stream_sentences(config: AttackConfig) -> Iterator[Sentence]:
    """The treebank's sentences one at a time, up to ``config.limit``."""
    return itertools.islice(iter_conllu(config.treebank), config.limit)


def _sentence_total(config: AttackConfig) -> int:
    """Sentences to attack, read (not kept) once up front: a bad sentence anywhere in
    the treebank is reported with its line before any search starts."""
    return sum(1 for _ in _stream_sentences(config))


def check_out_dir(out: Path, config: AttackConfig, *, resume: bool, overwrite: bool) -> None:
    """Refuse to mix results: ``out`` must be new, resumed with the same settings or
    overwritten (then its results are removed). Raises :class:`ConfigError` otherwise."""
    results = out / RESULTS
    saved = out / CONFIG_JSON
    if results.exists() and results.stat().st_size > 0:
        if resume:
            if saved.exists():
                previous = json.loads(saved.read_text())
                if previous != config.to_dict():
                    changed = sorted(
                        k
                        for k in set(previous) | set(config.to_dict())
                        if previous.get(k) != config.to_dict().get(k)
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


def run_attack(
    config: AttackConfig,
    out: str | os.PathLike[str],
    *,
    resume: bool = False,
    overwrite: bool = False,
    components: AttackComponents | None = None,
    on_sentence: Callable[[Progress, int], None] | None = None,
    chunk_size: int = 16,
    cache_size: int = 100_000,
    lockstep: bool = True,
) -> dict[str, Any]:
    """Attack every sentence of ``config.treebank`` and write the reports to ``out``.

    The treebank is streamed ``chunk_size`` sentences at a time and every finished
    sentence goes straight to ``results.jsonl``, so memory does not grow with the
    treebank: besides the scores cache (at most ``cache_size`` rows of a few floats),
    the reports keep a few floats per sentence (see
    :class:`~brittle.engine.report.Digest`).

    Args:
        config: the attack settings.
        out: output directory (created).
        resume: continue an interrupted run in ``out``.
        overwrite: discard earlier results in ``out``.
        components: pre-built components (tests, benchmarks); built from ``config``
            otherwise.
        on_sentence: called after each sentence with the running totals and the total
            number of sentences (progress bars).
        chunk_size: sentences whose candidate tables are generated in one batch and
            whose searches run side by side.
        cache_size: candidate scores kept by the scorer's LRU cache.
        lockstep: batch the model and parser work of a chunk's sentences together
            (:mod:`brittle.engine.rounds`); off: one sentence at a time.

    Returns:
        The summary (also written to ``summary.json``).
    """
    if chunk_size < 1:
        raise ConfigError(f"chunk size must be at least 1, got {chunk_size}")
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    check_out_dir(out_dir, config, resume=resume, overwrite=overwrite)
    total = _sentence_total(config)
    comps = components if components is not None else build_components(config)
    scorer = CachedScorer(comps.evaluator, cache_size=cache_size)
    primary = getattr(comps.evaluator, "primary", None)
    tasks = config.objective or primary or scorer.tasks
    objective = Objective.mean_of(list(tasks))
    write_json(out_dir / CONFIG_JSON, config.to_dict())
    repair_results(out_dir / RESULTS)
    done: set[int] = set()
    progress = Progress()
    for r in iter_results(out_dir / RESULTS):
        done.add(int(r["index"]))
        _count(progress, r)
    if on_sentence is not None:
        on_sentence(progress, total)
    sentences = _stream_sentences(config)
    fd = os.open(out_dir / RESULTS, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        for chunk_start in itertools.count(0, chunk_size):
            chunk = list(itertools.islice(sentences, chunk_size))
            if not chunk:
                break
            indices = range(chunk_start, chunk_start + len(chunk))
            if all(i in done for i in indices):
                continue
            # A chunk is searched whole, even when a crash left some of its rows: its
            # sentences share batches, so a resumed run batches exactly as a fresh one.
            tables = _options_for(config, comps, chunk)

            def finished(row: dict[str, Any]) -> None:
                # The bar moves as each sentence finishes; its row is written with its chunk.
                if row["index"] not in done:
                    _count(progress, row)
                    if on_sentence is not None:
                        on_sentence(progress, total)

            chunk_rows = _attack_chunk(
                chunk, chunk_start, tables, config, comps, scorer, objective, lockstep, finished
            )
            for row in chunk_rows:
                if row["index"] in done:
                    continue
                line = (json.dumps(row, sort_keys=True, ensure_ascii=False) + "\n").encode()
                os.write(fd, line)  # one write per row: a crash leaves at most a torn tail
                os.fsync(fd)
    finally:
        os.close(fd)
    return finish(out_dir, config)


def _attack_chunk(
    chunk: Sequence[Sentence],
    chunk_start: int,
    tables: Sequence[dict[int, tuple[tuple[str, str], ...]]],
    config: AttackConfig,
    comps: AttackComponents,
    scorer: CachedScorer,
    objective: Objective,
    lockstep: bool,
    on_row: Callable[[dict[str, Any]], None],
) -> list[dict[str, Any]]:
    """The result rows of one chunk, in order: searched side by side in lock-step
    rounds (one batched model call and one parser call per round), or one by one.
    ``on_row`` sees each row as soon as its sentence is done."""

    def job(k: int) -> Callable[[Requester], dict[str, Any]]:
        def run(client: Requester) -> dict[str, Any]:
            return attack_sentence(
                chunk[k],
                index=chunk_start + k,
                config=config,
                components=comps,
                scorer=scorer,
                objective=objective,
                options=tables[k],
                client=client,
            )

        return run

    jobs = [job(k) for k in range(len(chunk))]
    handlers = _handlers(comps, scorer)
    if not lockstep:
        direct = Direct(handlers)
        rows = []
        for run in jobs:
            rows.append(run(direct))
            on_row(rows[-1])
        return rows
    return run_rounds(jobs, handlers, on_done=lambda _, row: on_row(row))


def _handlers(comps: AttackComponents, scorer: CachedScorer) -> dict[str, Handler]:
    """What serves a search's requests: ``score`` (rows of candidates), ``syntax``
    (mask and tree edit distances) and ``sample`` (random reorderings)."""

    def sample(requests: list[tuple[Sentence, int, int]]) -> list[list[Perturbation]]:
        return [
            list(comps.generator.perturb([s], b=count, seed=seed)[0]) for s, count, seed in requests
        ]

    return {"score": scorer.rows_many, "syntax": comps.check_many, "sample": sample}


def _options_for(
    config: AttackConfig, comps: AttackComponents, sentences: Sequence[Sentence]
) -> list[dict[int, tuple[tuple[str, str], ...]]]:
    if config.method in REORDER_METHODS:
        return [{} for _ in sentences]
    tables = comps.generator.candidates(list(sentences), top_k=comps.generator.top_k)
    return [t.as_dict() for t in tables]


def _count(progress: Progress, row: dict[str, Any]) -> None:
    progress.done += 1
    progress.successes += bool(row["success"])
    progress.drop_sum += float(row["damage"])


def _rows_in_order(path: Path) -> Digest:
    """Digest of ``results.jsonl``; rewrites it sorted by index if it is not already.

    The attack appends rows in index order (a resumed run continues after the rows it
    finds), so the rewrite only happens for files assembled by hand.
    """
    digest = Digest()
    last = -1
    ordered = True
    for row in iter_results(path):
        index = int(row["index"])
        if index <= last:
            ordered = False
        last = max(last, index)
        digest.add(row)
    if ordered:
        return digest
    rows = sorted(iter_results(path), key=lambda r: int(r["index"]))
    unique: dict[int, dict[str, Any]] = {int(r["index"]): r for r in rows}
    with atomic_write(path) as handle:
        for r in unique.values():
            handle.write(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n")
    return Digest.of(unique.values())


def _adversarial(config: AttackConfig, rows: Iterator[dict[str, Any]]) -> Iterator[Sentence]:
    """The perturbed sentence of every row, treebank and rows read side by side."""
    row = next(rows, None)
    for index, sentence in enumerate(_stream_sentences(config)):
        if row is None:
            return
        if int(row["index"]) != index:
            continue
        if row["sent_id"] != sentence.sent_id:
            raise ConfigError(
                f"{config.treebank} changed since the attack: sentence {index} is "
                f"{sentence.sent_id!r}, the results have {row['sent_id']!r}"
            )
        yield apply_perturbation(sentence, perturbation_of(row))
        row = next(rows, None)
    if row is not None:
        raise ConfigError(
            f"{config.treebank} has fewer sentences than the results (no sentence {row['index']})"
        )


def finish(out_dir: Path, config: AttackConfig) -> dict[str, Any]:
    """Write ``adversarial.conllu`` and every report from ``results.jsonl``, streaming."""
    results = out_dir / RESULTS
    digest = _rows_in_order(results)
    write_conllu(_adversarial(config, iter_results(results)), out_dir / ADVERSARIAL)
    return render_reports(out_dir, digest, config=config.to_dict(), versions=versions())


def rerender(out: str | os.PathLike[str]) -> dict[str, Any]:
    """Re-render summary.json, summary.md, plots and adversarial.conllu from results."""
    out_dir = Path(out)
    saved = out_dir / CONFIG_JSON
    if not saved.exists():
        raise ConfigError(f"{out_dir} has no {CONFIG_JSON}: not an attack output directory")
    data = json.loads(saved.read_text())
    data["probes"] = tuple(data["probes"])
    data["objective"] = tuple(data.get("objective", ()))
    config = AttackConfig(**data)
    return finish(out_dir, config)
