"""The quality of (original, perturbed) pairs: in memory, and from saved CoNLL-U files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from needs import require

from brittle.engine.core.conllu import read_conllu, write_conllu
from brittle.engine.core.errors import BrittleInputError
from brittle.engine.core.perturbation import Perturbation, apply_perturbation
from brittle.scorers.parsers import Parser, make_parser
from brittle.search.constraints import CandidateBatch, FluencyConstraint, SimilarityConstraint
from brittle.search.quality import (
    PairQuality,
    QualityMeter,
    quality_of_files,
    recover_perturbation,
    summarize_quality,
)

from support import FIXTURES, missing_sentence_models

ORIGINAL = FIXTURES / "quality_original.conllu"
PERTURBED = FIXTURES / "quality_perturbed.conllu"


MISSING = missing_sentence_models()
needs_models = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))


@pytest.fixture(scope="module")
def spacy() -> Parser:
    require("spacy-model")
    parser = make_parser("spacy")
    parser.prepare()
    return parser


# ------------------------------------------------------------------ recovering perturbations
def test_recover_a_substitution_from_the_misc_marks() -> None:
    original = read_conllu(ORIGINAL)[0]
    perturbed = read_conllu(PERTURBED)[0]
    p = recover_perturbation(original, perturbed)
    assert p == Perturbation(original.sent_id, "copos", (2, 3), ("butt", "led"), ("_", "_"))
    assert recover_perturbation(original, original).is_identity


def test_recover_a_reordering_from_orig_position() -> None:
    original = read_conllu(ORIGINAL)[0]
    flip = Perturbation(original.sent_id, "neighbour-flip", order=(0, 2, 1, 3, 4))
    moved = apply_perturbation(original, flip)
    assert recover_perturbation(original, moved) == flip


def test_recover_refuses_what_does_not_fit() -> None:
    first, second = read_conllu(ORIGINAL)[:2]
    with pytest.raises(ValueError, match="5 words, but 29"):
        recover_perturbation(first, second)
    flip = Perturbation(first.sent_id, "t", order=(0, 2, 1, 3, 4))
    moved = apply_perturbation(first, flip)
    tampered = moved.with_words({1: moved.words[1].with_misc(OrigPosition="9")})
    with pytest.raises(ValueError, match="not a reordering"):
        recover_perturbation(first, tampered)


# ------------------------------------------------------------------ summaries
def test_summary_pools_retag_over_words_and_averages_the_rest() -> None:
    pairs = [
        PairQuality(1.0, 0.9, 2, retag_kept=1),
        PairQuality(3.0, 0.7, 1, retag_kept=1),
        PairQuality(2.0, 0.8, 4, dnd=0.5, idc=0.25),
    ]
    s = summarize_quality(pairs)
    assert s.pairs == 3
    assert s.mean_surprisal_increase == pytest.approx(2.0)
    assert s.mean_similarity == pytest.approx(0.8)
    assert s.retag_agreement == pytest.approx(2 / 3) and s.words_retagged == 3
    assert s.mean_words_changed == pytest.approx(7 / 3)
    assert s.mean_dnd == 0.5 and s.mean_idc == 0.25
    assert pairs[0].retag == 0.5 and pairs[2].retag is None
    empty = summarize_quality([])
    assert empty.pairs == 0 and empty.mean_similarity is None and empty.retag_agreement is None
    assert set(s.to_json()) == {
        "pairs",
        "mean_surprisal_increase",
        "mean_similarity",
        "retag_agreement",
        "words_retagged",
        "mean_words_changed",
        "mean_dnd",
        "mean_idc",
    }


# ------------------------------------------------------------------ measuring
@needs_models
def test_meter_measures_what_the_constraints_measure(spacy: Parser) -> None:
    originals = read_conllu(ORIGINAL)[:3]
    perturbed = read_conllu(PERTURBED)[:3]
    measured = QualityMeter(parser=spacy).measure(originals, perturbed)
    batches = [
        CandidateBatch.build(o, [recover_perturbation(o, p)])
        for o, p in zip(originals, perturbed, strict=True)
    ]
    fluency = FluencyConstraint().check_many(batches)
    similarity = SimilarityConstraint().check_many(batches)
    for q, f, s in zip(measured, fluency, similarity, strict=True):
        assert q.surprisal_increase == pytest.approx(float(f.values[0]), abs=1e-6)
        assert q.similarity == pytest.approx(float(s.values[0]), abs=1e-6)
    assert [q.words_changed for q in measured] == [2, 1, 1]
    assert [q.retag for q in measured] == [1.0, 1.0, 1.0]
    assert measured[0].surprisal_increase > 2.0 and measured[0].similarity < 0.5


@needs_models
def test_meter_on_unchanged_pairs_and_reorderings() -> None:
    original = read_conllu(ORIGINAL)[0]
    flip = Perturbation(original.sent_id, "t", order=(0, 2, 1, 3, 4))
    same, moved = QualityMeter().measure(
        [original, original], [original, apply_perturbation(original, flip)]
    )
    assert same == PairQuality(0.0, 1.0, 0)
    assert moved.words_changed == 2 and moved.retag is None
    assert moved.dnd is not None and moved.idc is not None and moved.dnd > 0
    assert moved.surprisal_increase > 0 and moved.similarity < 1.0
    with pytest.raises(ValueError, match="2 originals but 1 perturbed"):
        QualityMeter().measure([original, original], [original])


@needs_models
def test_quality_of_files_pairs_sentences_by_id(tmp_path: Path, spacy: Parser) -> None:
    # The perturbed file in another order, with one sentence left unchanged.
    perturbed = read_conllu(PERTURBED)
    originals = read_conllu(ORIGINAL)
    shuffled = [*reversed(perturbed[1:]), originals[0]]
    path = tmp_path / "perturbed.conllu"
    write_conllu(shuffled, path)
    found = quality_of_files(ORIGINAL, path, meter=QualityMeter(parser=spacy))
    assert [s.sent_id for s in found.sentences] == [s.sent_id for s in shuffled]
    assert found.changed == len(perturbed) - 1 == found.summary.pairs
    assert found.sentences[-1].quality is None
    direct = QualityMeter(parser=spacy).measure(originals[1:], perturbed[1:])
    by_id = {s.sent_id: s.quality for s in found.sentences}
    for o, q in zip(originals[1:], direct, strict=True):
        got = by_id[o.sent_id]
        assert got is not None
        assert got.surprisal_increase == pytest.approx(q.surprisal_increase, abs=1e-6)
        assert got.similarity == pytest.approx(q.similarity, abs=1e-6)
    expected = summarize_quality(direct)
    assert found.summary.retag_agreement == expected.retag_agreement
    assert np.isclose(
        found.summary.mean_surprisal_increase or 0.0, expected.mean_surprisal_increase or 1.0
    )
    data = found.to_json()
    assert data["sentences"] == len(shuffled) and data["changed"] == len(perturbed) - 1
    rows = data["per_sentence"]
    assert isinstance(rows, list) and rows[-1] == {
        "sent_id": originals[0].sent_id,
        "changed": False,
    }


def test_quality_of_files_refuses_unknown_sentences(tmp_path: Path) -> None:
    stray = read_conllu(FIXTURES / "mwt_empty.conllu")[:1]
    path = tmp_path / "stray.conllu"
    write_conllu(stray, path)
    with pytest.raises(BrittleInputError, match=f"sentence '{stray[0].sent_id}' is not in"):
        quality_of_files(ORIGINAL, path)
