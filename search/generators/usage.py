"""How common a word is and whether a noun counts: checks on a substitute's usage.

A WordNet synonym can have the right sense and still not be what a writer would put
there. Two checks on corpus frequency, with GloVe's vocabulary order (its rows are
ordered by frequency in Wikipedia and Gigaword;
:func:`~brittle.search.generators.vocabulary.frequency_rank`) standing for frequency:

- :func:`rarity`: how many times rarer the substitute's form is than the original's
  (the ratio of their frequency ranks). A substitute far rarer than the word it
  replaces is a marked choice, a change of register: *war* -> *warfare* is 46 times
  rarer, *groups* -> *groupings* 51, *like* -> *wish* 29, while *students* -> *pupils*
  is 15 and *results* -> *outcomes* 21.
- :func:`is_countable`: whether a noun has a plural in use: lemminflect gives it one
  (``information`` has none) and the plural is at most :data:`MASS_RATIO` times rarer
  than the singular (*nothings* is 101 times rarer than *nothing*, *moneys* 312; *wars*
  23, *parts* 7). :func:`count_use` tells where the tree needs a count noun (a plural,
  or a singular after *a*, *an*, *another*, *each* or *every*): there, a noun that does
  not count is no substitute ("in the early zeroes" is not "in the early nothings").

And one slot where an adjective is a determiner: :func:`deictic_determiner`.
"""

from __future__ import annotations

from functools import cache

from brittle.engine.core.sentence import Sentence
from brittle.search.generators.inflection import inflect_lemma
from brittle.search.generators.vocabulary import frequency_rank

__all__ = [
    "COUNT_DETERMINERS",
    "DEICTIC_ADJECTIVES",
    "DETERMINER_RELATIONS",
    "MASS_RATIO",
    "bare_idiom",
    "bare_singular",
    "count_use",
    "deictic_determiner",
    "is_countable",
    "rarity",
]

#: A noun whose plural is more than this many times rarer than its singular (frequency
#: ranks) is taken for a mass noun.
MASS_RATIO = 50.0
#: Determiners that need a count noun in the singular.
COUNT_DETERMINERS = frozenset({"a", "an", "another", "each", "every"})
#: Dependents that let a singular count noun stand (a determiner, a possessor, a number).
_LICENSERS = frozenset({"det", "det:poss", "nmod:poss", "nummod"})
#: Adjectives that complete a bare singular noun as a determiner would ("*last*
#: month's blasts", "*next* week", "*last* September"): any other adjective, a nonword
#: too, leaves the noun bare ("of **early** month's", "papers **blaip** September").
DEICTIC_ADJECTIVES = frozenset({"last", "next"})
#: Dependents that make a singular noun phrase complete without an article (*last* and
#: *next* aside: :func:`deictic_determiner`).
DETERMINER_RELATIONS = _LICENSERS | {"det:predet"}


def rarity(original: str, substitute: str) -> float | None:
    """How many times rarer ``substitute`` is than ``original``: the ratio of their
    0-based frequency ranks, each plus one (lowercased; above 1: rarer). ``None`` when
    ``original`` is not in the vocabulary (nothing to compare with); ``inf`` when only
    ``substitute`` is missing."""
    base = frequency_rank(original.lower())
    if base is None:
        return None
    rank = frequency_rank(substitute.lower())
    return float("inf") if rank is None else (rank + 1) / (base + 1)


@cache
def is_countable(lemma: str) -> bool:
    """Whether the noun ``lemma`` has a plural in use (see the module docstring); a
    hyphenated lemma is judged by its last part."""
    head = lemma.lower().rsplit("-", 1)[-1]
    plural = inflect_lemma(head, "NNS")
    if plural is None:
        return False
    singular, many = frequency_rank(head), frequency_rank(plural)
    if many is None:
        return False
    return singular is None or (many + 1) <= MASS_RATIO * (singular + 1)


def count_use(sentence: Sentence, index: int) -> bool:
    """Whether the noun at 0-based ``index`` stands where only a count noun can: it is
    plural (``Number=Plur`` or XPOS ``NNS``), or it is singular with one of
    :data:`COUNT_DETERMINERS` as a ``det`` dependent."""
    word = sentence.words[index]
    if word.feats_dict.get("Number") == "Plur" or word.xpos == "NNS":
        return True
    head = str(index + 1)
    return any(
        w.head == head and w.deprel == "det" and w.form.lower() in COUNT_DETERMINERS
        for w in sentence.words
    )


def bare_singular(sentence: Sentence, index: int) -> bool:
    """Whether the singular noun at 0-based ``index`` stands without a determiner,
    possessor or number and is not a modifier in a compound: only a mass noun fits
    there ("discrimination is ..." -> "furniture is ...", not "dog is ...")."""
    word = sentence.words[index]
    if word.xpos != "NN" or word.deprel == "compound" or word.feats_dict.get("Number") == "Plur":
        return False
    head = str(index + 1)
    return not any(w.head == head and w.deprel in _LICENSERS for w in sentence.words)


def bare_idiom(sentence: Sentence, index: int) -> bool:
    """Whether the noun at 0-based ``index`` is a count noun standing bare
    (:func:`bare_singular`) and unmodified (no ``amod``) in a prepositional phrase (it
    has a ``case`` dependent): an idiom there, *in part*, *on purpose*, *in connection
    with*, where English leaves out the article a count noun needs elsewhere, and a
    synonym does not ("concurring in **portion**", "in **reliance** with"). A modified
    one is a noun used as mass, freely chosen: *restricted to physical exercise*."""
    if not bare_singular(sentence, index):
        return False
    head = str(index + 1)
    relations = {w.deprel.split(":")[0] for w in sentence.words if w.head == head}
    in_phrase = "case" in relations and "amod" not in relations
    word = sentence.words[index]
    return in_phrase and is_countable(word.lemma if word.lemma not in ("_", "") else word.form)


def deictic_determiner(sentence: Sentence, index: int) -> bool:
    """Whether the word at 0-based ``index`` is *last* or *next* (an ``ADJ``) standing
    as the determiner of its head: a singular noun or proper noun with no determiner,
    possessor or number of its own ("*last* September", "*next* week"; not "the *last*
    chapter", "*last* years")."""
    word = sentence.words[index]
    if word.upos != "ADJ" or word.form.lower() not in DEICTIC_ADJECTIVES:
        return False
    if word.head in ("0", "_", ""):
        return False
    noun = sentence.words[int(word.head) - 1]
    if noun.upos not in ("NOUN", "PROPN") or noun.xpos in ("NNS", "NNPS"):
        return False
    if noun.feats_dict.get("Number") == "Plur":
        return False
    return not any(d.head == word.head and d.deprel in DETERMINER_RELATIONS for d in sentence.words)
