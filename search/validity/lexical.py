"""Tree-level checks of the new words alone: the class and the form each slot needs.

- :func:`closed_class_check`: a function word (determiner, pronoun, modal, preposition,
  conjunction, subordinator, particle, wh-word) in a slot of the open classes (``NOUN``,
  ``VERB``, ``ADJ``, ``ADV``) is not analysed by the gold tree: "the rate" -> "the or",
  "I loved it" -> "I could it", "the area" -> "the where".
- :func:`form_check`: the new word can carry the slot's fine tag (PTB XPOS, or the one
  UD FEATS give: ``NNS`` for ``Number=Plur``, ``VBD`` for ``Tense=Past``...): a plural
  noun slot needs a plural form, a manner adverb in ``-ly`` an adverb, not the adjective
  it derives from. Known words are looked up in lemminflect and WordNet
  (:class:`~brittle.search.generators.lexicon.PosLexicon`); a word neither knows (a
  pseudoword) must carry the tag's regular ending.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from brittle.search.generators.inflection import target_tag
from brittle.search.validity.records import ChangedWord, Check

if TYPE_CHECKING:
    from brittle.engine.core.sentence import Sentence
    from brittle.search.generators.lexicon import PosLexicon

__all__ = [
    "CLOSED_CLASS_WORDS",
    "OPEN_UPOS",
    "PLACE_ADVERBS",
    "WH_ADVERBS",
    "closed_class_check",
    "form_check",
    "is_closed_class",
    "same_function_class",
]

#: Slots of the open classes, where a function word is out of place.
OPEN_UPOS: frozenset[str] = frozenset({"NOUN", "VERB", "ADJ", "ADV"})

#: English function words: determiners, pronouns, prepositions, conjunctions,
#: subordinators, particles and wh-words. Written by hand because neither lexicon brittle
#: has offline lists them: lemminflect only knows the open classes (and AUX), WordNet has
#: no function words at all, and both give many of them spurious open-class readings
#: ("or" and "where" are WordNet nouns, "so" a lemminflect adjective, "that" and "it"
#: lemminflect nouns), so a lexicon test alone would let "rate -> or" through.
CLOSED_CLASS_WORDS: frozenset[str] = frozenset(
    {
        # determiners and articles
        "a", "an", "the", "this", "that", "these", "those", "some", "any", "no", "every",
        "each", "either", "neither", "both", "all", "another", "such", "what", "which",
        "whose", "whatever", "whichever", "much", "many", "few", "several",
        # pronouns
        "i", "me", "my", "mine", "myself", "you", "your", "yours", "yourself",
        "yourselves", "he", "him", "his", "himself", "she", "her", "hers", "herself",
        "it", "its", "itself", "we", "us", "our", "ours", "ourselves", "they", "them",
        "their", "theirs", "themselves", "who", "whom", "whoever", "someone", "somebody",
        "something", "anyone", "anybody", "anything", "everyone", "everybody",
        "everything", "nobody", "nothing", "none", "one", "oneself",
        # prepositions
        "about", "above", "across", "after", "against", "along", "amid", "among",
        "around", "at", "before", "behind", "below", "beneath", "beside", "besides",
        "between", "beyond", "by", "despite", "during", "except", "for", "from", "in",
        "inside", "into", "near", "of", "off", "on", "onto", "out", "outside", "over",
        "per", "since", "through", "throughout", "till", "to", "toward", "towards",
        "under", "underneath", "unlike", "until", "unto", "upon", "via", "with",
        "within", "without",
        # coordinating conjunctions
        "and", "or", "but", "nor", "yet", "so", "plus",
        # subordinators and wh-adverbs
        "if", "whether", "because", "although", "though", "unless", "while", "whereas",
        "than", "as", "once", "lest", "when", "where", "why", "how", "whenever",
        "wherever", "however",
        # particles and the existential
        "not", "n't", "there",
        # modals (also caught through the lexicon's AUX reading)
        "can", "could", "may", "might", "must", "shall", "should", "will", "would",
        "ought",
    }
)  # fmt: skip
#: Lexicon AUX lemmas that are main verbs as well (not closed-class).
_MAIN_VERB_AUX: frozenset[str] = frozenset({"be", "have", "do", "need", "dare", "get"})
#: UD pronominal types of wh-words: interrogative and relative.
_WH_TYPES = frozenset({"Int", "Rel"})
#: Regular endings of each inflected PTB tag, for words no lexicon knows.
_ENDINGS: dict[str, tuple[str, ...]] = {
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


def _is_wh(word: str) -> bool:
    key = word.lower()
    return key.startswith("wh") or key in ("how", "that")


#: Place adverbs and particles: they complete a verb's construction (*staying away
#: from*, *be back*, *heard before*, *go somewhere nice*), and only another place word
#: fills their slot. Hand-written for the same reason.
PLACE_ADVERBS: frozenset[str] = frozenset(
    {"back", "up", "down", "out", "off", "away", "on", "over", "around", "before",
     "somewhere", "anywhere", "nowhere", "everywhere", "ago", "home", "abroad", "outside",
     "inside", "upstairs", "downstairs", "nearby", "ahead", "aside", "apart", "together",
     "forward", "forwards", "backward", "backwards", "along", "across", "through",
     "behind", "underneath", "elsewhere", "overseas", "ashore", "aboard", "indoors",
     "outdoors", "in", "by", "about", "later", "earlier", "sooner", "there", "here", "someplace",
     "anyplace", "north", "south", "east", "west", "northeast", "northwest", "southeast",
     "southwest", "upstream", "downstream", "uptown", "downtown", "offshore", "inland",
     "overhead", "below", "above", "beneath", "within", "near", "close", "far"}
)  # fmt: skip
#: Wh-adverbs: in an adverb slot each is replaced by another (*that's how / why I've*).
WH_ADVERBS: frozenset[str] = frozenset(
    {"when", "where", "why", "how", "whenever", "wherever", "however"}
)
#: Function words that hold open-class slots as a class of their own (UD tags them ADV or
#: ADJ there): one of a class may take another's slot (*smoked it down* → *out*, "it's
#: out" → *off*, *that's how* → *why*), which is not a function word in a content slot.
_OPEN_SLOT_CLASSES: tuple[frozenset[str], ...] = (PLACE_ADVERBS, WH_ADVERBS)


def same_function_class(original: str, new: str) -> bool:
    """Whether ``original`` and ``new`` belong to one of :data:`_OPEN_SLOT_CLASSES`."""
    old, key = original.lower(), new.lower()
    return any(old in members and key in members for members in _OPEN_SLOT_CLASSES)


def is_closed_class(word: str, lexicon: PosLexicon) -> bool:
    """Whether ``word`` is a function word: in :data:`CLOSED_CLASS_WORDS`, or a modal
    (an AUX reading in the lexicon whose lemma is not also a main verb)."""
    key = word.lower()
    if key in CLOSED_CLASS_WORDS:
        return True
    if "AUX" not in lexicon.upos(key):
        return False
    from lemminflect import getAllLemmas

    lemmas = set(getAllLemmas(key).get("AUX", ()))
    return bool(lemmas) and not lemmas & _MAIN_VERB_AUX


#: Pronouns that are nouns where they head a noun phrase with a determiner or a modifier
#: of their own ("a good *one*", "the blue *ones*": UD tags them NOUN).
_PRO_NOUNS = frozenset({"one", "ones"})
#: Dependents that make a pro-form a noun phrase's head noun.
_NOUN_PHRASE = frozenset({"det", "amod", "nmod:poss", "det:poss"})


def _pro_noun(original: Sentence, index: int, word: str) -> bool:
    """Whether ``word`` in the NOUN slot at ``index`` is a pro-form noun (:data:`_PRO_NOUNS`
    with a determiner or modifier in the gold tree)."""
    if word.lower() not in _PRO_NOUNS or original.upos[index] != "NOUN":
        return False
    head = str(index + 1)
    return any(w.head == head and w.deprel in _NOUN_PHRASE for w in original.words)


def closed_class_check(
    original: Sentence, changed: Sequence[ChangedWord], lexicon: PosLexicon
) -> Check:
    """Fails when a function word fills a slot of an open class (value: such words); a
    pro-form *one* heading a noun phrase is a noun (:func:`_pro_noun`), and a particle,
    place word or wh-adverb in the slot of another of its class keeps the slot's class
    (:func:`same_function_class`)."""
    upos = original.upos
    bad = tuple(
        w.new
        for w in changed
        if upos[w.index] in OPEN_UPOS
        and is_closed_class(w.new, lexicon)
        and not _pro_noun(original, w.index, w.new)
        and not same_function_class(w.original, w.new)
    )
    return Check(
        name="closed-class",
        level="tree",
        measured="changed words in NOUN/VERB/ADJ/ADV slots that are function words",
        value=bad,
        threshold=None,
        passed=not bad,
        failed=None if not bad else f"function word in an open-class slot: {', '.join(bad)}",
    )


#: Endings that make a nonword read as inflected, by the bare tags they would mislead.
_MISLEADING: dict[str, tuple[str, ...]] = {
    "NN": ("ed", "ing", "ly"),
    "VB": ("ed", "ing", "ly"),
    "VBP": ("ed", "ing", "ly"),
    "JJ": ("ed", "ing", "ly"),
}


def _looks_suffixed(word: str, suffix: str) -> bool:
    """Whether ``word`` reads as a stem with ``suffix``: the rest has a vowel, and an
    ``-ed`` does not close an ``-eed`` rhyme (*dised*, *blapping*; not *gled*, *sting*,
    *gleed*)."""
    if not word.endswith(suffix):
        return False
    rest = word[: -len(suffix)]
    if suffix == "ed" and rest.endswith("e"):
        return False
    return len(rest) >= 2 and any(c in "aeiouy" for c in rest)


def _fits_tag(word: str, upos: str, tag: str, original: str, lexicon: PosLexicon) -> bool:
    """Whether ``word`` can be ``upos`` with the PTB ``tag`` in place of ``original``."""
    key = word.lower()
    known = bool(lexicon.upos(key))
    # a manner adverb in -ly replaced by an adjective whose own adverb in -ly exists
    # ("quickly" -> "quick"; WordNet lists "quick" as an adverb too, of a register the
    # slot does not have): the slot wants the -ly form
    manner = tag == "RB" and original.lower().endswith("ly") and not key.endswith("ly")
    if manner and "ADJ" in lexicon.upos(key) and "ADV" in lexicon.upos(key + "ly"):
        return False
    if not known:
        endings = _ENDINGS.get(tag)
        if endings is not None:
            return key.endswith(endings)
        # a bare-tag slot (NN, VB, VBP, JJ): a nonword that looks inflected reads as
        # another tag ("a dised search engine": a participle, not an adjective)
        return not any(_looks_suffixed(key, suffix) for suffix in _MISLEADING.get(tag, ()))
    return bool(lexicon.has_tag(key, upos, tag))


def form_check(original: Sentence, changed: Sequence[ChangedWord], lexicon: PosLexicon) -> Check:
    """Fails when a new word cannot carry its slot's fine tag (XPOS, or the tag FEATS
    give), or a wh-slot (``PronType=Int`` or ``Rel``: the word that makes its clause a
    question or a relative clause, fronted) gets a word that is no wh-word; slots with
    no inflectable tag (function words, names) pass otherwise."""
    words = original.words
    bad: list[str] = []
    tags: list[str | None] = []
    for w in changed:
        tok = words[w.index]
        if tok.feats_dict.get("PronType") in _WH_TYPES and not _is_wh(w.new):
            tags.append(tok.xpos)
            bad.append(f"{w.new} (not a wh-word, PronType={tok.feats_dict['PronType']})")
            continue
        tag = target_tag(tok.upos, tok.xpos, tok.feats_dict)
        tags.append(tag)
        if tag is None or not w.new[:1].isalpha():
            continue
        if not _fits_tag(w.new, tok.upos, tag, w.original, lexicon):
            bad.append(f"{w.new} ({tok.upos}/{tag})")
    return Check(
        name="form",
        level="tree",
        measured="changed words that can carry the slot's fine tag (PTB, from XPOS/FEATS)",
        value=tuple(tags),
        threshold=None,
        passed=not bad,
        failed=None if not bad else f"cannot carry the slot's tag: {', '.join(bad)}",
    )
