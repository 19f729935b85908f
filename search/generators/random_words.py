"""random: words drawn at random from a vocabulary (the baseline of La Malfa et al.).

The vocabulary is the plain words (lowercase letters) among the ``vocab_size`` most
frequent rows of GloVe 6B (its rows are frequency-ordered), or any frequency-ordered
word list given as ``vocabulary``.

With ``same_pos`` (default) a word may replace a NOUN only if the
:class:`~brittle.search.generators.lexicon.PosLexicon` says it can be a noun, and so on
for each UPOS the lexicon decides (other tags draw from the whole vocabulary). With
``inflect`` (default) content-word slots (NOUN, VERB, ADJ, ADV) draw lemmas of their
class in lemminflect's lexicon and inflect them like the original (``cats`` ->
``houses``, ``ran`` -> ``bought``; ``be`` agrees with the original's Number and
Person), and only lemmas whose inflected form is itself a vocabulary word are drawn
(:func:`~brittle.search.generators.vocabulary.attested_form`: no ``dialoged``,
``informations`` or ``overnicer``; a verb also needs a past or ``-ing`` form in the
vocabulary). Without ``inflect``, any form of the class is drawn as is.

Draws are seeded per ``(seed, sentence id, position)``, so a sentence gets the same
options in any batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from brittle.engine.core.sentence import Sentence
from brittle.search.generators.base import GENERATORS, SubstitutionGenerator, position_rng
from brittle.search.generators.inflection import (
    TAG_FAMILY,
    is_lexicon_lemma,
    match_case,
    target_tag,
)
from brittle.search.generators.lexicon import PosLexicon
from brittle.search.generators.vocabulary import attested_form, frequent_words, glove
from brittle.search.table import Candidate, SubstitutionTable

__all__ = ["RandomWords"]


@GENERATORS.register("random", help="random vocabulary words (same UPOS)")
@dataclass(frozen=True, eq=False, kw_only=True)
class RandomWords(SubstitutionGenerator):
    """Random-word substitutions.

    Attributes:
        vocab_size: frequent rows of the vocabulary considered (``None``: all).
        same_pos: draw only words that can carry the original UPOS.
        inflect: draw lemmas and inflect them like the original (content words).
        seed: seed of the draws.
        vocabulary: a frequency-ordered word list; ``None`` uses GloVe's.
        lexicon: the word -> UPOS lexicon.
        oversample: words drawn per wanted option (room for inflection failures).
    """

    method: ClassVar[str] = "random"
    requires: ClassVar[frozenset[str]] = frozenset({"form", "upos", "xpos", "feats"})
    needs: ClassVar[frozenset[str]] = frozenset({"glove"})

    vocab_size: int | None = 50_000
    same_pos: bool = True
    inflect: bool = True
    seed: int = 0
    vocabulary: Sequence[str] | None = None
    lexicon: PosLexicon = field(default_factory=PosLexicon)
    oversample: int = 3
    _pools: dict[tuple[str, bool], tuple[str, ...]] = field(
        default_factory=dict, init=False, repr=False
    )
    _slots: dict[tuple[str, str], tuple[str, ...]] = field(
        default_factory=dict, init=False, repr=False
    )
    _state: dict[str, tuple[str, ...]] = field(default_factory=dict, init=False, repr=False)
    _known: dict[str, frozenset[str]] = field(default_factory=dict, init=False, repr=False)

    def words(self) -> tuple[str, ...]:
        """The plain words of the vocabulary's first ``vocab_size`` rows, by frequency."""
        if "words" not in self._state:
            source = self.vocabulary if self.vocabulary is not None else glove()[0]
            self._state["words"] = frequent_words(source, self.vocab_size)[0]
        return self._state["words"]

    def pool(self, upos: str) -> tuple[str, ...]:
        """Words drawn for a slot of ``upos`` (lemmas when inflecting content words)."""
        lemmas_only = self.inflect and upos in TAG_FAMILY
        if not self.same_pos or not self.lexicon.decides(upos):
            key = ("*", lemmas_only)
        else:
            key = (upos, lemmas_only)
        hit = self._pools.get(key)
        if hit is not None:
            return hit
        out = []
        for word in self.words():
            if key[0] != "*" and upos not in self.lexicon.upos(word):
                continue
            if lemmas_only and not is_lexicon_lemma(word, upos):
                continue
            out.append(word)
        pool = tuple(out)
        self._pools[key] = pool
        return pool

    def known(self) -> frozenset[str]:
        """The vocabulary's words as a set (inflected forms must be among them)."""
        if "known" not in self._known:
            self._known["known"] = frozenset(self.words())
        return self._known["known"]

    def slot_pool(self, upos: str, tag: str) -> tuple[str, ...]:
        """Lemmas of :meth:`pool` whose form for the PTB ``tag`` is a vocabulary word."""
        key = (upos, tag)
        hit = self._slots.get(key)
        if hit is None:
            known = self.known()
            hit = tuple(w for w in self.pool(upos) if attested_form(w, upos, tag, known))
            self._slots[key] = hit
        return hit

    def candidates(
        self, sentences: Sequence[Sentence], *, top_k: int | None = None
    ) -> list[SubstitutionTable]:
        """Random words for every eligible position; see the module docstring."""
        k = self._k(top_k)

        def options_at(sentence: Sentence, i: int) -> list[Candidate]:
            word = sentence.words[i]
            feats = word.feats_dict
            tag = target_tag(word.upos, word.xpos, feats)
            agreement = (feats.get("Number"), feats.get("Person"))
            return self._draw(
                sentence.sent_id, i, word.form, word.lemma, word.upos, tag, k, agreement
            )

        return self.tables_by_word(sentences, options_at)

    def _draw(
        self,
        sid: str,
        i: int,
        form: str,
        lemma: str,
        upos: str,
        tag: str | None,
        k: int,
        agreement: tuple[str | None, str | None] = (None, None),
    ) -> list[Candidate]:
        inflect_to = tag if self.inflect and upos in TAG_FAMILY else None
        pool = self.pool(upos) if inflect_to is None else self.slot_pool(upos, inflect_to)
        if not pool:
            return []
        rng = position_rng(self.seed, sid, i)
        n = min(len(pool), k * self.oversample)
        picks = rng.choice(len(pool), size=n, replace=False)
        excluded = {form.lower(), lemma.lower()}
        out: list[Candidate] = []
        seen: set[str] = set()
        lemmas_only = self.inflect and upos in TAG_FAMILY
        number, person = agreement
        known = self.known()
        for r in picks.tolist():
            base = pool[r]
            if base in excluded:
                continue
            surface = (
                base
                if inflect_to is None
                else attested_form(base, upos, inflect_to, known, number=number, person=person)
            )
            if surface is None or not surface.isalpha() or surface.lower() in excluded:
                continue
            if surface in seen:
                continue
            seen.add(surface)
            lem = base if lemmas_only else self.lexicon.lemma(base, upos)
            out.append((match_case(form, surface), lem))
            if len(out) == k:
                break
        return out
