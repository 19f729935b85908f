"""``brittle bench``: every stage of the engine beside its reference, in one run.

:mod:`.records` holds the results, :mod:`.measure` the timing and memory helpers,
:mod:`.stages` the registered stages, :mod:`.run` the run that measures them.
"""

from __future__ import annotations

from brittle.engine.bench.records import BenchReport, Machine, StageResult
from brittle.engine.bench.run import BenchConfig, run_bench

__all__ = ["BenchConfig", "BenchReport", "Machine", "StageResult", "run_bench"]
