"""Options the command line and the Python API (:mod:`brittle.api`) resolve alike.

- :func:`resolve_method`: a run's generator, constraints and generator options, from
  ``--method`` or a validity preset (``--validity``) with the user's additions;
- :func:`shorthand_generator_options`: the ``NAME=VALUE`` generator options that the
  shorthand flags ``--lm``, ``--lm-kind``, ``--sense`` and ``--dtype`` stand for;
- :func:`resolve_generator`: both, as ``attack`` and ``perturb`` resolve them;
- :func:`make_executor`: the workers ``--workers`` and ``--ray`` ask for.
"""

from __future__ import annotations

from collections.abc import Sequence

from brittle.engine.core.errors import ConfigError
from brittle.engine.runs.shards import LocalProcesses, RayActors, ShardExecutor
from brittle.search.generators.base import GENERATORS
from brittle.search.generators.options import option_help, shorthand_options
from brittle.search.presets import resolve_preset

__all__ = [
    "make_executor",
    "resolve_generator",
    "resolve_method",
    "shorthand_generator_options",
]


def resolve_method(
    validity: str | None,
    method: str | None,
    constraints: tuple[str, ...],
    generator_options: tuple[str, ...],
) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """The method, constraints and generator options of a run: ``validity``'s preset
    with the user's additions (its constraints first, then the others given; its
    generator options first), or ``method`` and the options as given.

    Raises:
        ConfigError: neither a method nor a preset, an unknown preset, or a method
            other than the preset's.
    """
    if validity is None:
        if method is None:
            raise ConfigError("give --method, or --validity for a preset")
        return method, constraints, generator_options
    preset, applied = resolve_preset(validity, method=method, constraints=constraints)
    return preset.method, applied, (*preset.generator_options, *generator_options)


def shorthand_generator_options(
    methods: Sequence[str],
    *,
    lm: str | None,
    lm_kind: str | None,
    sense: str | None,
    dtype: str | None = None,
) -> dict[str, tuple[str, ...]]:
    """Per method, the ``NAME=VALUE`` options that ``--lm``, ``--lm-kind`` and
    ``--sense`` set, and ``dtype=`` for the generators that run a model of their own
    (``--dtype`` is the precision of every model of the run, so it is no error for one
    without).

    Raises:
        ConfigError: a flag given that none of ``methods`` takes.
    """
    generators = {name: GENERATORS.get(name) for name in GENERATORS.names()}
    out = shorthand_options(
        methods, generators, {"--lm": lm, "--lm-kind": lm_kind, "--sense": sense}
    )
    if dtype is not None:
        for m in methods:
            if "dtype" in option_help(generators[m]):
                out[m] = (*out[m], f"dtype={dtype}")
    return out


def resolve_generator(
    validity: str | None,
    method: str | None,
    constraints: Sequence[str],
    generator_options: Sequence[str],
    *,
    lm: str | None,
    lm_kind: str | None,
    sense: str | None,
    dtype: str | None,
) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """A run's method, constraints and generator options (:func:`resolve_method`), the
    shorthands' options (:func:`shorthand_generator_options`) before the ones given.

    Raises:
        ConfigError: as :func:`resolve_method` and :func:`shorthand_generator_options`.
    """
    chosen, applied, options = resolve_method(
        validity, method, tuple(constraints), tuple(generator_options)
    )
    shorthands = shorthand_generator_options(
        [chosen], lm=lm, lm_kind=lm_kind, sense=sense, dtype=dtype
    )
    return chosen, applied, (*shorthands[chosen], *options)


def make_executor(
    workers: int | None, ray_address: str | None, *, threads: int | None = None
) -> ShardExecutor | None:
    """The executor ``--workers`` and ``--ray`` ask for (``None``: this process).

    ``threads``: the torch threads local workers divide between them (``None``: the
    CPUs this process may use).
    """
    if ray_address is not None:
        return RayActors(ray_address, workers)
    if workers is not None and workers > 1:
        return LocalProcesses(workers, threads=threads)
    return None
