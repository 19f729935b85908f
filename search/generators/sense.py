"""Choosing the WordNet senses a word has in its sentence (word-sense disambiguation).

A word's WordNet synonyms come from every sense of its lemma, and most of those senses
are not the one the sentence uses: "Is this seat taken?" is not about the buttocks
sense of *seat*, "the past decade" not about a ten-dollar bill (*tenner*).
:func:`choose_senses` scores each sense by the cosine similarity between the sentence
embedding of the sentence and that of the sense's gloss (its definition and WordNet's
example sentences), with the bundled all-MiniLM-L6-v2
(:class:`~brittle.search.sentence_models.SentenceEncoder`), plus ``prior_weight`` times
the log of the sense's relative frequency for that word (WordNet's SemCor counts,
add-one smoothed), and keeps the senses within ``margin`` of the best one. Only their
synonyms are then offered.

Why glosses: on WordNet's own sense-tagged example sentences (``bench/sense_choice.py``,
with each test sentence left out of the gloss it is compared with), choosing the sense
by its gloss puts a right-sense synonym first far more often than WordNet's sense order
or ranking the substituted sentences by a causal LM's probability or by their sentence
similarity, which both prefer frequent words whatever their sense (docs/substitutions.md
has the comparison).

Glosses recur across sentences and runs, and sentences across runs on the same
treebank, so each text is embedded on its own and kept in the encoder's on-disk store
(:meth:`~brittle.search.sentence_models.SentenceEncoder.embed_alone`): a later run reads
it back, and its vector does not depend on the texts it was computed beside.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from brittle.search.sentence_models import SentenceEncoder

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["Sense", "SenseChoice", "choose_senses", "confirmed", "sense_scores"]


@dataclass(frozen=True, slots=True)
class Sense:
    """One WordNet sense of a word, as disambiguation sees it.

    Attributes:
        name: the synset name (``seat.n.01``).
        gloss: its definition followed by its example sentences.
        synonyms: the replacement lemma names it offers (already filtered), WordNet order.
        count: how often the word was tagged with this sense in SemCor (WordNet's
            ``cntlist``; 0 when unknown).
        frames: for a verb, the WordNet sentence frames of the sense (``frames.vrb``
            numbers; empty for other parts of speech).
        synonym_counts: SemCor count of each synonym in this sense, in the order of
            ``synonyms`` (empty when not recorded).
        synonym_frames: for a verb, each synonym's own WordNet frames in every sense
            it shares with the word (the senses' frames and the lemma's additions), in
            the order of ``synonyms`` (empty when not recorded).
    """

    name: str
    gloss: str
    synonyms: tuple[str, ...]
    count: int = 0
    frames: frozenset[int] = frozenset()
    synonym_counts: tuple[int, ...] = ()
    synonym_frames: tuple[frozenset[int], ...] = ()


@dataclass(frozen=True, slots=True)
class SenseChoice:
    """The senses a word is taken to have in its sentence.

    Attributes:
        senses: the kept senses, best first (empty when the word has none).
        sure: whether the best sense leads the second by at least ``min_lead`` (always
            true for a word with one sense); an unsure word keeps its best sense only.
        lead: how far the best sense's score is above the second's (``inf`` for a word
            with one sense, 0 for one with none); not compared.
    """

    senses: tuple[Sense, ...]
    sure: bool = True
    lead: float = field(default=math.inf, compare=False)


def sense_scores(
    contexts: Sequence[str],
    senses: Sequence[Sequence[Sense]],
    encoder: SentenceEncoder,
    *,
    prior_weight: float,
) -> list[NDArray[np.float64]]:
    """Each sense's score for the word in its sentence.

    Args:
        contexts: q sentence texts (the word in its sentence).
        senses: for each of the q words, its candidate senses.
        encoder: the sentence encoder.
        prior_weight: weight of the log relative sense frequency (SemCor counts, add-one
            smoothed) added to the cosine similarity of sentence and gloss.

    Returns:
        For each word, float64 (n_senses,): cosine + ``prior_weight`` * log prior.
    """
    if not contexts:
        return []
    # Glosses recur in every run and sentences in every run on the same treebank: each
    # text is embedded alone and kept in the encoder's on-disk store, so its vector is
    # the same whichever run computed it.
    texts = [*contexts, *(s.gloss for group in senses for s in group)]
    emb = encoder.embed_alone(texts).astype(np.float64)
    out: list[NDArray[np.float64]] = []
    row = len(contexts)
    for k, group in enumerate(senses):
        counts = np.array([sense.count for sense in group], dtype=np.float64) + 1.0
        prior = np.log(counts / counts.sum())
        out.append(emb[row : row + len(group)] @ emb[k] + prior_weight * prior)
        row += len(group)
    return out


def choose_senses(
    contexts: Sequence[str],
    senses: Sequence[Sequence[Sense]],
    encoder: SentenceEncoder,
    *,
    margin: float,
    prior_weight: float,
    min_lead: float = 0.0,
) -> list[SenseChoice]:
    """The senses each word most likely has in its sentence, best first.

    Args:
        contexts: q sentence texts (the word in its sentence).
        senses: for each of the q words, its candidate senses (WordNet order).
        encoder: the sentence encoder.
        margin: senses scoring within ``margin`` of the best are kept.
        prior_weight: weight of the log relative sense frequency added to the cosine.
        min_lead: a word whose best sense scores less than this above its second best
            is unsure (``sure`` false) and keeps its best sense only; 0: always sure.

    Returns:
        For each word, the kept senses ordered by score (ties: WordNet order); no senses
        when the word has none.
    """
    out: list[SenseChoice] = []
    for group, scores in zip(
        senses, sense_scores(contexts, senses, encoder, prior_weight=prior_weight), strict=True
    ):
        if not group:
            out.append(SenseChoice((), lead=0.0))
            continue
        best = float(scores.max())
        order = sorted(range(len(group)), key=lambda j: (-float(scores[j]), j))
        lead = best - float(scores[order[1]]) if len(group) > 1 else math.inf
        if min_lead > 0 and lead < min_lead:
            out.append(SenseChoice((group[order[0]],), sure=False, lead=lead))
            continue
        kept = tuple(group[j] for j in order if float(scores[j]) >= best - margin)
        out.append(SenseChoice(kept, lead=lead))
    return out


def confirmed(
    texts: Sequence[str],
    offered: Sequence[str],
    senses: Sequence[Sequence[Sense]],
    encoder: SentenceEncoder,
    *,
    prior_weight: float,
) -> list[bool]:
    """Whether each substitute, read in its new sentence, is read in the sense it was
    offered in: that sense is its own best-scoring sense there (as :func:`choose_senses`
    scores them, ties to WordNet order) and its commonest sense (the most SemCor
    tags, ties to WordNet order), since a reader takes a word in its commonest sense
    unless the context says otherwise (*pupils* is student.n.01 first, *demanded* is
    demand.v.01 "request urgently" before necessitate.v.01).

    Args:
        texts: q sentences, each with one substitute in place.
        offered: for each, the synset name it was offered through (``detect.v.01``).
        senses: for each, the substitute's own WordNet senses in its part of speech.
        encoder: the sentence encoder.
        prior_weight: as for :func:`choose_senses`.
    """
    out: list[bool] = []
    for name, group, scores in zip(
        offered,
        senses,
        sense_scores(texts, senses, encoder, prior_weight=prior_weight),
        strict=True,
    ):
        if not group:
            out.append(False)
            continue
        commonest = max(range(len(group)), key=lambda j: (group[j].count, -j))
        best = int(np.argmax(scores))
        out.append(group[best].name == name and best == commonest)
    return out
