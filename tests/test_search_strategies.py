"""Strategies on small problems whose worst case is known; query counting and caching."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pytest
from numpy.typing import NDArray

from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.perturbation import Perturbation
from brittle.engine.core.sentence import Sentence
from brittle.search.problem import SearchProblem, first_feasible
from brittle.search.scoring import CachedScorer, Evaluation, Objective, ScoringSession
from brittle.search.strategies import BeamSearch, GreedySearch, SampleSearch
from brittle.search.strategies.base import Strategy
from brittle.search.table import SubstitutionTable

from support import FIXTURES

SENTENCE = read_conllu(FIXTURES / "mwt_empty.conllu")[1]  # 7 words


class AdditiveEvaluator:
    """Metric = 1 - sum of the penalties of the replacement words present (known worst case)."""

    tasks = ("a", "b")
    primary = ()

    def __init__(self, penalty: dict[str, float], interaction: float = 0.0) -> None:
        self.penalty = penalty
        self.interaction = interaction
        self.calls = 0
        self.evaluated = 0

    def evaluate(
        self, original: Sentence, candidates: Sequence[Sentence], alignments
    ) -> Evaluation:
        self.calls += 1
        self.evaluated += len(candidates)
        out = np.empty((len(candidates), 2))
        for i, c in enumerate(candidates):
            changed = [w for w, o in zip(c.forms, original.forms, strict=True) if w != o]
            total = sum(self.penalty.get(w, 0.0) for w in changed)
            out[i] = (1.0 - total, 1.0 - 2 * total)
        m = len(candidates)
        return Evaluation(out, np.arange(m, dtype=float), np.linspace(1.0, 0.5, m))

    def evaluate_many(self, requests) -> list[Evaluation]:
        return [self.evaluate(o, c, a) for o, c, a in requests]


OPTIONS = {
    1: (("adores", "adore"), ("enjoys", "enjoy")),
    2: (("tea", "tea"), ("juice", "juice")),
    5: (("coffee", "coffee"), ("water", "water"), ("milk", "milk")),
}
PENALTY = {
    "adores": 0.1,
    "enjoys": 0.3,
    "tea": 0.05,
    "juice": 0.2,
    "water": 0.4,
    "milk": 0.25,
    "coffee": 0.0,
}


def make_problem(
    evaluator: AdditiveEvaluator,
    *,
    budget: int = 2,
    query_budget: int | None = None,
    infeasible: frozenset[str] = frozenset(),
    scorer: CachedScorer | None = None,
):
    scorer = CachedScorer(evaluator) if scorer is None else scorer
    session = scorer.session(SENTENCE, Objective.mean_of(["a", "b"]), query_budget=query_budget)
    checked: list[Perturbation] = []

    def feasible(batch: Sequence[Perturbation]) -> np.ndarray:
        checked.extend(batch)
        mask = np.array([not (set(p.replacements) & infeasible) for p in batch])
        session.admit(batch, mask)  # as the attack's check does: epsilon and worst
        return mask

    table = SubstitutionTable.from_mapping(SENTENCE.sent_id, "test", len(SENTENCE), OPTIONS)
    problem = SearchProblem(
        table, budget, session, feasible, session.is_exhausted, queries_left=session.queries_left
    )
    return problem, session, checked


def brute_force(budget: int, infeasible: frozenset[str] = frozenset()) -> float:
    best = 0.0
    for k in range(1, budget + 1):
        for positions in itertools.combinations(OPTIONS, k):
            for choice in itertools.product(*(OPTIONS[p] for p in positions)):
                if {f for f, _ in choice} & infeasible:
                    continue
                total = sum(PENALTY[f] for f, _ in choice)
                best = max(best, 1.5 * total)  # mean drop over tasks a (x1) and b (x2)
    return best


@pytest.mark.parametrize("budget", [1, 2, 3])
def test_beam_finds_known_worst_case(budget: int) -> None:
    problem, _, _ = make_problem(AdditiveEvaluator(PENALTY), budget=budget)
    out = BeamSearch(beam_width=4).search(problem, rng=np.random.default_rng(0))
    assert out.damage == pytest.approx(brute_force(budget))
    assert len(out.best.positions) == budget
    assert out.success


def test_greedy_on_additive_problem_is_optimal_and_cheaper_than_beam() -> None:
    problem, session, _ = make_problem(AdditiveEvaluator(PENALTY), budget=2)
    out = GreedySearch().search(problem, rng=np.random.default_rng(0))
    assert out.damage == pytest.approx(brute_force(2))
    beam_problem, beam_session, _ = make_problem(AdditiveEvaluator(PENALTY), budget=2)
    BeamSearch(beam_width=4).search(beam_problem, rng=np.random.default_rng(0))
    assert session.queries < beam_session.queries


def test_sample_with_enough_candidates_finds_worst_case() -> None:
    problem, _, _ = make_problem(AdditiveEvaluator(PENALTY), budget=3)
    out = SampleSearch(candidates=200).search(problem, rng=np.random.default_rng(1))
    assert out.damage == pytest.approx(brute_force(3))


def test_infeasible_candidates_are_never_selected() -> None:
    blocked = frozenset({"water", "enjoys"})
    cases: tuple[tuple[type[Strategy], dict[str, object]], ...] = (
        (BeamSearch, {"beam_width": 2}),
        (GreedySearch, {}),
        (SampleSearch, {"candidates": 200}),
    )
    for strategy, kw in cases:
        problem, _, _ = make_problem(AdditiveEvaluator(PENALTY), budget=2, infeasible=blocked)
        out = strategy(**kw).search(problem, rng=np.random.default_rng(0))
        assert not set(out.best.replacements) & blocked
        assert out.success
        if strategy is not GreedySearch:  # greedy follows its ranking, not the optimum
            assert out.damage == pytest.approx(brute_force(2, blocked))


def test_syntax_check_is_lazy() -> None:
    problem, _, checked = make_problem(AdditiveEvaluator(PENALTY), budget=3)
    out = SampleSearch(candidates=30).search(problem, rng=np.random.default_rng(0))
    assert out.evaluated == 12  # every distinct 3-word perturbation: 2 * 2 * 3
    assert len(checked) < out.evaluated  # only the top chunk is checked


@pytest.mark.parametrize("infeasible", [frozenset(), frozenset({"water", "juice"})])
def test_sample_check_all_checks_every_candidate_and_keeps_the_same_choice(
    infeasible: frozenset[str],
) -> None:
    lazy_problem, _, lazy_checked = make_problem(
        AdditiveEvaluator(PENALTY), budget=2, infeasible=infeasible
    )
    lazy = SampleSearch(candidates=30).search(lazy_problem, rng=np.random.default_rng(3))
    problem, session, checked = make_problem(
        AdditiveEvaluator(PENALTY), budget=2, infeasible=infeasible
    )
    full = SampleSearch(candidates=30, check_all=True).search(problem, rng=np.random.default_rng(3))
    assert (full.best, full.damage) == (lazy.best, lazy.damage)
    assert full.feasible_checked == full.evaluated == len(checked) > len(lazy_checked)
    # each task's own worst drop over every feasible candidate scored: task a drops by
    # the penalties' sum, task b by twice it
    sums = [
        sum(PENALTY[w] for w in p.replacements)
        for p in checked
        if not set(p.replacements) & infeasible
    ]
    assert session.worst is not None
    assert session.worst.tolist() == pytest.approx([max(sums), 2 * max(sums)])
    assert session.admitted == len(sums)


def test_query_budget_is_respected_and_counted() -> None:
    evaluator = AdditiveEvaluator(PENALTY)
    problem, session, _ = make_problem(evaluator, budget=3, query_budget=5)
    BeamSearch(beam_width=4).search(problem, rng=np.random.default_rng(0))
    assert session.queries == 5  # 1 clean + 4 candidates
    assert evaluator.evaluated == 5
    assert session.is_exhausted()


def test_cache_lives_across_sessions_and_hits_are_free() -> None:
    evaluator = AdditiveEvaluator(PENALTY)
    scorer = CachedScorer(evaluator)
    p1, _, _ = make_problem(evaluator, budget=1, scorer=scorer)
    BeamSearch().search(p1, rng=np.random.default_rng(0))
    first = evaluator.evaluated
    p2, s2, _ = make_problem(evaluator, budget=1, scorer=scorer)
    BeamSearch().search(p2, rng=np.random.default_rng(0))
    assert evaluator.evaluated == first  # all from cache
    assert s2.queries == 0
    assert scorer.hits >= first


def test_cache_is_bounded() -> None:
    evaluator = AdditiveEvaluator(PENALTY)
    scorer = CachedScorer(evaluator, cache_size=3)
    problem, _, _ = make_problem(evaluator, budget=2, scorer=scorer)
    BeamSearch().search(problem, rng=np.random.default_rng(0))
    assert len(scorer) == 3


def test_sample_is_deterministic_for_a_seed() -> None:
    outs = []
    for _ in range(2):
        problem, _, _ = make_problem(AdditiveEvaluator(PENALTY), budget=2)
        outs.append(SampleSearch(candidates=5).search(problem, rng=np.random.default_rng(7)))
    assert outs[0] == outs[1]


def test_nothing_eligible_gives_identity() -> None:
    evaluator = AdditiveEvaluator(PENALTY)
    scorer = CachedScorer(evaluator)
    session = scorer.session(SENTENCE, Objective.mean_of(["a"]))
    problem = SearchProblem(
        SubstitutionTable(SENTENCE.sent_id, "test", len(SENTENCE)),
        2,
        session,
        lambda b: np.ones(len(b), bool),
        session.is_exhausted,
    )
    for strategy in (BeamSearch, GreedySearch, SampleSearch):
        out = strategy().search(problem, rng=np.random.default_rng(0))
        assert out.best.is_identity
        assert not out.success


@pytest.mark.parametrize("max_chunk", [1, 2, 5, 32])
@pytest.mark.parametrize("want", [1, 2, 3])
def test_first_feasible_is_independent_of_batching(want: int, max_chunk: int) -> None:
    rng = np.random.default_rng(want * 100 + max_chunk)
    candidates = [
        Perturbation(SENTENCE.sent_id, "test", positions=(1,), replacements=(f"w{i}",))
        for i in range(40)
    ]
    damages = rng.integers(0, 6, size=40).astype(float)  # ties on purpose
    ok = rng.random(40) < 0.3
    calls: list[int] = []

    def feasible(batch: Sequence[Perturbation]) -> np.ndarray:
        calls.append(len(batch))
        return np.array([ok[int(p.replacements[0][1:])] for p in batch])

    def unscored(candidates: Sequence[Perturbation]) -> NDArray[np.float64]:
        raise AssertionError("first_feasible takes the damages given, it does not score")

    empty = SubstitutionTable(SENTENCE.sent_id, "test", len(SENTENCE))
    problem = SearchProblem(empty, 1, unscored, feasible, lambda: False)
    found, checked = first_feasible(problem, candidates, damages, want=want, max_chunk=max_chunk)
    # Reference: walk the candidates one by one in order of damage, earlier first on ties.
    order = sorted(range(40), key=lambda i: (-damages[i], i))
    expected = [i for i in order if ok[i]][:want]
    assert found == expected
    assert checked == sum(calls) and checked <= 40
    assert calls[0] == want  # the first batch holds only as many as are wanted
    if expected and len(expected) == want:
        # Nothing beyond the batch that completed the answer is checked.
        assert checked - calls[-1] < order.index(expected[-1]) + 1


def test_first_feasible_checks_only_what_it_needs_when_all_pass() -> None:
    problem, _, checked = make_problem(AdditiveEvaluator(PENALTY))
    pool = list(problem.expand(problem.empty()))
    damages = np.arange(len(pool), dtype=float)
    found, n = first_feasible(problem, pool, damages, want=2)
    assert found == [len(pool) - 1, len(pool) - 2]
    assert n == 2 and len(checked) == 2


class TickingClock:
    """A clock that moves ``step`` seconds each time it is read."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


@pytest.mark.parametrize("allowed_reads", [1, 3, 6])
def test_time_budget_stops_new_scoring_but_not_cached_candidates(allowed_reads: int) -> None:
    evaluator = AdditiveEvaluator(PENALTY)
    scorer = CachedScorer(evaluator)
    first = scorer.session(SENTENCE, Objective.mean_of(["a", "b"]))
    table = SubstitutionTable.from_mapping(SENTENCE.sent_id, "test", len(SENTENCE), OPTIONS)
    problem = SearchProblem(table, 1, first, lambda b: np.ones(len(b), bool), first.is_exhausted)
    pool = problem.expand(problem.empty())
    first(pool[:2])  # two candidates cached by an earlier session of the sentence
    assert not first.out_of_time  # no time budget: never out of time
    clock = TickingClock(1.0)
    timed = ScoringSession(
        scorer,
        SENTENCE,
        Objective.mean_of(["a", "b"]),
        None,
        time_budget=float(allowed_reads) + 0.5,
        clock=clock,
    )
    scored = 0
    while not timed.is_exhausted():
        scored += len(timed(pool[scored : scored + 1]))
    # each is_exhausted and each batch reads the clock once; the start read it once too
    assert timed.out_of_time
    assert 0 < scored < len(pool)
    # out of time: cached candidates are still scored (the earlier session's two, and
    # those this one scored in time), the others not
    cached = max(scored, 2)
    assert len(timed(pool[:cached])) == cached
    assert len(timed(pool[cached:])) == 0


def test_a_time_budget_that_never_runs_out_changes_nothing() -> None:
    evaluator = AdditiveEvaluator(PENALTY)
    problem, session, _ = make_problem(evaluator, budget=2)
    found = BeamSearch(beam_width=4).search(problem, rng=np.random.default_rng(0))
    timed_scorer = CachedScorer(AdditiveEvaluator(PENALTY))
    timed = timed_scorer.session(SENTENCE, Objective.mean_of(["a", "b"]), time_budget=3600.0)
    table = SubstitutionTable.from_mapping(SENTENCE.sent_id, "test", len(SENTENCE), OPTIONS)
    mask = lambda b: np.ones(len(b), bool)  # noqa: E731
    again = BeamSearch(beam_width=4).search(
        SearchProblem(table, 2, timed, mask, timed.is_exhausted), rng=np.random.default_rng(0)
    )
    assert again.best == found.best and again.damage == found.damage
    assert not timed.out_of_time and timed.queries == session.queries


def test_the_anytime_record_climbs_to_the_best_admitted_damage() -> None:
    evaluator = AdditiveEvaluator(PENALTY)
    problem, session, _ = make_problem(evaluator, budget=3, infeasible=frozenset({"water"}))
    found = BeamSearch(beam_width=2).search(problem, rng=np.random.default_rng(0))
    record = session.anytime
    assert record, "the beam admitted something"
    queries = [q for q, _, _ in record]
    seconds = [t for _, t, _ in record]
    drops = [d for _, _, d in record]
    assert queries == sorted(queries) and seconds == sorted(seconds)
    assert all(b > a for a, b in itertools.pairwise(drops))  # strictly better
    assert drops[-1] == pytest.approx(found.damage)  # the beam keeps the best admitted
    assert all(q <= session.queries for q in queries)


@pytest.mark.parametrize("query_budget", [None, 1, 3, 20])
def test_a_session_that_scores_the_clean_sentence_with_its_first_batch_scores_and_counts_the_same(
    query_budget: int | None,
) -> None:
    """``clean_first=False``: the clean sentence goes with the first batch in one
    evaluator call (one call fewer), and every damage, query count and budget is what a
    session that scored it at the start gives."""
    table = SubstitutionTable.from_mapping(SENTENCE.sent_id, "test", len(SENTENCE), OPTIONS)
    objective = Objective.mean_of(["a", "b"])
    found: dict[bool, tuple[list[list[float]], list[int | None], int, list[float]]] = {}
    calls: dict[bool, int] = {}
    for first in (True, False):
        evaluator = AdditiveEvaluator(PENALTY)
        session = CachedScorer(evaluator).session(
            SENTENCE, objective, query_budget=query_budget, clean_first=first
        )
        problem = SearchProblem(
            table, 2, session, lambda b: np.ones(len(b), bool), session.is_exhausted
        )
        pool = problem.expand(problem.empty())
        left = [session.queries_left()]
        damages = []
        for start in (0, 3, 3, 5):  # the third batch is all cached
            damages.append(session(pool[start : start + 3]).tolist())
            left.append(session.queries_left())
        found[first] = (damages, left, session.queries, session.clean.tolist())
        calls[first] = evaluator.calls
    assert found[False] == found[True]
    assert found[True][3] == [1.0, 1.0]
    assert calls[False] == calls[True] - 1 or (query_budget == 1 and calls[False] == calls[True])


def test_a_late_clean_sentence_is_scored_when_asked_for_before_any_batch() -> None:
    evaluator = AdditiveEvaluator(PENALTY)
    session = CachedScorer(evaluator).session(
        SENTENCE, Objective.mean_of(["a", "b"]), query_budget=5, clean_first=False
    )
    assert evaluator.calls == 0 and session.queries == 1 and session.queries_left() == 4
    assert session.clean.tolist() == [1.0, 1.0] and evaluator.calls == 1
    assert session.weights.tolist() == [0.5, 0.5] and evaluator.calls == 1
    assert session.queries == 1  # counted once, at the start
