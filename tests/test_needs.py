"""``@pytest.mark.needs``: a missing optional resource skips a test with the reason, or
fails it under ``BRITTLE_REQUIRE_ALL=1`` (as CI runs)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from needs import CHECKS, REQUIRE_ALL_ENV, decide, missing

TESTS = Path(__file__).resolve().parent


def _find(name: str) -> str | None:
    return {"glove": "no vectors", "ray": "no Ray"}.get(name)


def test_present_resources_run() -> None:
    assert decide(["spacy-model", "browser"], _find, {}) == ("run", "")
    assert decide([], _find, {REQUIRE_ALL_ENV: "1"}) == ("run", "")


def test_a_missing_resource_skips_with_its_reason() -> None:
    outcome, why = decide(["browser", "glove"], _find, {})
    assert outcome == "skip"
    assert why == "missing resource: glove: no vectors"
    assert decide(["glove"], _find, {REQUIRE_ALL_ENV: "0"})[0] == "skip"
    assert decide(["glove"], _find, {REQUIRE_ALL_ENV: " "})[0] == "skip"


def test_require_all_turns_the_skip_into_a_failure() -> None:
    outcome, why = decide(["glove", "ray", "glove"], _find, {REQUIRE_ALL_ENV: "1"})
    assert outcome == "fail"
    assert why == f"missing resource ({REQUIRE_ALL_ENV} is set): glove: no vectors; ray: no Ray"


def test_an_unknown_resource_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown resource 'gloves'"):
        missing("gloves")


def test_every_check_answers() -> None:
    for name, check in CHECKS.items():
        why = check()
        assert why is None or why.strip(), name


CONFTEST = """
import needs
from needs import pytest_configure, pytest_runtest_setup

needs.CHECKS.update({"glove": lambda: "no vectors here", "ray": lambda: None})
"""

TESTS_FILE = """
import pytest

@pytest.mark.needs("glove")
def test_needs_glove():
    pass

@pytest.mark.needs("ray")
def test_needs_ray():
    pass

def test_needs_nothing():
    pass

@pytest.fixture
def fails():
    raise AssertionError("a fixture of a skipped test ran")

@pytest.mark.needs("ray", "glove")
def test_needs_both(fails):
    pass
"""


def _run(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_it.py").write_text(TESTS_FILE)
    environ = {k: v for k, v in os.environ.items() if k != REQUIRE_ALL_ENV}
    environ.update(env, PYTHONPATH=os.pathsep.join([str(TESTS), environ.get("PYTHONPATH", "")]))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "-rsf",
            "--strict-markers",
            "-c",
            os.devnull,
            str(tmp_path),
        ],
        cwd=tmp_path,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_hook_skips_missing_resources_with_the_reason(tmp_path: Path) -> None:
    run = _run(tmp_path, {})
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 passed, 2 skipped" in run.stdout
    assert "missing resource: glove: no vectors here" in run.stdout
    assert "a fixture of a skipped test ran" not in run.stdout


def test_the_hook_fails_them_when_every_resource_is_required(tmp_path: Path) -> None:
    run = _run(tmp_path, {REQUIRE_ALL_ENV: "1"})
    assert run.returncode == 1, run.stdout + run.stderr
    assert "2 passed, 2 errors" in run.stdout  # failed in setup, before any fixture
    assert f"missing resource ({REQUIRE_ALL_ENV} is set): glove: no vectors here" in run.stdout
