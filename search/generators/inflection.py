"""Inflection and casing helpers shared by the substitution generators.

- :func:`target_tag` decides the Penn Treebank tag a replacement must carry, from the
  original word's XPOS when it is a PTB tag of the right word class, else from UPOS and
  FEATS (so treebanks with other XPOS tag sets work too).
- :func:`inflect_lemma` inflects a real English lemma with ``lemminflect`` (irregular
  forms from its lexicon).
- :func:`regular_inflection` inflects a made-up stem by the regular spelling rules of
  English (``-s``/``-es``/``-ies``, ``-ing`` with e-drop and consonant doubling,
  ``-ed``, ``-er``/``-est``), for pseudowords.
- :func:`match_case` copies the capitalisation pattern of the original word.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

__all__ = [
    "BASE_TAGS",
    "TAG_FAMILY",
    "inflect_lemma",
    "match_case",
    "regular_inflection",
    "target_tag",
]

#: The inflectable PTB tags, by UPOS.
TAG_FAMILY: dict[str, frozenset[str]] = {
    "NOUN": frozenset({"NN", "NNS"}),
    "VERB": frozenset({"VB", "VBP", "VBZ", "VBD", "VBN", "VBG"}),
    "ADJ": frozenset({"JJ", "JJR", "JJS"}),
    "ADV": frozenset({"RB", "RBR", "RBS"}),
}
#: Tags whose form is the lemma itself.
BASE_TAGS: frozenset[str] = frozenset({"NN", "VB", "JJ", "RB"})
# Periphrastic degrees ("more important") have no one-word form: never invent one.
_NO_OOV_TAGS = frozenset({"JJR", "JJS", "RBR", "RBS"})
_VOWELS = frozenset("aeiou")


def target_tag(upos: str, xpos: str, feats: Mapping[str, str]) -> str | None:
    """The PTB tag a replacement of this word must have, or ``None`` (not inflectable).

    XPOS is used when it is a PTB tag of the UPOS's family (``NNS`` for a NOUN);
    otherwise the tag is derived from FEATS: ``Number`` for nouns, ``VerbForm``,
    ``Tense``, ``Person``, ``Number`` for verbs, ``Degree`` for adjectives and adverbs.
    """
    family = TAG_FAMILY.get(upos)
    if family is None:
        return None
    if xpos in family:
        return xpos
    if upos == "NOUN":
        return "NNS" if feats.get("Number") == "Plur" else "NN"
    if upos in ("ADJ", "ADV"):
        base = "JJ" if upos == "ADJ" else "RB"
        degree = feats.get("Degree")
        return base + ("R" if degree == "Cmp" else "S" if degree == "Sup" else "")
    form = feats.get("VerbForm")
    tense = feats.get("Tense")
    if form == "Ger" or (form == "Part" and tense == "Pres"):
        return "VBG"
    if form == "Part":
        return "VBN"
    if form == "Fin":
        if tense == "Past":
            return "VBD"
        if feats.get("Person") == "3" and feats.get("Number") == "Sing":
            return "VBZ"
        return "VBP"
    return "VB"


def load_inflections() -> None:
    """Import ``lemminflect`` and load its inflection tables (about a second, once)."""
    from lemminflect import getAllInflections

    getAllInflections("be")


@lru_cache(maxsize=65536)
def inflect_lemma(lemma: str, tag: str) -> str | None:
    """``lemma`` inflected for the PTB ``tag`` with ``lemminflect``, or ``None``.

    Base tags return the lemma. Comparatives and superlatives are only taken from the
    lexicon (``larger``, ``best``): a lemma without a one-word degree form gives ``None``
    instead of an invented ``importanter``. Other tags fall back to lemminflect's rules
    for words outside its lexicon.
    """
    if tag in BASE_TAGS:
        return lemma
    from lemminflect import getInflection

    forms = getInflection(lemma, tag=tag, inflect_oov=tag not in _NO_OOV_TAGS)
    return forms[0] if forms else None


def match_case(template: str, word: str) -> str:
    """``word`` with the capitalisation pattern of ``template``.

    ALL CAPS (two letters or more) gives ALL CAPS; a capital first letter gives a capital
    first letter; otherwise ``word`` is returned lowercased.
    """
    letters = [c for c in template if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return word.upper()
    if template[:1].isupper():
        return word[:1].upper() + word[1:].lower()
    return word.lower()


# ------------------------------------------------------------ regular morphology
def _is_consonant(ch: str) -> bool:
    return ch.isalpha() and ch not in _VOWELS


def _vowel_groups(word: str) -> int:
    groups = 0
    prev = False
    for ch in word:
        vowel = ch in _VOWELS or (ch == "y" and groups > 0)
        if vowel and not prev:
            groups += 1
        prev = vowel
    return groups


def _doubles_final(stem: str) -> bool:
    """Consonant-vowel-consonant ending of a one-syllable stem (``stop`` -> ``stopped``)."""
    if len(stem) < 3:
        return False
    a, v, c = stem[-3], stem[-2], stem[-1]
    return (
        _is_consonant(a)
        and v in _VOWELS
        and _is_consonant(c)
        and c not in "wxy"
        and _vowel_groups(stem) == 1
    )


def _plural_s(stem: str) -> str:
    if stem.endswith(("s", "x", "z", "ch", "sh")):
        return stem + "es"
    if len(stem) > 1 and stem.endswith("y") and _is_consonant(stem[-2]):
        return stem[:-1] + "ies"
    return stem + "s"


def _suffix_vowel(stem: str, suffix: str) -> str:
    """Add a suffix starting with a vowel (``ed``, ``er``, ``est``), regular spelling."""
    if stem.endswith("e"):
        return stem + suffix[1:]
    if len(stem) > 1 and stem.endswith("y") and _is_consonant(stem[-2]):
        return stem[:-1] + "i" + suffix
    if _doubles_final(stem):
        return stem + stem[-1] + suffix
    return stem + suffix


def _ing(stem: str) -> str:
    if stem.endswith("ie"):
        return stem[:-2] + "ying"
    if stem.endswith("e") and not stem.endswith(("ee", "ye", "oe")) and len(stem) > 2:
        return stem[:-1] + "ing"
    if _doubles_final(stem):
        return stem + stem[-1] + "ing"
    return stem + "ing"


def regular_inflection(stem: str, tag: str) -> str:
    """``stem`` (lowercase letters) inflected for a PTB ``tag`` by regular English rules.

    ``NNS``/``VBZ``: ``-s``, ``-es`` after sibilants, ``-ies`` after consonant + y.
    ``VBD``/``VBN``: ``-ed`` (``-d`` after e, ``-ied``, doubled final consonant).
    ``VBG``: ``-ing`` (``-ying`` for ie, e dropped, doubled final consonant).
    ``JJR``/``RBR``: ``-er``; ``JJS``/``RBS``: ``-est`` (same spelling rules as ``-ed``).
    Base tags (and any other tag) return the stem.
    """
    if tag in ("NNS", "VBZ"):
        return _plural_s(stem)
    if tag in ("VBD", "VBN"):
        return _suffix_vowel(stem, "ed")
    if tag == "VBG":
        return _ing(stem)
    if tag in ("JJR", "RBR"):
        return _suffix_vowel(stem, "er")
    if tag in ("JJS", "RBS"):
        return _suffix_vowel(stem, "est")
    return stem
