"""``brittle grade`` and the validity judges: each judge on hand-made pairs that must
pass and must fail, the input mistakes as one line and status 2, and the command end to
end with the real spaCy parser, LM and encoder (skipped when they are absent)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from brittle.cli.main import main
from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.errors import BrittleInputError, ResourceMissingError
from brittle.engine.core.sentence import Sentence
from brittle.engine.grading import grade_files, summarize_grades
from brittle.scorers.parsers.base import Parse
from brittle.search.generators.lexicon import PosLexicon
from brittle.search.validity import ChangedWord, Check, Grade, Grader, grade_pairs, grammar
from brittle.search.validity.grade import changed_words_of
from brittle.search.validity.grammar import (
    DEGREE_ADVERBS,
    PLACE_ADVERBS,
    adjective_position_check,
    agreement_check,
    count_check,
    fixed_phrase_check,
    function_adverb_check,
    known_word_check,
    place_phrase_check,
    verb_frame_check,
)
from brittle.search.validity.lexical import closed_class_check, form_check, same_function_class
from brittle.search.validity.meaning import similarity_check, spelling_variant, synonymy_check
from brittle.search.validity.surprisal import (
    continuation_classes,
    continuations,
    surprisal_check,
)
from brittle.search.validity.tree import attachment_check, retag_check, same_relation

from support import missing_sentence_models

MISSING = missing_sentence_models()

# ------------------------------------------------------------------ hand-made treebank
# (id, form, lemma, upos, xpos, feats, head, deprel); "-" before the form: SpaceAfter=No
ROWS: dict[str, list[tuple[str, ...]]] = {
    "loved": [
        ("I", "I", "PRON", "PRP", "Case=Nom|Number=Sing|Person=1|PronType=Prs", "2", "nsubj"),
        ("loved", "love", "VERB", "VBD", "Mood=Ind|Number=Sing|Person=1|Tense=Past|VerbForm=Fin",
         "0", "root"),
        ("the", "the", "DET", "DT", "Definite=Def|PronType=Art", "4", "det"),
        ("movie", "movie", "NOUN", "NN", "Number=Sing", "2", "obj"),
        (".", ".", "PUNCT", ".", "_", "2", "punct"),
    ],
    "rate": [
        ("The", "the", "DET", "DT", "Definite=Def|PronType=Art", "2", "det"),
        ("rate", "rate", "NOUN", "NN", "Number=Sing", "3", "nsubj"),
        ("rose", "rise", "VERB", "VBD", "Mood=Ind|Number=Sing|Person=3|Tense=Past|VerbForm=Fin",
         "0", "root"),
        ("quickly", "quickly", "ADV", "RB", "_", "3", "advmod"),
        (".", ".", "PUNCT", ".", "_", "3", "punct"),
    ],
    "books": [
        ("She", "she", "PRON", "PRP", "Case=Nom|Gender=Fem|Number=Sing|Person=3|PronType=Prs",
         "2", "nsubj"),
        ("reads", "read", "VERB", "VBZ", "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin",
         "0", "root"),
        ("good", "good", "ADJ", "JJ", "Degree=Pos", "4", "amod"),
        ("books", "book", "NOUN", "NNS", "Number=Plur", "2", "obj"),
        (".", ".", "PUNCT", ".", "_", "2", "punct"),
    ],
    "needed": [
        ("We", "we", "PRON", "PRP", "Case=Nom|Number=Plur|Person=1|PronType=Prs", "2", "nsubj"),
        ("help", "help", "VERB", "VBP", "Mood=Ind|Tense=Pres|VerbForm=Fin", "0", "root"),
        ("them", "they", "PRON", "PRP", "Case=Acc|Number=Plur|Person=3|PronType=Prs", "2", "obj"),
        ("if", "if", "SCONJ", "IN", "_", "5", "mark"),
        ("needed", "need", "VERB", "VBN", "Tense=Past|VerbForm=Part", "2", "advcl"),
        (".", ".", "PUNCT", ".", "_", "2", "punct"),
    ],
    "revised": [
        ("Send", "send", "VERB", "VB", "Mood=Imp|VerbForm=Fin", "0", "root"),
        ("the", "the", "DET", "DT", "Definite=Def|PronType=Art", "4", "det"),
        ("revised", "revise", "VERB", "VBN", "Tense=Past|VerbForm=Part", "4", "amod"),
        ("report", "report", "NOUN", "NN", "Number=Sing", "1", "obj"),
        (".", ".", "PUNCT", ".", "_", "1", "punct"),
    ],
    "today": [
        ("I", "I", "PRON", "PRP", "Case=Nom|Number=Sing|Person=1|PronType=Prs", "2", "nsubj"),
        ("left", "leave", "VERB", "VBD", "Mood=Ind|Tense=Past|VerbForm=Fin", "0", "root"),
        ("last", "last", "ADJ", "JJ", "Degree=Pos", "4", "amod"),
        ("month", "month", "NOUN", "NN", "Number=Sing", "2", "obl:unmarked"),
        ("at", "at", "ADP", "IN", "_", "6", "case"),
        ("5", "5", "NUM", "CD", "NumForm=Digit|NumType=Card", "2", "obl"),
        ("PM", "p.m.", "NOUN", "NN", "Number=Sing", "6", "nmod:unmarked"),
        ("today", "today", "NOUN", "NN", "Number=Sing", "2", "obl:unmarked"),
        (".", ".", "PUNCT", ".", "_", "2", "punct"),
    ],
    "september": [
        ("Papers", "paper", "NOUN", "NNS", "Number=Plur", "2", "nsubj"),
        ("printed", "print", "VERB", "VBD", "Mood=Ind|Tense=Past|VerbForm=Fin", "0", "root"),
        ("them", "they", "PRON", "PRP", "Case=Acc|Number=Plur|Person=3|PronType=Prs", "2",
         "obj"),
        ("last", "last", "ADJ", "JJ", "Degree=Pos", "5", "amod"),
        ("September", "September", "PROPN", "NNP", "Number=Sing", "2", "obl:unmarked"),
        ("and", "and", "CCONJ", "CC", "_", "10", "cc"),
        ("the", "the", "DET", "DT", "Definite=Def|PronType=Art", "10", "det"),
        ("last", "last", "ADJ", "JJ", "Degree=Pos", "10", "amod"),
        ("big", "big", "ADJ", "JJ", "Degree=Pos", "10", "amod"),
        ("week", "week", "NOUN", "NN", "Number=Sing", "5", "conj"),
        (".", ".", "PUNCT", ".", "_", "2", "punct"),
    ],
    "expanded": [
        ("They", "they", "PRON", "PRP", "Case=Nom|Number=Plur|Person=3|PronType=Prs", "2",
         "nsubj"),
        ("expanded", "expand", "VERB", "VBD",
         "Mood=Ind|Number=Plur|Person=3|Tense=Past|VerbForm=Fin", "0", "root"),
        ("on", "on", "ADP", "IN", "_", "5", "case"),
        ("the", "the", "DET", "DT", "Definite=Def|PronType=Art", "5", "det"),
        ("plan", "plan", "NOUN", "NN", "Number=Sing", "2", "obl"),
        (".", ".", "PUNCT", ".", "_", "2", "punct"),
    ],
    "news": [
        ("This", "this", "PRON", "DT", "Number=Sing|PronType=Dem", "4", "nsubj"),
        ("is", "be", "AUX", "VBZ", "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin",
         "4", "cop"),
        ("bad", "bad", "ADJ", "JJ", "Degree=Pos", "4", "amod"),
        ("news", "news", "NOUN", "NN", "Number=Sing", "0", "root"),
        (".", ".", "PUNCT", ".", "_", "4", "punct"),
    ],
    "why": [
        ("Why", "why", "ADV", "WRB", "PronType=Int", "4", "advmod"),
        ("did", "do", "AUX", "VBD", "Mood=Ind|Number=Sing|Person=2|Tense=Past|VerbForm=Fin",
         "4", "aux"),
        ("you", "you", "PRON", "PRP", "Case=Nom|Person=2|PronType=Prs", "4", "nsubj"),
        ("go", "go", "VERB", "VB", "VerbForm=Inf", "0", "root"),
        ("?", "?", "PUNCT", ".", "_", "4", "punct"),
    ],
    "pointed": [
        ("He", "he", "PRON", "PRP", "Case=Nom|Gender=Masc|Number=Sing|Person=3|PronType=Prs",
         "2", "nsubj"),
        ("pointed", "point", "VERB", "VBD",
         "Mood=Ind|Number=Sing|Person=3|Tense=Past|VerbForm=Fin", "0", "root"),
        ("out", "out", "ADP", "RP", "_", "2", "compound:prt"),
        ("the", "the", "DET", "DT", "Definite=Def|PronType=Art", "5", "det"),
        ("flaw", "flaw", "NOUN", "NN", "Number=Sing", "2", "obj"),
        (".", ".", "PUNCT", ".", "_", "2", "punct"),
    ],
    "let": [
        ("Let", "let", "VERB", "VB", "Mood=Imp|VerbForm=Fin", "0", "root"),
        ("me", "I", "PRON", "PRP", "Case=Acc|Number=Sing|Person=1|PronType=Prs", "1", "obj"),
        ("know", "know", "VERB", "VB", "VerbForm=Inf", "1", "xcomp"),
        (".", ".", "PUNCT", ".", "_", "1", "punct"),
    ],
    "told": [
        ("He", "he", "PRON", "PRP", "Case=Nom|Gender=Masc|Number=Sing|Person=3|PronType=Prs",
         "2", "nsubj"),
        ("told", "tell", "VERB", "VBD", "Mood=Ind|Number=Sing|Person=3|Tense=Past|VerbForm=Fin",
         "0", "root"),
        ("me", "I", "PRON", "PRP", "Case=Acc|Number=Sing|Person=1|PronType=Prs", "2", "obj"),
        ("that", "that", "SCONJ", "IN", "_", "6", "mark"),
        ("it", "it", "PRON", "PRP", "Case=Nom|Gender=Neut|Number=Sing|Person=3|PronType=Prs",
         "6", "nsubj"),
        ("helps", "help", "VERB", "VBZ", "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin",
         "2", "ccomp"),
        (".", ".", "PUNCT", ".", "_", "2", "punct"),
    ],
    "pear": [
        ("I", "I", "PRON", "PRP", "Case=Nom|Number=Sing|Person=1|PronType=Prs", "2", "nsubj"),
        ("ate", "eat", "VERB", "VBD", "Mood=Ind|Number=Sing|Person=1|Tense=Past|VerbForm=Fin",
         "0", "root"),
        ("a", "a", "DET", "DT", "Definite=Ind|PronType=Art", "4", "det"),
        ("pear", "pear", "NOUN", "NN", "Number=Sing", "2", "obj"),
        (".", ".", "PUNCT", ".", "_", "2", "punct"),
    ],
    "statistic": [
        ("The", "the", "DET", "DT", "Definite=Def|PronType=Art", "2", "det"),
        ("statistic", "statistic", "NOUN", "NN", "Number=Sing", "4", "nsubj:pass"),
        ("was", "be", "AUX", "VBD", "Mood=Ind|Number=Sing|Person=3|Tense=Past|VerbForm=Fin",
         "4", "aux:pass"),
        ("employed", "employ", "VERB", "VBN", "Tense=Past|VerbForm=Part|Voice=Pass", "0",
         "root"),
        (".", ".", "PUNCT", ".", "_", "4", "punct"),
    ],
    "nice": [
        ("That", "that", "PRON", "DT", "Number=Sing|PronType=Dem", "4", "nsubj"),
        ("is", "be", "AUX", "VBZ", "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin",
         "4", "cop"),
        ("too", "too", "ADV", "RB", "_", "4", "advmod"),
        ("nice", "nice", "ADJ", "JJ", "Degree=Pos", "0", "root"),
        ("and", "and", "CCONJ", "CC", "_", "8", "cc"),
        ("I", "I", "PRON", "PRP", "Case=Nom|Number=Sing|Person=1|PronType=Prs", "8", "nsubj"),
        ("really", "really", "ADV", "RB", "_", "8", "advmod"),
        ("stayed", "stay", "VERB", "VBD", "Mood=Ind|Tense=Past|VerbForm=Fin", "4", "conj"),
        ("away", "away", "ADV", "RB", "_", "8", "advmod"),
        (".", ".", "PUNCT", ".", "_", "4", "punct"),
    ],
    "smoked": [
        ("You", "you", "PRON", "PRP", "Case=Nom|Person=2|PronType=Prs", "2", "nsubj"),
        ("smoked", "smoke", "VERB", "VBD", "Mood=Ind|Tense=Past|VerbForm=Fin", "0", "root"),
        ("it", "it", "PRON", "PRP", "Case=Acc|Gender=Neut|Number=Sing|Person=3|PronType=Prs",
         "2", "obj"),
        ("down", "down", "ADV", "RB", "_", "2", "advmod"),
        ("into", "into", "ADP", "IN", "_", "7", "case"),
        ("the", "the", "DET", "DT", "Definite=Def|PronType=Art", "7", "det"),
        ("cork", "cork", "NOUN", "NN", "Number=Sing", "2", "obl"),
        (".", ".", "PUNCT", ".", "_", "2", "punct"),
    ],
    "repair": [
        ("I", "I", "PRON", "PRP", "Case=Nom|Number=Sing|Person=1|PronType=Prs", "6", "nsubj"),
        ("may", "may", "AUX", "MD", "VerbForm=Fin", "6", "aux"),
        ("have", "have", "AUX", "VB", "VerbForm=Inf", "6", "aux"),
        ("given", "give", "VERB", "VBN", "Tense=Past|VerbForm=Part", "6", "reparandum"),
        ("-", "-", "PUNCT", ":", "_", "6", "punct"),
        ("given", "give", "VERB", "VBN", "Tense=Past|VerbForm=Part", "0", "root"),
        ("him", "he", "PRON", "PRP", "Case=Acc|Gender=Masc|Number=Sing|Person=3|PronType=Prs",
         "6", "iobj"),
        ("some", "some", "DET", "DT", "_", "9", "det"),
        ("basil", "basil", "NOUN", "NN", "Number=Sing", "6", "obj"),
        (".", ".", "PUNCT", ".", "_", "6", "punct"),
    ],
    "somewhere": [
        ("We", "we", "PRON", "PRP", "Case=Nom|Number=Plur|Person=1|PronType=Prs", "3",
         "nsubj"),
        ("can", "can", "AUX", "MD", "VerbForm=Fin", "3", "aux"),
        ("go", "go", "VERB", "VB", "VerbForm=Inf", "0", "root"),
        ("somewhere", "somewhere", "ADV", "RB", "_", "3", "advmod"),
        ("nice", "nice", "ADJ", "JJ", "Degree=Pos", "4", "amod"),
        ("and", "and", "CCONJ", "CC", "_", "7", "cc"),
        ("stay", "stay", "VERB", "VB", "VerbForm=Inf", "3", "conj"),
        ("there", "there", "ADV", "RB", "PronType=Dem", "7", "advmod"),
        (".", ".", "PUNCT", ".", "_", "3", "punct"),
    ],
    "lot": [
        ("I", "I", "PRON", "PRP", "Case=Nom|Number=Sing|Person=1|PronType=Prs", "2", "nsubj"),
        ("paid", "pay", "VERB", "VBD", "Mood=Ind|Tense=Past|VerbForm=Fin", "0", "root"),
        ("for", "for", "ADP", "IN", "_", "6", "case"),
        ("all", "all", "DET", "PDT", "_", "6", "det:predet"),
        ("my", "my", "PRON", "PRP$", "Number=Sing|Person=1|Poss=Yes|PronType=Prs", "6",
         "nmod:poss"),
        ("travel", "travel", "NOUN", "NN", "Number=Sing", "2", "obl"),
        ("and", "and", "CCONJ", "CC", "_", "9", "cc"),
        ("a", "a", "DET", "DT", "Definite=Ind|PronType=Art", "9", "det"),
        ("lot", "lot", "NOUN", "NN", "Number=Sing", "6", "conj"),
        ("of", "of", "ADP", "IN", "_", "11", "case"),
        ("bass", "bass", "NOUN", "NN", "Number=Sing", "9", "nmod"),
        (".", ".", "PUNCT", ".", "_", "2", "punct"),
    ],
    "sure": [
        ("I", "I", "PRON", "PRP", "Case=Nom|Number=Sing|Person=1|PronType=Prs", "2", "nsubj"),
        ("like", "like", "VERB", "VBP", "Mood=Ind|Tense=Pres|VerbForm=Fin", "0", "root"),
        ("it", "it", "PRON", "PRP", "Case=Acc|Number=Sing|Person=3|PronType=Prs", "2", "obj"),
        ("for", "for", "ADP", "IN", "_", "5", "case"),
        ("sure", "sure", "ADJ", "JJ", "Degree=Pos", "2", "obl"),
        (".", ".", "PUNCT", ".", "_", "2", "punct"),
    ],
    "carnival": [
        ("Name", "name", "VERB", "VB", "Mood=Imp|VerbForm=Fin", "0", "root"),
        ("something", "something", "PRON", "NN", "Number=Sing|PronType=Ind", "1", "obj"),
        ("you", "you", "PRON", "PRP", "Case=Nom|Person=2|PronType=Prs", "4", "nsubj"),
        ("find", "find", "VERB", "VBP", "Mood=Ind|Tense=Pres|VerbForm=Fin", "2",
         "acl:relcl"),
        ("at", "at", "ADP", "IN", "_", "7", "case"),
        ("a", "a", "DET", "DT", "Definite=Ind|PronType=Art", "7", "det"),
        ("carnival", "carnival", "NOUN", "NN", "Number=Sing", "4", "obl"),
        ("on", "on", "ADP", "IN", "_", "10", "case"),
        ("the", "the", "DET", "DT", "Definite=Def|PronType=Art", "10", "det"),
        ("day", "day", "NOUN", "NN", "Number=Sing", "1", "obl"),
        ("we", "we", "PRON", "PRP", "Case=Nom|Number=Plur|Person=1|PronType=Prs", "12",
         "nsubj"),
        ("arrived", "arrive", "VERB", "VBD", "Mood=Ind|Tense=Past|VerbForm=Fin", "10",
         "acl:relcl"),
        (".", ".", "PUNCT", ".", "_", "1", "punct"),
    ],
    "color": [
        ("I", "I", "PRON", "PRP", "Case=Nom|Number=Sing|Person=1|PronType=Prs", "2", "nsubj"),
        ("like", "like", "VERB", "VBP", "Mood=Ind|Number=Sing|Person=1|Tense=Pres|VerbForm=Fin",
         "0", "root"),
        ("the", "the", "DET", "DT", "Definite=Def|PronType=Art", "4", "det"),
        ("color", "color", "NOUN", "NN", "Number=Sing", "2", "obj"),
        (".", ".", "PUNCT", ".", "_", "2", "punct"),
    ],
}  # fmt: skip


def block(sent_id: str, rows: list[tuple[str, ...]], changes: dict[int, str] | None = None,
          method: str = "copos", *, with_id: bool = True) -> str:  # fmt: skip
    """A CoNLL-U block; ``changes`` replaces FORMs (0-based) and marks them in MISC."""
    changes = changes or {}
    forms = [changes.get(i, r[0]) for i, r in enumerate(rows)]
    lines = [f"# sent_id = {sent_id}"] if with_id else []
    lines.append(f"# text = {' '.join(forms[:-1])}{forms[-1]}")
    for i, (form, lemma, upos, xpos, feats, head, deprel) in enumerate(rows):
        misc = []
        if i in changes:
            misc += [f"OrigForm={form}", f"Perturbation={method}"]
            lemma = "_"
        if i == len(rows) - 2:
            misc.append("SpaceAfter=No")
        cols = [str(i + 1), forms[i], lemma, upos, xpos, feats, head, deprel, "_"]
        lines.append("\t".join([*cols, "|".join(misc) or "_"]))
    return "\n".join(lines) + "\n\n"


def sentence(name: str) -> Sentence:
    return read_conllu_text(block(name, ROWS[name]))[0]


def pair(name: str, changes: dict[int, str]) -> tuple[Sentence, Sentence, tuple[ChangedWord, ...]]:
    original = sentence(name)
    perturbed = read_conllu_text(block(name, ROWS[name], changes))[0]
    changed = changed_words_of(original, perturbed)
    assert isinstance(changed, tuple)
    return original, perturbed, changed


_TEXTS: dict[str, list[Sentence]] = {}


def read_conllu_text(text: str) -> list[Sentence]:
    if text not in _TEXTS:
        import tempfile

        with tempfile.NamedTemporaryFile("w", suffix=".conllu", delete=False) as handle:
            handle.write(text)
        _TEXTS[text] = read_conllu(handle.name)
        Path(handle.name).unlink()
    return _TEXTS[text]


@pytest.fixture(scope="module")
def wordnet() -> Any:
    from brittle.engine.core.resources import load_wordnet

    try:
        return load_wordnet()
    except ResourceMissingError as err:
        pytest.skip(str(err))


@pytest.fixture(scope="module")
def lexicon(wordnet: Any) -> PosLexicon:
    return PosLexicon(wordnet=wordnet)


@pytest.fixture(scope="module")
def glove() -> None:
    from brittle.search.generators.vocabulary import frequency_rank

    try:
        frequency_rank("the")
    except ResourceMissingError as err:
        pytest.skip(str(err))


# ------------------------------------------------------------------ tree level: lexical
@pytest.mark.parametrize(
    ("name", "index", "new"),
    [("loved", 1, "could"), ("rate", 1, "or"), ("loved", 3, "where"), ("books", 2, "so"),
     ("loved", 1, "can"), ("books", 3, "them")],
)  # fmt: skip
def test_function_words_in_open_class_slots_fail(
    lexicon: PosLexicon, name: str, index: int, new: str
) -> None:
    original, _, changed = pair(name, {index: new})
    check = closed_class_check(original, changed, lexicon)
    assert check.passed is False
    assert check.value == (new,)
    assert check.failed is not None and new in check.failed


def test_one_heading_a_noun_phrase_is_a_noun(lexicon: PosLexicon) -> None:
    """UD tags the pro-form *one* NOUN where it has a determiner or modifier."""
    original, _, changed = pair("pear", {3: "one"})  # "I ate a one"
    assert closed_class_check(original, changed, lexicon).passed is True
    original, _, changed = pair("books", {3: "ones"})  # "good ones"
    assert closed_class_check(original, changed, lexicon).passed is True


def test_a_particle_may_take_the_slot_of_another_particle(lexicon: PosLexicon) -> None:
    """*smoked it down* -> *out*: one particle for another keeps the slot's class; a
    preposition that is no particle, or a wh-word, does not."""
    for particle in ("out", "up", "off"):
        original, _, changed = pair("smoked", {3: particle})
        assert closed_class_check(original, changed, lexicon).passed is True
    for other in ("into", "why", "the"):
        original, _, changed = pair("smoked", {3: other})
        assert closed_class_check(original, changed, lexicon).passed is False
    assert same_function_class("how", "Why") and same_function_class("later", "sooner")
    assert not same_function_class("how", "out") and not same_function_class("rate", "or")


def test_content_words_and_function_slots_pass_the_closed_class_check(
    lexicon: PosLexicon,
) -> None:
    original, _, changed = pair("loved", {1: "adored", 3: "film"})
    assert closed_class_check(original, changed, lexicon).passed is True
    original, _, changed = pair("pear", {2: "the"})  # a DET slot: not an open class
    assert closed_class_check(original, changed, lexicon).passed is True


@pytest.mark.parametrize(
    ("name", "index", "new", "ok"),
    [("books", 3, "book", False), ("books", 3, "novels", True), ("loved", 3, "films", False),
     ("rate", 3, "quick", False), ("rate", 3, "rapidly", True), ("loved", 1, "adored", True),
     ("loved", 1, "adore", False), ("books", 3, "blicks", True), ("books", 3, "blick", False),
     ("books", 2, "fine", True)],
)  # fmt: skip
def test_new_words_must_carry_the_slots_fine_tag(
    lexicon: PosLexicon, name: str, index: int, new: str, ok: bool
) -> None:
    original, _, changed = pair(name, {index: new})
    check = form_check(original, changed, lexicon)
    assert check.passed is ok, check


def test_a_wh_slot_needs_a_wh_word(lexicon: PosLexicon) -> None:
    original, _, changed = pair("why", {0: "Heartily"})
    check = form_check(original, changed, lexicon)
    assert check.passed is False and check.failed is not None and "wh-word" in check.failed
    original, _, changed = pair("why", {0: "How"})
    assert form_check(original, changed, lexicon).passed is True


# ------------------------------------------------------------------ tree level: parser
def _parse(rows: list[tuple[str, ...]], **edits: Any) -> Parse:
    heads = [int(r[5]) for r in rows]
    upos = [r[2] for r in rows]
    labels = ["nsubj", "ROOT", "det", "dobj", "punct"]
    columns: dict[str, list[Any]] = {"head": heads, "upos": upos, "label": labels}
    for key, value in edits.items():
        kind, at = key.split("_")
        columns[kind][int(at)] = value
    return Parse.build(heads, upos, labels)


def test_retag_compares_with_gold_and_leaves_the_parsers_own_errors_unknown() -> None:
    rows = ROWS["loved"]
    original, _, changed = pair("loved", {3: "film"})
    good = _parse(rows)
    assert retag_check(original, changed, good, good).value == (1, 0, 0)
    verb = _parse(rows, upos_3="VERB")
    broken = retag_check(original, changed, good, verb)
    assert broken.passed is False and broken.value == (0, 1, 0)
    assert broken.failed is not None and "NOUN->VERB" in broken.failed
    # the parser already tags the original wrong there: unknown, not invalid
    unknown = retag_check(original, changed, verb, verb)
    assert unknown.passed is None and unknown.value == (0, 0, 1)


def test_in_capitals_a_noun_taken_for_a_name_is_unknown() -> None:
    rows = ROWS["loved"]
    good = _parse(rows)
    name = _parse(rows, upos_3="PROPN")
    original, _, changed = pair("loved", {3: "FILM"})
    assert retag_check(original, changed, good, name).value == (0, 0, 1)
    original, _, changed = pair("loved", {3: "film"})
    assert retag_check(original, changed, good, name).passed is False
    verb = _parse(rows, upos_3="VERB")
    original, _, changed = pair("loved", {3: "FILM"})
    assert retag_check(original, changed, good, verb).passed is False


def test_attachment_checks_arcs_of_and_to_the_changed_word() -> None:
    rows = ROWS["loved"]
    original, _, changed = pair("loved", {3: "film"})
    good = _parse(rows)
    # movie's own arc and the arc of "the" to it
    assert attachment_check(original, changed, good, good).value == (2, 0, 0)
    moved = _parse(rows, head_2=2)
    assert attachment_check(original, changed, good, moved).passed is False
    relabelled = _parse(rows, label_3="nsubj")
    assert attachment_check(original, changed, good, relabelled).passed is False
    # ClearNLP's dobj is UD's obj: a change of label name within one class is kept
    relcl = _parse(rows, label_3="obj")
    assert attachment_check(original, changed, good, relcl).passed is True
    # the parser attached "the" elsewhere in the original: that arc is unknown
    wrong = _parse(rows, head_2=2)
    assert attachment_check(original, changed, wrong, wrong).value == (1, 0, 1)


def test_a_prenominal_modifier_switching_between_amod_and_compound_keeps_its_arc() -> None:
    """UD tells amod from compound by the modifier's word class alone, which the retag
    check judges; with the same head, the switch is no change of tree."""
    rows = ROWS["books"]
    original, _, changed = pair("books", {3: "novels"})
    good = _parse(rows, label_2="amod")
    compound = _parse(rows, label_2="compound")
    assert attachment_check(original, changed, good, compound).value == (2, 0, 0)
    subject = _parse(rows, label_2="nsubj")
    assert attachment_check(original, changed, good, subject).value == (1, 1, 0)
    assert same_relation("amod", "compound") and same_relation("dobj", "obj")
    assert not same_relation("amod", "nsubj") and not same_relation("dobj", "npadvmod")


def test_the_parsers_guess_at_a_nonword_is_unknown() -> None:
    """An attack keeps the nonwords the parser misreads; that is no evidence against
    the tree, so their tag and arcs are unknown and only their shape is judged."""
    rows = ROWS["loved"]
    original, _, changed = pair("loved", {3: "blick"})
    good = _parse(rows)
    misread = _parse(rows, upos_3="VERB", head_2=2)
    assert retag_check(original, changed, good, misread).passed is False  # a real word
    assert retag_check(original, changed, good, misread, {3}).value == (0, 0, 1)
    arcs = attachment_check(original, changed, good, misread, {3})
    assert arcs.passed is None and arcs.value == (0, 0, 2)  # its own arc and "the"'s


@pytest.mark.parametrize(
    ("new", "ok"),
    [("blick", True), ("dised", False), ("blicking", False), ("blickly", False),
     ("gleed", True), ("sled", True)],
)  # fmt: skip
def test_a_nonword_in_a_bare_slot_must_not_look_inflected(
    lexicon: PosLexicon, new: str, ok: bool
) -> None:
    original, _, changed = pair("loved", {3: new})  # a singular noun slot
    assert form_check(original, changed, lexicon).passed is ok


# ------------------------------------------------------------------ grammatical level
def test_pseudowords_are_not_english_words(lexicon: PosLexicon, glove: None) -> None:
    _, _, changed = pair("books", {3: "blicks"})
    assert known_word_check(changed, lexicon).passed is False
    _, _, changed = pair("books", {3: "novels"})
    assert known_word_check(changed, lexicon).passed is True


def test_a_verb_must_allow_the_slots_use(lexicon: PosLexicon, wordnet: Any) -> None:
    original, _, changed = pair("expanded", {1: "hounded"})  # no object: intransitive use
    check = verb_frame_check(original, changed, lexicon, wordnet)
    assert check.passed is False and check.value == ("hounded:intransitive",)
    original, _, changed = pair("expanded", {1: "grew"})
    assert verb_frame_check(original, changed, lexicon, wordnet).passed is True
    original, _, changed = pair("loved", {1: "adored"})
    assert verb_frame_check(original, changed, lexicon, wordnet).passed is True
    original, _, changed = pair("loved", {1: "arrived"})  # an object the verb cannot take
    assert verb_frame_check(original, changed, lexicon, wordnet).passed is False


def test_a_broken_off_verb_has_no_use_to_judge(lexicon: PosLexicon, wordnet: Any) -> None:
    """*I may have arrived – given him some basil*: the reparandum is repaired at once;
    the same verb where the repair stands must take the objects."""
    original, _, changed = pair("repair", {3: "arrived"})
    assert verb_frame_check(original, changed, lexicon, wordnet).passed is None
    original, _, changed = pair("repair", {5: "arrived"})
    assert verb_frame_check(original, changed, lexicon, wordnet).passed is False


def test_a_verb_with_an_object_and_a_clause_needs_a_frame_for_each(
    lexicon: PosLexicon, wordnet: Any
) -> None:
    original, _, changed = pair("told", {1: "met"})  # "He met me that it helps"
    check = verb_frame_check(original, changed, lexicon, wordnet)
    assert check.passed is False and "no clause after its object" in str(check.failed)
    original, _, changed = pair("told", {1: "informed"})
    assert verb_frame_check(original, changed, lexicon, wordnet).passed is True


def test_a_bare_infinitive_after_the_object_needs_a_verb_that_takes_one(
    lexicon: PosLexicon, wordnet: Any
) -> None:
    original, _, changed = pair("let", {0: "Allow"})  # "Allow me know"
    check = verb_frame_check(original, changed, lexicon, wordnet)
    assert check.passed is False and "bare-infinitive after its object" in str(check.failed)
    original, _, changed = pair("let", {0: "Make"})
    assert verb_frame_check(original, changed, lexicon, wordnet).passed is True


def test_a_phrasal_verb_stays_one(lexicon: PosLexicon, wordnet: Any) -> None:
    original, _, changed = pair("pointed", {1: "referred"})
    check = verb_frame_check(original, changed, lexicon, wordnet)
    assert check.passed is False and check.failed is not None and "referred out" in check.failed
    original, _, changed = pair("pointed", {1: "singled"})
    assert verb_frame_check(original, changed, lexicon, wordnet).passed is True


def test_a_verb_with_no_complement_needs_a_frame_that_is_not_predicative(
    lexicon: PosLexicon, wordnet: Any
) -> None:
    """WordNet lists "Something ----s Adjective/Noun" among the intransitive frames; a
    verb with only such frames (*seem*) wants its complement: "They seemed on the plan"
    is not English where "They worked on the plan" is."""
    original, _, changed = pair("expanded", {1: "seemed"})
    check = verb_frame_check(original, changed, lexicon, wordnet)
    assert check.passed is False and "seemed (seem) wants a complement" in str(check.failed)
    original, _, changed = pair("expanded", {1: "worked"})
    assert verb_frame_check(original, changed, lexicon, wordnet).passed is True


def test_a_reduced_passive_needs_a_transitive_verb(lexicon: PosLexicon, wordnet: Any) -> None:
    """A past participle heading an adverbial clause or modifying a noun with no
    auxiliary or subject of its own is passive: *if interrogated*, *the interrogated report*;
    not *if died*, *the died report*."""
    for name, at in (("needed", 4), ("revised", 2)):
        original, _, changed = pair(name, {at: "interrogated"})
        check = verb_frame_check(original, changed, lexicon, wordnet)
        assert check.passed is True and check.value == ("interrogated:transitive",)
        original, _, changed = pair(name, {at: "died"})
        check = verb_frame_check(original, changed, lexicon, wordnet)
        assert check.passed is False and "no transitive frame" in str(check.failed)


def test_a_bare_time_noun_and_its_deictic_adjective(lexicon: PosLexicon, glove: None) -> None:
    """A bare singular noun phrase that modifies without a preposition is a time word
    (*I left today*, not *I left tyrant*), and *last* or *next* before a bare noun stands
    for its determiner (*last month*, not *early month*); an abbreviation's slot (*5 PM*)
    is left alone."""
    original, _, changed = pair("today", {7: "tyrant"})
    check = count_check(original, changed, lexicon)
    assert check.passed is False and "tyrant is a count noun" in str(check.failed)
    original, _, changed = pair("today", {7: "tomorrow"})
    assert count_check(original, changed, lexicon).passed is True
    original, _, changed = pair("today", {2: "early"})
    check = count_check(original, changed, lexicon)
    assert check.passed is False and "determiner last" in str(check.failed)
    original, _, changed = pair("today", {2: "next"})
    assert count_check(original, changed, lexicon).passed is True
    original, _, changed = pair("today", {6: "TYRANT"})
    assert count_check(original, changed, lexicon).passed is None


def test_last_before_a_bare_month_is_its_determiner(lexicon: PosLexicon, glove: None) -> None:
    """*last September* as *last month*: a proper noun with no determiner of its own
    takes *last* or *next*, not another adjective; *the last week* has its article."""
    original, _, changed = pair("september", {3: "early"})  # "them early September"
    check = count_check(original, changed, lexicon)
    assert check.passed is False and "determiner last" in str(check.failed)
    original, _, changed = pair("september", {3: "next"})
    assert count_check(original, changed, lexicon).passed is True
    original, _, changed = pair("september", {7: "early"})  # "the early big week"
    assert count_check(original, changed, lexicon).passed is None


def test_a_predicate_adjective_slot_takes_no_adjective_that_stands_only_before_a_noun(
    lexicon: PosLexicon,
) -> None:
    """WordNet marks *main* (and *indoor*, *seeming*) as standing only before a noun:
    "That is too main" is not English where "That is too good" is; before a noun
    (*last month → main month*) the check does not apply."""
    original, _, changed = pair("nice", {3: "main"})
    check = adjective_position_check(original, changed, lexicon)
    assert check.passed is False and "main stands only before a noun" in str(check.failed)
    original, _, changed = pair("nice", {3: "good"})
    assert adjective_position_check(original, changed, lexicon).passed is True
    original, _, changed = pair("today", {2: "main"})
    assert adjective_position_check(original, changed, lexicon).passed is None


def test_agreement_of_number_and_of_the_indefinite_article(lexicon: PosLexicon) -> None:
    original, perturbed, changed = pair("books", {3: "book"})
    assert agreement_check(original, changed, lexicon, perturbed).passed is False
    original, perturbed, changed = pair("pear", {3: "apple"})
    check = agreement_check(original, changed, lexicon, perturbed)
    assert check.passed is False and check.failed is not None and "needs an" in check.failed
    original, perturbed, changed = pair("pear", {2: "an", 3: "apple"})
    assert agreement_check(original, changed, lexicon, perturbed).passed is True
    original, perturbed, changed = pair("rate", {1: "prices"})
    assert agreement_check(original, changed, lexicon, perturbed).passed is False


def test_a_quantifier_put_in_agrees_with_its_noun(lexicon: PosLexicon) -> None:
    """*many*, *numerous* ... need a plural noun; *much*, *each* ... a singular one."""
    original, perturbed, changed = pair("books", {2: "much"})  # "much books"
    check = agreement_check(original, changed, lexicon, perturbed)
    assert check.passed is False and "cannot quantify Plur books" in str(check.failed)
    original, perturbed, changed = pair("books", {2: "many"})
    assert agreement_check(original, changed, lexicon, perturbed).passed is True
    original, perturbed, changed = pair("news", {2: "numerous"})  # "numerous news"
    assert agreement_check(original, changed, lexicon, perturbed).passed is False
    original, perturbed, changed = pair("news", {2: "much"})
    assert agreement_check(original, changed, lexicon, perturbed).passed is True


def test_a_noun_slot_does_not_take_its_own_noun_in_the_other_number(
    lexicon: PosLexicon,
) -> None:
    """The lexicon lists *statistics* as a singular too (the field), but in the slot of
    *statistic* it is that noun's plural: "The statistics was employed"."""
    assert "Sing" in (grammar._numbers("statistics", "NOUN", lexicon) or set())
    original, perturbed, changed = pair("statistic", {1: "statistics"})
    check = agreement_check(original, changed, lexicon, perturbed)
    assert check.passed is False and "statistic in the other number" in str(check.failed)
    original, perturbed, changed = pair("statistic", {1: "figure"})
    assert agreement_check(original, changed, lexicon, perturbed).passed is True


def test_degree_and_place_adverb_slots_take_their_own_class(lexicon: PosLexicon) -> None:
    """*too nice* is a degree slot, *stayed away* a place slot: another adverb there
    breaks the construction; *really* before a verb is no degree slot."""
    original, _, changed = pair("nice", {2: "dearly"})  # "dearly nice"
    check = function_adverb_check(original, changed, lexicon)
    assert check.passed is False and "degree adverb too" in str(check.failed)
    for degree in ("extremely", "tremendously"):
        original, _, changed = pair("nice", {2: degree})
        assert function_adverb_check(original, changed, lexicon).passed is True
    original, _, changed = pair("nice", {8: "onwards"})  # "stayed onwards"
    check = function_adverb_check(original, changed, lexicon)
    assert check.passed is False and "place adverb away" in str(check.failed)
    original, _, changed = pair("nice", {8: "home"})
    assert function_adverb_check(original, changed, lexicon).passed is True
    original, _, changed = pair("nice", {6: "obviously"})  # "I obviously stayed"
    assert function_adverb_check(original, changed, lexicon).passed is None
    assert "very" in DEGREE_ADVERBS and "away" in PLACE_ADVERBS
    # a particle between the subject and the verb: "I back stayed away"
    original, _, changed = pair("nice", {6: "back"})
    check = function_adverb_check(original, changed, lexicon)
    assert check.passed is False and "before its verb" in str(check.failed)


def test_a_place_adverb_heading_a_phrase_keeps_its_class() -> None:
    """*somewhere nice*: the pro-form *somewhere* heads *nice*, so another adverb there
    cannot hold the tree ("go habitually nice"); another place pro-form can, and a place
    adverb with no dependent of its own (*stay there*) is left to the function-adverb
    check."""
    original, _, changed = pair("somewhere", {3: "habitually"})
    check = place_phrase_check(original, changed)
    assert check.level == "tree"
    assert check.passed is False and "place pro-form somewhere" in str(check.failed)
    original, _, changed = pair("somewhere", {3: "anywhere"})
    assert place_phrase_check(original, changed).passed is True
    original, _, changed = pair("somewhere", {7: "calmly"})
    assert place_phrase_check(original, changed).passed is None
    # a particle's complement is not a pro-form's modifier: "staying onwards from"
    original, _, changed = pair("nice", {8: "onwards"})
    assert place_phrase_check(original, changed).passed is None


def test_a_mass_slot_takes_no_count_only_noun(lexicon: PosLexicon, glove: None) -> None:
    """*a lot of bass*, *all my travel*: a singular noun there is a mass noun ("a lot of
    vocalist", "all my tourist" are not English); a mass noun still fits."""
    for index, count in ((10, "vocalist"), (5, "tourist")):
        original, _, changed = pair("lot", {index: count})
        check = count_check(original, changed, lexicon)
        assert check.passed is False and "only a mass noun" in str(check.failed)
    original, _, changed = pair("lot", {10: "music"})
    assert count_check(original, changed, lexicon).passed is True


def test_an_adjective_object_of_a_preposition_is_a_fixed_phrase(lexicon: PosLexicon) -> None:
    """*for sure*: another adjective there is not English ("for extant"), but its
    synonym is (*for certain*)."""
    original, _, changed = pair("sure", {4: "extant"})
    check = fixed_phrase_check(original, changed, lexicon)
    assert check.passed is False and "fixed phrase of sure" in str(check.failed)
    original, _, changed = pair("sure", {4: "certain"})
    assert fixed_phrase_check(original, changed, lexicon).passed is True
    original, _, changed = pair("sure", {1: "love"})  # no such slot changed
    assert fixed_phrase_check(original, changed, lexicon).passed is None


def test_a_relative_clause_without_a_relative_word_has_its_object_gap(
    lexicon: PosLexicon, wordnet: Any
) -> None:
    """*something you find*: the gap is find's object, so its new verb needs an object
    frame ("something you **crawl**" is not English); *the day we arrived*: the gap is
    the time, and an intransitive verb fits."""
    original, _, changed = pair("carnival", {3: "crawl"})
    check = verb_frame_check(original, changed, lexicon, wordnet)
    assert check.passed is False and "crawl (crawl) has no transitive frame" in str(check.failed)
    original, _, changed = pair("carnival", {3: "buy"})
    assert verb_frame_check(original, changed, lexicon, wordnet).passed is True
    original, _, changed = pair("carnival", {11: "slept"})  # left unjudged, as before
    check = verb_frame_check(original, changed, lexicon, wordnet)
    assert check.passed is None and check.value == ("slept:other",)


def test_count_and_mass_noun_slots(lexicon: PosLexicon, glove: None) -> None:
    original, _, changed = pair("news", {3: "subplot"})
    assert count_check(original, changed, lexicon).passed is False
    original, _, changed = pair("news", {3: "information"})
    assert count_check(original, changed, lexicon).passed is True
    original, _, changed = pair("loved", {3: "film"})  # "the": any noun
    assert count_check(original, changed, lexicon).passed is None
    original, _, changed = pair("pear", {3: "information"})  # "a" needs a count noun
    assert count_check(original, changed, lexicon).passed is False
    original, _, changed = pair("pear", {3: "plum"})
    assert count_check(original, changed, lexicon).passed is True


def test_surprisal_where_the_changed_words_construction_continues() -> None:
    original, _, changed = pair("expanded", {1: "expected"})
    # "on" (next, and the obl's start); not the full stop, which the verb does not select
    assert continuations(original, 1) == [2]
    assert continuation_classes(original, [2]) == {}  # function words count as such
    before = np.zeros(6)
    # the changed word's own surprisal is not judged: a rare word costs more
    fine = surprisal_check(original, changed, before, np.array([0, 30.0, 1.0, 0, 0, 0]))
    assert fine.passed is True
    broken = surprisal_check(original, changed, before, np.array([0, 9.0, 9.0, 0, 0, 0]))
    assert broken.passed is False and broken.value == (9.0, 0.0)
    # a content word continues the construction as its class: the class's surprisal
    original, _, changed = pair("rate", {2: "fell"})
    assert continuations(original, 2) == [3]  # "quickly"
    assert continuation_classes(original, [3]) == {3: "ADV"}
    before = np.zeros(5)
    assert surprisal_check(original, changed, before, np.array([0, 0, 0, 3.0, 0])).passed
    worse = surprisal_check(original, changed, before, np.array([0, 0, 0, 5.0, 0]))
    assert worse.passed is False and worse.value == (0.0, 5.0)
    # the noun an adjective modifies is a collocation, not a continuation
    original, _, _ = pair("books", {2: "fine"})
    assert continuations(original, 2) == []
    # nor does anything after a noun continue it; with nothing to read, unknown
    original, _, changed = pair("loved", {3: "film"})
    assert continuations(original, 3) == []
    assert surprisal_check(original, changed, np.zeros(5), np.zeros(5)).passed is None


# ------------------------------------------------------------------ meaning level
def test_synonymy_in_a_common_sense(lexicon: PosLexicon, wordnet: Any) -> None:
    original, _, changed = pair("loved", {3: "film"})
    assert synonymy_check(original, changed, lexicon, wordnet).passed is True
    original, _, changed = pair("loved", {3: "table"})
    assert synonymy_check(original, changed, lexicon, wordnet).passed is False
    # movie.n.01 is the sixth sense of "picture": a reader takes it in another one
    original, _, changed = pair("loved", {3: "picture"})
    check = synonymy_check(original, changed, lexicon, wordnet)
    assert check.passed is False and check.value == ("movie.n.01#1/6",)
    original, _, changed = pair("loved", {3: "pic"})  # its first sense
    assert synonymy_check(original, changed, lexicon, wordnet).value == ("movie.n.01#1/1",)
    original, _, changed = pair("pear", {2: "an"})  # one word, two spellings
    assert synonymy_check(original, changed, lexicon, wordnet).value == ("same",)
    # British and American spelling: one word, whatever WordNet's sense order says
    original, _, changed = pair("color", {3: "colour"})
    check = synonymy_check(original, changed, lexicon, wordnet)
    assert check.passed is True and check.value == ("spelling",)


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("colour", "color", True),
        ("behaviours", "behaviors", True),
        ("analysing", "analyzing", True),
        ("organisation", "organization", True),
        ("centre", "center", True),
        ("travelled", "traveled", True),
        ("catalogue", "catalog", True),
        ("color", "color", False),  # not its own variant
        ("four", "for", False),
        ("hour", "hor", False),
        ("filled", "filed", False),
        ("planning", "planing", False),
        ("rise", "rize", False),
        ("acre", "acer", False),
    ],
)
def test_spelling_variants(a: str, b: str, same: bool) -> None:
    assert spelling_variant(a, b) is same and spelling_variant(b, a) is same
    assert similarity_check(0.99).passed is True
    assert similarity_check(0.5).passed is False


# ------------------------------------------------------------------ records
def test_levels_nest_and_unknown_does_not_fail() -> None:
    words = (ChangedWord(0, "a", "b"),)
    unknown = Check("retag", "tree", "m", (0, 0, 1), passed=None)
    bad_meaning = Check("synonymy", "meaning", "m", ("none",), passed=False, failed="x")
    grade = Grade("s1", "copos", words, (unknown, bad_meaning))
    assert (grade.tree_valid, grade.grammatical, grade.meaning_kept) == (True, True, False)
    bad_tree = Check("form", "tree", "m", ("NN",), passed=False, failed="y")
    grade = Grade("s1", "copos", words, (bad_tree, unknown))
    assert (grade.tree_valid, grade.grammatical, grade.meaning_kept) == (False, False, False)
    data = grade.to_json()
    assert data["failed"] == ["form"]
    assert data["changed"] == [{"position": 1, "original": "a", "new": "b"}]
    evidence = data["evidence"]
    assert isinstance(evidence, dict) and set(evidence) == {"form", "retag"}
    summary = summarize_grades([grade, Grade("s2", "copos", (), graded=False, reason="r")])
    assert summary.overall.graded == 1 and summary.overall.not_graded == 1
    assert summary.overall.share("tree") == 0.0


def test_reorderings_and_other_word_counts_are_not_graded() -> None:
    original = sentence("loved")
    swapped = read_conllu_text(block("loved", ROWS["loved"], {2: "movie", 3: "the"}))[0]
    assert "reordered" in str(changed_words_of(original, swapped))
    shorter = read_conllu_text(block("loved", ROWS["loved"][:-1]))
    assert changed_words_of(original, shorter[0]) == "4 words where the original has 5"
    assert changed_words_of(original, original) == ()
    grades = Grader().grade([original, original], [swapped, original])
    assert [g.graded for g in grades] == [False, True]
    assert grades[0].reason is not None and grades[0].tree_valid is None


# ------------------------------------------------------------------ input mistakes
def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _grade(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["grade", *args])
    return result.exit_code, result.output


@pytest.fixture
def original_file(tmp_path: Path) -> Path:
    return _write(tmp_path, "gold.conllu", "".join(block(n, r) for n, r in ROWS.items()))


def test_a_perturbed_sentence_without_sent_id_is_one_line(
    tmp_path: Path, original_file: Path
) -> None:
    bad = _write(tmp_path, "p.conllu", block("loved", ROWS["loved"], {3: "film"}, with_id=False))
    code, output = _grade(str(original_file), str(bad))
    assert code == 2
    assert (
        output
        == f"error: {bad}:1: sentence has no '# sent_id': it cannot be paired with an original\n"
    )


def test_another_word_count_is_one_line_unless_skipped(tmp_path: Path, original_file: Path) -> None:
    bad = _write(tmp_path, "p.conllu", block("loved", ROWS["loved"][:-1]))
    code, output = _grade(str(original_file), str(bad))
    assert code == 2
    assert output.startswith(f"error: {bad}:1: sentence 'loved' has 4 words but the original has 5")
    assert output.count("\n") == 1
    run = grade_files(original_file, bad, skip_mismatched=True)
    assert [(g.graded, g.reason) for g in run.grades] == [
        (False, "4 words where the original has 5")
    ]


def test_an_unknown_sent_id_and_a_file_that_is_not_conllu_are_one_line(
    tmp_path: Path, original_file: Path
) -> None:
    stray = _write(tmp_path, "p.conllu", block("elsewhere", ROWS["loved"], {3: "film"}))
    code, output = _grade(str(original_file), str(stray))
    assert code == 2 and output.count("\n") == 1
    assert f"{stray}:1: sentence 'elsewhere' is not in {original_file}" in output
    text = _write(tmp_path, "notes.txt", "this is not a treebank\n")
    code, output = _grade(str(original_file), str(text))
    assert code == 2 and output.count("\n") == 1 and output.startswith(f"error: {text}:1:")
    with pytest.raises(BrittleInputError):
        grade_files(text, original_file)


# ------------------------------------------------------------------ end to end
needs_models = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


@pytest.mark.needs("spacy-model")
@needs_models
def test_grade_end_to_end(
    tmp_path: Path,
    original_file: Path,
    wordnet: Any,
    glove: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BRITTLE_PARSE_HELPERS", "0")  # no helper process for 3 sentences
    perturbed = _write(
        tmp_path,
        "p.conllu",
        block("loved", ROWS["loved"], {3: "film"})
        + block("rate", ROWS["rate"], {1: "or"}, "random")
        + block("books", ROWS["books"]),
    )
    out = tmp_path / "grades.jsonl"
    code, output = _grade(str(original_file), str(perturbed), "--json", str(out))
    assert code == 0, output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [g["sent_id"] for g in lines] == ["loved", "rate"]
    film, rate = lines
    assert (film["tree_valid"], film["grammatical"], film["meaning_kept"]) == (True, True, True)
    assert film["changed"] == [{"position": 4, "original": "movie", "new": "film"}]
    assert rate["tree_valid"] is False and "closed-class" in rate["failed"]
    # the LM and the encoder run only where their level still holds
    for name in ("surprisal", "similarity"):
        assert rate["evidence"][name]["passed"] is None
        assert rate["evidence"][name]["value"].startswith("not measured: failed already on")
    for name in ("retag", "attachment", "surprisal", "similarity", "synonymy"):
        evidence = film["evidence"][name]
        assert {"measured", "value", "threshold", "passed", "failed"} <= set(evidence)
    assert "copos" in output and "random" in output and "1 sentence(s) unchanged" in output
    # standard output carries only the grades; the table goes to stderr
    result = CliRunner().invoke(main, ["grade", str(original_file), str(perturbed), "--json", "-"])
    assert result.exit_code == 0
    assert [json.loads(x)["sent_id"] for x in result.stdout.splitlines()] == ["loved", "rate"]


@pytest.mark.needs("spacy-model")
@needs_models
def test_grade_pairs_batches_one_parser_call(wordnet: Any, glove: None) -> None:
    from brittle.scorers.parsers import make_parser

    parser = make_parser("spacy", helpers=0)
    originals = [sentence("loved"), sentence("books"), sentence("pear")]
    perturbed = [pair("loved", {3: "film"})[1], pair("books", {3: "novels"})[1], originals[2]]
    grades = grade_pairs(originals, perturbed, parser=parser)
    assert [g.sent_id for g in grades] == ["loved", "books", "pear"]
    assert parser.stats.batches == 1  # type: ignore[attr-defined]
    assert grades[1].tree_valid is True and grades[2].checks == ()
    # every check measured on request, with the same verdicts
    rate = pair("rate", {1: "or"})
    lazy, complete = (
        grade_pairs([rate[0]], [rate[1]], parser=parser, complete=flag)[0] for flag in (False, True)
    )
    assert "closed-class" in lazy.failed_checks()
    assert {c.name: c.passed for c in lazy.checks}["surprisal"] is None
    measured = {c.name: c for c in complete.checks}
    assert (
        isinstance(measured["surprisal"].value, tuple) and measured["similarity"].passed is not None
    )
    assert (lazy.tree_valid, lazy.grammatical, lazy.meaning_kept) == (
        complete.tree_valid,
        complete.grammatical,
        complete.meaning_kept,
    )


def _class_bits(lm: Any, sentence: Sentence, word: int, token_ids: Any) -> float:
    """The surprisal of a class at the first token of ``word``, the sentence read whole."""
    import math

    import torch

    from brittle.search.validity.surprisal import sentence_text

    text, spans = sentence_text(sentence)
    enc = lm.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    a, b = spans[word]
    first = next(t for t, (_, end) in enumerate(enc["offset_mapping"]) if a <= end - 1 < b)
    ids = torch.tensor([[lm.tokenizer.bos_token_id, *enc["input_ids"]]])
    with torch.inference_mode():
        logp = lm.model(input_ids=ids).logits[0, first].float().log_softmax(-1)
    return -float(torch.logsumexp(logp[torch.as_tensor(token_ids)], 0)) / math.log(2.0)


@pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
def test_pair_surprisals_are_the_scores_of_each_sentence_read_whole(lexicon: PosLexicon) -> None:
    """The shortcuts of ``pair_surprisals`` (an original read once for all its
    perturbations, a perturbation read from its first changed token on the original's
    cache, logits only at the wanted words) give the plain computation's numbers, for
    words and for the classes of content words."""
    from dataclasses import replace

    from brittle.search.sentence_models import surprisal_model
    from brittle.search.validity.surprisal import (
        class_tokens,
        pair_surprisals,
        word_surprisals,
    )

    fixtures = Path(__file__).parent / "fixtures"
    by_id = {s.sent_id: s for s in read_conllu(fixtures / "quality_original.conllu")}
    olds: list[Sentence] = []
    news: list[Sentence] = []
    for p in read_conllu(fixtures / "quality_perturbed.conllu"):
        o = by_id[p.sent_id]
        diff = changed_words_of(o, p)
        if isinstance(diff, tuple) and diff:
            olds.append(o)
            news.append(p)
    # two more perturbations of the first original: its first word, and its last
    first = olds[0]
    for i, form in ((0, "Was"), (len(first) - 1, "!")):
        olds.append(first)
        news.append(first.with_words({i: replace(first.words[i], form=form)}))
    upto: list[int] = []
    wanted: list[set[int]] = []
    for o, p in zip(olds, news, strict=True):
        diff = changed_words_of(o, p)
        assert isinstance(diff, tuple)
        words = {j for w in diff for j in (w.index, w.index + 1) if j < len(o)}
        words |= {j for w in diff for j in continuations(o, w.index)}
        upto.append(max(words))
        wanted.append(words)
    lm = surprisal_model(None).lm
    whole = word_surprisals(lm, [*olds, *news])
    m = len(olds)
    for batch_size in (16, 2):
        bits_o, bits_p = pair_surprisals(
            lm, olds, news, upto=upto, wanted=wanted, batch_size=batch_size
        )
        for k in range(m):
            at = sorted(wanted[k])
            np.testing.assert_allclose(bits_o[k][at], whole[k][at], atol=2e-3)
            np.testing.assert_allclose(bits_p[k][at], whole[m + k][at], atol=2e-3)
            rest = [j for j in range(len(olds[k])) if j not in wanted[k]]
            assert not bits_o[k][rest].any() and not bits_p[k][rest].any()
    # every word up to the end when none are named
    bits_o, bits_p = pair_surprisals(lm, olds, news, upto=[len(o) - 1 for o in olds])
    for k in range(m):
        np.testing.assert_allclose(bits_o[k], whole[k], atol=2e-3)
        np.testing.assert_allclose(bits_p[k], whole[m + k], atol=2e-3)
    # content words by their class, at their first token
    tokens_of = class_tokens(lm, lexicon)
    classes = [continuation_classes(o, words) for o, words in zip(olds, wanted, strict=True)]
    assert sum(map(len, classes)) >= 5
    bits_o, bits_p = pair_surprisals(
        lm, olds, news, upto=upto, wanted=wanted, classes=classes, tokens_of=tokens_of
    )
    for k in range(m):
        for j in wanted[k]:
            if j in classes[k]:
                ids = tokens_of[classes[k][j]]
                assert bits_o[k][j] == pytest.approx(_class_bits(lm, olds[k], j, ids), abs=2e-3)
                assert bits_p[k][j] == pytest.approx(_class_bits(lm, news[k], j, ids), abs=2e-3)
            else:
                assert bits_o[k][j] == pytest.approx(whole[k][j], abs=2e-3)
                assert bits_p[k][j] == pytest.approx(whole[m + k][j], abs=2e-3)


@pytest.mark.needs("spacy-model")
@needs_models
def test_the_judged_constraint_keeps_what_the_judges_grade_valid(wordnet: Any, glove: None) -> None:
    """``judged:LEVEL`` admits a candidate exactly when the grader, run on the same pair,
    grades it valid at LEVEL; a reordering cannot be graded and is rejected."""
    from brittle.engine.core.errors import ConfigError
    from brittle.engine.core.perturbation import Perturbation
    from brittle.scorers.parsers import make_parser
    from brittle.search.constraints import (
        CandidateBatch,
        ConstraintContext,
        ConstraintSpec,
        build_constraints,
    )
    from brittle.search.constraints.judged import JudgedConstraint, level_holds

    parser = make_parser("spacy", helpers=0)
    context = ConstraintContext(tau=2, parser=lambda: parser)
    original = sentence("loved")
    swaps = [("film", "film"), ("could", "could"), ("adored", "adore"), ("zorbled", "_")]
    perturbations = [
        Perturbation("loved", "copos", (3 if form == "film" else 1,), (form,), (lemma,))
        for form, lemma in swaps
    ]
    shuffled = Perturbation("loved", "shuffle", order=(3, 1, 2, 0, 4))
    batch = CandidateBatch.build(original, [*perturbations, shuffled])
    grades = Grader(parser=parser).grade([original] * len(batch), list(batch.sentences))
    seen: dict[str, list[bool]] = {}
    for level in ("tree", "grammatical", "meaning"):
        (judged,) = build_constraints([f"judged:{level}"], context)
        assert isinstance(judged, JudgedConstraint) and judged.level == level
        (result,) = judged.check_many([batch])
        expected = [level_holds(g, level) is True for g in grades]
        assert result.mask.tolist() == expected
        assert np.isnan(result.values[-1]) and not result.mask[-1]  # the reordering
        seen[level] = result.mask.tolist()
    # the levels nest, and the swaps span them: some valid, some not
    for low, high in (("tree", "grammatical"), ("grammatical", "meaning")):
        assert all(a or not b for a, b in zip(seen[low], seen[high], strict=True))
    assert any(seen["meaning"]) and not all(seen["tree"][:-1])
    assert build_constraints(["judged"], context)[0].describe()["level"] == "grammatical"
    with pytest.raises(ConfigError, match="unknown level"):
        ConstraintSpec.parse("judged:fluent")


def test_a_pair_graded_again_gets_its_grade_until_the_texts_are_forgotten(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The judges run once per pair and grader settings: a second call (the attack's
    final grading after its ``judged`` constraint) reads the grade back, a grader with
    other settings grades anew, and ``forget_texts`` empties what was kept."""
    from brittle.search.sentence_models import forget_texts
    from brittle.search.validity import grade as grading

    name = next(iter(ROWS))
    original, perturbed, _ = pair(name, {1: "cat"})
    calls: list[int] = []

    def graded(self: grading.Grader, originals: Any, pairs: Any, diffs: Any) -> list[Any]:
        calls.append(len(pairs))
        return [grading.Grade(p.sent_id, "test", d) for p, d in zip(pairs, diffs, strict=True)]

    monkeypatch.setattr(grading.Grader, "_grade_changed", graded)
    first = grading.Grader(parser="gold").grade([original], [perturbed])
    again = grading.Grader(parser="gold").grade([original, original], [perturbed, original])
    assert calls == [1] and again[0] is first[0]
    assert again[1].changed == ()  # nothing changed: valid, no evidence, never graded
    grading.Grader(parser="gold", complete=True).grade([original], [perturbed])
    assert calls == [1, 1]  # other settings: graded anew
    forget_texts()
    grading.Grader(parser="gold").grade([original], [perturbed])
    assert calls == [1, 1, 1]
