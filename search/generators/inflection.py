"""Inflection and casing helpers shared by the substitution generators.

- :func:`target_tag` decides the Penn Treebank tag a replacement must carry, from the
  original word's XPOS when it is a PTB tag of the right word class, else from UPOS and
  FEATS (so treebanks with other XPOS tag sets work too).
- :func:`inflect_lemma` inflects a real English lemma, and returns ``None`` rather than
  a broken form (see below).
- :func:`regular_inflection` inflects a made-up stem by the regular spelling rules of
  English (``-s``/``-es``/``-ies``, ``-ing`` with e-drop and consonant doubling,
  ``-ed``, ``-er``/``-est``), for pseudowords; :func:`regular_is_safe` says when those
  rules can be trusted on a word nobody has listed.
- :func:`match_case` copies the capitalisation pattern of the original word.

How :func:`inflect_lemma` decides, in order:

1. ``be`` agrees with FEATS for ``VBD``/``VBP`` (``was``/``were``, ``am``/``are``);
   a small table of forms lemminflect lacks or gets wrong comes next (``ox`` ->
   ``oxen``, ``person`` -> ``people``, ``sting`` -> ``stinging``, American ``lit`` /
   ``spelled`` rather than ``lighted`` / ``spelt``).
2. Uncountable nouns (``information``, ``advice``, ``furniture``) have no plural:
   ``NNS`` gives ``None``.
3. A word that is already an inflected form of another lemma of the class
   (``masses`` of ``mass``, ``authorities``, ``consisted``, ``oxen``) is never
   inflected again: it is returned as is for the tag it already has (``masses`` for
   ``NNS``) and gives ``None`` for any other tag (no ``masseses``; ``masses`` is no
   ``NN``). When the lexicon also lists the word as a lemma, that entry wins if the
   lexicon names the word first among its lemmas (``feed`` -> ``fed``, although
   ``feed`` is also the past of ``fee``); a plural stays itself for ``NNS``
   (``bacteria``, not ``bacterias``).
4. A lemma in lemminflect's lexicon takes the lexicon's first form (``VBD``/``VBN``
   and adjective/adverb degrees fall back on each other as in lemminflect). A noun
   whose only listed plural is itself is a plural-only or invariant noun when it looks
   plural or is listed (``trousers``, ``cattle``, ``sheep``: kept for ``NNS``, ``None``
   for ``NN``) and a mass noun otherwise (``NNS`` gives ``None``).
5. A word lemminflect does not know at all is inflected by the regular rules only
   when they are safe (:func:`regular_is_safe`: no Latin or Greek noun ending such as
   ``nervus``, no ending that already looks inflected, no stress-dependent doubling);
   otherwise ``None``. A word it knows only in another class (``selected``, a verb
   form, asked for as a noun) gets ``None`` too, and one-word degrees (``-er``/``-est``)
   are never invented.

Lexicon forms with a known misspelling are respelled (``freeer`` -> ``freer``) or
refused (a ``VBG`` form without ``-ing``, a past tense in ``-ing``). Base tags (``NN``,
``VB``, ``VBP``, ``JJ``, ``RB``) return the lemma itself unless rule 3 or 4 rules it
out. Hyphenated compounds inflect their head (``mothers-in-law``, ``passers-by``,
``break-ins``, ``looked-up``); they have no one-word degree forms.

The word tables (the forms of rule 1, the uncountable and invariant nouns, the particles
of compounds) are package data, ``inflection_*.tsv`` in :mod:`brittle.search.generators.data`.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from importlib.resources import files
from types import MappingProxyType

from brittle.engine.core.imports import hidden

__all__ = [
    "BASE_TAGS",
    "TAG_FAMILY",
    "UPOS_OF_TAG",
    "inflect_lemma",
    "is_lexicon_lemma",
    "match_case",
    "regular_inflection",
    "regular_is_safe",
    "target_tag",
]

#: The inflectable PTB tags, by UPOS.
TAG_FAMILY: dict[str, frozenset[str]] = {
    "NOUN": frozenset({"NN", "NNS"}),
    "VERB": frozenset({"VB", "VBP", "VBZ", "VBD", "VBN", "VBG"}),
    "ADJ": frozenset({"JJ", "JJR", "JJS"}),
    "ADV": frozenset({"RB", "RBR", "RBS"}),
}
#: The UPOS of every inflectable PTB tag.
UPOS_OF_TAG: dict[str, str] = {tag: upos for upos, tags in TAG_FAMILY.items() for tag in tags}
#: Tags whose form is the lemma itself.
BASE_TAGS: frozenset[str] = frozenset({"NN", "VB", "JJ", "RB"})
# VBP is the lemma too, except for "be".
_LEMMA_TAGS = BASE_TAGS | {"VBP"}
# Periphrastic degrees ("more important") have no one-word form: never invent one.
_DEGREE_TAGS = frozenset({"JJR", "JJS", "RBR", "RBS"})
_VOWELS = frozenset("aeiou")


# ------------------------------------------------------------------ word tables
# The word tables are package data, files inflection_<name>.tsv of
# brittle.search.generators.data: a header line naming the columns, then one row per
# line, its fields separated by tabs.
def _rows(name: str, columns: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The rows of the table ``inflection_<name>.tsv`` (see above)."""
    path = files("brittle.search.generators.data").joinpath(f"inflection_{name}.tsv")
    header, *lines = path.read_text(encoding="utf-8").splitlines()
    rows = [tuple(line.split("\t")) for line in lines]
    if tuple(header.split("\t")) != columns or any(len(row) != len(columns) for row in rows):
        raise ValueError(f"inflection_{name}.tsv is no table of the columns {columns}")
    return rows


def _words(name: str) -> frozenset[str]:
    """The words of the one-column table ``inflection_<name>.tsv``."""
    return frozenset(word for (word,) in _rows(name, ("word",)))


#: Forms lemminflect (0.2.3) lacks or gets wrong, by (lemma, tag) (inflection_forms.tsv).
_TABLE: Mapping[tuple[str, str], str] = MappingProxyType(
    {(lemma, tag): form for lemma, tag, form in _rows("forms", ("lemma", "tag", "form"))}
)
_TABLE_FORMS = frozenset(_TABLE.values())
#: Forms lemminflect lists that do not exist (``wrong`` -> ``worse``).
_NO_FORM: frozenset[tuple[str, str]] = frozenset(("wrong", t) for t in ("JJR", "JJS", "RBR", "RBS"))

#: Mass nouns that lemminflect gives a regular plural (``informations``): no NNS form
#: (inflection_uncountable.tsv).
UNCOUNTABLE: frozenset[str] = _words("uncountable")

#: Nouns whose plural is the singular (kept for NNS even though they do not end in -s)
#: (inflection_invariant.tsv).
INVARIANT: frozenset[str] = _words("invariant")

# Endings of singular nouns that look plural (-ss, -us, -is, -ics): not plural-only.
_SINGULAR_S = ("ss", "us", "is", "ics", "ous", "news", "series", "species")
# Particles of phrasal verbs and compounds (``look-up``, ``passers-by``)
# (inflection_particles.tsv).
_PARTICLES = _words("particles")
# Suffixes each tag adds, to spot a word that already carries one.
_SUFFIX: dict[str, tuple[str, ...]] = {
    "NNS": ("s",),
    "VBZ": ("s",),
    "VBD": ("ed",),
    "VBN": ("ed",),
    "VBG": ("ing",),
    "JJR": ("er",),
    "RBR": ("er",),
    "JJS": ("est",),
    "RBS": ("est",),
}


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
    """Import ``lemminflect`` and load its inflection tables (about a second, once).

    lemminflect imports spaCy, when it can, only to register token extensions brittle
    never reads; it is imported with spaCy hidden (as if not installed), so that a run
    loads spaCy when its parser first parses, not before its first result.
    """
    with hidden("spacy"):
        from lemminflect import getAllInflections

    getAllInflections("be")


# ------------------------------------------------------------------ the lexicon
@lru_cache(maxsize=65536)
def _entry(word: str, upos: str) -> dict[str, tuple[str, ...]]:
    """lemminflect's forms of lowercase ``word`` as a lemma of ``upos`` (``{}``: none).

    Forms with spaces, and hyphenated variants of an unhyphenated lemma
    (``over-came``), are dropped.
    """
    from lemminflect import getAllInflections

    out: dict[str, tuple[str, ...]] = {}
    for tag, forms in getAllInflections(word, upos=upos).items():
        kept = tuple(
            f
            for f in forms
            if f.isascii() and f.islower() and " " not in f and ("-" in word or "-" not in f)
        )
        if kept:
            out[tag] = kept
    return out


def is_lexicon_lemma(word: str, upos: str) -> bool:
    """Whether lemminflect's lexicon lists ``word`` as a lemma of ``upos``."""
    return bool(_entry(word.lower(), upos))


@lru_cache(maxsize=65536)
def _tags_as_form_of_other(word: str, upos: str) -> frozenset[str]:
    """The tags ``word`` has as an inflected form of *another* lemma of ``upos``.

    ``masses`` -> ``{NNS}`` (of ``mass``); ``consisted`` -> ``{VBD, VBN}``; a word that
    is no other lemma's form gives the empty set.
    """
    from lemminflect import getAllLemmas

    tags = {tag for (lemma, tag), form in _TABLE.items() if form == word and lemma != word}
    tags.intersection_update(TAG_FAMILY[upos])
    for lemma in getAllLemmas(word).get(upos, ()):
        if lemma == word:
            continue
        for tag, forms in _entry(lemma, upos).items():
            if tag not in _LEMMA_TAGS and word in forms:
                tags.add(tag)
    return frozenset(tags)


def _primary_lemma(word: str, upos: str) -> bool:
    """Whether lemminflect lists ``word`` first among its own lemmas of ``upos``."""
    from lemminflect import getAllLemmas

    lemmas = getAllLemmas(word).get(upos, ())
    return bool(lemmas) and lemmas[0] == word


def _looks_plural(word: str) -> bool:
    return word.endswith("s") and not word.endswith(_SINGULAR_S)


def _lexicon_forms(word: str, tag: str, own: Mapping[str, tuple[str, ...]]) -> tuple[str, ...]:
    forms = own.get(tag, ())
    if not forms and tag in ("VBD", "VBN"):
        forms = own.get("VBN" if tag == "VBD" else "VBD", ())
    if not forms and tag in _DEGREE_TAGS:
        other = "ADV" if tag.startswith("JJ") else "ADJ"
        swapped = ("RB" if tag.startswith("JJ") else "JJ") + tag[2:]
        forms = _entry(word, other).get(swapped, ())
    return forms


def _be(tag: str, number: str | None, person: str | None) -> str:
    if tag == "VBD":
        return "were" if number == "Plur" or person == "2" else "was"
    return "am" if person == "1" and number != "Plur" else "are"


def _inflect_word(word: str, tag: str, number: str | None, person: str | None) -> str | None:
    """Rules 1-5 of the module docstring on a lowercase, unhyphenated word."""
    upos = UPOS_OF_TAG[tag]
    if word == "be" and tag in ("VBD", "VBP"):
        return _be(tag, number, person)
    listed = _TABLE.get((word, tag))
    if listed is not None:
        return listed
    if (word, tag) in _NO_FORM:
        return None
    if tag == "NNS" and word in UNCOUNTABLE:
        return None
    own = _entry(word, upos)
    as_form = _tags_as_form_of_other(word, upos)
    # Already inflected: a form of another lemma that is no lemma itself ("masses"), or
    # whose own lexicon entry is secondary and stacks suffixes on the form
    # ("consisteded"; "feed" is a verb first and a past of "fee" second: "fed").
    if as_form and (
        not own
        or (not _primary_lemma(word, upos) and any(word.endswith(_SUFFIX[t]) for t in as_form))
    ):
        if tag == "NN" and (word in INVARIANT or word.endswith("ics")):
            return word  # "a means", "physics"
        return word if tag in as_form else None
    if tag == "NNS" and "NNS" in as_form:
        return word  # "bacteria" is the plural of "bacterium": no "bacterias"
    if tag in _LEMMA_TAGS:
        if tag == "NN" and _looks_plural(word) and own.get("NNS") == (word,):
            return word if word in INVARIANT else None  # "trousers" is no NN
        return word
    if own:
        forms = _lexicon_forms(word, tag, own)
        if not forms:
            return None
        if tag == "NNS" and forms[0] == word:
            return word if word in INVARIANT or _looks_plural(word) else None
        return _respelled(word, forms[0], tag)
    if tag in _DEGREE_TAGS:
        # Adjectives and adverbs share degree forms ("new" as an adverb: "newer").
        forms = _lexicon_forms(word, tag, {})
        return _respelled(word, forms[0], tag) if forms else None
    if not regular_is_safe(word, tag) or _known_word(word):
        return None  # no "overnicer", "nervuses", "selecteds"
    return regular_inflection(word, tag)


def _known_word(word: str) -> bool:
    """Whether lemminflect or the table knows ``word`` (then it is no unknown lemma)."""
    from lemminflect import getAllLemmas

    return word in _TABLE_FORMS or bool(getAllLemmas(word))


def _respelled(word: str, form: str, tag: str) -> str | None:
    """A lexicon form with its known misspellings fixed, or ``None`` when it is no form
    of the tag (``freeer`` -> ``freer``, ``blueest`` -> ``bluest``; a ``VBG`` form
    without ``-ing``, a past in ``-ing``)."""
    if tag in _DEGREE_TAGS and word.endswith("e") and form in (word + "er", word + "est"):
        return word + form[len(word) + 1 :]
    if tag == "VBG" and not form.endswith("ing"):
        return None
    if tag in ("VBD", "VBN") and form.endswith("ing") and not word.endswith("ing"):
        return None  # lemminflect lists "joyriding" as a past of "joyride"
    return form


def _compound_head(parts: list[str], upos: str) -> int:
    """Index of the inflected part of a hyphenated compound.

    Verbs: the first part when only particles follow (``look-up`` -> ``looked-up``).
    Nouns: the part before ``in``/``of``/``at`` (``mothers-in-law``, ``men-of-war``),
    or an agent noun before particles (``passers-by``, ``runners-up``). Otherwise the
    last part (``break-ins``, ``baby-sat``).
    """
    rest = parts[1:]
    if upos == "VERB":
        return 0 if all(p in _PARTICLES for p in rest) else len(parts) - 1
    for k, part in enumerate(parts[1:-1], start=1):
        if part in ("in", "of", "at"):
            return k - 1
    if parts[0].endswith(("er", "or")) and all(p in _PARTICLES for p in rest):
        return 0
    return len(parts) - 1


def _inflect_compound(word: str, tag: str, number: str | None, person: str | None) -> str | None:
    parts = word.split("-")
    if any(not p for p in parts):
        return None
    upos = UPOS_OF_TAG[tag]
    if upos in ("ADJ", "ADV"):
        return None  # "well-known" has no one-word degree form we could trust
    head = _compound_head(parts, upos)
    if tag == "NNS" and parts[head] in _PARTICLES:
        parts[head] += "s"  # "break-ins", "take-offs"
        return "-".join(parts)
    inflected = _inflect_word(parts[head], tag, number, person)
    if inflected is None:
        return None
    parts[head] = inflected
    return "-".join(parts)


@lru_cache(maxsize=65536)
def inflect_lemma(
    lemma: str, tag: str, *, number: str | None = None, person: str | None = None
) -> str | None:
    """``lemma`` inflected for the PTB ``tag``, or ``None`` when no sound form exists.

    See the module docstring for the rules. ``number`` and ``person`` are the original
    word's ``Number`` and ``Person`` FEATS values; they only matter for ``be``
    (``VBD``: ``were`` for plural or second person, else ``was``; ``VBP``: ``am`` for
    first person singular, else ``are``). Tags outside :data:`UPOS_OF_TAG` give
    ``None``. The result is lowercase unless ``lemma`` is capitalised (then its first
    letter is) or all capitals (then it is too).
    """
    if tag not in UPOS_OF_TAG or not lemma:
        return None
    word = lemma.lower()
    if not all(ch.isascii() and (ch.isalpha() or ch in "-'") for ch in word):
        return None
    form: str | None
    if "'" in word or "-" in word:
        if tag in _LEMMA_TAGS:
            form = word
        elif "'" in word:
            form = None
        else:
            form = _inflect_compound(word, tag, number, person)
    else:
        form = _inflect_word(word, tag, number, person)
    if form is None:
        return None
    if len(lemma) > 1 and lemma.isupper():
        return form.upper()
    if lemma[:1].isupper():
        return form[:1].upper() + form[1:]
    return form


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


def _cvc(stem: str) -> bool:
    """Consonant-vowel-consonant ending, the last consonant not w, x or y."""
    if len(stem) < 3:
        return False
    a, v, c = stem[-3], stem[-2], stem[-1]
    return _is_consonant(a) and v in _VOWELS and _is_consonant(c) and c not in "wxy"


def _doubles_final(stem: str) -> bool:
    """Consonant-vowel-consonant ending of a one-syllable stem (``stop`` -> ``stopped``)."""
    return _cvc(stem) and _vowel_groups(stem) == 1


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


# Noun endings whose plural is not (reliably) regular: Latin and Greek (-us, -is, -um,
# -on, -a, -ex, -ix), -o (-os or -oes), -f/-fe (-ves), -man (-men), -ch (/k/ or /tS/),
# -eau, -i, -u, -z (zz doubling) and anything ending in s.
_UNSAFE_NOUN_ENDINGS = (
    "us", "is", "um", "on", "a", "ex", "ix", "o", "f", "fe", "man", "ch", "eau",
    "i", "u", "z", "s", "x",
)  # fmt: skip
# Verb endings with unpredictable -ed/-ing spelling: -c (panicked), vowels, x/z/s.
_UNSAFE_VERB_ENDINGS = ("c", "a", "i", "o", "u", "s", "x", "z")


def regular_is_safe(word: str, tag: str) -> bool:
    """Whether :func:`regular_inflection` surely gives the right form of a real word the
    lexicon does not list.

    Refused: non-letters and words under three letters; words that already end in the
    tag's suffix (``-s``, ``-ed``, ``-ing``) or in ``-ed``/``-ing`` at all; for ``NNS``
    the noun endings with irregular plurals (``nervus``, ``datum``, ``criterion``,
    ``alga``, ``index``, ``potato``, ``leaf``, ``stomach``, ``chairman``); for verbs the
    endings ``-c`` (``panicked``), a vowel other than ``e``, ``-s``, ``-x``, ``-z``; for
    ``-ed``/``-ing`` a consonant-vowel-consonant ending of a word of more than one
    syllable, whose doubling depends on stress (``visited`` / ``referred``); degrees
    always (no one-word degree is invented).
    """
    if len(word) < 3 or not (word.isascii() and word.isalpha() and word.islower()):
        return False
    if tag in BASE_TAGS or tag == "VBP":
        return True
    if tag in _DEGREE_TAGS:
        return False
    if word.endswith(_SUFFIX.get(tag, ())):
        return False
    if word.endswith(("ed", "ing")):
        return False  # most likely an inflected form already
    if tag == "NNS":
        return not word.endswith(_UNSAFE_NOUN_ENDINGS)
    if word.endswith(_UNSAFE_VERB_ENDINGS):
        return False
    if tag == "VBZ":
        return True
    return not (_cvc(word) and _vowel_groups(word) > 1)
