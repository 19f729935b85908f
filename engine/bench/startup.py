"""The child process of the ``startup`` stage: the demo's attack until its first
candidate is scored.

Run as ``python -c "from brittle.engine.bench.startup import main; main()"``; prints
:data:`MARKER` the moment the first candidate's scores come back, then exits at once.
The parent times the whole process, interpreter start included.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from brittle.search.scoring import Evaluation, Request, TaskEvaluator

__all__ = ["MARKER", "main"]

#: Printed when the first candidate is scored.
MARKER = "brittle-bench: first candidate scored"


class _FirstScore:
    """Evaluator wrapper that prints :data:`MARKER` and ends the process after the
    first model call."""

    def __init__(self, inner: TaskEvaluator) -> None:
        self.inner = inner

    @property
    def tasks(self) -> tuple[str, ...]:
        return self.inner.tasks

    @property
    def primary(self) -> tuple[str, ...]:
        return self.inner.primary

    def evaluate_many(self, requests: Sequence[Request]) -> list[Evaluation]:
        out = self.inner.evaluate_many(requests)
        if any(cands for _, cands, _ in requests):
            print(MARKER, flush=True)
            os._exit(0)  # the measurement ends here; nothing is left to write
        return out

    def evaluate(self, *args: object) -> Evaluation:  # pragma: no cover - unused path
        raise NotImplementedError


def main() -> None:
    """Build the demo's attack and run it until the first candidate is scored."""
    import dataclasses

    # deferred: what the demo's attack loads is what this child process measures
    from brittle.engine.attack import build_components, run_attack
    from brittle.engine.demo import demo_config, prepare_demo, train_demo_probes

    plan = prepare_demo()
    train_demo_probes(plan)
    config = demo_config(plan, limit=1)
    comps = build_components(config)
    timed = dataclasses.replace(comps, evaluator=_FirstScore(comps.evaluator))
    with tempfile.TemporaryDirectory() as tmp:
        run_attack(config, Path(tmp) / "run", components=timed)  # type: ignore[arg-type]
    sys.exit("the attack finished without scoring a candidate")
