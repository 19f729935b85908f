"""The attack's :class:`~brittle.search.scoring.TaskEvaluator` backed by trained probes.

Probes trained on the same representation share one backend, and one forward pass
gives every layer they need. A candidate's metrics are computed against its own gold
annotation, which is the original's carried over (renumbered for reorderings), as in
La Malfa et al.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from cachetools import FIFOCache, LRUCache
from numpy.typing import NDArray

from brittle.engine.core.errors import ConfigError
from brittle.engine.core.json_types import JSONValue
from brittle.engine.core.sentence import Sentence
from brittle.engine.reports.predictions import compact_prediction
from brittle.scorers.probe import Probe
from brittle.scorers.probe_gold import Gold, gold_of
from brittle.scorers.probe_tasks import PROBE_TASKS, Prediction
from brittle.scorers.representations import EffectsRequest, FlatReps, FlatVectors, reopen_backend
from brittle.search.problem import Estimates
from brittle.search.scoring import ComposeRequest, Evaluation
from brittle.search.table import SubstitutionTable

if TYPE_CHECKING:
    import torch

    from brittle.scorers.representations import RepresentationBackend, WordLoss

#: A sentence's words.
Words = tuple[str, ...]
#: Originals whose vectors are kept for the distances (a round's worth and more).
_ORIGINALS_KEPT = 256
#: An annotation: HEAD bytes, UPOS and XPOS of each word.
_Annotation = tuple[bytes, tuple[str, ...], tuple[str, ...]]
#: Gold records kept across calls, by annotation (a search asks about the same
#: original's candidates round after round; each record is built in about 0.2 ms).
_GOLDS_KEPT = 512
#: Bytes of the probes' predictions on scored candidates kept for the result rows (a
#: chunk's worth: 200 candidates of 100 words take 8 MB with a distance probe).
PREDICTIONS_KEPT_BYTES = 64 * 2**20
#: Bytes of scored word sequences' vectors kept for composition once a search asks for
#: it (:meth:`ProbeEvaluator.keep_vectors`): a chunk of 16 sentences, 100 candidates
#: each, of 30 words in 384 dimensions at one layer takes 74 MB. The affine probes'
#: outputs on them are kept with them and dropped with them, not counted (at most as
#: much again for a distance probe of full rank).
VECTORS_KEPT_BYTES = 128 * 2**20
#: Pairs composed per batch of probe predictions (bounds the summed vectors held at once).
_COMPOSED_PER_BATCH = 512


@dataclass(frozen=True)
class _Kept:
    """What composition reads of one scored word sequence.

    Attributes:
        groups: each probe group's vectors (layers, words, dim).
        outputs: each affine probe's outputs (words, out) on them, by probe index,
            filled when first composed (dropped with the vectors).
    """

    groups: tuple[NDArray[np.float32], ...]
    outputs: dict[int, NDArray[np.float32]] = field(default_factory=dict)

    def nbytes(self) -> int:
        """The vectors' bytes (what the budget counts; the outputs are not counted)."""
        return sum(v.nbytes for v in self.groups)


def _nbytes(predictions: tuple[Prediction, ...]) -> int:
    """The bytes of one word sequence's predictions, one per probe."""
    return sum(p.nbytes for p in predictions)


@dataclass
class _Group:
    """Probes that read one backend: the backend, the layers they need, their indices."""

    backend: RepresentationBackend
    layers: list[int]
    members: list[int]


@dataclass(frozen=True)
class ProbeColumns:
    """The task columns a set of probes gives an attack.

    Attributes:
        prefixes: each probe's name in the columns: its task, with ``#2``, ``#3``
            appended when several probes share a task.
        columns: ``<prefix>.<metric>`` for every metric an attack can lower, in order.
        primary: ``<prefix>.<primary metric>`` of each probe.
    """

    prefixes: tuple[str, ...]
    columns: tuple[str, ...]
    primary: tuple[str, ...]

    def objective(self, names: Sequence[str]) -> tuple[str, ...]:
        """The columns ``--objective`` names: a column (``distance.uuas``) or a probe
        (``distance``: its primary metric); empty names mean every primary metric.

        Raises:
            ConfigError: a name that is neither (the message lists the valid ones).
        """
        if not names:
            return self.primary
        out: list[str] = []
        for name in names:
            if name in self.columns:
                out.append(name)
            elif name in self.prefixes:
                out.append(self.primary[self.prefixes.index(name)])
            else:
                valid = ", ".join((*self.prefixes, *self.columns))
                raise ConfigError(f"--objective {name!r} names no probe task or metric ({valid})")
        return tuple(dict.fromkeys(out))


def probe_columns(tasks: Sequence[str]) -> ProbeColumns:
    """The columns of probes of ``tasks`` (registered task names, in probe order)."""
    prefixes: list[str] = []
    seen: dict[str, int] = {}
    for task in tasks:
        seen[task] = seen.get(task, 0) + 1
        prefixes.append(task if seen[task] == 1 else f"{task}#{seen[task]}")
    classes = [PROBE_TASKS.get(task) for task in tasks]
    columns = tuple(
        f"{prefix}.{metric}"
        for prefix, cls in zip(prefixes, classes, strict=True)
        for metric in cls.attack_metrics()
    )
    primary = tuple(
        f"{prefix}.{cls.primary}" for prefix, cls in zip(prefixes, classes, strict=True)
    )
    return ProbeColumns(tuple(prefixes), columns, primary)


class ProbeEvaluator:
    """Per-task metrics of candidate sentences under a set of probes.

    Task names are ``<probe task>.<metric>`` (``distance.uuas``, ``pos.pos_acc``...), with
    ``#2``, ``#3`` appended when several probes share a task. Each probe contributes the
    metrics its task says an attack can lower (``ProbeTask.attack_metrics()``: the
    higher-is-better ones), and its task's ``primary`` metric is in :attr:`primary`.
    Undefined per-sentence values (a Spearman correlation of a two-word sentence) count
    as 0. Representation distances (Algorithm 2) use the first probe's representation.
    """

    def __init__(self, probes: Sequence[Probe], groups: list[_Group]) -> None:
        self.probes = list(probes)
        self.groups = groups
        #: Metrics of each probe, in column order.
        self._metrics = [probe.task.attack_metrics() for probe in self.probes]
        columns = probe_columns([probe.spec.task for probe in self.probes])
        #: The primary task of each probe: what an attack lowers by default.
        self.primary = columns.primary
        self._tasks = columns.columns
        #: Each probe's name in the columns (``distance``, ``distance#2``...).
        self._prefixes = columns.prefixes
        #: The first probe's vectors of recent clean sentences, by their words (never by
        #: sentence ID: two sentences may share one).
        self._originals: FIFOCache[tuple[str, ...], NDArray[np.float32]] = FIFOCache(
            _ORIGINALS_KEPT
        )
        self._golds: FIFOCache[_Annotation, Gold] = FIFOCache(_GOLDS_KEPT)
        #: Each probe's prediction on recently scored word sequences (oldest first).
        self._predicted: FIFOCache[tuple[str, ...], tuple[Prediction, ...]] = FIFOCache(
            PREDICTIONS_KEPT_BYTES, getsizeof=_nbytes
        )
        #: What composition reads of recently scored word sequences, kept for
        #: :meth:`compose_many` once :meth:`keep_vectors` asked (least recently scored
        #: or composed dropped first; a budget of 0 keeps none).
        self._vectors: LRUCache[Words, _Kept] = LRUCache(0, getsizeof=_Kept.nbytes)
        #: The layers of each group's kept vectors, as its backend numbers them.
        self._vector_layers: tuple[tuple[int, ...], ...] = ()
        #: The group of each probe (an index into ``groups``).
        self._group_of = {k: j for j, group in enumerate(groups) for k in group.members}

    @classmethod
    def from_dirs(
        cls,
        dirs: Sequence[str | os.PathLike[str]],
        *,
        device: str | None = None,
        dtype: str | None = None,
    ) -> ProbeEvaluator:
        """Load probe directories and open the backends that feed them, on ``device``
        and in ``dtype`` (``None``: the precision each probe was trained with)."""
        if not dirs:
            raise ConfigError("an attack needs at least one --probe directory")
        probes = [Probe.load(d) for d in dirs]
        by_backend: dict[str, list[int]] = {}
        for i, p in enumerate(probes):
            by_backend.setdefault(json.dumps(p.backend, sort_keys=True), []).append(i)
        groups = []
        for desc, members in by_backend.items():
            opts = json.loads(desc)
            backend = reopen_backend(opts, device=device, dtype=dtype)
            for i in members:
                probes[i].check_representation(backend.key(probes[i].key.layer))
            layers = sorted({probes[i].key.layer for i in members})
            groups.append(_Group(backend, layers, members))
        return cls(probes, groups)

    @property
    def tasks(self) -> tuple[str, ...]:
        """Every task column, in the order of the metrics' columns."""
        return self._tasks

    def _encode(self, words: Sequence[tuple[str, ...]]) -> list[FlatReps]:
        """One forward pass per group: the group's layers of every word list."""
        return [g.backend.encode_flat(list(words), layers=g.layers) for g in self.groups]

    def _first_layer(self, reps: list[FlatReps], i: int) -> NDArray[np.float32]:
        """The first probe's vectors (n_i, dim) of sentence ``i`` of ``reps``."""
        first = self.probes[0]
        for g, r in zip(self.groups, reps, strict=True):
            if 0 in g.members:
                return np.asarray(r.sentence(i, first.key.layer), dtype=np.float32)
        raise AssertionError("the first probe belongs to no group")  # pragma: no cover

    def evaluate(
        self,
        original: Sentence,
        candidates: Sequence[Sentence],
        alignments: Sequence[NDArray[np.int64] | None],
    ) -> Evaluation:
        """Metrics, shape (m, tasks), and L2 / cosine to the original, shape (m,)."""
        return self.evaluate_many([(original, candidates, alignments)])[0]

    def evaluate_many(
        self,
        requests: Sequence[tuple[Sentence, Sequence[Sentence], Sequence[NDArray[np.int64] | None]]],
    ) -> list[Evaluation]:
        """:meth:`evaluate` of several sentences' candidates with one forward pass.

        Every candidate of every request goes through the encoder and the probes in
        the same padded batches; metrics and distances are then split per request.
        """
        candidates = [c for _, cands, _ in requests for c in cands]
        words = [c.forms for c in candidates]
        reps = self._encode(words)
        golds = [self._gold(c) for c in candidates]
        predicted = self._predict(reps)
        metrics = self._metric_rows(predicted, golds)
        self._keep_predictions(words, predicted)
        self._keep_vectors(words, reps)
        out: list[Evaluation] = []
        start = 0
        for original, cands, alignments in requests:
            stop = start + len(cands)
            l2, cos = self._distances(original, reps, words, range(start, stop), alignments)
            out.append(Evaluation(metrics[start:stop], l2, cos))
            start = stop
        return out

    def _metric_rows(
        self, predicted: Sequence[Sequence[Prediction]], golds: Sequence[Gold]
    ) -> NDArray[np.float64]:
        """Metrics (m, tasks) of each probe's predictions (probe order) on m sentences
        against ``golds``; an undefined value counts as 0."""
        per_probe = [
            probe.score_predictions(preds, golds)
            for probe, preds in zip(self.probes, predicted, strict=True)
        ]
        metrics = np.zeros((len(golds), len(self.tasks)), dtype=np.float64)
        col = 0
        for names, scores in zip(self._metrics, per_probe, strict=True):
            for k in names:
                metrics[:, col] = [s[k] for s in scores]
                col += 1
        return np.nan_to_num(metrics, nan=0.0)

    def _gold(self, sentence: Sentence) -> Gold:
        """The gold record of ``sentence``, shared by every sentence of the same
        annotation: substitutions keep the original's, so a search's candidates share
        one record, built once and prepared once by the metric kernels."""
        key = (sentence.heads.tobytes(), sentence.upos, sentence.xpos)
        gold = self._golds.get(key)
        if gold is None:
            gold = self._golds[key] = gold_of(sentence)
        return gold

    def _original_vectors(
        self,
        original: Sentence,
        reps: list[FlatReps],
        words: Sequence[tuple[str, ...]],
        rows: range,
    ) -> NDArray[np.float32]:
        """The first probe's word vectors of ``original`` (n, dim), cached by its words
        (what the vectors depend on), so two sentences with one ``sent_id`` each get
        their own."""
        forms = original.forms
        hit = self._originals.get(forms)
        if hit is not None:
            return hit
        vec = None
        for i in rows:
            if words[i] == forms:
                # The clean sentence is in this batch: no extra forward needed.
                vec = self._first_layer(reps, i)
                break
        if vec is None:
            vec = self._first_layer(self._encode([forms]), 0)
        self._originals[forms] = vec
        return vec

    def _distances(
        self,
        original: Sentence,
        reps: list[FlatReps],
        words: Sequence[tuple[str, ...]],
        rows: range,
        alignments: Sequence[NDArray[np.int64] | None],
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """L2 and cosine between the original's stacked vectors and each candidate's."""
        ref = self._original_vectors(original, reps, words, rows)
        stacked = [self._first_layer(reps, i) for i in rows]
        return candidate_distances(ref, stacked, alignments)

    def _predict(self, reps: list[FlatReps]) -> list[list[Prediction]]:
        """Each probe's predictions (in probe order) on the sentences of ``reps``, one
        :class:`FlatReps` per group as :meth:`_encode` returns them."""
        predicted: list[list[Prediction]] = [[] for _ in self.probes]
        for g, r in zip(self.groups, reps, strict=True):
            for i in g.members:
                predicted[i] = self.probes[i].predict_reps(r, layer=self.probes[i].key.layer)
        return predicted

    def _keep_predictions(
        self, words: Sequence[tuple[str, ...]], predicted: Sequence[Sequence[Prediction]]
    ) -> None:
        """Keep each probe's prediction on each scored word sequence (copied out of the
        batch), the oldest dropped beyond :data:`PREDICTIONS_KEPT_BYTES`."""
        for k, forms in enumerate(words):
            if forms in self._predicted:
                continue
            kept = tuple(per_probe[k].copy() for per_probe in predicted)
            if _nbytes(kept) <= self._predicted.maxsize:
                self._predicted[forms] = kept

    def forget_predictions(self) -> None:
        """Drop the predictions and vectors kept from scoring (every chunk of an attack
        starts so, in one process as on a worker, so a row never depends on an earlier
        chunk)."""
        self._predicted.clear()
        self._vectors.clear()

    def keep_vectors(self, max_bytes: int = VECTORS_KEPT_BYTES) -> None:
        """From now on keep the word vectors of every scored word sequence, up to
        ``max_bytes`` (the least recently scored or composed dropped first; 0 keeps
        none), for :meth:`compose_many`."""
        if max_bytes > self._vectors.maxsize:
            self._vectors = LRUCache(max_bytes, getsizeof=_Kept.nbytes)

    def _keep_vectors(self, words: Sequence[tuple[str, ...]], reps: list[FlatReps]) -> None:
        """Keep each group's vectors of each scored word sequence (copied out of the
        batch) when :meth:`keep_vectors` asked for them."""
        budget = self._vectors.maxsize
        if budget <= 0:
            return
        self._vector_layers = tuple(r.layers for r in reps)
        for k, forms in enumerate(words):
            if self._vectors.get(forms) is not None:  # now the most recently used
                continue
            kept = _Kept(
                tuple(
                    np.array(r.vectors[:, r.offsets[k] : r.offsets[k + 1]], dtype=np.float32)
                    for r in reps
                )
            )
            if kept.nbytes() <= budget:
                self._vectors[forms] = kept

    def compose_many(self, requests: Sequence[ComposeRequest]) -> list[NDArray[np.float64]]:
        """Metrics (m, tasks) of the union of each pair of scored word sequences
        (:class:`~brittle.search.scoring.RepresentationComposer`).

        For a pair ``(a, b)`` of perturbations of ``original`` that change different
        words, each probe reads ``v(a) + v(b) - v(original)`` at its layer, word by word
        (each part's change to every word's vector, added), and predicts from it
        against the original's gold annotation. An affine probe (:attr:`~brittle.
        scorers.probe.Probe.affine`) predicts from ``o(a) + o(b) - o(original)``, the
        sum of its outputs on the parts, which is the same and costs each part one
        pass through its network instead of each pair. For static vectors this is what
        the union itself gives; for a contextual model an approximation that sees two
        changes reinforce each other where adding their damages cannot (on the guided
        bench's pairs its damage correlates 0.92 with the pairs' own, the sum of the
        two damages 0.81). A row is NaN where the original's or a part's vectors are
        not kept (:meth:`keep_vectors`), or the parts differ in length.
        """
        out = [np.full((len(pairs), len(self.tasks)), np.nan) for _, pairs in requests]
        todo: list[tuple[int, int, Gold, tuple[Words, Words, Words]]] = []
        for r, (original, pairs) in enumerate(requests):
            clean = self._vectors.get(original.forms)
            if clean is None:
                continue
            gold = self._gold(original)
            shape = clean.groups[0].shape
            for i, (a, b) in enumerate(pairs):
                va, vb = self._vectors.get(a), self._vectors.get(b)
                if (
                    va is None
                    or vb is None
                    or not va.groups[0].shape == vb.groups[0].shape == shape
                ):
                    continue
                todo.append((r, i, gold, (original.forms, a, b)))
        for start in range(0, len(todo), _COMPOSED_PER_BATCH):
            part = todo[start : start + _COMPOSED_PER_BATCH]
            triples = [t[3] for t in part]
            predicted = [self._composed(k, triples) for k in range(len(self.probes))]
            metrics = self._metric_rows(predicted, [t[2] for t in part])
            for (r, i, _, _), row in zip(part, metrics, strict=True):
                out[r][i] = row
        return out

    def _composed(self, k: int, triples: Sequence[tuple[Words, Words, Words]]) -> list[Prediction]:
        """Probe ``k``'s predictions on ``v(a) + v(b) - v(c)`` for each ``(c, a, b)``
        of ``triples`` (all kept)."""
        probe = self.probes[k]
        g = self._group_of[k]
        at = self._vector_layers[g].index(probe.key.layer)
        kept = self._vectors
        if probe.affine:
            # in first-seen order, not a set's: a batch's rows must not hang on hashing
            self._fill_outputs(k, g, at, list(dict.fromkeys(w for t in triples for w in t)))
            parts = [
                (kept[a].outputs[k], kept[b].outputs[k], kept[c].outputs[k]) for c, a, b in triples
            ]
            return probe.predict_outputs(FlatVectors.stack_sums(parts))
        parts = [
            (kept[a].groups[g][at], kept[b].groups[g][at], kept[c].groups[g][at])
            for c, a, b in triples
        ]
        return probe.predict(FlatVectors.stack_sums(parts))

    def _fill_outputs(self, k: int, g: int, at: int, words: Sequence[Words]) -> None:
        """Affine probe ``k``'s outputs (n, out) on the kept vectors of each word
        sequence of ``words`` (group ``g``, layer position ``at``) that has none yet,
        in one pass through its network."""
        missing = [w for w in words if k not in self._vectors[w].outputs]
        if not missing:
            return
        fresh = self.probes[k].outputs(
            FlatVectors.stack([self._vectors[w].groups[g][at] for w in missing])
        )
        for w, o in zip(missing, fresh.split(), strict=True):
            self._vectors[w].outputs[k] = o

    def predictions(self, sentences: Sequence[Sentence]) -> list[dict[str, JSONValue]]:
        """What each probe predicts on each sentence, in the compact form result rows
        store (:func:`~brittle.engine.reports.predictions.compact_prediction`), keyed by the
        probe's column prefix.

        A sentence scored since :meth:`forget_predictions` gets the predictions its
        metrics were computed from (no model call: an attack's clean and perturbed
        sentences usually were); the others go through the model in one forward pass.
        """
        prefixes = self._prefixes
        found = [self._predicted.get(s.forms) for s in sentences]
        missing = [k for k, hit in enumerate(found) if hit is None]
        if missing:
            fresh = self._predict(self._encode([sentences[k].forms for k in missing]))
            for j, k in enumerate(missing):
                found[k] = tuple(per_probe[j] for per_probe in fresh)
        out: list[dict[str, JSONValue]] = []
        for sentence, preds in zip(sentences, found, strict=True):
            assert preds is not None
            row: dict[str, JSONValue] = {}
            for prefix, probe, pred in zip(prefixes, self.probes, preds, strict=True):
                value = compact_prediction(probe.spec.task, pred, sentence, probe.spec.labels)
                if value is not None:
                    row[prefix] = value
            out.append(row)  # probes in column order, whatever their backends' grouping
        return out

    def substitution_estimates(
        self, original: Sentence, table: SubstitutionTable, weights: Mapping[str, float]
    ) -> Estimates | None:
        """:meth:`substitution_estimates_many` of one sentence."""
        return self.substitution_estimates_many([(original, table, weights)])[0]

    def substitution_estimates_many(
        self, requests: Sequence[tuple[Sentence, SubstitutionTable, Mapping[str, float]]]
    ) -> list[Estimates | None]:
        """First-order estimates of each option's damage, from the probes' gradient, for
        each request ``(original, table, weights)`` in order.

        The loss differentiated is the weighted sum of the training losses of the
        probes the objective reads (a probe's weight: the sum of its columns' weights in
        ``weights``), against the original's gold annotation, through each backend
        that has input gradients (:meth:`~brittle.scorers.representations.
        RepresentationBackend.substitution_effects_many`: the requests' sentences in
        batched passes). Estimates are in loss units scaled so that the largest
        magnitude of the sentence is 1, rounded to 6 decimals (the ranking they give is
        what matters, and it does not hinge on the last bits of a float sum). ``None``
        for a request: no backend has gradients, or its table has no option.
        """
        totals: list[list[NDArray[np.float64]] | None] = [None] * len(requests)
        asked = [i for i, (_, table, _) in enumerate(requests) if table.entries]
        options = {
            i: [(p, [form for form, _ in opts]) for p, opts in requests[i][1].entries]
            for i in asked
        }
        weights = {i: self._probe_weights(requests[i][2]) for i in asked}
        for g in self.groups:
            mine: list[tuple[int, dict[int, float]]] = []  # (request, {probe: weight})
            for i in asked:
                weight = weights[i]
                members = {m: weight[m] for m in g.members if weight[m] > 0}
                if members:
                    mine.append((i, members))
            if not mine:
                continue
            layers = sorted({self.probes[m].key.layer for _, ms in mine for m in ms})
            effects = [
                EffectsRequest(
                    requests[i][0].forms,
                    self._weighted_loss(
                        self._gold(requests[i][0]), len(requests[i][0]), ms, layers
                    ),
                    options[i],
                )
                for i, ms in mine
            ]
            found = g.backend.substitution_effects_many(effects, layers=layers)
            if found is None:
                continue
            for (i, _), part in zip(mine, found, strict=True):
                before = totals[i]
                totals[i] = (
                    part if before is None else [a + b for a, b in zip(before, part, strict=True)]
                )
        out: list[Estimates | None] = []
        for i, total in enumerate(totals):
            if total is None:
                out.append(None)
                continue
            top = max((float(np.abs(a).max()) for a in total if a.size), default=0.0)
            scale = 1.0 / top if top > 0 else 1.0
            out.append(
                {p: np.round(a * scale, 6) for (p, _), a in zip(options[i], total, strict=True)}
            )
        return out

    def _probe_weights(self, weights: Mapping[str, float]) -> list[float]:
        """Each probe's weight in an objective: the sum of its columns' in ``weights``."""
        weight = [0.0] * len(self.probes)
        for k, prefix in enumerate(self._prefixes):
            weight[k] = sum(w for c, w in weights.items() if c.split(".", 1)[0] == prefix)
        return weight

    def _weighted_loss(
        self, gold: Gold, n: int, weights: Mapping[int, float], layers: Sequence[int]
    ) -> WordLoss:
        """``sum_i weights[i] * loss_i``: probe ``i``'s training loss of one sentence of
        ``n`` words against ``gold``, reading its layer's vectors (``layers`` order)."""
        import torch

        # deferred: loads torch, as the probes themselves do
        from brittle.scorers.probe_nets import PaddedBatch

        def loss(vectors: list[torch.Tensor]) -> torch.Tensor:
            total = torch.zeros((), dtype=torch.float32, device=vectors[0].device)
            for i, w in weights.items():
                probe = self.probes[i]
                # the probe's network stays where it scores (the CPU unless moved); the
                # gradient flows back through the copy to the encoder's device
                x = vectors[list(layers).index(probe.key.layer)].to(probe.device)
                if probe.scaler is not None:
                    mean = torch.from_numpy(probe.scaler.mean).to(x.device)
                    x = (x - mean) / torch.from_numpy(probe.scaler.std).to(x.device)
                mask = torch.ones((1, n), dtype=torch.bool, device=x.device)
                batch = PaddedBatch(x[None], mask, torch.tensor([n], dtype=torch.int64))
                part = probe.task.loss(probe.net, batch, [gold], probe.spec)
                total = total + w * part.to(total.device)
            return total

        return loss

    def close(self) -> None:
        """Release the backends."""
        for g in self.groups:
            g.backend.close()


def candidate_distances(
    original: NDArray[np.float32],
    candidates: Sequence[NDArray[np.float32]],
    alignments: Sequence[NDArray[np.int64] | None],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """L2 distance and cosine between the original's word vectors and each candidate's,
    each read as one long vector (words stacked), in float64.

    Args:
        original: the original's word vectors, shape (n, dim).
        candidates: m arrays of shape (n, dim); candidate ``k``'s row ``j`` belongs at
            position ``alignments[k][j]`` of the original (``None``: in place).
        alignments: m permutations of ``range(n)`` or ``None``.

    Returns:
        ``(l2, cosine)``, each shape (m,); the cosine of a zero vector is 1.

    One elementwise pass over all candidates: per-candidate ``np.linalg.norm`` calls go
    through BLAS, whose threads wake against torch's after every model call (about a
    millisecond each on 2 cores, as long as the model pass itself on short sentences).
    """
    m = len(candidates)
    if m == 0:
        return np.zeros(0), np.ones(0)
    ref = original.astype(np.float64)
    vecs = np.empty((m, *ref.shape), dtype=np.float64)
    for k, (vec, align) in enumerate(zip(candidates, alignments, strict=True)):
        if align is None:
            vecs[k] = vec
        else:
            vecs[k, align] = vec
    diff = vecs - ref
    l2 = np.sqrt(np.einsum("kij,kij->k", diff, diff))
    norms = np.sqrt(np.einsum("kij,kij->k", vecs, vecs)) * np.sqrt(np.einsum("ij,ij->", ref, ref))
    dots = np.einsum("kij,ij->k", vecs, ref)
    safe = np.where(norms > 0, norms, 1.0)
    cos = np.where(norms > 0, dots / safe, 1.0)
    return l2, cos
