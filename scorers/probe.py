"""A trained probe: its task, network and the representation it reads; saved as a directory.

A probe directory holds ``weights.pt`` (the network's ``state_dict``) and ``probe.json``
(spec, representation key, backend options, training data, dev metrics, seed, package
versions). It is written into a temporary sibling directory and renamed into place, so
a reader never sees half a probe.

The batched API is what attacks use: :meth:`Probe.predict` (or :meth:`predict_flat`)
turns the word vectors of many sentences into predictions in padded batches, and
:meth:`Probe.score` gives per-sentence metric values against the gold annotations of
the original sentence (:class:`~brittle.scorers.probe_gold.Gold`).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from brittle.engine.errors import ConfigError, ResourceMissingError
from brittle.scorers.probe_gold import Gold
from brittle.scorers.probe_tasks import ProbeSpec, ProbeTask, task_for
from brittle.scorers.representations import RepresentationKey

if TYPE_CHECKING:
    from numpy.typing import NDArray
    from torch import nn

    from brittle.scorers.representations import FlatReps

__all__ = ["FORMAT_VERSION", "Probe", "load_probe", "package_versions"]

#: Version of the probe directory layout.
FORMAT_VERSION = 1
WEIGHTS = "weights.pt"
METADATA = "probe.json"


def package_versions() -> dict[str, str]:
    """Versions of Python and the packages a probe's numbers depend on."""
    import platform
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for dist in ("brittle", "torch", "transformers", "numpy", "gensim"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "absent"
    return out


class Probe:
    """A probe bound to one representation.

    Args:
        spec: hyper-parameters (task, architecture, rank, labels).
        key: the representation it was trained on.
        net: the torch network (built from ``spec`` when ``None``).
        backend: options that reopen the backend (``RepresentationBackend.describe()``).
        info: everything else recorded at training time (data, metrics, seed...).
    """

    def __init__(
        self,
        spec: ProbeSpec,
        key: RepresentationKey,
        *,
        net: nn.Module | None = None,
        backend: Mapping[str, Any] | None = None,
        info: Mapping[str, Any] | None = None,
    ) -> None:
        self.spec = spec
        self.key = key
        self.task: ProbeTask = task_for(spec.task)
        self.net = net if net is not None else self.task.build(spec)
        self.net.eval()
        self.backend = dict(backend or {"backend": key.backend, "model": key.model})
        self.info = dict(info or {})
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
    def predict(
        self,
        reps: Sequence[NDArray[np.float32]],
        *,
        batch_size: int = 256,
    ) -> list[NDArray[Any]]:
        """Predictions for the word vectors of many sentences.

        Args:
            reps: one float32 array (n_i, dim) per sentence.
            batch_size: sentences per padded batch.

        Returns:
            One prediction per sentence: distances (n, n), depths (n,), tag ids (n,),
            root probabilities (n,) or tree-depth class probabilities (classes,).
        """
        if not reps:
            return []
        lengths = np.fromiter((r.shape[0] for r in reps), dtype=np.int64, count=len(reps))
        offsets = np.zeros(len(reps) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        flat = np.concatenate([np.asarray(r, dtype=np.float32) for r in reps], axis=0)
        return self.predict_flat(flat, offsets, batch_size=batch_size)

    def predict_flat(
        self,
        vectors: NDArray[np.float32],
        offsets: NDArray[np.int64],
        *,
        batch_size: int = 256,
    ) -> list[NDArray[Any]]:
        """:meth:`predict` for sentences stored flat: vectors (total, dim), offsets (b + 1,)."""
        import torch

        from brittle.scorers.probe_nets import pad_flat

        if vectors.ndim != 2:
            raise ConfigError(f"word vectors must be (words, dim), got shape {vectors.shape}")
        self._check_dim(int(vectors.shape[1]))
        n = int(offsets.shape[0]) - 1
        out: list[NDArray[Any]] = []
        # sort by length so padding stays small, then restore the order
        lengths = np.diff(offsets)
        order = np.argsort(-lengths, kind="stable")
        results: list[NDArray[Any] | None] = [None] * n
        with torch.inference_mode():
            for start in range(0, n, batch_size):
                index = order[start : start + batch_size]
                batch = pad_flat(vectors, offsets, index).to(self.device)
                for i, pred in zip(
                    index, self.task.predict(self.net, batch, self.spec), strict=True
                ):
                    results[int(i)] = pred
        for r in results:
            assert r is not None
            out.append(r)
        return out

    def predict_reps(self, reps: FlatReps, *, layer: int | None = None) -> list[NDArray[Any]]:
        """:meth:`predict` on a backend's :class:`FlatReps` (one layer of it)."""
        return self.predict_flat(reps.layer(layer), reps.offsets)

    # ------------------------------------------------------------------ scores
    def score(
        self, reps: Sequence[NDArray[np.float32]], golds: Sequence[Gold]
    ) -> list[dict[str, float]]:
        """Per-sentence metric values of the predictions against ``golds``.

        ``golds[i]`` is the annotation the prediction of ``reps[i]`` is judged against
        (for an attack: the original sentence's).
        """
        return self.task.score(self.predict(reps), golds, self.spec)

    def score_reps(
        self, reps: FlatReps, golds: Sequence[Gold], *, layer: int | None = None
    ) -> list[dict[str, float]]:
        """:meth:`score` on a backend's :class:`FlatReps` (one layer of it)."""
        return self.task.score(self.predict_reps(reps, layer=layer), golds, self.spec)

    def score_predictions(
        self, predictions: Sequence[NDArray[Any]], golds: Sequence[Gold]
    ) -> list[dict[str, float]]:
        """Per-sentence metric values of predictions already made."""
        return self.task.score(predictions, golds, self.spec)

    def evaluate(
        self, reps: Sequence[NDArray[np.float32]], golds: Sequence[Gold]
    ) -> dict[str, float]:
        """Corpus metrics of the probe on ``reps`` against ``golds``."""
        return self.task.aggregate(self.predict(reps), golds, self.spec)

    def aggregate(
        self, predictions: Sequence[NDArray[Any]], golds: Sequence[Gold]
    ) -> dict[str, float]:
        """Corpus metrics of predictions already made."""
        return self.task.aggregate(predictions, golds, self.spec)

    # ------------------------------------------------------------------ files
    def metadata(self) -> dict[str, Any]:
        """Everything ``probe.json`` holds."""
        return {
            "format": FORMAT_VERSION,
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
        }

    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write the probe directory atomically (replacing an existing probe there)."""
        import torch

        target = Path(directory)
        if target.exists() and not (target / METADATA).is_file() and any(target.iterdir()):
            raise ConfigError(f"{target} exists and is not a probe directory; pick another --out")
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
        try:
            state = {k: v.detach().cpu() for k, v in self.net.state_dict().items()}
            torch.save(state, staging / WEIGHTS)
            meta = self.metadata()
            meta.setdefault("saved", time.strftime("%Y-%m-%dT%H:%M:%S%z"))
            (staging / METADATA).write_text(json.dumps(meta, indent=2, default=_json_default))
            staging.chmod(0o755)
            if target.exists():
                trash = target.with_name(f".{target.name}-old-{os.getpid()}")
                os.rename(target, trash)
                os.rename(staging, target)
                shutil.rmtree(trash, ignore_errors=True)
            else:
                os.rename(staging, target)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
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
        import torch

        path = Path(directory)
        meta_path = path / METADATA
        if not meta_path.is_file():
            raise ResourceMissingError(
                f"probe {str(directory)!r}",
                [str(meta_path)],
                "train one with `brittle train-probe ... --out DIR`",
            )
        try:
            meta = json.loads(meta_path.read_text())
            spec = ProbeSpec.from_dict(meta["spec"])
            key = RepresentationKey.from_dict(meta["representation"])
        except (KeyError, ValueError, TypeError) as err:
            raise ConfigError(f"{meta_path}: not a probe description ({err})") from err
        if int(meta.get("format", 0)) > FORMAT_VERSION:
            raise ConfigError(f"{path} was written by a newer brittle (format {meta['format']})")
        if expect is not None:
            cls._mismatch(key, expect, spec.task)
        task = task_for(spec.task)
        net = task.build(spec)
        try:
            state = torch.load(path / WEIGHTS, map_location="cpu", weights_only=True)
            net.load_state_dict(state)
        except (OSError, RuntimeError, KeyError) as err:
            raise ConfigError(f"{path / WEIGHTS}: cannot load the probe weights ({err})") from err
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
        }
        info = {k: v for k, v in meta.items() if k not in reserved}
        probe = cls(spec, key, net=net, backend=meta.get("backend"), info=info)
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


def load_probe(
    directory: str | os.PathLike[str], *, expect: RepresentationKey | None = None
) -> Probe:
    """:meth:`Probe.load`."""
    return Probe.load(directory, expect=expect)


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"cannot write {type(obj).__name__} to JSON")
