"""The checks a run's settings share, made before anything loads.

``attack``, ``perturb`` and ``compare-methods`` take many of the same settings (the
generator and its options, the constraints, the parser, counts, the precision); each
config's ``__post_init__`` checks them through these functions, so a setting is
refused alike, in the same words, whichever command or Python call it came through.
Each raises :class:`~brittle.engine.core.errors.ConfigError` with one line naming the
option.
"""

from __future__ import annotations

from collections.abc import Sequence

from brittle.engine.core.errors import ConfigError
from brittle.scorers.parsers.base import PARSERS
from brittle.scorers.representations import DTYPES
from brittle.search.constraints import ConstraintSpec
from brittle.search.generators.base import GENERATORS, Generator
from brittle.search.generators.options import parse_options

__all__ = [
    "check_at_least",
    "check_constraints",
    "check_generator",
    "check_parser",
    "check_precision",
    "check_syntax_distance",
]


def check_at_least(option: str, value: int | None, least: int = 1, why: str = "") -> None:
    """``value`` (``None``: not set, always fine) is at least ``least``; ``why`` says
    what the floor is for."""
    if value is not None and value < least:
        reason = f" ({why})" if why else ""
        raise ConfigError(f"{option} must be at least {least}{reason}, got {value}")


def check_precision(dtype: str | None) -> None:
    """``dtype`` is ``None`` (each model's own) or one of :data:`DTYPES`."""
    if dtype is not None and dtype not in DTYPES:
        raise ConfigError(f"unknown --dtype {dtype!r} (known: {', '.join(DTYPES)})")


def check_syntax_distance(value: float) -> None:
    """A normalised tree edit distance threshold: at least 0 (``inf`` allowed, NaN not)."""
    if not value >= 0:
        raise ConfigError(f"--max-syntax-distance must be >= 0, got {value}")


def check_generator(method: str, options: Sequence[str]) -> type[Generator]:
    """The generator registered as ``method``, its ``NAME=VALUE`` options parsed once
    (an unknown option or a bad value fails here)."""
    generator = GENERATORS.get(method)
    if options:
        parse_options(generator, options)
    return generator


def check_parser(name: str) -> None:
    """``name`` is a registered parser."""
    PARSERS.get(name)


def check_constraints(specs: Sequence[str]) -> tuple[ConstraintSpec, ...]:
    """``NAME[:VALUE]`` specs parsed, each constraint named at most once."""
    parsed = tuple(ConstraintSpec.parse(s) for s in specs)
    names = [spec.name for spec in parsed]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ConfigError(f"constraint {', '.join(repeated)} given more than once")
    return parsed
