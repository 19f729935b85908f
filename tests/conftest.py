"""Shared test fixtures and hypothesis profiles."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from needs import pytest_configure, pytest_runtest_setup, require

from support import EWT_TEST, train_static_probe

# ``@pytest.mark.needs(...)``: optional resources skip, or fail under BRITTLE_REQUIRE_ALL=1.
__all__ = ["pytest_configure", "pytest_runtest_setup"]

settings.register_profile(
    "default", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("default")

# Parsers parse alone in tests: a helper process per test would load spaCy again each
# time. tests/test_parse_helpers.py turns helpers on where it checks them.
os.environ.setdefault("BRITTLE_PARSE_HELPERS", "0")


@pytest.fixture(autouse=True)
def _grades_start_empty() -> None:
    """Each test grades anew: the judges' grades this process kept (by pair and grader
    settings) would otherwise outlive a test that changes a judge."""
    grade = sys.modules.get("brittle.search.validity.grade")
    if grade is not None:
        grade.forget_grades()


@pytest.fixture
def ewt_test() -> Path:
    """The EWT test split; the test is skipped when ../shared is absent."""
    if not EWT_TEST.exists():
        pytest.skip(f"{EWT_TEST} is not available")
    return EWT_TEST


@pytest.fixture(scope="session")
def probed_attack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small real attack with distance, depth and POS probes (see report_run); its
    output directory. Built once per session; tests copy it before changing it."""
    from report_run import attack_with_probes

    require("spacy-model", "glove")
    return attack_with_probes(tmp_path_factory.mktemp("probed-attack"))


@pytest.fixture(scope="session")
def perturb_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The HTML page of a small perturb run under the spaCy parser (see report_run);
    skipped without the spaCy model. Built once per session."""
    from report_run import perturb_page

    require("spacy-model")
    return perturb_page(tmp_path_factory.mktemp("perturb-page"))


@pytest.fixture(scope="session")
def static_probe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real root probe on static text vectors, trained once per session
    (:func:`support.train_static_probe`); tests copy it before changing it."""
    return train_static_probe(tmp_path_factory.mktemp("static-probe"))
