"""The attack: for each sentence, the syntax-preserving perturbation that most damages
the probes, streamed to ``results.jsonl`` and rendered into reports.

In parts, each in its own module:

- :mod:`~brittle.engine.attack.config`: :class:`AttackConfig`, what decides the
  results, checked against the registries before anything loads;
- :mod:`~brittle.engine.attack.assembly`: :func:`build_components`, the generator,
  strategy, constraints and probes, resolved by name;
- :mod:`~brittle.engine.attack.sentence_search`: :class:`SentenceSearch`, one
  sentence's search as a job of the lock-step rounds, and the services that answer its
  requests;
- :mod:`~brittle.engine.attack.run`: :func:`run_attack`, the run loop with the writer
  and resume, and :func:`rerender` for ``brittle report``.
"""

from brittle.engine.attack.assembly import AttackComponents, build_components, build_generator
from brittle.engine.attack.config import AttackConfig, attack_config
from brittle.engine.attack.run import ADVERSARIAL, Progress, check_out_dir, rerender, run_attack
from brittle.engine.attack.sentence_search import RoundServices, SentenceSearch

__all__ = [
    "ADVERSARIAL",
    "AttackComponents",
    "AttackConfig",
    "Progress",
    "RoundServices",
    "SentenceSearch",
    "attack_config",
    "build_components",
    "build_generator",
    "check_out_dir",
    "rerender",
    "run_attack",
]
