"""A trained probe: its task, network and the representation it reads; saved as a directory.

A probe directory holds ``weights.pt`` (the network's ``state_dict``) and ``probe.json``
(spec, representation key, backend options, training data, dev metrics, seed, package
versions and, for a probe trained with ``--standardize``, the mean and standard deviation
of every input dimension: :class:`~brittle.scorers.feature_scaling.Standardizer`). It
is written into a temporary sibling directory and renamed into place, so a reader never
sees half a probe.

The API is batched: :meth:`Probe.predict` turns the word vectors of many sentences
(:class:`~brittle.scorers.representations.FlatVectors`; :meth:`Probe.predict_reps` for
a backend's :class:`~brittle.scorers.representations.FlatReps`) into predictions in
padded batches; :meth:`Probe.score_predictions` gives per-sentence metric values against
gold annotations (:class:`~brittle.scorers.probe_gold.Gold`; for an attack, those of
the original sentence) and :meth:`Probe.aggregate` the corpus metrics.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle  # only for its error type: weights load through torch's safe loader
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from brittle.engine.core.atomic import atomic_directory
from brittle.engine.core.errors import ConfigError, ResourceMissingError
from brittle.engine.core.json_types import JSONValue
from brittle.engine.core.versions import versions
from brittle.scorers.batching import length_batches
from brittle.scorers.feature_scaling import Standardizer
from brittle.scorers.probe_gold import Gold
from brittle.scorers.probe_tasks import ProbeSpec, ProbeTask, task_for
from brittle.scorers.representations import BackendOptions, RepresentationKey

if TYPE_CHECKING:
    from torch import nn

    from brittle.scorers.probe_tasks import Prediction
    from brittle.scorers.representations import FlatReps, FlatVectors

__all__ = ["FORMAT_VERSION", "Probe", "package_versions"]

#: Version of the probe directory layout: 1, or 2 for a probe that standardises its
#: input (``probe.json`` holds ``standardize``), which an older brittle, blind to the
#: key, refuses instead of reading the raw vectors.
FORMAT_VERSION = 2
WEIGHTS = "weights.pt"
METADATA = "probe.json"


def package_versions() -> dict[str, str]:
    """Versions of Python and the packages a probe's numbers depend on."""
    return versions(
        ("brittle", "torch", "transformers", "numpy", "gensim"), python=True, missing="absent"
    )


class Probe:
    """A probe bound to one representation.

    Args:
        spec: hyper-parameters (task, architecture, rank, labels).
        key: the representation it was trained on.
        net: the torch network (built from ``spec`` when ``None``).
        backend: options that reopen the backend (``RepresentationBackend.describe()``).
        info: everything else recorded at training time (data, metrics, seed...).
        scaler: per-dimension standardisation applied to every vector the probe reads
            (``None``: the vectors as the representation gives them).
    """

    def __init__(
        self,
        spec: ProbeSpec,
        key: RepresentationKey,
        *,
        net: nn.Module | None = None,
        backend: Mapping[str, str | int | bool | None] | None = None,
        info: Mapping[str, object] | None = None,
        scaler: Standardizer | None = None,
    ) -> None:
        if scaler is not None and scaler.dim != spec.dim:
            raise ConfigError(
                f"a standardisation of {scaler.dim} dimensions for a probe reading {spec.dim}"
            )
        self.spec = spec
        self.scaler = scaler
        self.key = key
        self.task: ProbeTask = task_for(spec.task)
        self.net = net if net is not None else self.task.build(spec)
        self.net.eval()
        self.backend: BackendOptions = dict(backend or {"backend": key.backend, "model": key.model})
        self.info: dict[str, object] = dict(info or {})
        self.device = "cpu"

    @property
    def name(self) -> str:
        """``task/arch`` with the representation, for tables."""
        return f"{self.spec.task} ({self.spec.arch}) on {self.key.describe()}"

    # ------------------------------------------------------------------ checks
    def check_representation(self, key: RepresentationKey) -> None:
        """Raise :class:`ConfigError` unless ``key`` is the representation of this probe."""
        self._mismatch(self.key, key, self.spec.task)

    def _check_dim(self, dim: int) -> None:
        if dim != self.spec.dim:
            raise ConfigError(
                f"word vectors have {dim} dimensions but the probe reads {self.spec.dim} "
                f"({self.key.describe()})"
            )

    def to(self, device: str) -> Probe:
        """Move the network to ``device`` (returns self)."""
        self.net.to(device)
        self.device = device
        return self

    # ------------------------------------------------------------------ predict
    def predict(self, words: FlatVectors, *, batch_size: int = 256) -> list[Prediction]:
        """Predictions for the word vectors of many sentences, in padded batches.

        Sentences are batched longest first, each batch of similar lengths
        (:func:`~brittle.scorers.batching.length_batches`), and the predictions put
        back in order.

        Args:
            words: vectors (total_words, dim) and offsets (n_sentences + 1,) of the
                sentences (:meth:`FlatVectors.stack` builds it from one array per
                sentence).
            batch_size: sentences per padded batch.

        Returns:
            One prediction per sentence: distances (n, n), depths (n,), tag ids (n,),
            root probabilities (n,) or tree-depth class probabilities (classes,).
        """
        return self._predict_padded(self._scaled(words), self.net, batch_size)

    def _scaled(self, words: FlatVectors) -> FlatVectors:
        """``words`` checked against the probe's dimension and scaled as in training."""
        if words.vectors.ndim != 2:
            shape = words.vectors.shape
            raise ConfigError(f"word vectors must be (words, dim), got shape {shape}")
        self._check_dim(int(words.vectors.shape[1]))
        return words if self.scaler is None else self.scaler.apply(words)

    @property
    def affine(self) -> bool:
        """Whether the network maps each word's vector to its outputs by one affine map
        (a ``linear`` probe, its feature scaling included): the outputs of
        ``v(a) + v(b) - v(c)`` are then ``o(a) + o(b) - o(c)``, so sums of vectors can be
        predicted from their parts' :meth:`outputs` (:meth:`predict_outputs`)."""
        return self.spec.arch == "linear"

    def outputs(self, words: FlatVectors) -> FlatVectors:
        """The network's outputs per word, float32 (total_words, out), from the word
        vectors (total_words, dim) as :meth:`predict` takes them (scaled first)."""
        import torch

        # deferred: as in the module's other uses of the representations' records
        from brittle.scorers.representations import FlatVectors

        words = self._scaled(words)
        with torch.inference_mode():
            x = torch.from_numpy(np.ascontiguousarray(words.vectors, dtype=np.float32))
            y = self.net(x.to(self.device)).float().cpu().numpy()
        return FlatVectors(y, words.offsets)

    def predict_outputs(self, outputs: FlatVectors, *, batch_size: int = 256) -> list[Prediction]:
        """:meth:`predict` from the network's outputs per word (total_words, out): an
        affine probe's :meth:`outputs`, or sums of them. Every task's prediction
        depends on a batch only through the network's outputs and the batch's mask."""
        import torch

        return self._predict_padded(outputs, torch.nn.Identity(), batch_size)

    def _predict_padded(
        self, words: FlatVectors, net: nn.Module, batch_size: int
    ) -> list[Prediction]:
        """The task's predictions through ``net`` on ``words`` (already scaled), in
        padded batches of similar lengths, in input order."""
        import torch

        # deferred: loads torch
        from brittle.scorers.probe_nets import pad_flat

        n = len(words)
        results: list[Prediction | None] = [None] * n
        with torch.inference_mode():
            for index in length_batches(np.diff(words.offsets), batch_size):
                batch = pad_flat(words, index).to(self.device)
                for i, pred in zip(index, self.task.predict(net, batch, self.spec), strict=True):
                    results[int(i)] = pred
        out: list[Prediction] = []
        for r in results:
            assert r is not None
            out.append(r)
        return out

    def predict_reps(self, reps: FlatReps, *, layer: int | None = None) -> list[Prediction]:
        """:meth:`predict` on one layer of a backend's :class:`FlatReps`."""
        return self.predict(reps.flat(layer))

    # ------------------------------------------------------------------ scores
    def score_predictions(
        self, predictions: Sequence[Prediction], golds: Sequence[Gold]
    ) -> list[dict[str, float]]:
        """Per-sentence metric values of predictions against ``golds``.

        ``golds[i]`` is the annotation prediction ``i`` is judged against (for an
        attack: the original sentence's). Each dict holds the task's ``metric_names``
        (and any per-sentence extra, such as ``root_prob``).
        """
        return self.task.score(predictions, golds, self.spec)

    def aggregate(
        self, predictions: Sequence[Prediction], golds: Sequence[Gold]
    ) -> dict[str, float]:
        """Corpus metrics (the task's ``metric_names``) of predictions against ``golds``."""
        return self.task.aggregate(predictions, golds, self.spec)

    # ------------------------------------------------------------------ files
    def metadata(self) -> dict[str, object]:
        """Everything ``probe.json`` holds."""
        scaling = {} if self.scaler is None else {"standardize": self.scaler.to_dict()}
        return {
            "format": 1 if self.scaler is None else FORMAT_VERSION,
            "task": self.spec.task,
            "architecture": self.spec.arch,
            "rank": self.spec.rank,
            "model": self.key.model,
            "layer": self.key.layer_from_output if self.key.n_layers else self.key.layer,
            "pooling": self.key.pooling,
            "spec": self.spec.to_dict(),
            "representation": self.key.to_dict(),
            "backend": self.backend,
            **self.info,
            **scaling,
        }

    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write the probe directory atomically (replacing an existing probe there)."""
        import torch

        target = Path(directory)
        if target.exists() and not (target / METADATA).is_file() and any(target.iterdir()):
            raise ConfigError(f"{target} exists and is not a probe directory; pick another --out")
        with atomic_directory(target) as staging:
            state = {k: v.detach().cpu() for k, v in self.net.state_dict().items()}
            torch.save(state, staging / WEIGHTS)
            meta = self.metadata()
            meta.setdefault("saved", time.strftime("%Y-%m-%dT%H:%M:%S%z"))
            (staging / METADATA).write_text(json.dumps(meta, indent=2, default=_json_default))
        return target

    @classmethod
    def load(
        cls,
        directory: str | os.PathLike[str],
        *,
        expect: RepresentationKey | None = None,
    ) -> Probe:
        """Read a probe directory.

        Args:
            directory: written by :meth:`save`.
            expect: the representation the caller will feed; a different model, layer
                or pooling is a :class:`ConfigError`.
        """
        description = describe_probe(directory)
        path, spec, key, meta = (
            description.path,
            description.spec,
            description.key,
            description.meta,
        )
        if expect is not None:
            cls._mismatch(key, expect, spec.task)
        import torch  # deferred: loads torch

        task = task_for(spec.task)
        _check_declared_size(task, spec, path)
        net = task.build(spec)
        try:
            # weights_only: torch's restricted unpickler, which builds tensors and plain
            # containers and refuses every other object, so a crafted file runs no code
            with warnings.catch_warnings():  # a refused file is an error, not a warning
                warnings.simplefilter("ignore")
                state = torch.load(path / WEIGHTS, map_location="cpu", weights_only=True)
            if not isinstance(state, Mapping):  # decoded data, not a declared type
                raise TypeError(f"holds a {type(state).__name__}, not a state_dict")
            net.load_state_dict(state)
        except pickle.UnpicklingError:
            raise ConfigError(
                f"{path / WEIGHTS}: cannot load the probe weights (the file holds Python "
                "objects other than tensors, which brittle never loads: retrain the probe "
                "or get it from someone you trust)"
            ) from None
        except _UNREADABLE as err:
            reason = " ".join(str(err).split())[:200] or type(err).__name__
            raise ConfigError(
                f"{path / WEIGHTS}: cannot load the probe weights ({reason})"
            ) from None
        reserved = {
            "format",
            "task",
            "architecture",
            "rank",
            "model",
            "layer",
            "pooling",
            "spec",
            "representation",
            "backend",
            "standardize",
        }
        info = {k: v for k, v in meta.items() if k not in reserved}
        raw = meta.get("backend")
        backend = (
            {k: v for k, v in raw.items() if v is None or isinstance(v, str | int | bool)}
            if isinstance(raw, dict)
            else None
        )
        scaler = None
        if "standardize" in meta:
            try:
                scaler = Standardizer.from_dict(meta["standardize"], dim=spec.dim)
            except ConfigError as err:
                raise ConfigError(f"{path / METADATA}: {err}") from None
        probe = cls(spec, key, net=net, backend=backend, info=info, scaler=scaler)
        probe.info["path"] = str(path)
        return probe

    @staticmethod
    def _mismatch(key: RepresentationKey, expect: RepresentationKey, task: str) -> None:
        if (key.backend, key.model, key.layer, key.pooling) != (
            expect.backend,
            expect.model,
            expect.layer,
            expect.pooling,
        ):
            raise ConfigError(
                f"this {task} probe was trained on {key.describe()}, not on "
                f"{expect.describe()}: use the same model, layer and pooling "
                "(or train a probe for this one)"
            )


def _check_declared_size(task: ProbeTask, spec: ProbeSpec, path: Path) -> None:
    """Refuse a ``probe.json`` whose network holds more weights than ``weights.pt`` can.

    A description is read from a user's file: its sizes, each bounded on its own, can
    still multiply into a network far too large to allocate (a sentence network has
    ``words * dim * hidden`` input weights). The network is first built on torch's meta
    device, which allocates nothing, and its float32 weights are set against the size
    of the weights file that must hold them.
    """
    import torch  # deferred: loads torch

    with torch.device("meta"):
        declared = sum(p.numel() for p in task.build(spec).parameters())
    size = (path / WEIGHTS).stat().st_size
    if 4 * declared > size:
        raise ConfigError(
            f"{path / WEIGHTS}: cannot load the probe weights ({METADATA} declares a "
            f"{spec.arch} network of {declared:,} weights, more than the file's {size:,} "
            "bytes hold)"
        )


@dataclass(frozen=True)
class ProbeDescription:
    """What a probe directory says about itself, read without loading torch.

    Attributes:
        path: the directory.
        spec: the probe's hyper-parameters (its task among them).
        key: the representation it was trained on (backend, model, layer, pooling).
        meta: the whole ``probe.json``.
    """

    path: Path
    spec: ProbeSpec
    key: RepresentationKey
    meta: dict[str, JSONValue]

    def sha256(self) -> str:
        """Hash of ``probe.json`` and the weights: which probe exactly a report used."""
        digest = hashlib.sha256()
        for name in (METADATA, WEIGHTS):
            with (self.path / name).open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
        return digest.hexdigest()


def describe_probe(directory: str | os.PathLike[str]) -> ProbeDescription:
    """The description of a probe directory (cheap: no torch, no weights read).

    Raises:
        ResourceMissingError: ``directory`` holds no ``probe.json``.
        ConfigError: ``probe.json`` is not a probe description, was written by a newer
            brittle, or its weights file is missing.
    """
    path = Path(directory)
    meta_path = path / METADATA
    if not meta_path.is_file():
        raise ResourceMissingError(
            f"probe {str(directory)!r}",
            [str(meta_path)],
            "train one with `brittle train-probe ... --out DIR`",
        )
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if not isinstance(meta, dict):  # decoded JSON: any value
            raise TypeError("not a JSON object")
        version = meta.get("format", 0)
        if type(version) is not int:  # bool is an int too
            raise TypeError(f"format {version!r} is not a version number")
        spec = ProbeSpec.from_dict(meta["spec"])
        key = RepresentationKey.from_dict(meta["representation"])
        task_for(spec.task)
    except (KeyError, ValueError, TypeError, OSError, AttributeError, ConfigError) as err:
        raise ConfigError(f"{meta_path}: not a probe description ({err})") from None
    if version > FORMAT_VERSION:
        raise ConfigError(f"{path} was written by a newer brittle (format {version})")
    if not (path / WEIGHTS).is_file():
        raise ConfigError(f"{path} has no {WEIGHTS}: the probe was not saved completely")
    return ProbeDescription(path, spec, key, meta)


#: What reading a damaged ``weights.pt`` raises besides a refused pickle: a file that
#: is not a torch archive, one that is empty or cut short, or tensors that do not fit
#: the network.
_UNREADABLE: tuple[type[Exception], ...] = (
    OSError,
    RuntimeError,
    KeyError,
    ValueError,
    TypeError,
    AttributeError,
    EOFError,
)


def _json_default(obj: object) -> JSONValue:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"cannot write {type(obj).__name__} to JSON")
