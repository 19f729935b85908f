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
of its second is left alone: an unsure choice changes nothing. Three filters keep the
offers to words a reader would accept in that sense:

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

Synonyms are inflected like the original word (number, tense and verb form, degree —
from its XPOS, or from UPOS + FEATS when XPOS is not a PTB tag) and written with its
capitalisation. The original form and lemma are excluded; a synonym that cannot be
inflected to the needed tag (``important`` has no one-word comparative) is skipped.

Sense lookups are cached per ``(lemma, WordNet pos)`` for the life of the generator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Literal

from brittle.engine.core.errors import ConfigError
from brittle.engine.core.resources import load_wordnet
from brittle.engine.core.sentence import Sentence
from brittle.search.generators.base import GENERATORS, SubstitutionGenerator
from brittle.search.generators.eligibility import is_lettered
from brittle.search.generators.frames import fits, verb_use
from brittle.search.generators.inflection import (
    inflect_lemma,
    load_inflections,
    match_case,
    target_tag,
)
from brittle.search.generators.lexicon import WORDNET_POS
from brittle.search.generators.sense import Sense, choose_senses
from brittle.search.generators.surface import surface_of
from brittle.search.generators.vocabulary import frequency_rank
from brittle.search.sentence_models import sentence_encoder
from brittle.search.table import Candidate, SubstitutionTable

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import Lemma, WordNetCorpusReader

__all__ = ["CoPOS", "SenseMode"]

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
        min_lead: ``context``: leave a word alone when its best sense scores less than
            this above its second best (0: never); a word of unsure sense keeps its form.
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
        max_rank: offer a synonym only when its form is among the ``max_rank`` most
            frequent words (GloVe's vocabulary order; 0: no limit), which rules out
            archaic and rare words (*withal* is 290,880th, *tenner* 160,039th).
        device: ``context``: torch device of the sentence encoder (default ``cuda`` when
            available, else ``cpu``).
        wordnet: an NLTK WordNet corpus reader; ``None`` loads the offline-provisioned
            one from :func:`brittle.engine.core.resources.load_wordnet` on first use.
    """

    method: ClassVar[str] = "copos"
    keeps_meaning: ClassVar[bool] = True
    requires: ClassVar[frozenset[str]] = frozenset({"form", "lemma", "upos", "xpos", "feats"})
    needs: ClassVar[frozenset[str]] = frozenset({"wordnet"})

    multiword: Literal["skip", "hyphen"] = "skip"
    allow_capitalised: bool = False
    inflect: bool = True
    sense: SenseMode = "context"
    margin: float = 0.0
    min_lead: float = 0.1
    prior_weight: float = 0.05
    min_count: int = 1
    max_senses: int = 12
    max_rank: int = 0
    max_substitute_senses: int = 12
    min_sense_count: int = 0
    verb_frames: bool = False
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
        if self.margin < 0:
            raise ValueError(f"margin must be at least 0, got {self.margin}")
        if self.min_lead < 0:
            raise ValueError(f"min_lead must be at least 0, got {self.min_lead}")
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
        if self.max_rank < 0:
            raise ValueError(f"max_rank must be at least 0 (0: no limit), got {self.max_rank}")

    def prepare(self) -> None:
        """Load WordNet, lemminflect's tables when inflecting, the encoder for ``context``."""
        self._wordnet()
        if self.inflect:
            load_inflections()
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
        out: list[Sense] = []
        for synset in self._wordnet().synsets(key[0], pos=pos):
            names = (
                self._clean(x.name())
                for x in synset.lemmas()
                if self.min_count == 0 or _count(x) >= self.min_count
            )
            synonyms = tuple(
                dict.fromkeys(
                    w
                    for w in names
                    if w and w.lower() != key[0] and self._unambiguous_enough(w, pos)
                )
            )
            gloss = "; ".join([synset.definition(), *synset.examples()])
            own = [x for x in synset.lemmas() if x.name().lower() == key[0]]
            count = sum(_count(x) for x in own)
            frames = frozenset(synset.frame_ids()).union(*(x.frame_ids() for x in own))
            out.append(Sense(synset.name(), gloss, synonyms, count, frames))
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
                synonyms = _union(usable[:1] if self.sense == "first" else usable)
                return self._options(word.form, word.upos, word.xpos, word.feats_dict, synonyms)[:k]

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
                if any(sense.synonyms for sense in found):
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
        for (si, i), kept in zip(queries, chosen, strict=True):
            word = sentences[si].words[i]
            opts = self._options(word.form, word.upos, word.xpos, word.feats_dict, _union(kept))
            if opts:
                options[si][i] = opts[:k]
        return [
            SubstitutionTable.from_mapping(s.sent_id, self.method, len(s), opts)
            for s, opts in zip(sentences, options, strict=True)
        ]

    @staticmethod
    def _lookup(form: str, lemma: str, upos: str) -> tuple[str, str | None]:
        """The lemma to look up (the form when the lemma is blank) and its WordNet pos."""
        return (lemma if lemma not in ("_", "") else form), WORDNET_POS.get(upos)

    def _options(
        self, form: str, upos: str, xpos: str, feats: dict[str, str], synonyms: Sequence[str]
    ) -> list[Candidate]:
        tag = target_tag(upos, xpos, feats) if self.inflect else None
        out: list[Candidate] = []
        seen = {form.lower()}
        for synonym in synonyms:
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
            seen.add(surface.lower())
            out.append((surface, synonym))
        return out

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
