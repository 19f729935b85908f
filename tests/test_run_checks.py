"""The settings attack, perturb and compare-methods share are refused alike: same check,
same one-line message, whichever config they reach (engine/runs/run_checks.py)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from brittle.engine.attack import AttackConfig
from brittle.engine.compare.compare_run import CompareConfig
from brittle.engine.core.errors import ConfigError
from brittle.engine.perturb.perturb_run import PerturbConfig
from brittle.engine.runs.run_checks import (
    check_at_least,
    check_constraints,
    check_generator,
    check_syntax_distance,
)


def attack(**kw: Any) -> object:  # Any: each config's own keyword types
    return AttackConfig(treebank="t.conllu", probes=("p",), **kw)


def perturb(**kw: Any) -> object:
    return PerturbConfig(method=kw.pop("method", "copos"), **kw)


def compare(**kw: Any) -> object:
    return CompareConfig(methods=(kw.pop("method", "copos"),), **kw)


CONFIGS: dict[str, Callable[..., object]] = {
    "attack": attack,
    "perturb": perturb,
    "compare": compare,
}

SHARED = [
    ({"candidates": 0}, "--candidates must be at least 1, got 0"),
    ({"dtype": "float8"}, "unknown --dtype 'float8'"),
]


@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize(("setting", "message"), SHARED, ids=lambda x: str(x)[:24])
def test_a_shared_setting_is_refused_alike(
    config: str, setting: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        CONFIGS[config](**setting)


@pytest.mark.parametrize("config", ["attack", "perturb"])
@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"budget": 0}, "--budget must be at least 1, got 0"),
        ({"limit": 0}, "--limit must be at least 1, got 0"),
        ({"max_syntax_distance": -0.1}, "--max-syntax-distance must be >= 0"),
        ({"max_syntax_distance": math.nan}, "--max-syntax-distance must be >= 0"),
        ({"constraints": ("syntax:0.2", "syntax:0.3")}, "syntax given more than once"),
        ({"generator_options": ("no_such_option=1",)}, "no_such_option"),
    ],
    ids=lambda x: str(x)[:30],
)
def test_attack_and_perturb_share_their_checks(
    config: str, setting: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        CONFIGS[config](**setting)


def test_component_names_are_checked_where_they_are_built() -> None:
    """An attack's config resolves its components by name, so it refuses unknown ones;
    perturb and compare-methods build theirs in the run, which may be handed components
    that are not registered, and check only a generator's options up front."""
    with pytest.raises(ConfigError, match="unknown generator 'no-such-method'"):
        attack(method="no-such-method")
    with pytest.raises(ConfigError, match="unknown parser 'no-such-parser'"):
        attack(parser="no-such-parser")
    perturb(method="no-such-method", parser="no-such-parser")
    compare(method="no-such-method", parser="no-such-parser")
    with pytest.raises(ConfigError, match="unknown generator 'no-such-method'"):
        perturb(method="no-such-method", generator_options=("seed=1",))


def test_what_passes() -> None:
    for make in CONFIGS.values():
        make()  # the defaults are valid
    attack(max_syntax_distance=math.inf, limit=1, query_budget=2)
    perturb(max_syntax_distance=math.inf, constraints=("syntax:0.2", "pos"))
    compare(limit=2)
    with pytest.raises(ConfigError, match=r"--limit must be at least 2 \(random pairs"):
        compare(limit=1)
    with pytest.raises(ConfigError, match=r"at least 2 \(the clean sentence \+ one\), got 1"):
        attack(query_budget=1)


def test_the_checks_themselves() -> None:
    check_at_least("--x", None)  # unset is fine
    check_at_least("--x", 3, 3)
    with pytest.raises(ConfigError, match=r"^--x must be at least 4 \(why\), got 3$"):
        check_at_least("--x", 3, 4, "why")
    check_syntax_distance(0.0)
    assert [s.name for s in check_constraints(["budget", "syntax:0.1"])] == ["budget", "syntax"]
    with pytest.raises(ConfigError, match="budget, syntax given more than once"):
        check_constraints(["syntax", "budget", "syntax:0.1", "budget:2"])
    assert check_generator("copos", ()).__name__ == "CoPOS"
