"""docs/performance.md's perturb memory table: the peak memory of one ``perturb`` run on
the first 100 sentences of EWT test and on all of them.

``brittle perturb en_ewt-ud-test.conllu --method copos --budget 2`` (its default
constraints, quality and grading), run as a whole command, once with ``--limit 100``
and once on the whole file, one after the other. Each command's peak resident memory
is the kernel's account of that child process (``ru_maxrss`` from ``os.wait4``, which
counts the largest resident set it ever had, not a sampled one); its wall time is
timed around it. The run streams the treebank a chunk at a time, so the target is a
peak that does not grow with the number of sentences: the whole file within 10% of
the first 100. The first 100 sentences of the whole run's output are checked to be the
100-sentence run's, byte for byte.

Each run's output and figures are kept under ``--work``; a run with its figures is not
run again. The figures go to ``docs/perturb-memory.json`` (``--measured``);
``--write-doc`` puts the table into docs/performance.md's generated block
``perturb-memory``. Run it with nothing else running.

Usage::

    python bench/perturb_memory.py [--work reproduce/perturb-memory] [--write-doc]
    python bench/perturb_memory.py --render [--write-doc]
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypedDict

from reproduce_common import TEST, add_doc_options, child_usage, kept_figures, publish

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ROOT / "docs" / "perturb-memory.json"
DOC = ROOT / "docs" / "performance.md"
#: The command's options, but for the limit and the output.
OPTIONS: tuple[str, ...] = ("--method", "copos", "--budget", "2")
#: The runs, by the number of sentences they perturb (``None``: the whole treebank).
LIMITS: tuple[int | None, ...] = (100, None)
#: The target: the whole treebank's peak within this factor of the first 100's.
TARGET = 1.10


class Run(TypedDict):
    """One timed command."""

    sentences: int
    peak_bytes: int
    seconds: float


class Figures(TypedDict):
    """What :func:`measure` keeps."""

    treebank: str
    command: str
    runs: list[Run]
    same_start: bool


def conllu_sentences(path: Path) -> list[str]:
    """The sentences of a CoNLL-U file, each as its block of lines."""
    return path.read_text(encoding="utf-8").strip().split("\n\n")


def written(out: Path) -> Path:
    """The CoNLL-U a run wrote: ``out`` itself, or an attack directory's
    ``adversarial.conllu``."""
    return out / "adversarial.conllu" if out.is_dir() else out


def _written_sentences(limit: int | None, out: Path) -> int:
    """The sentences a run wrote (:func:`written`)."""
    return len(conllu_sentences(written(out)))


def run_once(
    command: str,
    options: Sequence[str],
    limit: int | None,
    out: Path,
    count: Callable[[int | None, Path], int] = _written_sentences,
) -> Run:
    """One ``brittle COMMAND TEST OPTIONS`` run writing to ``out``, its peak resident
    memory, wall time and sentences (``count(limit, out)``; by default those of the
    CoNLL-U it wrote: perturb's, or an attack directory's ``adversarial.conllu``)."""
    cmd = [str(Path(sys.executable).parent / "brittle"), command, str(TEST), *options]
    if limit is not None:
        cmd += ["--limit", str(limit)]
    cmd += ["--quiet", "--out", str(out)]
    print("$ " + shlex.join(["brittle", *cmd[1:]]), file=sys.stderr, flush=True)
    start = time.perf_counter()
    usage = child_usage(cmd)
    seconds = time.perf_counter() - start
    return {
        "sentences": count(limit, out),
        "peak_bytes": usage.ru_maxrss * 1024,  # Linux counts kibibytes
        "seconds": round(seconds, 2),
    }


def measured_runs(
    work: Path,
    name: str,
    command: str,
    options: Sequence[str],
    *,
    suffix: str = "",
    count: Callable[[int | None, Path], int] = _written_sentences,
) -> tuple[list[Run], list[Path]]:
    """Every run of :data:`LIMITS` (:func:`run_once`), writing to ``work/NAME-LIMIT``
    + ``suffix`` and keeping its figures beside as JSON (a run with its figures is not
    run again): the runs' figures and outputs."""
    work.mkdir(parents=True, exist_ok=True)
    runs: list[Run] = []
    outputs: list[Path] = []
    for limit in LIMITS:
        stem = f"{name}-{limit or 'all'}"
        out, kept = work / f"{stem}{suffix}", work / f"{stem}.json"
        if not kept.exists():
            run = run_once(command, options, limit, out, count)
            kept.write_text(json.dumps(run) + "\n", encoding="utf-8")
        runs.append(json.loads(kept.read_text(encoding="utf-8")))
        outputs.append(out)
    return runs, outputs


def same_start(shorter: Path, whole: Path) -> bool:
    """Whether the whole run's CoNLL-U begins with the shorter run's sentences."""
    first = conllu_sentences(written(shorter))
    return conllu_sentences(written(whole))[: len(first)] == first


def measure(work: Path) -> Figures:
    """Every run of :data:`LIMITS` (skipped where its figures are kept)."""
    runs, outputs = measured_runs(work, "perturb", "perturb", OPTIONS, suffix=".conllu")
    return {
        "treebank": TEST.name,
        "command": shlex.join(["brittle", "perturb", TEST.name, *OPTIONS]),
        "runs": runs,
        "same_start": same_start(outputs[0], outputs[-1]),
    }


def peak_table(command: str, runs: Sequence[Run]) -> tuple[list[str], str]:
    """The table of each run's peak memory against the first's and its wall time, and
    the sentence that sets the last run's against :data:`TARGET`."""
    first = runs[0]
    lines = [
        f"| `{command}` | peak memory | against the first {first['sentences']} | wall time |",
        "| --- | ---: | ---: | ---: |",
    ]
    for run in runs:
        lines.append(
            f"| {run['sentences']:,} sentences | {run['peak_bytes'] / 1e9:.2f} GB "
            f"| {run['peak_bytes'] / first['peak_bytes']:.2f}x | {run['seconds']:.0f} s |"
        )
    whole = runs[-1]["peak_bytes"] / first["peak_bytes"]
    verdict = "within" if whole <= TARGET else "above"
    return lines, (
        f"The whole file's peak is {whole:.2f} times the first {first['sentences']}'s: "
        f"{verdict} the target of {TARGET:.2f}."
    )


def blocks(data: Figures, name: str = "perturb-memory") -> dict[str, str]:
    """docs/performance.md's generated block ``name`` (``perturb-memory``, or
    ``attack-memory`` for bench/attack_memory.py's figures)."""
    lines, verdict = peak_table(data["command"], data["runs"])
    start = "the same" if data["same_start"] else "not the same"
    lines += [
        "",
        f"{verdict} The first {data['runs'][0]['sentences']} sentences of its output are "
        f"{start} as the shorter run's, byte for byte.",
    ]
    return {name: "\n".join(lines) + "\n"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("reproduce/perturb-memory"))
    add_doc_options(parser, MEASURED, DOC)
    args = parser.parse_args(argv)
    data: Figures = kept_figures(args, lambda: measure(args.work))
    publish(blocks(data), DOC, write=args.write_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
