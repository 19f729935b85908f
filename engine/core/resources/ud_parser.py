"""A dependency parser trained on UD English, so that scores against UD gold mean what
they say.

The bundled spaCy pipeline labels with its own scheme and follows its own head
conventions (prepositions head their objects), so its attachment scores against UD gold
count those differences as errors. This module trains a spaCy pipeline (tok2vec,
morphologizer, parser; ``data/spacy-ud-parser.cfg``, spaCy's CPU efficiency config)
once, from the UD English treebanks a user has, into the data home:

    <data_home>/models/spacy-ud-en/     the trained pipeline (spaCy's model-best)

Training reads LinES train with EWT dev and GUM dev (:data:`UD_TRAIN`), evaluates on
LinES dev (:data:`UD_DEV`) and leaves EWT test and GUM test out, the sets brittle's
attacks run on. The treebanks are converted with ``spacy convert`` and the pipeline
trained with ``spacy train`` in child processes, a fixed number of steps with a fixed
seed; about 6 minutes on 2 cores. The parser is registered as ``spacy-ud``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path

from brittle.engine.core.atomic import atomic_directory
from brittle.engine.core.conllu import iter_conllu
from brittle.engine.core.errors import ConfigError, ResourceMissingError
from brittle.engine.core.resources.home import Resource, ResourceStatus, data_home

__all__ = [
    "UD_DEV",
    "UD_PARSER",
    "UD_TRAIN",
    "train_ud_parser",
    "ud_parser_path",
    "ud_parser_status",
]

#: The resource's name in ``brittle resources``.
UD_PARSER = "ud-parser"
#: Treebanks the parser trains on, relative to a folder of UD English treebanks.
UD_TRAIN = (
    "UD_English-LinES/en_lines-ud-train.conllu",
    "UD_English-EWT/en_ewt-ud-dev.conllu",
    "UD_English-GUM/en_gum-ud-dev.conllu",
)
#: The treebank spaCy's training scores after each evaluation.
UD_DEV = "UD_English-LinES/en_lines-ud-dev.conllu"
#: Training steps of the one-time step (about 6 minutes on 2 cores).
UD_STEPS = 3000
#: The command that trains it.
UD_FIX = "brittle resources --train-ud-parser UD_DIR (the folder holding UD_English-*)"


def ud_parser_dir() -> Path:
    """Where the trained pipeline lives (whether or not it is there yet)."""
    return data_home() / "models" / "spacy-ud-en"


def ud_parser_path() -> Path:
    """The trained pipeline's directory.

    Raises:
        ResourceMissingError: it has not been trained (the message says how).
    """
    path = ud_parser_dir()
    if not (path / "config.cfg").is_file():
        raise ResourceMissingError(f"spaCy parser trained on UD ({UD_PARSER})", [str(path)], UD_FIX)
    return path


def ud_parser_status() -> ResourceStatus:
    """Trained or not, from files alone; optional, so a missing one is a step to take,
    not an error."""
    path = ud_parser_dir()
    if (path / "config.cfg").is_file():
        scores = _scores(path)
        return ResourceStatus(UD_PARSER, True, str(path), scores)
    return ResourceStatus(
        UD_PARSER,
        True,
        str(path),
        "optional (--parser/--target spacy-ud): not trained yet; about 6 minutes on 2 cores",
        fix=UD_FIX,
        needs_provision=True,
    )


def _scores(path: Path) -> str:
    """What spaCy recorded of the pipeline's scores on the dev treebank."""
    try:
        meta = json.loads((path / "meta.json").read_text())
        perf = meta.get("performance", {})
        return (
            f"on LinES dev: UPOS {100 * perf['pos_acc']:.1f}, UAS {100 * perf['dep_uas']:.1f}, "
            f"LAS {100 * perf['dep_las']:.1f}"
        )
    except (OSError, ValueError, KeyError, TypeError):
        return "trained (no scores recorded)"


def train_ud_parser(
    ud_dir: str | Path,
    *,
    steps: int = UD_STEPS,
    seed: int = 0,
    log: Callable[[str], None] | None = None,
) -> Path:
    """Train the UD parser from the treebanks under ``ud_dir`` into the data home.

    Args:
        ud_dir: a folder holding ``UD_English-LinES``, ``UD_English-EWT`` and
            ``UD_English-GUM`` (the files of :data:`UD_TRAIN` and :data:`UD_DEV`).
        steps: training steps (spaCy's ``training.max_steps``).
        seed: spaCy's ``system.seed``.
        log: receives spaCy's progress lines (``None``: they are dropped).

    Returns:
        The trained pipeline's directory (replaced whole, only once training succeeded).

    Raises:
        ConfigError: a treebank is missing, or ``steps`` is not positive.
        BrittleInputError: a treebank is malformed (its file and line).
        ResourceMissingError: spaCy failed (its last lines in the message).
    """
    if steps < 1:
        raise ConfigError(f"training steps must be at least 1, got {steps}")
    root = Path(ud_dir)
    wanted = [root / name for name in (*UD_TRAIN, UD_DEV)]
    absent = [str(p) for p in wanted if not p.is_file()]
    if absent:
        raise ConfigError(f"{absent[0]}: no such treebank (training reads {', '.join(UD_TRAIN)})")
    for path in wanted:  # a malformed file is named with its line here, not by spaCy
        for _ in iter_conllu(path):
            pass
    config = Path(str(files("brittle.data").joinpath("spacy-ud-parser.cfg")))
    with tempfile.TemporaryDirectory(prefix="brittle-ud-parser-") as tmp:
        work = Path(tmp)
        for folder, names in (("train", UD_TRAIN), ("dev", (UD_DEV,))):
            (work / folder).mkdir()
            for name in names:
                _spacy(["convert", str(root / name), str(work / folder), "--converter",
                        "conllu", "-n", "10"], log)  # fmt: skip
        _spacy(
            ["train", str(config), "--output", str(work / "out"),
             "--paths.train", str(work / "train"), "--paths.dev", str(work / "dev"),
             "--training.max_steps", str(steps), "--system.seed", str(seed)],
            log,
        )  # fmt: skip
        best = work / "out" / "model-best"
        with atomic_directory(ud_parser_dir()) as staging:
            for item in best.iterdir():
                item.rename(staging / item.name)
    return ud_parser_dir()


def _spacy(args: list[str], log: Callable[[str], None] | None) -> None:
    """Run ``python -m spacy ARGS``, its output line by line to ``log``."""
    with subprocess.Popen(
        [sys.executable, "-m", "spacy", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    ) as proc:
        assert proc.stdout is not None
        tail: list[str] = []
        for line in proc.stdout:
            tail = [*tail[-9:], line.rstrip()]
            if log is not None:
                log(line.rstrip())
    if proc.returncode != 0:
        raise ResourceMissingError(
            f"spaCy {args[0]} (exit {proc.returncode})", tail, "see spaCy's output above"
        )


#: The UD parser as :func:`brittle.engine.core.resources.check_all` sees it.
RESOURCE = Resource(UD_PARSER, ud_parser_status)
