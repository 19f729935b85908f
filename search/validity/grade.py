"""Grading many (original, perturbed) pairs at once: :class:`Grader` and :func:`grade_pairs`.

A pair is graded when the perturbed sentence has the original's words in the original's
order, some of them substituted (as ``brittle perturb`` writes it). A pair whose word
count differs, or whose words were moved (``OrigPosition`` in MISC, or the same words in
another order), is returned ungraded with the reason. A pair that changes nothing is
valid at every level and has no evidence.

Everything heavy is batched over the pairs: one parser call (originals and perturbed
sentences together), one LM call (the surprisal where the changed words' constructions
continue, each original read once and each perturbation only from its first changed
token: :func:`~brittle.search.validity.surprisal.pair_surprisals`), one encoder call (the
sentence embeddings of both). The LM runs only on the pairs whose grammatical level
the other checks left open, the encoder only on those whose meaning level they left
open (``Grader(complete=True)``: on every pair). The models are the process-wide ones
of :mod:`brittle.search.sentence_models`, loaded at first use.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from cachetools import FIFOCache

from brittle.engine.core.resources import load_wordnet
from brittle.scorers.parsers import make_parser
from brittle.search.generators.lexicon import PosLexicon
from brittle.search.sentence_models import also_forget, sentence_encoder, surprisal_model
from brittle.search.validity.grammar import (
    adjective_position_check,
    agreement_check,
    count_check,
    fixed_phrase_check,
    function_adverb_check,
    is_english_word,
    known_word_check,
    place_phrase_check,
    verb_frame_check,
)
from brittle.search.validity.lexical import closed_class_check, form_check
from brittle.search.validity.meaning import (
    MIN_SIMILARITY,
    SIMILARITY_MEASURED,
    similarity_check,
    synonymy_check,
)
from brittle.search.validity.records import ChangedWord, Check, Grade
from brittle.search.validity.surprisal import (
    MAX_CLASS_INCREASE,
    MAX_NEXT_INCREASE,
    SURPRISAL_MEASURED,
    class_tokens,
    continuation_classes,
    continuations,
    pair_surprisals,
    surprisal_check,
)
from brittle.search.validity.tree import attachment_check, retag_check

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    from brittle.engine.core.sentence import Sentence
    from brittle.scorers.parsers.base import Parser

__all__ = [
    "Grader",
    "changed_words_of",
    "forget_grades",
    "grade_pairs",
    "method_of",
    "run_grader",
]


def method_of(perturbed: Sentence) -> str:
    """The method named by the first ``Perturbation=`` MISC item (``unknown``: none)."""
    for tok in perturbed.words:
        method = tok.misc_dict.get("Perturbation")
        if method:
            return method
    return "unknown"


def changed_words_of(original: Sentence, perturbed: Sentence) -> tuple[ChangedWord, ...] | str:
    """The substituted words of a pair, or why the pair cannot be graded (a string)."""
    if len(original) != len(perturbed):
        return f"{len(perturbed)} words where the original has {len(original)}"
    if any("OrigPosition" in tok.misc_dict for tok in perturbed.words):
        return "words reordered (OrigPosition in MISC): the gold tree no longer lines up"
    old, new = original.forms, perturbed.forms
    if old != new and sorted(old) == sorted(new):
        return "words reordered: the gold tree no longer lines up"
    lemmas = perturbed.lemmas
    return tuple(
        ChangedWord(i, a, b, lemmas[i])
        for i, (a, b) in enumerate(zip(old, new, strict=True))
        if a != b
    )


@dataclass
class Grader:
    """Grades pairs with one parser, causal LM, sentence encoder and WordNet.

    Attributes:
        parser: a registered parser name (``PARSERS``) or a :class:`Parser`; it re-parses
            the perturbed sentences (and the originals, to know where it errs).
        lm: causal LM directory (``None``: the bundled SmolLM2).
        encoder: sentence encoder directory (``None``: the bundled MiniLM).
        device: torch device of both (``None``: CUDA when available, else CPU).
        dtype: precision of both (``None``: float32).
        complete: run every check on every pair. By default the LM runs only on the
            pairs whose grammatical level still holds after the other checks, and the
            encoder only on those whose meaning level still does: elsewhere the level
            has failed already, the verdicts are the same, and the check is recorded
            as not measured (``passed`` unknown).
        timings: seconds spent so far per stage (``parse``, ``lm``, ``encoder``,
            ``checks``, ``load``), summed over calls.
    """

    parser: str | Parser = "spacy"
    lm: str | None = None
    encoder: str | None = None
    device: str | None = None
    dtype: str | None = None
    complete: bool = False
    timings: dict[str, float] = field(default_factory=dict)
    _parser_loaded: Parser | None = field(default=None, init=False, repr=False)
    _lexicon: tuple[WordNetCorpusReader, PosLexicon] | None = field(
        default=None, init=False, repr=False
    )

    # ------------------------------------------------------------------ resources
    def _parser(self) -> Parser:
        if self._parser_loaded is None:
            parser = make_parser(self.parser) if isinstance(self.parser, str) else self.parser
            parser.prepare()
            self._parser_loaded = parser
        return self._parser_loaded

    def _wordnet(self) -> tuple[WordNetCorpusReader, PosLexicon]:
        if self._lexicon is None:
            wordnet = load_wordnet()
            self._lexicon = (wordnet, PosLexicon(wordnet=wordnet))
        return self._lexicon

    def _took(self, stage: str, tic: float) -> None:
        self.timings[stage] = self.timings.get(stage, 0.0) + time.perf_counter() - tic

    def describe(self) -> dict[str, object]:
        """The parser and models used, for reports (loads nothing)."""
        return {
            "parser": self.parser if isinstance(self.parser, str) else self.parser.name,
            "lm": self.lm or "smollm2",
            "encoder": self.encoder or "all-MiniLM-L6-v2",
            "wordnet": "WordNet 3.0",
        }

    def settings(self) -> tuple[str | None, ...]:
        """What a grade depends on beside its pair: the parser, models, device,
        precision and whether every check runs."""
        parser = self.parser if isinstance(self.parser, str) else self.parser.name
        return (parser, self.lm, self.encoder, self.device, self.dtype, str(self.complete))

    # ------------------------------------------------------------------ grading
    def grade(self, originals: Sequence[Sentence], perturbed: Sequence[Sentence]) -> list[Grade]:
        """One :class:`Grade` per ``(originals[k], perturbed[k])``, in order.

        A pair this process graded already with the same :meth:`settings` (since the
        last :func:`~brittle.search.sentence_models.forget_texts`) gets that grade again
        without being graded anew: an attack whose ``judged`` constraint graded its
        candidates finds its kept perturbations graded.
        """
        if len(originals) != len(perturbed):
            raise ValueError(f"{len(originals)} originals but {len(perturbed)} perturbed")
        settings = self.settings()
        out: list[Grade] = []
        todo: list[tuple[int, tuple[ChangedWord, ...]]] = []
        for k, (o, p) in enumerate(zip(originals, perturbed, strict=True)):
            made = _GRADES.get((settings, o, p))
            if made is not None:  # kept only for a pair that was graded
                out.append(made)
                continue
            diff = changed_words_of(o, p)
            if isinstance(diff, str):
                out.append(Grade(p.sent_id, method_of(p), (), graded=False, reason=diff))
                continue
            out.append(Grade(p.sent_id, method_of(p), diff))
            if diff:
                todo.append((k, diff))
        if todo:
            graded = self._grade_changed(
                [originals[k] for k, _ in todo],
                [perturbed[k] for k, _ in todo],
                [diff for _, diff in todo],
            )
            for (k, _), grade in zip(todo, graded, strict=True):
                out[k] = grade
                _keep_grade((settings, originals[k], perturbed[k]), grade)
        return out

    def _grade_changed(
        self,
        olds: Sequence[Sentence],
        news: Sequence[Sentence],
        diffs: Sequence[tuple[ChangedWord, ...]],
    ) -> list[Grade]:
        """Grade pairs that each substitute some words: one parser call, then the
        lexical checks, then one LM call for the pairs whose grammatical level still
        holds and one encoder call for those whose meaning level still does."""
        tic = time.perf_counter()
        parser = self._parser()
        wordnet, lexicon = self._wordnet()
        self._took("load", tic)
        tic = time.perf_counter()
        parses = parser.parse([*olds, *news])
        self._took("parse", tic)
        tic = time.perf_counter()
        m = len(olds)
        lexical: list[tuple[Check, ...]] = []
        synonymy: list[Check] = []
        for k, (o, p, changed) in enumerate(zip(olds, news, diffs, strict=True)):
            nonwords = {w.index for w in changed if not is_english_word(w.new, lexicon)}
            lexical.append(
                (
                    retag_check(o, changed, parses[k], parses[m + k], nonwords),
                    attachment_check(o, changed, parses[k], parses[m + k], nonwords),
                    closed_class_check(o, changed, lexicon),
                    form_check(o, changed, lexicon),
                    place_phrase_check(o, changed),
                    known_word_check(changed, lexicon),
                    verb_frame_check(o, changed, lexicon, wordnet),
                    agreement_check(o, changed, lexicon, p),
                    count_check(o, changed, lexicon),
                    function_adverb_check(o, changed, lexicon),
                    fixed_phrase_check(o, changed, lexicon),
                    adjective_position_check(o, changed, lexicon),
                )
            )
            synonymy.append(synonymy_check(o, changed, lexicon, wordnet))
        self._took("checks", tic)
        # the LM reads only where the changed words' constructions continue, and only
        # where the grammatical level still holds (unless every check is wanted):
        # elsewhere its verdict is decided without it
        surprisal: dict[int, Check] = {}
        wanted: dict[int, set[int]] = {}
        for k in range(m):
            if self.complete or not _failed(lexical[k]):
                at = {w.index for w in diffs[k]}
                words = {j for i in at for j in continuations(olds[k], i)} - at
                if words:
                    wanted[k] = words
                else:  # nothing to read: the check is unknown
                    none = np.zeros(len(olds[k]))
                    surprisal[k] = surprisal_check(olds[k], diffs[k], none, none)
        if wanted:
            tic = time.perf_counter()
            model = surprisal_model(self.lm, device=self.device, dtype=self.dtype).lm
            tokens_of = class_tokens(model, lexicon)
            self._took("load", tic)
            tic = time.perf_counter()
            lm_pairs = sorted(wanted)
            bits_old, bits_new = pair_surprisals(
                model,
                [olds[k] for k in lm_pairs],
                [news[k] for k in lm_pairs],
                upto=[max(wanted[k]) for k in lm_pairs],
                wanted=[wanted[k] for k in lm_pairs],
                classes=[continuation_classes(olds[k], wanted[k]) for k in lm_pairs],
                tokens_of=tokens_of,
            )
            for i, k in enumerate(lm_pairs):
                surprisal[k] = surprisal_check(olds[k], diffs[k], bits_old[i], bits_new[i])
            self._took("lm", tic)
        # the encoder only where the meaning level still holds
        similarity: dict[int, Check] = {}
        enc_pairs = [
            k
            for k in range(m)
            if self.complete
            or not _failed((*lexical[k], surprisal.get(k, _UNMEASURED), synonymy[k]))
        ]
        if enc_pairs:
            tic = time.perf_counter()
            encoder = sentence_encoder(self.encoder, device=self.device, dtype=self.dtype)
            cosine = encoder.similarity(
                [olds[k].surface_text() for k in enc_pairs],
                [news[k].surface_text() for k in enc_pairs],
            )
            for i, k in enumerate(enc_pairs):
                similarity[k] = similarity_check(float(cosine[i]))
            self._took("encoder", tic)
        out: list[Grade] = []
        for k, (p, changed) in enumerate(zip(news, diffs, strict=True)):
            checks = (
                *lexical[k],
                surprisal.get(k) or unmeasured_surprisal(lexical[k]),
                synonymy[k],
                similarity.get(k)
                or unmeasured_similarity((*lexical[k], surprisal.get(k, _UNMEASURED), synonymy[k])),
            )
            out.append(Grade(p.sent_id, method_of(p), changed, checks))
        return out


#: Most grades kept between :meth:`Grader.grade` calls (a few KB each).
GRADES_KEPT = 4096

#: The grades made in this process, by (grader settings, original, perturbed), the
#: oldest dropped first; emptied with the models' text caches (:func:`forget_grades`).
_GRADES: FIFOCache[tuple[tuple[str | None, ...], Sentence, Sentence], Grade] = FIFOCache(
    GRADES_KEPT
)


def _keep_grade(key: tuple[tuple[str | None, ...], Sentence, Sentence], grade: Grade) -> None:
    _GRADES[key] = grade


def forget_grades() -> None:
    """Forget the grades this process made (:func:`forget_texts` calls it)."""
    _GRADES.clear()


also_forget(forget_grades)


#: A check that did not run (a placeholder while deciding what else to run).
_UNMEASURED = Check(name="", level="grammatical", measured="", value=None, passed=None)


def _failed(checks: Sequence[Check]) -> tuple[str, ...]:
    """The names of the failed ``checks``."""
    return tuple(c.name for c in checks if c.passed is False)


def unmeasured_surprisal(before: Sequence[Check]) -> Check:
    """The surprisal check's record where the LM was not run: the grammatical level had
    already failed on ``before``'s failed checks (unknown: it does not fail a level)."""
    return Check(
        name="surprisal",
        level="grammatical",
        measured=SURPRISAL_MEASURED,
        value=f"not measured: failed already on {', '.join(_failed(before))}",
        threshold=(MAX_NEXT_INCREASE, MAX_CLASS_INCREASE),
        passed=None,
    )


def unmeasured_similarity(before: Sequence[Check]) -> Check:
    """The similarity check's record where the encoder was not run: the meaning level
    had already failed on ``before``'s failed checks."""
    return Check(
        name="similarity",
        level="meaning",
        measured=SIMILARITY_MEASURED,
        value=f"not measured: failed already on {', '.join(_failed(before))}",
        threshold=MIN_SIMILARITY,
        passed=None,
    )


def grade_pairs(
    originals: Sequence[Sentence],
    perturbed: Sequence[Sentence],
    *,
    parser: str | Parser = "spacy",
    lm: str | None = None,
    encoder: str | None = None,
    device: str | None = None,
    complete: bool = False,
) -> list[Grade]:
    """Grade each ``(originals[k], perturbed[k])`` pair: one parser call, one LM call and
    one encoder call for all of them (see :class:`Grader`, which keeps the parser and
    WordNet between calls; ``complete``: every check on every pair)."""
    grader = Grader(parser=parser, lm=lm, encoder=encoder, device=device, complete=complete)
    return grader.grade(originals, perturbed)


def run_grader(
    parser_name: str,
    parser: Callable[[], Parser],
    *,
    device: str | None,
    dtype: str | None,
) -> Grader:
    """The grader of a run's kept perturbations: the run's own parser (``parser()``,
    called only when it is a real one) re-parses them against the gold tree, spaCy when
    the run reads the gold trees (``parser_name`` ``gold``), with the bundled causal LM
    and sentence encoder on ``device`` in ``dtype``.

    The run's parser is shared, not built again: it has parsed the originals and,
    under a syntax constraint, the kept perturbations already (its cache answers), and a
    second spaCy would start a helper process of its own, whose loading took the core
    the LM was running on (measured: the grading of 10 kept perturbations went from
    0.5 s to 1.7 s)."""
    if parser_name == "gold":
        return Grader(parser="spacy", device=device, dtype=dtype)
    return Grader(parser=parser(), device=device, dtype=dtype)
