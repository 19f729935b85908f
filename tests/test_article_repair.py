"""a/an agreement after a substitution, how the budget counts it, and stale MISC keys."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from test_generators_helpers import make_sentence

from brittle.engine.core.articles import agreeing_article, indefinite_article
from brittle.engine.core.perturbation import (
    FORM_MISC_KEYS,
    Perturbation,
    apply_perturbation,
    article_repairs,
    counted_forms,
    describe,
)
from brittle.engine.core.sentence import Sentence, Token
from brittle.search.constraints import BudgetConstraint, CandidateBatch

from support import SHARED_UD


@pytest.mark.parametrize(
    ("word", "article"),
    [
        ("apple", "an"),
        ("overnice", "an"),
        ("nice", "a"),
        ("elephant", "an"),
        ("idea", "an"),
        ("umbrella", "an"),
        ("hour", "an"),
        ("hourly", "an"),
        ("honest", "an"),
        ("honorable", "an"),
        ("honour", "an"),
        ("heir", "an"),
        ("house", "a"),
        ("historic", "a"),
        ("university", "a"),
        ("unique", "a"),
        ("union", "a"),
        ("unit", "a"),
        ("user", "a"),
        ("usual", "a"),
        ("utility", "a"),
        ("European", "a"),
        ("euro", "a"),
        ("ewe", "a"),
        ("unanimous", "a"),
        ("Ukrainian", "a"),
        ("unidentified", "an"),
        ("uninformed", "an"),
        ("unimportant", "an"),
        ("unanswered", "an"),
        ("utter", "an"),
        ("usher", "an"),
        ("urgent", "an"),
        ("one", "a"),
        ("one-off", "a"),
        ("once-only", "a"),
        ("onerous", "an"),
        ("only", "an"),
        ("year", "a"),
        ("MBA", "an"),
        ("FBI", "an"),
        ("HTML", "an"),
        ("MRI", "an"),
        ("NGO", "an"),
        ("SQL", "an"),
        ("HIV", "an"),
        ("SUV", "an"),
        ("UN", "a"),
        ("URL", "a"),
        ("USB", "a"),
        ("CEO", "a"),
        ("MBAs", "an"),
        ("NASA", "a"),
        ("NATO", "a"),
        ("OPEC", "an"),
        ("AIDS", "an"),
        ("UGLY", "an"),
        ("CAR", "a"),
        ("APPLE", "an"),
        ("UNHCR", "a"),
        ("STRONG", "a"),
        ("x-ray", "an"),
        ("U-turn", "a"),
        ("X", "an"),
        ("B", "a"),
        ("iPhone", "an"),
        ("PhD", "a"),
        ("McDonald", "a"),
        ("herb", None),
        ("8", None),
        ('"quoted', None),
        ("", None),
    ],
)
def test_indefinite_article(word: str, article: str | None) -> None:
    assert indefinite_article(word) == article


@pytest.mark.parametrize(
    ("article", "following", "new"),
    [
        ("a", "overnice", "an"),
        ("A", "apple", "An"),
        ("an", "university", "a"),
        ("An", "day", "A"),
        ("AN", "CAR", "A"),
        ("A", "APPLE", "AN"),
        ("A", "FBI", "An"),
        ("a", "hour", "an"),
        ("a", "nice", None),  # already agrees
        ("an", "apple", None),
        ("a", "herb", None),  # undecided: left alone
        ("the", "apple", None),  # not an indefinite article
    ],
)
def test_agreeing_article(article: str, following: str, new: str | None) -> None:
    assert agreeing_article(article, following) == new


#: "I saw a nice dog ." with the article at position 2 (0-based).
NICE = """
1 I I PRON PRP Case=Nom|Number=Sing|Person=1|PronType=Prs 2 nsubj
2 saw see VERB VBD Mood=Ind|Tense=Past|VerbForm=Fin 0 root
3 a a DET DT Definite=Ind|PronType=Art 5 det
4 nice nice ADJ JJ Degree=Pos 5 amod
5 dog dog NOUN NN Number=Sing 2 obj
6 . . PUNCT . _ 2 punct
"""


def _nice() -> Sentence:
    s = make_sentence("nice", NICE)
    return s.with_metadata("text", "I saw a nice dog .")


def test_the_article_is_repaired_recorded_and_in_the_text() -> None:
    s = _nice()
    p = Perturbation("nice", "copos", (3,), ("overnice",), ("overnice",))
    out = apply_perturbation(s, p)
    assert out.forms == ("I", "saw", "an", "overnice", "dog", ".")
    assert out.metadata["text"] == "I saw an overnice dog ."
    assert out.words[2].misc_dict == {"OrigForm": "a", "Perturbation": "copos"}
    assert out.words[2].lemma == "a" and out.words[2].upos == "DET"  # gold columns kept
    assert out.words[3].misc_dict == {"OrigForm": "nice", "Perturbation": "copos"}
    assert out.metadata["perturbation"] == "copos 4:nice->overnice (article 3:a->an)"
    assert describe(p, s) == out.metadata["perturbation"]
    assert p.positions == (3,) and p.size == 1  # the repair is part of the substitution


def test_no_repair_when_the_article_already_agrees() -> None:
    s = _nice()
    p = Perturbation("nice", "copos", (3,), ("big",))
    out = apply_perturbation(s, p)
    assert out.forms[2] == "a" and out.words[2].misc == "_"
    assert article_repairs(s, p) == ()
    assert "(article" not in out.metadata["perturbation"]


def test_an_becomes_a_and_capitals_are_kept() -> None:
    s = _nice()
    s = s.with_words(
        {
            2: replace(s.words[2], form="An"),
            3: replace(s.words[3], form="old"),
        }
    )
    out = apply_perturbation(s, Perturbation("nice", "random", (3,), ("young",)))
    assert out.forms[2:4] == ("A", "young")
    assert out.words[2].misc_dict == {"OrigForm": "An", "Perturbation": "random"}


def test_substituting_the_noun_after_an_unchanged_adjective_needs_no_repair() -> None:
    s = _nice()
    out = apply_perturbation(s, Perturbation("nice", "copos", (4,), ("apple",)))
    assert out.forms[2:5] == ("a", "nice", "apple")


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({2: {"upos": "NOUN"}}, "not a determiner (vitamin a)"),
        ({2: {"misc": "SpaceAfter=No"}}, "no space after the article"),
    ],
)
def test_no_repair_of_a_word_that_is_no_free_standing_article(
    change: dict[int, dict[str, str]], why: str
) -> None:
    s = _nice()
    s = s.with_words({i: replace(s.words[i], **cols) for i, cols in change.items()})
    out = apply_perturbation(s, Perturbation("nice", "copos", (3,), ("overnice",)))
    assert out.forms[2] == "a", why


def test_a_substituted_article_is_left_to_the_generator() -> None:
    s = _nice()
    p = Perturbation("nice", "random", (2, 3), ("the", "overnice"))
    out = apply_perturbation(s, p)
    assert out.forms[2:4] == ("the", "overnice") and article_repairs(s, p) == ()


def test_no_repair_inside_a_multiword_token() -> None:
    rows = (
        Token("1", "I", "I", "PRON", "PRP", "_", "2", "nsubj"),
        Token("2", "saw", "see", "VERB", "VBD", "_", "0", "root"),
        Token("3-4", "anice"),
        Token("3", "a", "a", "DET", "DT", "_", "4", "det"),
        Token("4", "nice", "nice", "ADJ", "JJ", "_", "2", "obj"),
        Token("5", "dog", "dog", "NOUN", "NN", "_", "2", "obj"),
    )
    s = Sentence("mwt", ("# sent_id = mwt",), rows)
    assert article_repairs(s, Perturbation("mwt", "copos", (4,), ("apple",))) == ()


def test_the_budget_counts_the_substitution_not_its_article_repair() -> None:
    s = _nice()
    repaired = Perturbation("nice", "copos", (3,), ("overnice",))
    plain = Perturbation("nice", "copos", (3,), ("big",))
    two = Perturbation("nice", "copos", (3, 4), ("overnice", "cat"))
    batch = CandidateBatch.build(s, [repaired, plain, two])
    # The raw FORM sequences differ in two places for the repaired candidate...
    assert sum(a != b for a, b in zip(s.forms, batch.sentences[0].forms, strict=True)) == 2
    # ...but what a budget compares undoes the repair.
    assert counted_forms(s, repaired, batch.sentences[0]) == (
        "I",
        "saw",
        "a",
        "overnice",
        "dog",
        ".",
    )
    result = BudgetConstraint(1).check(batch)
    assert result.values.tolist() == [1.0, 1.0, 2.0]
    assert result.mask.tolist() == [True, True, False]


def test_counted_forms_of_a_reordering_are_its_forms() -> None:
    s = _nice()
    p = Perturbation("nice", "shuffle", order=(1, 0, 2, 3, 4, 5))
    out = apply_perturbation(s, p)
    assert counted_forms(s, p, out) == out.forms


# ------------------------------------------------------------------ stale MISC
def test_keys_describing_the_old_form_are_dropped_and_layout_kept() -> None:
    s = _nice()
    misc = "Entity=(e1-object-1|MSeg=ni-ce|Gloss=pleasant|CorrectForm=nice|SpaceAfter=No|XML=<w>"
    s = s.with_words({3: replace(s.words[3], misc=misc), 4: replace(s.words[4], misc="MSeg=dog")})
    out = apply_perturbation(s, Perturbation("nice", "copos", (3,), ("big",)))
    assert out.words[3].misc_dict == {
        "Entity": "(e1-object-1",
        "SpaceAfter": "No",
        "XML": "<w>",
        "OrigForm": "nice",
        "Perturbation": "copos",
    }
    assert out.words[4].misc == "MSeg=dog"  # unchanged words keep everything


def test_the_repaired_article_loses_stale_keys_too() -> None:
    s = _nice()
    s = s.with_words({2: replace(s.words[2], misc="CorrectForm=an|Entity=(e2")})
    out = apply_perturbation(s, Perturbation("nice", "copos", (3,), ("overnice",)))
    assert out.words[2].misc_dict == {"Entity": "(e2", "OrigForm": "a", "Perturbation": "copos"}


def test_form_misc_keys_cover_the_form_keys_of_the_shared_treebanks() -> None:
    assert {"MSeg", "CorrectForm", "Translit", "LTranslit", "MGloss"} <= set(FORM_MISC_KEYS)
    assert not {"SpaceAfter", "SpacesAfter", "Entity", "CorrectSpaceAfter"} & set(FORM_MISC_KEYS)


@pytest.mark.shared
def test_every_article_of_ewt_is_repaired(ewt_test: Path) -> None:
    """On EWT: every free-standing ``a``/``an`` whose next word is replaced by a word
    needing the other article is repaired, within a one-word budget."""
    from brittle.engine.core.conllu import read_conllu

    repaired = 0
    for s in read_conllu(ewt_test):
        words = s.words
        for i in range(1, len(words)):
            art = words[i - 1]
            if art.form.lower() not in ("a", "an") or art.upos != "DET":
                continue
            if i in s.multiword_positions or i - 1 in s.multiword_positions:
                continue
            if art.misc_dict.get("SpaceAfter") == "No":  # "alot": not a free-standing article
                continue
            new = "apple" if art.form.lower() == "a" else "pear"
            p = Perturbation(s.sent_id, "test", (i,), (new,))
            out = apply_perturbation(s, p)
            assert out.forms[i - 1].lower() == ("an" if new == "apple" else "a")
            assert out.words[i - 1].misc_dict["OrigForm"] == art.form
            assert f"{out.forms[i - 1]} {new}" in out.metadata["text"]
            assert BudgetConstraint(1).check(CandidateBatch.build(s, [p])).mask.tolist() == [True]
            repaired += 1
    assert repaired > 300


@pytest.mark.shared
@pytest.mark.parametrize(
    ("treebank", "key"),
    [
        ("UD_English-GUM/en_gum-ud-test.conllu", "MSeg"),
        ("UD_English-EWT/en_ewt-ud-test.conllu", "CorrectForm"),
    ],
)
def test_stale_keys_of_the_shared_treebanks_are_dropped(treebank: str, key: str) -> None:
    from brittle.engine.core.conllu import read_conllu

    path = SHARED_UD / treebank
    if not path.exists():
        pytest.skip(f"{path} is not available")
    checked = 0
    for s in read_conllu(path):
        for i, w in enumerate(s.words):
            if key not in w.misc_dict or i in s.multiword_positions:
                continue
            out = apply_perturbation(s, Perturbation(s.sent_id, "test", (i,), ("blicket",)))
            kept = {k: v for k, v in w.misc_dict.items() if k not in FORM_MISC_KEYS}
            assert out.words[i].misc_dict == {**kept, "OrigForm": w.form, "Perturbation": "test"}
            checked += 1
    assert checked > 100
