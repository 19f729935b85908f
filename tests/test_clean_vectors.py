"""The clean sentence's vectors an attack measures its candidates against are kept by
the sentence's words, never by its ID: two sentences that share a ``sent_id`` (built in
memory; the reader refuses such a file) each get their own distances."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from cachetools import FIFOCache
from numpy.typing import NDArray

from brittle.engine.core.sentence import Sentence, Token
from brittle.engine.probes import probe_eval
from brittle.engine.probes.probe_eval import ProbeEvaluator


def sentence(sent_id: str, words: Sequence[str]) -> Sentence:
    n = len(words)
    rows = tuple(
        Token(str(i + 1), w, w, "X", "_", "_", "0" if i == 0 else "1", "dep" if i else "root")
        for i, w in enumerate(words)
    )
    assert len(rows) == n
    return Sentence(sent_id, (f"# sent_id = {sent_id}",), rows)


def vector(word: str) -> NDArray[np.float32]:
    """A word's stand-in vector, shape (3,): different words, different vectors."""
    codes = [ord(c) for c in word]
    return np.array([len(word), sum(codes), max(codes)], dtype=np.float32)


class Encoded(list[tuple[str, ...]]):
    """What the stand-in encoder returns: the word lists it was given."""


def evaluator(monkeypatch: pytest.MonkeyPatch) -> tuple[ProbeEvaluator, list[int]]:
    """A ProbeEvaluator whose model is a word-to-vector table; and the sizes of its calls."""
    ev = ProbeEvaluator.__new__(ProbeEvaluator)
    ev._originals = FIFOCache(probe_eval._ORIGINALS_KEPT)
    calls: list[int] = []

    def encode(words: Sequence[tuple[str, ...]]) -> list[Encoded]:
        calls.append(len(words))
        return [Encoded(words)]

    def first_layer(reps: list[Encoded], i: int) -> NDArray[np.float32]:
        return np.stack([vector(w) for w in reps[0][i]])

    monkeypatch.setattr(ev, "_encode", encode)
    monkeypatch.setattr(ev, "_first_layer", first_layer)
    return ev, calls


def distances(ev: ProbeEvaluator, original: Sentence, candidates: list[Sentence]) -> list[float]:
    words = [c.forms for c in candidates]
    reps = ev._encode(words)
    l2, _ = ev._distances(original, reps, words, range(len(words)), [None] * len(words))
    return l2.tolist()


@pytest.mark.parametrize(
    "second",
    [("dogs", "bark", "loudly"), ("dogs", "bark")],
    ids=["same length", "other length"],
)
def test_two_sentences_with_one_id_get_their_own_distances(
    monkeypatch: pytest.MonkeyPatch, second: tuple[str, ...]
) -> None:
    a = sentence("dup", ("the", "cat", "sleeps"))
    b = sentence("dup", second)
    a_cands = [sentence("dup", ("the", "dog", "sleeps"))]
    b_cands = [sentence("dup", ("cats", *second[1:]))]
    shared, _ = evaluator(monkeypatch)
    got = [distances(shared, a, a_cands), distances(shared, b, b_cands)]
    alone_a, _ = evaluator(monkeypatch)
    alone_b, _ = evaluator(monkeypatch)
    assert got == [distances(alone_a, a, a_cands), distances(alone_b, b, b_cands)]
    assert got[1][0] > 0


def test_the_clean_vectors_are_reused_for_the_same_words(monkeypatch: pytest.MonkeyPatch) -> None:
    ev, calls = evaluator(monkeypatch)
    a = sentence("s1", ("the", "cat", "sleeps"))
    cands = [sentence("s1", ("the", "dog", "sleeps"))]
    first = distances(ev, a, cands)
    assert calls == [1, 1]  # the candidates, then the clean sentence (not in the batch)
    again = sentence("renamed", a.forms)
    assert distances(ev, again, cands) == first
    assert calls == [1, 1, 1]  # only the candidates this time
