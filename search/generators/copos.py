"""coPOS: WordNet synonyms with the same part of speech (La Malfa et al.).

For each eligible word, the options are the lemma names of the WordNet synsets of the
word's lemma in the WordNet part of speech of its UPOS (NOUN -> ``n``, VERB -> ``v``,
ADJ -> ``a`` and satellites ``s``, ADV -> ``r``), in WordNet's sense order (most frequent
sense first), inflected like the original word (number, tense and verb form, degree —
from its XPOS, or from UPOS + FEATS when XPOS is not a PTB tag) and written with its
capitalisation. The original form and lemma are excluded; a synonym that cannot be
inflected to the needed tag (``important`` has no one-word comparative) is skipped.

Synonym lookups are cached per ``(lemma, WordNet pos)`` for the life of the generator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Literal

from brittle.engine.core.resources import load_wordnet
from brittle.engine.core.sentence import Sentence
from brittle.search.generators.base import GENERATORS, SubstitutionGenerator
from brittle.search.generators.eligibility import is_lettered
from brittle.search.generators.inflection import (
    inflect_lemma,
    load_inflections,
    match_case,
    target_tag,
)
from brittle.search.generators.lexicon import WORDNET_POS
from brittle.search.table import Candidate, SubstitutionTable

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

__all__ = ["CoPOS"]


@GENERATORS.register("copos", help="WordNet synonyms with the same POS, inflected")
@dataclass(frozen=True, eq=False, kw_only=True)
class CoPOS(SubstitutionGenerator):
    """WordNet same-POS synonym substitutions.

    Attributes:
        multiword: what to do with multiword lemmas (``look_up``): ``"skip"`` them, or
            ``"hyphen"`` to write them as one hyphenated word (``look-up``).
        allow_capitalised: keep lemma names with capitals (mostly names; ``Einstein`` for
            ``genius``); off by default.
        inflect: inflect synonyms like the original (off: use the bare lemma names).
        wordnet: an NLTK WordNet corpus reader; ``None`` loads the offline-provisioned
            one from :func:`brittle.engine.core.resources.load_wordnet` on first use.
    """

    method: ClassVar[str] = "copos"
    requires: ClassVar[frozenset[str]] = frozenset({"form", "lemma", "upos", "xpos", "feats"})
    needs: ClassVar[frozenset[str]] = frozenset({"wordnet"})

    multiword: Literal["skip", "hyphen"] = "skip"
    allow_capitalised: bool = False
    inflect: bool = True
    wordnet: WordNetCorpusReader | None = None
    _synonyms: dict[tuple[str, str], tuple[str, ...]] = field(
        default_factory=dict, init=False, repr=False
    )
    _state: dict[str, WordNetCorpusReader] = field(default_factory=dict, init=False, repr=False)

    def _wordnet(self) -> WordNetCorpusReader:
        if self.wordnet is not None:
            return self.wordnet
        if "wordnet" not in self._state:
            self._state["wordnet"] = load_wordnet()
        return self._state["wordnet"]

    def prepare(self) -> None:
        """Load WordNet and, when inflecting, lemminflect's tables."""
        self._wordnet()
        if self.inflect:
            load_inflections()

    def synonyms(self, lemma: str, pos: str) -> tuple[str, ...]:
        """Synonym lemma names of ``lemma`` for WordNet ``pos`` (``n``, ``v``, ``a``, ``r``).

        In sense order, without duplicates and without ``lemma`` itself; multiword and
        capitalised names handled as configured. Cached.
        """
        key = (lemma.lower(), pos)
        hit = self._synonyms.get(key)
        if hit is not None:
            return hit
        wn = self._wordnet()
        seen: dict[str, None] = {}
        for synset in wn.synsets(key[0], pos=pos):
            for name in synset.lemma_names():
                word = self._clean(name)
                if word is not None and word.lower() != key[0]:
                    seen.setdefault(word, None)
        out = tuple(seen)
        self._synonyms[key] = out
        return out

    def _clean(self, name: str) -> str | None:
        if "_" in name:
            if self.multiword == "skip":
                return None
            name = name.replace("_", "-")
        if not is_lettered(name):
            return None
        if not self.allow_capitalised and name != name.lower():
            return None
        return name

    def candidates(
        self, sentences: Sequence[Sentence], *, top_k: int | None = None
    ) -> list[SubstitutionTable]:
        """Same-POS synonyms of every eligible word; see the module docstring."""
        k = self._k(top_k)

        def options_at(sentence: Sentence, i: int) -> list[Candidate]:
            word = sentence.words[i]
            return self._options(word.form, word.lemma, word.upos, word.xpos, word.feats_dict)[:k]

        return self.tables_by_word(sentences, options_at)

    def _options(
        self, form: str, lemma: str, upos: str, xpos: str, feats: dict[str, str]
    ) -> list[Candidate]:
        pos = WORDNET_POS.get(upos)
        if pos is None:
            return []
        base = lemma if lemma not in ("_", "") else form
        tag = target_tag(upos, xpos, feats) if self.inflect else None
        out: list[Candidate] = []
        seen = {form.lower()}
        for synonym in self.synonyms(base, pos):
            surface = synonym if tag is None else inflect_lemma(synonym, tag)
            if surface is None or " " in surface:
                continue
            surface = match_case(form, surface)
            if surface.lower() in seen:
                continue
            seen.add(surface.lower())
            out.append((surface, synonym))
        return out
