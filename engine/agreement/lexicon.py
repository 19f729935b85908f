"""The controlled lexicon of the agreement stimuli (brittle's own words, not any paper's).

Every entry is a lemma with the forms the grammar needs. Nouns carry their singular and
plural form (regular and irregular plurals alike); the agreeing verbs carry their third
person singular and plural forms; the embedding verbs are past tense, so they show no
number and give the language model no cue but the nouns and pronouns themselves.

The word classes, by the slot of :mod:`brittle.engine.agreement.stimuli` they fill:

- :data:`PEOPLE`: human nouns, the targets and the human attractors (subjects of
  ``said``, matrix subjects);
- :data:`THINGS`: objects of the participle in experiment 1 (``reviewing the report``);
- :data:`PLACES`: nouns of the prepositional phrases (``for the agency``);
- :data:`PARTICIPLES`, :data:`SAY_VERBS`, :data:`THINK_VERBS`: the embedding verbs;
- :data:`PRONOUN_PAIRS`: subject pronouns with their number (``I``/``we``);
- :data:`ADJECTIVES`: predicates that read well after every linking verb;
- :data:`VERB_PAIRS`: the seven linking-verb pairs whose agreement is measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "ADJECTIVES",
    "EXCLUDED_VERBS",
    "NEUTRAL_PRONOUNS",
    "PARTICIPLES",
    "PEOPLE",
    "PLACES",
    "PRONOUN_PAIRS",
    "SAY_VERBS",
    "THINGS",
    "THINK_VERBS",
    "VERB_PAIRS",
    "Noun",
    "Number",
    "Pronoun",
    "VerbPair",
    "noun_by_lemma",
    "pronoun_by_form",
    "verb_pair",
]

#: Grammatical number: singular or plural.
Number = Literal["sg", "pl"]


@dataclass(frozen=True)
class Noun:
    """A common noun with both number forms.

    Attributes:
        lemma: the singular (the UD lemma).
        plural: the plural form (``children`` for ``child``).
    """

    lemma: str
    plural: str

    def form(self, number: Number) -> str:
        """The form of ``number``."""
        return self.lemma if number == "sg" else self.plural


@dataclass(frozen=True)
class Pronoun:
    """A nominative personal pronoun.

    Attributes:
        form: the word (``I``, ``we``, ``she``).
        number: its number; ``None`` for ``you`` (English does not mark it).
        person: ``1``, ``2`` or ``3``.
        gender: UD ``Gender`` value or ``""``.
    """

    form: str
    number: Number | None
    person: int
    gender: str = ""

    @property
    def feats(self) -> str:
        """UD FEATS of the pronoun as a subject."""
        items = ["Case=Nom"]
        if self.gender:
            items.append(f"Gender={self.gender}")
        if self.number is not None:
            items.append(f"Number={'Sing' if self.number == 'sg' else 'Plur'}")
        items += [f"Person={self.person}", "PronType=Prs"]
        return "|".join(items)


@dataclass(frozen=True)
class VerbPair:
    """A linking verb whose number agreement is measured.

    Attributes:
        singular: third person singular form (``seems``).
        plural: plural form (``seem``).
        lemma: ``be`` for the copula, else the verb itself.
        tense: ``Pres`` or ``Past``.
    """

    singular: str
    plural: str
    lemma: str
    tense: str

    @property
    def key(self) -> str:
        """The pair's name in tables and file names: ``is/are``."""
        return f"{self.singular}/{self.plural}"

    @property
    def is_copula(self) -> bool:
        """Whether UD treats it as a copula (``be``): the adjective then heads the clause."""
        return self.lemma == "be"

    def form(self, number: Number) -> str:
        """The form that agrees with a subject of ``number``."""
        return self.singular if number == "sg" else self.plural


def _nouns(text: str) -> tuple[Noun, ...]:
    """Nouns from ``"lawyer cousin child/children"``: a slash gives an irregular plural."""
    out: list[Noun] = []
    for item in text.split():
        if "/" in item:
            sg, pl = item.split("/")
        elif item.endswith("y") and item[-2] not in "aeiou":
            sg, pl = item, item[:-1] + "ies"
        elif item.endswith(("s", "sh", "ch", "x")):
            sg, pl = item, item + "es"
        else:
            sg, pl = item, item + "s"
        out.append(Noun(sg, pl))
    return tuple(out)


#: Human nouns: targets, subjects of ``said`` and matrix subjects.
PEOPLE: tuple[Noun, ...] = _nouns(
    "lawyer cousin teacher nurse doctor student manager neighbour tenant driver artist "
    "player engineer officer pilot singer farmer baker author editor secretary boss "
    "child/children man/men woman/women person/people wife/wives lady nanny "
    "fisherman/fishermen"
)
#: Objects of the participle in experiment 1.
THINGS: tuple[Noun, ...] = _nouns(
    "report case file contract proposal document claim request budget survey invoice "
    "letter schedule policy analysis/analyses thesis/theses crisis/crises "
    "diagnosis/diagnoses box batch"
)
#: Nouns of the prepositional phrases (``for the agency``).
PLACES: tuple[Noun, ...] = _nouns(
    "agency company school hospital factory village city library church branch office "
    "museum clinic bakery studio warehouse campus/campuses bus"
)
#: Participles that take a THINGS object (present participle, lemma).
PARTICIPLES: tuple[tuple[str, str], ...] = (
    ("reviewing", "review"),
    ("handling", "handle"),
    ("checking", "check"),
    ("discussing", "discuss"),
    ("preparing", "prepare"),
    ("examining", "examine"),
    ("signing", "sign"),
    ("filing", "file"),
)
#: Past-tense verbs of saying that take a ``that`` clause (form, lemma). No verb that
#: takes a mandative subjunctive (*insisted that the child become*): its clause would
#: make the plural-looking form grammatical after a singular subject.
SAY_VERBS: tuple[tuple[str, str], ...] = (
    ("said", "say"),
    ("claimed", "claim"),
    ("reported", "report"),
    ("mentioned", "mention"),
    ("explained", "explain"),
    ("admitted", "admit"),
    ("announced", "announce"),
)
#: Past-tense verbs of thinking that take a bare clause (form, lemma). No perception
#: verb (*heard*, *felt*, *saw*): it takes a bare infinitive (*heard the child get
#: upset*), which makes the plural-looking form grammatical after a singular subject.
THINK_VERBS: tuple[tuple[str, str], ...] = (
    ("thought", "think"),
    ("believed", "believe"),
    ("knew", "know"),
    ("assumed", "assume"),
    ("suspected", "suspect"),
    ("guessed", "guess"),
    ("figured", "figure"),
    ("supposed", "suppose"),
)
#: Verbs no slot may hold: they take a bare infinitive or a subjunctive clause.
EXCLUDED_VERBS: frozenset[str] = frozenset(
    {
        "heard",
        "felt",
        "saw",
        "watched",
        "noticed",
        "made",
        "let",
        "insisted",
        "demanded",
        "suggested",
        "asked",
        "required",
        "requested",
        "recommended",
    }
)
#: Subject pronouns that carry number, as (singular, plural) pairs.
PRONOUN_PAIRS: tuple[tuple[Pronoun, Pronoun], ...] = (
    (Pronoun("I", "sg", 1), Pronoun("we", "pl", 1)),
    (Pronoun("he", "sg", 3, "Masc"), Pronoun("they", "pl", 3)),
    (Pronoun("she", "sg", 3, "Fem"), Pronoun("they", "pl", 3)),
)
#: Pronouns of the experiment-2 embeddings: ``I`` and ``you``, no third-person number.
NEUTRAL_PRONOUNS: tuple[Pronoun, ...] = (Pronoun("I", "sg", 1), Pronoun("you", None, 2))
#: Predicative adjectives that read well after each linking verb.
ADJECTIVES: tuple[str, ...] = (
    "upset",
    "tired",
    "angry",
    "nervous",
    "worried",
    "excited",
    "confused",
    "bored",
    "annoyed",
    "calm",
    "happy",
    "anxious",
)
#: The seven linking-verb pairs, in the order of the tables.
VERB_PAIRS: tuple[VerbPair, ...] = (
    VerbPair("is", "are", "be", "Pres"),
    VerbPair("was", "were", "be", "Past"),
    VerbPair("seems", "seem", "seem", "Pres"),
    VerbPair("gets", "get", "get", "Pres"),
    VerbPair("becomes", "become", "become", "Pres"),
    VerbPair("looks", "look", "look", "Pres"),
    VerbPair("sounds", "sound", "sound", "Pres"),
)

_ALL_NOUNS = {n.lemma: n for n in PEOPLE + THINGS + PLACES}
_ALL_PRONOUNS = {p.form: p for pair in PRONOUN_PAIRS for p in pair} | {
    p.form: p for p in NEUTRAL_PRONOUNS
}


def noun_by_lemma(lemma: str) -> Noun:
    """The lexicon's noun of ``lemma`` (``KeyError`` when it has none)."""
    return _ALL_NOUNS[lemma]


def pronoun_by_form(form: str) -> Pronoun:
    """The lexicon's pronoun written ``form`` (``KeyError`` when it has none)."""
    return _ALL_PRONOUNS[form]


def verb_pair(name: str) -> VerbPair:
    """The verb pair named by its singular (``is``) or its key (``is/are``)."""
    for pair in VERB_PAIRS:
        if name in (pair.singular, pair.key):
            return pair
    known = ", ".join(p.key for p in VERB_PAIRS)
    raise KeyError(f"unknown verb pair {name!r} (known: {known})")
