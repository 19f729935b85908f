"""The ``brittle bench`` run: read a fixed sample, run the chosen stages, report.

Stages run one after another in one process (models loaded by one stage are not
charged to the next one's timing, but they stay in memory: see the peak RSS note in
:mod:`.measure`). The sample is the first ``sentences`` sentences of the treebank, so
two runs on the same treebank measure the same workload.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from brittle.data import default_treebank_path
from brittle.engine.bench.measure import kernel_use
from brittle.engine.bench.records import BenchReport, Machine, StageResult, with_kernel_use
from brittle.engine.bench.stages import STAGES, BenchContext
from brittle.engine.core.atomic import write_json
from brittle.engine.core.conllu import read_conllu
from brittle.engine.core.errors import ConfigError

__all__ = [
    "DEFAULT_STAGES",
    "BenchConfig",
    "StageListener",
    "machine",
    "run_bench",
    "write_bench_json",
]

#: Stages in the order a full run measures them (cheap kernels first).
DEFAULT_STAGES: tuple[str, ...] = (
    "tree_edit_distance",
    "ted_scaling",
    "hamming",
    "order_metrics",
    "probe_scoring",
    "parsing",
    "syntax_check",
    "representations",
    "length_scaling",
    "generators",
    "end_to_end",
    "workers",
    "grading",
    "anytime",
    "startup",
)

#: Libraries whose versions the report records.
_VERSIONS = ("brittle", "numpy", "numba", "torch", "transformers", "spacy", "nltk", "apted")


@dataclass(frozen=True, slots=True)
class BenchConfig:
    """A bench run.

    Attributes:
        treebank: CoNLL-U path (``None``: the built-in treebank).
        quick: smaller workloads, for a check in under two minutes.
        stages: the stages to run, in order (empty: :data:`DEFAULT_STAGES`).
        sentences: size of the sample (``None``: 100 with ``quick``, else 300).
        end_to_end_sentences: sentences of the end-to-end attack (15 with ``quick``).
        seed: seeds the workloads.
        device: torch device of the model stages (``None``: CUDA when available).
    """

    treebank: str | None = None
    quick: bool = False
    stages: tuple[str, ...] = ()
    sentences: int | None = None
    end_to_end_sentences: int = 60
    seed: int = 0
    device: str | None = None

    def __post_init__(self) -> None:
        for name in self.stage_names:
            STAGES.get(name)  # an unknown stage fails here, with the known ones listed
        if self.sentences is not None and self.sentences < 1:
            raise ConfigError(f"--sentences must be at least 1, got {self.sentences}")
        if self.end_to_end_sentences < 1:
            raise ConfigError(
                f"--end-to-end-sentences must be at least 1, got {self.end_to_end_sentences}"
            )

    @property
    def stage_names(self) -> tuple[str, ...]:
        return self.stages or DEFAULT_STAGES


def machine() -> Machine:
    """Cores, GPU and library versions of this machine."""
    versions: dict[str, str] = {"python": platform.python_version()}
    for name in _VERSIONS:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    gpu: str | None = None
    try:
        import torch

        if torch.cuda.is_available():
            gpu = torch.cuda.get_device_name(0)
    except ImportError:  # pragma: no cover - torch is a dependency
        pass
    return Machine(os.cpu_count() or 1, gpu, versions)


#: Told of each stage before it runs (results ``None``) and after (its results).
StageListener = Callable[[str, tuple[StageResult, ...] | None], None]


def run_bench(config: BenchConfig, *, on_stage: StageListener | None = None) -> BenchReport:
    """Measure every stage of ``config`` on its sample.

    ``on_stage(name, None)`` is called before a stage, ``on_stage(name, results)`` after.

    Raises:
        BrittleInputError: the treebank cannot be read.
        ConfigError: an unknown stage.
    """
    path = Path(config.treebank) if config.treebank else default_treebank_path()
    size = config.sentences or (100 if config.quick else 300)
    sentences = tuple(read_conllu(path)[:size])
    if not sentences:
        raise ConfigError(f"{path}: no sentences to measure")
    ctx = BenchContext(
        sentences=sentences,
        treebank=str(path),
        quick=config.quick,
        seed=config.seed,
        device=config.device,
        end_to_end_sentences=config.end_to_end_sentences,
    )
    results: list[StageResult] = []
    for name in config.stage_names:
        if on_stage is not None:
            on_stage(name, None)
        before = kernel_use()
        found = with_kernel_use(STAGES.get(name)(ctx), kernel_use() - before)
        results.extend(found)
        if on_stage is not None:
            on_stage(name, found)
    notes = () if machine().gpu else ("No CUDA device: every stage ran on the CPU.",)
    return BenchReport(tuple(results), machine(), notes)


def write_bench_json(report: BenchReport, path: str | os.PathLike[str]) -> None:
    """``report`` as indented JSON with a final newline, written atomically
    (``-``: standard output).

    Raises:
        OutputError: ``path`` cannot be written.
    """
    write_json(path, report.to_dict())
