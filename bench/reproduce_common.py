"""What the ``reproduce_*`` scripts share: the treebanks, running brittle, the sweeps.

Every script runs brittle's own commands (printed before they run) on the shared UD
English treebanks: probes train on LinES train + EWT dev with early stopping on LinES
dev, and are evaluated on EWT test. The probes of the structural probe and the
perceptron at every layer (``train-probe --layer all``) are shared: a script that
needs them finds them in ``WORK/sweeps`` when another script trained them already.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

UD = Path(__file__).resolve().parents[2] / "shared" / "data" / "ud"
TRAIN = (
    UD / "UD_English-LinES/en_lines-ud-train.conllu",
    UD / "UD_English-EWT/en_ewt-ud-dev.conllu",
)
DEV = UD / "UD_English-LinES/en_lines-ud-dev.conllu"
TEST = UD / "UD_English-EWT/en_ewt-ud-test.conllu"
#: Representations of the sweeps: the bundled MiniLM (every hidden state) and GloVe.
MODELS: dict[str, tuple[str, ...]] = {"minilm": (), "glove": ("--model", "glove")}


def brittle(*args: object) -> None:
    """Run one brittle command (printed first), failing loudly."""
    cmd = [str(Path(sys.executable).parent / "brittle"), *map(str, args)]
    print("$ " + shlex.join(["brittle", *cmd[1:]]), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True)


def ensure_sweep(work: Path, model: str, task: str) -> Path:
    """``WORK/sweeps/MODEL-TASK``: a probe per layer of ``model``, trained when missing.

    A finished sweep is not run again; an interrupted one resumes (``train-probe``
    keeps the layers it finished).
    """
    out = work / "sweeps" / f"{model}-{task}"
    if not (out / "done").exists():
        brittle(
            "train-probe", *TRAIN, "--dev", DEV, *MODELS[model], "--layer", "all",
            "--task", task, "--quiet", "--out", out,
        )  # fmt: skip
        (out / "done").touch()
    return out


def sweep_layers(sweep: Path) -> dict[int, tuple[Path, float]]:
    """``{hidden-state index: (probe directory, dev loss)}`` of a sweep."""
    summary = json.loads((sweep / "layers.json").read_text())
    return {int(e["layer"]): (sweep / e["probe"], float(e["dev_loss"])) for e in summary["layers"]}
