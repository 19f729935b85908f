"""Training a probe: Adam, shuffled sentence batches, early stopping on the dev loss.

Deterministic for a seed on CPU: torch's generator is seeded, batches are shuffled by a
numpy generator of the same seed, and torch runs with deterministic algorithms for the
duration of the run. The learning rate is halved when the dev loss stops improving and
training stops after ``patience`` epochs without improvement; the best epoch's weights
are kept. With ``standardize`` the probe trains on vectors standardised per dimension
with the training split's mean and standard deviation, and keeps both
(:class:`~brittle.scorers.feature_scaling.Standardizer`) to apply to whatever it reads.
"""

from __future__ import annotations

import contextlib
import copy
import math
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from brittle.engine.core.errors import ConfigError
from brittle.scorers.feature_scaling import Standardizer
from brittle.scorers.probe import Probe, package_versions
from brittle.scorers.probe_tasks import ProbeSpec, task_for
from brittle.scorers.representations import check_device, pick_device

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from brittle.engine.probes.probe_data import ProbeData
    from brittle.scorers.representations import BackendOptions, RepresentationKey

__all__ = ["EpochLog", "TrainConfig", "TrainResult", "evaluate_data", "train_probe"]


@dataclass(frozen=True, slots=True)
class TrainConfig:
    """Optimisation settings.

    Attributes:
        epochs: most passes over the training data.
        patience: epochs without dev-loss improvement before stopping.
        lr: Adam learning rate.
        batch_size: sentences per step.
        weight_decay: Adam weight decay.
        min_delta: smallest dev-loss decrease that counts as an improvement.
        seed: seeds torch and the batch order.
        device: ``cuda``/``cpu``/``mps``; ``None`` picks ``cuda`` when available.
        standardize: train on (and keep) per-dimension standardised vectors.

    Raises:
        ConfigError: a count below 1, a learning rate that is not positive, a negative
            weight decay, a device this machine does not have.
    """

    epochs: int = 40
    patience: int = 4
    lr: float = 1e-3
    batch_size: int = 32
    weight_decay: float = 0.0
    min_delta: float = 1e-4
    seed: int = 0
    device: str | None = None
    standardize: bool = False

    def __post_init__(self) -> None:
        for option, value in (
            ("--epochs", self.epochs),
            ("--patience", self.patience),
            ("--batch-size", self.batch_size),
        ):
            if value < 1:
                raise ConfigError(f"{option} must be at least 1 (got {value})")
        if not self.lr > 0:  # also NaN
            raise ConfigError(f"--lr (the learning rate) must be positive (got {self.lr:g})")
        if not self.weight_decay >= 0:
            raise ConfigError(f"weight decay must not be negative (got {self.weight_decay:g})")
        if not self.min_delta >= 0:
            raise ConfigError(f"min_delta must not be negative (got {self.min_delta:g})")
        check_device(self.device)

    def to_dict(self) -> dict[str, int | float | bool]:
        """JSON-ready form (``standardize`` only when set, as probes before it wrote)."""
        out: dict[str, int | float | bool] = {
            "epochs": self.epochs,
            "patience": self.patience,
            "lr": self.lr,
            "batch_size": self.batch_size,
            "weight_decay": self.weight_decay,
            "min_delta": self.min_delta,
            "seed": self.seed,
        }
        if self.standardize:
            out["standardize"] = True
        return out


@dataclass(frozen=True, slots=True)
class EpochLog:
    """One epoch: mean training loss, dev loss, learning rate and seconds taken."""

    epoch: int
    train_loss: float
    dev_loss: float
    lr: float
    seconds: float


@dataclass(frozen=True)
class TrainResult:
    """A trained probe and how training went.

    Attributes:
        probe: the probe with the best epoch's weights.
        history: one :class:`EpochLog` per epoch run.
        best_epoch: 1-based epoch whose weights were kept.
        dev_metrics: the task's metrics on the dev data.
        stopped_early: training ended by patience rather than by ``epochs``.
    """

    probe: Probe
    history: tuple[EpochLog, ...]
    best_epoch: int
    dev_metrics: dict[str, float] = field(default_factory=dict)
    stopped_early: bool = False


@contextlib.contextmanager
def _deterministic(seed: int) -> Iterator[None]:
    import torch

    was = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(seed)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(was)


def _batches(n: int, size: int, rng: np.random.Generator | None) -> list[NDArray[np.int64]]:
    """Sentence indices in batches of ``size``, shuffled by ``rng`` (in order if None)."""
    order = rng.permutation(n) if rng is not None else np.arange(n)
    return [order[i : i + size] for i in range(0, n, size)]


def _mean_loss(probe: Probe, data: ProbeData, batch_size: int) -> float:
    """Mean per-sentence loss of ``probe`` on ``data`` (no gradient)."""
    import torch

    # deferred: loads torch
    from brittle.scorers.probe_nets import pad_flat

    total, count = 0.0, 0
    probe.net.eval()
    with torch.no_grad():
        for index in _batches(len(data), max(batch_size, 64), None):
            batch = pad_flat(data, index).to(probe.device)
            golds = [data.golds[int(i)] for i in index]
            loss = probe.task.loss(probe.net, batch, golds, probe.spec)
            total += float(loss) * len(index)
            count += len(index)
    return total / max(count, 1)


def evaluate_data(probe: Probe, data: ProbeData) -> dict[str, float]:
    """Corpus metrics of ``probe`` on ``data`` (the task's ``metric_names``)."""
    return probe.aggregate(probe.predict(data), list(data.golds))


def train_probe(
    spec: ProbeSpec,
    key: RepresentationKey,
    train: ProbeData,
    dev: ProbeData,
    *,
    config: TrainConfig,
    backend: BackendOptions | None = None,
    info: Mapping[str, object] | None = None,
    on_epoch: Callable[[EpochLog], None] | None = None,
    on_step: Callable[[int], None] | None = None,
) -> TrainResult:
    """Train a probe of ``spec`` on ``train``, early-stopping on ``dev``.

    Args:
        spec: task, architecture and sizes; rank and labels are filled from ``train``.
        key: the representation the vectors come from (saved with the probe).
        train: training vectors and gold annotations.
        dev: development vectors and gold annotations.
        config: optimisation settings.
        backend: backend options saved with the probe.
        info: more metadata saved with the probe (training files, versions...).
        on_epoch: called after each epoch.
        on_step: called with the number of sentences of each step.
    """
    import torch

    # deferred: loads torch
    from brittle.scorers.probe_nets import pad_flat

    if len(train) == 0 or len(dev) == 0:
        raise ConfigError("training and dev data must both have sentences")
    if train.dim != spec.dim or dev.dim != spec.dim:
        raise ConfigError(f"vectors have {train.dim}/{dev.dim} dimensions, the spec {spec.dim}")
    task = task_for(spec.task)
    spec = task.prepare(spec, train.golds)
    scaler = Standardizer.fit(train.vectors) if config.standardize else None
    if scaler is not None:  # the loop reads the data itself; predict scales on its own
        train, dev_scaled = scaler.apply(train), scaler.apply(dev)
    else:
        dev_scaled = dev
    device = pick_device(config.device)
    rng = np.random.default_rng(config.seed)
    history: list[EpochLog] = []
    with _deterministic(config.seed):
        probe = Probe(spec, key, backend=backend, info=info, scaler=scaler).to(device)
        optimiser = torch.optim.Adam(
            probe.net.parameters(), lr=config.lr, weight_decay=config.weight_decay
        )
        best_loss = math.inf
        best_state = copy.deepcopy(probe.net.state_dict())
        best_epoch = 0
        bad = 0
        stopped = False
        for epoch in range(1, config.epochs + 1):
            started = time.perf_counter()
            probe.net.train()
            total, count = 0.0, 0
            for index in _batches(len(train), config.batch_size, rng):
                batch = pad_flat(train, index).to(device)
                golds = [train.golds[int(i)] for i in index]
                optimiser.zero_grad(set_to_none=True)
                loss = task.loss(probe.net, batch, golds, spec)
                loss.backward()
                optimiser.step()
                total += float(loss.detach()) * len(index)
                count += len(index)
                if on_step is not None:
                    on_step(len(index))
            dev_loss = _mean_loss(probe, dev_scaled, config.batch_size)
            lr = float(optimiser.param_groups[0]["lr"])
            log = EpochLog(
                epoch, total / max(count, 1), dev_loss, lr, time.perf_counter() - started
            )
            history.append(log)
            if on_epoch is not None:
                on_epoch(log)
            if not math.isfinite(dev_loss):
                raise ConfigError(f"training diverged at epoch {epoch} (dev loss {dev_loss})")
            if dev_loss < best_loss - config.min_delta:
                best_loss, best_epoch, bad = dev_loss, epoch, 0
                best_state = copy.deepcopy(probe.net.state_dict())
            else:
                bad += 1
                for group in optimiser.param_groups:
                    group["lr"] = group["lr"] * 0.5
                if bad >= config.patience:
                    stopped = True
                    break
        probe.net.load_state_dict(best_state)
        probe.net.eval()
        dev_metrics = evaluate_data(probe, dev)
    probe.info.setdefault("versions", package_versions())
    probe.info.update(
        {
            "seed": config.seed,
            "optimisation": config.to_dict(),
            "dev_loss": best_loss,
            "best_epoch": best_epoch,
            "epochs_run": len(history),
            "dev_metrics": dev_metrics,
            "history": [
                {
                    "epoch": h.epoch,
                    "train_loss": h.train_loss,
                    "dev_loss": h.dev_loss,
                    "lr": h.lr,
                    "seconds": round(h.seconds, 3),
                }
                for h in history
            ],
        }
    )
    probe.to("cpu")
    return TrainResult(probe, tuple(history), best_epoch, dev_metrics, stopped)
