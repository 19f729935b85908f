"""Algorithm 1, the perturb run, its CoNLL-U output and the perturb / compare-methods CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from click.testing import CliRunner

from brittle.cli.main import main
from brittle.cli.perturb import perturb_command
from brittle.data import default_treebank_path
from brittle.engine.compare.compare_run import random_partners
from brittle.engine.core.conllu import read_conllu, write_conllu
from brittle.engine.core.errors import ConfigError
from brittle.engine.core.perturbation import Perturbation
from brittle.engine.core.sentence import Sentence
from brittle.engine.perturb.perturb_html import perturb_to_files, write_perturb_set
from brittle.engine.perturb.perturb_run import (
    DEFAULT_MAX_SYNTAX_DISTANCE,
    PerturbConfig,
    PerturbResult,
    count_treebank,
    make_generator,
    perturb_constraints,
    perturb_sentences,
    perturb_treebank,
    read_treebank,
    write_perturb_outputs,
)
from brittle.scorers.parsers import CachedParser, Parse, make_parser
from brittle.search.best_of_b import best_of_b, select_best
from brittle.search.constraints import (
    CONSTRAINTS,
    BudgetConstraint,
    CandidateBatch,
    Constraint,
    ConstraintContext,
    ConstraintResult,
    PosConstraint,
    SyntaxConstraint,
)
from brittle.search.generators.base import (
    GENERATORS,
    SubstitutionGenerator,
    SubstitutionTable,
    sentence_rng,
)
from brittle.search.problem import SearchProblem

from support import EWT_TEST


# ------------------------------------------------------------------ helpers
class ChainParser:
    """A fake parser backend: a chain, or a flat tree when the word ``flat`` occurs."""

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
            out.append(Parse.build(heads, ["X"] * n, ["dep"] * n))
        return out


@dataclass(frozen=True, kw_only=True)
class FixedWords(SubstitutionGenerator):
    """Offers the same three made-up words at every eligible position."""

    method: ClassVar[str] = "fixed"
    words: tuple[str, ...] = ("blick", "dax", "wug")

    def candidates(
        self, sentences: Sequence[Sentence], *, top_k: int | None = None
    ) -> list[SubstitutionTable]:
        k = self._k(top_k)
        options = tuple((w, w) for w in self.words[:k])
        return [
            SubstitutionTable.from_mapping(
                s.sent_id,
                self.method,
                len(s),
                {i: options for i in self.eligibility.positions(s)},
            )
            for s in sentences
        ]


@dataclass(frozen=True)
class WithoutWord(Constraint):
    """A cheap test constraint: rejects candidates that contain ``word``."""

    name: ClassVar[str] = "without-word"
    cheap: ClassVar[bool] = True
    spec_value: ClassVar[str] = "the word to keep out (default: dax)"

    word: str = "dax"

    @classmethod
    def from_spec(cls, value: str | None, context: ConstraintContext) -> WithoutWord:
        return cls(value or "dax")

    def check(self, batch: CandidateBatch) -> ConstraintResult:
        values = np.array([float(self.word in s.forms) for s in batch.sentences], dtype=np.float64)
        return ConstraintResult(self.name, values == 0, values)

    def describe(self) -> dict[str, object]:
        return {"name": self.name, "word": self.word}


@pytest.fixture
def without_word() -> Iterator[type[WithoutWord]]:
    """``without-word`` registered in CONSTRAINTS for the duration of one test."""
    CONSTRAINTS.register("without-word", help="test constraint")(WithoutWord)
    try:
        yield WithoutWord
    finally:
        CONSTRAINTS.unregister("without-word")


def _udvalidate() -> str | None:
    local = Path(sys.executable).parent / "udvalidate"
    return str(local) if local.exists() else shutil.which("udvalidate")


def assert_valid(path: Path) -> None:
    exe = _udvalidate()
    if exe is None:
        pytest.skip("udvalidate is not installed")
    proc = subprocess.run(
        [exe, "--lang", "en", "--level", "2", str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def assert_gold_columns_kept(original: Sentence, perturbed: Sentence) -> None:
    """Every column but FORM, LEMMA and MISC is unchanged on substituted sentences."""
    assert len(original.rows) == len(perturbed.rows)
    for a, b in zip(original.rows, perturbed.rows, strict=True):
        assert (a.id, a.upos, a.xpos, a.feats, a.head, a.deprel, a.deps) == (
            b.id,
            b.upos,
            b.xpos,
            b.feats,
            b.head,
            b.deprel,
            b.deps,
        )
        if a.form != b.form:
            assert b.misc_dict["OrigForm"] == a.form
            assert "Perturbation" in b.misc_dict
        else:
            assert a.misc == b.misc and a.lemma == b.lemma


@pytest.fixture(scope="module")
def small() -> list[Sentence]:
    return read_treebank(default_treebank_path(), limit=24)


# ------------------------------------------------------------------ Algorithm 1
def test_select_best_prefers_hamming_then_syntax_then_tiebreak() -> None:
    hamming = [1, 2, 2, 2, 3]
    syntax = [0.0, 0.3, 0.1, 0.1, 0.0]
    admissible = [True, True, True, True, False]  # the 3-word one fails the constraints
    assert (
        select_best(hamming=hamming, syntax=syntax, admissible=admissible, tiebreak=[0, 1, 2, 3, 4])
        == 2
    )
    assert (
        select_best(hamming=hamming, syntax=syntax, admissible=admissible, tiebreak=[0, 1, 4, 3, 2])
        == 3
    )
    assert select_best(hamming=[1], syntax=[np.nan], admissible=[False], tiebreak=[0]) is None
    with pytest.raises(ValueError):
        select_best(hamming=[1, 2], syntax=[0.0], admissible=[True], tiebreak=[0])


def test_best_of_b_on_a_small_known_case(small: list[Sentence]) -> None:
    s = small[0]  # "The old fisherman carefully repaired his torn nets ..."
    sid = s.sent_id

    def sub(pos: Sequence[int], forms: Sequence[str]) -> Perturbation:
        return Perturbation(sid, "fixed", tuple(pos), tuple(forms))

    drawn = [
        sub([2], ["sailor"]),  # 1 word, parse kept
        sub([2, 7], ["sailor", "flat"]),  # 2 words, flattens the parse: rejected
        sub([2, 7], ["sailor", "ropes"]),  # 2 words, parse kept  <- tie
        sub([1, 10], ["young", "dock"]),  # 2 words, parse kept   <- tie
        sub([1, 2, 7], ["young", "sailor", "ropes"]),  # 3 words: over budget
        sub([2], ["sailor"]),  # duplicate: dropped
    ]
    constraints = [
        BudgetConstraint(2),
        SyntaxConstraint(CachedParser(ChainParser()), max_distance=0.1),
    ]
    chosen = set()
    for seed in range(12):
        outcome = best_of_b(s, drawn, constraints=constraints, rng=np.random.default_rng(seed))
        assert outcome.drawn == 5 and outcome.admissible == 3
        assert outcome.outcome.mask.tolist() == [True, False, True, True, False]
        p = outcome.perturbation
        assert p is not None and len(p.positions) == 2 and "flat" not in p.replacements
        again = best_of_b(s, drawn, constraints=constraints, rng=np.random.default_rng(seed))
        assert again.perturbation == p  # a seed fixes the tie-break
        chosen.add(p)
        assert outcome.value("syntax") == 0.0 and outcome.value("budget") == 2.0
    assert len(chosen) == 2  # both tied candidates win under some seed


def test_best_of_b_with_nothing_admissible_keeps_the_original(small: list[Sentence]) -> None:
    s = small[0]
    drawn = [Perturbation(s.sent_id, "fixed", (2,), ("flat",))]
    constraints = [SyntaxConstraint(CachedParser(ChainParser()), max_distance=0.1)]
    outcome = best_of_b(s, drawn, constraints=constraints, rng=np.random.default_rng(0))
    assert outcome.chosen is None and outcome.sentence is s and outcome.drawn == 1
    empty = best_of_b(s, [], constraints=constraints, rng=np.random.default_rng(0))
    assert empty.chosen is None and empty.drawn == 0


# ------------------------------------------------------------------ one sampler
@pytest.fixture(scope="module")
def vocabulary() -> list[str]:
    """The default treebank's lowercase words, most frequent first (no GloVe needed)."""
    counts = Counter(
        f.lower() for s in read_treebank(default_treebank_path()) for f in s.forms if f.isalpha()
    )
    return [w for w, _ in counts.most_common()]


def _never_scored(candidates: Sequence[Perturbation]) -> np.ndarray:
    raise AssertionError("sampling scores nothing")


def _never_checked(candidates: Sequence[Perturbation]) -> np.ndarray:
    raise AssertionError("sampling checks nothing")


@pytest.mark.parametrize(("top_k", "budget"), [(1, 1), (3, 2), (6, 3), (10, 2)])
def test_perturb_and_search_sample_draw_the_same_perturbations(
    small: list[Sentence], vocabulary: list[str], top_k: int, budget: int
) -> None:
    """``perturb`` and ``attack --search sample`` share one sampler: for the same seed,
    generator options and budget they draw the same perturbations of each sentence."""
    seed, b = 11, 7
    generators = [
        make_generator("random", vocabulary=vocabulary, top_k=top_k),
        FixedWords(top_k=min(top_k, 3)),
    ]
    for generator in generators:
        assert isinstance(generator, SubstitutionGenerator)
        drawn = generator.perturb(small, b=b, seed=seed, tau=budget)
        tables = generator.candidates(small, top_k=generator.top_k)
        assert sum(len(ps) for ps in drawn) > len(small)  # something was drawn
        for sentence, table, from_perturb in zip(small, tables, drawn, strict=True):
            problem = SearchProblem(
                table,
                budget,
                score=_never_scored,
                feasible=_never_checked,
                is_exhausted=lambda: False,
            )
            from_search = problem.sample(b, sentence_rng(seed, sentence.sent_id))
            assert from_search == from_perturb
        # The seed matters: another one draws other perturbations somewhere.
        assert generator.perturb(small, b=b, seed=seed + 1, tau=budget) != drawn


# ------------------------------------------------------------------ the run
def _run(
    sentences: Sequence[Sentence], seed: int, constraints: tuple[str, ...] = ()
) -> PerturbResult:
    config = PerturbConfig(
        method="fixed", budget=2, candidates=6, seed=seed, parser="chain", constraints=constraints
    )
    return perturb_sentences(
        sentences,
        config=config,
        generator=FixedWords(),
        parser=CachedParser(ChainParser()),
    )


def test_run_counts_and_output_keep_gold_columns(small: list[Sentence], tmp_path: Path) -> None:
    result = _run(small, seed=3)
    counts = result.counts()
    assert sum(counts.values()) == len(small) == len(result.sentences)
    assert counts["perturbed"] > 0 and counts["rejected"] == 0
    for original, out, record in zip(small, result.sentences, result.records, strict=True):
        assert record.sent_id == original.sent_id
        if record.status == "perturbed":
            assert_gold_columns_kept(original, out)
            assert out.metadata["text"] == out.surface_text() != original.metadata["text"]
            assert out.metadata["perturbation"].startswith("fixed ")
            assert record.hamming is not None and 1 <= record.hamming <= 2
            assert record.syntax == 0.0
        else:
            assert out is original
    summary = result.summary()
    assert summary["mean_hamming"] == pytest.approx(
        np.mean([r.hamming for r in result.records if r.hamming is not None])
    )
    out_path = tmp_path / "out.conllu"
    write_perturb_outputs(result, out_path, report=tmp_path / "report.json")
    assert_valid(out_path)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["methods"]["fixed"]["perturbed"] == counts["perturbed"]
    assert report["seed"] == 3 and report["config"]["budget"] == 2
    assert "numpy" in report["versions"]


def test_pos_preservation_counts_the_pos_constraint_not_the_retag(small: list[Sentence]) -> None:
    # The gold parser keeps every gold tag: without quality (no re-tag) the rate is 1.
    config = PerturbConfig(method="fixed", budget=2, candidates=6, parser="gold", quality=False)
    result = perturb_sentences(
        small, config=config, generator=FixedWords(), parser=make_parser("gold")
    )
    done = [r for r in result.records if r.status == "perturbed"]
    assert done and all(r.pos_kept == r.changed for r in done)
    summary = result.summary()
    assert summary["pos_preservation_rate"] == 1.0 and summary["retag_agreement"] is None


def test_unchanged_and_rejected_sentences_are_written_as_they_were(small: list[Sentence]) -> None:
    # Only the word "flat" is offered: every candidate flattens the parse -> rejected.
    config = PerturbConfig(method="fixed", budget=1, candidates=4, max_syntax_distance=0.05)
    gen = FixedWords(words=("flat",))
    result = perturb_sentences(
        small[:6], config=config, generator=gen, parser=CachedParser(ChainParser())
    )
    assert result.counts()["perturbed"] == 0
    assert result.counts()["rejected"] == 6
    assert result.sentences == tuple(small[:6])
    # Nothing eligible: a sentence of determiners and punctuation only.
    only_punct = [s for s in small if not FixedWords().eligibility.positions(s)]
    if only_punct:
        r = _run(only_punct, seed=0)
        assert r.counts()["unchanged"] == len(only_punct)


def test_same_seed_gives_byte_identical_output(small: list[Sentence], tmp_path: Path) -> None:
    paths = []
    for k, seed in enumerate((7, 7, 8)):
        path = tmp_path / f"out{k}.conllu"
        write_perturb_outputs(_run(small, seed=seed), path, report=tmp_path / f"r{k}.json")
        paths.append(path)
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert (tmp_path / "r0.json").read_bytes() == (tmp_path / "r1.json").read_bytes()
    assert paths[0].read_bytes() != paths[2].read_bytes()


def test_each_chunk_starts_with_an_empty_parse_cache(small: list[Sentence]) -> None:
    """What a run holds does not grow with the treebank: the parser's cache keeps only
    the last chunk's parses, and the output is the one of a run in a single chunk."""
    parser = CachedParser(ChainParser())
    chunked = PerturbConfig(
        method="fixed", budget=2, candidates=6, seed=3, parser="chain", chunk_size=2
    )
    result = perturb_sentences(small, config=chunked, generator=FixedWords(), parser=parser)
    assert len(parser) <= 2 * (1 + 6) < len(small)  # the last chunk's originals and candidates
    parsed = parser.stats.parsed
    parser.parse([small[-1]])  # in the last chunk: answered by the cache
    assert parser.stats.parsed == parsed
    parser.parse([small[0]])  # in the first chunk: parsed again
    assert parser.stats.parsed == parsed + 1
    whole = _run(small, seed=3)
    assert [s.to_conllu() for s in result.sentences] == [s.to_conllu() for s in whole.sentences]


def test_reorderings_keep_the_gold_tree_and_validate(small: list[Sentence], tmp_path: Path) -> None:
    config = PerturbConfig(method="neighbour-flip", budget=2, candidates=8, parser="gold")
    result = perturb_sentences(
        small, config=config, generator=make_generator("neighbour-flip"), parser=make_parser("gold")
    )
    assert result.counts()["perturbed"] > 0
    for original, out, record in zip(small, result.sentences, result.records, strict=True):
        if record.status != "perturbed":
            continue
        moved = {t.misc_dict.get("OrigPosition") for t in out.words} - {None}
        assert 1 <= len(moved) <= 2
        # Same words, same (renumbered) tree: each word keeps its head word.
        old = {t.id: t for t in original.words}
        new_index = {t.misc_dict.get("OrigPosition", t.id): t.id for t in out.words}
        for t in out.words:
            src = old[t.misc_dict.get("OrigPosition", t.id)]
            assert (t.form, t.upos, t.deprel) == (src.form, src.upos, src.deprel)
            assert t.head == ("0" if src.head == "0" else new_index[src.head])
    path = tmp_path / "flip.conllu"
    write_conllu(result.sentences, path)
    assert_valid(path)


def test_config_rejects_bad_values() -> None:
    with pytest.raises(ConfigError):
        PerturbConfig(method="copos", budget=0)
    with pytest.raises(ConfigError):
        PerturbConfig(method="copos", candidates=0)
    with pytest.raises(ConfigError):
        PerturbConfig(method="copos", max_syntax_distance=-1)
    assert (
        PerturbConfig(method="copos", max_syntax_distance=float("inf")).to_dict()[
            "max_syntax_distance"
        ]
        == "inf"
    )


def test_default_constraints_are_budget_pos_and_syntax() -> None:
    parser = CachedParser(ChainParser())
    config = PerturbConfig(method="fixed", budget=2, max_syntax_distance=0.25, tree_labels="upos")
    budget, pos, syntax = perturb_constraints(config, parser)
    assert budget == BudgetConstraint(2)
    assert isinstance(pos, PosConstraint) and not pos.enforce and pos.parser is parser
    assert isinstance(syntax, SyntaxConstraint)
    assert (syntax.max_distance, syntax.labels, syntax.parser) == (0.25, "upos", parser)
    _, enforced, _ = perturb_constraints(replace(config, enforce_pos=True), parser)
    assert isinstance(enforced, PosConstraint)
    assert enforced.enforce and enforced.min_rate == 1.0


def test_constraints_are_configured_by_name(without_word: type[WithoutWord]) -> None:
    parser = CachedParser(ChainParser())
    config = PerturbConfig(method="fixed", budget=2, tree_labels="none")
    named = perturb_constraints(replace(config, constraints=("syntax:0.3", "budget:3")), parser)
    assert [c.name for c in named] == ["budget", "syntax"]  # cheap ones first
    assert named[0] == BudgetConstraint(3)
    assert isinstance(named[1], SyntaxConstraint)
    assert (named[1].max_distance, named[1].labels) == (0.3, "none")
    # A bare syntax takes the run's threshold.
    (bare,) = perturb_constraints(replace(config, constraints=("syntax",)), parser)
    assert isinstance(bare, SyntaxConstraint)
    assert bare.max_distance == DEFAULT_MAX_SYNTAX_DISTANCE
    # Any registered constraint can be named.
    (custom,) = perturb_constraints(replace(config, constraints=("without-word:wug",)), parser)
    assert custom == WithoutWord("wug")

    # --enforce-pos: adds an enforced pos, enforces a bare one, keeps a given rate.
    def specs(*names: str) -> list[str]:
        c = PerturbConfig(method="fixed", enforce_pos=True, constraints=names)
        return [str(spec) for spec in c.constraint_specs]

    assert specs() == ["budget", "pos:1", "syntax"]
    assert specs("syntax") == ["syntax", "pos:1"]
    assert specs("pos", "budget") == ["pos:1", "budget"]
    assert specs("pos:0.5") == ["pos:0.5"]


@pytest.mark.parametrize(
    ("constraints", "message"),
    [
        (("nope",), "unknown constraint 'nope'"),
        (("syntax", "syntax:0.2"), "syntax given more than once"),
        ((":0.2",), "expected NAME or NAME:VALUE"),
    ],
)
def test_bad_constraint_names_are_config_errors(constraints: tuple[str, ...], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        PerturbConfig(method="fixed", constraints=constraints)


def test_bad_constraint_values_fail_before_the_run() -> None:
    # Refused when the config is built (the spec is checked there) or, at the latest,
    # when the constraints are: either way before any sentence is read.
    with pytest.raises(ConfigError, match="expected a number"):
        config = PerturbConfig(method="fixed", constraints=("syntax:wide",))
        perturb_constraints(config, CachedParser(ChainParser()))


def test_a_named_constraint_decides_and_is_reported(
    small: list[Sentence], without_word: type[WithoutWord], tmp_path: Path
) -> None:
    default = _run(small, seed=5)
    assert any("dax" in s.forms for s in default.sentences)
    report = default.report()
    assert isinstance(report["config"], dict)
    assert "constraints" not in report and "constraints" not in report["config"]

    result = _run(small, seed=5, constraints=("budget", "without-word"))
    assert result.counts()["perturbed"] > 0
    assert not any("dax" in s.forms for s in result.sentences)
    assert all(r.syntax is None for r in result.records)  # no syntax constraint
    assert result.summary()["pos_preservation_rate"] is None  # no pos constraint
    report = result.report()
    assert isinstance(report["config"], dict)
    assert report["config"]["constraints"] == ["budget", "without-word"]
    assert report["constraints"] == [
        {"name": "budget", "tau": 2},
        {"name": "without-word", "word": "dax"},
    ]
    write_perturb_outputs(result, tmp_path / "o.conllu", report=tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text())["constraints"] == report["constraints"]


def test_random_partners_are_other_sentences_of_the_right_length() -> None:
    lengths = [3, 5, 3, 7, 5, 3]
    for same in (False, True):
        partners = random_partners(lengths, seed=1, same_length=same)
        assert partners == random_partners(lengths, seed=1, same_length=same)
        for i, j in enumerate(partners):
            if j is None:
                assert same and lengths.count(lengths[i]) == 1
                continue
            assert j != i
            if same:
                assert lengths[j] == lengths[i]
    assert random_partners([4, 4], seed=0, same_length=True) == [1, 0]


# ------------------------------------------------------------------ CLI, in-process
def test_cli_perturb_with_gold_parser(tmp_path: Path) -> None:
    out = tmp_path / "flip.conllu"
    report = tmp_path / "flip.json"
    args = [
        "perturb", str(default_treebank_path()), "--method", "neighbour-flip", "--budget", "2",
        "--candidates", "5", "--parser", "gold", "--seed", "1", "--limit", "10",
        "--out", str(out), "--report", str(report),
    ]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "perturbed" in result.output
    data = json.loads(report.read_text())
    counts = data["methods"]["neighbour-flip"]
    assert counts["perturbed"] + counts["unchanged"] + counts["rejected"] == 10
    assert len(read_conllu(out)) == 10
    assert_valid(out)


def test_cli_perturb_reports_bad_input_cleanly(tmp_path: Path) -> None:
    missing = tmp_path / "nope.conllu"
    result = CliRunner().invoke(
        main, ["perturb", str(missing), "--method", "shuffle", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2 and "file not found" in result.output
    result = CliRunner().invoke(main, ["perturb", "--help"])
    assert result.exit_code == 0 and "Algorithm 1" in result.output


def test_cli_perturb_constraint_option(tmp_path: Path) -> None:
    base = [
        "perturb", str(default_treebank_path()), "--method", "neighbour-flip", "--budget", "2",
        "--candidates", "5", "--parser", "gold", "--limit", "8",
        "--out", str(tmp_path / "o.conllu"),
    ]  # fmt: skip
    result = CliRunner().invoke(main, [*base, "--report", str(tmp_path / "default.json")])
    assert result.exit_code == 0, result.output
    default = json.loads((tmp_path / "default.json").read_text())
    assert "constraints" not in default and "constraints" not in default["config"]
    assert "syntax (max_distance=0.1," in result.output

    named = ["--constraint", "budget", "--constraint", "syntax:0.3"]
    result = CliRunner().invoke(main, [*base, *named, "--report", str(tmp_path / "named.json")])
    assert result.exit_code == 0, result.output
    assert "syntax (max_distance=0.3," in result.output
    data = json.loads((tmp_path / "named.json").read_text())
    assert data["config"]["constraints"] == ["budget", "syntax:0.3"]
    assert [c["name"] for c in data["constraints"]] == ["budget", "syntax"]
    assert data["constraints"][1]["max_distance"] == 0.3
    assert data["methods"]["neighbour-flip"]["pos_preservation_rate"] is None

    bad = CliRunner().invoke(main, [*base, "--constraint", "nope"])
    assert bad.exit_code == 2
    lines = bad.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: unknown constraint 'nope' (known: ")
    assert "budget, fluency, judged, pos, retag, similarity, syntax" in lines[0]


def test_cli_default_matches_the_library_default() -> None:
    option = next(p for p in perturb_command.params if p.name == "max_syntax_distance")
    assert option.default == DEFAULT_MAX_SYNTAX_DISTANCE


@pytest.mark.models
@pytest.mark.needs("spacy-model")
def test_cli_perturb_copos_for_real(tmp_path: Path) -> None:
    """WordNet synonyms, the spaCy parser and the real EWT test split."""
    if not EWT_TEST.exists():
        pytest.skip("EWT test split not available")
    from brittle.engine.core.resources import wordnet_status

    if not wordnet_status().available:
        pytest.skip("WordNet is not available")
    out = tmp_path / "copos.conllu"
    report = tmp_path / "copos.json"
    args = [
        "perturb", str(EWT_TEST), "--method", "copos", "--budget", "2", "--candidates", "10",
        "--limit", "20", "--seed", "0", "--out", str(out), "--report", str(report),
    ]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    data = json.loads(report.read_text())["methods"]["copos"]
    assert data["perturbed"] >= 2
    # coPOS means to keep the meaning: the default constraints check that it does.
    assert data["rejected_by_constraint"].keys() >= {"similarity", "fluency", "word-similarity"}
    assert 0.0 <= data["mean_syntax_distance"] <= 0.1
    assert 0.0 < data["pos_preservation_rate"] <= 1.0
    originals = read_treebank(EWT_TEST, limit=20)
    for a, b in zip(originals, read_conllu(out), strict=True):
        assert_gold_columns_kept(a, b)
    assert_valid(out)


@pytest.mark.models
@pytest.mark.needs("spacy-model")
def test_cli_compare_methods(tmp_path: Path) -> None:
    args = [
        "compare-methods", str(default_treebank_path()), "--methods", "neighbour-flip,shuffle",
        "--budgets", "1,2", "--candidates", "3", "--limit", "12", "--out", str(tmp_path),
    ]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "compare-methods.json").read_text())
    rows = {(r["method"], r["budget"]): r for r in data["rows"]}
    assert set(rows) == {
        ("neighbour-flip", 1),
        ("neighbour-flip", 2),
        ("shuffle", 1),
        ("shuffle", 2),
        ("random pairs", None),
        ("random pairs, same length", None),
    }
    assert rows[("random pairs", None)]["candidates"] == 12
    assert rows[("random pairs", None)]["distance"] > 0
    md = (tmp_path / "compare-methods.md").read_text()
    assert "| random pairs |" in md
    assert (tmp_path / "compare-methods.png").read_bytes()[:4] == b"\x89PNG"
    bad = CliRunner().invoke(main, [*args[:3], "nope", *args[4:]])
    assert bad.exit_code == 2 and "unknown generator 'nope'" in bad.output


def test_cli_perturb_without_stanza_models_names_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("stanza")
    monkeypatch.setattr("stanza.resources.common.DEFAULT_MODEL_DIR", str(tmp_path))
    args = [
        "perturb", str(default_treebank_path()), "--method", "shuffle", "--parser", "stanza",
        "--limit", "2", "--out", str(tmp_path / "o.conllu"),
    ]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert "Stanza English models" in result.output and "stanza.download" in result.output
    assert str(tmp_path) in result.output
    assert not (tmp_path / "o.conllu").exists()


def test_default_constraints_check_meaning_for_the_generators_that_mean_to_keep_it() -> None:
    def names(config: PerturbConfig) -> list[str]:
        return [spec.name for spec in config.constraint_specs]

    for method in ("copos", "coco"):
        assert names(PerturbConfig(method=method)) == [
            "budget", "pos", "syntax", "word-similarity", "similarity", "fluency"
        ]  # fmt: skip
    for method in ("random", "jabberwocky", "neighbours", "shuffle"):
        assert names(PerturbConfig(method=method)) == ["budget", "pos", "syntax"]
    assert names(PerturbConfig(method="copos", constraints=("syntax",))) == ["syntax"]
    assert names(PerturbConfig(method="fixed")) == ["budget", "pos", "syntax"]  # unregistered


# ------------------------------------------------------------------ streamed runs
def _repeated_treebank(path: Path, copies: int) -> Path:
    """The built-in treebank ``copies`` times over, each copy's ids made its own."""
    text = default_treebank_path().read_text()
    with path.open("w") as handle:
        for k in range(copies):
            handle.write(text.replace("# sent_id = ", f"# sent_id = c{k}-"))
    return path


@pytest.mark.needs("glove")
def test_streamed_files_equal_the_in_memory_run(tmp_path: Path) -> None:
    config = PerturbConfig(
        method="jabberwocky", parser="gold", quality=False, limit=150, chunk_size=16
    )
    treebank = _repeated_treebank(tmp_path / "tb.conllu", 2)
    names = ("out.conllu", "report.json", "page.html")
    kept = perturb_treebank(treebank, config)
    write_perturb_set(
        kept, tmp_path / "a" / names[0], report=tmp_path / "a" / names[1],
        html=tmp_path / "a" / names[2],
    )  # fmt: skip
    done: list[int] = []
    run = perturb_to_files(
        treebank, config, tmp_path / "b" / names[0], report=tmp_path / "b" / names[1],
        html=tmp_path / "b" / names[2], progress=done.append,
    )  # fmt: skip
    assert done == [16] * 9 + [6]
    assert run.records == kept.records and run.summary() == kept.summary()
    assert run.summary()["perturbed"] > 0
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_a_column_the_generator_needs_is_checked_over_the_whole_treebank(
    tmp_path: Path,
) -> None:
    text = default_treebank_path().read_text()
    blank = tmp_path / "blank.conllu"
    lines = []
    for line in text.splitlines():
        cells = line.split("\t")
        if len(cells) == 10:
            cells[2] = "_"  # LEMMA
        lines.append("\t".join(cells))
    blank.write_text("\n".join(lines) + "\n")
    config = PerturbConfig(method="neighbours", parser="gold", quality=False)
    with pytest.raises(ConfigError, match="needs the LEMMA column"):
        perturb_to_files(blank, config, tmp_path / "o.conllu")
    assert not (tmp_path / "o.conllu").exists()
    # one lemma anywhere, even in the last sentence, is enough
    first = text.split("\n\n")[0].replace("# sent_id = ", "# sent_id = again-")
    blank.write_text(blank.read_text() + first + "\n\n")
    with pytest.raises(ConfigError, match="needs the LEMMA column"):
        perturb_to_files(blank, replace(config, limit=119), tmp_path / "o.conllu")
    assert count_treebank(blank, make_generator("neighbours")) == 120


@pytest.fixture
def fixed_words() -> Iterator[str]:
    """:class:`FixedWords` registered as a generator for the duration of one test."""
    GENERATORS.register("fixed", help="test generator")(FixedWords)  # its ``method``
    try:
        yield "fixed"
    finally:
        GENERATORS.unregister("fixed")


def test_memory_does_not_grow_with_the_treebank(tmp_path: Path, fixed_words: str) -> None:
    """A streamed run holds a chunk of sentences at a time; what grows is one record
    per sentence (the report and the summary need them all)."""
    import gc
    import tracemalloc

    treebank = _repeated_treebank(tmp_path / "tb.conllu", 2)
    config = PerturbConfig(
        method=fixed_words, parser="gold", quality=False, constraints=("budget",), chunk_size=16
    )
    marks: dict[int, int] = {64: 0, 238: 0}
    done = [0]

    def measure(count: int) -> None:
        done[0] += count
        if done[0] in marks:
            gc.collect()  # also empties CPython's free lists, which would blur the count
            marks[done[0]] = tracemalloc.get_traced_memory()[0]

    # Loads and compiles what a run needs, outside the measurement (and much faster).
    perturb_to_files(treebank, replace(config, limit=16), tmp_path / "warm.conllu")
    tracemalloc.start()
    try:
        run = perturb_to_files(
            treebank, config, tmp_path / "o.conllu", report=tmp_path / "r.json",
            html=tmp_path / "p.html", progress=measure,
        )  # fmt: skip
    finally:
        tracemalloc.stop()
    assert run.summary()["sentences"] == 238 and run.summary()["perturbed"] > 200
    per_sentence = (marks[238] - marks[64]) / (238 - 64)
    # Holding each input and output sentence would cost about 12 kB a sentence; the
    # record and its share of the label index cost about 450 bytes.
    assert per_sentence < 1500, marks


def test_a_graded_run_reports_each_verdict_and_the_shares() -> None:
    from brittle.engine.perturb.perturb_run import PerturbRun, SentenceRecord
    from brittle.engine.reports.results import RowValidity

    valid = RowValidity(True, True, False, ("synonymy",))
    broken = RowValidity(False, False, False, ("retag",))
    records = (
        SentenceRecord("a", 3, "perturbed", validity=valid),
        SentenceRecord("b", 3, "perturbed", validity=broken),
        SentenceRecord("c", 3, "perturbed"),  # a reordering: not graded
        SentenceRecord("d", 3, "unchanged"),
    )
    graded = PerturbRun(PerturbConfig(method="random", grade=True), "t", records)
    assert graded.summary()["validity"] == {
        "graded": 2,
        "shares": {"tree": 0.5, "grammatical": 0.5, "meaning": 0.0},
    }
    assert records[0].to_json()["validity"] == {
        "tree_valid": True, "grammatical": True, "meaning_kept": False, "failed": ["synonymy"]
    }  # fmt: skip
    assert "validity" not in records[2].to_json()  # left out, as before grading existed
    plain = PerturbRun(PerturbConfig(method="random"), "t", records[2:])
    assert "validity" not in plain.summary()
    assert "grade" not in plain.config.to_dict() and graded.config.to_dict()["grade"] is True
