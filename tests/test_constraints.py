"""Constraints: budget, POS preservation and syntax distance, each on whole batches."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.errors import ConfigError
from brittle.engine.core.perturbation import Perturbation
from brittle.engine.core.sentence import Sentence
from brittle.scorers.distance import normalized_tree_edit_distance
from brittle.scorers.parsers import CachedParser, Parse, Parser, make_parser
from brittle.search.constraints import (
    CONSTRAINTS,
    BudgetConstraint,
    CandidateBatch,
    Constraint,
    ConstraintContext,
    ConstraintResult,
    ConstraintSpec,
    PosConstraint,
    SyntaxConstraint,
    build_constraints,
    changed_words,
    check_all,
    check_batches,
)

from support import FIXTURES


class RuleBackend:
    """A fake parser: a chain under word 1, except that the word ``flat`` flattens the tree
    and the word ``noun`` is tagged NOUN (everything else keeps its position's tag)."""

    name = "rule"
    ud_labels = False

    def __init__(self, tags: Sequence[str]) -> None:
        self.tags = tuple(tags)
        self.batches: list[int] = []

    def prepare(self) -> None:
        pass

    def describe(self) -> dict[str, object]:
        return {"parser": self.name}

    def parse_words(self, batch: Sequence[tuple[str, ...]]) -> list[Parse]:
        self.batches.append(len(batch))
        out = []
        for words in batch:
            n = len(words)
            heads = [0] + ([1] * (n - 1) if "flat" in words else list(range(1, n)))
            tags = ["NOUN" if w == "noun" else self.tags[i] for i, w in enumerate(words)]
            out.append(Parse.build(heads, tags, ["dep"] * n))
        return out


@pytest.fixture
def sentence() -> Sentence:  # "Sue likes coffee and Bill tea ." with an empty node
    return read_conllu(FIXTURES / "mwt_empty.conllu")[1]


def sub(s: Sentence, positions: Sequence[int], forms: Sequence[str]) -> Perturbation:
    return Perturbation(s.sent_id, "test", tuple(positions), tuple(forms))


def test_registered_under_stable_names() -> None:
    assert {"budget", "pos", "syntax"} <= set(CONSTRAINTS.names())
    assert CONSTRAINTS.get("budget") is BudgetConstraint
    with pytest.raises(ConfigError, match="unknown constraint 'nope'"):
        CONSTRAINTS.get("nope")


def test_constraints_are_built_from_specs_cheap_first() -> None:
    built: list[str] = []

    def parser() -> Parser:
        built.append("gold")
        return make_parser("gold")

    context = ConstraintContext(tau=3, parser=parser, max_syntax_distance=0.25)
    budget, syntax = build_constraints(["syntax", "budget"], context)
    assert isinstance(budget, BudgetConstraint) and budget.tau == 3  # the cheap one first
    assert isinstance(syntax, SyntaxConstraint) and syntax.max_distance == 0.25
    assert built == ["gold"]
    both = build_constraints(["syntax:0.1", "budget:2", "pos:0.5"], context)
    assert [c.name for c in both] == ["budget", "syntax", "pos"]
    assert both[0].describe()["tau"] == 2
    assert both[1].describe()["max_distance"] == 0.1
    assert both[2].describe()["min_rate"] == 0.5 and both[2].describe()["enforce"] is True
    measured = build_constraints(["pos"], context)[0]
    assert measured.describe()["enforce"] is False
    assert ConstraintSpec.parse("syntax:0.3") == ConstraintSpec("syntax", "0.3")
    assert str(ConstraintSpec.parse("budget")) == "budget"
    for bad, message in (
        ("nope", "unknown constraint 'nope'"),
        ("syntax:abc", "syntax: expected a number"),
        ("budget:1.5", "whole number"),
        ("budget:-1", "budget tau must be >= 0"),
        (":3", "expected NAME or NAME:VALUE"),
    ):
        with pytest.raises(ConfigError, match=message):
            build_constraints([bad], context)
    with pytest.raises(ConfigError, match="named twice"):
        build_constraints(["syntax", "syntax:0.1"], context)


def test_budget_only_loads_no_parser() -> None:
    def parser() -> Parser:
        raise AssertionError("no parser-based constraint was asked for")

    (budget,) = build_constraints(["budget"], ConstraintContext(tau=1, parser=parser))
    assert budget.cheap


def test_changed_words_for_substitutions_and_reorderings(sentence: Sentence) -> None:
    assert changed_words(sub(sentence, [0, 2], ["A", "B"])) == ((0, 2), (0, 2))
    order = Perturbation(sentence.sent_id, "shuffle", order=(1, 0, 2, 3, 4, 5, 6))
    assert changed_words(order) == ((0, 1), (1, 0))


def test_budget_counts_changed_words(sentence: Sentence) -> None:
    batch = CandidateBatch.build(
        sentence,
        [
            sub(sentence, [0], ["Ann"]),
            sub(sentence, [0, 2], ["Ann", "tea"]),
            sub(sentence, [0, 2, 5], ["Ann", "tea", "milk"]),
            sub(sentence, [2], ["coffee"]),  # same form: nothing changes
        ],
    )
    result = BudgetConstraint(2).check(batch)
    assert result.values.tolist() == [1.0, 2.0, 3.0, 0.0]
    assert result.mask.tolist() == [True, True, False, True]
    assert BudgetConstraint(2).allows_size(2) and not BudgetConstraint(2).allows_size(3)
    with pytest.raises(ValueError):
        result.mask[0] = False  # results are frozen, arrays read-only


def test_budget_on_a_reordering_counts_moved_forms(sentence: Sentence) -> None:
    order = Perturbation(sentence.sent_id, "flip", order=(0, 1, 2, 3, 4, 6, 5))
    batch = CandidateBatch.build(sentence, [order])
    assert BudgetConstraint(1).check(batch).values.tolist() == [2.0]


def test_pos_preservation_rate_and_enforcement(sentence: Sentence) -> None:
    backend = RuleBackend(sentence.upos)
    parser = CachedParser(backend)
    batch = CandidateBatch.build(
        sentence,
        [
            sub(sentence, [2], ["noun"]),  # coffee NOUN -> NOUN: kept
            sub(sentence, [0], ["noun"]),  # Sue PROPN -> NOUN: lost
            sub(sentence, [0, 2], ["noun", "noun"]),  # one of two kept
            sub(sentence, [1], ["adores"]),  # tagger keeps VERB
        ],
    )
    measured = PosConstraint(parser).check(batch)
    assert measured.values.tolist() == [1.0, 0.0, 0.5, 1.0]
    assert measured.mask.all() and not measured.enforced
    enforced = PosConstraint(parser, enforce=True).check(batch)
    assert enforced.mask.tolist() == [True, False, False, True]
    half = PosConstraint(parser, enforce=True, min_rate=0.5).check(batch)
    assert half.mask.tolist() == [True, False, True, True]
    assert backend.batches == [5]  # original + 4 candidates, parsed once, then cached


def test_pos_reference_parsed_uses_the_taggers_view_of_the_original(sentence: Sentence) -> None:
    wrong = ["X"] * len(sentence)  # a tagger that disagrees with gold everywhere
    parser = CachedParser(RuleBackend(wrong))
    batch = CandidateBatch.build(sentence, [sub(sentence, [1], ["adores"])])
    assert PosConstraint(parser, reference="gold").check(batch).values.tolist() == [0.0]
    assert PosConstraint(parser, reference="parsed").check(batch).values.tolist() == [1.0]
    with pytest.raises(ConfigError):
        PosConstraint(parser, reference="silver")  # type: ignore[arg-type]


def test_pos_with_gold_parser_follows_moved_words(sentence: Sentence) -> None:
    order = Perturbation(sentence.sent_id, "flip", order=(1, 0, 2, 3, 4, 5, 6))
    batch = CandidateBatch.build(sentence, [order])
    assert PosConstraint(make_parser("gold")).check(batch).values.tolist() == [1.0]


def test_syntax_distance_filters_a_whole_batch_in_one_parse(sentence: Sentence) -> None:
    backend = RuleBackend(sentence.upos)
    parser = CachedParser(backend)
    batch = CandidateBatch.build(
        sentence,
        [sub(sentence, [2], ["tea"]), sub(sentence, [2], ["flat"]), sub(sentence, [0], ["Ann"])],
    )
    result = SyntaxConstraint(parser, max_distance=0.2, labels="none").check(batch)
    n = len(sentence)
    chain = [0, *range(1, n)]
    flat = [0] + [1] * (n - 1)
    expected = normalized_tree_edit_distance(chain, flat)
    assert result.values.tolist() == pytest.approx([0.0, expected, 0.0])
    assert expected > 0.2
    assert result.mask.tolist() == [True, False, True]
    assert backend.batches == [4]
    again = SyntaxConstraint(parser, max_distance=2.0).check(batch)
    assert again.mask.all() and backend.batches == [4]  # all from the cache


def test_syntax_check_many_equals_one_at_a_time_in_one_parse(sentence: Sentence) -> None:
    backend = RuleBackend(sentence.upos)
    parser = CachedParser(backend)
    other = dataclasses.replace(sentence, sent_id="other")
    batches = [
        CandidateBatch.build(sentence, [sub(sentence, [2], ["tea"]), sub(sentence, [2], ["flat"])]),
        CandidateBatch.build(other, []),
        CandidateBatch.build(other, [sub(other, [0], ["Ann"]), sub(other, [2], ["flat"])]),
    ]
    constraint = SyntaxConstraint(parser, max_distance=0.2, labels="none")
    many = constraint.check_many(batches)
    assert len(backend.batches) == 1  # every sentence of every batch in one parser call
    fresh = SyntaxConstraint(CachedParser(RuleBackend(sentence.upos)), max_distance=0.2)
    for got, batch in zip(many, batches, strict=True):
        want = SyntaxConstraint(fresh.parser, max_distance=0.2, labels="none").check(batch)
        assert got.mask.tolist() == want.mask.tolist()
        assert got.values.tolist() == want.values.tolist()


def test_syntax_distance_with_gold_parser_is_zero_for_substitutions(sentence: Sentence) -> None:
    batch = CandidateBatch.build(sentence, [sub(sentence, [2], ["tea"])])
    result = SyntaxConstraint(make_parser("gold"), max_distance=0.0).check(batch)
    assert result.values.tolist() == [0.0] and result.mask.tolist() == [True]


def test_syntax_rejects_bad_settings() -> None:
    gold = make_parser("gold")
    with pytest.raises(ConfigError):
        SyntaxConstraint(gold, max_distance=-0.1)
    with pytest.raises(ConfigError):
        SyntaxConstraint(gold, labels="lemma")  # type: ignore[arg-type]


def test_check_all_ands_enforced_masks_and_keeps_every_value(sentence: Sentence) -> None:
    parser = CachedParser(RuleBackend(sentence.upos))
    batch = CandidateBatch.build(
        sentence,
        [
            sub(sentence, [2], ["noun"]),
            sub(sentence, [2], ["flat"]),
            sub(sentence, [0, 2, 5], ["noun", "noun", "noun"]),
        ],
    )
    outcome = check_all(
        batch,
        [BudgetConstraint(2), PosConstraint(parser), SyntaxConstraint(parser, max_distance=0.1)],
    )
    assert outcome.mask.tolist() == [True, False, False]
    assert [r.name for r in outcome.results] == ["budget", "pos", "syntax"]
    budget = outcome.values("budget")
    assert budget is not None and budget.tolist() == [1.0, 1.0, 3.0]
    assert outcome.values("missing") is None


def test_empty_batch(sentence: Sentence) -> None:
    batch = CandidateBatch.build(sentence, [])
    outcome = check_all(batch, [BudgetConstraint(1), SyntaxConstraint(make_parser("gold"))])
    assert outcome.mask.shape == (0,)


@pytest.mark.models
@pytest.mark.needs("spacy-model")
def test_syntax_and_pos_with_the_real_spacy_parser(sentence: Sentence) -> None:
    parser = make_parser("spacy")
    batch = CandidateBatch.build(
        sentence,
        [
            sub(sentence, [2], ["tea"]),  # noun for noun: parse kept
            sub(sentence, [1], ["the"]),  # the verb becomes a determiner
        ],
    )
    syntax = SyntaxConstraint(parser, max_distance=0.05).check(batch)
    pos = PosConstraint(parser, reference="parsed").check(batch)
    assert syntax.values[0] <= 0.05 < syntax.values[1]
    assert syntax.mask.tolist() == [True, False]
    assert pos.values[0] == 1.0 and pos.values[1] == 0.0
    assert np.isfinite(syntax.values).all()


@dataclasses.dataclass(frozen=True)
class _Refuses(Constraint):
    """Rejects the candidates that change a word at one of ``positions``; records the
    candidates it was asked about (a stand-in for a costly model constraint)."""

    positions: frozenset[int]
    seen: list[Perturbation] = dataclasses.field(default_factory=list)
    name: ClassVar[str] = "refuses"

    @classmethod
    def from_spec(cls, value: str | None, context: ConstraintContext) -> _Refuses:
        raise NotImplementedError

    def check(self, batch: CandidateBatch) -> ConstraintResult:
        self.seen.extend(batch.perturbations)
        keep = [not set(p.positions) & self.positions for p in batch.perturbations]
        values = np.array([float(min(p.positions)) for p in batch.perturbations])
        return ConstraintResult(self.name, np.array(keep, dtype=bool), values)

    def describe(self) -> dict[str, object]:
        return {"name": self.name}


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 5), min_size=1, max_size=3, unique=True), max_size=8),
    st.lists(st.frozensets(st.integers(0, 5), max_size=3), min_size=1, max_size=3),
    st.integers(1, 3),
)
def test_lazy_checks_give_the_same_conjunction_and_count_each_rejection_once(
    positions: list[list[int]], refused: list[frozenset[int]], tau: int
) -> None:
    s = read_conllu(FIXTURES / "mwt_empty.conllu")[1]
    perts = [sub(s, sorted(ps), ["x"] * len(ps)) for ps in positions]
    batches = [CandidateBatch.build(s, perts), CandidateBatch.build(s, perts[::-1])]
    eager = check_batches(batches, [BudgetConstraint(tau), *(_Refuses(r) for r in refused)])
    lazy_constraints = [BudgetConstraint(tau), *(_Refuses(r) for r in refused)]
    lazy = check_batches(batches, lazy_constraints, every=False)
    for e, z, batch in zip(eager, lazy, batches, strict=True):
        assert z.mask.tolist() == e.mask.tolist()
        # each rejected candidate counts once, for the first constraint that rejected it
        assert sum(r.rejected for r in z.results) == int((~z.mask).sum())
        assert [r.name for r in z.results] == [r.name for r in e.results]
        for k, p in enumerate(batch.perturbations):
            kept = [bool(r.mask[k]) for r in e.results]
            # measured by every constraint up to the first that rejects it, not after
            stop = kept.index(False) + 1 if False in kept else len(kept)
            measured = [not np.isnan(r.values[k]) for r in z.results]
            assert measured == [j < stop for j in range(len(kept))], p
    admitted = {p for p in perts if len(p.positions) <= tau}
    for c in lazy_constraints[1:]:
        assert isinstance(c, _Refuses)
        assert set(c.seen) <= admitted  # never asked about what an earlier one rejected
        admitted = {p for p in admitted if not set(p.positions) & c.positions}
