"""docs/performance.md's table of coCO's re-rank: CPU-seconds per sentence of the
generator alone without a re-rank, with one word of right context (the default) and
with the whole sentence.

Each setting's :class:`~brittle.search.generators.coco.CoCO` is built from its ``-o``
options (:data:`SETTINGS`, beside :data:`COMMON`: the bundled SmolLM2 on the CPU in
float32, the precision of the table's first figures) and proposes :data:`TOP_K`
options per position for the first :data:`SENTENCES` sentences of GUM test, in one
call of ``CoCO.candidates``, timed with ``time.process_time()`` (this process's CPU
time, every thread). Before the clock the language model is loaded (and, for the
whole-sentence re-rank, its sentence scorer), and one untimed call on the next
sentence of the treebank loads the lexicons. The settings run one after the other in
one process; the three must propose the same number of options.

Around each timed call the machine's CPU time (``/proc/stat``) is read too: what the
other processes took while it ran, the sign that the measurement shared the cores;
the 1-minute load average before and after the runs is kept as well.

The figures go to ``docs/coco-rerank.json`` (``--measured``); ``--write-doc`` puts the
table into docs/performance.md's generated block ``coco-rerank``. Run it with nothing
else running.

Usage::

    python bench/coco_rerank.py [--write-doc]
    python bench/coco_rerank.py --render [--write-doc]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypedDict

from reproduce_common import UD, add_doc_options, busy_cpu_seconds, kept_figures, publish

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ROOT / "docs" / "coco-rerank.json"
DOC = ROOT / "docs" / "performance.md"
TREEBANK = UD / "UD_English-GUM" / "en_gum-ud-test.conllu"
#: Sentences timed: the first of the treebank.
SENTENCES = 16
#: Options per position (the attack's ``--candidates`` default).
TOP_K = 20
#: Options every setting shares: the CPU, and float32.
COMMON: tuple[str, ...] = ("device=cpu", "dtype=float32")
#: The settings, in the table's order: each row's label and its own options.
SETTINGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("none (`-o rerank=false`)", ("rerank=false",)),
    ("one word of right context (`rerank_window=1`, the default)", ("rerank_window=1",)),
    ("the whole sentence (`-o rerank_window=none`)", ("rerank_window=none",)),
)


class Setting(TypedDict):
    """One timed call of ``CoCO.candidates``."""

    label: str
    options: list[str]
    proposed: int
    cpu_seconds: float
    wall_seconds: float
    other_cpu_seconds: float


class Figures(TypedDict):
    """What :func:`measure` keeps."""

    treebank: str
    sentences: int
    top_k: int
    common: list[str]
    threads: int
    cores: int
    load_before: float
    load_after: float
    settings: list[Setting]


def measure() -> Figures:
    """Every setting of :data:`SETTINGS`, one after the other."""
    # deferred: torch and the generators load only when measuring
    import torch

    from brittle.engine.core.conllu import read_conllu
    from brittle.search.generators.coco import CoCO
    from brittle.search.generators.options import parse_options
    from brittle.search.sentence_models import surprisal_model

    sentences = read_conllu(TREEBANK)[: SENTENCES + 1]
    timed, spare = sentences[:SENTENCES], sentences[SENTENCES:]
    build: Callable[..., CoCO] = CoCO  # the options are typed by CoCO's fields
    load_before = os.getloadavg()[0]
    settings: list[Setting] = []
    for label, own in SETTINGS:
        options = [*COMMON, *own]
        print(f"coco -o {' -o '.join(options)}", file=sys.stderr, flush=True)
        generator = build(top_k=TOP_K, **parse_options(CoCO, options))
        generator.language_model()
        if generator.rerank and generator.rerank_window is None:
            scorer = surprisal_model(
                generator.model, device=generator.device, dtype=generator.dtype
            )
            _ = scorer.lm  # loads it
        generator.candidates(spare, top_k=TOP_K)
        busy, wall, cpu = busy_cpu_seconds(), time.perf_counter(), time.process_time()
        tables = generator.candidates(timed, top_k=TOP_K)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        busy = busy_cpu_seconds() - busy
        settings.append(
            {
                "label": label,
                "options": options,
                "proposed": sum(t.size for t in tables),
                "cpu_seconds": round(cpu, 2),
                "wall_seconds": round(wall, 2),
                "other_cpu_seconds": round(max(busy - cpu, 0.0), 1),
            }
        )
    return {
        "treebank": TREEBANK.name,
        "sentences": len(timed),
        "top_k": TOP_K,
        "common": list(COMMON),
        "threads": torch.get_num_threads(),
        "cores": os.cpu_count() or 0,
        "load_before": round(load_before, 2),
        "load_after": round(os.getloadavg()[0], 2),
        "settings": settings,
    }


def blocks(data: Figures) -> dict[str, str]:
    """docs/performance.md's generated block ``coco-rerank``."""
    n = data["sentences"]
    base = data["settings"][0]["cpu_seconds"]
    lines = [
        "| re-rank | CPU-s / sentence | beside no re-rank | options |",
        "| --- | ---: | ---: | ---: |",
    ]
    for s in data["settings"]:
        lines.append(
            f"| {s['label']} | {s['cpu_seconds'] / n:.1f} | {s['cpu_seconds'] / base:.1f}x "
            f"| {s['proposed']:,} |"
        )
    counts = [s["proposed"] for s in data["settings"]]
    same = (
        f"the same {counts[0]:,} options"
        if len(set(counts)) == 1
        else "not the same number of options (" + ", ".join(f"{c:,}" for c in counts) + ")"
    )
    wall = sum(s["wall_seconds"] for s in data["settings"])
    others = sum(s["other_cpu_seconds"] for s in data["settings"])
    lines += [
        "",
        f"The first {n} sentences of {data['treebank']}, at most {data['top_k']} options per "
        f"position: the three propose {same}. Every setting with "
        + ", ".join(f"`-o {o}`" for o in data["common"])
        + f", {data['threads']} torch threads on {data['cores']} cores; while the timed calls "
        f"ran ({wall:.0f} s), other processes took {others / wall:.0%} of one core (load "
        f"average {data['load_before']:.2f} before the runs, {data['load_after']:.2f} after).",
    ]
    return {"coco-rerank": "\n".join(lines) + "\n"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    data: Figures = kept_figures(args, measure)
    publish(blocks(data), DOC, write=args.write_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
