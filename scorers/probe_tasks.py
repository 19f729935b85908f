"""Probing tasks: what a probe predicts, its loss and its metrics.

Every task is a :class:`ProbeTask` class registered by name in :data:`PROBE_TASKS` (the
``probes`` kind). It works on a padded batch
(:class:`~brittle.scorers.probe_nets.PaddedBatch`: ``x`` (b, n, dim)) and returns one
prediction per sentence:

=============  ===============================  ==========================================
task           prediction per sentence          metrics
=============  ===============================  ==========================================
distance       squared L2 distances (n, n)      uuas, sdr, dspr, dspr_prim
perceptron     squared L2 distances (n, n)      uuas, sdr, dspr, dspr_prim
depth          squared norms (n,)               root_acc, depth_spearman, depth_acc
pos            tag ids (n,)                     pos_acc
root           root probabilities (n,)          root_acc
tree-depth     class probabilities (classes,)   tree_depth_acc, tree_depth_mae
=============  ===============================  ==========================================

The primary metrics are ``uuas`` (distance, perceptron), ``depth_spearman``, ``pos_acc``,
``root_acc`` and ``tree_depth_acc``; ``tree_depth_mae`` is the one lower-is-better metric.

A task states its facts as class variables, and everything that reports or attacks
probes reads them there (nothing else lists tasks or metrics): the metrics it reports
(``metric_names``, in table order), the one an attack lowers by default (``primary``),
which metrics are better when lower (``lower_is_better``; the others are better when
higher) and the columns ``brittle evaluate`` shows (``columns``). An attack can lower
every higher-is-better metric (:meth:`ProbeTask.attack_metrics`). The facts are checked
when the class is defined, so a task that gets them wrong fails where it is written.

- ``distance`` (Hewitt & Manning): ``d(i, j) = |B(h_i - h_j)|^2``; L1 loss against tree
  distances over all word pairs, divided by n^2 per sentence, averaged over the batch.
- ``depth``: ``|B h_i|^2`` against tree depths; L1 loss divided by n.
- ``pos``: tag logits per word, cross-entropy (UPOS, or XPOS with ``tagset="xpos"``).
- ``root``: one score per word, softmax over the words of the sentence, cross-entropy
  against the root word.
- ``tree-depth`` (La Malfa et al.'s fourth task): classification of the depth of the
  whole tree (largest word depth). Word-level logits are averaged over the sentence;
  classes are the depths 0..K-1 seen in training (K at most 16) and the last class means
  "K-1 or deeper". Classification rather than regression because the question asked is
  "which depth", and accuracy is what La Malfa et al. report; ``tree_depth_mae`` gives the
  distance in levels as well.
- ``perceptron`` (Hall Maudslay et al.): the distance probe's parameterisation trained
  with a structured perceptron (hinge) loss. Distances are first expressed in units of
  the sentence's mean predicted gold-edge distance, ``d' = d / mean_gold_edges(d)``, then
  the loss is ``w'(gold) - min_T [w'(T) - margin * wrong(T)]``, where ``w'`` sums ``d'``
  over a tree's edges and ``wrong(T)`` counts the edges of ``T`` not in the gold tree;
  the minimum is Prim's minimum spanning tree of the cost-augmented distances. It is zero
  exactly when every other spanning tree is longer than the gold tree by at least
  ``margin`` per wrong edge. Measuring in gold-edge units makes the loss scale-free, as
  the spanning tree is: without it, shrinking every distance towards zero (the collapsed
  probe ``B = 0``) drives the loss towards ``margin * (n - 1) / n`` from any starting
  point and MLP probes stall there. With ``margin = 1`` a perfect tree embedding (gold
  edges 1, other pairs at least 2, as the distance probe aims for) has zero loss. The
  loss is divided by n.

UUAS leaves punctuation out (Hewitt & Manning); the depth probe's root is its shallowest
non-punctuation word. Definitions of every metric: :mod:`brittle.scorers.metrics`.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

import numpy as np

from brittle.engine.core.errors import ConfigError
from brittle.engine.core.registry import Registry
from brittle.scorers.metrics import (
    DepthScores,
    DistanceScores,
    PosMetrics,
    RootMetrics,
    aggregate_depth,
    aggregate_distance,
    score_depths_many,
    score_distances_many,
    score_pos,
)
from brittle.scorers.mst import minimum_spanning_tree
from brittle.scorers.probe_gold import Gold

if TYPE_CHECKING:
    import torch
    from numpy.typing import NDArray
    from torch import nn

    from brittle.scorers.probe_nets import PaddedBatch

__all__ = [
    "PROBE_TASKS",
    "Prediction",
    "ProbeSpec",
    "ProbeTask",
    "squared_distances",
    "task_for",
]

#: A probe's prediction for one sentence: float32 distances (n, n), depths (n,), root
#: probabilities (n,) or class probabilities (classes,); int64 tag ids (n,).
Prediction: TypeAlias = "NDArray[np.float32] | NDArray[np.int64]"

#: Keeps the perceptron's distance unit away from zero.
_EPS = 1e-6

#: Largest vector size, rank or hidden width a probe may declare (the widest models'
#: hidden states are a few thousand): a larger one in a ``probe.json`` is refused
#: rather than allocated.
MAX_PROBE_SIZE = 1 << 16

#: Most classes of the tree-depth task.
MAX_TREE_DEPTH_CLASSES = 16

#: Probe architectures (:mod:`brittle.scorers.probe_nets`; named here so a spec checks
#: without loading torch).
PROBE_ARCHITECTURES: tuple[str, ...] = ("linear", "mlp", "sentence")

#: Words per sentence the ``sentence`` architecture reads by default (La Malfa et al.
#: cut or pad every sentence to 20 words).
SENTENCE_WORDS = 20


@dataclass(frozen=True, slots=True)
class ProbeSpec:
    """Hyper-parameters of one probe.

    Attributes:
        task: registered task name.
        dim: size of the word vectors it reads.
        arch: ``linear``, ``mlp`` or ``sentence`` (:mod:`brittle.scorers.probe_nets`).
        rank: rank of B for distance/depth/perceptron (default: ``dim``).
        hidden: hidden width of the MLP and sentence networks.
        labels: tag set (pos) or depth classes (tree-depth), learnt from training data.
        tagset: ``upos`` or ``xpos`` (pos task).
        margin: cost per wrong edge in the perceptron loss.
        words: words per sentence the ``sentence`` network reads (cut or padded to).
    """

    task: str
    dim: int
    arch: str = "linear"
    rank: int | None = None
    hidden: int = 256
    labels: tuple[str, ...] = ()
    tagset: str = "upos"
    margin: float = 1.0
    words: int = SENTENCE_WORDS

    def __post_init__(self) -> None:
        sizes = {"dim": self.dim, "rank": self.rank, "hidden": self.hidden, "words": self.words}
        for name, size in sizes.items():
            if size is not None and not 1 <= size <= MAX_PROBE_SIZE:
                raise ConfigError(
                    f"probe {name} must be between 1 and {MAX_PROBE_SIZE}, got {size}"
                )
        if not 0 <= self.margin < math.inf:  # also NaN
            raise ConfigError(f"probe margin must be a finite number >= 0, got {self.margin}")
        if self.arch not in PROBE_ARCHITECTURES:
            known = ", ".join(PROBE_ARCHITECTURES)
            raise ConfigError(f"unknown probe architecture {self.arch!r} (known: {known})")

    def to_dict(self) -> dict[str, str | int | float | list[str] | None]:
        """JSON-ready form (``words`` only for the ``sentence`` architecture)."""
        out: dict[str, str | int | float | list[str] | None] = {
            "task": self.task,
            "dim": self.dim,
            "arch": self.arch,
            "rank": self.rank,
            "hidden": self.hidden,
            "labels": list(self.labels),
            "tagset": self.tagset,
            "margin": self.margin,
        }
        if self.arch == "sentence":
            out["words"] = self.words
        return out

    def net(self, out: int, *, bias: bool) -> nn.Module:
        """A fresh network of this spec's architecture with ``out`` outputs per word."""
        # deferred: loads torch
        from brittle.scorers.probe_nets import make_net

        return make_net(self.arch, self.dim, out, hidden=self.hidden, bias=bias, words=self.words)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProbeSpec:  # Any: decoded JSON
        """Inverse of :meth:`to_dict` (``data`` is read from JSON)."""
        return cls(
            task=str(data["task"]),
            dim=int(data["dim"]),
            arch=str(data.get("arch", "linear")),
            rank=None if data.get("rank") is None else int(data["rank"]),
            hidden=int(data.get("hidden", 256)),
            labels=tuple(str(x) for x in data.get("labels", ())),
            tagset=str(data.get("tagset", "upos")),
            margin=float(data.get("margin", 1.0)),
            words=int(data.get("words", SENTENCE_WORDS)),
        )


class ProbeTask(abc.ABC):
    """One probing task: its facts, its network, loss, predictions and metrics.

    The contract of :data:`PROBE_TASKS`. A concrete task sets every fact below; they
    are checked when its class (one that sets ``name``) is defined.
    """

    #: Registered name.
    name: ClassVar[str] = ""
    #: Metrics it reports, in table order: the keys of :meth:`aggregate`, and keys of
    #: every :meth:`score` dict (which may add per-sentence extras, e.g. ``root_prob``).
    metric_names: ClassVar[tuple[str, ...]] = ()
    #: The metric an attack lowers by default (higher is better).
    primary: ClassVar[str] = ""
    #: Metrics that are better when lower (errors); every other metric is better higher.
    lower_is_better: ClassVar[frozenset[str]] = frozenset()
    #: Metrics ``brittle evaluate`` shows, in column order.
    columns: ClassVar[tuple[str, ...]] = ()
    #: Annotations it needs from the treebank.
    needs: ClassVar[tuple[str, ...]] = ("heads",)

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:
            cls._check_facts()

    @classmethod
    def _check_facts(cls) -> None:
        """Raise :class:`TypeError` unless the class variables describe a usable task."""
        where = f"probe task {cls.__name__} ({cls.name!r})"
        metrics = set(cls.metric_names)
        if not cls.name or not cls.metric_names or len(metrics) != len(cls.metric_names):
            raise TypeError(f"{where}: needs a name and distinct metric_names")
        if cls.primary not in metrics or cls.primary in cls.lower_is_better:
            raise TypeError(f"{where}: primary must be a higher-is-better metric")
        if not cls.lower_is_better <= metrics:
            raise TypeError(f"{where}: lower_is_better names unknown metrics")
        if not cls.columns or not set(cls.columns) <= metrics:
            raise TypeError(f"{where}: columns must be some of its metrics")

    @classmethod
    def higher_is_better(cls, metric: str) -> bool:
        """Whether a higher value of ``metric`` is better (a lower one for errors)."""
        if metric not in cls.metric_names:
            raise ConfigError(f"the {cls.name} probe reports no metric {metric!r}")
        return metric not in cls.lower_is_better

    @classmethod
    def attack_metrics(cls) -> tuple[str, ...]:
        """The metrics an attack can lower (the higher-is-better ones), in table order."""
        return tuple(m for m in cls.metric_names if m not in cls.lower_is_better)

    def prepare(self, spec: ProbeSpec, golds: Sequence[Gold]) -> ProbeSpec:
        """``spec`` completed from the training annotations (rank, labels)."""
        return spec

    @abc.abstractmethod
    def build(self, spec: ProbeSpec) -> nn.Module:
        """A fresh network for ``spec``: (..., dim) -> (..., out)."""

    @abc.abstractmethod
    def loss(
        self, net: nn.Module, batch: PaddedBatch, golds: Sequence[Gold], spec: ProbeSpec
    ) -> torch.Tensor:
        """Mean loss over the batch (a scalar tensor with a gradient)."""

    @abc.abstractmethod
    def predict(self, net: nn.Module, batch: PaddedBatch, spec: ProbeSpec) -> list[Prediction]:
        """One prediction per sentence (see the module table)."""

    @abc.abstractmethod
    def score(
        self, predictions: Sequence[Prediction], golds: Sequence[Gold], spec: ProbeSpec
    ) -> list[dict[str, float]]:
        """Metric values of each sentence against its gold annotations."""

    @abc.abstractmethod
    def aggregate(
        self, predictions: Sequence[Prediction], golds: Sequence[Gold], spec: ProbeSpec
    ) -> dict[str, float]:
        """Corpus metrics (``metric_names``)."""


#: Probing tasks by name (classes; :func:`task_for` gives an instance).
PROBE_TASKS: Registry[type[ProbeTask]] = Registry(
    "probes",
    contract=ProbeTask,
    packages=("brittle.scorers.probe_tasks",),
    item="probe task",
    name_attr="name",
)


def task_for(name: str) -> ProbeTask:
    """An instance of the task registered as ``name``.

    Raises:
        ConfigError: no task has that name (the message lists the known ones).
    """
    return PROBE_TASKS.get(name)()


def _check_lengths(batch: PaddedBatch, golds: Sequence[Gold]) -> None:
    if len(golds) != len(batch):
        raise ConfigError(f"{len(golds)} gold sentences for a batch of {len(batch)}")
    for i, g in enumerate(golds):
        if int(batch.lengths[i]) != len(g):
            raise ConfigError(
                f"sentence {i} of the batch has {int(batch.lengths[i])} word vectors "
                f"but {len(g)} gold words"
            )


def _pad_matrices(golds: Sequence[Gold], width: int) -> NDArray[np.float32]:
    out = np.zeros((len(golds), width, width), dtype=np.float32)
    for i, g in enumerate(golds):
        n = len(g)
        out[i, :n, :n] = g.distances
    return out


def _pad_vectors(values: Sequence[NDArray[np.int32]], width: int) -> NDArray[np.float32]:
    out = np.zeros((len(values), width), dtype=np.float32)
    for i, v in enumerate(values):
        out[i, : v.shape[0]] = v
    return out


# ---------------------------------------------------------------- distance family
def squared_distances(h: torch.Tensor) -> torch.Tensor:
    """Pairwise squared L2 distances of (b, n, r) -> (b, n, n), never negative."""
    sq = (h * h).sum(-1)
    gram = h @ h.transpose(1, 2)
    return (sq[:, :, None] + sq[:, None, :] - 2.0 * gram).clamp_min(0.0)


class _RankMapTask(ProbeTask):
    """A task whose network is the rank-r map B of Hewitt & Manning (no bias)."""

    def prepare(self, spec: ProbeSpec, golds: Sequence[Gold]) -> ProbeSpec:
        return spec if spec.rank is not None else replace(spec, rank=spec.dim)

    def build(self, spec: ProbeSpec) -> nn.Module:
        return spec.net(spec.rank or spec.dim, bias=False)


class _DistanceBase(_RankMapTask):
    metric_names = ("uuas", "sdr", "dspr", "dspr_prim")
    primary = "uuas"
    columns = metric_names

    def distances(self, net: nn.Module, batch: PaddedBatch) -> torch.Tensor:
        """Predicted squared distances (b, n, n); zero on padding."""
        d = squared_distances(net(batch.x))
        m = batch.mask
        return d * (m[:, :, None] & m[:, None, :])

    def predict(self, net: nn.Module, batch: PaddedBatch, spec: ProbeSpec) -> list[Prediction]:
        d = self.distances(net, batch).detach().cpu().numpy()
        return [d[i, :n, :n] for i, n in enumerate(batch.lengths.tolist())]

    def _scores(
        self, predictions: Sequence[Prediction], golds: Sequence[Gold]
    ) -> list[DistanceScores]:
        if len(predictions) != len(golds):
            raise ConfigError(f"{len(predictions)} predictions for {len(golds)} gold sentences")
        # a batch of candidates shares one Gold: its arrays are validated and ranked once
        return score_distances_many(
            predictions, [g.heads for g in golds], punct=[g.punct for g in golds]
        )

    def score(
        self, predictions: Sequence[Prediction], golds: Sequence[Gold], spec: ProbeSpec
    ) -> list[dict[str, float]]:
        return [
            {"uuas": s.uuas, "sdr": s.sdr, "dspr": s.dspr, "dspr_prim": s.dspr_prim}
            for s in self._scores(predictions, golds)
        ]

    def aggregate(
        self, predictions: Sequence[Prediction], golds: Sequence[Gold], spec: ProbeSpec
    ) -> dict[str, float]:
        return aggregate_distance(self._scores(predictions, golds))


@PROBE_TASKS.register("distance", help="structural distance probe (Hewitt & Manning), L1 loss")
class DistanceTask(_DistanceBase):
    """Squared L2 distances after a rank-r map match tree distances (L1 / n^2 loss)."""

    name = "distance"

    def loss(
        self, net: nn.Module, batch: PaddedBatch, golds: Sequence[Gold], spec: ProbeSpec
    ) -> torch.Tensor:
        import torch

        _check_lengths(batch, golds)
        pred = self.distances(net, batch)
        gold = torch.from_numpy(_pad_matrices(golds, pred.shape[1])).to(pred.device)
        n = batch.lengths.to(pred.device).float()
        per = (pred - gold).abs().sum(dim=(1, 2)) / (n * n)
        return per.mean()


@PROBE_TASKS.register("perceptron", help="structured-perceptron parser probe (Prim MST loss)")
class PerceptronTask(_DistanceBase):
    """The distance parameterisation trained with a margin structured-perceptron loss."""

    name = "perceptron"

    def loss(
        self, net: nn.Module, batch: PaddedBatch, golds: Sequence[Gold], spec: ProbeSpec
    ) -> torch.Tensor:
        import torch

        _check_lengths(batch, golds)
        pred = self.distances(net, batch)
        width = pred.shape[1]
        b = len(golds)
        gold_adj = np.zeros((b, width, width), dtype=np.float32)
        pred_adj = np.zeros((b, width, width), dtype=np.float32)
        constant = np.zeros(b, dtype=np.float32)
        values = pred.detach().cpu().numpy().astype(np.float64)
        edges = np.ones(b, dtype=np.float32)
        for i, g in enumerate(golds):
            n = len(g)
            if n < 2:
                continue
            child = np.flatnonzero(g.heads > 0)
            adj = np.zeros((n, n), dtype=np.float32)
            adj[child, g.heads[child] - 1] = 1.0
            adj = np.maximum(adj, adj.T)
            gold_adj[i, :n, :n] = adj
            edges[i] = n - 1
            v = values[i, :n, :n]
            unit = float((v * adj).sum() / 2.0 / (n - 1)) + _EPS
            parent = minimum_spanning_tree(v / unit - spec.margin * (1.0 - adj))
            c = np.flatnonzero(parent >= 0)
            t = np.zeros((n, n), dtype=np.float32)
            t[c, parent[c]] = 1.0
            t = np.maximum(t, t.T)
            pred_adj[i, :n, :n] = t
            constant[i] = spec.margin * float((t * (1.0 - adj)).sum() / 2.0)
        dev = pred.device
        g_w = (pred * torch.from_numpy(gold_adj).to(dev)).sum(dim=(1, 2)) / 2.0
        t_w = (pred * torch.from_numpy(pred_adj).to(dev)).sum(dim=(1, 2)) / 2.0
        units = g_w / torch.from_numpy(edges).to(dev) + _EPS
        lengths = batch.lengths.to(dev).float()
        per = ((g_w - t_w) / units + torch.from_numpy(constant).to(dev)) / lengths
        return per.mean()


# ---------------------------------------------------------------- depth
@PROBE_TASKS.register("depth", help="squared-norm depth probe, L1 loss")
class DepthTask(_RankMapTask):
    """Squared norms after a rank-r map match tree depths (L1 / n loss)."""

    name = "depth"
    metric_names = ("root_acc", "depth_spearman", "depth_acc")
    primary = "depth_spearman"
    columns = metric_names

    def depths(self, net: nn.Module, batch: PaddedBatch) -> torch.Tensor:
        """Predicted depths (b, n); zero on padding."""
        h = net(batch.x)
        return (h * h).sum(-1) * batch.mask

    def loss(
        self, net: nn.Module, batch: PaddedBatch, golds: Sequence[Gold], spec: ProbeSpec
    ) -> torch.Tensor:
        import torch

        _check_lengths(batch, golds)
        pred = self.depths(net, batch)
        gold = torch.from_numpy(_pad_vectors([g.depths for g in golds], pred.shape[1]))
        n = batch.lengths.to(pred.device).float()
        return ((pred - gold.to(pred.device)).abs().sum(1) / n).mean()

    def predict(self, net: nn.Module, batch: PaddedBatch, spec: ProbeSpec) -> list[Prediction]:
        d = self.depths(net, batch).detach().cpu().numpy()
        return [d[i, :n] for i, n in enumerate(batch.lengths.tolist())]

    def _scores(
        self, predictions: Sequence[Prediction], golds: Sequence[Gold]
    ) -> list[DepthScores]:
        if len(predictions) != len(golds):
            raise ConfigError(f"{len(predictions)} predictions for {len(golds)} gold sentences")
        return score_depths_many(
            predictions, [g.heads for g in golds], punct=[g.punct for g in golds]
        )

    def score(
        self, predictions: Sequence[Prediction], golds: Sequence[Gold], spec: ProbeSpec
    ) -> list[dict[str, float]]:
        return [
            {
                "root_acc": float(s.root_correct),
                "depth_spearman": s.depth_spearman,
                "depth_acc": s.depth_correct / s.depth_total if s.depth_total else float("nan"),
            }
            for s in self._scores(predictions, golds)
        ]

    def aggregate(
        self, predictions: Sequence[Prediction], golds: Sequence[Gold], spec: ProbeSpec
    ) -> dict[str, float]:
        return aggregate_depth(self._scores(predictions, golds))


# ---------------------------------------------------------------- classifiers
def _masked_log_softmax(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return scores.masked_fill(~mask, float("-inf")).log_softmax(dim=-1)


@PROBE_TASKS.register("pos", help="part-of-speech tagging probe (UPOS or XPOS)")
class PosTask(ProbeTask):
    """Tag logits per word, cross-entropy; labels are the tags seen in training."""

    name = "pos"
    metric_names = ("pos_acc",)
    primary = "pos_acc"
    columns = metric_names
    needs = ("upos",)

    def prepare(self, spec: ProbeSpec, golds: Sequence[Gold]) -> ProbeSpec:
        if spec.tagset not in ("upos", "xpos"):
            raise ConfigError(f"unknown tag set {spec.tagset!r} (known: upos, xpos)")
        if spec.labels:
            return spec
        tags = sorted({t for g in golds for t in g.tags(spec.tagset)})
        if not tags or tags == ["_"]:
            raise ConfigError(f"the training treebanks have no {spec.tagset.upper()} tags")
        return replace(spec, labels=tuple(tags))

    def build(self, spec: ProbeSpec) -> nn.Module:
        if not spec.labels:
            raise ConfigError("the pos probe needs its tag set (labels)")
        return spec.net(len(spec.labels), bias=True)

    def tag_ids(self, golds: Sequence[Gold], spec: ProbeSpec, width: int) -> NDArray[np.int64]:
        """Gold tag ids (b, width); -100 on padding and for tags unseen in training."""
        index = {t: i for i, t in enumerate(spec.labels)}
        out = np.full((len(golds), width), -100, dtype=np.int64)
        for i, g in enumerate(golds):
            out[i, : len(g)] = [index.get(t, -100) for t in g.tags(spec.tagset)]
        return out

    def loss(
        self, net: nn.Module, batch: PaddedBatch, golds: Sequence[Gold], spec: ProbeSpec
    ) -> torch.Tensor:
        import torch
        from torch.nn import functional

        _check_lengths(batch, golds)
        logits = net(batch.x)
        gold = torch.from_numpy(self.tag_ids(golds, spec, logits.shape[1])).to(logits.device)
        return functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), gold.reshape(-1), ignore_index=-100
        )

    def predict(self, net: nn.Module, batch: PaddedBatch, spec: ProbeSpec) -> list[Prediction]:
        ids = net(batch.x).argmax(-1).detach().cpu().numpy()
        return [ids[i, :n] for i, n in enumerate(batch.lengths.tolist())]

    def score(
        self, predictions: Sequence[Prediction], golds: Sequence[Gold], spec: ProbeSpec
    ) -> list[dict[str, float]]:
        out = []
        for p, g in zip(predictions, golds, strict=True):
            tags = [spec.labels[int(i)] for i in p]
            out.append({"pos_acc": score_pos(tags, g.tags(spec.tagset)).accuracy})
        return out

    def aggregate(
        self, predictions: Sequence[Prediction], golds: Sequence[Gold], spec: ProbeSpec
    ) -> dict[str, float]:
        acc = PosMetrics()
        for p, g in zip(predictions, golds, strict=True):
            acc.add([spec.labels[int(i)] for i in p], g.tags(spec.tagset))
        return acc.result()


@PROBE_TASKS.register("root", help="root identification: a score per word, softmax over words")
class RootTask(ProbeTask):
    """One score per word; softmax over the sentence; cross-entropy against the root."""

    name = "root"
    metric_names = ("root_acc",)
    primary = "root_acc"
    columns = metric_names

    def build(self, spec: ProbeSpec) -> nn.Module:
        return spec.net(1, bias=True)

    def log_probs(self, net: nn.Module, batch: PaddedBatch) -> torch.Tensor:
        """Log-probability of each word being the root, (b, n); -inf on padding."""
        return _masked_log_softmax(net(batch.x).squeeze(-1), batch.mask)

    def loss(
        self, net: nn.Module, batch: PaddedBatch, golds: Sequence[Gold], spec: ProbeSpec
    ) -> torch.Tensor:
        import torch

        _check_lengths(batch, golds)
        logp = self.log_probs(net, batch)
        roots = torch.tensor([g.root for g in golds], dtype=torch.int64, device=logp.device)
        return -logp.gather(1, roots[:, None]).mean()

    def predict(self, net: nn.Module, batch: PaddedBatch, spec: ProbeSpec) -> list[Prediction]:
        p = self.log_probs(net, batch).exp().detach().cpu().numpy()
        return [p[i, :n] for i, n in enumerate(batch.lengths.tolist())]

    def score(
        self, predictions: Sequence[Prediction], golds: Sequence[Gold], spec: ProbeSpec
    ) -> list[dict[str, float]]:
        return [
            {"root_acc": float(int(np.argmax(p)) == g.root), "root_prob": float(p[g.root])}
            for p, g in zip(predictions, golds, strict=True)
        ]

    def aggregate(
        self, predictions: Sequence[Prediction], golds: Sequence[Gold], spec: ProbeSpec
    ) -> dict[str, float]:
        acc = RootMetrics()
        acc.add_batch([int(np.argmax(p)) for p in predictions], [g.heads for g in golds])
        return acc.result()


@PROBE_TASKS.register("tree-depth", help="depth of the whole tree, classified (La Malfa et al.)")
class TreeDepthTask(ProbeTask):
    """Sentence-level classification of the tree's largest depth (see module doc)."""

    name = "tree-depth"
    metric_names = ("tree_depth_acc", "tree_depth_mae")
    primary = "tree_depth_acc"
    lower_is_better = frozenset({"tree_depth_mae"})
    columns = metric_names

    def prepare(self, spec: ProbeSpec, golds: Sequence[Gold]) -> ProbeSpec:
        if spec.labels:
            return spec
        deepest = max((g.max_depth for g in golds), default=0)
        k = min(deepest + 1, MAX_TREE_DEPTH_CLASSES)
        return replace(spec, labels=tuple(str(i) for i in range(k)))

    def build(self, spec: ProbeSpec) -> nn.Module:
        if not spec.labels:
            raise ConfigError("the tree-depth probe needs its classes (labels)")
        return spec.net(len(spec.labels), bias=True)

    def logits(self, net: nn.Module, batch: PaddedBatch) -> torch.Tensor:
        """Class logits of each sentence (b, classes): word logits averaged over words."""
        word = net(batch.x) * batch.mask[:, :, None]
        return word.sum(1) / batch.lengths[:, None].to(word.dtype)

    def classes(self, golds: Sequence[Gold], spec: ProbeSpec) -> NDArray[np.int64]:
        """Gold class of each sentence: its tree depth, capped at the last class."""
        last = len(spec.labels) - 1
        return np.fromiter((min(g.max_depth, last) for g in golds), dtype=np.int64)

    def loss(
        self, net: nn.Module, batch: PaddedBatch, golds: Sequence[Gold], spec: ProbeSpec
    ) -> torch.Tensor:
        import torch
        from torch.nn import functional

        _check_lengths(batch, golds)
        logits = self.logits(net, batch)
        gold = torch.from_numpy(self.classes(golds, spec)).to(logits.device)
        return functional.cross_entropy(logits, gold)

    def predict(self, net: nn.Module, batch: PaddedBatch, spec: ProbeSpec) -> list[Prediction]:
        p = self.logits(net, batch).softmax(-1).detach().cpu().numpy()
        return list(p)

    def score(
        self, predictions: Sequence[Prediction], golds: Sequence[Gold], spec: ProbeSpec
    ) -> list[dict[str, float]]:
        gold = self.classes(golds, spec)
        out = []
        for p, c in zip(predictions, gold, strict=True):
            k = int(np.argmax(p))
            out.append({"tree_depth_acc": float(k == c), "tree_depth_mae": float(abs(k - c))})
        return out

    def aggregate(
        self, predictions: Sequence[Prediction], golds: Sequence[Gold], spec: ProbeSpec
    ) -> dict[str, float]:
        per = self.score(predictions, golds, spec)
        if not per:
            return {"tree_depth_acc": float("nan"), "tree_depth_mae": float("nan")}
        return {
            "tree_depth_acc": float(np.mean([s["tree_depth_acc"] for s in per])),
            "tree_depth_mae": float(np.mean([s["tree_depth_mae"] for s in per])),
        }
