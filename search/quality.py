"""How natural a perturbation leaves a sentence: the quality of (original, perturbed) pairs.

One typed measurement, used by ``perturb`` (on the chosen perturbations), the attack
(on the kept ones), ``compare-methods`` (on every drawn candidate) and on saved files
(:func:`quality_of_files`: a treebank against a CoNLL-U written by ``brittle perturb``):

- ``surprisal_increase``: the causal LM's mean surprisal of the perturbed sentence minus
  the original's, in bits per word (the ``fluency`` constraint's value);
- ``similarity``: the cosine of the MiniLM sentence embeddings of the two (the
  ``similarity`` constraint's value);
- ``retag``: of the changed words (substituted, or moved by a reordering), how many the
  parser tags with their gold UPOS (the ``retag`` constraint's value); only with a parser;
- ``words_changed``: substituted or moved words;
- ``dnd``, ``idc``: for reorderings, the displacement of the word order (Clouatre et al.;
  0 = unchanged).

:class:`QualityMeter` measures many pairs at once: one LM call, one encoder call and one
parser call for all of them. It shares the process-wide models of the constraints
(:mod:`brittle.search.sentence_models`), so texts a constraint already scored are not
scored again. :func:`summarize_quality` gives the means a report shows.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from brittle.engine.core.conllu import iter_conllu
from brittle.engine.core.errors import BrittleInputError
from brittle.engine.core.perturbation import Perturbation
from brittle.scorers.order import permutation_scores
from brittle.search.constraints.base import changed_words
from brittle.search.sentence_models import pair_texts, sentence_encoder, surprisal_model

if TYPE_CHECKING:
    from brittle.engine.core.sentence import Sentence
    from brittle.scorers.parsers.base import Parser

__all__ = [
    "FileQuality",
    "PairQuality",
    "QualityMeter",
    "QualitySummary",
    "SentenceQuality",
    "quality_of_files",
    "recover_perturbation",
    "summarize_quality",
]


@dataclass(frozen=True)
class PairQuality:
    """The quality of one perturbation of one sentence.

    Attributes:
        surprisal_increase: LM surprisal of the perturbed sentence minus the original's,
            bits per word (0.0 when nothing changed).
        similarity: cosine of the two sentence embeddings, in [-1, 1] (1.0 when nothing
            changed).
        words_changed: words substituted or moved.
        retag_kept: of those, how many the parser tags with their gold UPOS (``None``
            without a parser or when nothing changed).
        dnd, idc: the reordering's displacement scores (``None`` for substitutions).
    """

    surprisal_increase: float
    similarity: float
    words_changed: int
    retag_kept: int | None = None
    dnd: float | None = None
    idc: float | None = None

    @property
    def retag(self) -> float | None:
        """Share of changed words re-tagged as their gold UPOS (``None``: not measured)."""
        if self.retag_kept is None or not self.words_changed:
            return None
        return self.retag_kept / self.words_changed

    def to_json(self) -> dict[str, float | int | None]:
        """JSON-ready mapping (floats rounded to 6 digits)."""
        return {
            "surprisal_increase": round(self.surprisal_increase, 6),
            "similarity": round(self.similarity, 6),
            "words_changed": self.words_changed,
            "retag": None if self.retag is None else round(self.retag, 6),
            "dnd": self.dnd,
            "idc": self.idc,
        }


@dataclass(frozen=True)
class QualitySummary:
    """Means of the quality of several pairs (``None`` where no pair has a value).

    Attributes:
        pairs: pairs measured.
        mean_surprisal_increase: mean surprisal increase, bits per word.
        mean_similarity: mean cosine similarity.
        retag_agreement: share of all changed words (pooled over the pairs measured
            with a parser) re-tagged as their gold UPOS.
        words_retagged: changed words that share counts.
        mean_words_changed: mean words substituted or moved.
        mean_dnd, mean_idc: means over the reorderings.
    """

    pairs: int
    mean_surprisal_increase: float | None
    mean_similarity: float | None
    retag_agreement: float | None
    words_retagged: int
    mean_words_changed: float | None
    mean_dnd: float | None
    mean_idc: float | None

    def to_json(self) -> dict[str, float | int | None]:
        """JSON-ready mapping (means rounded to 6 digits)."""
        return {
            "pairs": self.pairs,
            "mean_surprisal_increase": _round(self.mean_surprisal_increase),
            "mean_similarity": _round(self.mean_similarity),
            "retag_agreement": _round(self.retag_agreement),
            "words_retagged": self.words_retagged,
            "mean_words_changed": _round(self.mean_words_changed),
            "mean_dnd": _round(self.mean_dnd),
            "mean_idc": _round(self.mean_idc),
        }


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def _mean(values: Sequence[float | None]) -> float | None:
    xs = [v for v in values if v is not None and not math.isnan(v)]
    return sum(xs) / len(xs) if xs else None


def summarize_quality(pairs: Sequence[PairQuality]) -> QualitySummary:
    """The means of ``pairs`` (pass only the perturbations a report is about)."""
    retagged = [q for q in pairs if q.retag_kept is not None]
    words = sum(q.words_changed for q in retagged)
    kept = sum(q.retag_kept or 0 for q in retagged)
    return QualitySummary(
        pairs=len(pairs),
        mean_surprisal_increase=_mean([q.surprisal_increase for q in pairs]),
        mean_similarity=_mean([q.similarity for q in pairs]),
        retag_agreement=kept / words if words else None,
        words_retagged=words,
        mean_words_changed=_mean([float(q.words_changed) for q in pairs]),
        mean_dnd=_mean([q.dnd for q in pairs]),
        mean_idc=_mean([q.idc for q in pairs]),
    )


class QualityMeter:
    """Measures :class:`PairQuality` of many pairs at once.

    Args:
        parser: tags the perturbed sentences for ``retag`` (``None``: not measured).
        lm: the causal LM (``None``: the bundled SmolLM2).
        encoder: the sentence encoder directory (``None``: the bundled MiniLM).
        device: torch device of both (``None``: ``cuda`` when available, else ``cpu``).
        dtype: precision of both (``None``: each model's own, float32).

    The models (and the parser's, prepared here) load at the first pair that changes
    something.
    """

    def __init__(
        self,
        *,
        parser: Parser | None = None,
        lm: str | None = None,
        encoder: str | None = None,
        device: str | None = None,
        dtype: str | None = None,
    ) -> None:
        self.parser = parser
        self.lm = lm
        self.encoder = encoder
        self.device = device
        self.dtype = dtype
        self._prepared = False

    def describe(self) -> dict[str, object]:
        """The models and parser used, for reports (loads nothing)."""
        return {
            "lm": self.lm or "smollm2",
            "encoder": self.encoder or "all-MiniLM-L6-v2",
            "parser": None if self.parser is None else self.parser.name,
        }

    def measure(
        self,
        originals: Sequence[Sentence],
        perturbed: Sequence[Sentence],
        perturbations: Sequence[Perturbation] | None = None,
    ) -> list[PairQuality]:
        """The quality of each ``(originals[k], perturbed[k])`` pair.

        Args:
            originals: the unperturbed sentences.
            perturbed: one perturbed version of each.
            perturbations: what changed each (recovered from the sentences with
                :func:`recover_perturbation` when not given).
        """
        if len(originals) != len(perturbed):
            raise ValueError(f"{len(originals)} originals but {len(perturbed)} perturbed")
        perts = (
            list(perturbations)
            if perturbations is not None
            else [recover_perturbation(o, p) for o, p in zip(originals, perturbed, strict=True)]
        )
        if len(perts) != len(originals):
            raise ValueError(f"{len(originals)} pairs but {len(perts)} perturbations")
        changed = [k for k, p in enumerate(perts) if not p.is_identity]
        texts = [pair_texts(originals[k], perturbed[k], perts[k]) for k in changed]
        words = [len(originals[k]) for k in changed]
        if changed:
            lm = surprisal_model(self.lm, device=self.device, dtype=self.dtype)
            before = lm.bits_per_word([a for a, _ in texts], words)
            after = lm.bits_per_word([b for _, b in texts], words)
            encoder = sentence_encoder(self.encoder, device=self.device, dtype=self.dtype)
            cosine = encoder.similarity([a for a, _ in texts], [b for _, b in texts])
        kept: list[int | None] = [None] * len(changed)
        if changed and self.parser is not None:
            if not self._prepared:
                self.parser.prepare()
                self._prepared = True
            parses = self.parser.parse([perturbed[k] for k in changed])
            for slot, (k, parse) in enumerate(zip(changed, parses, strict=True)):
                new_idx, old_idx = changed_words(perts[k])
                gold = originals[k].upos
                kept[slot] = sum(
                    parse.upos[j] == gold[i] for j, i in zip(new_idx, old_idx, strict=True)
                )
        out = [PairQuality(0.0, 1.0, 0) for _ in perts]
        for slot, k in enumerate(changed):
            p = perts[k]
            dnd = idc = None
            if p.order is not None:
                scores = permutation_scores(p.order)
                dnd, idc = round(scores.dnd, 6), round(scores.idc, 6)
            out[k] = PairQuality(
                surprisal_increase=float(after[slot] - before[slot]),
                similarity=float(cosine[slot]),
                words_changed=p.size,
                retag_kept=kept[slot],
                dnd=dnd,
                idc=idc,
            )
        return out


def recover_perturbation(original: Sentence, perturbed: Sentence) -> Perturbation:
    """The perturbation that turns ``original`` into ``perturbed``.

    A reordering is read from the ``OrigPosition`` MISC items ``brittle perturb`` writes
    on moved words; anything else is a substitution of the words whose FORM differs.
    The method comes from the ``Perturbation`` MISC item (``unknown`` without one).

    Raises:
        ValueError: the sentences differ in length, or the moved words do not fit.
    """
    if len(original) != len(perturbed):
        raise ValueError(
            f"sentence {original.sent_id}: {len(original)} words, but {len(perturbed)} "
            "in the perturbed version"
        )
    miscs = [t.misc_dict for t in perturbed.words]
    method = next((m["Perturbation"] for m in miscs if m.get("Perturbation")), "unknown")
    if any("OrigPosition" in m for m in miscs):
        try:
            order = tuple(
                int(m["OrigPosition"]) - 1 if "OrigPosition" in m else j
                for j, m in enumerate(miscs)
            )
            p = Perturbation(original.sent_id, method, order=order)
        except ValueError:
            raise ValueError(
                f"sentence {original.sent_id}: OrigPosition items are not a reordering"
            ) from None
        if any(perturbed.forms[j] != original.forms[i] for j, i in enumerate(order)):
            raise ValueError(
                f"sentence {original.sent_id}: the moved words are not the original's words"
            )
        return p
    positions = tuple(
        i for i, (a, b) in enumerate(zip(original.forms, perturbed.forms, strict=True)) if a != b
    )
    return Perturbation(
        original.sent_id,
        method,
        positions=positions,
        replacements=tuple(perturbed.forms[i] for i in positions),
        lemmas=tuple(perturbed.lemmas[i] for i in positions),
    )


@dataclass(frozen=True)
class SentenceQuality:
    """One sentence of a perturbed file: its id and the quality of its perturbation
    (``None`` when the file has it unchanged)."""

    sent_id: str
    quality: PairQuality | None

    def to_json(self) -> dict[str, object]:
        """JSON-ready mapping."""
        data: dict[str, object] = {"sent_id": self.sent_id, "changed": self.quality is not None}
        if self.quality is not None:
            data.update(self.quality.to_json())
        return data


@dataclass(frozen=True)
class FileQuality:
    """The quality of a perturbed CoNLL-U file against its original treebank.

    Attributes:
        original, perturbed: the two files.
        sentences: one entry per sentence of the perturbed file, in its order.
        summary: the means over the changed sentences.
    """

    original: str
    perturbed: str
    sentences: tuple[SentenceQuality, ...]
    summary: QualitySummary

    @property
    def changed(self) -> int:
        """Sentences the perturbed file changes."""
        return sum(s.quality is not None for s in self.sentences)

    def to_json(self) -> dict[str, object]:
        """JSON-ready mapping: files, counts, the means and every sentence."""
        return {
            "original": self.original,
            "perturbed": self.perturbed,
            "sentences": len(self.sentences),
            "changed": self.changed,
            "summary": self.summary.to_json(),
            "per_sentence": [s.to_json() for s in self.sentences],
        }


def quality_of_files(
    original_path: str | os.PathLike[str],
    perturbed_path: str | os.PathLike[str],
    *,
    meter: QualityMeter | None = None,
    batch_size: int = 256,
) -> FileQuality:
    """The quality of every perturbed sentence of a file, paired with the original by
    ``sent_id``.

    Args:
        original_path: the treebank (gold UPOS for ``retag``).
        perturbed_path: a CoNLL-U written by ``brittle perturb`` (changed words carry
            ``OrigForm``, moved words ``OrigPosition`` in MISC).
        meter: measures the pairs (default: models on the default device, no parser,
            so ``retag`` is not measured).
        batch_size: pairs measured at once.

    Raises:
        BrittleInputError: a file cannot be read, a perturbed sentence has no original
            of the same id, or its words do not fit the original's.
    """
    meter = meter or QualityMeter()
    by_id: dict[str, Sentence] = {}
    for sentence in iter_conllu(original_path):
        by_id.setdefault(sentence.sent_id, sentence)
    pairs: list[tuple[Sentence, Sentence, Perturbation]] = []
    for sentence in iter_conllu(perturbed_path):
        original = by_id.get(sentence.sent_id)
        if original is None:
            raise BrittleInputError(
                os.fspath(perturbed_path),
                sentence.line or None,
                f"sentence {sentence.sent_id!r} is not in {os.fspath(original_path)}",
            )
        try:
            p = recover_perturbation(original, sentence)
        except ValueError as err:
            raise BrittleInputError(
                os.fspath(perturbed_path), sentence.line or None, str(err)
            ) from None
        pairs.append((original, sentence, p))
    found: dict[int, PairQuality] = {}
    changed = [k for k, (_, _, p) in enumerate(pairs) if not p.is_identity]
    for start in range(0, len(changed), batch_size):
        ks = changed[start : start + batch_size]
        measured = meter.measure(
            [pairs[k][0] for k in ks], [pairs[k][1] for k in ks], [pairs[k][2] for k in ks]
        )
        found.update(zip(ks, measured, strict=True))
    sentences = tuple(SentenceQuality(pairs[k][1].sent_id, found.get(k)) for k in range(len(pairs)))
    return FileQuality(
        original=os.fspath(original_path),
        perturbed=os.fspath(perturbed_path),
        sentences=sentences,
        summary=summarize_quality(list(found.values())),
    )
