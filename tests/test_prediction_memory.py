"""The probes' predictions on scored candidates serve the result rows without another
model call, and every chunk starts without them."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from cachetools import FIFOCache
from report_run import TASKS, TREEBANK
from test_attack import components, config

from brittle.engine.attack.chunk_search import ChunkSearch
from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.sentence import Sentence
from brittle.engine.probes import probe_eval
from brittle.engine.probes.probe_eval import ProbeEvaluator
from brittle.engine.reports.predictions import PredictingEvaluator


@pytest.fixture
def evaluator(probed_attack: Path) -> ProbeEvaluator:
    root = probed_attack.parent
    return ProbeEvaluator.from_dirs([root / f"probe-{task}" for task in TASKS])


def _count_model_calls(ev: ProbeEvaluator, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Sentences of each model call of ``ev`` from now on."""
    calls: list[int] = []
    encode = ev._encode

    def counted(words: Sequence[tuple[str, ...]]) -> list[object]:
        calls.append(len(words))
        return encode(words)  # type: ignore[return-value]

    monkeypatch.setattr(ev, "_encode", counted)
    return calls


def _same(a: list[dict], b: list[dict]) -> None:
    """The same compact predictions (depths to their two decimals' rounding)."""
    assert [set(x) for x in a] == [set(x) for x in b]
    for x, y in zip(a, b, strict=True):
        assert x["distance"] == y["distance"] and x["pos"] == y["pos"]
        deep = zip(x["depth"]["depths"], y["depth"]["depths"], strict=True)
        assert all(abs(u - v) <= 0.011 for u, v in deep)


def _score(ev: ProbeEvaluator, sentences: Sequence[Sentence]) -> None:
    ev.evaluate_many([(s, [s], [None]) for s in sentences])


@pytest.mark.needs("spacy-model", "glove")
def test_scored_sentences_are_predicted_without_a_model_call(
    evaluator: ProbeEvaluator, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert isinstance(evaluator, PredictingEvaluator)
    sentences = read_conllu(TREEBANK)[:5]
    fresh = evaluator.predictions(sentences)  # nothing scored yet: the model
    _score(evaluator, sentences[:4])
    calls = _count_model_calls(evaluator, monkeypatch)
    _same(evaluator.predictions(sentences[:4]), fresh[:4])
    assert calls == []
    # only the sentence that was not scored goes through the model
    _same(evaluator.predictions(sentences), fresh)
    assert calls == [1]
    evaluator.forget_predictions()
    _same(evaluator.predictions(sentences[:4]), fresh[:4])
    assert calls == [1, 4]


@pytest.mark.needs("spacy-model", "glove")
def test_the_oldest_predictions_go_beyond_the_byte_budget(
    evaluator: ProbeEvaluator, monkeypatch: pytest.MonkeyPatch
) -> None:
    sentences = read_conllu(TREEBANK)[:6]
    _score(evaluator, sentences[:1])
    one = evaluator._predicted.currsize
    assert one > 0
    # a budget of two sentences
    small: FIFOCache[tuple[str, ...], tuple[Any, ...]] = FIFOCache(
        one * 2, getsizeof=probe_eval._nbytes
    )
    small.update(evaluator._predicted)
    evaluator._predicted = small
    for s in sentences[1:]:
        _score(evaluator, [s])
    assert 0 < evaluator._predicted.currsize <= one * 2
    kept = list(evaluator._predicted)
    assert kept and kept[-1] == sentences[-1].forms
    assert sentences[0].forms not in kept
    calls = _count_model_calls(evaluator, monkeypatch)
    evaluator.predictions([sentences[0], sentences[-1]])
    assert calls == [1]


@pytest.mark.needs("spacy-model", "glove")
def test_an_attack_chunk_starts_without_kept_predictions(
    evaluator: ProbeEvaluator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunks of one process and of workers write the same rows: each chunk's scoring
    starts with nothing kept."""
    forgot: list[bool] = []
    monkeypatch.setattr(evaluator, "forget_predictions", lambda: forgot.append(True))
    comps = dataclasses.replace(components(), evaluator=evaluator, predictor=evaluator)
    search = ChunkSearch(config(), comps, cache_size=64, lockstep=False, quality=None)
    forgot.clear()
    search.searches(read_conllu(TREEBANK)[:2], 0)
    assert forgot == [True]


@pytest.mark.needs("spacy-model", "glove")
def test_gold_records_are_built_once_per_annotation_across_calls(
    evaluator: ProbeEvaluator, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[str] = []
    gold_of = probe_eval.gold_of

    def counted(sentence: Sentence) -> probe_eval.Gold:
        built.append(sentence.sent_id)
        return gold_of(sentence)

    monkeypatch.setattr(probe_eval, "gold_of", counted)
    evaluator._golds = FIFOCache(2)  # two annotations kept
    a, b, c = read_conllu(TREEBANK)[:3]
    first = evaluator.evaluate_many([(a, [a], [None])])
    again = evaluator.evaluate_many([(a, [a, a], [None, None])])
    assert built == [a.sent_id]  # the second call reuses the first call's record
    assert (first[0].metrics == again[0].metrics[:1]).all()
    _score(evaluator, [b, c])  # a third annotation pushes the oldest out
    _score(evaluator, [a])
    assert built == [a.sent_id, b.sent_id, c.sent_id, a.sent_id]
