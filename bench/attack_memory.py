"""docs/performance.md's attack memory table: the peak memory of one ``attack`` run on
the first 100 sentences of EWT test and on all of them.

``brittle attack en_ewt-ud-test.conllu --probe $P/minilm-5-distance --probe
$P/minilm-5-pos --method copos --search sample -b 20 --budget 2 --no-grade`` (the
demo's probes, trained when missing; coPOS's default constraints), run as a whole
command, once with ``--limit 100`` and once on the whole file, one after the other, the
way bench/perturb_memory.py runs ``perturb``: each command's peak resident memory from
``os.wait4``, its wall time around it, the target a whole-file peak within 10% of the
first 100's, and the first 100 sentences of the whole run's ``adversarial.conllu``
checked to be the shorter run's, byte for byte.

Each run's output and figures are kept under ``--work``; a run with its figures is not
run again. The figures go to ``docs/attack-memory.json`` (``--measured``);
``--write-doc`` puts the table into docs/performance.md's generated block
``attack-memory``. Run it with nothing else running.

Usage::

    python bench/attack_memory.py [--work reproduce/attack-memory] [--write-doc]
    python bench/attack_memory.py --render [--write-doc]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from perturb_memory import Figures, blocks, measured_runs, same_start
from reproduce_common import TEST, add_doc_options, kept_figures, publish

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ROOT / "docs" / "attack-memory.json"
DOC = ROOT / "docs" / "performance.md"
#: The attack's options, after its probes and but for the limit and the output.
OPTIONS: tuple[str, ...] = (
    "--method", "copos", "--search", "sample", "-b", "20", "--budget", "2", "--no-grade",
)  # fmt: skip
#: The demo's probes as the page writes them.
PROBES_SHOWN = ("--probe", "$P/minilm-5-distance", "--probe", "$P/minilm-5-pos")


def measure(work: Path) -> Figures:
    """Every run of :data:`LIMITS` (skipped where its figures are kept)."""
    # deferred: the demo's probes load only when the script measures
    from brittle.engine.demo import prepare_demo, train_demo_probes

    plan = prepare_demo()
    train_demo_probes(plan)
    probes = [x for p in plan.probes for x in ("--probe", str(p))]
    runs, outputs = measured_runs(work, "attack", "attack", [*probes, *OPTIONS])
    return {
        "treebank": TEST.name,
        "command": " ".join(["brittle", "attack", TEST.name, *PROBES_SHOWN, *OPTIONS]),
        "runs": runs,
        "same_start": same_start(outputs[0], outputs[-1]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("reproduce/attack-memory"))
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    data: Figures = kept_figures(args, lambda: measure(args.work))
    publish(blocks(data, "attack-memory"), DOC, write=args.write_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
