"""The live objects an attack uses, built once from the registries by name."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from brittle.engine.attack.config import AttackConfig
from brittle.engine.core import heap
from brittle.engine.core.sentence import Sentence
from brittle.engine.probes.probe_eval import ProbeEvaluator
from brittle.engine.reports.predictions import PredictingEvaluator
from brittle.engine.targets.combined import CombinedEvaluator, CombinedPredictor
from brittle.engine.targets.parser import ParserTarget, target_labels, target_parser
from brittle.scorers.parsers import make_parser
from brittle.scorers.parsers.base import Parser
from brittle.search.constraints import Constraint, ConstraintContext, build_constraints
from brittle.search.generators.base import GENERATORS, Generator, SubstitutionGenerator
from brittle.search.scoring import RepresentationComposer, SubstitutionEstimator, TaskEvaluator
from brittle.search.strategies.base import STRATEGIES, Strategy
from brittle.search.table import SubstitutionTable

#: A sentence as the tables remember it: its id and its words.
TableKey = tuple[str, tuple[str, ...]]


class TableMemo:
    """The substitution tables of the sentences attacked so far, by sentence.

    A table does not depend on the budget, so the runs of one attack at several budgets
    (``--budget 1,2,3``) generate each sentence's table once: the later budgets take the
    first one's. The chunks are the same at every budget, so a table is what generating
    it again in the same chunk would give. It holds one table per sentence of the
    treebank (a few kilobytes each), so only a run with budgets to come keeps them
    (``enabled``); otherwise memory stays flat.
    """

    def __init__(self, *, enabled: bool = False) -> None:
        self.enabled = enabled
        self._tables: dict[TableKey, SubstitutionTable] = {}

    def tables(
        self,
        generator: SubstitutionGenerator,
        chunk: Sequence[Sentence],
    ) -> list[SubstitutionTable]:
        """The tables of ``chunk``; generated in one batch unless all are known."""
        keys = [(s.sent_id, tuple(s.forms)) for s in chunk]
        if all(k in self._tables for k in keys):
            return [self._tables[k] for k in keys]
        made = generator.candidates(list(chunk), top_k=generator.top_k)
        if self.enabled:
            self._tables.update(zip(keys, made, strict=True))
        return made


@dataclass(frozen=True)
class AttackComponents:
    """What an attack runs with.

    Attributes:
        evaluator: the probes' metrics on candidate sentences.
        generator: proposes the perturbations.
        strategy: searches each sentence.
        constraints: what a kept perturbation must satisfy, cheap ones first.
        parser: the parse-based constraints' parser (loaded at its first call, once;
            :class:`ParserSource`).
        tables: the substitution tables generated so far (shared across budgets).
        predictor: what the probes predict on a row's clean and perturbed sentences, for
            the rows (``None``: the rows say nothing of it); the probe evaluator itself
            when the attack builds its components.
        estimator: first-order damage estimates for a guided search (``None``: none);
            the probe evaluator itself when the attack builds its components.
        composer: predicts the metrics of pairs of scored perturbations for a strategy
            that composes (``None``: none to be had); the probe evaluator itself when
            the probes are all the attack scores, keeping the vectors of what it scores
            once a strategy that composes is built with it.
    """

    evaluator: TaskEvaluator
    generator: Generator
    strategy: Strategy
    constraints: tuple[Constraint, ...]
    parser: ParserSource
    tables: TableMemo = field(default_factory=TableMemo, compare=False)
    predictor: PredictingEvaluator | None = field(default=None, compare=False)
    estimator: SubstitutionEstimator | None = field(default=None, compare=False)
    composer: RepresentationComposer | None = field(default=None, compare=False)

    @property
    def substitutions(self) -> SubstitutionGenerator | None:
        """The generator when it proposes per-position options (else ``None``)."""
        return self.generator.substitution_tables()


def build_generator(config: AttackConfig) -> Generator:
    """The generator ``config.method`` names, with the options the search needs."""
    cls = GENERATORS.get(config.method)
    options = config.parsed_generator_options()  # typed by the generator's fields
    build: Callable[..., Generator] = cls
    if issubclass(cls, SubstitutionGenerator):
        return build(top_k=config.options_per_position, **options)
    return build(**options)


def build_components(
    config: AttackConfig,
    *,
    reuse: AttackComponents | None = None,
    device: str | None = None,
    remember_tables: bool = False,
) -> AttackComponents:
    """Load probes, generator, parser and strategy named by ``config``.

    ``device`` is the torch device of the probes' model and of the model-based
    constraints (``None``: ``cuda`` when available, else ``cpu``); ``config.dtype`` is
    their precision (``None``: representations keep the dtype each probe was trained
    with, the constraints' models their own).

    Every resource is found here, before the first sentence, so a missing one fails at
    once. The constraints are built first: the parser's helper processes (if any) then
    load on the other cores while this process loads the rest. What the first model pass
    does not need loads at its first use instead (the parser's spaCy in this process
    when helper processes parse beside it, and Numba's tree edit distance kernels), so
    the first candidates are scored sooner. ``reuse`` (the
    components of the same attack at another budget) keeps its probes, generator,
    parser and the tables generated so far, and rebuilds only what depends on the
    budget. ``remember_tables``: keep the tables for the budgets to come (a run of
    several budgets; :class:`TableMemo`).
    """
    with heap.loading():  # about a million long-lived objects: keep the collector off them
        return _build(config, reuse, device, remember_tables)


def _build(
    config: AttackConfig,
    reuse: AttackComponents | None,
    device: str | None,
    remember_tables: bool,
) -> AttackComponents:
    memo = reuse.tables if reuse is not None else TableMemo(enabled=remember_tables)
    parser = reuse.parser if reuse is not None else _parser_factory(config.parser)
    strategy = STRATEGIES.get(config.search)(**config.strategy_parameters)
    context = ConstraintContext(
        tau=config.budget,
        parser=parser,
        max_syntax_distance=config.max_syntax_distance,
        device=device,
        dtype=config.dtype,
    )
    # The constraints first: a syntax check prepares the parser, which starts its helper
    # processes, and they load spaCy on the idle cores while this process imports the
    # models and WordNet on one (started later, their loading slowed the first model
    # passes, whose threads then waited on a busy core).
    constraints = build_constraints(config.constraint_specs, context)
    composer: RepresentationComposer | None
    if reuse is not None:
        evaluator, generator = reuse.evaluator, reuse.generator
        predictor, estimator, composer = reuse.predictor, reuse.estimator, reuse.composer
    else:
        generator = build_generator(config)
        generator.prepare()
        evaluator, predictor, probes = _evaluators(config, parser, device)
        estimator = probes
        # The probes compose only when they are all the attack scores: a target
        # parser's metrics have no vectors to add.
        composer = probes if config.target is None else None
    if strategy.composes and composer is not None:
        composer.keep_vectors()
    return AttackComponents(
        evaluator,
        generator,
        strategy,
        tuple(constraints),
        parser,
        memo,
        predictor=predictor,
        estimator=estimator,
        composer=composer,
    )


def _evaluators(
    config: AttackConfig, parser: ParserSource, device: str | None
) -> tuple[TaskEvaluator, PredictingEvaluator | None, ProbeEvaluator | None]:
    """What scores the candidates: the probes, the ``--target`` parser (the constraints'
    parser itself when it is the same one, so a candidate is parsed once), or both side
    by side; what predicts the rows' trees and tags (each of them); and the probes again
    (``None`` without), which estimate and compose."""
    probes = (
        ProbeEvaluator.from_dirs(config.probes, device=device, dtype=config.dtype)
        if config.probes
        else None
    )
    if config.target is None:
        assert probes is not None  # the configuration has probes or a target
        return probes, probes, probes
    name = target_parser(config.target)
    source = parser if name == config.parser else LazyParser(name)
    target = ParserTarget(source, ud_labels=target_labels(config.target))
    if probes is None:
        return target, target, None
    return CombinedEvaluator([probes, target]), CombinedPredictor([probes, target]), probes


class ParserSource(Protocol):
    """Where an attack's parser comes from: built at the first call (an attack whose
    constraints parse nothing loads none), and able to forget the parses it kept, which
    every chunk asks for without loading the parser."""

    def __call__(self) -> Parser:
        """The parser, built and prepared at the first call."""
        ...

    def clear_cache(self) -> None:
        """Forget the parses kept so far; nothing is loaded if nothing was."""
        ...


class LazyParser:
    """Builds and prepares the parser ``name`` at its first call, then returns it.

    Attributes:
        name: the registered parser.
        loaded: the parser once built (``None`` before the first call).
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.loaded: Parser | None = None

    def __call__(self) -> Parser:
        if self.loaded is None:
            with heap.loading():
                built = make_parser(self.name)
                built.prepare()
            self.loaded = built
        return self.loaded

    def clear_cache(self) -> None:
        """Forget the parses kept so far (a parser with a cache; no load if unloaded)."""
        if self.loaded is not None:
            self.loaded.clear()


def _parser_factory(name: str) -> LazyParser:
    """A function that builds and prepares the parser ``name`` at its first call."""
    return LazyParser(name)
