"""How natural each method's perturbations are: the quality table of docs/substitutions.md.

For every method and budget, ``brittle perturb`` (default options) is run on the first
``--limit`` sentences of a treebank into ``--out`` (files already there are reused), and
each output is measured against the treebank with
:func:`brittle.search.quality.quality_of_files`: mean surprisal increase of the
bundled causal LM (bits per word), MiniLM sentence similarity, share of changed words the
spaCy tagger still tags with their gold UPOS (retag), words changed, DND/IDC, and how
many sentences were perturbed. ``--before DIR`` measures a second directory of
``METHOD-TAU.conllu`` files (for example written by an earlier version) beside it.

Usage::

    python bench/quality_table.py --out DIR [--write-doc]
    python bench/quality_table.py --out DIR --before DIR --methods shuffle,coco --budgets 1,2,3
    python bench/quality_table.py --render [--write-doc]

By default the page's methods (copos, random, neighbours, jabberwocky) at tau 2.

The figures go to ``docs/quality.json`` (``--measured``); ``--write-doc`` puts today's
rows (not the ``--before`` ones) into docs/substitutions.md's generated block
``quality``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ROOT / "docs" / "quality.json"
DOC = ROOT / "docs" / "substitutions.md"
sys.path.insert(0, str(ROOT / "tests"))

from reproduce_common import add_doc_options, kept_figures, publish  # noqa: E402

from brittle.engine.perturb.perturb_run import (  # noqa: E402
    PerturbConfig,
    perturb_treebank,
    write_perturb_outputs,
)
from brittle.scorers.parsers.base import PARSERS  # noqa: E402
from brittle.search.quality import QualityMeter, quality_of_files  # noqa: E402

from support import EWT_TEST  # noqa: E402

#: The methods and budget of the page's table (the defaults of ``--methods`` and
#: ``--budgets``); any registered method can be asked for.
METHODS = ("copos", "random", "neighbours", "jabberwocky")
BUDGETS = "2"


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


#: The measures of the full table, in its order.
KEYS = (
    "mean_surprisal_increase",
    "mean_similarity",
    "retag_agreement",
    "mean_words_changed",
    "mean_dnd",
    "mean_idc",
)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Every method and budget asked, perturbed (or reused) and measured."""
    if args.out is None:
        raise SystemExit("--out is needed unless --render")
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
                print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print(f"{time.perf_counter() - start:.0f} s", file=sys.stderr)
    return {"treebank": args.treebank.name, "limit": args.limit, "rows": rows}


def full_table(rows: list[dict[str, Any]]) -> str:
    """Every row and measure, ``--before`` rows included."""
    lines = [
        "| method | tau | version | perturbed | " + " | ".join(KEYS) + " |",
        "| --- | ---: | --- | ---: | " + " | ".join("---:" for _ in KEYS) + " |",
    ]
    for r in rows:
        cells = " | ".join(_cell(r.get(k)) for k in KEYS)
        lines.append(
            f"| {r['method']} | {r['tau']} | {r['version']} | {r['changed']}/{r['sentences']} "
            f"| {cells} |"
        )
    return "\n".join(lines) + "\n"


def blocks(data: dict[str, Any]) -> dict[str, str]:
    """docs/substitutions.md's block ``quality``: today's rows (no ``--before``)."""
    lines = [
        "| method | tau | sentences perturbed | surprisal increase (bits/word) | similarity "
        "| re-tag agreement | words changed |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in data["rows"]:
        if r["version"] != "after":
            continue
        lines.append(
            f"| {r['method']} | {r['tau']} | {r['changed']}/{r['sentences']} "
            f"| {r['mean_surprisal_increase']:+.3f} | {r['mean_similarity']:.3f} "
            f"| {r['retag_agreement']:.1%} | {r['mean_words_changed']:.2f} |"
        )
    return {"quality": "\n".join(lines) + "\n"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--treebank", type=Path, default=EWT_TEST)
    parser.add_argument("--out", type=Path, help="the perturbed files (reused when there)")
    parser.add_argument("--before", type=Path)
    parser.add_argument("--limit", type=int, default=300)
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--budgets", default=BUDGETS)
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    data = kept_figures(args, lambda: measure(args))
    print(full_table(data["rows"]))
    publish(blocks(data), DOC, write=args.write_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
