"""The live objects an attack uses, built once from the registries by name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from brittle.engine.attack.config import AttackConfig
from brittle.engine.probe_eval import ProbeEvaluator
from brittle.scorers.parsers import make_parser
from brittle.scorers.parsers.base import Parser
from brittle.search.constraints import Constraint, ConstraintContext, build_constraints
from brittle.search.generators.base import GENERATORS, Generator, SubstitutionGenerator
from brittle.search.scoring import TaskEvaluator
from brittle.search.strategies.base import STRATEGIES, Strategy


@dataclass(frozen=True)
class AttackComponents:
    """What an attack runs with.

    Attributes:
        evaluator: the probes' metrics on candidate sentences.
        generator: proposes the perturbations.
        strategy: searches each sentence.
        constraints: what a kept perturbation must satisfy, cheap ones first.
        parser: the parse-based constraints' parser (loaded at its first call, once).
    """

    evaluator: TaskEvaluator
    generator: Generator
    strategy: Strategy
    constraints: tuple[Constraint, ...]
    parser: Callable[[], Parser]

    @property
    def substitutions(self) -> SubstitutionGenerator | None:
        """The generator when it proposes per-position options (else ``None``)."""
        g = self.generator
        return g if isinstance(g, SubstitutionGenerator) else None


def build_generator(config: AttackConfig) -> Generator:
    """The generator ``config.method`` names, with the options the search needs."""
    cls = GENERATORS.get(config.method)
    options = config.parsed_generator_options()  # typed by the generator's fields
    build: Callable[..., Generator] = cls
    if issubclass(cls, SubstitutionGenerator):
        return build(top_k=config.options_per_position, **options)
    return build(**options)


def build_components(
    config: AttackConfig, *, reuse: AttackComponents | None = None, device: str | None = None
) -> AttackComponents:
    """Load probes, generator, parser and strategy named by ``config``.

    ``device`` is the torch device of the probes' model and of the model-based
    constraints (``None``: ``cuda`` when available, else ``cpu``); representations keep
    the dtype each probe was trained with.

    Every resource loads here, before the first sentence: a missing one fails at once
    and its loading time is not charged to the first sentences. ``reuse`` (the
    components of the same attack at another budget) keeps its probes, generator and
    parser and rebuilds only what depends on the budget.
    """
    if reuse is not None:
        evaluator, generator, parser = reuse.evaluator, reuse.generator, reuse.parser
    else:
        generator = build_generator(config)
        generator.prepare()
        evaluator = ProbeEvaluator.from_dirs(config.probes, device=device)
        parser = _parser_factory(config.parser)
    strategy = STRATEGIES.get(config.search)(**config.strategy_parameters)
    context = ConstraintContext(
        tau=config.budget,
        parser=parser,
        max_syntax_distance=config.max_syntax_distance,
        device=device,
    )
    constraints = build_constraints(config.constraint_specs, context)
    # The tree edit distance kernels are deferred (they load Numba) until first use:
    # load them now rather than during the first sentence.
    import brittle.scorers._ted_kernels  # noqa: F401

    return AttackComponents(evaluator, generator, strategy, tuple(constraints), parser)


def _parser_factory(name: str) -> Callable[[], Parser]:
    """A function that builds and prepares the parser ``name`` at its first call."""

    @cache
    def parser() -> Parser:
        built = make_parser(name)
        built.prepare()
        return built

    return parser
