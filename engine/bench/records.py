"""What ``brittle bench`` measures: one immutable record per stage, and the report.

The JSON form is the documented schema::

    {"stages": {NAME: {"throughput", "unit", "reference", "reference_throughput",
                       "ratio", "peak_rss_mb", "kernel_s", "minor_faults", "detail"}},
     "machine": {"cores", "gpu", "versions": {...}}}

``ratio`` is ``throughput / reference_throughput`` (higher is better) when the stage
has a reference, else ``null``. Times are wall-clock on the machine named in
``machine``; every ratio compares two measurements taken in the same run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from brittle.engine.bench.measure import KernelUse
from brittle.engine.core.json_types import JSONObject

__all__ = ["BenchReport", "Machine", "StageResult", "with_kernel_use"]


@dataclass(frozen=True, slots=True)
class StageResult:
    """One stage's measurement.

    Attributes:
        name: the stage's registered name (``tree_edit_distance``, ``end_to_end``...).
        throughput: items per second (or seconds, for a stage whose unit says so).
        unit: what ``throughput`` counts (``pairs/s``, ``candidates/s``, ``s``).
        reference: what the stage is compared with (``None``: no reference).
        reference_throughput: the reference's figure, in the same unit.
        peak_rss_mb: the process's largest resident set size while the stage ran, MiB.
        detail: one line on the workload (sizes, model, layers).
        kernel_s: CPU seconds this process spent in the kernel over the whole stage,
            its reference runs included (on the stage's first row; ``None`` on the
            others and when not measured).
        minor_faults: minor page faults of this process over the whole stage (as
            ``kernel_s``): each is a page touched for the first time since it was
            mapped, so they count memory handed back and taken again.
    """

    name: str
    throughput: float
    unit: str
    reference: str | None = None
    reference_throughput: float | None = None
    peak_rss_mb: float = 0.0
    detail: str = ""
    kernel_s: float | None = None
    minor_faults: int | None = None

    @property
    def figure(self) -> str:
        """The throughput as the table writes it (``935 candidates/s``, ``3.20 s``)."""
        return _rate(self.throughput, self.unit)

    @property
    def ratio(self) -> float | None:
        """``throughput / reference_throughput``, or ``None`` without a reference."""
        if self.reference_throughput is None or self.reference_throughput <= 0:
            return None
        return self.throughput / self.reference_throughput

    def to_dict(self) -> JSONObject:
        """The stage's JSON object (see the module docstring)."""
        return {
            "throughput": _finite(self.throughput),
            "unit": self.unit,
            "reference": self.reference,
            "reference_throughput": _finite(self.reference_throughput),
            "ratio": _finite(self.ratio),
            "peak_rss_mb": round(self.peak_rss_mb, 1),
            "kernel_s": None if self.kernel_s is None else round(self.kernel_s, 2),
            "minor_faults": self.minor_faults,
            "detail": self.detail,
        }

    @classmethod
    def from_dict(cls, name: str, data: JSONObject) -> StageResult:
        """The stage ``name`` as :meth:`to_dict` wrote it (``ratio`` is derived, so it is
        not read; figures are the JSON's six significant digits)."""
        return cls(
            name=name,
            throughput=_float(data["throughput"]),
            unit=str(data["unit"]),
            reference=None if data["reference"] is None else str(data["reference"]),
            reference_throughput=_optional_float(data["reference_throughput"]),
            peak_rss_mb=_float(data["peak_rss_mb"]),
            detail=str(data["detail"]),
            kernel_s=_optional_float(data["kernel_s"]),
            minor_faults=None if data["minor_faults"] is None else _int(data["minor_faults"]),
        )


def with_kernel_use(results: tuple[StageResult, ...], used: KernelUse) -> tuple[StageResult, ...]:
    """A stage's rows with ``used`` (the whole stage's kernel time and page faults) on
    the first, unless the stage measured its own (one run in a fresh process does)."""
    if not results or results[0].kernel_s is not None:
        return results
    first = replace(results[0], kernel_s=used.kernel_s, minor_faults=used.minor_faults)
    return (first, *results[1:])


@dataclass(frozen=True, slots=True)
class Machine:
    """Where the run happened: logical cores, GPU (``None``: no CUDA device) and the
    versions of the libraries the stages use."""

    cores: int
    gpu: str | None
    versions: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> JSONObject:
        return {"cores": self.cores, "gpu": self.gpu, "versions": dict(self.versions)}

    @classmethod
    def from_dict(cls, data: JSONObject) -> Machine:
        """The machine as :meth:`to_dict` wrote it."""
        versions = data["versions"]
        if not isinstance(versions, dict):
            raise TypeError("machine.versions is not an object")
        gpu = data["gpu"]
        return cls(
            cores=_int(data["cores"]),
            gpu=None if gpu is None else str(gpu),
            versions={str(k): str(v) for k, v in versions.items()},
        )


@dataclass(frozen=True, slots=True)
class BenchReport:
    """Every stage's result, in run order, and the machine."""

    stages: tuple[StageResult, ...]
    machine: Machine
    notes: tuple[str, ...] = ()

    def to_dict(self) -> JSONObject:
        """The report's JSON object (see the module docstring)."""
        out: JSONObject = {
            "stages": {s.name: s.to_dict() for s in self.stages},
            "machine": self.machine.to_dict(),
        }
        if self.notes:
            out["notes"] = list(self.notes)
        return out

    @classmethod
    def from_dict(cls, data: JSONObject) -> BenchReport:
        """The report :meth:`to_dict` wrote (``brittle bench --json``), to render its
        table again without measuring.

        Raises:
            KeyError, TypeError, ValueError: ``data`` is not such an object.
        """
        stages, machine, notes = data["stages"], data["machine"], data.get("notes", [])
        if not isinstance(stages, dict) or not isinstance(machine, dict):
            raise TypeError("a bench report has objects 'stages' and 'machine'")
        if not isinstance(notes, list):
            raise TypeError("a bench report's notes are a list")
        rows = []
        for name, stage in stages.items():
            if not isinstance(stage, dict):
                raise TypeError(f"stage {name!r} is not an object")
            rows.append(StageResult.from_dict(name, stage))
        return cls(tuple(rows), Machine.from_dict(machine), tuple(str(n) for n in notes))

    def markdown(self) -> str:
        """A Markdown table of the stages, then the machine and any notes."""
        lines = [
            "| stage | throughput | reference | reference throughput | ratio | peak RSS (MB) "
            "| kernel s | page faults |",
            "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        for s in self.stages:
            ref = s.reference or "—"
            ref_rate = (
                "—" if s.reference_throughput is None else _rate(s.reference_throughput, s.unit)
            )
            ratio = "—" if s.ratio is None else f"{s.ratio:,.2f}x"
            kernel = "—" if s.kernel_s is None else f"{s.kernel_s:.2f}"
            faults = "—" if s.minor_faults is None else f"{s.minor_faults:,}"
            lines.append(
                f"| {s.name} | {s.figure} | {ref} | {ref_rate} | {ratio} "
                f"| {s.peak_rss_mb:,.0f} | {kernel} | {faults} |"
            )
        m = self.machine
        versions = ", ".join(f"{k} {v}" for k, v in sorted(m.versions.items()))
        lines += ["", f"{m.cores} cores, GPU: {m.gpu or 'none'}; {versions}."]
        lines += [f"{s.name}: {s.detail}" for s in self.stages if s.detail]
        lines += list(self.notes)
        return "\n".join(lines)


def _rate(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value:.2f} s"
    return f"{value:,.3g} {unit}" if value < 100 else f"{value:,.0f} {unit}"


def _finite(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return float(f"{value:.6g}")


def _float(value: object) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise TypeError(f"expected a number, got {value!r}")
    return float(value)


def _optional_float(value: object) -> float | None:
    return None if value is None else _float(value)


def _int(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"expected an integer, got {value!r}")
    return value
