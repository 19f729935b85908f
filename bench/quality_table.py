"""How natural each method's perturbations are: the quality table of docs/substitutions.md.

For every method and budget, ``brittle perturb`` (default options) is run on the first
``--limit`` sentences of a treebank into ``--out`` (files already there are reused), and
each output is measured against the treebank with
:func:`brittle.search.quality.quality_of_files`: mean surprisal increase of the
bundled causal LM (bits per word), MiniLM sentence similarity, share of changed words the
spaCy tagger still tags with their gold UPOS (retag), words changed, DND/IDC, and how
many sentences were perturbed. ``--before DIR`` measures a second directory of
``METHOD-TAU.conllu`` files (for example written by an earlier version) beside it.

Run: ``python bench/quality_table.py --out /tmp/quality-after --before /tmp/quality-before``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from brittle.engine.perturb.perturb_run import (  # noqa: E402
    PerturbConfig,
    perturb_treebank,
    write_perturb_outputs,
)
from brittle.scorers.parsers.base import PARSERS  # noqa: E402
from brittle.search.quality import QualityMeter, quality_of_files  # noqa: E402

from support import EWT_TEST  # noqa: E402

METHODS = (
    "copos",
    "coco",
    "random",
    "neighbours",
    "jabberwocky",
    "shuffle",
    "phrase-shuffle",
    "neighbour-flip",
)


def produce(treebank: Path, out: Path, method: str, tau: int, limit: int) -> Path:
    """``out/METHOD-TAU.conllu`` written by perturb with default options (reused)."""
    path = out / f"{method}-{tau}.conllu"
    if not path.exists():
        config = PerturbConfig(method=method, budget=tau, limit=limit, quality=False)
        result = perturb_treebank(treebank, config)
        write_perturb_outputs(result, path, report=out / f"{method}-{tau}.json")
    return path


def _cell(x: object, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--treebank", type=Path, default=EWT_TEST)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--before", type=Path)
    parser.add_argument("--limit", type=int, default=300)
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--budgets", default="1,2,3")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    meter = QualityMeter(parser=PARSERS.get("spacy")())
    rows = []
    start = time.perf_counter()
    for method in args.methods.split(","):
        for tau in (int(t) for t in args.budgets.split(",")):
            runs = [("after", produce(args.treebank, args.out, method, tau, args.limit))]
            if args.before is not None and (args.before / f"{method}-{tau}.conllu").exists():
                runs.insert(0, ("before", args.before / f"{method}-{tau}.conllu"))
            for label, path in runs:
                q = quality_of_files(args.treebank, path, meter=meter)
                rows.append(
                    {
                        "method": method,
                        "tau": tau,
                        "version": label,
                        "changed": q.changed,
                        "sentences": len(q.sentences),
                        **q.summary.to_json(),
                    }
                )
                print(json.dumps(rows[-1]), flush=True)
    (args.out / "quality.json").write_text(json.dumps(rows, indent=1) + "\n")
    keys = [
        "mean_surprisal_increase",
        "mean_similarity",
        "retag_agreement",
        "mean_words_changed",
        "mean_dnd",
        "mean_idc",
    ]
    print("\n| method | tau | version | perturbed | " + " | ".join(keys) + " |")
    print("| --- | ---: | --- | ---: | " + " | ".join("---:" for _ in keys) + " |")
    for r in rows:
        cells = " | ".join(_cell(r.get(k)) for k in keys)
        done = f"{r['changed']}/{r['sentences']}"
        print(f"| {r['method']} | {r['tau']} | {r['version']} | {done} | {cells} |")
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
