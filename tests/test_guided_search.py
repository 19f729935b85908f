"""Guided search on problems whose worst case is known, and its gradient estimates.

The strategy is checked on the additive problem of ``test_search_strategies`` (exact
worst cases by brute force) with estimates that are right, wrong or absent; the
transformer backend's first-order estimates are checked against the directional
derivative they approximate, measured by finite differences on the bundled MiniLM.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from test_search_strategies import (
    OPTIONS,
    PENALTY,
    AdditiveEvaluator,
    brute_force,
    make_problem,
)

from brittle.engine.core.errors import ConfigError
from brittle.engine.core.perturbation import Perturbation
from brittle.search.problem import Estimates, SearchProblem
from brittle.search.strategies import STRATEGIES, BeamSearch, GuidedSearch
from brittle.search.strategies.guided import _first_order, _Model
from brittle.search.table import SubstitutionTable

if TYPE_CHECKING:
    from brittle.scorers.transformer_backend import TransformerEncoder


def with_estimates(problem: SearchProblem, estimates: Estimates | None) -> SearchProblem:
    return SearchProblem(
        problem.table,
        problem.budget,
        problem.score,
        problem.feasible,
        problem.is_exhausted,
        estimator=lambda: estimates,
        queries_left=problem.queries_left,
    )


def exact() -> dict[int, NDArray[np.float64]]:
    """The true single-substitution damage of every option (a perfect estimator)."""
    return {p: np.array([PENALTY[f] for f, _ in opts]) for p, opts in OPTIONS.items()}


def test_registered_with_its_parameters() -> None:
    assert STRATEGIES.get("guided") is GuidedSearch
    assert GuidedSearch.parameters() == ("guided_batch", "guided_warmup")
    with pytest.raises(ConfigError):
        GuidedSearch(guided_batch=0)
    with pytest.raises(ConfigError):
        GuidedSearch(guided_warmup=1.5)


@pytest.mark.parametrize(("warmup", "first"), [(0.5, 6), (0.0, 2), (1.0, 7)])
def test_the_warmup_scores_its_share_of_the_budget_in_singles_before_any_pair(
    warmup: float, first: int
) -> None:
    """12 queries left at the start: half of them (6) go to single substitutions before
    any is extended (all 7 singles with the whole budget; from the first batch of 2 on
    without a warm-up)."""
    problem, session, _ = make_problem(AdditiveEvaluator(PENALTY), budget=2, query_budget=13)
    scored: list[int] = []  # words changed by each candidate scored, in order

    def score(candidates: Sequence[Perturbation]) -> NDArray[np.float64]:
        scored.extend(len(c.positions) for c in candidates)
        return session(candidates)

    assert problem.remaining_queries() == 12  # the clean sentence was the first query
    budgeted = SearchProblem(
        problem.table,
        problem.budget,
        score,
        problem.feasible,
        problem.is_exhausted,
        estimator=exact,
        queries_left=problem.queries_left,
    )
    out = GuidedSearch(guided_batch=2, guided_warmup=warmup).search(
        budgeted, rng=np.random.default_rng(0)
    )
    assert scored.index(2) == first  # the first pair comes after this many singles
    assert out.damage == pytest.approx(brute_force(2))  # water + enjoys all the same
    unbounded, _, _ = make_problem(AdditiveEvaluator(PENALTY), budget=2)
    assert unbounded.remaining_queries() is None


@pytest.mark.parametrize("budget", [1, 2, 3])
@pytest.mark.parametrize("estimates", ["exact", "reversed", "none"])
def test_finds_the_known_worst_case_whatever_the_estimates(budget: int, estimates: str) -> None:
    """Without a query budget the frontier is searched to the end: right, wrong and
    missing estimates only change the order."""
    table = exact()
    found: Mapping[int, NDArray[np.float64]] | None = {
        "exact": table,
        "reversed": {p: -v for p, v in table.items()},
        "none": None,
    }[estimates]
    problem, _, _ = make_problem(AdditiveEvaluator(PENALTY), budget=budget)
    out = GuidedSearch(guided_batch=2).search(
        with_estimates(problem, found), rng=np.random.default_rng(0)
    )
    assert out.damage == pytest.approx(brute_force(budget))
    assert len(out.best.positions) == budget


def test_right_estimates_reach_the_worst_case_in_fewer_queries_than_beam() -> None:
    """With half of the 4 queries as warm-up (the default, 0.8, spends them all on
    singles)."""
    problem, session, _ = make_problem(AdditiveEvaluator(PENALTY), budget=2, query_budget=1 + 4)
    out = GuidedSearch(guided_batch=2, guided_warmup=0.5).search(
        with_estimates(problem, exact()), rng=np.random.default_rng(0)
    )
    assert out.damage == pytest.approx(brute_force(2))  # water + enjoys, in 4 queries
    assert session.queries == 5
    beam_problem, _, _ = make_problem(AdditiveEvaluator(PENALTY), budget=2, query_budget=1 + 4)
    beam = BeamSearch(beam_width=2).search(beam_problem, rng=np.random.default_rng(0))
    assert beam.damage < out.damage  # beam spends its 4 queries on singles in table order


def test_wrong_estimates_are_unlearnt_from_the_scores() -> None:
    """Estimates that rank the options backwards get a slope of 0 once scores come in,
    and what each position's scores said ranks the rest; a scored option is predicted
    as scored."""
    slots = [(p, k) for p, opts in OPTIONS.items() for k in range(len(opts))]
    model = _Model(slots, {p: -v for p, v in exact().items()})
    for slot, damage in (((5, 0), 0.0), ((2, 0), 0.075), ((1, 0), 0.15)):  # coffee, tea, adores
        model.observe(slots.index(slot), damage)
    model.refit()
    assert model.a == 0.0
    assert model.b == pytest.approx(0.075)
    predicted = dict(zip(slots, model.predict().tolist(), strict=True))
    # position 1 did best, position 5 worst: their other options follow suit
    assert predicted[(1, 1)] > predicted[(2, 1)] > predicted[(5, 1)]
    assert predicted[(2, 0)] == 0.075


def test_rank_follows_the_estimates_position_by_position() -> None:
    problem, _, _ = make_problem(AdditiveEvaluator(PENALTY))
    order = _first_order(problem, exact())
    # every position's best option first (water 0.4, enjoys 0.3, juice 0.2), then the
    # second best of each, then milk
    assert order == [(5, 1), (1, 1), (2, 1), (5, 2), (1, 0), (2, 0), (5, 0)]
    assert _first_order(problem, None)[:3] == [(1, 0), (2, 0), (5, 0)]  # table order


def test_infeasible_candidates_are_never_kept_nor_extended() -> None:
    blocked = frozenset({"water", "enjoys"})
    problem, _, checked = make_problem(AdditiveEvaluator(PENALTY), budget=2, infeasible=blocked)
    out = GuidedSearch().search(with_estimates(problem, exact()), rng=np.random.default_rng(0))
    assert not set(out.best.replacements) & blocked
    assert out.damage == pytest.approx(brute_force(2, blocked))
    assert checked  # checked lazily, in order of damage


@settings(max_examples=40, deadline=None)
@given(
    query_budget=st.integers(min_value=1, max_value=40),
    batch=st.integers(min_value=1, max_value=9),
    noise=st.lists(st.floats(-1, 1), min_size=7, max_size=7),
)
def test_never_exceeds_the_query_budget_and_reports_what_it_scored(
    query_budget: int, batch: int, noise: Sequence[float]
) -> None:
    evaluator = AdditiveEvaluator(PENALTY)
    problem, session, _ = make_problem(evaluator, budget=2, query_budget=query_budget)
    values = iter(noise)
    estimates = {p: np.array([next(values) for _ in opts]) for p, opts in OPTIONS.items()}
    out = GuidedSearch(guided_batch=batch).search(
        with_estimates(problem, estimates), rng=np.random.default_rng(0)
    )
    assert session.queries <= max(query_budget, 1)
    assert evaluator.evaluated == session.queries
    assert out.evaluated >= session.queries - 1  # the clean query is not the search's
    assert 0.0 <= out.damage <= brute_force(2) + 1e-12


# ---------------------------------------------------------------- the backend's estimates
WORDS = ["the", "cat", "sat", "on", "the", "mat", "today"]


@pytest.fixture(scope="module")
def encoders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, TransformerEncoder]:
    from repr_models import tiny_bert, tiny_gpt2

    from brittle.scorers.transformer_backend import TransformerEncoder

    root = tmp_path_factory.mktemp("guided-models")
    return {
        "bert-mean": TransformerEncoder(
            str(tiny_bert(root / "bert")), pooling="mean", device="cpu"
        ),
        "gpt2-last": TransformerEncoder(
            str(tiny_gpt2(root / "gpt2")), pooling="last", device="cpu"
        ),
    }


def reference_derivative(encoder, words: list[str], position: int, form: str, weight) -> float:
    """The loss's derivative along the replacement's embedding change, by central finite
    differences, with the pooling written out word by word (the slow obvious way)."""
    import torch

    from brittle.scorers.alignment import align_batch

    tok = encoder.tokenizer
    old = align_batch(tok, [words])[0]
    variant = [*words[:position], form, *words[position + 1 :]]
    new = align_batch(tok, [variant])[0]
    ids = torch.tensor([*old.prefix, *old.content_ids.tolist(), *old.suffix])
    table = encoder.net.get_input_embeddings()
    with torch.no_grad():
        base = table(ids).double()
        mine = np.flatnonzero(old.word_of == position) + len(old.prefix)
        replacement = table(torch.from_numpy(new.content_ids[new.word_of == position])).double()
        if replacement.shape[0] != mine.size:
            replacement = replacement.mean(dim=0, keepdim=True).expand(mine.size, -1)
        direction = torch.zeros_like(base)
        direction[mine] = replacement - base[mine]

        def loss_at(embeds: torch.Tensor) -> float:
            states = encoder.net(
                inputs_embeds=embeds[None].float(), output_hidden_states=True
            ).hidden_states[1][0]
            content = states[len(old.prefix) : len(old.prefix) + old.content_ids.shape[0]]
            vectors = []
            for w in range(len(words)):
                rows = content[torch.from_numpy(np.flatnonzero(old.word_of == w))]
                pick = {"mean": rows.mean(dim=0), "last": rows[-1], "first": rows[0]}
                vectors.append(pick[encoder.pooling])
            return float((torch.stack(vectors).double() * weight).sum())

        eps = 1e-3
        return (loss_at(base + eps * direction) - loss_at(base - eps * direction)) / (2 * eps)


@pytest.mark.parametrize("name", ["bert-mean", "gpt2-last"])
def test_substitution_effects_are_the_directional_derivative(
    encoders: dict[str, TransformerEncoder], name: str
) -> None:
    import torch

    encoder = encoders[name]
    rng = np.random.default_rng(3)
    weight = torch.from_numpy(rng.normal(size=(len(WORDS), encoder.dim)))
    options = [(1, ["dog", "hippopotamus"]), (5, ["rug", "mat"]), (6, ["yesterday"])]
    got = encoder.substitution_effects(
        WORDS, layers=[1], loss=lambda v: (v[0].double() * weight).sum(), options=options
    )
    assert got is not None and [a.shape for a in got] == [(2,), (2,), (1,)]
    assert got[1][1] == 0.0  # the word itself: no change
    assert min(abs(v) for a in got for v in a.tolist() if v) > 0.02  # well above the tolerance
    for (position, forms), effects in zip(options, got, strict=True):
        for form, value in zip(forms, effects.tolist(), strict=True):
            expected = reference_derivative(encoder, WORDS, position, form, weight)
            assert value == pytest.approx(expected, rel=2e-2, abs=1e-3)


@pytest.mark.parametrize("name", ["bert-mean", "gpt2-last"])
def test_substitution_effects_run_only_the_blocks_below_the_layer(
    encoders: dict[str, TransformerEncoder], name: str
) -> None:
    """The gradient pass stops at the highest layer read, as the scoring forward does,
    and its estimates are those of the full forward, bit for bit."""
    import torch

    from brittle.scorers.transformer_backend import _blocks_of

    encoder = encoders[name]
    blocks = _blocks_of(encoder.net, encoder.n_layers)
    assert blocks is not None and encoder.n_layers > 1
    rng = np.random.default_rng(5)
    weight = torch.from_numpy(rng.normal(size=(len(WORDS), encoder.dim)))
    options = [(1, ["dog", "hippopotamus"]), (6, ["yesterday"])]

    def effects() -> list[np.ndarray]:
        got = encoder.substitution_effects(
            WORDS, layers=[1], loss=lambda v: (v[0].double() * weight).sum(), options=options
        )
        assert got is not None
        return got

    calls: list[int] = []
    handles = [
        b.register_forward_hook(lambda m, a, o, i=i: calls.append(i)) for i, b in enumerate(blocks)
    ]
    try:
        saved = encoder._early_exit
        encoder._early_exit = False  # the full forward
        full = effects()
        calls.clear()
        encoder._early_exit = True
        early = effects()
    finally:
        encoder._early_exit = saved
        for h in handles:
            h.remove()
    assert calls == [0]
    for a, b in zip(full, early, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["bert-mean", "gpt2-last"])
def test_sentences_estimated_together_get_their_own_estimates(
    encoders: dict[str, TransformerEncoder], name: str
) -> None:
    """Several sentences of different lengths in one batched gradient pass (one of them
    cut into windows) get what each gets alone: each sentence's gradient is its own
    loss's, padding and the other sentences change nothing."""
    import copy

    import torch

    from brittle.scorers.representations import EffectsRequest

    encoder = copy.copy(encoders[name])
    encoder.max_length = 8  # the longest sentence below needs two windows
    rng = np.random.default_rng(11)
    sentences = [WORDS, ["a", "dog"], [*WORDS, "and", "the", "dog", "ran", "away"], ["cat"]]
    requests = []
    for words in sentences:
        weight = torch.from_numpy(rng.normal(size=(len(words), encoder.dim)))
        options = [(0, ["dog", "the"]), (len(words) - 1, ["mat", "hippopotamus"])]
        loss = lambda v, w=weight: (v[0].double() * w).sum()  # noqa: E731
        requests.append(EffectsRequest(words, loss, options))
    together = encoder.substitution_effects_many(requests, layers=[1])
    assert len(together) == len(requests)
    for request, got in zip(requests, together, strict=True):
        alone = encoder.substitution_effects(
            request.words, layers=[1], loss=request.loss, options=request.options
        )
        assert alone is not None and len(got) == len(alone) == 2
        assert any(float(np.abs(a).max()) > 0.02 for a in alone)  # well above the tolerance
        for a, b in zip(got, alone, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    assert encoder.substitution_effects_many([], layers=[1]) == []


def test_static_vectors_have_no_estimates() -> None:
    from brittle.scorers.representations import RepresentationBackend

    class Static(RepresentationBackend):
        @classmethod
        def open(cls, request):  # pragma: no cover - not opened by name here
            raise NotImplementedError

        def encode_flat(self, sentences, *, layers):  # pragma: no cover - not called
            raise NotImplementedError

    backend = Static(model="m", dim=2, n_layers=1, pooling="mean")
    assert (
        backend.substitution_effects(
            ["a"], layers=[0], loss=lambda v: v[0].sum(), options=[(0, ["b"])]
        )
        is None
    )


# ---------------------------------------------------------------- end to end
TREEBANK = Path(__file__).resolve().parents[1] / "data" / "default.conllu"


def _run(*args: str) -> None:
    from click.testing import CliRunner

    from brittle.cli.main import main

    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def bert_probes(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, ...]:
    """Distance and POS probes on a tiny BERT (one epoch each)."""
    from repr_models import tiny_bert

    root = tmp_path_factory.mktemp("guided-probes")
    return _train_probes(root, tiny_bert(root / "bert"))


def _train_probes(root: Path, model: Path) -> tuple[str, ...]:
    """Distance and POS probes on ``model`` (one epoch each), under ``root``."""
    out = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("BRITTLE_HOME", str(root / "home"))
        for task in ("distance", "pos"):
            _run(
                "train-probe", str(TREEBANK), "--dev", str(TREEBANK), "--out", str(root / task),
                "--model", str(model), "--task", task, "--epochs", "1", "--threads", "1",
                "--quiet",
            )  # fmt: skip
            out.append(str(root / task))
    return tuple(out)


def test_the_probes_give_estimates_for_every_option(bert_probes: tuple[str, ...]) -> None:
    from brittle.engine.core.conllu import read_conllu
    from brittle.engine.probes.probe_eval import ProbeEvaluator

    sentence = read_conllu(TREEBANK)[0]
    evaluator = ProbeEvaluator.from_dirs(bert_probes, device="cpu")
    options = {1: (("dog", "_"), ("idea", "_")), 2: (("ran", "_"),)}
    table = SubstitutionTable.from_mapping(sentence.sent_id, "test", len(sentence), options)
    both = evaluator.substitution_estimates(
        sentence, table, {"distance.uuas": 1.0, "pos.pos_acc": 1.0}
    )
    assert both is not None and sorted(both) == [1, 2]
    assert [both[1].shape, both[2].shape] == [(2,), (1,)]
    assert max(float(np.abs(a).max()) for a in both.values()) == 1.0  # scaled
    alone = evaluator.substitution_estimates(sentence, table, {"pos.pos_acc": 1.0})
    assert alone is not None and not np.allclose(alone[1], both[1])  # the objective counts
    empty = SubstitutionTable.from_mapping(sentence.sent_id, "test", len(sentence), {})
    assert evaluator.substitution_estimates(sentence, empty, {"pos.pos_acc": 1.0}) is None
    # several sentences at once, each with its own objective: what each gets alone
    other = read_conllu(TREEBANK)[3]
    table2 = SubstitutionTable.from_mapping(other.sent_id, "test", len(other), {0: (("A", "_"),)})
    requests = [
        (sentence, table, {"distance.uuas": 1.0, "pos.pos_acc": 1.0}),
        (other, table2, {"distance.uuas": 1.0}),
        (sentence, empty, {"pos.pos_acc": 1.0}),
        (sentence, table, {"pos.pos_acc": 1.0}),
    ]
    together = evaluator.substitution_estimates_many(requests)
    assert together[2] is None
    for request, got in zip(requests, together, strict=True):
        alone = evaluator.substitution_estimates(*request)
        assert (got is None) == (alone is None)
        if got is not None and alone is not None:
            assert sorted(got) == sorted(alone)
            for p in got:
                np.testing.assert_allclose(got[p], alone[p], atol=2e-6)


def _has_cuda() -> bool:
    import torch

    return torch.cuda.is_available()


@pytest.mark.skipif(not _has_cuda(), reason="no CUDA device")
def test_estimates_on_cuda_match_the_cpu(bert_probes: tuple[str, ...]) -> None:
    """The encoder on the GPU, the probes' networks where they score: the same ranking."""
    from brittle.engine.core.conllu import read_conllu
    from brittle.engine.probes.probe_eval import ProbeEvaluator

    sentence = read_conllu(TREEBANK)[0]
    options = {1: (("dog", "_"), ("idea", "_"), ("the", "_")), 2: (("ran", "_"), ("sat", "_"))}
    table = SubstitutionTable.from_mapping(sentence.sent_id, "test", len(sentence), options)
    weights = {"distance.uuas": 1.0, "pos.pos_acc": 1.0}
    cpu = ProbeEvaluator.from_dirs(bert_probes, device="cpu")
    gpu = ProbeEvaluator.from_dirs(bert_probes, device="cuda")
    on_cpu = cpu.substitution_estimates(sentence, table, weights)
    on_gpu = gpu.substitution_estimates(sentence, table, weights)
    assert on_cpu is not None and on_gpu is not None and sorted(on_gpu) == [1, 2]
    for p in (1, 2):
        np.testing.assert_allclose(on_gpu[p], on_cpu[p], atol=1e-3)


def test_static_probes_fall_back_to_no_estimates(static_probe: Path) -> None:
    from brittle.engine.core.conllu import read_conllu
    from brittle.engine.probes.probe_eval import ProbeEvaluator

    sentence = read_conllu(TREEBANK)[0]
    evaluator = ProbeEvaluator.from_dirs([static_probe], device="cpu")
    table = SubstitutionTable.from_mapping(
        sentence.sent_id, "test", len(sentence), {1: (("dog", "_"),)}
    )
    assert (
        evaluator.substitution_estimates(sentence, table, dict.fromkeys(evaluator.tasks, 1.0))
        is None
    )


def test_cli_guided_attack_with_workers_writes_the_files_of_one_process(
    bert_probes: tuple[str, ...], tmp_path: Path
) -> None:
    args = [
        "attack", str(TREEBANK), "--probe", bert_probes[0], "--probe", bert_probes[1],
        "--method", "random", "--parser", "gold", "--search", "guided", "--budget", "2",
        "--query-budget", "12", "--limit", "8", "--no-grade", "--quiet",
    ]  # fmt: skip
    _run(*args, "--out", str(tmp_path / "one"))
    _run(*args, "--out", str(tmp_path / "two"), "--workers", "2")
    rows = []
    for name in ("one", "two"):
        lines = (tmp_path / name / "results.jsonl").read_text().splitlines()
        rows.append([{k: v for k, v in json.loads(x).items() if k != "seconds"} for x in lines])
    assert rows[0] == rows[1]
    assert all(r["queries"] <= 12 for r in rows[0]) and any(r["success"] for r in rows[0])
    for name in ("adversarial.conllu", "summary.json"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()


def test_without_a_query_budget_only_the_leading_bases_are_extended() -> None:
    """Every pair of a 12-position table of 30 options each is 59,400 doubles; the
    search extends at most MAX_BASES bases (each by 330 options), then stops."""
    from brittle.engine.core.conllu import read_conllu
    from brittle.search.scoring import CachedScorer, Objective
    from brittle.search.strategies.guided import MAX_BASES

    sentence = next(s for s in read_conllu(TREEBANK) if len(s) >= 12)
    rng = np.random.default_rng(5)
    options = {p: tuple((f"w{p}x{k}", "_") for k in range(30)) for p in range(12)}
    penalty = {f: float(rng.random()) / 10 for opts in options.values() for f, _ in opts}
    evaluator = AdditiveEvaluator(penalty)
    session = CachedScorer(evaluator).session(sentence, Objective.mean_of(["a", "b"]))
    table = SubstitutionTable.from_mapping(sentence.sent_id, "test", len(sentence), options)
    problem = SearchProblem(
        table, 2, session, lambda batch: np.ones(len(batch), dtype=bool), session.is_exhausted
    )
    out = GuidedSearch().search(problem, rng=np.random.default_rng(0))
    assert 360 < out.evaluated <= 360 + MAX_BASES * 330 < 59_400 // 2
    assert len(out.best.positions) == 2


def test_the_guided_options_reach_the_strategy_and_config_json_only_when_given() -> None:
    """``--guided-batch`` and ``--guided-warmup`` build the strategy; a run that gives
    neither writes the same ``config.json`` as before they existed; they are refused for
    another search and out of range, before anything loads."""
    from brittle.engine.attack import AttackConfig
    from brittle.engine.attack.config import attack_config

    base = dict(treebank=str(TREEBANK), probes=("p",), method="random", parser="gold")
    plain = AttackConfig(**base, search="guided")  # type: ignore[arg-type]
    assert "guided_batch" not in plain.to_dict() and "guided_warmup" not in plain.to_dict()
    assert STRATEGIES.get("guided")(**plain.strategy_parameters) == GuidedSearch()
    tuned = attack_config(
        str(TREEBANK), ["p"], method="random", parser="gold", search="guided",
        guided_batch=4, guided_warmup=0.25,
    )  # fmt: skip
    built = STRATEGIES.get("guided")(**tuned.strategy_parameters)
    assert built == GuidedSearch(guided_batch=4, guided_warmup=0.25)
    data = tuned.to_dict()
    assert (data["guided_batch"], data["guided_warmup"]) == (4, 0.25)
    assert AttackConfig.from_dict(data) == tuned
    with pytest.raises(ConfigError, match="apply to --search guided, not beam"):
        AttackConfig(**base, search="beam", guided_warmup=0.25)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="between 0 and 1"):
        AttackConfig(**base, search="guided", guided_warmup=1.5)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="--guided-batch must be at least 1"):
        AttackConfig(**base, search="guided", guided_batch=0)  # type: ignore[arg-type]


def test_the_cli_refuses_a_guided_option_for_another_search_in_one_line() -> None:
    from click.testing import CliRunner

    from brittle.cli.main import main

    result = CliRunner().invoke(
        main,
        [
            "attack", str(TREEBANK), "--probe", "p", "--search", "beam", "--guided-warmup",
            "0.3", "--out", "never-written",
        ],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "--guided-batch and --guided-warmup apply to --search guided" in result.output
    assert "Traceback" not in result.output


# ---------------------------------------------------------------- composition
def _pairs_scored(problem: SearchProblem, session, composer, **strategy) -> list[frozenset[str]]:
    """The pairs a guided search scores on ``problem`` with ``composer``, in order."""
    scored: list[frozenset[str]] = []

    def score(candidates: Sequence[Perturbation]) -> NDArray[np.float64]:
        out = session(candidates)
        scored.extend(frozenset(c.replacements) for c in candidates[: out.size])
        return out

    composed = dataclasses.replace(problem, score=score, estimator=exact, composer=composer)
    GuidedSearch(guided_batch=2, **strategy).search(composed, rng=np.random.default_rng(0))
    return [s for s in scored if len(s) == 2]


def test_a_composed_prediction_ranks_the_pairs_it_predicts() -> None:
    """Every single scored first (the warm-up covers them), then the pairs best-first by
    their composed damage: adores + tea, the two weakest singles, predicted to interact,
    comes first; without a composer the sum of the damages puts water + enjoys first."""
    boosted = frozenset({"adores", "tea"})

    def composer(pairs: Sequence[tuple[Perturbation, Perturbation]]) -> NDArray[np.float64]:
        out = []
        for a, b in pairs:
            words = frozenset(a.replacements + b.replacements)
            out.append(5.0 if words == boosted else 1.5 * sum(PENALTY[w] for w in words))
        return np.array(out)

    problem, session, _ = make_problem(AdditiveEvaluator(PENALTY), budget=2, query_budget=11)
    assert _pairs_scored(problem, session, composer)[0] == boosted
    problem, session, _ = make_problem(AdditiveEvaluator(PENALTY), budget=2, query_budget=11)
    assert _pairs_scored(problem, session, None)[0] == frozenset({"water", "enjoys"})


def test_a_composition_it_cannot_make_leaves_the_search_as_it_was() -> None:
    def unknown(pairs: Sequence[tuple[Perturbation, Perturbation]]) -> NDArray[np.float64]:
        return np.full(len(pairs), np.nan)

    runs = []
    for composer in (unknown, None):
        problem, session, _ = make_problem(AdditiveEvaluator(PENALTY), budget=3, query_budget=30)
        runs.append(_pairs_scored(problem, session, composer))
    assert runs[0] == runs[1] and runs[0]
    problem, _, _ = make_problem(AdditiveEvaluator(PENALTY))
    assert problem.compose([(problem.empty(), problem.empty())]) is None  # no composer


def test_the_session_composes_the_weighted_drop_of_the_composed_metrics() -> None:
    from brittle.engine.core.conllu import read_conllu
    from brittle.search.scoring import CachedScorer, Objective

    from support import FIXTURES

    sentence = read_conllu(FIXTURES / "mwt_empty.conllu")[1]
    asked: list[tuple[tuple[str, ...], tuple[str, ...]]] = []

    def compose(request):
        original, pairs = request
        assert original is sentence
        asked.extend(pairs)
        return np.array([[0.5, 0.25], [np.nan, np.nan]])[: len(pairs)]

    scorer = CachedScorer(AdditiveEvaluator(PENALTY))
    objective = Objective({"a": 1.0, "b": 3.0})
    session = scorer.session(sentence, objective, compose=compose)
    a = Perturbation(sentence.sent_id, "test", (1,), ("adores",), ("adore",))
    b = Perturbation(sentence.sent_id, "test", (2,), ("tea",), ("tea",))
    got = session.composed([(a, b), (b, a)])
    # clean metrics (1, 1); drops (0.5, 0.75) weighted 1/4 and 3/4
    assert got[0] == pytest.approx(0.25 * 0.5 + 0.75 * 0.75)
    assert np.isnan(got[1])
    assert asked[0] == (session.applied(a).forms, session.applied(b).forms)
    plain = scorer.session(sentence, objective)
    assert np.isnan(plain.composed([(a, b)])).all()


def _scored_and_composed(evaluator, sentence, pairs):
    """Score the original, every part and every union; compose each pair."""
    from brittle.engine.core.perturbation import apply_perturbation

    parts = {p for pair in pairs for p in pair}
    unions = []
    for a, b in pairs:
        items = dict(zip(a.positions, zip(a.replacements, a.lemmas, strict=True), strict=True))
        items.update(zip(b.positions, zip(b.replacements, b.lemmas, strict=True), strict=True))
        keys = sorted(items)
        unions.append(
            Perturbation(
                sentence.sent_id, "test", tuple(keys),
                tuple(items[k][0] for k in keys), tuple(items[k][1] for k in keys),
            )
        )  # fmt: skip
    sentences = [sentence] + [apply_perturbation(sentence, p) for p in (*parts, *unions)]
    evaluation = evaluator.evaluate(sentence, sentences, [None] * len(sentences))
    metrics = dict(zip([s.forms for s in sentences], evaluation.metrics, strict=True))
    words = [
        (apply_perturbation(sentence, a).forms, apply_perturbation(sentence, b).forms)
        for a, b in pairs
    ]
    composed = evaluator.compose_many([(sentence, words)])[0]
    return composed, np.array([metrics[apply_perturbation(sentence, u).forms] for u in unions])


#: The replacement words of the composition tests.
VOCABULARY = ("dog", "idea", "ran", "blue", "quickly", "house", "seven", "under")


def _random_pairs(
    sentence, rng: np.random.Generator, n: int
) -> list[tuple[Perturbation, Perturbation]]:
    out = []
    for _ in range(n):
        free = [k for k in range(len(sentence)) if k not in sentence.multiword_positions]
        i, j = sorted(rng.choice(free, size=2, replace=False).tolist())
        a, b = rng.choice(VOCABULARY, size=2).tolist()
        out.append(
            (
                Perturbation(sentence.sent_id, "test", (i,), (a,), ("_",)),
                Perturbation(sentence.sent_id, "test", (j,), (b,), ("_",)),
            )
        )
    return out


@pytest.fixture(scope="module")
def static_probes(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, ...]:
    """Distance and POS probes on random static vectors of every word of the treebank
    and of the replacements (one epoch each)."""
    from brittle.engine.core.conllu import read_conllu

    root = tmp_path_factory.mktemp("static-probes")
    words = sorted({w for s in read_conllu(TREEBANK) for w in s.forms} | set(VOCABULARY))
    rng = np.random.default_rng(7)
    lines = [f"{len(words)} 16"]
    lines += [w + " " + " ".join(f"{x:.5f}" for x in rng.normal(size=16)) for w in words]
    vectors = root / "vectors.txt"
    vectors.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return _train_probes(root, vectors)


def test_composing_static_vectors_gives_each_pairs_own_vectors(
    static_probes: tuple[str, ...],
) -> None:
    """For static vectors a word's vector does not depend on its neighbours: the sum of
    the parts' changes is the union's vectors, to float rounding (the metrics then
    follow, up to the ties of a barely trained probe's distances, which that rounding
    can break either way)."""
    from brittle.engine.core.conllu import read_conllu
    from brittle.engine.core.perturbation import apply_perturbation
    from brittle.engine.probes.probe_eval import ProbeEvaluator

    evaluator = ProbeEvaluator.from_dirs(static_probes, device="cpu")
    evaluator.keep_vectors()
    rng = np.random.default_rng(3)
    for sentence in [s for s in read_conllu(TREEBANK) if len(s) >= 4][:6]:
        pairs = _random_pairs(sentence, rng, 5)
        composed, _ = _scored_and_composed(evaluator, sentence, pairs)
        assert np.isfinite(composed).all()
        v0 = evaluator._vectors[sentence.forms].groups[0]
        for a, b in pairs:
            va, vb = (
                evaluator._vectors[apply_perturbation(sentence, p).forms].groups[0] for p in (a, b)
            )
            union = apply_perturbation(apply_perturbation(sentence, a), b)
            np.testing.assert_allclose(
                va + vb - v0, evaluator._vectors[union.forms].groups[0], atol=1e-6
            )


def test_composing_contextual_vectors_adds_the_changes_word_by_word(
    bert_probes: tuple[str, ...],
) -> None:
    """On a transformer the composition is v(a) + v(b) - v(original) at every layer the
    probes read, run through the probes: checked against that sum made by hand."""
    from brittle.engine.core.conllu import read_conllu
    from brittle.engine.core.perturbation import apply_perturbation
    from brittle.engine.probes.probe_eval import ProbeEvaluator
    from brittle.scorers.representations import FlatVectors

    evaluator = ProbeEvaluator.from_dirs(bert_probes, device="cpu")
    evaluator.keep_vectors()
    rng = np.random.default_rng(11)
    for sentence in [s for s in read_conllu(TREEBANK) if len(s) >= 4][:4]:
        pairs = _random_pairs(sentence, rng, 4)
        composed, _ = _scored_and_composed(evaluator, sentence, pairs)
        gold = evaluator._gold(sentence)
        for row, (a, b) in zip(composed, pairs, strict=True):
            texts = [sentence.forms] + [apply_perturbation(sentence, p).forms for p in (a, b)]
            reps = evaluator._encode(texts)  # the layers as the backend numbers them
            kept = [evaluator._vectors[t].groups[0] for t in texts]  # as scored: (layers, n, dim)
            expected: list[float] = []
            for probe, names in zip(evaluator.probes, evaluator._metrics, strict=True):
                at = reps[0].layers.index(probe.key.layer)
                v0, va, vb = (v[at] for v in kept)
                flat = FlatVectors.stack([va + vb - v0])
                scores = probe.score_predictions(probe.predict(flat), [gold])[0]
                expected.extend(scores[k] for k in names)
            np.testing.assert_allclose(row, np.nan_to_num(expected), atol=1e-12)


def test_compositions_need_the_vectors_kept(bert_probes: tuple[str, ...]) -> None:
    """Not asked to keep vectors, forgetting them (each chunk does) or a part never
    scored: a row of NaN, not a guess."""
    from brittle.engine.core.conllu import read_conllu
    from brittle.engine.core.perturbation import apply_perturbation
    from brittle.engine.probes.probe_eval import ProbeEvaluator

    sentence = read_conllu(TREEBANK)[0]
    pairs = _random_pairs(sentence, np.random.default_rng(0), 2)
    evaluator = ProbeEvaluator.from_dirs(bert_probes, device="cpu")
    composed, _ = _scored_and_composed(evaluator, sentence, pairs)
    assert np.isnan(composed).all()  # keep_vectors was not called
    evaluator.keep_vectors()
    composed, _ = _scored_and_composed(evaluator, sentence, pairs)
    assert not np.isnan(composed).any()
    (a, b) = pairs[0]
    never = Perturbation(sentence.sent_id, "test", (0,), ("zebra",), ("_",))
    unscored = [(apply_perturbation(sentence, a).forms, apply_perturbation(sentence, never).forms)]
    assert np.isnan(evaluator.compose_many([(sentence, unscored)])[0]).all()
    evaluator.forget_predictions()
    scored_before = [(apply_perturbation(sentence, a).forms, apply_perturbation(sentence, b).forms)]
    assert np.isnan(evaluator.compose_many([(sentence, scored_before)])[0]).all()


def test_a_guided_attack_composes_with_its_probes_and_beam_keeps_no_vectors(
    bert_probes: tuple[str, ...],
) -> None:
    from brittle.engine.attack import AttackConfig, build_components

    config = AttackConfig(
        treebank=str(TREEBANK), probes=bert_probes, method="random", parser="gold",
        search="guided", budget=2, query_budget=12, limit=2,
    )  # fmt: skip
    from brittle.engine.probes.probe_eval import ProbeEvaluator

    guided = build_components(config, device="cpu")
    assert isinstance(guided.evaluator, ProbeEvaluator) and guided.composer is guided.evaluator
    assert guided.evaluator._vectors.maxsize > 0
    beam = build_components(dataclasses.replace(config, search="beam"), device="cpu")
    assert isinstance(beam.evaluator, ProbeEvaluator) and beam.composer is beam.evaluator
    assert beam.evaluator._vectors.maxsize == 0


@pytest.mark.parametrize(
    ("batch", "sizes"), [(1, [1, 1, 1]), (2, [2, 2, 2]), (3, [2, 1, 3]), (5, [2, 3, 2])]
)
def test_the_first_batch_is_scored_in_two_so_that_a_first_find_comes_sooner(
    batch: int, sizes: list[int]
) -> None:
    """The best-estimated FIRST_BATCH singles are scored alone, then the rest of the
    first batch; after both, the queries are where one whole batch leaves them (the
    problem has 7 singles: with a batch of 5 the third batch takes the last 2)."""
    problem, session, _ = make_problem(AdditiveEvaluator(PENALTY), budget=2, query_budget=40)
    calls: list[int] = []

    def score(candidates: Sequence[Perturbation]) -> NDArray[np.float64]:
        calls.append(len(candidates))
        return session(candidates)

    scored = SearchProblem(
        problem.table, problem.budget, score, problem.feasible, problem.is_exhausted,
        estimator=exact, queries_left=problem.queries_left,
    )  # fmt: skip
    GuidedSearch(guided_batch=batch).search(scored, rng=np.random.default_rng(0))
    assert calls[:3] == sizes
    assert STRATEGIES.get("guided").estimates_first and not BeamSearch.estimates_first


def test_a_guided_attack_scores_each_clean_sentence_with_its_first_batch(
    bert_probes: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guided asks for its estimates first, so each sentence's first score request
    holds the clean sentence and the search's first candidates; beam's holds the clean
    sentence alone."""
    from brittle.engine.attack import AttackConfig, run_attack
    from brittle.engine.attack.sentence_search import RoundServices

    first: dict[str, list[tuple[str, ...]]] = {}
    serve = RoundServices.score

    def spy(self: RoundServices, requests: list) -> list:  # type: ignore[type-arg]
        for original, candidates, _ in requests:
            first.setdefault(original.sent_id, [c.forms for c in candidates])
        return serve(self, requests)

    monkeypatch.setattr(RoundServices, "score", spy)
    for search, extra in (("guided", 2), ("beam", 0)):
        first.clear()
        config = AttackConfig(
            treebank=str(TREEBANK), probes=bert_probes, method="random", parser="gold",
            search=search, budget=2, query_budget=12, limit=3,
        )  # fmt: skip
        run_attack(config, tmp_path / search, device="cpu")
        assert len(first) == 3
        for sent_id, forms in first.items():
            assert len(forms) == 1 + extra, sent_id
            assert all(f != forms[0] for f in forms[1:])
