"""Function words, which a substitution must neither put into nor take out of a
content-word slot.

A function word in a noun, verb, adjective or adverb slot is what makes most random
real-word substitutions ungrammatical (*loved* -> *could*, *rate* -> *or*, *area* ->
*where*, *able* -> *so*, *get* -> *can*): the part-of-speech lexicon lists *could* as a
verb and *or* as a noun, so a same-POS filter lets them through. A word is taken for a
function word when spaCy's English stop-word list has it (a list a well-kept library
maintains: determiners, pronouns, prepositions, conjunctions, auxiliaries, the light
verbs *get*, *make*, *take*, *give*, ...) or when the lexicon knows it as an auxiliary
(*could*, *might*, *ought*, *dare*).
"""

from __future__ import annotations

from functools import cache

from brittle.search.generators.lexicon import PosLexicon

__all__ = ["is_function_word", "stop_words"]


@cache
def stop_words() -> frozenset[str]:
    """spaCy's English stop words, lowercase (imported once, on first use)."""
    from spacy.lang.en.stop_words import STOP_WORDS  # deferred: imports spaCy

    return frozenset(w.lower() for w in STOP_WORDS)


def is_function_word(word: str, lexicon: PosLexicon) -> bool:
    """Whether ``word`` (any case) is a stop word or can be an auxiliary."""
    low = word.lower()
    return low in stop_words() or "AUX" in lexicon.upos(low)
