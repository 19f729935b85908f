"""What decides an attack's results, checked against the registries before anything loads."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from brittle.engine.core.errors import ConfigError
from brittle.engine.core.json_types import JSONObject
from brittle.engine.runs.run_checks import (
    check_at_least,
    check_constraints,
    check_generator,
    check_parser,
    check_precision,
    check_syntax_distance,
)
from brittle.engine.runs.run_options import resolve_generator
from brittle.engine.targets.parser import target_parser
from brittle.search.generators.base import GENERATORS
from brittle.search.generators.options import parse_options
from brittle.search.presets import MEANING_CONSTRAINTS, ValidityPreset
from brittle.search.strategies.base import STRATEGIES


@dataclass(frozen=True)
class AttackConfig:
    """Everything that decides an attack's results (timings and paths of outputs aside).

    Attributes:
        treebank: the CoNLL-U file attacked.
        probes: probe directories (their tasks make the objective).
        method: generator name (``copos``, ``coco``, ``random``, ...).
        search: strategy name (``sample``, ``greedy``, ``beam``, ``guided``).
        budget: tau, the most words substituted.
        candidates: b random perturbations for ``sample``; options per position for
            ``greedy``, ``beam`` and ``guided``.
        beam_width: kept perturbations per step for ``beam``.
        max_syntax_distance: largest normalised tree edit distance between the parses of
            the original and of the perturbation (the ``syntax`` constraint's default).
        parser: parser for the parse-based constraints (``spacy``, ``stanza``, ``gold``).
        query_budget: most model evaluations per sentence (None: unlimited).
        seed: seed of every random draw.
        limit: attack only the first ``limit`` sentences.
        objective: tasks whose mean drop is maximised (empty: every task).
        constraints: constraint specs ``NAME[:VALUE]`` (empty: the default,
            ``syntax`` at ``max_syntax_distance``).
        generator_options: the generator's own options, ``NAME=VALUE`` (``top_k`` is
            ``candidates``).
        check_all: ``sample`` checks the constraints on every candidate it scored, so
            epsilon and each task's own worst drop cover all feasible candidates.
        dtype: precision of every torch model the attack runs (``float32``,
            ``float16``, ``bfloat16``); ``None``: the precision each probe was trained
            with, and each other model's own.
        time_budget: seconds of wall-clock time per sentence after which its search
            scores no new candidate (None: unlimited). The one setting that makes the
            results depend on the machine's speed, not only on the seed.
        anytime: write each row's anytime record (the best admitted damage so far,
            against queries and seconds; its seconds differ from run to run, as the
            row's own).
        guided_batch, guided_warmup: ``guided``: candidates scored per round and the
            share of the query budget spent on single substitutions before any is
            extended (:class:`~brittle.search.strategies.guided.GuidedSearch`; ``None``:
            its defaults, 8 and 0.5). Recorded in ``config.json`` only when given.
        target: ``parser:NAME``: a registered dependency parser whose attachment score
            the attack lowers too (its column ``parser.uas``; :mod:`brittle.engine.
            targets.parser`), beside the probes' or alone (``probes`` may then be empty).

    Raises:
        ConfigError: a value out of range, an unknown component, or a strategy that
            cannot search the generator's kind of perturbation.
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
    constraints: tuple[str, ...] = field(default_factory=tuple)
    generator_options: tuple[str, ...] = field(default_factory=tuple)
    check_all: bool = False
    dtype: str | None = None
    time_budget: float | None = None
    anytime: bool = False
    target: str | None = None
    guided_batch: int | None = None
    guided_warmup: float | None = None

    def __post_init__(self) -> None:
        if self.target is not None:
            target_parser(self.target)
        elif not self.probes:
            raise ConfigError("an attack needs at least one --probe directory or a --target")
        check_at_least("--budget", self.budget)
        check_at_least("--candidates", self.candidates)
        check_at_least("--beam-width", self.beam_width)
        check_at_least("--query-budget", self.query_budget, 2, "the clean sentence + one")
        if self.time_budget is not None and not self.time_budget > 0:
            raise ConfigError(
                f"--time-budget must be a positive number of seconds, got {self.time_budget}"
            )
        check_syntax_distance(self.max_syntax_distance)
        check_at_least("--limit", self.limit)
        if self.check_all and self.search != "sample":
            raise ConfigError(f"--check-all applies to --search sample, not {self.search}")
        if (self.guided_batch, self.guided_warmup) != (None, None) and self.search != "guided":
            raise ConfigError(
                f"--guided-batch and --guided-warmup apply to --search guided, not {self.search}"
            )
        check_at_least("--guided-batch", self.guided_batch)
        if self.guided_warmup is not None and not 0.0 <= self.guided_warmup <= 1.0:
            raise ConfigError(
                f"--guided-warmup must be a share between 0 and 1, got {self.guided_warmup}"
            )
        check_precision(self.dtype)
        generator = check_generator(self.method, ())
        self.parsed_generator_options()  # with the options --candidates sets refused
        strategy = STRATEGIES.get(self.search)
        check_parser(self.parser)
        check_constraints(self.constraint_specs)
        if generator.family not in strategy.supports:
            able = sorted(
                n for n in STRATEGIES.names() if generator.family in STRATEGIES.get(n).supports
            )
            raise ConfigError(
                f"method {self.method} is a {generator.family}; --search {self.search} cannot "
                f"search it (use --search {' or '.join(able)})"
            )

    @property
    def constraint_specs(self) -> tuple[str, ...]:
        """The constraints applied: ``constraints``, or the default: ``syntax`` at
        ``max_syntax_distance``, and for generators that mean to keep the meaning (coPOS,
        coCO) the meaning constraints too, as ``perturb`` applies them
        (:data:`~brittle.search.presets.MEANING_CONSTRAINTS`)."""
        if self.constraints:
            return self.constraints
        keeps = GENERATORS.get(self.method).keeps_meaning
        return (f"syntax:{self.max_syntax_distance}",) + (MEANING_CONSTRAINTS if keeps else ())

    def with_preset(self, preset: ValidityPreset) -> AttackConfig:
        """These settings with ``preset``'s generator, options and constraints."""
        return replace(
            self,
            method=preset.method,
            generator_options=preset.generator_options,
            constraints=preset.constraints,
        )

    def parsed_generator_options(self) -> dict[str, object]:
        """``generator_options`` as the generator's keyword arguments (checked)."""
        return parse_options(
            GENERATORS.get(self.method),
            self.generator_options,
            reserved={"top_k": "--candidates"},
        )

    @property
    def strategy_parameters(self) -> dict[str, object]:
        """The strategy's own parameters, taken from the fields of the same name."""
        values: dict[str, object] = {
            "candidates": self.candidates,
            "beam_width": self.beam_width,
            "check_all": self.check_all,
        }
        if self.guided_batch is not None:  # else the strategy's own default
            values["guided_batch"] = self.guided_batch
        if self.guided_warmup is not None:
            values["guided_warmup"] = self.guided_warmup
        return {k: values[k] for k in STRATEGIES.get(self.search).parameters() if k in values}

    @property
    def options_per_position(self) -> int:
        """Options per position the generator proposes: ``candidates`` for searches that
        walk the options, at least 10 for ``sample`` (which draws among them)."""
        return self.candidates if self.search != "sample" else max(self.candidates, 10)

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping (tuples become lists; the default constraints are implied
        by ``max_syntax_distance`` and left out, as are ``check_all`` and ``dtype`` when
        they are the default)."""
        data = asdict(self)
        data["probes"] = list(self.probes)
        data["objective"] = list(self.objective)
        for name in ("constraints", "generator_options"):
            value = getattr(self, name)
            if value:
                data[name] = list(value)
            else:
                del data[name]
        if not self.check_all:  # written only when set: older config.json files lack it
            del data["check_all"]
        if self.dtype is None:  # likewise: the default run's config.json is unchanged
            del data["dtype"]
        if self.time_budget is None:  # likewise
            del data["time_budget"]
        if not self.anytime:  # likewise
            del data["anytime"]
        if self.target is None:  # likewise
            del data["target"]
        for name in ("guided_batch", "guided_warmup"):  # likewise: given, they are kept
            if data[name] is None:
                del data[name]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AttackConfig:  # Any: decoded JSON
        """The configuration :meth:`to_dict` wrote (``config.json``)."""
        values = dict(data)
        values["probes"] = tuple(values["probes"])
        values["objective"] = tuple(values.get("objective", ()))
        values["constraints"] = tuple(values.get("constraints", ()))
        values["generator_options"] = tuple(values.get("generator_options", ()))
        return cls(**values)


def attack_config(
    treebank: str,
    probes: Sequence[str],
    *,
    method: str | None,
    validity: str | None = None,
    search: str = "beam",
    budget: int = 3,
    candidates: int = 20,
    beam_width: int = 4,
    max_syntax_distance: float = 0.2,
    parser: str = "spacy",
    query_budget: int | None = None,
    seed: int = 0,
    limit: int | None = None,
    objective: Sequence[str] = (),
    constraints: Sequence[str] = (),
    generator_options: Sequence[str] = (),
    lm: str | None = None,
    lm_kind: str | None = None,
    sense: str | None = None,
    check_all: bool = False,
    dtype: str | None = None,
    time_budget: float | None = None,
    anytime: bool = False,
    target: str | None = None,
    guided_batch: int | None = None,
    guided_warmup: float | None = None,
) -> AttackConfig:
    """The settings of ``brittle attack`` and :func:`brittle.attack` from their options,
    resolved alike: ``validity``'s preset with the user's constraints and generator
    options added (or ``method`` and the options as given), the shorthands ``lm``,
    ``lm_kind``, ``sense`` and ``dtype`` turned into the generator's options (before
    the ones given), the objective's blank task names left out. ``dtype`` must be
    checked against the device already.

    Raises:
        ConfigError: neither a method nor a preset, a method other than the preset's,
            or a shorthand the method does not take.
    """
    chosen, applied, options = resolve_generator(
        validity, method, constraints, generator_options, lm=lm, lm_kind=lm_kind, sense=sense,
        dtype=dtype,
    )  # fmt: skip
    return AttackConfig(
        treebank=treebank,
        probes=tuple(probes),
        method=chosen,
        search=search,
        budget=budget,
        candidates=candidates,
        beam_width=beam_width,
        max_syntax_distance=max_syntax_distance,
        parser=parser,
        query_budget=query_budget,
        seed=seed,
        limit=limit,
        objective=tuple(t.strip() for t in objective if t.strip()),
        constraints=applied,
        generator_options=options,
        check_all=check_all,
        dtype=dtype,
        time_budget=time_budget,
        anytime=anytime,
        target=target,
        guided_batch=guided_batch,
        guided_warmup=guided_warmup,
    )
