"""What the ``reproduce_*`` scripts share: the treebanks, running brittle, the sweeps,
and the generated blocks of the docs (their options, keeping their figures, writing them).

Every script runs brittle's own commands (printed before they run) on the shared UD
English treebanks: probes train on LinES train + EWT dev with early stopping on LinES
dev, and are evaluated on EWT test. The probes of the structural probe and the
perceptron at every layer (``train-probe --layer all``) are shared: a script that
needs them finds them in ``WORK/sweeps`` when another script trained them already.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shlex
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any, TypeVar

T = TypeVar("T")

UD = Path(__file__).resolve().parents[2] / "shared" / "data" / "ud"
TRAIN = (
    UD / "UD_English-LinES/en_lines-ud-train.conllu",
    UD / "UD_English-EWT/en_ewt-ud-dev.conllu",
)
DEV = UD / "UD_English-LinES/en_lines-ud-dev.conllu"
TEST = UD / "UD_English-EWT/en_ewt-ud-test.conllu"
#: Representations of the sweeps: the bundled MiniLM (every hidden state) and GloVe.
MODELS: dict[str, tuple[str, ...]] = {"minilm": (), "glove": ("--model", "glove")}
#: Controls swept like them: GloVe with MiniLM's position embeddings appended, the
#: Jabberwocky paper's Fast+Pos (FastText with BERT's position embeddings).
CONTROLS: dict[str, tuple[str, ...]] = {"glove+pos": ("--model", "glove+pos")}
#: SmolLM2's hidden state probed beside them: 30, its last (the causal model of the
#: tables; its layer sweep is in docs/probes.md).
SMOLLM2_LAYER = 30


def brittle(*args: object) -> None:
    """Run one brittle command (printed first), failing loudly."""
    cmd = [str(Path(sys.executable).parent / "brittle"), *map(str, args)]
    print("$ " + shlex.join(["brittle", *cmd[1:]]), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True)


def child_usage(cmd: list[str], *, stdout: IO[str] | None = None) -> resource.struct_rusage:
    """Run ``cmd`` to its end and return its own resource usage (``os.wait4``: its peak
    resident memory and CPU time, its threads and children included, not the largest
    of every child this process has had); fail loudly when it fails."""
    child = subprocess.Popen(cmd, stdout=stdout)
    _, status, usage = os.wait4(child.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise subprocess.CalledProcessError(code, cmd)
    return usage


def busy_cpu_seconds() -> float:
    """CPU seconds the machine has spent on every process since it booted (Linux's
    ``/proc/stat``: user, nice, system, irq, softirq and steal time; idle and iowait
    left out)."""
    with open("/proc/stat", encoding="ascii") as stat:
        fields = stat.readline().split()
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, fields[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def ensure_sweep(work: Path, model: str, task: str) -> Path:
    """``WORK/sweeps/MODEL-TASK``: a probe per layer of ``model`` (a key of
    :data:`MODELS` or :data:`CONTROLS`), trained when missing.

    A finished sweep is not run again; an interrupted one resumes (``train-probe``
    keeps the layers it finished).
    """
    out = work / "sweeps" / f"{model}-{task}"
    if not (out / "done").exists():
        brittle(
            "train-probe", *TRAIN, "--dev", DEV, *{**MODELS, **CONTROLS}[model], "--layer", "all",
            "--task", task, "--quiet", "--out", out,
        )  # fmt: skip
        (out / "done").touch()
    return out


def smollm2_dir() -> Path:
    """Where ``brittle resources --provision`` converted the bundled SmolLM2."""
    # deferred: only the scripts that probe SmolLM2 ask for brittle's data home
    from brittle.engine.core.resources import data_home

    return data_home() / "models" / "smollm2-135m"


def smollm2_args(layer: int) -> tuple[str, ...]:
    """``train-probe`` options of a probe of SmolLM2's hidden state ``layer``: its inputs
    standardised (its hidden states are far too large for a plain linear probe)."""
    return ("--model", str(smollm2_dir()), "--layer", str(layer), "--standardize")


def add_smollm2_layer(parser: argparse.ArgumentParser, probed_beside: str) -> None:
    """The ``--smollm2-layer`` option of the scripts that probe SmolLM2 beside others."""
    parser.add_argument(
        "--smollm2-layer",
        type=int,
        default=SMOLLM2_LAYER,
        help=f"SmolLM2 hidden state probed beside {probed_beside} (standardised inputs; -1 "
        "leaves SmolLM2 out)",
    )


def ensure_smollm2_probe(work: Path, task: str, layer: int = SMOLLM2_LAYER) -> Path:
    """``WORK/smollm2-probes/smollm2-LAYER-TASK``, trained on the sweeps' data when missing."""
    out = work / "smollm2-probes" / f"smollm2-{layer}-{task}"
    if not (out / "probe.json").exists():
        brittle(
            "train-probe", *TRAIN, "--dev", DEV, *smollm2_args(layer), "--task", task,
            "--quiet", "--out", out,
        )  # fmt: skip
    return out


def sweep_layers(sweep: Path) -> dict[int, tuple[Path, float]]:
    """``{hidden-state index: (probe directory, dev loss)}`` of a sweep."""
    summary = json.loads((sweep / "layers.json").read_text())
    return {int(e["layer"]): (sweep / e["probe"], float(e["dev_loss"])) for e in summary["layers"]}


def add_doc_options(parser: argparse.ArgumentParser, measured: Path, page: Path) -> None:
    """The options of a script whose tables are generated blocks of ``page``:
    ``--measured`` (the JSON of its figures kept beside the page), ``--render`` (print
    the tables from that JSON alone, run nothing) and ``--write-doc`` (also replace the
    blocks in the page)."""
    parser.add_argument(
        "--measured",
        type=Path,
        default=measured,
        help=f"the JSON of the figures kept for the page (default {measured.name})",
    )
    parser.add_argument(
        "--render", action="store_true", help="only render from the --measured file"
    )
    parser.add_argument(
        "--write-doc", action="store_true", help=f"also replace the generated blocks in {page.name}"
    )


def write_doc(doc: Path, rendered: Mapping[str, str]) -> None:
    """Replace every generated block of ``doc`` by its new text (each must be there)."""
    text = doc.read_text(encoding="utf-8")
    for name, body in rendered.items():
        pattern = re.compile(
            rf"(<!-- generated: {re.escape(name)} -->\n).*?(<!-- end generated -->)", re.S
        )
        if not pattern.search(text):
            raise SystemExit(f"{doc} has no generated block {name!r}")

        def keep(m: re.Match[str], body: str = body) -> str:
            return m.group(1) + body + m.group(2)

        text = pattern.sub(keep, text)
    doc.write_text(text, encoding="utf-8")


def kept_figures(args: argparse.Namespace, measure: Callable[[], T]) -> T:
    """The figures of a script's tables: with ``--render`` those kept in ``--measured``,
    otherwise ``measure()``'s, kept there (JSON) for the page's test."""
    if args.render:
        kept: Any = json.loads(args.measured.read_text())
        return kept  # type: ignore[no-any-return]
    figures = measure()
    args.measured.write_text(json.dumps(figures, indent=1, ensure_ascii=False) + "\n")
    return figures


def publish(rendered: Mapping[str, str], doc: Path, *, write: bool) -> None:
    """Print each generated block, between its markers; with ``write``, also replace the
    blocks in ``doc``."""
    for name, text in rendered.items():
        print(f"<!-- generated: {name} -->\n{text}<!-- end generated -->\n")
    if write:
        write_doc(doc, rendered)
