"""jabberwocky: pronounceable pseudowords in place of content words (Hall Maudslay & Cotterell).

Two ways to build stems (``stems``) and two sets of slots (``slots``):

- ``stems=syllable``: short monosyllabic nonwords built from English onsets and rhymes
  (:class:`~brittle.search.generators.syllables.SyllableStems`), as the paper's ARC
  nonwords are; ``stems=ngram`` (the default): stems of 3-9 letters from a character
  n-gram model, described below.
- ``slots=regular``: only common words (lowercase, or capitalised at the start of the
  sentence; not parts of names or headings) in slots whose form English inflects
  regularly, so that the
  pseudoword carries the slot's fine tag and features unambiguously: common nouns
  (``NN``, ``NNS``), lexical verbs in every regular form (``VB``, ``VBP``, ``VBZ``,
  ``VBG``, ``VBD``, ``VBN``), adjectives (``JJ``, ``JJR``, ``JJS``) and manner adverbs
  written with ``-ly`` (``RB``; the pseudoword gets ``-ly`` too), and proper
  adjectives standing on their own inside the sentence (*Iraqi* troops, a *Sunni*
  cleric: the pseudoword gets ``-ian`` and the capital, *Flurgian* troops). ``slots=paper`` is
  the paper's footnote 4 exactly: the same without the past forms (``VBD``, ``VBN``).
  Other adverbs (*where*, *also*, *soon*) keep their word: a bare pseudoword in their
  place does not read as an adverb. ``slots=content`` (the default) takes every
  eligible content word.

With ``stems=syllable`` and ``slots=regular`` the substitution keeps the gold tree by
construction (the ``tree`` validity preset): the new word is a nonword, so it brings no
lexical knowledge a parser or reader could use to analyse the sentence differently, and
its shape states the slot's tag.

N-gram stems come from a character n-gram model
(:class:`~brittle.search.generators.charlm.CharNgramModel`) trained, per part of speech,
on the one-word lowercase WordNet lemmas of that part of speech (nouns for NOUN slots,
verbs for VERB, adjectives for ADJ, adverbs for ADV; all lemmas for any other tag), so a
verb slot gets a verb-shaped stem. Each stem is inflected by regular English morphology
(:func:`~brittle.search.generators.inflection.regular_inflection`) to the PTB tag of the
original word (``NNS`` -> ``-s``/``-es``/``-ies``, ``VBZ``, ``VBG``, ``VBD``/``VBN``,
``JJR``/``JJS``, ``RBR``/``RBS``; from XPOS, or UPOS + FEATS) and given the original's
capitalisation; the stem is its lemma.

A pseudoword is rejected when the stem or the inflected form is an English word: a
WordNet lemma or inflected form of one (via ``morphy``) or a word of the GloVe
vocabulary (400k words), or any word of an explicitly given ``real_words`` list.
Sampling is seeded per ``(seed, sentence id, position)``: the same seed gives the same
pseudowords in any batch.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Literal, TypedDict

from brittle.engine.core.resources import load_wordnet
from brittle.engine.core.sentence import Sentence
from brittle.search.generators.base import GENERATORS, SubstitutionGenerator, position_rng
from brittle.search.generators.charlm import CharNgramModel
from brittle.search.generators.inflection import match_case, regular_inflection
from brittle.search.generators.lexicon import WORDNET_POS
from brittle.search.generators.slots import (
    Slots,
    common_case,
    demonym,
    kept_slot,
    proper_adjective,
    slot_tag,
)
from brittle.search.generators.syllables import SyllableStems
from brittle.search.generators.vocabulary import glove
from brittle.search.table import Candidate, SubstitutionTable

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

__all__ = ["Jabberwocky", "RealWords"]

_MODELS: dict[tuple[int, str, int, float], CharNgramModel] = {}
_SYLLABLES = SyllableStems()

Stems = Literal["ngram", "syllable"]


@dataclass(frozen=True, eq=False)
class RealWords:
    """Membership test for real English words.

    Attributes:
        words: lowercase known words (WordNet lemma names, GloVe vocabulary, ...).
        wordnet: an NLTK WordNet reader whose ``morphy`` catches inflected forms, or
            ``None``.
    """

    words: frozenset[str]
    wordnet: WordNetCorpusReader | None = None

    def __contains__(self, word: object) -> bool:
        if not isinstance(word, str):
            return False
        w = word.lower()
        if w in self.words:
            return True
        if self.wordnet is not None:
            return any(self.wordnet.morphy(w, pos) is not None for pos in "nvar")
        return False


def wordnet_lemmas(wordnet: WordNetCorpusReader, pos: str | None) -> list[str]:
    """One-word lowercase a-z lemma names of WordNet ``pos`` (``None``: every pos)."""
    names = wordnet.all_lemma_names(pos=pos) if pos is not None else wordnet.all_lemma_names()
    return sorted({n for n in names if n.isascii() and n.isalpha() and n.islower()})


class _Loaded(TypedDict, total=False):
    """What a :class:`Jabberwocky` loads on first use."""

    wordnet: WordNetCorpusReader
    known: RealWords


@GENERATORS.register("jabberwocky", help="pronounceable pseudowords, inflected")
@dataclass(frozen=True, eq=False, kw_only=True)
class Jabberwocky(SubstitutionGenerator):
    """Pseudoword substitutions.

    Attributes:
        seed: seed of the samples.
        order: n of the character n-gram model (2..4).
        smoothing: add-k constant of the model.
        min_length: shortest stem, in letters.
        max_length: longest stem, in letters.
        max_tries: samples drawn per position before giving up on more options.
        wordnet: an NLTK WordNet reader (training lemmas and the real-word check);
            ``None`` loads the offline one.
        real_words: extra words treated as English (lowercase); ``None`` adds the GloVe
            vocabulary.
        stems: ``ngram`` or ``syllable`` (see the module docstring).
        slots: ``content``, ``regular`` or ``paper`` (see the module docstring).
    """

    requires: ClassVar[frozenset[str]] = frozenset({"form", "upos", "xpos", "feats"})
    needs: ClassVar[frozenset[str]] = frozenset({"wordnet", "glove"})

    seed: int = 0
    order: int = 4
    smoothing: float = 0.01
    min_length: int = 3
    max_length: int = 9
    max_tries: int = 200
    wordnet: WordNetCorpusReader | None = None
    real_words: Collection[str] | None = None
    stems: Stems = "ngram"
    slots: Slots = "content"
    _state: _Loaded = field(default_factory=_Loaded, init=False, repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 1 <= self.min_length <= self.max_length:
            raise ValueError("need 1 <= min_length <= max_length")

    def _wordnet(self) -> WordNetCorpusReader:
        if self.wordnet is not None:
            return self.wordnet
        if "wordnet" not in self._state:
            self._state["wordnet"] = load_wordnet()
        return self._state["wordnet"]

    def known(self) -> RealWords:
        """The real-word test used to reject samples (built once)."""
        if "known" not in self._state:
            wn = self._wordnet()
            words: set[str] = {n.lower() for n in wn.all_lemma_names()}
            if self.real_words is None:
                words.update(w.lower() for w in glove()[0])
            else:
                words.update(w.lower() for w in self.real_words)
            self._state["known"] = RealWords(frozenset(words), wn)
        known: RealWords = self._state["known"]
        return known

    def model(self, upos: str) -> CharNgramModel | SyllableStems:
        """What stems for ``upos`` are drawn from: the syllable inventory, or the n-gram
        model of the part of speech (cached per process)."""
        if self.stems == "syllable":
            return _SYLLABLES
        pos = WORDNET_POS.get(upos, "*")
        wn = self._wordnet()
        key = (id(wn), pos, self.order, self.smoothing)
        hit = _MODELS.get(key)
        if hit is None:
            lemmas = wordnet_lemmas(wn, None if pos == "*" else pos)
            hit = CharNgramModel.train(lemmas, order=self.order, k=self.smoothing)
            _MODELS[key] = hit
        return hit

    def pseudowords(
        self,
        sentence_id: str,
        position: int,
        upos: str,
        tag: str | None,
        k: int,
        *,
        proper: bool = False,
    ) -> list[tuple[str, str]]:
        """Up to ``k`` distinct ``(inflected form, stem)`` pseudowords for one slot;
        ``proper``: shaped as a proper adjective
        (:func:`~brittle.search.generators.slots.demonym`)."""
        model = self.model(upos)
        known = self.known()
        rng = position_rng(self.seed, sentence_id, position)
        out: list[tuple[str, str]] = []
        seen: set[str] = set()
        for _ in range(self.max_tries):
            stem = model.sample(rng, min_length=self.min_length, max_length=self.max_length)
            if stem is None or stem in seen:
                continue
            seen.add(stem)
            if upos == "ADV" and self.slots != "content":
                stem += "ly"  # a manner adverb: the suffix is what makes it one
            elif proper:
                stem = demonym(stem)  # likewise a proper adjective: *Iraqi* -> *Flurgian*
            form = regular_inflection(stem, tag) if tag is not None else stem
            if stem in known or form in known:
                continue
            out.append((form, stem))
            if len(out) == k:
                break
        return out

    def candidates(
        self, sentences: Sequence[Sentence], *, top_k: int | None = None
    ) -> list[SubstitutionTable]:
        """Pseudowords for every eligible position; see the module docstring."""
        k = self._k(top_k)

        def options_at(sentence: Sentence, i: int) -> list[Candidate]:
            word = sentence.words[i]
            tag = slot_tag(word.upos, word.xpos, word.feats_dict, word.form, self.slots)
            proper = self.slots != "content" and proper_adjective(sentence, i)
            regular = tag is not None and common_case(word.form, i) and not kept_slot(sentence, i)
            if self.slots != "content" and not (proper or regular):
                return []
            found = self.pseudowords(sentence.sent_id, i, word.upos, tag, k, proper=proper)
            return [(match_case(word.form, f), stem) for f, stem in found]

        return self.tables_by_word(sentences, options_at)
