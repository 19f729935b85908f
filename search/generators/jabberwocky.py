"""jabberwocky: pronounceable pseudowords in place of content words (Hall Maudslay & Cotterell).

Stems come from a character n-gram model (:class:`~brittle.search.generators.charlm.CharNgramModel`)
trained, per part of speech, on the one-word lowercase WordNet lemmas of that part of
speech (nouns for NOUN slots, verbs for VERB, adjectives for ADJ, adverbs for ADV; all
lemmas for any other tag), so a verb slot gets a verb-shaped stem. Each stem is inflected
by regular English morphology
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
from typing import TYPE_CHECKING, ClassVar, TypedDict

from brittle.engine.core.resources import load_wordnet
from brittle.engine.core.sentence import Sentence
from brittle.search.generators.base import GENERATORS, SubstitutionGenerator, position_rng
from brittle.search.generators.charlm import CharNgramModel
from brittle.search.generators.inflection import match_case, regular_inflection, target_tag
from brittle.search.generators.lexicon import WORDNET_POS
from brittle.search.generators.vocabulary import glove
from brittle.search.table import Candidate, SubstitutionTable

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

__all__ = ["Jabberwocky", "RealWords"]

_MODELS: dict[tuple[int, str, int, float], CharNgramModel] = {}


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
    """

    method: ClassVar[str] = "jabberwocky"
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

    def model(self, upos: str) -> CharNgramModel:
        """The n-gram model for stems of ``upos`` (cached per process)."""
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
        self, sentence_id: str, position: int, upos: str, tag: str | None, k: int
    ) -> list[tuple[str, str]]:
        """Up to ``k`` distinct ``(inflected form, stem)`` pseudowords for one slot."""
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
            tag = target_tag(word.upos, word.xpos, word.feats_dict)
            found = self.pseudowords(sentence.sent_id, i, word.upos, tag, k)
            return [(match_case(word.form, f), stem) for f, stem in found]

        return self.tables_by_word(sentences, options_at)
