"""The attack run around its components: results, reports, resume and determinism.

The probe evaluator and the generator are small stand-ins here (their real versions
are tested on their own and together in the demo test); the search, scoring wrapper,
syntax constraint (gold parser), writers and resume logic are the real ones.
"""

from __future__ import annotations

import dataclasses
import json
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from click.testing import CliRunner
from numpy.typing import NDArray

from brittle.engine.attack import (
    ADVERSARIAL,
    AttackComponents,
    AttackConfig,
    build_components,
    rerender,
    run_attack,
)
from brittle.engine.attack.assembly import LazyParser
from brittle.engine.attack.run import Progress
from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.errors import ConfigError
from brittle.engine.core.sentence import Sentence
from brittle.engine.reports.results import read_rows
from brittle.scorers.parsers.base import Parser
from brittle.search.constraints import (
    CandidateBatch,
    Constraint,
    ConstraintContext,
    ConstraintResult,
)
from brittle.search.generators.base import SubstitutionGenerator
from brittle.search.problem import Estimates
from brittle.search.scoring import Evaluation, Request
from brittle.search.strategies.base import STRATEGIES
from brittle.search.table import SubstitutionTable

from support import FIXTURES

TREEBANK = FIXTURES / "mwt_empty.conllu"


def _h(word: str) -> float:
    return (zlib.crc32(word.encode()) % 1000) / 1000.0


class WordHashEvaluator:
    """Deterministic metrics that depend on the words, like a probe's would."""

    tasks = ("pos.acc", "distance.uuas")  # not in name order, as a real evaluator's may be
    primary = ("pos.acc", "distance.uuas")  # one metric per probe, as a real evaluator

    def __init__(self) -> None:
        self.calls = 0
        self.estimated = 0

    def evaluate_many(self, requests: Sequence[Request]) -> list[Evaluation]:
        self.calls += 1
        return [self._evaluate(o, c, a) for o, c, a in requests]

    def evaluate(
        self,
        original: Sentence,
        candidates: Sequence[Sentence],
        alignments: Sequence[NDArray[np.int64] | None],
    ) -> Evaluation:
        self.calls += 1
        return self._evaluate(original, candidates, alignments)

    def _evaluate(
        self,
        original: Sentence,
        candidates: Sequence[Sentence],
        alignments: Sequence[NDArray[np.int64] | None],
    ) -> Evaluation:
        m = len(candidates)
        metrics = np.empty((m, 2))
        for i, c in enumerate(candidates):
            vals = [_h(w) for w in c.forms]
            metrics[i] = (1 - np.mean(vals), 1 - np.max(vals))
        return Evaluation(metrics, np.linspace(0, 1, m), np.linspace(1, 0.5, m))

    def substitution_estimates_many(
        self, requests: Sequence[tuple[Sentence, SubstitutionTable, Mapping[str, float]]]
    ) -> list[Estimates | None]:
        """A guided search's estimates: each option's word hash, as its damage would be."""
        self.estimated += len(requests)
        return [
            {p: np.array([_h(f) for f, _ in opts]) for p, opts in table.entries}
            for _, table, _ in requests
        ]


@dataclass(frozen=True, kw_only=True)
class FixedOptions(SubstitutionGenerator):
    """Three options per content word."""

    method: ClassVar[str] = "copos"
    top_k: int = 3

    def candidates(
        self, sentences: Sequence[Sentence], *, top_k: int | None = None
    ) -> list[SubstitutionTable]:
        out = []
        for s in sentences:
            inside = s.multiword_positions
            opts = {
                i: tuple((f"{w}{k}", "_") for k in "xyz")
                for i, (w, u) in enumerate(zip(s.forms, s.upos, strict=True))
                if u in ("NOUN", "VERB") and i not in inside
            }
            out.append(SubstitutionTable.from_mapping(s.sent_id, "copos", len(s), opts))
        return out


@dataclass(frozen=True)
class AcceptAll(Constraint):
    """Keeps every candidate and measures a syntax distance of 0 (no parser needed)."""

    name: ClassVar[str] = "syntax"

    @classmethod
    def from_spec(cls, value: str | None, context: ConstraintContext) -> AcceptAll:
        return cls()

    def check(self, batch: CandidateBatch) -> ConstraintResult:
        return ConstraintResult(self.name, np.ones(len(batch), bool), np.zeros(len(batch)))

    def describe(self) -> dict[str, object]:
        return {"name": self.name}


def components(search: str = "beam") -> AttackComponents:
    cfg = config(search=search)
    strategy = STRATEGIES.get(search)(**cfg.strategy_parameters)
    evaluator = WordHashEvaluator()
    return AttackComponents(
        evaluator,
        FixedOptions(),
        strategy,
        (AcceptAll(),),
        LazyParser("gold"),
        estimator=evaluator,
    )


def config(
    *,
    treebank: str = str(TREEBANK),
    method: str = "copos",
    search: str = "beam",
    budget: int = 2,
    query_budget: int | None = None,
    limit: int | None = None,
) -> AttackConfig:
    return AttackConfig(
        treebank=treebank,
        probes=("p",),
        method=method,
        search=search,
        budget=budget,
        parser="gold",
        query_budget=query_budget,
        limit=limit,
    )


def _strip_timing(path: Path) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for r in rows:
        r.pop("seconds")
    return rows


@pytest.mark.parametrize("search", ["sample", "greedy", "beam", "guided"])
def test_every_report_file_is_written(tmp_path: Path, search: str) -> None:
    summary = run_attack(config(search=search), tmp_path, components=components(search))
    for name in (
        "adversarial.conllu",
        "results.jsonl",
        "summary.json",
        "summary.md",
        "config.json",
        "plots/clean_vs_perturbed.png",
    ):
        assert (tmp_path / name).exists(), name
    data = json.loads((tmp_path / "summary.json").read_text())
    assert data == json.loads(json.dumps(summary, sort_keys=True))
    assert set(data) >= {
        "tasks",
        "epsilon_l2",
        "epsilon_cosine",
        "success_rate",
        "queries_per_sentence",
        "sentences",
        "config",
        "versions",
    }
    assert set(data["tasks"]["pos.acc"]) == {"clean", "perturbed", "mean_drop", "std_drop"}
    assert data["sentences"] == 3
    rows = _strip_timing(tmp_path / "results.jsonl")
    assert [r["index"] for r in rows] == [0, 1, 2]
    adversarial = read_conllu(tmp_path / ADVERSARIAL)
    assert len(adversarial) == 3
    for r, s, orig in zip(rows, adversarial, read_conllu(TREEBANK), strict=True):
        assert list(s.forms) == r["perturbed"]
        assert r["hamming"] <= 2
        assert s.heads.tolist() == orig.heads.tolist()
        for t, v in r["tasks"].items():
            assert v["drop"] == pytest.approx(v["clean"] - v["perturbed"], abs=1e-6), t
    assert "Worst-case drop per task" in (tmp_path / "summary.md").read_text()


def test_same_seed_same_files(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    run_attack(config(search="sample"), a, components=components("sample"))
    run_attack(config(search="sample"), b, components=components("sample"))
    for name in (
        "adversarial.conllu",
        "summary.json",
        "summary.md",
        "plots/clean_vs_perturbed.png",
    ):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    assert _strip_timing(a / "results.jsonl") == _strip_timing(b / "results.jsonl")


def test_resume_after_interrupt_equals_uninterrupted_run(tmp_path: Path) -> None:
    full, cut = tmp_path / "full", tmp_path / "cut"
    run_attack(config(), full, components=components())

    class Interrupt(Exception):
        pass

    def stop_after_one(progress, total):
        if progress.done == 1:
            raise Interrupt

    with pytest.raises(Interrupt):
        run_attack(config(), cut, components=components(), on_sentence=stop_after_one)
    # A torn line, as a crash in the middle of a write would leave.
    with (cut / "results.jsonl").open("a") as handle:
        handle.write('{"index": 1, "sent')
    run_attack(config(), cut, components=components(), resume=True)
    for name in ("adversarial.conllu", "summary.json", "summary.md"):
        assert (full / name).read_bytes() == (cut / name).read_bytes(), name
    assert _strip_timing(full / "results.jsonl") == _strip_timing(cut / "results.jsonl")


def test_existing_results_need_resume_or_overwrite(tmp_path: Path) -> None:
    run_attack(config(), tmp_path, components=components())
    with pytest.raises(ConfigError, match="--resume"):
        run_attack(config(), tmp_path, components=components())
    with pytest.raises(ConfigError, match="other settings"):
        run_attack(config(budget=1), tmp_path, components=components(), resume=True)
    run_attack(config(budget=1), tmp_path, components=components(), overwrite=True)
    assert json.loads((tmp_path / "config.json").read_text())["budget"] == 1


def test_query_budget_is_recorded(tmp_path: Path) -> None:
    run_attack(config(query_budget=4), tmp_path, components=components())
    rows = _strip_timing(tmp_path / "results.jsonl")
    assert all(r["queries"] <= 4 for r in rows)
    assert max(r["queries"] for r in rows) == 4


def test_invalid_options_are_config_errors() -> None:
    with pytest.raises(ConfigError):
        config(budget=0)
    with pytest.raises(ConfigError):
        config(method="shuffle", search="beam")


def test_report_command_rerenders(tmp_path: Path) -> None:
    from brittle.cli.main import main

    run_attack(config(), tmp_path, components=components())
    before = (tmp_path / "summary.json").read_bytes()
    (tmp_path / "summary.json").unlink()
    (tmp_path / "summary.md").unlink()
    result = CliRunner().invoke(main, ["report", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "summary.json").read_bytes() == before
    assert "Worst-case drop per task" in result.output


def _repeated_treebank(path: Path, copies: int) -> Path:
    """The built-in treebank ``copies`` times over, with distinct sentence ids."""
    from brittle.data import default_treebank_path

    text = default_treebank_path().read_text()
    with path.open("w") as handle:
        for k in range(copies):
            handle.write(text.replace("# sent_id = ", f"# sent_id = c{k}-"))
    return path


def test_memory_does_not_grow_with_the_treebank(tmp_path: Path) -> None:
    import gc
    import tracemalloc

    treebank = _repeated_treebank(tmp_path / "tb.conllu", 4)
    marks = {100: 0, 476: 0}

    def measure(progress, total):
        if progress.done in marks:
            gc.collect()  # also empties CPython's free lists, which would blur the count
            marks[progress.done] = tracemalloc.get_traced_memory()[0]

    tracemalloc.start()
    try:
        summary = run_attack(
            config(treebank=str(treebank), search="greedy"),
            tmp_path / "out",
            components=components("greedy"),
            on_sentence=measure,  # the default caches: they start empty at every chunk
        )
    finally:
        tracemalloc.stop()
    assert summary["sentences"] == 476
    per_sentence = (marks[476] - marks[100]) / 376
    # Holding each sentence or its result row would cost several kilobytes per sentence;
    # what may grow is the digest for the reports, a few floats per sentence and task.
    assert per_sentence < 400, marks


def test_report_only_reads_and_refuses_rows_out_of_order(tmp_path: Path) -> None:
    run_attack(config(), tmp_path, components=components())
    before = {
        n: (tmp_path / n).read_bytes() for n in ("adversarial.conllu", "summary.json", "summary.md")
    }
    rerender(tmp_path)
    for name, data in before.items():
        assert (tmp_path / name).read_bytes() == data, name
    lines = (tmp_path / "results.jsonl").read_text().splitlines(keepends=True)
    edited = "".join(reversed(lines))
    (tmp_path / "results.jsonl").write_text(edited)
    with pytest.raises(ConfigError, match="not in sentence order"):
        rerender(tmp_path)
    assert (tmp_path / "results.jsonl").read_text() == edited
    for name, data in before.items():
        assert (tmp_path / name).read_bytes() == data, name


def test_changed_treebank_is_a_config_error(tmp_path: Path) -> None:
    treebank = tmp_path / "tb.conllu"
    treebank.write_text(TREEBANK.read_text())
    run_attack(config(treebank=str(treebank)), tmp_path / "out", components=components())
    treebank.write_text(TREEBANK.read_text().replace("sent_id = fx-2", "sent_id = other"))
    with pytest.raises(ConfigError, match="changed since the attack"):
        rerender(tmp_path / "out")


@pytest.mark.parametrize("search", ["sample", "greedy", "beam", "guided"])
def test_lockstep_rounds_equal_one_sentence_at_a_time(tmp_path: Path, search: str) -> None:
    treebank = _repeated_treebank(tmp_path / "tb.conllu", 1)
    cfg = config(treebank=str(treebank), search=search, limit=40)
    together, alone = components(search), components(search)
    run_attack(cfg, tmp_path / "rounds", components=together, chunk_size=16)
    run_attack(cfg, tmp_path / "alone", components=alone, lockstep=False)
    assert _strip_timing(tmp_path / "rounds" / "results.jsonl") == _strip_timing(
        tmp_path / "alone" / "results.jsonl"
    )
    for name in ("adversarial.conllu", "summary.json"):
        a = (tmp_path / "rounds" / name).read_bytes()
        assert a == (tmp_path / "alone" / name).read_bytes(), name
    # The sentences of a chunk share model calls.
    assert isinstance(together.evaluator, WordHashEvaluator)
    assert isinstance(alone.evaluator, WordHashEvaluator)
    # (guided searches score 8 candidates a round and end at different rounds: fewer
    # sentences share each of their later calls)
    assert together.evaluator.calls < alone.evaluator.calls / (3 if search == "guided" else 4)
    # A guided search asks for its sentence's estimates once, in rounds as alone.
    estimated = together.evaluator.estimated
    assert estimated == alone.evaluator.estimated == (40 if search == "guided" else 0)


def test_progress_moves_one_sentence_at_a_time(tmp_path: Path) -> None:
    treebank = _repeated_treebank(tmp_path / "tb.conllu", 1)
    seen: list[tuple[int, int]] = []
    run_attack(
        config(treebank=str(treebank), limit=40),
        tmp_path / "out",
        components=components(),
        on_sentence=lambda progress, total: seen.append((progress.done, total)),
    )
    assert seen == [(k, 40) for k in range(41)]


def test_a_bad_sentence_anywhere_fails_before_any_search(tmp_path: Path) -> None:
    from brittle.engine.core.errors import BrittleInputError

    treebank = _repeated_treebank(tmp_path / "tb.conllu", 1)
    lines = treebank.read_text().splitlines(keepends=True)
    # Break the HEAD column of a word near the end of the file.
    k = max(i for i, line in enumerate(lines) if line[:1].isdigit())
    cols = lines[k].split("\t")
    cols[6] = "x"
    lines[k] = "\t".join(cols)
    treebank.write_text("".join(lines))
    comps = components()
    with pytest.raises(BrittleInputError) as err:
        run_attack(config(treebank=str(treebank)), tmp_path / "out", components=comps)
    assert err.value.line == k + 1 and str(treebank) in str(err.value)
    assert isinstance(comps.evaluator, WordHashEvaluator) and comps.evaluator.calls == 0
    assert not (tmp_path / "out" / "results.jsonl").exists()


@dataclass(frozen=True)
class AcceptOdd(Constraint):
    """Admits only candidates whose first changed word has an odd hash: half of them."""

    name: ClassVar[str] = "syntax"

    @classmethod
    def from_spec(cls, value: str | None, context: ConstraintContext) -> AcceptOdd:
        return cls()

    def check(self, batch: CandidateBatch) -> ConstraintResult:
        keep = np.array(
            [zlib.crc32(" ".join(p.replacements).encode()) % 2 == 1 for p in batch.perturbations],
            dtype=bool,
        )
        return ConstraintResult(self.name, keep, np.zeros(len(batch)))

    def describe(self) -> dict[str, object]:
        return {"name": self.name}


@pytest.mark.parametrize("search", ["sample", "greedy", "beam", "guided"])
def test_epsilon_is_taken_over_admissible_candidates_only(tmp_path: Path, search: str) -> None:
    cfg = config(search=search)
    strategy = STRATEGIES.get(search)(**cfg.strategy_parameters)
    parts = AttackComponents(
        WordHashEvaluator(), FixedOptions(), strategy, (AcceptOdd(),), LazyParser("gold")
    )
    run_attack(cfg, tmp_path / "odd", components=parts)
    run_attack(cfg, tmp_path / "all", components=components(search))
    odd = _strip_timing(tmp_path / "odd" / "results.jsonl")
    every = _strip_timing(tmp_path / "all" / "results.jsonl")
    for o, a in zip(odd, every, strict=True):
        if not o["success"]:
            assert o["epsilon_l2"] is None and o["epsilon_cosine"] is None, o
        elif search == "sample":  # the same draws, fewer of them count: never farther
            assert o["epsilon_l2"] <= a["epsilon_l2"] + 1e-9
    assert any(o["success"] for o in odd)


def test_progress_leaves_out_sentences_with_nothing_to_perturb(tmp_path: Path) -> None:
    run_attack(config(), tmp_path, components=components())
    rows = list(read_rows(tmp_path / "results.jsonl"))
    empty = dataclasses.replace(rows[0], eligible_positions=0, evaluated=0, success=False)
    progress = Progress()
    for row in (empty, *rows[1:]):
        progress.count(row)
    searched = rows[1:]
    assert progress.done == len(rows) and progress.no_eligible == 1
    assert progress.success_rate == sum(r.success for r in searched) / len(searched)
    assert progress.mean_drop == pytest.approx(sum(r.damage for r in searched) / len(searched))


def test_check_all_records_each_tasks_worst_drop_and_keeps_the_choice(tmp_path: Path) -> None:
    lazy_cfg = config(search="sample")
    full_cfg = dataclasses.replace(lazy_cfg, check_all=True)
    for cfg, out in ((lazy_cfg, tmp_path / "lazy"), (full_cfg, tmp_path / "all")):
        strategy = STRATEGIES.get("sample")(**cfg.strategy_parameters)
        parts = AttackComponents(
            WordHashEvaluator(), FixedOptions(), strategy, (AcceptOdd(),), LazyParser("gold")
        )
        run_attack(cfg, out, components=parts)
    lazy = _strip_timing(tmp_path / "lazy" / "results.jsonl")
    full = _strip_timing(tmp_path / "all" / "results.jsonl")
    for a, b in zip(lazy, full, strict=True):
        assert (a["perturbed"], a["damage"]) == (b["perturbed"], b["damage"])
        assert all("worst" not in v for v in a["tasks"].values())
        assert b["syntax_checked"] == b["evaluated"] >= a["syntax_checked"]
        for v in b["tasks"].values():
            if b["success"]:  # the kept candidate is one of the feasible ones
                assert v["best"] - 1e-9 <= v["drop"] <= v["worst"] + 1e-9
            else:  # nothing feasible: the sentence is kept as it is
                assert v["worst"] == v["drop"] == v["best"] == 0
        if a["success"]:  # more feasible candidates seen: epsilon never nearer
            assert b["epsilon_l2"] >= a["epsilon_l2"] - 1e-9
    assert any(b["success"] for b in full)
    summary = json.loads((tmp_path / "all" / "summary.json").read_text())
    attacked = [b for b in full if b["eligible_positions"]]
    for name, task in summary["tasks"].items():
        assert task["mean_worst"] >= task["mean_drop"] - 1e-9
        gains = [-b["tasks"][name]["best"] for b in attacked]
        assert task["mean_gain"] == pytest.approx(sum(gains) / len(gains), abs=1e-6)
    md = (tmp_path / "all" / "summary.md").read_text()
    assert "task alone" in md and "largest gain, task alone (the null)" in md
    lazy_summary = json.loads((tmp_path / "lazy" / "summary.json").read_text())
    assert all("mean_worst" not in t for t in lazy_summary["tasks"].values())
    assert all("mean_gain" not in t for t in lazy_summary["tasks"].values())
    assert "the null" not in (tmp_path / "lazy" / "summary.md").read_text()


def test_lazy_parser_loads_once_and_forgets_its_parses_without_loading() -> None:
    from brittle.engine.attack.assembly import LazyParser
    from brittle.scorers.parsers.base import CachedParser, Parse

    lazy = LazyParser("gold")
    lazy.clear_cache()  # nothing loaded yet: nothing to load either
    assert lazy.loaded is None
    parser = lazy()
    assert lazy() is parser and lazy.loaded is parser

    class Backend:
        name = "fake"

        def prepare(self) -> None:
            pass

        def describe(self) -> dict[str, object]:
            return {}

        def parse_words(self, batch):  # type: ignore[no-untyped-def]
            return [
                Parse(np.zeros(len(w), dtype=np.int32), ("X",) * len(w), ("dep",) * len(w))
                for w in batch
            ]

    cached = CachedParser(Backend())  # type: ignore[arg-type]
    lazy.loaded = cached
    sentence = read_conllu(TREEBANK)[0]
    cached.parse([sentence])
    assert len(cached) == 1
    lazy.clear_cache()
    assert len(cached) == 0


def test_the_parser_is_prepared_before_the_generator_loads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The syntax check prepares the parser (starting its helper processes) before the
    generator and the probes load, so the helpers load spaCy while this process loads
    the rest."""
    from brittle.engine.attack import assembly

    events: list[str] = []

    class Recorded(assembly.LazyParser):
        def __call__(self) -> Parser:
            events.append("parser")
            return super().__call__()

    class Options(FixedOptions):
        def prepare(self) -> None:
            events.append("generator")

    def probes(*args: object, **kwargs: object) -> WordHashEvaluator:
        events.append("probes")
        return WordHashEvaluator()

    monkeypatch.setattr(assembly, "_parser_factory", Recorded)
    monkeypatch.setattr(assembly, "build_generator", lambda config: Options())
    monkeypatch.setattr(assembly.ProbeEvaluator, "from_dirs", probes)
    comps = build_components(config())
    assert events == ["parser", "generator", "probes"]
    assert isinstance(comps.generator, Options)
    assert isinstance(comps.evaluator, WordHashEvaluator)


def test_each_chunk_forgets_the_shared_models_texts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The constraints' encoder and language model keep texts by the thousand; a chunk's
    candidates do not come back in a later chunk, so every chunk starts by forgetting
    them (as ``perturb`` does), and the output is the same as in one chunk."""
    import brittle.engine.attack.chunk_search as chunk_search

    calls: list[int] = []
    monkeypatch.setattr(chunk_search, "forget_texts", lambda: calls.append(1))
    run_attack(config(limit=6), tmp_path / "whole", components=components(), chunk_size=16)
    whole = len(calls)
    run_attack(config(limit=6), tmp_path / "chunks", components=components(), chunk_size=2)
    assert whole >= 1 and len(calls) - whole > whole  # more chunks, more forgetting
    chunks, one = (tmp_path / d / "adversarial.conllu" for d in ("chunks", "whole"))
    assert chunks.read_bytes() == one.read_bytes()
