"""coCO: words a language model finds likely in the word's context (La Malfa et al.).

Two kinds of model, chosen from the model's config (or forced with ``kind``):

- **causal** (GPT-2 style): the words that best continue the text left of the word
  (:func:`~brittle.search.generators.lm_causal.next_words_at`: one forward pass per
  sentence serves all its positions), then re-ranked by the log-likelihood of the
  sentence with the word substituted, through ``rerank_window`` words of its right
  context (``rerank``, on by default: the left context alone proposes "forbade" ->
  "will", "Dogs should loudly" or "The current study **provides** to build"). The
  re-rank scores the best ``2 * top_k`` words of every position: the sentence runs
  once and each word costs its own tokens and the window's, the words of every
  position and sentence sharing forward passes
  (:func:`~brittle.search.generators.lm_causal.anchored_logprobs`). One word of
  right context (the default) reads what the word must agree with next (its object,
  particle or infinitive) at a fraction of the whole sentence's cost, with the same
  share of the kept perturbations grammatical (docs/performance.md, "coCO's re-rank",
  measures both); ``rerank_window=None`` reads the whole sentence.
- **masked** (BERT style): the words that best fill the word's place, with one mask or,
  with ``max_masks > 1``, as many masks as pieces
  (:func:`~brittle.search.generators.lm_masked.masked_words`).

Only whole words are kept: letters only (ASCII), at least ``min_length`` characters,
not the original word (case-insensitive), lowercase where the original is, and with
``pos_filter`` only words the :class:`~brittle.search.generators.lexicon.PosLexicon`
allows for the original UPOS and fine PTB tag (default ``xpos``: "forbade" (VBD) keeps
past forms only; ``upos`` checks the word class alone): LM candidates are otherwise
often function words, of another class, or of another tense or number. Candidates
take the original's capitalisation; their lemma comes from the lexicon. All eligible
positions of a batch of sentences are proposed together, ``batch_size`` contexts per
forward pass.

A verb is replaced only by a verb with a WordNet frame for each use the tree gives
the original (``frames``, on by default: an object, a clause, an infinitive, none):
the left context alone proposes verbs of any valency ("The current study **provides**
to build").

A function word never replaces a content word (``function_words=false``, the default):
the lexicon lists *could* and *am* as verbs, and the LM's likeliest continuation is
often one ("I **could** the little colours", "I **am** the library shows"). Even so,
coCO proposes what the language model finds likely, not what keeps the syntax: read
its validity from ``attack --grade`` or ``brittle grade``, or use a validity preset
(``--validity``) when the tree or the grammar must be kept by construction.

The default model is the bundled SmolLM2 (offline, converted once by
:func:`brittle.engine.core.resources.causal_lm_path`); any local directory or hub id
loads the same way (``from_pretrained``). It runs in bfloat16 on a CPU that multiplies
bfloat16 in hardware, float32 elsewhere (:meth:`CoCO.precision`; ``-o dtype=float32``
forces float32).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from brittle.engine.core.errors import ConfigError
from brittle.engine.core.sentence import Sentence
from brittle.scorers.representations import native_bfloat16, pick_device
from brittle.search.generators.base import GENERATORS, SubstitutionGenerator
from brittle.search.generators.closed_class import is_function_word
from brittle.search.generators.eligibility import CONTENT_UPOS
from brittle.search.generators.frames import slot_uses, verb_fits
from brittle.search.generators.inflection import match_case, target_tag
from brittle.search.generators.lexicon import PosLexicon
from brittle.search.generators.lm import LoadedLM, load_lm
from brittle.search.generators.lm_causal import anchored_logprobs, next_words_at
from brittle.search.generators.lm_masked import masked_words
from brittle.search.generators.surface import SurfaceText, surface_of
from brittle.search.sentence_models import surprisal_model
from brittle.search.table import Candidate, SubstitutionTable

__all__ = ["RERANK_BATCH", "CoCO", "keep_word"]

#: Texts per forward pass of the windowed re-rank (each a word and its window: a few
#: tokens, so many fit).
RERANK_BATCH = 64


def keep_word(word: str, *, original: str, min_length: int) -> bool:
    """Whether an LM word may replace ``original`` at all.

    ASCII letters only, at least ``min_length`` long, not the original
    (case-insensitive); and when the original is lowercase the word must be lowercase
    too (a capitalised word there is a name or an acronym).
    """
    if len(word) < min_length or not (word.isascii() and word.isalpha()):
        return False
    if word.lower() == original.lower():
        return False
    return not (original.islower() and not word.islower())


@GENERATORS.register("coco", help="words a language model expects in context")
@dataclass(frozen=True, eq=False, kw_only=True)
class CoCO(SubstitutionGenerator):
    """Language-model context substitutions.

    Attributes:
        model: local directory or hub id; ``None`` for the bundled SmolLM2.
        kind: ``auto`` (from the config), ``causal`` or ``masked``.
        device: torch device (default ``cuda`` when available, else ``cpu``).
        dtype: the language model's precision (``float32``, ``bfloat16``, ``float16``
            (GPU only)); ``None``: bfloat16 on a CPU that multiplies it in hardware
            (:func:`~brittle.scorers.representations.native_bfloat16`), float32
            elsewhere (:meth:`precision`). The commands' ``--dtype`` sets it.
        batch_size: sentences (causal) or masked texts (masked) per forward pass of
            the proposals (the re-rank scores in the shared
            :class:`~brittle.search.sentence_models.SurprisalModel`'s batches).
        oversample: first pieces considered per position, as a multiple of ``top_k``
            (room for the filters).
        max_pieces: causal: longest word in tokens for greedy completion.
        complete: causal: which first pieces get greedy completion — ``unknown``
            (default: pieces the lexicon does not know as words, and only those that
            could still make the top ``top_k`` after the filters; known words are taken
            as they are, saving a forward pass each), ``all``, or ``none`` (fastest;
            fragments possible).
        max_masks: masked: most mask tokens tried for multi-piece words.
        rerank: causal: re-rank the best ``2 * top_k`` words by the log-likelihood of
            the sentence with the word substituted (on by default).
        rerank_window: causal: words of right context the re-rank reads after the
            substituted word (default 1: "provides **to** build" is read, the rest of
            the sentence is not); ``None`` reads the whole sentence, at about six times
            the cost.
        pos_filter: ``upos``: keep only words whose possible UPOS include the
            original's; ``xpos``: also require the original's PTB tag (``expanded``
            (VBD) keeps ``built``, not ``builds``); ``none``: no POS filter.
        min_length: shortest word kept, in characters.
        function_words: let a function word (a stop word or an auxiliary:
            :mod:`~brittle.search.generators.closed_class`) replace a noun, verb,
            adjective or adverb; off by default, since the part-of-speech lexicon lists
            *could* as a verb and *am* passes a VBP slot.
        frames: a verb only when WordNet gives it a sentence frame for each use the
            slot's verb has in the tree (an object, a clause, an infinitive, a gerund,
            a predicative complement, or none:
            :func:`~brittle.search.generators.frames.slot_uses`); a word WordNet does
            not know as a verb is no verb here.
        lexicon: the word -> UPOS lexicon used by ``pos_filter`` and for lemmas.
    """

    keeps_meaning: ClassVar[bool] = True
    requires: ClassVar[frozenset[str]] = frozenset({"form", "upos"})
    needs: ClassVar[frozenset[str]] = frozenset({"causal-lm"})

    model: str | None = None
    kind: Literal["auto", "causal", "masked"] = "auto"
    device: str | None = None
    dtype: Literal["float32", "float16", "bfloat16"] | None = None
    batch_size: int = 8
    oversample: int = 3
    max_pieces: int = 3
    complete: Literal["all", "unknown", "none"] = "unknown"
    max_masks: int = 1
    rerank: bool = True
    rerank_window: int | None = 1
    pos_filter: Literal["none", "upos", "xpos"] = "xpos"
    min_length: int = 2
    function_words: bool = False
    frames: bool = True
    lexicon: PosLexicon = field(default_factory=PosLexicon)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.batch_size < 1 or self.oversample < 1 or self.max_pieces < 1:
            raise ConfigError("batch_size, oversample and max_pieces must be at least 1")
        if self.rerank_window is not None and self.rerank_window < 0:
            raise ConfigError(f"rerank_window must be at least 0, got {self.rerank_window}")

    def precision(self) -> str:
        """The language model's precision: ``dtype`` when given; otherwise bfloat16 on a
        CPU that multiplies it in hardware and float32 elsewhere. The attack of
        docs/frontier.md keeps the same perturbations in both and costs less in bfloat16
        (docs/performance.md, "coCO's attack"): the proposals' order moves among near
        ties, their sets hardly at all (a test checks the share of options kept)."""
        if self.dtype is not None:
            return self.dtype
        return "bfloat16" if native_bfloat16(pick_device(self.device)) else "float32"

    def language_model(self) -> LoadedLM:
        """The model, loaded once per process, in :meth:`precision`."""
        return load_lm(self.model, kind=self.kind, device=self.device, dtype=self.precision())

    def candidates(
        self, sentences: Sequence[Sentence], *, top_k: int | None = None
    ) -> list[SubstitutionTable]:
        """Context words for every eligible position of the batch; see the module docstring."""
        k = self._k(top_k)
        queries: list[tuple[int, int]] = []  # (sentence index, position)
        surfaces = [surface_of(s) for s in sentences]
        for si, sentence in enumerate(sentences):
            queries.extend(
                (si, i)
                for i in self.eligibility.positions(sentence)
                if surfaces[si].spans[i] is not None
            )
        options: list[dict[int, list[Candidate]]] = [{} for _ in sentences]
        if queries:
            lm = self.language_model()
            need = 2 * k if self.rerank else k
            guesses = self._guess(
                lm, sentences, surfaces, queries, n_first=k * self.oversample, need=need
            )
            pools = {
                (si, i): self._filter(sentences[si], i, words)
                for (si, i), words in zip(queries, guesses, strict=True)
            }
            if self.rerank and lm.kind == "causal":
                pools = self._rerank(lm, surfaces, pools, k)
            for (si, i), found in pools.items():
                if found:
                    options[si][i] = found[:k]
        return [
            SubstitutionTable.from_mapping(s.sent_id, self.method, len(s), opts)
            for s, opts in zip(sentences, options, strict=True)
        ]

    def _guess(
        self,
        lm: LoadedLM,
        sentences: Sequence[Sentence],
        surfaces: Sequence[SurfaceText],
        queries: Sequence[tuple[int, int]],
        *,
        n_first: int,
        need: int,
    ) -> list[list[tuple[str, float]]]:
        if lm.kind == "masked":
            pairs = [(surfaces[si].left(i), surfaces[si].right(i)) for si, i in queries]
            return masked_words(
                lm, pairs, n_first=n_first, max_masks=self.max_masks, batch_size=self.batch_size
            )
        # One text per sentence, cut before each queried word: one forward per sentence.
        cuts: dict[int, list[int]] = {}
        for si, i in queries:
            cuts.setdefault(si, []).append(len(surfaces[si].left(i)))
        order = sorted(cuts)
        slots = {si: [i for sj, i in queries if sj == si] for si in order}

        def accept(text: int, cut: int, word: str) -> bool:
            si = order[text]
            return self._accepts(sentences[si], slots[si][cut], word)

        per_text = next_words_at(
            lm,
            [surfaces[si].text for si in order],
            [cuts[si] for si in order],
            n_first=n_first,
            max_pieces=self.max_pieces,
            complete=self.complete,
            is_word=self._is_word,
            accept=accept,
            need=need,
            batch_size=self.batch_size,
        )
        found = {si: list(words) for si, words in zip(order, per_text, strict=True)}
        return [found[si].pop(0) for si, _ in queries]

    def _is_word(self, word: str) -> bool:
        return bool(self.lexicon.upos(word))

    def _accepts(self, sentence: Sentence, i: int, word: str) -> bool:
        """Whether ``word`` passes the word and POS filters for position ``i``."""
        token = sentence.words[i]
        if not keep_word(word, original=token.form, min_length=self.min_length):
            return False
        content = token.upos in CONTENT_UPOS
        if content and not self.function_words and is_function_word(word, self.lexicon):
            return False  # "I could the little colours", "I am the library shows"
        if self.pos_filter == "upos" and not self.lexicon.has(word, token.upos):
            return False
        if self.pos_filter == "xpos":
            tag = target_tag(token.upos, token.xpos, token.feats_dict)
            if not self.lexicon.has_tag(word, token.upos, tag):
                return False
        if self.frames and token.upos == "VERB":
            # "intended to enhance bias" keeps a verb with an object frame
            return verb_fits(self.lexicon.lemma(word, "VERB"), slot_uses(sentence, i))
        return True

    def _filter(
        self, sentence: Sentence, i: int, words: Sequence[tuple[str, float]]
    ) -> list[Candidate]:
        original, upos = sentence.forms[i], sentence.upos[i]
        out: list[Candidate] = []
        seen: set[str] = set()
        for word, _score in words:
            if not self._accepts(sentence, i, word):
                continue
            surface = match_case(original, word)
            if surface.lower() in seen:
                continue
            seen.add(surface.lower())
            out.append((surface, self.lexicon.lemma(surface, upos)))
        return out

    def _rerank(
        self,
        lm: LoadedLM,
        surfaces: Sequence[SurfaceText],
        pools: dict[tuple[int, int], list[Candidate]],
        k: int,
    ) -> dict[tuple[int, int], list[Candidate]]:
        """The best ``2 * k`` words of each pool ordered by the log-likelihood of the
        sentence with the word substituted, through ``rerank_window`` words after it,
        best first (ties: the LM's order). The scores are computed anew, so a table
        depends on its batch of sentences alone.

        With a window, each sentence runs once and each text costs its word and the
        window (:func:`~brittle.search.generators.lm_causal.anchored_logprobs`).
        Without one, every pool's whole sentences are scored in one call, each pool's
        left context once, and kept by the shared
        :class:`~brittle.search.sentence_models.SurprisalModel`, where the ``fluency``
        constraint finds the candidates it checks already scored.
        """
        texts: list[str] = []
        labels: list[tuple[int, int]] = []
        for (si, i), found in pools.items():
            if len(found) > 1:
                texts.extend(
                    surfaces[si].replaced(i, form, window=self.rerank_window)
                    for form, _ in found[: 2 * k]
                )
                labels.extend((si, i) for _ in found[: 2 * k])
        if not texts:
            return pools
        if self.rerank_window is None:
            scorer = surprisal_model(self.model, device=self.device, dtype=self.dtype)
            found_scores = scorer.logprobs(texts, groups=labels, fresh=True).tolist()
        else:
            found_scores = self._windowed(lm, surfaces, texts, labels)
        scores = iter(found_scores)
        out: dict[tuple[int, int], list[Candidate]] = {}
        for key, found in pools.items():
            if len(found) > 1:
                pool = found[: 2 * k]
                mine = [next(scores) for _ in pool]
                order = sorted(range(len(pool)), key=lambda j: -mine[j])
                found = [pool[j] for j in order]
            out[key] = found
        return out

    @staticmethod
    def _windowed(
        lm: LoadedLM,
        surfaces: Sequence[SurfaceText],
        texts: Sequence[str],
        labels: Sequence[tuple[int, int]],
    ) -> list[float]:
        """Log-likelihood of each text, every sentence's texts in one
        :func:`~brittle.search.generators.lm_causal.anchored_logprobs` call (a text
        begins as its sentence does)."""
        found = anchored_logprobs(
            lm,
            [surface.text for surface in surfaces],
            texts,
            [si for si, _ in labels],
            batch_size=RERANK_BATCH,
        )
        return [float(value) for value in found]
