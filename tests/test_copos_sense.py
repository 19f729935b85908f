"""coPOS offers the synonyms of the sense a word has in its sentence (real WordNet and
the bundled sentence encoder, on the demo treebank's own sentences)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_generators_helpers import wordnet_or_skip

from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.sentence import Sentence
from brittle.search.generators import CoPOS
from brittle.search.generators.sense import Sense, choose_senses
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


def test_sense_modes_differ_as_documented(wordnet: Any, sentences: dict[str, Sentence]) -> None:
    seat = sentences[SEAT]
    every = options(CoPOS(wordnet=wordnet, sense="all", top_k=50), seat, "seat")
    first = options(CoPOS(wordnet=wordnet, sense="first", top_k=50), seat, "seat")
    context = options(CoPOS(wordnet=wordnet, top_k=50), seat, "seat")
    assert "butt" in every and "place" in every
    assert first == ["place"]  # seat.n.01: seat, place
    assert context == ["place"]


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
    assert wrong & set(
        options(CoPOS(wordnet=wordnet, sense="all", top_k=50), sentences[text], form)
    )


def test_choose_senses_scores_glosses_and_priors() -> None:
    encoder = sentence_encoder()
    chair = Sense(
        "seat.n.01", "a space reserved for sitting (as in a theater or on a train)", ("place",), 9
    )
    body = Sense("buttocks.n.01", "the fleshy part of the human body that you sit on", ("butt",), 1)
    [kept] = choose_senses([SEAT], [(body, chair)], encoder, margin=0.0, prior_weight=0.05)
    assert kept == (chair,)
    [both] = choose_senses([SEAT], [(body, chair)], encoder, margin=2.0, prior_weight=0.05)
    assert both == (chair, body)  # best first
    # A prior strong enough overrides the glosses.
    [prior] = choose_senses([SEAT], [(body, chair)], encoder, margin=0.0, prior_weight=-50.0)
    assert prior == (body,)
    assert choose_senses([SEAT], [()], encoder, margin=0.0, prior_weight=0.05) == [()]


def test_margin_must_not_be_negative(wordnet: Any) -> None:
    with pytest.raises(ValueError, match="margin"):
        CoPOS(wordnet=wordnet, margin=-0.1)
