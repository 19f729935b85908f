"""coPOS offers the synonyms of the sense a word has in its sentence (real WordNet and
the bundled sentence encoder, on the demo treebank's own sentences)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from test_generators_helpers import wordnet_or_skip

from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.errors import ConfigError
from brittle.engine.core.sentence import Sentence
from brittle.search.generators import CoPOS
from brittle.search.generators.sense import Sense, SenseChoice, choose_senses, confirmed
from brittle.search.sentence_models import sentence_encoder

DEFAULT = Path(__file__).resolve().parents[1] / "data" / "default.conllu"


@pytest.fixture(scope="module")
def wordnet() -> Any:
    return wordnet_or_skip()


@pytest.fixture(scope="module")
def sentences() -> dict[str, Sentence]:
    return {s.surface_text(): s for s in read_conllu(DEFAULT)}


def options(generator: CoPOS, sentence: Sentence, form: str) -> list[str]:
    table = generator.candidates([sentence])[0]
    return [f.lower() for f, _ in table.options(sentence.forms.index(form))]


SEAT = "Is this seat taken?"
DECADE = (
    "Rents in the city center have doubled over the past decade, "
    "while salaries have barely changed."
)
CATS = "I've never understood why cats sleep so much."


@pytest.mark.needs("glove")
def test_sense_modes_differ_as_documented(wordnet: Any, sentences: dict[str, Sentence]) -> None:
    seat = sentences[SEAT]

    def pool(**settings: Any) -> CoPOS:
        return CoPOS(wordnet=wordnet, top_k=50, max_substitute_senses=0, **settings)

    every = options(pool(sense="all", min_count=0), seat, "seat")
    first = options(pool(sense="first"), seat, "seat")
    context = options(pool(), seat, "seat")
    assert "butt" in every and "place" in every
    assert first == ["place"]  # seat.n.01: seat, place
    assert context == ["place"]
    # by default no synonym of 16 senses is offered, whatever its sense: not even place
    assert options(CoPOS(wordnet=wordnet, top_k=50), seat, "seat") == []


#: coPOS options that turn off the checks on a synonym's use (frames, SemCor share,
#: rarity, countability), which would hide some wrong senses on their own.
WITHOUT_USAGE_RULES: dict[str, Any] = {
    "substitute_frames": False,
    "min_relative_count": 0,
    "max_rarity": 0,
    "count_nouns": False,
}


@pytest.mark.needs("glove")
@pytest.mark.parametrize(
    ("text", "form", "wrong"),
    [
        (SEAT, "seat", {"butt", "bum", "backside", "rear"}),
        (DECADE, "decade", {"tenner", "ten"}),
        (CATS, "cats", {"guys", "hombres", "bozos"}),
        ("I wonder whether the shop is still open at this hour.", "wonder", {"marvel"}),
    ],
)
def test_context_drops_wrong_senses(
    wordnet: Any, sentences: dict[str, Sentence], text: str, form: str, wrong: set[str]
) -> None:
    found = options(CoPOS(wordnet=wordnet, top_k=50), sentences[text], form)
    assert not wrong & set(found), found
    every = CoPOS(wordnet=wordnet, sense="all", min_count=0, top_k=50, **WITHOUT_USAGE_RULES)
    assert wrong & set(options(every, sentences[text], form))


def test_choose_senses_scores_glosses_and_priors() -> None:
    encoder = sentence_encoder()
    chair = Sense(
        "seat.n.01", "a space reserved for sitting (as in a theater or on a train)", ("place",), 9
    )
    body = Sense("buttocks.n.01", "the fleshy part of the human body that you sit on", ("butt",), 1)
    [kept] = choose_senses([SEAT], [(body, chair)], encoder, margin=0.0, prior_weight=0.05)
    assert kept.senses == (chair,) and kept.sure
    [both] = choose_senses([SEAT], [(body, chair)], encoder, margin=2.0, prior_weight=0.05)
    assert both.senses == (chair, body)  # best first
    # A prior strong enough overrides the glosses.
    [prior] = choose_senses([SEAT], [(body, chair)], encoder, margin=0.0, prior_weight=-50.0)
    assert prior.senses == (body,)
    assert choose_senses([SEAT], [()], encoder, margin=0.0, prior_weight=0.05) == [SenseChoice(())]


def test_min_lead_marks_unsure_when_the_best_sense_is_not_clearly_ahead() -> None:
    encoder = sentence_encoder()
    chair = Sense(
        "seat.n.01", "a space reserved for sitting (as in a theater or on a train)", ("place",), 9
    )
    body = Sense("buttocks.n.01", "the fleshy part of the human body that you sit on", ("butt",), 1)
    emb = encoder.embed([SEAT, chair.gloss, body.gloss]).astype(float)
    counts = [10.0, 2.0]
    lead = float(emb[1] @ emb[0] - emb[2] @ emb[0]) + 0.05 * math.log(counts[0] / counts[1])
    assert lead > 0
    [sure] = choose_senses(
        [SEAT], [(body, chair)], encoder, margin=0.0, prior_weight=0.05, min_lead=lead * 0.9
    )
    assert sure == SenseChoice((chair,), sure=True)
    [unsure] = choose_senses(
        [SEAT], [(body, chair)], encoder, margin=0.0, prior_weight=0.05, min_lead=lead * 1.1
    )
    assert unsure == SenseChoice((chair,), sure=False)  # its best sense only
    assert sure.lead == pytest.approx(lead) and unsure.lead == pytest.approx(lead)
    # one sense: nothing to be unsure between
    [alone] = choose_senses([SEAT], [(chair,)], encoder, margin=0.0, prior_weight=0.05, min_lead=9)
    assert alone == SenseChoice((chair,))


OVEN = "The cake smells delicious, but it needs ten more minutes in the oven."


@pytest.mark.needs("glove")
def test_confirm_offers_an_unsure_word_only_synonyms_read_in_its_sense(
    wordnet: Any, sentences: dict[str, Sentence]
) -> None:
    # *needs* is unsure between necessitate.v.01 and its other senses; of its best
    # sense's synonyms, *requires* reads as necessitate.v.01 in the new sentence, its
    # commonest sense; *involves* reads as involve.v.01 ("contain as a part").
    sentence = sentences[OVEN]
    assert not CoPOS(wordnet=wordnet).confirm  # off by default: the unsure word stays
    assert options(CoPOS(wordnet=wordnet), sentence, "needs") == []
    confirmed_options = options(CoPOS(wordnet=wordnet, confirm=True), sentence, "needs")
    assert "requires" in confirmed_options
    assert "involves" not in confirmed_options
    assert "demands" not in confirmed_options  # demand.v.01, "request urgently", comes first
    # taken as sure, the word offers every synonym of that sense
    assert "involves" in options(CoPOS(wordnet=wordnet, min_lead=0.0), sentence, "needs")
    # senses that tie say nothing: below min_confirm_lead the unsure word stays
    [choice] = choose_senses(
        [OVEN],
        [CoPOS(wordnet=wordnet).senses("need", "v")],
        sentence_encoder(),
        margin=0.0,
        prior_weight=0.05,
        min_lead=0.1,
    )
    assert 0 < choice.lead < 0.1
    tied = CoPOS(wordnet=wordnet, confirm=True, min_confirm_lead=choice.lead * 1.01)
    assert options(tied, sentence, "needs") == []
    near = CoPOS(wordnet=wordnet, confirm=True, min_confirm_lead=choice.lead * 0.99)
    assert "requires" in options(near, sentence, "needs")


def test_confirmed_scores_the_substitute_s_own_senses(wordnet: Any) -> None:
    copos = CoPOS(wordnet=wordnet)
    encoder = sentence_encoder()
    texts = [OVEN.replace("needs", w) for w in ("requires", "involves", "demands")]
    own = [copos.senses(lemma, "v") for lemma in ("require", "involve", "demand")]
    verdicts = confirmed(texts, ["necessitate.v.01"] * 3, own, encoder, prior_weight=0.05)
    assert verdicts == [True, False, False]
    # a substitute without the offered sense is never confirmed
    assert confirmed(texts[:1], ["involve.v.01"], own[:1], encoder, prior_weight=0.05) == [False]
    assert confirmed([], [], [], encoder, prior_weight=0.05) == []


def test_margin_must_not_be_negative(wordnet: Any) -> None:
    with pytest.raises(ValueError, match="margin"):
        CoPOS(wordnet=wordnet, margin=-0.1)
    with pytest.raises(ValueError, match="min_lead"):
        CoPOS(wordnet=wordnet, min_lead=-0.1)
    with pytest.raises(ValueError, match="min_confirm_lead"):
        CoPOS(wordnet=wordnet, min_confirm_lead=-0.1)


def test_min_count_drops_synonyms_semcor_never_tagged_with_the_sense(wordnet: Any) -> None:
    every = CoPOS(wordnet=wordnet, sense="all", min_count=0)
    common = CoPOS(wordnet=wordnet, sense="all")
    assert common.min_count == 1
    for lemma, pos, rare in [("know", "v", "cognize"), ("neck", "n", "cervix")]:
        assert rare in every.synonyms(lemma, pos)
        assert rare not in common.synonyms(lemma, pos)
    # A common synonym in the sense SemCor counts stays.
    assert "really" in common.synonyms("actually", "r")
    stricter = CoPOS(wordnet=wordnet, sense="all", min_count=40)
    assert set(stricter.synonyms("actually", "r")) <= set(common.synonyms("actually", "r"))
    assert "really" in stricter.synonyms("actually", "r")  # tagged 42 times


@pytest.mark.needs("glove")
def test_max_senses_leaves_the_most_polysemous_words_alone(
    wordnet: Any, sentences: dict[str, Sentence]
) -> None:
    sentence = sentences[CATS]
    assert len(CoPOS(wordnet=wordnet).senses("understand", "v")) == 5
    for sense in ("all", "context"):
        capped = CoPOS(wordnet=wordnet, sense=sense, max_senses=4, top_k=50)  # type: ignore[arg-type]
        assert options(capped, sentence, "understood") == []
    assert options(
        CoPOS(wordnet=wordnet, sense="all", max_senses=5, top_k=50), sentence, "understood"
    )
    assert options(
        CoPOS(wordnet=wordnet, sense="all", max_senses=0, top_k=50), sentence, "understood"
    )
    assert CoPOS(wordnet=wordnet).max_senses == 12


def test_filters_must_not_be_negative(wordnet: Any) -> None:
    with pytest.raises(ValueError, match="min_count"):
        CoPOS(wordnet=wordnet, min_count=-1)
    with pytest.raises(ValueError, match="max_senses"):
        CoPOS(wordnet=wordnet, max_senses=-1)


class _Uncounted:
    """A WordNet whose copy has no SemCor counts."""

    class _Lemma:
        def count(self) -> int:
            raise OSError("no cntlist.rev")

    def lemma(self, name: str) -> _Lemma:
        return self._Lemma()

    def synsets(self, lemma: str, pos: str) -> list[Any]:
        return []


def test_min_count_needs_semcor_counts() -> None:
    with pytest.raises(ConfigError, match="min_count=0"):
        CoPOS(wordnet=_Uncounted()).senses("seat", "n")  # type: ignore[arg-type]
    assert CoPOS(wordnet=_Uncounted(), min_count=0).senses("seat", "n") == ()  # type: ignore[arg-type]
