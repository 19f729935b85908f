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

Four options make the substitutions keep the sentence grammatical (the
``grammatical`` validity preset turns them all on):

- ``slots=regular`` fills only the regularly inflected slots of common words
  (:mod:`~brittle.search.generators.slots`; adverbs: ``-ly`` manner adverbs, replaced
  by ``-ly`` adverbs);
- ``function_words=false`` neither draws a function word nor replaces one
  (:mod:`~brittle.search.generators.closed_class`);
- ``frames=true`` replaces a verb only when it is used with an object (or in the
  passive) or with no complement, by a verb with a WordNet frame for that use
  (:func:`~brittle.search.generators.frames.slot_uses`; with no complement, not a
  raising verb whose only such frames are predicative, *seem*:
  :func:`~brittle.search.generators.frames.stands_alone`); verbs with a clause, an
  infinitive, a gerund or a predicative complement, and phrasal verbs (with a
  ``compound:prt`` particle), keep their word; an adjective is replaced only before a
  noun or after a copula and without a complement of its own (*fond of*, *willing
  to*), never by one WordNet marks predicate-only before a noun (*afloat*) nor
  prenominal-only after a copula (*former*); a noun used as an adverbial of time or
  measure (*today*) keeps its word;
- ``countability=true`` draws count nouns where only a count noun fits (a plural, or
  after *a*, *each*, *every*) and mass nouns for a bare singular (never a noun that is
  also an adjective, whose frequency cannot tell: *anti*, *crisp*), and leaves alone a
  count noun bare in a prepositional phrase, an idiom (*in connection with*, not *in
  reliance with*; :func:`~brittle.search.generators.usage.bare_idiom`);
- ``wordnet_pos=true`` draws only lemmas WordNet knows in the slot's part of speech.

Draws are seeded per ``(seed, sentence id, position)``, so a sentence gets the same
options in any batch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import ClassVar

from brittle.engine.core.sentence import Sentence
from brittle.search.generators.base import GENERATORS, SubstitutionGenerator, position_rng
from brittle.search.generators.closed_class import is_function_word
from brittle.search.generators.frames import slot_uses, stands_alone, verb_fits, verb_frames
from brittle.search.generators.inflection import (
    TAG_FAMILY,
    is_lexicon_lemma,
    match_case,
    target_tag,
)
from brittle.search.generators.lexicon import WORDNET_POS, PosLexicon
from brittle.search.generators.slots import Slots, common_case, kept_slot, slot_tag
from brittle.search.generators.usage import bare_idiom, bare_singular, count_use, is_countable
from brittle.search.generators.vocabulary import attested_form, frequent_words, glove
from brittle.search.table import Candidate, SubstitutionTable

__all__ = [
    "RandomWords",
    "adjective_position",
    "adjective_positions",
    "wordnet_has",
]


#: Dependents that make an adjective take a complement (its own small class of words).
_COMPLEMENTS = frozenset({"obl", "xcomp", "ccomp", "csubj", "advcl"})
#: Relations of nouns used as adverbials of time or measure.
_ADVERBIAL_NOUNS = frozenset(
    {"obl:tmod", "obl:npmod", "obl:unmarked", "nmod:tmod", "nmod:npmod", "nmod:unmarked"}
)


def _dependents(sentence: Sentence, index: int) -> frozenset[str]:
    """The relations (subtypes dropped) of the word at 0-based ``index``'s dependents."""
    head = str(index + 1)
    return frozenset(w.deprel.split(":")[0] for w in sentence.words if w.head == head)


#: The uses for which a drawn verb is judged by its frames; other slots keep their verb.
_PLAIN_USES = frozenset({"transitive", "intransitive"})


def _counted(sentence: Sentence, index: int) -> bool:
    """Whether the noun at 0-based ``index`` has a number of its own ("one response")."""
    head = str(index + 1)
    return any(w.head == head and w.deprel == "nummod" for w in sentence.words)


@cache
def adjective_positions(lemma: str) -> frozenset[str]:
    """Where the adjective ``lemma`` may stand, from WordNet's syntactic markers over
    its senses: ``attributive`` (before a noun) unless half its senses or more are
    marked predicate-only (*afloat*, *asleep*; *ablaze*, of whose four senses WordNet
    marks two), ``predicative`` (after a copula) unless half or more are marked
    prenominal-only (*former*, *mere*). Empty: not an adjective WordNet knows."""
    from brittle.engine.core.resources import load_wordnet  # deferred: reads WordNet

    markers = [
        entry.syntactic_marker()
        for synset in load_wordnet().synsets(lemma, pos="a")
        for entry in synset.lemmas()
        if entry.name().lower() == lemma.lower()
    ]
    out = set()
    n = len(markers)
    if n and 2 * sum(m == "(p)" for m in markers) < n:
        out.add("attributive")
    if n and 2 * sum(m in ("(a)", "(ip)") for m in markers) < n:
        out.add("predicative")
    return frozenset(out)


def adjective_position(sentence: Sentence, index: int) -> str | None:
    """``attributive`` for an adjective modifying a noun (``amod``), ``predicative``
    for one with a copula, else ``None`` (not judged)."""
    word = sentence.words[index]
    if word.deprel.split(":")[0] == "amod":
        return "attributive"
    head = str(index + 1)
    if any(w.head == head and w.deprel == "cop" for w in sentence.words):
        return "predicative"
    return None


@cache
def wordnet_has(lemma: str, pos: str) -> bool:
    """Whether WordNet has ``lemma`` in the part of speech ``pos`` (``n``, ``v``, ``a``,
    ``r``): lemminflect's lexicon lists *predate*, *frosty* and *intolerant* as nouns
    too, WordNet does not."""
    from brittle.engine.core.resources import load_wordnet  # deferred: reads WordNet

    return bool(load_wordnet().synsets(lemma, pos=pos))


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
        slots: ``content``, ``regular`` or ``paper`` (module docstring).
        function_words: draw and replace function words too.
        frames: verbs only with a WordNet frame for the slot's use.
        countability: count nouns for count slots, mass nouns for bare singulars.
        wordnet_pos: only lemmas WordNet knows in the slot's part of speech.
    """

    requires: ClassVar[frozenset[str]] = frozenset({"form", "upos", "xpos", "feats"})
    needs: ClassVar[frozenset[str]] = frozenset({"glove"})

    vocab_size: int | None = 50_000
    same_pos: bool = True
    inflect: bool = True
    seed: int = 0
    vocabulary: Sequence[str] | None = None
    lexicon: PosLexicon = field(default_factory=PosLexicon)
    oversample: int = 3
    slots: Slots = "content"
    function_words: bool = True
    frames: bool = False
    countability: bool = False
    wordnet_pos: bool = False
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
            if not self._fillable(sentence, i):
                return []
            agreement = (feats.get("Number"), feats.get("Person"))
            fits = self._fit(sentence, i)
            return self._draw(
                sentence.sent_id, i, word.form, word.lemma, word.upos, tag, k, agreement, fits
            )

        return self.tables_by_word(sentences, options_at)

    def _fillable(self, sentence: Sentence, i: int) -> bool:
        """Whether the options leave the slot at ``i`` to be filled at all."""
        word = sentence.words[i]
        if self.slots != "content":
            tag = slot_tag(word.upos, word.xpos, word.feats_dict, word.form, self.slots)
            if tag is None or not common_case(word.form, i) or kept_slot(sentence, i):
                return False
        if not self.function_words and (
            is_function_word(word.form, self.lexicon) or is_function_word(word.lemma, self.lexicon)
        ):
            return False
        if self.frames and word.upos == "VERB":
            head = str(i + 1)
            if any(w.head == head and w.deprel == "compound:prt" for w in sentence.words):
                return False  # a phrasal verb: its meaning is the verb's and the particle's
            if slot_uses(sentence, i) - _PLAIN_USES:
                # verbs with a clause, an infinitive, a gerund or a predicate (think,
                # allow, keep, consider) are small classes whose frames WordNet does not
                # separate well enough: "what do you lodge was ...", "can be rolled
                # representative" passed the frame test
                return False
        if self.frames and word.upos == "ADJ":
            if adjective_position(sentence, i) is None:
                return False  # an adjective used as a noun or in an idiom ("for short")
            if _dependents(sentence, i) & _COMPLEMENTS:
                return False  # "fond of", "willing to", "nasty to": few adjectives take one
        if self.countability and word.upos == "NOUN" and bare_idiom(sentence, i):
            return False  # a count noun bare in a phrase is an idiom: "in connection with"
        # a bare noun of time or measure ("announced its ruling today") is adverbial
        return not (self.frames and word.upos == "NOUN" and word.deprel in _ADVERBIAL_NOUNS)

    def _fit(self, sentence: Sentence, i: int) -> Callable[[str], bool]:
        """What a drawn lemma must satisfy in the slot at ``i`` (beyond its class)."""
        word = sentence.words[i]
        tests: list[Callable[[str], bool]] = []
        if not self.function_words:
            tests.append(lambda lemma: not is_function_word(lemma, self.lexicon))
        pos = WORDNET_POS.get(word.upos)
        if self.wordnet_pos and pos is not None:
            tests.append(lambda lemma: wordnet_has(lemma, pos))
        if self.slots != "content" and word.upos == "ADV":
            tests.append(lambda lemma: lemma.endswith("ly"))
        if self.frames and word.upos == "VERB":
            uses = slot_uses(sentence, i)
            tests.append(lambda lemma: verb_fits(lemma, uses))
            if uses == {"intransitive"}:  # no complement: no raising verb that wants one
                tests.append(lambda lemma: stands_alone(verb_frames(lemma)))
        if self.frames and word.upos == "ADJ":
            position = adjective_position(sentence, i)
            if position is not None:
                tests.append(lambda lemma: position in adjective_positions(lemma))
        if self.countability and word.upos == "NOUN":
            if count_use(sentence, i) or _counted(sentence, i):
                tests.append(is_countable)
            elif bare_singular(sentence, i):
                # a bare singular wants a mass noun, and is_countable reads a form's
                # frequency over all its uses: a noun that is also an adjective is
                # counted mostly as the adjective and looks like a mass noun when it
                # is a count noun ("to hostile anti", "in Palestinian crisp")
                tests.append(
                    lambda lemma: not is_countable(lemma) and "ADJ" not in self.lexicon.upos(lemma)
                )
        return lambda lemma: all(test(lemma) for test in tests)

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
        fits: Callable[[str], bool] | None = None,
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
            if base in excluded or (fits is not None and not fits(base)):
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
