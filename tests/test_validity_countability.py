"""bench/validity_countability.py's frames, the per-noun gap from their log-probabilities
(against a slow obvious loop on random values), its thresholds and the two questions
it answers."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import validity_countability as vc  # noqa: E402


def test_the_frames_put_the_noun_with_its_article_and_as_a_mass_noun() -> None:
    assert vc.frames("apple") == [
        "I need an apple.", "I need more apple.",
        "There is an apple here.", "There is too much apple here.",
        "We talked about an apple.", "We talked about apple.",
    ]  # fmt: skip
    assert vc.frames("chair")[0] == "I need a chair."
    assert vc.frames("honesty")[0] == "I need an honesty."  # the project's article rules
    assert vc.frames("unit")[0] == "I need a unit."


@settings(max_examples=100, deadline=None)
@given(
    st.integers(1, 5).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(
                st.floats(-80, 0, allow_nan=False),
                min_size=n * 2 * len(vc.TEMPLATES),
                max_size=n * 2 * len(vc.TEMPLATES),
            ),
        )
    )
)
def test_a_gap_is_the_mean_over_templates_of_count_minus_mass_in_bits(
    case: tuple[int, list[float]],
) -> None:
    nouns, logprobs = case
    got = vc.gaps(logprobs, nouns)
    per = 2 * len(vc.TEMPLATES)
    for k in range(nouns):
        mine = logprobs[k * per : (k + 1) * per]
        diffs = [(mine[2 * t] - mine[2 * t + 1]) / math.log(2) for t in range(len(vc.TEMPLATES))]
        assert got[k] == pytest.approx(sum(diffs) / len(diffs), abs=1e-9)


def test_gaps_refuse_a_count_that_does_not_fit() -> None:
    with pytest.raises(ValueError, match="7 log-probabilities for 1 nouns"):
        vc.gaps([0.0] * 7, 1)


def test_the_thresholds_are_the_lists_percentiles_and_answer_both_questions() -> None:
    mass = list(np.linspace(-6, 0, 11))
    count = list(np.linspace(4, 10, 11))
    only, above = vc.thresholds(mass, count)
    assert only == pytest.approx(4.6) and above == pytest.approx(-0.6)
    gap = {"dog": 7.0, "mud": -3.0, "kind": 2.0}.__getitem__
    answers = vc.judged_by(gap, only, above)
    count_only, countable = answers["count_only"], answers["is_countable"]
    assert [count_only(n) for n in ("dog", "mud", "kind")] == [True, False, False]
    assert [countable(n) for n in ("dog", "mud", "kind")] == [True, False, True]


def test_the_calibration_lists_do_not_overlap() -> None:
    mass = set(vc.MASS_LIST.read_text(encoding="utf-8").split()[1:])
    assert len(mass) >= 60 and len(vc.COUNT_NOUNS) >= 50
    assert not mass & set(vc.COUNT_NOUNS)
