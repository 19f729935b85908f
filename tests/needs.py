"""Optional resources of the test suite: ``@pytest.mark.needs(NAME, ...)``.

A test that needs something ``make setup`` installs but a bare environment may lack
(the spaCy pipeline, the GloVe vectors, Ray, a Chromium) says so with the ``needs``
marker; the hook in ``conftest.py`` skips it, with the reason and the fix, where one is
missing. With ``BRITTLE_REQUIRE_ALL=1`` (set by ``.ci/run``) a missing resource fails
the test instead, so CI, which installs everything, cannot pass by skipping.

Every check looks at files only (nothing heavy is imported) and runs once per session.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Literal

import pytest

#: The environment variable that turns a missing resource into a failure.
REQUIRE_ALL_ENV = "BRITTLE_REQUIRE_ALL"

#: The marker's line in ``--markers`` (pyproject registers the same).
MARKER = (
    "needs(*resources): needs optional resources (spacy-model, glove, ray, browser); "
    f"skipped where one is missing, failed instead with {REQUIRE_ALL_ENV}=1"
)


def _spacy_model() -> str | None:
    from brittle.engine.core.errors import ResourceMissingError
    from brittle.engine.core.resources.spacy_model import check_spacy

    try:
        check_spacy()
    except ResourceMissingError as err:
        return str(err)
    return None


def _glove() -> str | None:
    from brittle.engine.core.errors import ResourceMissingError
    from brittle.engine.core.resources.glove import glove_paths

    try:
        glove_paths()
    except ResourceMissingError as err:
        return str(err)
    return None


def _ray() -> str | None:
    if importlib.util.find_spec("ray") is None:
        return "Ray is not installed (pip install 'brittle[ray]')"
    return None


def _browser() -> str | None:
    from browser import find_chromium

    if find_chromium() is None:
        return (
            "no Chromium found (install Debian's `chromium` package, as `make setup` does, "
            "or point BRITTLE_CHROMIUM at a Chromium binary)"
        )
    return None


#: Each resource's check: ``None`` when it is there, else why not and how to get it.
CHECKS: dict[str, Callable[[], str | None]] = {
    "spacy-model": _spacy_model,
    "glove": _glove,
    "ray": _ray,
    "browser": _browser,
}

_found: dict[str, str | None] = {}


def missing(name: str) -> str | None:
    """Why resource ``name`` is missing (``None`` when it is there); checked once.

    Raises:
        ValueError: ``name`` is no resource of :data:`CHECKS`.
    """
    if name not in CHECKS:
        raise ValueError(
            f"unknown resource {name!r} in @pytest.mark.needs (known: {sorted(CHECKS)})"
        )
    if name not in _found:
        _found[name] = CHECKS[name]()
    return _found[name]


def forget() -> None:
    """Check every resource again at its next use (tests of this module)."""
    _found.clear()


def decide(
    names: Iterable[str],
    find: Callable[[str], str | None] = missing,
    env: Mapping[str, str] = os.environ,
) -> tuple[Literal["run", "skip", "fail"], str]:
    """What becomes of a test that needs ``names``: run it, skip it or fail it, and why.

    ``find`` gives a missing resource's reason (``None``: present). Missing resources
    skip the test unless ``$BRITTLE_REQUIRE_ALL`` is set to anything but ``""`` or
    ``0``, which fails it.
    """
    reasons = [f"{n}: {why}" for n in dict.fromkeys(names) if (why := find(n)) is not None]
    if not reasons:
        return "run", ""
    why = "; ".join(reasons)
    if env.get(REQUIRE_ALL_ENV, "").strip() not in ("", "0"):
        return "fail", f"missing resource ({REQUIRE_ALL_ENV} is set): {why}"
    return "skip", f"missing resource: {why}"


def require(*names: str) -> None:
    """Skip (or, under ``BRITTLE_REQUIRE_ALL=1``, fail) the running test unless every
    resource of ``names`` is there: the marker's decision, for fixtures."""
    outcome, why = decide(names)
    if outcome == "skip":
        pytest.skip(why)
    if outcome == "fail":
        pytest.fail(why, pytrace=False)


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker where the configuration does not (a run outside the checkout)."""
    if not any(line.startswith("needs(") for line in config.getini("markers")):
        config.addinivalue_line("markers", MARKER)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip (or fail) a test whose ``needs`` resources are missing, before its fixtures."""
    names = [n for mark in item.iter_markers("needs") for n in mark.args]
    if names:
        require(*names)
