"""A word -> UPOS lexicon for filtering candidates by part of speech.

A word's possible UPOS tags are the union of what ``lemminflect``'s lexicon knows about
the form (``NOUN``, ``VERB``, ``ADJ``, ``ADV``, ``PROPN``, ``AUX``; inflected forms
included: ``ran`` is a VERB) and, when a WordNet reader is given, the WordNet parts of
speech whose morphological base form of the word exists (``n``, ``v``, ``a``/``s``,
``r``). A word neither resource knows gets the empty set.

Only open-class UPOS tags can be decided this way: :meth:`PosLexicon.decides` says so,
and callers let candidates for other tags through unfiltered.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

__all__ = ["DECIDABLE_UPOS", "WORDNET_POS", "PosLexicon"]

#: UPOS tags the lexicon can decide.
DECIDABLE_UPOS: frozenset[str] = frozenset({"NOUN", "VERB", "ADJ", "ADV", "PROPN", "AUX"})
#: WordNet part-of-speech letters of the four content UPOS tags.
WORDNET_POS: dict[str, str] = {"NOUN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}


@dataclass(frozen=True, eq=False, kw_only=True)
class PosLexicon:
    """Possible UPOS tags of a word form.

    Attributes:
        wordnet: an NLTK WordNet corpus reader to consult besides lemminflect, or
            ``None`` for lemminflect only (no WordNet load).
    """

    wordnet: WordNetCorpusReader | None = None
    _cache: dict[str, frozenset[str]] = field(default_factory=dict, init=False, repr=False)

    @staticmethod
    def decides(upos: str) -> bool:
        """Whether the lexicon can tell if a word has this UPOS."""
        return upos in DECIDABLE_UPOS

    def upos(self, word: str) -> frozenset[str]:
        """Possible UPOS tags of ``word`` (case-insensitive; empty when unknown)."""
        key = word.lower()
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        from lemminflect import getAllLemmas

        tags = set(getAllLemmas(key))
        if self.wordnet is not None and "_" not in key:
            for upos, pos in WORDNET_POS.items():
                if upos not in tags and self.wordnet.morphy(key, pos) is not None:
                    tags.add(upos)
        out = frozenset(tags)
        self._cache[key] = out
        return out

    def has(self, word: str, upos: str) -> bool:
        """Whether ``word`` can carry ``upos``; always true for tags the lexicon cannot decide."""
        return not self.decides(upos) or upos in self.upos(word)

    def has_tag(self, word: str, upos: str, tag: str | None) -> bool:
        """Whether ``word`` can be ``upos`` with the PTB ``tag`` (``dogs`` is NOUN/NNS).

        True when some lemma of ``word`` as ``upos`` inflects to ``word`` for ``tag``
        (lemminflect); falls back to :meth:`has` when ``tag`` is ``None`` or the UPOS is
        not one the lexicon decides.
        """
        if tag is None or not self.decides(upos):
            return self.has(word, upos)
        if upos not in self.upos(word):
            return False
        from lemminflect import getAllLemmas, getInflection

        key = word.lower()
        lemmas = set(getAllLemmas(key).get(upos, ()))
        pos = WORDNET_POS.get(upos)
        if self.wordnet is not None and pos is not None:
            base = self.wordnet.morphy(key, pos)
            if base is not None:
                lemmas.add(base)
        return any(key in getInflection(lemma, tag=tag) for lemma in lemmas)

    def lemma(self, word: str, upos: str) -> str:
        """A lemma of ``word`` as ``upos`` (lemminflect, then WordNet), or ``"_"``."""
        from lemminflect import getAllLemmas

        key = word.lower()
        lemmas = getAllLemmas(key).get(upos)
        if lemmas:
            return str(lemmas[0])
        pos = WORDNET_POS.get(upos)
        if self.wordnet is not None and pos is not None:
            base = self.wordnet.morphy(key, pos)
            if base is not None:
                return str(base)
        return "_"
