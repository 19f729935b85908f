"""Which word slots a generator that means to keep the tree may fill, and with what tag.

A substitution keeps the gold tree when the new word can only be read the way the old
one was: same fine tag, same features, and nothing about its shape or capitals that
suggests another kind of expression. The slots where an English word's form shows its
fine tag are those of regular inflection, the classes of Hall Maudslay & Cotterell's
footnote 4 (common nouns singular and plural; verbs as infinitive, present and
present participle; adjectives in every degree; adverbs that are not function words),
with the regular past forms added for ``slots=regular``. Adverbs are limited to the
``-ly`` manner adverbs: *where*, *also*, *soon* are closed-class words whose
replacement by an open-class adverb changes the construction.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from brittle.engine.core.sentence import Sentence
from brittle.search.generators.eligibility import FUNCTION_ADVERBS
from brittle.search.generators.inflection import target_tag
from brittle.search.generators.usage import deictic_determiner

__all__ = [
    "KEPT_LEMMAS",
    "PAPER_TAGS",
    "REGULAR_TAGS",
    "Slots",
    "common_case",
    "demonym",
    "kept_slot",
    "kept_word",
    "proper_adjective",
    "slot_tag",
]

#: Which slots a generator fills: every eligible content word (``content``), the
#: regularly inflected ones (``regular``) or those of the paper's footnote 4 (``paper``).
Slots = Literal["content", "regular", "paper"]

#: Fine tags of the paper's footnote 4 (Hall Maudslay & Cotterell), by UPOS: the slots
#: whose regular forms a new word can take (adverbs: ``-ly`` manner adverbs only).
PAPER_TAGS: dict[str, frozenset[str]] = {
    "NOUN": frozenset({"NN", "NNS"}),
    "VERB": frozenset({"VB", "VBP", "VBZ", "VBG"}),
    "ADJ": frozenset({"JJ", "JJR", "JJS"}),
    "ADV": frozenset({"RB"}),
}
#: :data:`PAPER_TAGS` with the regular past forms (``-ed``) of verbs.
REGULAR_TAGS: dict[str, frozenset[str]] = {
    **PAPER_TAGS,
    "VERB": PAPER_TAGS["VERB"] | {"VBD", "VBN"},
}


#: Lemmas that keep their word in every slot a regular-slot generator fills: *be* (the
#: existential "there is no proof" has no other verb: "there nints no flift") and the
#: quantifying adjectives, which UD tags ADJ but which work as determiners or degree
#: words ("a few of the pictures" -> "a frutch of the pictures", "a little confusing"
#: -> "a cront confusing" read as nouns). Written by hand: a short, closed list.
KEPT_LEMMAS: frozenset[str] = frozenset(
    {"be", "few", "little", "many", "much", "several", "enough", "more", "most", "less",
     "least", "fewer", "fewest"}
)  # fmt: skip


def kept_word(lemma: str, form: str) -> bool:
    """Whether the word keeps its form in a regular slot (:data:`KEPT_LEMMAS`)."""
    return lemma.lower() in KEPT_LEMMAS or form.lower() in KEPT_LEMMAS


def kept_slot(sentence: Sentence, index: int) -> bool:
    """Whether the word at 0-based ``index`` keeps its form in a regular slot: a word of
    :data:`KEPT_LEMMAS`, or *last* or *next* as the determiner of a bare noun
    (:func:`~brittle.search.generators.usage.deictic_determiner`: "papers *last*
    September" has no reading with another adjective or a nonword there)."""
    word = sentence.words[index]
    return kept_word(word.lemma, word.form) or deictic_determiner(sentence, index)


def common_case(form: str, position: int) -> bool:
    """Whether ``form`` is written as a common word: lowercase, or capitalised as the
    first word of the sentence. A capital elsewhere marks a name or a title (*United*
    States, *Southern* Senegal, the *F* statistic), a word in capitals a heading or an
    acronym: a new word there changes what kind of expression it is."""
    return form.islower() or (position == 0 and form.istitle())


#: Relations of a capitalised adjective that is part of a name or a run of words, not a
#: modifier or predicate of its own (*New* in a `flat` name, a `compound`).
_NAME_RELATIONS = frozenset({"flat", "compound", "fixed", "goeswith", "list"})


def proper_adjective(sentence: Sentence, index: int) -> bool:
    """Whether word ``index`` is a proper adjective standing on its own inside the
    sentence: an ADJ tagged ``JJ``, written with one capital (*Iraqi* troops, a *Sunni*
    cleric, which is *Muslim*), not the first word, not part of a name by its relation,
    and with no capitalised neighbour (a run of capitals is a name or a title: *Most
    Costly Weather*). A pseudoword there reads as an adjective only when its shape says
    so (:func:`demonym`)."""
    word = sentence.words[index]
    form = word.form
    if index == 0 or word.upos != "ADJ" or word.xpos != "JJ":
        return False
    if not (form[:1].isupper() and form[1:].islower() and form.isalpha()):
        return False
    if word.deprel.split(":")[0] in _NAME_RELATIONS:
        return False
    forms = sentence.forms
    return not any(forms[j][:1].isupper() for j in (index - 1, index + 1) if 0 < j < len(forms))


def demonym(stem: str) -> str:
    """A stem shaped as a proper adjective: ``-ian`` after it, a final vowel dropped
    (*flurg* -> *flurgian*, *blora* -> *blorian*), as *Iranian*, *Bostonian*."""
    trimmed = stem.rstrip("aeiouy")
    return (trimmed if len(trimmed) >= 2 else stem) + "ian"


def slot_tag(upos: str, xpos: str, feats: Mapping[str, str], form: str, slots: Slots) -> str | None:
    """The fine tag a new word in this slot takes, or ``None`` when ``slots`` leaves the
    slot alone; ``content`` takes every slot, with the tag of
    :func:`~brittle.search.generators.inflection.target_tag` (``None`` there: the bare
    form)."""
    tag = target_tag(upos, xpos, feats)
    if slots == "content":
        return tag
    allowed = (PAPER_TAGS if slots == "paper" else REGULAR_TAGS).get(upos, frozenset())
    if tag not in allowed:
        return None
    if upos == "ADV":
        low = form.lower()
        if not low.endswith("ly") or low in FUNCTION_ADVERBS or len(low) < 4:
            return None
    return tag
