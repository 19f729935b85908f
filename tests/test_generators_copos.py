"""coPOS: WordNet same-POS synonyms, inflected and cased like the original; inflection helpers."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest
from test_generators_helpers import CATS, glove_or_skip, make_sentence, wordnet_or_skip

from brittle.engine.core.sentence import Sentence
from brittle.search.generators import CoPOS, Eligibility
from brittle.search.generators.inflection import (
    inflect_lemma,
    match_case,
    regular_inflection,
    target_tag,
)
from brittle.search.generators.options import parse_options
from brittle.search.generators.usage import bare_idiom, count_use, is_countable


@pytest.fixture(scope="module")
def wordnet() -> Any:
    return wordnet_or_skip()


@pytest.fixture(scope="module")
def copos(wordnet: Any) -> CoPOS:
    # every lemma of every sense: no SemCor, rarity or countability filter
    return CoPOS(
        wordnet=wordnet,
        top_k=50,
        sense="all",
        min_count=0,
        max_senses=0,
        min_relative_count=0,
        max_rarity=0,
        count_nouns=False,
    )


@pytest.mark.parametrize(
    ("upos", "xpos", "feats", "tag"),
    [
        ("NOUN", "NNS", {}, "NNS"),
        ("NOUN", "_", {"Number": "Plur"}, "NNS"),
        ("NOUN", "NOUN", {"Number": "Sing"}, "NN"),
        ("VERB", "_", {"VerbForm": "Fin", "Tense": "Past"}, "VBD"),
        ("VERB", "_", {"VerbForm": "Fin", "Tense": "Pres", "Person": "3", "Number": "Sing"}, "VBZ"),
        ("VERB", "_", {"VerbForm": "Fin", "Tense": "Pres"}, "VBP"),
        ("VERB", "_", {"VerbForm": "Ger"}, "VBG"),
        ("VERB", "_", {"VerbForm": "Part", "Tense": "Pres"}, "VBG"),
        ("VERB", "_", {"VerbForm": "Part", "Tense": "Past"}, "VBN"),
        ("VERB", "_", {"VerbForm": "Inf"}, "VB"),
        ("ADJ", "_", {"Degree": "Cmp"}, "JJR"),
        ("ADJ", "VBN", {}, "JJ"),  # XPOS of another word class is ignored
        ("ADV", "_", {"Degree": "Sup"}, "RBS"),
        ("PRON", "PRP", {}, None),
    ],
)
def test_target_tag(upos: str, xpos: str, feats: dict[str, str], tag: str | None) -> None:
    assert target_tag(upos, xpos, feats) == tag


def test_match_case() -> None:
    assert match_case("Dogs", "cats") == "Cats"
    assert match_case("DOGS", "cats") == "CATS"
    assert match_case("dogs", "Cats") == "cats"
    assert match_case("A", "big") == "Big"


def test_inflect_lemma_uses_the_lexicon_and_refuses_invented_degrees() -> None:
    assert inflect_lemma("child", "NNS") == "children"
    assert inflect_lemma("go", "VBN") == "gone"
    assert inflect_lemma("large", "JJR") == "larger"
    assert inflect_lemma("good", "JJS") == "best"
    assert inflect_lemma("important", "JJR") is None
    assert inflect_lemma("run", "VB") == "run"


@pytest.mark.parametrize(
    ("stem", "tag", "form"),
    [
        ("blick", "NNS", "blicks"),
        ("florb", "NN", "florb"),
        ("glass", "NNS", "glasses"),
        ("zatch", "NNS", "zatches"),
        ("blurry", "NNS", "blurries"),
        ("dray", "NNS", "drays"),
        ("wug", "VBZ", "wugs"),
        ("fizz", "VBZ", "fizzes"),
        ("blip", "VBG", "blipping"),
        ("snare", "VBG", "snaring"),
        ("flee", "VBG", "fleeing"),
        ("tie", "VBG", "tying"),
        ("gorvit", "VBG", "gorviting"),
        ("blip", "VBD", "blipped"),
        ("snare", "VBN", "snared"),
        ("fry", "VBD", "fried"),
        ("glow", "VBD", "glowed"),
        ("wug", "VB", "wug"),
        ("wug", "VBP", "wug"),
        ("blat", "JJR", "blatter"),
        ("brane", "JJS", "branest"),
        ("flimpy", "JJR", "flimpier"),
        ("zorp", "RBR", "zorper"),
        ("zorp", "RBS", "zorpest"),
        ("zorp", "RB", "zorp"),
    ],
)
def test_regular_inflection(stem: str, tag: str, form: str) -> None:
    assert regular_inflection(stem, tag) == form


def _opts(copos: CoPOS, sentence_spec: str, position: int) -> list[tuple[str, str]]:
    s = make_sentence("s", sentence_spec)
    (t,) = copos.candidates([s])
    return list(t.options(position))


def test_plural_nouns_get_plural_synonyms(copos: CoPOS, wordnet: Any) -> None:
    opts = _opts(copos, CATS, 5)  # dogs
    assert opts, "dog has synonyms in WordNet"
    forms = [f for f, _ in opts]
    lemmas = [lem for _, lem in opts]
    assert "dogs" not in forms
    for form, lemma in opts:
        assert form == inflect_lemma(lemma, "NNS")
    synonyms = {n for syn in wordnet.synsets("dog", pos="n") for n in syn.lemma_names()}
    assert set(lemmas) <= synonyms
    assert "domestic_dog" not in lemmas  # multiword lemmas skipped by default


def test_past_tense_verbs_get_past_tense_synonyms(copos: CoPOS) -> None:
    opts = _opts(copos, CATS, 2)  # chased
    assert opts
    for form, lemma in opts:
        assert form == inflect_lemma(lemma, "VBD")
    assert ("trailed", "trail") in opts and ("dogged", "dog") in opts


def test_comparatives_get_one_word_comparatives(copos: CoPOS) -> None:
    opts = _opts(copos, CATS, 4)  # bigger
    assert ("larger", "large") in opts
    for form, lemma in opts:
        assert form == inflect_lemma(lemma, "JJR")
        assert " " not in form and not form.startswith("more")


def test_capitalisation_is_kept(copos: CoPOS) -> None:
    spec = CATS.replace("1 The the", "1 THE the").replace("2 cats cat", "2 Cats cat")
    spec = spec.replace("6 dogs dog", "6 DOGS dog")
    s = make_sentence("s", spec)
    (t,) = copos.candidates([s])
    assert all(f[0].isupper() and f[1:].islower() for f, _ in t.options(1))
    assert all(f.isupper() for f, _ in t.options(5))


def test_synonyms_share_the_wordnet_pos(copos: CoPOS, wordnet: Any) -> None:
    s = make_sentence("s", CATS)
    (t,) = copos.candidates([s])
    pos_of = {"NOUN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}
    for i, opts in t:
        upos, lemma = s.upos[i], s.lemmas[i]
        allowed = {
            n.lower() for syn in wordnet.synsets(lemma, pos=pos_of[upos]) for n in syn.lemma_names()
        }
        for _form, syn_lemma in opts:
            assert syn_lemma in allowed
            assert syn_lemma != lemma


def test_options_exclude_the_original_and_are_distinct(copos: CoPOS) -> None:
    s = make_sentence("s", CATS)
    (t,) = copos.candidates([s], top_k=3)
    for i, opts in t:
        forms = [f.lower() for f, _ in opts]
        assert s.forms[i].lower() not in forms
        assert len(forms) == len(set(forms)) <= 3
        assert i in Eligibility().positions(s)


@pytest.mark.needs("glove")
def test_multiword_option_hyphenates(wordnet: Any) -> None:
    gen = CoPOS(
        wordnet=wordnet,
        multiword="hyphen",
        top_k=50,
        sense="all",
        min_count=0,
        min_relative_count=0,
        max_rarity=0,
    )
    lemmas = [lem for _, lem in _opts(gen, CATS, 5)]
    assert "domestic-dog" in lemmas


def test_sense_lookups_are_cached(copos: CoPOS) -> None:
    first = copos.senses("dog", "n")
    assert copos.senses("DOG", "n") is first
    assert first[0].name == "dog.n.01" and first[0].count > 0
    assert first[0].gloss.startswith("a member of the genus Canis")
    assert first[0].gloss.endswith("; the dog barked all night")  # definition; examples
    assert copos.synonyms("dog", "n", first_sense=True) == first[0].synonyms


def test_perturb_is_deterministic_and_within_budget(copos: CoPOS) -> None:
    s = make_sentence("s", CATS)
    a = copos.perturb([s], b=5, seed=3, tau=2)[0]
    b = copos.perturb([s], b=5, seed=3, tau=2)[0]
    assert a == b and len(a) == 5
    assert all(len(p.positions) == 2 and p.method == "copos" for p in a)


def test_a_word_listed_twice_ranks_at_its_first_row(monkeypatch: pytest.MonkeyPatch) -> None:
    from brittle.search.generators import vocabulary

    words = ("the", "of", "cat", "of", "dog", "cat")
    monkeypatch.setattr(vocabulary, "glove", lambda: (words, None))
    vocabulary._ranks.cache_clear()
    try:
        assert vocabulary._ranks() == {"the": 0, "of": 1, "cat": 2, "dog": 4}
    finally:
        vocabulary._ranks.cache_clear()


def test_max_rank_keeps_only_common_synonyms() -> None:
    from brittle.search.generators.vocabulary import frequency_rank

    glove_or_skip()
    withal = frequency_rank("withal")
    assert frequency_rank("the") == 0 and withal is not None and withal > 200_000
    assert frequency_rank("cognize") is None
    synonyms = ["withal", "nevertheless", "notwithstanding", "still", "cognize"]
    however = make_sentence("however", "1 However however ADV RB _ 0 root")
    every = CoPOS(sense="all", max_rarity=0)._options(however, 0, synonyms)
    common = CoPOS(sense="all", max_rank=50_000, max_rarity=0)._options(however, 0, synonyms)
    assert [f for f, _ in every] == [
        "Withal",
        "Nevertheless",
        "Notwithstanding",
        "Still",
        "Cognize",
    ]
    assert [f for f, _ in common] == ["Nevertheless", "Notwithstanding", "Still"]
    # the inflected form is what must be common: "postured" is rare, "posed" is not
    sat = make_sentence("sat", "1 sat sit VERB VBD Tense=Past 0 root")
    forms = CoPOS(sense="all", max_rank=50_000, max_rarity=0)._options(sat, 0, ["posture", "pose"])
    assert [f for f, _ in forms] == ["posed"]
    with pytest.raises(ValueError, match="max_rank"):
        CoPOS(max_rank=-1)


def test_max_substitute_senses_drops_very_polysemous_synonyms(wordnet: Any) -> None:
    # become.v.01's synonyms are *go* (30 verb senses) and *get* (36): "you'll become
    # happy" is not "you'll go happy", whatever sense WordNet offered them in
    every = CoPOS(wordnet=wordnet, sense="all", min_count=0, max_senses=0, max_substitute_senses=0)
    capped = CoPOS(wordnet=wordnet, sense="all", min_count=0, max_senses=0)  # default 12
    assert {"go", "get"} <= set(every.synonyms("become", "v"))
    kept = capped.synonyms("become", "v")
    assert "go" not in kept and "get" not in kept
    assert all(len(wordnet.synsets(w.replace("-", "_"), pos="v")) <= 12 for w in kept)
    assert "film" in capped.synonyms("movie", "n")  # a word of few senses stays
    with pytest.raises(ValueError, match="max_substitute_senses"):
        CoPOS(max_substitute_senses=-1)


MASS_BOYCOTT = """
1 a a DET DT _ 3 det
2 mass mass ADJ JJ Degree=Pos 3 amod
3 boycott boycott NOUN NN Number=Sing 0 root
"""


@pytest.mark.needs("glove")
def test_min_sense_count_keeps_a_word_to_the_senses_semcor_saw_it_in(wordnet: Any) -> None:
    # the only adjective sense of "mass" is aggregate.s.01, which SemCor never tags
    # "mass" with: "a mass boycott" is not "an aggregate boycott"
    sentence = make_sentence("mass", MASS_BOYCOTT)
    loose = CoPOS(wordnet=wordnet, sense="all", max_senses=0)
    strict = CoPOS(wordnet=wordnet, sense="all", max_senses=0, min_sense_count=1)
    [table] = loose.candidates([sentence])
    assert "aggregate" in {form for form, _ in table.options(1)}
    [table] = strict.candidates([sentence])
    assert not table.options(1)
    # a word SemCor saw in the sense keeps its synonyms
    assert any(sense.count >= 1 for sense in strict.senses("movie", "n"))
    with pytest.raises(ValueError, match="min_sense_count"):
        CoPOS(min_sense_count=-1)


HIDE = """
1 Iranians Iranian PROPN NNPS Number=Plur 2 nsubj
2 make make VERB VBP Mood=Ind|Tense=Pres|VerbForm=Fin 0 root
3 statements statement NOUN NNS Number=Plur 2 obj
4 and and CCONJ CC _ 6 cc
5 then then ADV RB _ 6 advmod
6 hide hide VERB VBP Mood=Ind|Tense=Pres|VerbForm=Fin 2 conj
7 behind behind ADP IN _ 9 case
8 lack lack NOUN NN Number=Sing 9 compound
9 proof proof NOUN NN Number=Sing 6 obl
"""

EXPECT = """
1 They they PRON PRP Case=Nom|Number=Plur|Person=3|PronType=Prs 2 nsubj
2 expect expect VERB VBP Mood=Ind|Tense=Pres|VerbForm=Fin 0 root
3 that that SCONJ IN _ 6 mark
4 they they PRON PRP Case=Nom|Number=Plur|Person=3|PronType=Prs 6 nsubj
5 will will AUX MD VerbForm=Fin 6 aux
6 come come VERB VB VerbForm=Inf 2 ccomp
"""


def _frame_offers(wordnet: Any, sentence: Sentence, i: int, **settings: Any) -> set[str]:
    """The forms coPOS offers for word ``i`` over every sense, with the SemCor and rarity
    checks off (so only the verb-frame settings decide)."""
    generator = CoPOS(
        wordnet=wordnet,
        sense="all",
        min_count=0,
        min_relative_count=0,
        max_rarity=0,
        **settings,
    )
    [table] = generator.candidates([sentence])
    return {form for form, _ in table.options(i)}


@pytest.mark.needs("glove")
def test_verb_frames_keep_the_senses_that_fit_the_verbs_use(wordnet: Any) -> None:
    # "hide behind lack of proof" has no object: not hide.v.01 "conceal" (frames 8-11)
    # "expect that ..." takes a clause: not ask.v.04 "request and expect" (16, 24)
    offered = partial(_frame_offers, wordnet)

    hide, expect = make_sentence("hide", HIDE), make_sentence("expect", EXPECT)
    loose = {"substitute_frames": False}
    assert "conceal" in offered(hide, 5, **loose)
    assert "conceal" not in offered(hide, 5, verb_frames=True, **loose)
    assert "ask" in offered(expect, 1, **loose)
    assert "ask" not in offered(expect, 1, verb_frames=True, **loose)
    assert "anticipate" in offered(expect, 1, verb_frames=True, **loose)  # expect.v.01 fits


CHANGED = """
1 salaries salary NOUN NNS Number=Plur 4 nsubj
2 have have AUX VBP Mood=Ind|Tense=Pres|VerbForm=Fin 4 aux
3 barely barely ADV RB _ 4 advmod
4 changed change VERB VBN Tense=Past|VerbForm=Part 0 root
"""


SAYS = """
1 Iran Iran PROPN NNP Number=Sing 2 nsubj
2 says say VERB VBZ Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin 0 root
3 it it PRON PRP Case=Nom|Number=Sing|Person=3|PronType=Prs 5 nsubj
4 is be AUX VBZ Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin 5 aux
5 creating create VERB VBG Tense=Pres|VerbForm=Part 2 ccomp
6 energy energy NOUN NN Number=Sing 5 obj
"""

NEED = """
1 i i PRON PRP Case=Nom|Number=Sing|Person=1|PronType=Prs 3 nsubj
2 don't do AUX VBP Mood=Ind|Tense=Pres|VerbForm=Fin 3 aux
3 need need VERB VB VerbForm=Inf 0 root
4 to to PART TO _ 5 mark
5 see see VERB VB VerbForm=Inf 3 xcomp
6 you you PRON PRP Case=Acc|PronType=Prs 5 obj
"""


@pytest.mark.needs("glove")
def test_substitute_frames_keep_the_synonyms_that_allow_the_verbs_use(wordnet: Any) -> None:
    # "conceal" has only frames with an object in every sense it shares with "hide";
    # "ask" has no that-clause frame in the senses it shares with "expect"; "alter"
    # is intransitive in change.v.03, so "salaries have barely altered" stays
    offered = partial(_frame_offers, wordnet)

    hide, expect = make_sentence("hide", HIDE), make_sentence("expect", EXPECT)
    says, need = make_sentence("says", SAYS), make_sentence("need", NEED)
    assert "tells" not in offered(says, 1) and "states" in offered(says, 1)
    assert "tells" in offered(says, 1, substitute_frames=False)
    assert "want" not in offered(need, 2)  # want.v.02 "need" takes no to-infinitive
    assert "want" in offered(need, 2, substitute_frames=False)
    assert "conceal" not in offered(hide, 5)
    assert "conceal" in offered(hide, 5, substitute_frames=False)
    assert "ask" not in offered(expect, 1) and "anticipate" in offered(expect, 1)
    assert "altered" in offered(make_sentence("changed", CHANGED), 3)


LET_KNOW = """
1 Let let VERB VB Mood=Imp|VerbForm=Fin 0 root
2 leaders leader NOUN NNS Number=Plur 1 obj
3 know know VERB VB VerbForm=Inf 1 xcomp
"""

ALLOW_TO_KNOW = """
1 Allow allow VERB VB Mood=Imp|VerbForm=Fin 0 root
2 leaders leader NOUN NNS Number=Plur 1 obj
3 to to PART TO _ 4 mark
4 know know VERB VB VerbForm=Inf 1 xcomp
"""


@pytest.mark.needs("glove")
def test_substitutes_take_the_infinitive_the_verb_takes_after_its_object(wordnet: Any) -> None:
    # "Let leaders know" is not "Allow leaders know", nor "Allow leaders to know" "Let
    # leaders to know", though WordNet's frames allow both
    offered = partial(_frame_offers, wordnet)
    let, allow = make_sentence("let", LET_KNOW), make_sentence("allow", ALLOW_TO_KNOW)
    assert {"Allow", "Permit"} <= offered(let, 0, substitute_frames=False)
    assert not {"Allow", "Permit"} & offered(let, 0)
    assert "Let" in offered(allow, 0, substitute_frames=False)
    assert "Let" not in offered(allow, 0) and "Permit" in offered(allow, 0)


JUST = """
1 it it PRON PRP _ 3 nsubj
2 just just ADV RB _ 3 advmod
3 disappointing disappointing ADJ JJ Degree=Pos 0 root
"""

PARTS = """
1 joined join VERB VBD Tense=Past 0 root
2 Parts part NOUN NNS Number=Plur 1 obj
3 I I NUM CD NumForm=Roman|NumType=Card 2 flat
"""


def test_copos_leaves_function_adverbs_and_flat_names_alone() -> None:
    just, parts = make_sentence("just", JUST), make_sentence("parts", PARTS)
    plain = Eligibility()  # every other generator's: both eligible
    assert plain.positions(just) == (1, 2) and plain.positions(parts) == (0, 1)
    ours = CoPOS().eligibility
    assert ours.positions(just) == (2,)  # "just" is a focus adverb
    assert ours.positions(parts) == (0,)  # "Parts I" is a name
    assert Eligibility(function_adverbs=False).allows("ADJ", "pretty")  # only the adverb
    # a part given on the command line keeps the rest of coPOS's own default
    kwargs = parse_options(CoPOS, ["eligibility.min_length=2"])
    tuned = CoPOS(**kwargs).eligibility  # type: ignore[arg-type]
    assert tuned.min_length == 2 and not tuned.function_adverbs
    back = CoPOS(**parse_options(CoPOS, ["eligibility.function_adverbs=true"]))  # type: ignore[arg-type]
    assert back.eligibility.positions(just) == (1, 2)


GOVERNMENT = """
1 the the DET DT Definite=Def|PronType=Art 2 det
2 government government NOUN NN Number=Sing 3 nsubj
3 fell fall VERB VBD Tense=Past 0 root
"""


def test_min_relative_count_drops_synonyms_rarely_used_for_the_sense(wordnet: Any) -> None:
    # SemCor tags government.n.01 as "government" 100 times and as "regime" twice
    sentence = make_sentence("government", GOVERNMENT)

    def offered(**settings: Any) -> set[str]:
        generator = CoPOS(wordnet=wordnet, sense="all", max_rarity=0, **settings)
        [table] = generator.candidates([sentence])
        return {form for form, _ in table.options(1)}

    assert "regime" in offered(min_relative_count=0)
    assert "regime" not in offered()  # default 0.08: (2 + 1) / (100 + 1) is below
    with pytest.raises(ValueError, match="min_relative_count"):
        CoPOS(min_relative_count=-1)


WAR = """
1 war war NOUN NN Number=Sing 3 nsubj
2 is be AUX VBZ Mood=Ind|Tense=Pres|VerbForm=Fin 3 cop
3 hell hell NOUN NN Number=Sing 0 root
"""

ZEROES = """
1 the the DET DT Definite=Def|PronType=Art 3 det
2 early early ADJ JJ Degree=Pos 3 amod
3 zeroes zero NOUN NNS Number=Plur 0 root
"""


def test_max_rarity_drops_synonyms_much_rarer_than_the_word(wordnet: Any) -> None:
    glove_or_skip()
    war = make_sentence("war", WAR)

    def offered(**settings: Any) -> set[str]:
        generator = CoPOS(wordnet=wordnet, sense="all", **settings)
        [table] = generator.candidates([war])
        return {form for form, _ in table.options(0)}

    assert "warfare" in offered(max_rarity=0)
    assert "warfare" not in offered()  # 46 times rarer than "war"
    with pytest.raises(ValueError, match="max_rarity"):
        CoPOS(max_rarity=-1)


def test_count_nouns_need_countable_synonyms(wordnet: Any) -> None:
    glove_or_skip()
    assert is_countable("part") and is_countable("war") and is_countable("pupil")
    assert not is_countable("nothing") and not is_countable("warfare")
    assert not is_countable("information")
    zeroes, war = make_sentence("zeroes", ZEROES), make_sentence("war", WAR)
    assert count_use(zeroes, 2) and not count_use(war, 0)
    a_war = make_sentence("a-war", "1 a a DET DT _ 2 det\n2 war war NOUN NN Number=Sing 0 root")
    assert count_use(a_war, 1)  # a singular after "a"

    def offered(**settings: Any) -> set[str]:
        generator = CoPOS(wordnet=wordnet, sense="all", min_count=0, max_rarity=0, **settings)
        [table] = generator.candidates([zeroes])
        return {form for form, _ in table.options(2)}

    assert "nothings" in offered(count_nouns=False)
    assert "nothings" not in offered()


CONCURRING = """
1 He he PRON PRP _ 2 nsubj
2 concurred concur VERB VBD Tense=Past 0 root
3 in in ADP IN _ 4 case
4 part part NOUN NN Number=Sing 2 obl
5 with with ADP IN _ 7 case
6 the the DET DT Definite=Def|PronType=Art 7 det
7 part part NOUN NN Number=Sing 2 obl
8 of of ADP IN _ 9 case
9 information information NOUN NN Number=Sing 7 nmod
"""


def test_abbreviations_are_not_synonyms(wordnet: Any) -> None:
    # hour.n.01 lists "hr", year.n.01 "yr": no vowel, an abbreviation
    sentence = make_sentence(
        "hour", "1 an a DET DT _ 2 det\n2 hour hour NOUN NN Number=Sing 0 root"
    )
    lemmas = {n for s in wordnet.synsets("hour", pos="n") for n in s.lemma_names()}
    assert "hr" in lemmas
    [table] = CoPOS(wordnet=wordnet, sense="all", min_count=0, max_rarity=0).candidates([sentence])
    offered = {f for f, _ in table.options(1)}
    assert offered and "hr" not in offered
    # La Malfa et al.'s pool (no usage checks) keeps every lemma
    plain = CoPOS(wordnet=wordnet, sense="all", min_count=0, usage_checks=False)
    assert "hr" in {f for f, _ in plain.candidates([sentence])[0].options(1)}


def test_bare_idioms_keep_a_bare_count_noun_in_a_phrase(wordnet: Any) -> None:
    glove_or_skip()
    sentence = make_sentence("concurring", CONCURRING)
    # "in part": a count noun without its article; "the part" has one; "of information"
    # is a mass noun, bare as mass nouns are anywhere
    assert [bare_idiom(sentence, i) for i in (3, 6, 8)] == [True, False, False]
    exercise = make_sentence(
        "exercise",
        "1 restricted restrict VERB VBN _ 0 root\n2 to to ADP IN _ 4 case\n"
        "3 physical physical ADJ JJ _ 4 amod\n4 exercise exercise NOUN NN Number=Sing 1 obl",
    )
    assert not bare_idiom(exercise, 3)  # modified: a noun used as mass, not an idiom

    def offered(**settings: Any) -> dict[int, set[str]]:
        generator = CoPOS(wordnet=wordnet, sense="all", min_count=0, max_rarity=0, **settings)
        [table] = generator.candidates([sentence])
        return {i: {f for f, _ in table.options(i)} for i in range(table.n_words)}

    assert "portion" in offered(bare_idioms=False)[3]
    assert offered()[3] == set() and "portion" in offered()[6]


def test_usage_checks_false_turns_the_usage_rules_off_at_once(wordnet: Any) -> None:
    glove_or_skip()
    sentences = [
        make_sentence(name, spec)
        for name, spec in [("hide", HIDE), ("says", SAYS), ("just", JUST), ("zeroes", ZEROES)]
    ]
    sentences += [make_sentence("parts", PARTS), make_sentence("government", GOVERNMENT)]
    sentences += [make_sentence("war", WAR), make_sentence("concurring", CONCURRING)]

    def pool(**settings: Any) -> list[dict[int, set[str]]]:
        generator = CoPOS(wordnet=wordnet, sense="all", min_count=0, **settings)
        return [
            {i: {f for f, _ in table.options(i)} for i in range(table.n_words)}
            for table in generator.candidates(sentences)
        ]

    off = pool(usage_checks=False)
    each = pool(
        substitute_frames=False,
        min_relative_count=0,
        max_rarity=0,
        count_nouns=False,
        bare_idioms=False,
        eligibility=Eligibility(),
    )
    assert off == each and off != pool()
    assert CoPOS(usage_checks=False).eligibility == Eligibility()


def test_the_word_itself_in_another_form_is_not_a_synonym(copos: CoPOS, wordnet: Any) -> None:
    # wish.n.01 lists *wish*, *wishing* and *want*: "the wishing that ..." is the word
    # itself as a gerund, not another word for it
    assert "wishing" in {n for s in wordnet.synsets("wish", pos="n") for n in s.lemma_names()}
    spec = "1 the the DET DT _ 2 det\n2 wish wish NOUN NN _ 0 root"
    forms = {f for f, _ in _opts(copos, spec, 1)}
    assert "want" in forms
    assert "wishing" not in forms
