"""What the runs report about their constraints and their perturbations' quality:
candidates rejected per constraint, the quality means (perturb, compare-methods, the
attack) and the sentences an attack had nothing to perturb in."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from test_attack import components as attack_components
from test_attack import config as attack_config

from brittle.data import default_treebank_path
from brittle.engine.attack import rerender, run_attack
from brittle.engine.compare.compare_report import markdown_report, quality_table
from brittle.engine.compare.compare_run import CompareConfig, CompareResult, compare_sentences
from brittle.engine.core.errors import BrittleInputError
from brittle.engine.core.perturbation import Perturbation
from brittle.engine.core.sentence import Sentence
from brittle.engine.perturb.perturb_run import (
    PerturbConfig,
    perturb_sentences,
    read_treebank,
    summary_lines,
    write_perturb_outputs,
)
from brittle.engine.reports.report import Digest, render_markdown, summarize
from brittle.engine.reports.results import ResultRow, RowValidity, TaskScores, read_rows
from brittle.scorers.parsers import CachedParser, Parse
from brittle.search.constraints import CandidateBatch, ConstraintResult
from brittle.search.generators.base import SubstitutionGenerator, SubstitutionTable
from brittle.search.quality import PairQuality, QualityMeter

from support import missing_sentence_models

MISSING = missing_sentence_models()
needs_models = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))


# ------------------------------------------------------------------ fakes
class ChainParser:
    """A chain under word 1, flattened when the word ``flat`` occurs; tags are kept."""

    name = "chain"
    ud_labels = False

    def prepare(self) -> None:
        pass

    def describe(self) -> dict[str, object]:
        return {"parser": self.name}

    def parse_words(self, batch: Sequence[tuple[str, ...]]) -> list[Parse]:
        out = []
        for words in batch:
            n = len(words)
            heads = [0] + ([1] * (n - 1) if "flat" in words else list(range(1, n)))
            out.append(Parse.build(heads, ["NOUN"] * n, ["dep"] * n))
        return out


@dataclass(frozen=True, kw_only=True)
class Words(SubstitutionGenerator):
    """The same made-up words at every eligible position."""

    method: ClassVar[str] = "words"
    words: tuple[str, ...] = ("flat", "dax")

    def candidates(
        self, sentences: Sequence[Sentence], *, top_k: int | None = None
    ) -> list[SubstitutionTable]:
        options = tuple((w, w) for w in self.words)
        return [
            SubstitutionTable.from_mapping(
                s.sent_id, self.method, len(s), {i: options for i in self.eligibility.positions(s)}
            )
            for s in sentences
        ]


class FixedMeter(QualityMeter):
    """Quality without models: the surprisal increase is the number of words changed,
    the similarity 1 / (1 + words changed), half the changed words keep their tag."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def describe(self) -> dict[str, object]:
        return {"lm": "fixed"}

    def measure(
        self,
        originals: Sequence[Sentence],
        perturbed: Sequence[Sentence],
        perturbations: Sequence[Perturbation] | None = None,
    ) -> list[PairQuality]:
        self.calls += 1
        assert perturbations is not None and len(perturbations) == len(originals)
        return [
            PairQuality(float(p.size), 1.0 / (1 + p.size), p.size, retag_kept=p.size // 2)
            for p in perturbations
        ]


@pytest.fixture(scope="module")
def demo() -> list[Sentence]:
    return read_treebank(default_treebank_path(), limit=10)


# ------------------------------------------------------------------ perturb
def test_perturb_counts_the_candidates_each_constraint_rejected(
    demo: list[Sentence], tmp_path: Path
) -> None:
    config = PerturbConfig(
        method="words", budget=1, candidates=6, constraints=("budget", "pos:1", "syntax:0.05")
    )
    result = perturb_sentences(
        demo, config=config, generator=Words(), parser=CachedParser(ChainParser())
    )
    names = ["budget", "pos", "syntax"]
    for record in result.records:
        assert list(record.rejected) == names or record.drawn == 0
        assert record.rejected.get("budget", 0) == 0
        # "flat" flattens the chain: every candidate with it breaks the syntax bound.
        assert record.rejected.get("syntax", 0) <= record.drawn
        assert record.drawn - record.admissible <= sum(record.rejected.values())
    summary = result.summary()
    totals = summary["rejected_by_constraint"]
    assert list(totals) == names
    assert totals["syntax"] == sum(r.rejected.get("syntax", 0) for r in result.records) > 0
    assert totals["pos"] > 0  # the chain parser tags every word NOUN
    lines = dict(summary_lines(summary))
    assert lines["candidates rejected by syntax"] == str(totals["syntax"])
    assert lines["candidates rejected by budget"] == "0"
    assert "mean surprisal increase (bits per word)" not in lines  # quality not measured
    write_perturb_outputs(result, tmp_path / "out.conllu", report=tmp_path / "report.json")
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["methods"]["words"]["rejected_by_constraint"] == totals
    assert report["sentences"][0]["rejected"] == dict(result.records[0].rejected)
    assert "quality" not in report


def test_perturb_reports_the_quality_of_the_chosen_perturbations(demo: list[Sentence]) -> None:
    config = PerturbConfig(method="words", budget=2, candidates=4, max_syntax_distance=1.0)
    meter = FixedMeter()
    result = perturb_sentences(
        demo,
        config=config,
        generator=Words(words=("dax", "wug")),
        parser=CachedParser(ChainParser()),
        quality=meter,
    )
    assert meter.calls == 1  # one chunk, one call
    done = [r for r in result.records if r.status == "perturbed"]
    assert done
    for r in done:
        assert r.surprisal_increase == r.changed
        assert r.similarity == pytest.approx(1.0 / (1 + r.changed), abs=1e-6)
        assert r.retag == pytest.approx((r.changed // 2) / r.changed, abs=1e-6)
    summary = result.summary()
    assert summary["mean_surprisal_increase"] == pytest.approx(np.mean([r.changed for r in done]))
    assert summary["mean_words_changed"] == summary["mean_surprisal_increase"]
    kept = sum(r.changed // 2 for r in done)
    assert summary["retag_agreement"] == pytest.approx(kept / sum(r.changed for r in done))
    assert summary["words_retagged"] == sum(r.changed for r in done)
    lines = dict(summary_lines(summary))
    assert lines["mean surprisal increase (bits per word)"] == (
        f"{summary['mean_surprisal_increase']:.3f}"
    )
    assert result.report()["quality"] == {"lm": "fixed"}
    unchanged = [r for r in result.records if r.status != "perturbed"]
    assert all(r.surprisal_increase is None for r in unchanged)


@needs_models
def test_perturb_with_the_real_meter(demo: list[Sentence]) -> None:
    config = PerturbConfig(method="neighbour-flip", budget=2, candidates=3, parser="gold")
    from brittle.engine.perturb.perturb_run import make_generator
    from brittle.scorers.parsers import make_parser

    parser = make_parser("gold")
    result = perturb_sentences(
        demo[:4],
        config=config,
        generator=make_generator("neighbour-flip"),
        parser=parser,
        quality=QualityMeter(parser=parser),
    )
    summary = result.summary()
    done = [r for r in result.records if r.status == "perturbed"]
    assert done and summary["mean_dnd"] is not None
    assert all(r.surprisal_increase is not None for r in done)
    assert all(r.similarity is not None and 0.0 < r.similarity <= 1.0 for r in done)
    assert summary["mean_similarity"] is not None and summary["mean_similarity"] < 1.0


def test_perturb_config_keeps_old_reports_unchanged() -> None:
    config = PerturbConfig(method="copos")
    assert "quality" not in config.to_dict() and "device" not in config.to_dict()
    off = PerturbConfig(method="copos", quality=False, device="cpu").to_dict()
    assert off["quality"] is False and off["device"] == "cpu"


# ------------------------------------------------------------------ compare-methods
def test_compare_methods_reports_quality_per_method(demo: list[Sentence]) -> None:
    config = CompareConfig(methods=("words", "neighbour-flip"), budgets=(2, 3), candidates=3)
    from brittle.engine.perturb.perturb_run import make_generator

    meter = FixedMeter()
    result = compare_sentences(
        demo[:5],
        config=config,
        generators={
            "words": Words(words=("dax",)),
            "neighbour-flip": make_generator("neighbour-flip"),
        },
        parser=CachedParser(ChainParser()),
        quality=meter,
    )
    for row in result.method_rows():
        assert row.mean_words_changed is not None
        assert row.mean_surprisal_increase == pytest.approx(row.mean_words_changed)
        assert row.mean_similarity is not None
    flips = [r for r in result.method_rows() if r.method == "neighbour-flip"]
    assert all(r.mean_dnd is not None and r.mean_idc is not None for r in flips)
    words = [r for r in result.method_rows() if r.method == "words"]
    assert all(r.mean_dnd is None for r in words)
    assert all(r.mean_surprisal_increase is None for r in result.reference_rows())
    table = quality_table(result)
    assert "| method | tau | words changed | surprisal increase (bits/word) |" in table
    assert table.count("\n") == 2 + len(result.method_rows())
    assert "## Quality of the drawn perturbations" in markdown_report(result)
    data = result.to_dict()
    rows = data["rows"]
    assert isinstance(rows, list) and "mean_similarity" in rows[0]


def test_compare_methods_reports_progress_as_each_method_finishes_a_chunk(
    demo: list[Sentence],
) -> None:
    config = CompareConfig(
        methods=("words", "neighbour-flip"), budgets=(1,), candidates=2, chunk_size=2
    )
    from brittle.engine.perturb.perturb_run import make_generator

    done: list[tuple[str, int, int]] = []
    compare_sentences(
        demo[:5],
        config=config,
        generators={"words": Words(), "neighbour-flip": make_generator("neighbour-flip")},
        parser=CachedParser(ChainParser()),
        progress=lambda method, k, total: done.append((method, k, total)),
    )
    assert done == [(method, k, 5) for k in (2, 4, 5) for method in ("words", "neighbour-flip")]


def test_each_comparison_chunk_starts_with_an_empty_parse_cache(demo: list[Sentence]) -> None:
    """What a comparison holds does not grow with the treebank: the parser's cache keeps
    only the last chunk's parses, and the result is the one of a single chunk."""
    small = demo[:6]

    def run(chunk_size: int, parser: CachedParser) -> CompareResult:
        config = CompareConfig(
            methods=("words",), budgets=(1,), candidates=2, chunk_size=chunk_size
        )
        return compare_sentences(
            small, config=config, generators={"words": Words(words=("dax",))}, parser=parser
        )

    parser = CachedParser(ChainParser())
    chunked = run(2, parser)
    parsed = parser.stats.parsed
    parser.parse([small[-1]])  # in the last chunk: answered by the cache
    assert parser.stats.parsed == parsed
    parser.parse([small[0]])  # in the first chunk: parsed again
    assert parser.stats.parsed == parsed + 1
    whole = run(16, CachedParser(ChainParser()))
    timeless = [replace(r, seconds=0.0) for r in chunked.rows]
    assert timeless == [replace(r, seconds=0.0) for r in whole.rows]  # wall times apart


def test_a_compare_result_reads_back_from_its_json(demo: list[Sentence]) -> None:
    """``CompareResult.from_dict`` reads what ``to_dict`` wrote (through JSON), so the
    tables render again from a kept ``compare-methods.json``."""
    config = CompareConfig(methods=("words",), budgets=(1, 2), candidates=2)
    result = compare_sentences(
        demo[:4],
        config=config,
        generators={"words": Words(words=("dax",))},
        parser=CachedParser(ChainParser()),
        quality=FixedMeter(),
    )
    data = json.loads(json.dumps(result.to_dict()))
    again = CompareResult.from_dict(data)
    assert again == result
    assert json.loads(json.dumps(again.to_dict())) == data
    assert quality_table(again) == quality_table(result) != ""


def test_compare_methods_without_quality_has_no_quality_table(demo: list[Sentence]) -> None:
    config = CompareConfig(methods=("words",), budgets=(1,), candidates=2, quality=False)
    result = compare_sentences(
        demo[:3], config=config, generators={"words": Words()}, parser=CachedParser(ChainParser())
    )
    assert quality_table(result) == ""
    assert "Quality" not in markdown_report(result)


# ------------------------------------------------------------------ the attack's rows
def row(index: int, **changes: object) -> ResultRow:
    base = ResultRow(
        index=index,
        sent_id=f"s{index}",
        success=True,
        method="copos",
        positions=(1,),
        original_words=("cat",),
        perturbed_words=("feline",),
        lemmas=("feline",),
        order=None,
        words=("the", "cat", "sat"),
        perturbed=("the", "feline", "sat"),
        tasks={"pos.acc": TaskScores(1.0, 0.5, 0.5)},
        damage=0.5,
        syntax_distance=0.0,
        hamming=1,
        eligible_positions=2,
        queries=6,
        evaluated=6,
        syntax_checked=2,
        epsilon_l2=1.0,
        epsilon_cosine=0.9,
        seconds=0.1,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def test_new_row_fields_round_trip_and_old_rows_still_read(tmp_path: Path) -> None:
    new = row(0, rejected={"syntax": 3, "fluency": 1}, surprisal_increase=1.25, similarity=0.9)
    old = row(1)
    data = json.loads(new.to_line())
    assert data["rejected"] == {"fluency": 1, "syntax": 3} and data["surprisal_increase"] == 1.25
    assert "retag" not in data and "dnd" not in data
    assert "rejected" not in json.loads(old.to_line())
    path = tmp_path / "results.jsonl"
    path.write_bytes(new.to_line() + old.to_line())
    back = list(read_rows(path))
    assert back[0] == new and back[1] == old
    assert back[1].rejected is None and back[1].similarity is None
    path.write_text(json.dumps({**data, "rejected": [1, 2]}) + "\n")
    with pytest.raises(BrittleInputError, match="malformed result row"):
        list(read_rows(path))


def test_nothing_eligible_is_reported_apart_from_failures() -> None:
    rows = [
        row(0),  # success, drop 0.5
        row(1, success=False, positions=(), original_words=(), perturbed_words=(), lemmas=(),
            tasks={"pos.acc": TaskScores(0.8, 0.8, 0.0)}, damage=0.0),  # a failure
        row(2, success=False, positions=(), original_words=(), perturbed_words=(), lemmas=(),
            tasks={"pos.acc": TaskScores(0.2, 0.2, 0.0)}, damage=0.0, eligible_positions=0,
            evaluated=0, queries=0, syntax_checked=0),  # nothing eligible
    ]  # fmt: skip
    assert [r.nothing_eligible for r in rows] == [False, False, True]
    summary = summarize(rows, config={}, versions={})
    assert summary["sentences"] == 3 and summary["no_eligible"] == 1
    assert summary["success_rate"] == 0.5  # 1 of the 2 sentences that could be attacked
    assert summary["tasks"]["pos.acc"]["mean_drop"] == 0.25  # (0.5 + 0.0) / 2
    assert summary["tasks"]["pos.acc"]["clean"] == 0.9
    assert summary["queries_per_sentence"] == 6.0
    md = render_markdown(summary)
    assert "1 of 3 sentences had no eligible position: they are not counted as failures" in md
    everything = summarize(rows[:2], config={}, versions={})
    assert everything["no_eligible"] == 0
    assert "no eligible position" not in render_markdown(everything)


def test_negative_worst_cases_and_query_budget_hits_are_counted_and_said() -> None:
    rows = [
        row(0),  # drop 0.5, 6 queries
        row(1, damage=-0.2, tasks={"pos.acc": TaskScores(0.5, 0.7, -0.2)}, queries=10),
        row(2, success=False, damage=0.0, queries=10, tasks={"pos.acc": TaskScores(1, 1, 0)}),
    ]
    summary = summarize(rows, config={"query_budget": 10}, versions={})
    assert summary["negative_worst_cases"] == 1 and summary["query_budget_hits"] == 2
    assert summary["tasks"]["pos.acc"]["mean_drop"] == 0.1  # (0.5 - 0.2 + 0) / 3
    md = render_markdown(summary)
    assert "1 sentence(s) kept a worst case that raised the probes' scores" in md
    assert "2 sentence(s) stopped at the query budget: their drops are lower bounds" in md
    plain = summarize(rows[:1], config={"query_budget": None}, versions={})
    assert plain["negative_worst_cases"] == 0 and plain["query_budget_hits"] is None
    assert "raised the probes" not in render_markdown(plain)
    assert "query budget" not in render_markdown(plain)


def test_a_reordering_row_counts_as_eligible_when_it_evaluated_something() -> None:
    flip = row(0, positions=(), original_words=(), perturbed_words=(), lemmas=(),
               order=(0, 2, 1), eligible_positions=0, dnd=0.5, idc=0.25)  # fmt: skip
    assert not flip.nothing_eligible
    assert Digest.of([flip]).no_eligible == 0


def test_attack_summary_adds_up_rejections_and_quality() -> None:
    rows = [
        row(0, rejected={"syntax": 2, "fluency": 1}, surprisal_increase=1.0, similarity=0.9,
            retag=1.0),
        row(1, rejected={"syntax": 1, "fluency": 0}, surprisal_increase=3.0, similarity=0.7,
            retag=0.0),
        row(2),  # an old row: nothing recorded
    ]  # fmt: skip
    summary = summarize(rows, config={}, versions={})
    assert summary["rejected_by_constraint"] == {"syntax": 3, "fluency": 1}
    assert summary["mean_surprisal_increase"] == 2.0
    assert summary["mean_similarity"] == 0.8
    assert summary["retag_agreement"] == 0.5
    md = render_markdown(summary)
    assert "| syntax | 3 |" in md and "| fluency | 1 |" in md
    assert "## Quality of the kept perturbations" in md
    old = summarize([row(0)], config={}, versions={})
    assert old["rejected_by_constraint"] == {} and old["mean_similarity"] is None
    assert "Quality" not in render_markdown(old) and "rejected, per constraint" not in (
        render_markdown(old)
    )


@needs_models
def test_attack_measures_the_kept_perturbations(tmp_path: Path) -> None:
    summary = run_attack(attack_config(), tmp_path, components=attack_components(), quality=True)
    rows = list(read_rows(tmp_path / "results.jsonl"))
    kept = [r for r in rows if r.success]
    assert kept and all(r.surprisal_increase is not None for r in kept)
    assert all(r.similarity is not None and r.retag is not None for r in kept)
    assert summary["mean_surprisal_increase"] is not None
    assert summary["retag_agreement"] == 1.0  # the gold parser tags as the treebank does
    again = rerender(tmp_path)
    assert again["mean_similarity"] == summary["mean_similarity"]
    plain = run_attack(attack_config(), tmp_path / "plain", components=attack_components())
    assert plain["mean_surprisal_increase"] is None


def test_attack_rows_count_the_candidates_each_constraint_rejected(tmp_path: Path) -> None:
    from test_attack import AcceptAll

    @dataclass(frozen=True)
    class NoX(AcceptAll):
        """Rejects candidates with a word ending in x (the fake generator's first option)."""

        name: ClassVar[str] = "no-x"

        def check(self, batch: CandidateBatch) -> ConstraintResult:
            values = np.array(
                [float(any(w.endswith("x") for w in s.forms)) for s in batch.sentences]
            )
            return ConstraintResult(self.name, values == 0, values)

    comps = replace(attack_components(), constraints=(AcceptAll(), NoX()))
    summary = run_attack(attack_config(), tmp_path, components=comps)
    rows = list(read_rows(tmp_path / "results.jsonl"))
    assert all(r.rejected is not None and set(r.rejected) == {"syntax", "no-x"} for r in rows)
    assert all(r.rejected is not None and r.rejected["syntax"] == 0 for r in rows)
    total = sum(r.rejected["no-x"] for r in rows if r.rejected is not None)
    assert total > 0 and summary["rejected_by_constraint"] == {"syntax": 0, "no-x": total}
    assert f"| no-x | {total} |" in (tmp_path / "summary.md").read_text()
    assert all(not any(w.endswith("x") for w in r.perturbed_words) for r in rows)


def test_the_summary_gives_the_drop_of_valid_perturbations_beside_all() -> None:
    graded = [
        row(0, validity=RowValidity(True, True, False, ("synonymy",))),  # drop 0.5
        row(1, validity=RowValidity(True, False, False, ("verb-frame",)),
            tasks={"pos.acc": TaskScores(1.0, 0.7, 0.3)}, damage=0.3),
        row(2, validity=RowValidity(False, False, False, ("retag",)),
            tasks={"pos.acc": TaskScores(1.0, 0.1, 0.9)}, damage=0.9),
        row(3, success=False, damage=0.0, tasks={"pos.acc": TaskScores(1, 1, 0)}),
    ]  # fmt: skip
    summary = summarize(graded, config={}, versions={})
    validity = summary["validity"]
    assert validity is not None and validity["graded"] == 3
    assert validity["shares"] == {"tree": 0.666667, "grammatical": 0.333333, "meaning": 0.0}
    assert summary["tasks"]["pos.acc"]["mean_drop"] == 0.425  # (0.5 + 0.3 + 0.9 + 0) / 4
    drops = validity["mean_drop_valid"]
    assert drops["tree"]["pos.acc"] == 0.2  # (0.5 + 0.3) / 4: the invalid one counts as 0
    assert drops["grammatical"]["pos.acc"] == 0.125 and drops["meaning"]["pos.acc"] == 0.0
    md = render_markdown(summary)
    assert "| tree | 0.667 | 0.200 |" in md and "| all kept | – | 0.425 |" in md
    plain = summarize([row(0)], config={}, versions={})
    assert plain["validity"] is None
    assert "not graded" in render_markdown(plain)


def test_validity_round_trips_in_results(tmp_path: Path) -> None:
    graded = row(0, validity=RowValidity(True, None, False, ("surprisal",)))
    path = tmp_path / "results.jsonl"
    path.write_bytes(graded.to_line() + row(1).to_line())
    back = list(read_rows(path))
    assert back[0] == graded and back[1].validity is None
    assert back[0].validity is not None and back[0].validity.level == "tree"
    data = json.loads(graded.to_line())
    path.write_text(json.dumps({**data, "validity": {"tree_valid": "yes"}}) + "\n")
    with pytest.raises(BrittleInputError, match="malformed result row"):
        list(read_rows(path))
