"""bench/validity_lm_features.py's measures: the area under the ROC curve against the
slow obvious count over every pair, and each surprisal measure on a built pair."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from brittle.engine.core.sentence import Sentence, Token

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import validity_lm_features as lf  # noqa: E402


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.booleans()), max_size=30))
def test_auc_counts_the_ungrammatical_pairs_that_cost_more(
    pairs: list[tuple[int, bool]],
) -> None:
    costs = [float(c) for c, _ in pairs]
    read = [g for _, g in pairs]
    good = [c for c, g in zip(costs, read, strict=True) if g]
    bad = [c for c, g in zip(costs, read, strict=True) if not g]
    got = lf.auc(costs, read)
    if not good or not bad:
        assert math.isnan(got)
        return
    wins = sum(1.0 if b > g else 0.5 if b == g else 0.0 for b in bad for g in good)
    assert got == wins / (len(good) * len(bad))


def _sentence(words: list[str]) -> Sentence:
    return Sentence("s", (), tuple(Token(str(i + 1), w) for i, w in enumerate(words)))


def test_the_measures_of_one_pair() -> None:
    original = _sentence(["I", "come", "here", "every", "day"])
    perturbed = _sentence(["I", "eat", "here", "every", "day"])
    so = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    sp = np.array([1.0, 9.0, 5.0, 6.0, 5.5])
    alone = {"come": 10.0, "eat": 12.0}
    got = lf.features(original, perturbed, so, sp, alone)
    assert got == {
        "whole": 11.5,
        "slor": 9.5,
        "window": 11.0,  # the changed word and the two after it
        "window-slor": 9.0,
        "after": 4.5,
        "next": 4.0,
    }
