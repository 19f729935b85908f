"""The ``fluency``, ``similarity`` and ``retag`` constraints, on the bundled models and
real sentences.

The labelled pairs (tests/fixtures/quality_*.conllu, ``# quality = bad|good``) are real
outputs of the generators on demo and EWT sentences ("Is this seat taken?" -> "Is this
butt led?") and plain synonym substitutions ("movie" -> "film"). Every model loads
once for the module.
"""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Sequence

import numpy as np
import pytest

from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.errors import ConfigError
from brittle.engine.core.perturbation import Perturbation, apply_perturbation
from brittle.engine.core.sentence import Sentence
from brittle.scorers.parsers import Parser, make_parser
from brittle.search.constraints import (
    CONSTRAINTS,
    DEFAULT_MAX_PER_CHANGED,
    DEFAULT_MAX_SURPRISAL_INCREASE,
    DEFAULT_MIN_SIMILARITY,
    CandidateBatch,
    ConstraintContext,
    ConstraintSpec,
    FluencyConstraint,
    PosConstraint,
    RetagConstraint,
    SimilarityConstraint,
    build_constraints,
    check_all,
    check_batches,
    surprisal_increase,
)
from brittle.search.generators.lm_causal import sentence_logprobs
from brittle.search.quality import recover_perturbation
from brittle.search.sentence_models import pair_texts, sentence_encoder, surprisal_model

from support import FIXTURES, missing_sentence_models

MISSING = missing_sentence_models()
needs_models = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))
needs_spacy = pytest.mark.needs("spacy-model")


def labelled() -> list[tuple[str, Sentence, Perturbation]]:
    """(label, original, perturbation) of every labelled pair."""
    originals = read_conllu(FIXTURES / "quality_original.conllu")
    perturbed = read_conllu(FIXTURES / "quality_perturbed.conllu")
    return [
        (o.metadata["quality"], o, recover_perturbation(o, p))
        for o, p in zip(originals, perturbed, strict=True)
    ]


def batches(pairs: Sequence[tuple[str, Sentence, Perturbation]]) -> list[CandidateBatch]:
    return [CandidateBatch.build(o, [p]) for _, o, p in pairs]


def context(parser: Parser | None = None) -> ConstraintContext:
    def no_parser() -> Parser:
        raise AssertionError("this constraint needs no parser")

    return ConstraintContext(tau=2, parser=no_parser if parser is None else (lambda: parser))


@pytest.fixture(scope="module")
def spacy() -> Parser:
    parser = make_parser("spacy")
    parser.prepare()
    return parser


# ------------------------------------------------------------------ specs
def test_registered_with_their_values() -> None:
    assert {"fluency", "similarity", "retag"} <= set(CONSTRAINTS.names())
    built = build_constraints(["fluency:1.5", "similarity:0.9"], context())
    assert isinstance(built[0], FluencyConstraint) and built[0].max_increase == 1.5
    assert isinstance(built[1], SimilarityConstraint) and built[1].min_similarity == 0.9
    bare = build_constraints(["fluency", "similarity"], context())
    assert [c.describe()["name"] for c in bare] == ["fluency", "similarity"]
    assert isinstance(bare[0], FluencyConstraint)
    assert bare[0].max_increase == DEFAULT_MAX_SURPRISAL_INCREASE
    assert isinstance(bare[1], SimilarityConstraint)
    assert bare[1].min_similarity == DEFAULT_MIN_SIMILARITY
    assert FluencyConstraint.cheap is False and SimilarityConstraint.cheap is False
    per_changed = build_constraints(["fluency:8/changed"], context())[0]
    assert isinstance(per_changed, FluencyConstraint)
    assert (per_changed.max_increase, per_changed.per) == (8.0, "changed")
    assert per_changed.describe()["unit"] == "bits per changed word"
    assert bare[0].per == "word" and bare[0].describe()["unit"] == "bits per word"
    assert math.isinf(per_changed.max_per_changed)


@pytest.mark.parametrize(
    ("spec", "bounds"),
    [
        ("fluency", (DEFAULT_MAX_SURPRISAL_INCREASE, "word", DEFAULT_MAX_PER_CHANGED)),
        ("fluency:1.5", (1.5, "word", math.inf)),
        ("fluency:8/changed", (8.0, "changed", math.inf)),
        ("fluency:0.5,10/changed", (0.5, "word", 10.0)),
        ("fluency:10/changed, 0.5", (0.5, "word", 10.0)),
    ],
)
def test_fluency_bounds_per_word_per_changed_word_or_both(
    spec: str, bounds: tuple[float, str, float]
) -> None:
    [built] = build_constraints([spec], context())
    assert isinstance(built, FluencyConstraint)
    assert (built.max_increase, built.per, built.max_per_changed) == bounds
    both = "max_increase_per_changed_word" in built.describe()
    assert both == (bounds[1] == "word" and not math.isinf(bounds[2]))


@pytest.mark.parametrize("spec", ["fluency:1,2", "fluency:1/changed,2/changed", "fluency:1,"])
def test_fluency_refuses_two_bounds_of_one_unit(spec: str) -> None:
    with pytest.raises(ConfigError, match="fluency"):
        build_constraints([spec], context())


def test_device_comes_from_the_context() -> None:
    ctx = ConstraintContext(tau=1, parser=context().parser, device="cpu")
    fluency, similarity = build_constraints(["fluency", "similarity"], ctx)
    assert isinstance(fluency, FluencyConstraint) and fluency.device == "cpu"
    assert isinstance(similarity, SimilarityConstraint) and similarity.device == "cpu"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("fluency:x", "fluency: expected a number, got 'x'"),
        ("fluency:nan", "fluency: expected a number"),
        ("fluency:-inf", "fluency: the bound must be a number above -inf"),
        ("fluency:/changed", "fluency: expected B/changed with a number B"),
        ("fluency:x/changed", "fluency: expected a number, got 'x'"),
        ("fluency:8/words", "fluency: expected a number, got '8/words'"),
        ("similarity:1.5", "similarity: the least cosine must lie in [-1, 1], got 1.5"),
        ("similarity:-2", "similarity: the least cosine must lie in [-1, 1]"),
        ("similarity:abc", "similarity: expected a number, got 'abc'"),
        ("retag:2", "retag min_rate must lie in [0, 1], got 2.0"),
        ("retag:y", "retag: expected a number, got 'y'"),
    ],
)
def test_bad_values_are_refused_before_anything_loads(spec: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        ConstraintSpec.parse(spec)
    assert message in str(err.value)


def test_building_them_loads_no_model() -> None:
    """Models load at the first check: building (and a list without them) loads nothing."""
    code = (
        "import sys\n"
        "from brittle.search.constraints import ConstraintContext, build_constraints\n"
        "ctx = ConstraintContext(tau=1, parser=lambda: None)\n"
        "build_constraints(['fluency', 'similarity:0.5', 'budget'], ctx)\n"
        "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


@pytest.mark.needs("spacy-model")
def test_retag_is_pos_against_gold_and_enforced(spacy: Parser) -> None:
    bare = build_constraints(["retag"], context(spacy))[0]
    assert isinstance(bare, RetagConstraint) and isinstance(bare, PosConstraint)
    assert bare.describe() == {
        "name": "retag",
        "parser": "spacy",
        "reference": "gold",
        "min_rate": 1.0,
        "enforce": True,
    }
    half = build_constraints(["retag:0.5"], context(spacy))[0]
    assert isinstance(half, RetagConstraint) and half.min_rate == 0.5


# ------------------------------------------------------------------ the models
@needs_models
def test_surprisal_is_bits_per_sentence_word_and_cached() -> None:
    lm = surprisal_model()
    texts = ["Is this seat taken?", "Is this butt led?"]
    nats = lm.logprobs(texts)
    bits = lm.bits_per_word(texts, [5, 5])
    assert np.allclose(bits, -nats / np.log(2) / 5)
    assert bits[1] > bits[0] > 0
    # A text scored before comes from the cache: the very same number.
    again = lm.logprobs(["Is this butt led?"])
    assert again[0] == nats[1]


@needs_models
def test_encoder_gives_unit_vectors_and_cosines() -> None:
    encoder = sentence_encoder()
    emb = encoder.embed(["Is this seat taken?", "Is this butt led?", "Is this seat taken?"])
    assert emb.shape == (3, 384) and emb.dtype == np.float32
    assert np.allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(emb[0], emb[2])
    cos = encoder.similarity(
        ["The movie was long."] * 2, ["The film was long.", "Sheep eat grass."]
    )
    assert cos[0] > 0.9 > 0.3 > cos[1]


def test_texts_keep_spacing_for_substitutions_only() -> None:
    original = read_conllu(FIXTURES / "quality_original.conllu")[0]
    sub = Perturbation(original.sent_id, "t", (2,), ("butt",))
    flip = Perturbation(original.sent_id, "t", order=(0, 2, 1, 3, 4))
    from brittle.engine.core.perturbation import apply_perturbation

    assert pair_texts(original, apply_perturbation(original, sub), sub) == (
        "Is this seat taken?",
        "Is this butt taken?",
    )
    assert pair_texts(original, apply_perturbation(original, flip), flip) == (
        "Is this seat taken ?",
        "Is seat this taken ?",
    )


# ------------------------------------------------------------------ on the labelled pairs
@needs_models
def test_fluency_rejects_the_bad_examples() -> None:
    pairs = labelled()
    bad = [p for p in pairs if p[0] == "bad"]
    results = FluencyConstraint().check_many(batches(bad))
    for (_, original, _), r in zip(bad, results, strict=True):
        assert r.values[0] > DEFAULT_MAX_SURPRISAL_INCREASE, original.text
        assert not r.mask[0] and r.rejected == 1


@needs_models
def test_fluency_keeps_the_good_examples() -> None:
    pairs = labelled()
    good = [p for p in pairs if p[0] == "good"]
    results = FluencyConstraint().check_many(batches(good))
    kept = [bool(r.mask[0]) for r in results]
    # "I'll probably begin looking next weekend." reads 0.94 bits per word worse than
    # "start looking" to the LM: the one good pair the default bound rejects.
    rejected = [o.text for (_, o, _), k in zip(good, kept, strict=True) if not k]
    assert rejected == ["I'll probably start looking next weekend."]


@needs_models
def test_fluency_per_changed_word_separates_the_labelled_pairs() -> None:
    """Per changed word the increase does not fade in long sentences: at 8 bits it
    rejects every bad pair and keeps every good one."""
    pairs = labelled()
    per_word = FluencyConstraint(max_increase=np.inf).check_many(batches(pairs))
    per_changed = FluencyConstraint(max_increase=8.0, per="changed").check_many(batches(pairs))
    for (label, original, p), w, c in zip(pairs, per_word, per_changed, strict=True):
        mean = w.values[0] * len(original) / p.size
        if p.size == 1:
            assert c.values[0] == pytest.approx(mean)
        else:  # each word alone counts too ("Is this butt led?": led alone is worse)
            assert c.values[0] >= mean - 1e-9
        assert bool(c.mask[0]) == (label == "good"), original.text
    # both bounds: kept when each holds; the values reported are the per-word ones
    both = FluencyConstraint(max_increase=0.6, max_per_changed=8.0).check_many(batches(pairs))
    for w, c, r in zip(per_word, per_changed, both, strict=True):
        assert r.values[0] == pytest.approx(w.values[0])
        assert bool(r.mask[0]) == (w.values[0] <= 0.6 and c.values[0] <= 8.0)


@needs_models
def test_similarity_keeps_the_good_and_rejects_what_changes_the_meaning() -> None:
    pairs = labelled()
    results = SimilarityConstraint().check_many(batches(pairs))
    for (label, original, _), r in zip(pairs, results, strict=True):
        assert -1.0 <= r.values[0] <= 1.0
        if label == "good":
            assert r.mask[0], original.text
    by_text = {o.text: bool(r.mask[0]) for (_, o, _), r in zip(pairs, results, strict=True)}
    assert not by_text["Is this seat taken?"]
    assert not by_text["Of course, you could just go in by main force."]


@needs_models
def test_defaults_together_reject_every_bad_example() -> None:
    pairs = labelled()
    outcomes = check_batches(batches(pairs), [FluencyConstraint(), SimilarityConstraint()])
    for (label, original, _), outcome in zip(pairs, outcomes, strict=True):
        if label == "bad":
            assert not outcome.mask[0], original.text
    assert sum(o.mask[0] for o in outcomes) == sum(label == "good" for label, *_ in pairs) - 1


@needs_models
def test_fluency_and_similarity_judge_reorderings() -> None:
    original = labelled()[0][1]  # "Is this seat taken?"
    flips = [
        Perturbation(original.sent_id, "t", order=(0, 2, 1, 3, 4)),  # Is seat this taken ?
        Perturbation(original.sent_id, "t", order=(0, 1, 2, 4, 3)),  # Is this seat ? taken
    ]
    batch = CandidateBatch.build(original, flips)
    fluency = FluencyConstraint(max_increase=0.5).check(batch)
    similarity = SimilarityConstraint(min_similarity=-1.0).check(batch)
    assert (fluency.values > 0.5).all() and not fluency.mask.any()
    assert ((similarity.values > 0.5) & (similarity.values < 1.0)).all()
    assert similarity.mask.all()


@needs_models
def test_batched_checks_equal_one_sentence_at_a_time() -> None:
    pairs = labelled()[:4]
    together = FluencyConstraint().check_many(batches(pairs))
    alone = [FluencyConstraint().check(b) for b in batches(pairs)]
    for a, b in zip(together, alone, strict=True):
        assert np.allclose(a.values, b.values, atol=1e-4)
    empty = CandidateBatch.build(pairs[0][1], [])
    assert len(FluencyConstraint().check(empty).mask) == 0
    assert len(SimilarityConstraint().check(empty).values) == 0


@needs_spacy
def test_retag_rejects_a_changed_tag_and_keeps_the_gold_one(spacy: Parser) -> None:
    s = next(o for _, o, _ in labelled() if o.text == "the service is quick.")
    batch = CandidateBatch.build(
        s,
        [
            Perturbation(s.sent_id, "t", (3,), ("quickly",)),  # ADJ -> ADV
            Perturbation(s.sent_id, "t", (3,), ("fast",)),  # stays ADJ
        ],
    )
    r = RetagConstraint(spacy).check(batch)
    assert r.name == "retag" and r.enforced
    assert r.values.tolist() == [0.0, 1.0] and r.mask.tolist() == [False, True]
    assert r.rejected == 1


@needs_spacy
def test_retag_on_moved_words(spacy: Parser) -> None:
    s = labelled()[0][1]  # Is/AUX this/DET seat/NOUN taken/VERB ?/PUNCT
    flip = Perturbation(s.sent_id, "t", order=(0, 2, 1, 3, 4))  # "this" moves, retagged PRON
    batch = CandidateBatch.build(s, [flip])
    strict = check_all(batch, [RetagConstraint(spacy)])
    assert strict.values("retag") is not None
    assert strict.mask.tolist() == [False] and strict.rejected() == {"retag": 1}
    lenient = RetagConstraint(spacy, min_rate=0.5).check(batch)
    assert lenient.values.tolist() == [0.5] and lenient.mask.tolist() == [True]


@needs_spacy
def test_retag_keeps_every_labelled_substitution(spacy: Parser) -> None:
    """The bad examples keep their tags: retag alone does not catch them (fluency and
    similarity do)."""
    outcomes = check_batches(batches(labelled()), [RetagConstraint(spacy)])
    assert all(o.mask.all() for o in outcomes)


@needs_models
def test_per_changed_word_counts_each_word_of_a_substitution_alone() -> None:
    """A harmless change cannot hide a bad one: "nearly" beside "dark" for "night"."""
    [train] = [o for _, o, _ in labelled() if "spend the night" in o.text]
    almost, night = train.forms.index("almost"), train.forms.index("night")
    both = Perturbation(train.sent_id, "copos", (almost, night), ("nearly", "dark"))
    alone = [
        Perturbation(train.sent_id, "copos", (almost,), ("nearly",)),
        Perturbation(train.sent_id, "copos", (night,), ("dark",)),
    ]
    n = len(train)
    [word] = surprisal_increase([CandidateBatch.build(train, [both])])
    [changed] = surprisal_increase([CandidateBatch.build(train, [both])], per="changed")
    [singles] = surprisal_increase([CandidateBatch.build(train, alone)])
    expected = max(word[0] * n / 2, *(singles * n))
    assert changed[0] == pytest.approx(expected)
    assert changed[0] == pytest.approx(singles[1] * n)  # "dark" alone is the worse
    # the bare constraint rejects the pair, as it rejects "dark" alone
    [result] = FluencyConstraint().check_many([CandidateBatch.build(train, [both])])
    assert not result.mask[0] and result.values[0] == pytest.approx(word[0])


@needs_models
def test_fluency_of_candidates_sharing_their_start_equals_whole_sentences() -> None:
    """Candidates changed from the same word on are scored with their shared start run
    once; the values are those of each whole sentence scored on its own."""
    [train] = [o for _, o, _ in labelled() if "spend the night" in o.text]
    almost, night = train.forms.index("almost"), train.forms.index("night")
    sid = train.sent_id
    candidates = [
        Perturbation(sid, "t", (almost,), ("nearly",)),
        Perturbation(sid, "t", (almost,), ("about",)),
        Perturbation(sid, "t", (almost, night), ("nearly", "dark")),
        Perturbation(sid, "t", (night,), ("evening",)),
        Perturbation(sid, "t", (night,), ("day",)),
    ]
    surprisal_model().forget()
    [values] = surprisal_increase([CandidateBatch.build(train, candidates)])
    texts = [apply_perturbation(train, p).surface_text() for p in candidates]
    whole = sentence_logprobs(surprisal_model().lm, [train.surface_text(), *texts])
    expected = -(whole[1:] - whole[0]) / math.log(2.0) / len(train)
    assert values == pytest.approx(expected, abs=1e-4)
