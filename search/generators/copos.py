"""coPOS: WordNet synonyms with the same part of speech (La Malfa et al.).

For each eligible word, the options are the lemma names of the WordNet synsets of the
word's lemma in the WordNet part of speech of its UPOS (NOUN -> ``n``, VERB -> ``v``,
ADJ -> ``a`` and satellites ``s``, ADV -> ``r``). Which senses, and in what order, is
the ``sense`` option:

- ``context`` (default): only the senses the word has in its sentence, chosen by how
  close each sense's gloss is to the sentence in the sentence encoder's embedding
  (:func:`~brittle.search.generators.sense.choose_senses`; senses within ``margin`` of
  the best). This is what keeps "Is this seat taken?" from becoming "Is this butt
  taken?".
- ``first``: only the lemma's most frequent sense (its first synset).
- ``all``: every sense in WordNet's order (most frequent sense first), as La Malfa et al.

With ``context``, a word whose best sense is less than ``min_lead`` (default 0.1) ahead
of its second is unsure and left alone: an unsure choice changes nothing. With
``confirm`` (off by default) its best sense's synonyms are put to a second test
instead: each is put in the sentence and its *own* senses are scored the same way; it
is offered only when the sense it came from is its best there and its commonest
(SemCor), since a reader takes a word in its commonest sense. *needs* → *requires*
(necessitate.v.01) passes; *involves* (read as involve.v.01, "contain as a part") and
*demands* (demand.v.01 first, "request urgently") do not. A word whose two best
senses tie (a lead under ``min_confirm_lead``, 0.02) is left alone all the same: the
context does not lean, and a substitute with one sense of its own always passes the
second test (SPEAKERS → LOUDSPEAKERS in a heading, *varieties* of a language →
*assortments*). ``confirm`` widens the pool, not at the same precision, since the
gloss similarity that chose the sense is also what confirms it (docs/validity.md reads
what the meaning preset keeps).

Three filters keep the offers to words a reader would accept in that sense:

- ``min_count`` (default 1): a synonym is offered only when SemCor tagged it with that
  sense at least this often (WordNet's ``cntlist``). WordNet lists many rare or
  technical lemmas beside the common one (*cognize* for *know*, *cervix* for *neck*,
  *orbiter* for *satellite*); they are nearly all absent from SemCor. 0 offers every
  lemma of the sense, as La Malfa et al.
- ``max_senses`` (default 12; 0: no limit): words with more WordNet senses than this
  for their part of speech are not substituted at all. The senses of light verbs and
  the most polysemous words (*get* 36, *go* 30, *call* 28, *have* 19, *open* 21) are
  too many to choose from reliably: "Call a vet" became "Cry a vet", "You'll have to
  drive" became "You'll own to drive".
- ``max_substitute_senses`` (default 12; 0: no limit): nor is a synonym offered that has
  more senses than this itself, since a reader takes it in its commonest sense
  (become.v.01 lists *get* and *go*: "you'll become a philosopher" became "you'll get a
  philosopher").

Five more rules judge a synonym by how it is used rather than by its sense:

- ``substitute_frames`` (default on): a verb's synonym is offered only when its own
  WordNet sentence frames, in the senses it shares with the verb, allow the verb's use
  in the tree (:mod:`~brittle.search.generators.frames`): *conceal* always takes an
  object, so "then hide behind lack of proof" keeps *hide*; *alter* is intransitive in
  change.v.03, so "salaries have barely altered" stays.
- ``min_relative_count`` (default 0.08): a synonym is offered only when SemCor tagged
  it in the sense at least this share as often as the word itself (counts plus one):
  government.n.01 is *government* 100 times and *regime* twice, desire.v.01 *want* 389
  times and *desire* 25; *pupil* (8 against 67 for *student*) stays.
- ``max_rarity`` (default 25; 0: no limit): nor when its form is more than this many
  times rarer than the original's (GloVe frequency ranks;
  :func:`~brittle.search.generators.usage.rarity`): *war* -> *warfare* (46), *groups*
  -> *groupings* (51), *like* -> *wish* (29) change the register; *results* ->
  *outcomes* (21) does not.
- ``count_nouns`` (default on): where the tree needs a count noun (a plural, or a
  singular after *a*, *each*, ...), a noun with no plural in use is not offered
  ("the early zeroes" is not "the early nothings";
  :func:`~brittle.search.generators.usage.is_countable`).
- ``bare_idioms`` (default on): a count noun standing bare in a prepositional phrase
  (*concurring in part*, *in connection with*) is part of an idiom and not substituted
  ("concurring in **portion**"; :func:`~brittle.search.generators.usage.bare_idiom`).

coPOS's eligibility also leaves alone the focus, degree and discourse adverbs of
:data:`~brittle.search.generators.eligibility.FUNCTION_ADVERBS` (*just*, *only*,
*still*, *pretty*: their WordNet senses do not describe their use), the words of
``flat`` names (*Parts I and II*) and the capitalised words of a title written inside
the sentence (*a Working Out Loud principle*, not *Working Out Loudly*);
``-o eligibility.function_adverbs=true``, ``-o eligibility.flat_expressions=true`` and
``-o eligibility.title_words=true`` make them eligible again. ``usage_checks``
(default on) turns these eight rules and the abbreviation filter off at once when
false: the pool as it was before them.

Synonyms are inflected like the original word (number, tense and verb form, degree —
from its XPOS, or from UPOS + FEATS when XPOS is not a PTB tag) and written with its
capitalisation. Lemma names without a vowel are abbreviations (*hr* for *hour*, *yr*
for *year*) and not offered (unless ``usage_checks`` is off). The original form and
lemma are excluded, and so is a synonym that is the word itself in another form
(WordNet base forms: *wish* → *wishing*, *clustering* → *cluster*); a synonym that
cannot be inflected to the needed tag (``important`` has no one-word comparative) is
skipped.

Sense lookups are cached per ``(lemma, WordNet pos)`` for the life of the generator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, ClassVar, Literal

from brittle.engine.core.errors import ConfigError
from brittle.engine.core.resources import load_wordnet
from brittle.engine.core.sentence import Sentence
from brittle.search.generators.base import GENERATORS, SubstitutionGenerator
from brittle.search.generators.eligibility import Eligibility, is_lettered
from brittle.search.generators.frames import (
    fits,
    infinitive_after_object,
    infinitive_fits,
    synonym_fits,
    verb_use,
)
from brittle.search.generators.inflection import (
    inflect_lemma,
    load_inflections,
    match_case,
    target_tag,
)
from brittle.search.generators.lexicon import WORDNET_POS
from brittle.search.generators.sense import Sense, choose_senses, confirmed
from brittle.search.generators.surface import surface_of
from brittle.search.generators.usage import bare_idiom, count_use, is_countable, rarity
from brittle.search.generators.vocabulary import frequency_rank
from brittle.search.sentence_models import sentence_encoder
from brittle.search.table import Candidate, SubstitutionTable

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import Lemma, WordNetCorpusReader

__all__ = ["COPOS_ELIGIBILITY", "CoPOS", "SenseMode"]

#: coPOS's eligibility: the plain rules, and neither the focus, degree and discourse
#: adverbs (:data:`~brittle.search.generators.eligibility.FUNCTION_ADVERBS`), the
#: words of ``flat`` names (*Parts I and II*) nor the capitalised words of a title.
COPOS_ELIGIBILITY = Eligibility(function_adverbs=False, flat_expressions=False, title_words=False)

#: Which WordNet senses coPOS draws synonyms from (see the module docstring).
SenseMode = Literal["context", "first", "all"]


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
        sense: ``context``, ``first`` or ``all`` (see the module docstring).
        min_lead: ``context``: a word whose best sense scores less than this above its
            second best is unsure (0: never): see ``confirm``.
        confirm: ``context``: substitute a word of unsure sense (``min_lead``) with the
            synonyms of its best sense that, put in the sentence, are read in that
            sense (their own best-scoring and commonest sense); false (default)
            leaves such a word alone.
        min_confirm_lead: ``confirm``: a word whose best sense leads its second by
            less than this is left alone all the same: its senses tie, so the context
            does not say which one it has, and a substitute with one sense of its own
            always passes the second test.
        margin: ``context``: senses scoring within this of the best sense are kept too
            (0: the best sense only).
        prior_weight: ``context``: weight of a sense's log relative frequency (SemCor
            counts) beside its gloss similarity.
        min_count: offer a synonym only when SemCor tagged it with the sense at least
            this often (0: every lemma of the sense).
        max_senses: leave words with more senses than this unchanged (0: no limit).
        max_substitute_senses: offer a synonym only when it has at most this many
            WordNet senses for the part of speech (0: no limit). A very polysemous
            substitute is read in its commonest sense, whatever sense it was offered in
            (*get* and *go* for *become*, *throw* for *switch*).
        min_sense_count: substitute a word only in senses SemCor tagged the word itself
            with at least this often (0: any sense). WordNet lists senses a word is
            never seen in (*mass* as an adjective is only "aggregate").
        verb_frames: for a verb, consider only the senses whose WordNet sentence frames
            allow its use in the tree (with an object, with a that-clause, or neither;
            :mod:`~brittle.search.generators.frames`): *hide* with no object is not
            "conceal".
        substitute_frames: for a verb, offer a synonym only when its own WordNet frames
            in the senses it shares with the verb allow the verb's use in the tree.
        min_relative_count: offer a synonym only when SemCor tagged it in the sense at
            least this share as often as the word itself (each count plus one; 0: no
            limit).
        max_rarity: offer a synonym only when its form is at most this many times
            rarer than the original's (ratio of GloVe frequency ranks; 0: no limit).
            This and ``count_nouns`` read the offline GloVe vocabulary.
        count_nouns: where the tree needs a count noun (a plural, a singular after
            *a*, *an*, *another*, *each*, *every*), offer only nouns with a plural in
            use.
        bare_idioms: leave alone a count noun that stands bare in a prepositional
            phrase (*in part*, *on purpose*): an idiom, not a free choice of noun.
        usage_checks: false turns off ``substitute_frames``, ``min_relative_count``,
            ``max_rarity``, ``count_nouns``, ``bare_idioms``, the abbreviation filter
            and the eligibility rules for function adverbs, ``flat`` names and title
            words at once, whatever they are set to.
        max_rank: offer a synonym only when its form is among the ``max_rank`` most
            frequent words (GloVe's vocabulary order; 0: no limit), which rules out
            archaic and rare words (*withal* is 290,880th, *tenner* 160,039th).
        device: ``context``: torch device of the sentence encoder (default ``cuda`` when
            available, else ``cpu``).
        wordnet: an NLTK WordNet corpus reader; ``None`` loads the offline-provisioned
            one from :func:`brittle.engine.core.resources.load_wordnet` on first use.
    """

    keeps_meaning: ClassVar[bool] = True
    requires: ClassVar[frozenset[str]] = frozenset({"form", "lemma", "upos", "xpos", "feats"})
    needs: ClassVar[frozenset[str]] = frozenset({"wordnet", "glove"})

    multiword: Literal["skip", "hyphen"] = "skip"
    allow_capitalised: bool = False
    inflect: bool = True
    sense: SenseMode = "context"
    margin: float = 0.0
    min_lead: float = 0.1
    confirm: bool = False
    min_confirm_lead: float = 0.02
    prior_weight: float = 0.05
    min_count: int = 1
    max_senses: int = 12
    max_rank: int = 0
    max_substitute_senses: int = 12
    min_sense_count: int = 0
    verb_frames: bool = False
    substitute_frames: bool = True
    min_relative_count: float = 0.08
    max_rarity: float = 25.0
    count_nouns: bool = True
    bare_idioms: bool = True
    usage_checks: bool = True
    eligibility: Eligibility = field(default_factory=lambda: COPOS_ELIGIBILITY)
    device: str | None = None
    wordnet: WordNetCorpusReader | None = None
    _senses: dict[tuple[str, str], tuple[Sense, ...]] = field(
        default_factory=dict, init=False, repr=False
    )
    _state: dict[str, WordNetCorpusReader] = field(default_factory=dict, init=False, repr=False)
    _counts_checked: list[bool] = field(default_factory=list, init=False, repr=False)

    def _wordnet(self) -> WordNetCorpusReader:
        if self.wordnet is not None:
            return self.wordnet
        if "wordnet" not in self._state:
            self._state["wordnet"] = load_wordnet()
        return self._state["wordnet"]

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.usage_checks:
            plain = replace(
                self.eligibility, function_adverbs=True, flat_expressions=True, title_words=True
            )
            object.__setattr__(self, "eligibility", plain)
        if self.margin < 0:
            raise ValueError(f"margin must be at least 0, got {self.margin}")
        if self.min_lead < 0:
            raise ValueError(f"min_lead must be at least 0, got {self.min_lead}")
        if self.min_confirm_lead < 0:
            raise ValueError(f"min_confirm_lead must be at least 0, got {self.min_confirm_lead}")
        if self.min_count < 0:
            raise ValueError(f"min_count must be at least 0, got {self.min_count}")
        if self.max_senses < 0:
            raise ValueError(f"max_senses must be at least 0 (0: no limit), got {self.max_senses}")
        if self.max_substitute_senses < 0:
            raise ValueError(
                "max_substitute_senses must be at least 0 (0: no limit), got "
                f"{self.max_substitute_senses}"
            )
        if self.min_sense_count < 0:
            raise ValueError(f"min_sense_count must be at least 0, got {self.min_sense_count}")
        if self.min_relative_count < 0:
            raise ValueError(
                f"min_relative_count must be at least 0, got {self.min_relative_count}"
            )
        if self.max_rarity < 0:
            raise ValueError(f"max_rarity must be at least 0 (0: no limit), got {self.max_rarity}")
        if self.max_rank < 0:
            raise ValueError(f"max_rank must be at least 0 (0: no limit), got {self.max_rank}")

    def prepare(self) -> None:
        """Load WordNet, lemminflect's tables when inflecting, the encoder for ``context``,
        GloVe's frequency order for ``max_rarity``, ``count_nouns`` and ``max_rank``."""
        self._wordnet()
        if self.inflect:
            load_inflections()
        if self.max_rank or (self.usage_checks and (self.max_rarity or self.count_nouns)):
            frequency_rank("the")
        if self.sense == "context":
            sentence_encoder(device=self.device).embed(["warm-up"])

    def senses(self, lemma: str, pos: str) -> tuple[Sense, ...]:
        """The WordNet senses of ``lemma`` for ``pos`` (``n``, ``v``, ``a``, ``r``), in
        WordNet's order, each with its gloss and its synonyms (multiword and capitalised
        names handled as configured, synonyms SemCor tagged fewer than ``min_count``
        times in the sense and ``lemma`` itself left out). Cached."""
        key = (lemma.lower(), pos)
        hit = self._senses.get(key)
        if hit is not None:
            return hit
        if (self.min_count or self.min_sense_count) and not self._counts_checked:
            _require_counts(self._wordnet())
            self._counts_checked.append(True)
        synsets = self._wordnet().synsets(key[0], pos=pos)
        # a synonym's frames in every sense it shares with the word ("alter" is
        # transitive in change.v.01 and intransitive in change.v.03)
        shared: dict[str, frozenset[int]] = {}
        for synset in synsets:
            for x in synset.lemmas():
                shared[x.name()] = shared.get(x.name(), frozenset()) | frozenset(x.frame_ids())
        out: list[Sense] = []
        for synset in synsets:
            kept: dict[str, tuple[int, frozenset[int]]] = {}
            for x in synset.lemmas():
                if self.min_count and _count(x) < self.min_count:
                    continue
                w = self._clean(x.name())
                if w and w not in kept and w.lower() != key[0] and self._unambiguous_enough(w, pos):
                    kept[w] = (_count(x), shared[x.name()])
            gloss = "; ".join([synset.definition(), *synset.examples()])
            own = [x for x in synset.lemmas() if x.name().lower() == key[0]]
            count = sum(_count(x) for x in own)
            frames = frozenset(synset.frame_ids()).union(*(x.frame_ids() for x in own))
            out.append(
                Sense(
                    synset.name(),
                    gloss,
                    tuple(kept),
                    count,
                    frames,
                    synonym_counts=tuple(c for c, _ in kept.values()),
                    synonym_frames=tuple(f for _, f in kept.values()),
                )
            )
        self._senses[key] = tuple(out)
        return self._senses[key]

    def synonyms(self, lemma: str, pos: str, *, first_sense: bool = False) -> tuple[str, ...]:
        """Synonym lemma names of ``lemma`` for WordNet ``pos``, in sense order, without
        duplicates; with ``first_sense`` only those of its first (most frequent) sense."""
        senses = self.senses(lemma, pos)
        return _union(senses[:1] if first_sense else senses)

    def _usable(self, senses: tuple[Sense, ...], sentence: Sentence, i: int) -> tuple[Sense, ...]:
        """The senses ``min_sense_count`` (those SemCor tagged the word with) and
        ``verb_frames`` (those whose frames allow the verb's use) leave."""
        if self.min_sense_count:
            senses = tuple(s for s in senses if s.count >= self.min_sense_count)
        if self.verb_frames and sentence.words[i].upos in ("VERB", "AUX"):
            use = verb_use(sentence, i)
            senses = tuple(s for s in senses if fits(s.frames, use))
        return senses

    def _unambiguous_enough(self, synonym: str, pos: str) -> bool:
        """Whether ``max_substitute_senses`` lets ``synonym`` be offered."""
        if not self.max_substitute_senses:
            return True
        count = len(self._wordnet().synsets(synonym.replace("-", "_"), pos=pos))
        return count <= self.max_substitute_senses

    def _too_polysemous(self, lemma: str, pos: str) -> bool:
        """Whether ``max_senses`` rules the word out."""
        return 0 < self.max_senses < len(self.senses(lemma, pos))

    def _clean(self, name: str) -> str | None:
        if "_" in name:
            if self.multiword == "skip":
                return None
            name = name.replace("_", "-")
        if not is_lettered(name):
            return None
        if self.usage_checks and not any(c in "aeiouy" for c in name.lower()):
            return None  # no vowel: an abbreviation (*hr* for hour, *yr* for year)
        if not self.allow_capitalised and name != name.lower():
            return None
        return name

    def candidates(
        self, sentences: Sequence[Sentence], *, top_k: int | None = None
    ) -> list[SubstitutionTable]:
        """Same-POS synonyms of every eligible word; see the module docstring."""
        k = self._k(top_k)
        if self.sense != "context":

            def options_at(sentence: Sentence, i: int) -> list[Candidate]:
                word = sentence.words[i]
                base, pos = self._lookup(word.form, word.lemma, word.upos)
                if pos is None or self._too_polysemous(base, pos):
                    return []
                usable = self._usable(self.senses(base, pos), sentence, i)
                synonyms = self._fitting(
                    usable[:1] if self.sense == "first" else usable, sentence, i
                )
                return self._options(sentence, i, synonyms)[:k]

            return self.tables_by_word(sentences, options_at)
        queries: list[tuple[int, int]] = []
        contexts: list[str] = []
        senses: list[tuple[Sense, ...]] = []
        for si, sentence in enumerate(sentences):
            text = surface_of(sentence).text
            for i in self.eligibility.positions(sentence):
                word = sentence.words[i]
                base, pos = self._lookup(word.form, word.lemma, word.upos)
                found = (
                    self._usable(self.senses(base, pos), sentence, i)
                    if pos is not None and not self._too_polysemous(base, pos)
                    else ()
                )
                if self._fitting(found, sentence, i):
                    queries.append((si, i))
                    contexts.append(text)
                    senses.append(found)
        chosen = choose_senses(
            contexts,
            senses,
            sentence_encoder(device=self.device),
            margin=self.margin,
            prior_weight=self.prior_weight,
            min_lead=self.min_lead,
        )
        options: list[dict[int, list[Candidate]]] = [{} for _ in sentences]
        unsure: list[tuple[int, int, str, list[Candidate]]] = []
        for (si, i), choice in zip(queries, chosen, strict=True):
            if not choice.sure and not (self.confirm and choice.lead >= self.min_confirm_lead):
                continue
            opts = self._options(sentences[si], i, self._fitting(choice.senses, sentences[si], i))
            if not choice.sure and opts:
                unsure.append((si, i, choice.senses[0].name, opts))
            elif opts:
                options[si][i] = opts[:k]
        for si, i, opts in self._confirmed(sentences, unsure):
            options[si][i] = opts[:k]
        return [
            SubstitutionTable.from_mapping(s.sent_id, self.method, len(s), opts)
            for s, opts in zip(sentences, options, strict=True)
        ]

    def _confirmed(
        self,
        sentences: Sequence[Sentence],
        unsure: Sequence[tuple[int, int, str, list[Candidate]]],
    ) -> list[tuple[int, int, list[Candidate]]]:
        """For each unsure word (sentence index, position, offered synset, options), the
        options that read in the offered sense in their new sentence
        (:func:`~brittle.search.generators.sense.confirmed`); words left with none are
        dropped."""
        texts: list[str] = []
        offered: list[str] = []
        own: list[tuple[Sense, ...]] = []
        surfaces = {si: surface_of(sentences[si]) for si, _, _, _ in unsure}
        for si, i, name, opts in unsure:
            pos = WORDNET_POS[sentences[si].words[i].upos]
            for form, lemma in opts:
                texts.append(surfaces[si].replaced(i, form))
                offered.append(name)
                own.append(self.senses(lemma, pos))
        verdicts = iter(
            confirmed(
                texts,
                offered,
                own,
                sentence_encoder(device=self.device),
                prior_weight=self.prior_weight,
            )
        )
        out: list[tuple[int, int, list[Candidate]]] = []
        for si, i, _name, opts in unsure:
            kept = [option for option in opts if next(verdicts)]
            if kept:
                out.append((si, i, kept))
        return out

    @staticmethod
    def _lookup(form: str, lemma: str, upos: str) -> tuple[str, str | None]:
        """The lemma to look up (the form when the lemma is blank) and its WordNet pos."""
        return (lemma if lemma not in ("_", "") else form), WORDNET_POS.get(upos)

    def _fitting(self, senses: Sequence[Sense], sentence: Sentence, i: int) -> tuple[str, ...]:
        """The synonyms of ``senses`` (in order, each once) that fit the word at ``i``:
        for a verb (``substitute_frames``), the synonym's own frames allow the verb's
        use and it takes the infinitive after the object that the verb does ("let them
        know", not "allow them know":
        :func:`~brittle.search.generators.frames.infinitive_fits`); the synonym was
        tagged in the sense at least ``min_relative_count`` times as often as the word
        itself (SemCor counts plus one)."""
        judged = self.usage_checks and self.substitute_frames and sentence.words[i].upos == "VERB"
        use = verb_use(sentence, i) if judged else None
        after = infinitive_after_object(sentence, i) if judged else None
        out: dict[str, None] = {}
        ratio = self.min_relative_count if self.usage_checks else 0.0
        for sense in senses:
            for j, synonym in enumerate(sense.synonyms):
                frames = sense.synonym_frames[j] if sense.synonym_frames else frozenset()
                if use is not None and not synonym_fits(synonym, frames, use):
                    continue
                if not infinitive_fits(synonym, after):
                    continue
                if (
                    ratio
                    and sense.synonym_counts
                    and sense.synonym_counts[j] + 1 < ratio * (sense.count + 1)
                ):
                    continue
                out.setdefault(synonym)
        return tuple(out)

    def _options(self, sentence: Sentence, i: int, synonyms: Sequence[str]) -> list[Candidate]:
        """The inflected, case-matched forms of ``synonyms`` for the word at ``i`` that
        pass ``max_rank``, ``max_rarity`` and ``count_nouns``."""
        word = sentence.words[i]
        form, upos, feats = word.form, word.upos, word.feats_dict
        tag = target_tag(upos, word.xpos, feats) if self.inflect else None
        usage = self.usage_checks
        if usage and self.bare_idioms and upos == "NOUN" and bare_idiom(sentence, i):
            return []
        counted = usage and self.count_nouns and upos == "NOUN" and count_use(sentence, i)
        out: list[Candidate] = []
        seen = {form.lower()}
        own = self._bases(word.lemma if word.lemma not in ("_", "") else form)
        for synonym in synonyms:
            if counted and not is_countable(synonym):
                continue
            if own & self._bases(synonym):
                continue  # the word itself in another form: *wish* -> *wishing*
            surface = (
                synonym
                if tag is None
                else inflect_lemma(
                    synonym, tag, number=feats.get("Number"), person=feats.get("Person")
                )
            )
            if surface is None or " " in surface:
                continue
            surface = match_case(form, surface)
            if surface.lower() in seen or not self._common(surface):
                continue
            if usage and self.max_rarity and (rarity(form, surface) or 0.0) > self.max_rarity:
                continue
            seen.add(surface.lower())
            out.append((surface, synonym))
        return out

    def _bases(self, word: str) -> frozenset[str]:
        """``word`` (lowercase) and its WordNet base forms in every part of speech:
        *wishing* -> {wishing, wish}, *clustering* -> {clustering, cluster}."""
        lower = word.lower()
        found = {lower}
        for pos in ("n", "v", "a", "r"):
            base = self._wordnet().morphy(lower, pos)
            if base is not None:
                found.add(base.lower())
        return frozenset(found)

    def _common(self, surface: str) -> bool:
        """Whether ``surface`` is frequent enough for ``max_rank`` (always, with 0)."""
        if not self.max_rank:
            return True
        rank = frequency_rank(surface.lower())
        return rank is not None and rank < self.max_rank


def _union(senses: Sequence[Sense]) -> tuple[str, ...]:
    """The synonyms of ``senses``, in order, each once."""
    return tuple(dict.fromkeys(w for sense in senses for w in sense.synonyms))


def _require_counts(wordnet: WordNetCorpusReader) -> None:
    """Refuse ``min_count`` when this WordNet copy has no SemCor counts at all."""
    if _count(wordnet.lemma("dog.n.01.dog")) == 0:
        raise ConfigError(
            "copos: this WordNet copy has no SemCor sense counts (cntlist.rev), which "
            "min_count needs; run `brittle resources --provision` or pass -o min_count=0"
        )


def _count(lemma: Lemma) -> int:
    """SemCor frequency of a WordNet lemma in its sense (0 when the WordNet copy has no
    ``cntlist.rev``, which some distributions leave out)."""
    try:
        return int(lemma.count())
    except (OSError, LookupError):
        return 0
